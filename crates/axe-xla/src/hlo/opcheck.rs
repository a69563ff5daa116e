//! Per-opcode checks XLA's parser makes on an instruction: the number of operands of opcodes with a
//! fixed arity, the attributes an opcode requires, and the form of attribute values XLA reads as data
//! (`direction=`, `index=`, `dimensions=`, `slice=`, `backend_config=`, `api_version=`, `sharding=`
//! structure aside), each error at its place in the text.

use super::scan::module_error;
use super::Instruction;
use crate::error::Result;

/// Where `piece` (a slice of `text`) starts in `text`.
fn at(text: &str, piece: &str) -> usize {
    (piece.as_ptr() as usize)
        .saturating_sub(text.as_ptr() as usize)
        .min(text.len())
}

/// Where XLA's parser reports an attribute missing: at the first token after the operand list's `)`
/// (white space and comments skipped), where it starts reading attributes: the `,` before the
/// attributes, else whatever follows the instruction (`}`, the next instruction). The opcode when the
/// text does not close the operands there.
fn after_operands(text: &str, inst: &Instruction<'_>) -> usize {
    let operands = inst.operands_text();
    let close = at(text, operands).saturating_add(operands.len());
    if text.as_bytes().get(close) != Some(&b')') {
        return at(text, inst.opcode());
    }
    let mut i = close + 1;
    loop {
        let rest = &text[i..];
        let trimmed = rest.trim_start_matches([' ', '\t', '\n', '\r']);
        i += rest.len() - trimmed.len();
        if let Some(c) = trimmed.strip_prefix("/*") {
            match c.find("*/") {
                Some(e) => i += e + 4,
                None => return i,
            }
        } else if trimmed.starts_with("//") {
            i += trimmed.find('\n').unwrap_or(trimmed.len());
        } else {
            return i;
        }
    }
}

/// The operand count an opcode takes, when fixed.
fn arity(op: &str) -> Option<usize> {
    Some(match op {
        "abs"
        | "acos"
        | "acosh"
        | "asin"
        | "asinh"
        | "atan"
        | "atanh"
        | "bitcast"
        | "bitcast-convert"
        | "broadcast"
        | "cbrt"
        | "ceil"
        | "count-leading-zeros"
        | "convert"
        | "copy"
        | "copy-start"
        | "copy-done"
        | "cosine"
        | "cosh"
        | "erf"
        | "exponential"
        | "exponential-minus-one"
        | "floor"
        | "get-tuple-element"
        | "imag"
        | "is-finite"
        | "log"
        | "log-plus-one"
        | "logistic"
        | "negate"
        | "not"
        | "popcnt"
        | "real"
        | "reduce-precision"
        | "reshape"
        | "reverse"
        | "round-nearest-afz"
        | "round-nearest-even"
        | "rsqrt"
        | "sign"
        | "sine"
        | "slice"
        | "sqrt"
        | "tan"
        | "tanh"
        | "transpose"
        | "send-done"
        | "recv-done" => 1,
        "add"
        | "and"
        | "atan2"
        | "complex"
        | "compare"
        | "divide"
        | "maximum"
        | "minimum"
        | "multiply"
        | "or"
        | "pad"
        | "power"
        | "remainder"
        | "shift-left"
        | "shift-right-arithmetic"
        | "shift-right-logical"
        | "subtract"
        | "xor"
        | "convolution"
        | "add-dependency"
        | "send" => 2,
        "select" | "clamp" => 3,
        _ => return None,
    })
}

/// Attributes an opcode cannot do without.
fn required(op: &str) -> &'static [&'static str] {
    match op {
        "compare" => &["direction"],
        "get-tuple-element" => &["index"],
        "reduce" => &["dimensions", "to_apply"],
        "transpose" => &["dimensions"],
        "call" => &["to_apply"],
        "slice" => &["slice"],
        "custom-call" => &["custom_call_target"],
        // In the order XLA's parser reports them missing (jaxlib 0.10.2).
        "while" => &["body", "condition"],
        "map" => &["to_apply"],
        "concatenate" => &["dimensions"],
        "reverse" => &["dimensions"],
        "pad" => &["padding"],
        "iota" => &["iota_dimension"],
        "async-start" => &["calls"],
        "fusion" => &["calls", "kind"],
        _ => &[],
    }
}

const DIRECTIONS: &[&str] = &["EQ", "NE", "LT", "LE", "GT", "GE"];
/// The fusion kinds XLA's parser knows (`kind=` of a `fusion`).
const FUSION_KINDS: &[&str] = &["kLoop", "kInput", "kOutput", "kCustom"];
const API_VERSIONS: &[&str] = &[
    "API_VERSION_ORIGINAL",
    "API_VERSION_STATUS_RETURNING",
    "API_VERSION_STATUS_RETURNING_UNIFIED",
    "API_VERSION_TYPED_FFI",
];

fn is_int(s: &str) -> bool {
    let s = s.trim();
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())
}

/// `{}` or `{i, j, ...}` of integers.
fn is_int_list(v: &str) -> bool {
    let v = v.trim();
    let Some(inner) = v.strip_prefix('{').and_then(|s| s.strip_suffix('}')) else {
        return false;
    };
    inner.trim().is_empty() || inner.split(',').all(is_int)
}

/// `{[a:b], [a:b:s], ...}`.
fn is_slice(v: &str) -> bool {
    let v = v.trim();
    let Some(inner) = v.strip_prefix('{').and_then(|s| s.strip_suffix('}')) else {
        return false;
    };
    inner.trim().is_empty()
        || inner.split(',').all(|r| {
            let r = r.trim();
            r.strip_prefix('[')
                .and_then(|s| s.strip_suffix(']'))
                .is_some_and(|s| {
                    let parts: Vec<&str> = s.split(':').collect();
                    (2..=3).contains(&parts.len()) && parts.iter().all(|p| is_int(p))
                })
        })
}

/// The attributes an opcode takes beyond those every instruction may carry, for the opcodes whose
/// whole list is known (XLA's parser refuses any other: `negate(p), colour=blue`).
fn only(op: &str) -> Option<&'static [&'static str]> {
    match op {
        // Elementwise ops with a result accuracy.
        "exponential"
        | "exponential-minus-one"
        | "log"
        | "log-plus-one"
        | "logistic"
        | "sqrt"
        | "cbrt"
        | "rsqrt"
        | "tanh"
        | "erf"
        | "sine"
        | "cosine"
        | "tan" => Some(&["result_accuracy"]),
        // Unary, binary and ternary elementwise ops, conversions and the plain `*-done` ops.
        "abs"
        | "all-gather-done"
        | "all-reduce-done"
        | "round-nearest-afz"
        | "round-nearest-even"
        | "bitcast"
        | "ceil"
        | "count-leading-zeros"
        | "collective-permute-done"
        | "copy"
        | "copy-done"
        | "opt-barrier"
        | "imag"
        | "is-finite"
        | "floor"
        | "not"
        | "negate"
        | "popcnt"
        | "real"
        | "sign"
        | "add"
        | "divide"
        | "multiply"
        | "subtract"
        | "atan2"
        | "complex"
        | "maximum"
        | "minimum"
        | "power"
        | "remainder"
        | "and"
        | "or"
        | "xor"
        | "shift-left"
        | "shift-right-arithmetic"
        | "shift-right-logical"
        | "stochastic-convert"
        | "clamp"
        | "select"
        | "convert"
        | "bitcast-convert" => Some(&[]),
        _ => None,
    }
}

/// What is checked of an opcode: its operand count (when fixed), its required attributes, whether
/// its attribute values are read, the attributes it takes when its whole list is known.
#[derive(Clone, Copy)]
pub(crate) struct OpInfo {
    arity: Option<usize>,
    required: &'static [&'static str],
    values: bool,
    only: Option<&'static [&'static str]>,
}

/// The checks of `op`, looked up once (`None`: nothing beyond a parameter's number or a constant's
/// literal).
pub(crate) fn info(op: &str) -> Option<OpInfo> {
    static MAP: std::sync::OnceLock<foldhash::HashMap<&'static str, OpInfo>> =
        std::sync::OnceLock::new();
    MAP.get_or_init(|| {
        super::validate::OPCODES
            .iter()
            .filter_map(|&op| {
                let i = OpInfo {
                    arity: arity(op),
                    required: required(op),
                    values: reads_values(op),
                    only: only(op),
                };
                (i.arity.is_some() || !i.required.is_empty() || i.values || i.only.is_some())
                    .then_some((op, i))
            })
            .collect()
    })
    .get(op)
    .copied()
}

/// The checks of the opcodes met lately (a dump uses a few over and over): each in the slot its length and
/// first and last bytes pick, so that a repeated opcode needs no hashing.
#[derive(Default)]
pub(crate) struct OpcodeCache<'s> {
    slots: [(&'s str, Option<OpInfo>); 16],
}

impl<'s> OpcodeCache<'s> {
    /// What [`known_info`] answers for `opcode`.
    #[inline]
    pub(crate) fn info(&mut self, opcode: &'s str) -> Option<Option<OpInfo>> {
        let b = opcode.as_bytes();
        let (first, last) = (b.first().copied(), b.last().copied());
        let slot = (b.len()
            ^ usize::from(first.unwrap_or(0)).wrapping_mul(3)
            ^ usize::from(last.unwrap_or(0)).wrapping_mul(5))
            & 15;
        let (seen, info) = self.slots[slot];
        if !seen.is_empty() && same(seen, opcode) {
            return Some(info);
        }
        let info = known_info(opcode)?;
        self.slots[slot] = (opcode, info);
        Some(info)
    }
}

/// `a == b`, compared in place without a call: names and opcodes are short, and two overlapping loads
/// of 4 or 8 bytes cover one of 4 to 16 bytes.
#[inline]
pub(crate) fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let w8 = |s: &[u8], at: usize| s.get(at..at + 8).and_then(|w| <[u8; 8]>::try_from(w).ok());
    let w4 = |s: &[u8], at: usize| s.get(at..at + 4).and_then(|w| <[u8; 4]>::try_from(w).ok());
    match n {
        0..=3 => a.iter().zip(b).all(|(p, q)| p == q),
        4..=7 => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
        8..=16 => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8),
        _ => a == b,
    }
}

/// Whether the values of `op`'s attributes are checked.
/// For an opcode XLA knows (see [`super::opcodes::known_opcode`]), what [`info`] gives for it; `None` for
/// any other: both answers in one lookup.
pub(crate) fn known_info(op: &str) -> Option<Option<OpInfo>> {
    static MAP: std::sync::OnceLock<foldhash::HashMap<&'static str, Option<OpInfo>>> =
        std::sync::OnceLock::new();
    let map = MAP.get_or_init(|| {
        super::validate::OPCODES
            .iter()
            .map(|&op| (op, info(op)))
            .collect()
    });
    match map.get(op) {
        Some(&i) => Some(i),
        None => super::opcodes::known_opcode(op).then_some(None),
    }
}

fn reads_values(op: &str) -> bool {
    matches!(
        op,
        "compare"
            | "get-tuple-element"
            | "slice"
            | "custom-call"
            | "transpose"
            | "broadcast"
            | "reduce"
            | "concatenate"
            | "reverse"
    )
}

/// Checks `inst` (read from `text`) as XLA's parser does for its opcode, whose checks are `info`.
pub(crate) fn instruction(text: &str, inst: &Instruction<'_>, info: Option<OpInfo>) -> Result<()> {
    let op = inst.opcode();
    let err = |piece: &str, msg: String| Err(module_error(text, at(text, piece), msg));
    if info.is_none() && matches!(op, "parameter" | "constant") {
        let operands = inst.operands_text().trim();
        if op == "parameter" && (!is_int(operands) || operands.starts_with('-')) {
            return err(
                inst.opcode(),
                format!("parameter takes its number, an integer from 0: found `{operands}`"),
            );
        }
        if op == "constant" && operands.is_empty() {
            return err(inst.opcode(), "constant takes a literal".into());
        }
    }
    // Attribute values are read only for the opcodes whose values are checked (reading every list
    // again would cost a second scan of the module).
    let Some(info) = info else {
        return Ok(());
    };
    // An attribute the opcode does not take (the reader noted whether any is not a common one).
    if let (Some(allowed), true) = (info.only, inst.attributes().has_extra()) {
        for a in &inst.attributes() {
            if !super::attrcheck::is_common(a.name) && !allowed.contains(&a.name) {
                let takes = if allowed.is_empty() {
                    String::new()
                } else {
                    format!(" (besides the common ones it takes {})", allowed.join(", "))
                };
                return err(a.name, format!("{op} takes no attribute {}{takes}", a.name));
            }
        }
    }
    let need = info.required;
    if need.is_empty() && !info.values {
        return Ok(());
    }
    let attrs = inst.attributes();
    // One pass over the list: which required attributes are there, and the values read as data.
    let mut found = [false; 4];
    for a in &attrs {
        if let Some(k) = need.iter().position(|n| *n == a.name) {
            if let Some(f) = found.get_mut(k) {
                *f = true;
            }
        }
        let v = a.value.trim();
        let bad = match a.name {
            "direction" if op == "compare" => !DIRECTIONS.contains(&v),
            "kind" if op == "fusion" && !FUSION_KINDS.contains(&v) => {
                return err(
                    a.value,
                    format!(
                        "unknown fusion kind `{v}`: one of {}",
                        FUSION_KINDS.join(", ")
                    ),
                );
            }
            "index" if op == "get-tuple-element" => !is_int(v) || v.starts_with('-'),
            "dimensions" => !is_int_list(v),
            "slice" if op == "slice" => !is_slice(v),
            "api_version" => !API_VERSIONS.contains(&v),
            "backend_config" => !(v.starts_with('"') || v.starts_with('{')),
            "custom_call_target" => !v.starts_with('"'),
            _ => false,
        };
        if bad {
            return err(
                a.value,
                format!("`{v}` is not a value of the attribute {}", a.name),
            );
        }
    }
    if let Some(name) = need.iter().zip(found).find_map(|(n, f)| (!f).then_some(n)) {
        return Err(module_error(
            text,
            after_operands(text, inst),
            format!("{op} needs the attribute {name}="),
        ));
    }
    Ok(())
}

/// Checks that `inst`, of `found` operands, has as many as its opcode takes, when that is fixed.
pub(crate) fn operand_count(
    text: &str,
    inst: &Instruction<'_>,
    info: Option<OpInfo>,
    found: usize,
) -> Result<()> {
    let op = inst.opcode();
    match info.and_then(|i| i.arity) {
        Some(n) if n != found => Err(module_error(
            text,
            at(text, op),
            format!(
                "{op} takes {n} operand{}, found {found}",
                if n == 1 { "" } else { "s" }
            ),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use crate::hlo::parse_module;
    use proptest::prelude::*;

    proptest! {
        /// `same` is `==`, at every length around the load sizes.
        #[test]
        fn same_is_equality(a in "[ab]{0,20}", b in "[ab]{0,20}", c in "[ab]{0,20}") {
            prop_assert_eq!(super::same(&a, &b), a == b);
            prop_assert_eq!(super::same(&a, &a.clone()), true);
            let d = format!("{c}x{c}");
            let e = format!("{c}y{c}");
            prop_assert!(!super::same(&d, &e));
        }

        /// The opcode cache answers what `known_info` answers, whatever the order of opcodes.
        #[test]
        fn opcode_cache_answers_as_known_info(
            ops in proptest::collection::vec(prop_oneof![
                Just("add"), Just("and"), Just("abs"), Just("exponential"), Just("rsqrt"),
                Just("all-reduce-start"), Just("all-reduce-done"), Just("nope"), Just("tanh"),
                Just("copy-start"), Just("copy"), Just("constant"), Just("parameter"), Just("divide"),
            ], 0..60),
        ) {
            let mut cache = super::OpcodeCache::default();
            for op in ops {
                let want = super::known_info(op).map(|i| i.map(|i| format!("{:?}", (i.arity, i.required, i.values, i.only))));
                let got = cache.info(op).map(|i| i.map(|i| format!("{:?}", (i.arity, i.required, i.values, i.only))));
                prop_assert_eq!(got, want);
            }
        }
    }

    fn error(body: &str) -> String {
        let text =
            format!("HloModule m\n\nENTRY e {{\n  p = f32[4]{{0}} parameter(0)\n{body}\n}}\n");
        parse_module(&text).unwrap_err().to_string()
    }

    #[test]
    fn operand_counts_attributes_and_values() {
        assert!(error("  ROOT a = f32[4]{0} add(p)").contains("add takes 2 operands, found 1"));
        assert!(error("  ROOT a = f32[4]{0} negate(p, p)").contains("takes 1 operand,"));
        assert!(error("  ROOT c = pred[4]{0} compare(p, p)").contains("direction="));
        assert!(error("  ROOT c = pred[4]{0} compare(p, p), direction=BIG").contains("`BIG`"));
        assert!(error("  ROOT t = f32[4]{0} transpose(p), dimensions={x}").contains("dimensions"));
        assert!(error("  ROOT s = f32[2]{0} slice(p), slice={[0:2:1:4]}").contains("slice"));
        assert!(error(
            "  ROOT c = f32[4]{0} custom-call(p), custom_call_target=\"t\", backend_config=3"
        )
        .contains("backend_config"));
        assert!(error("  q = f32[4]{0} parameter(-1)").contains("parameter takes"));
        // Line and column of the opcode.
        assert!(
            error("  ROOT a = f32[4]{0} add(p)").contains("5:22"),
            "{}",
            error("  ROOT a = f32[4]{0} add(p)")
        );
    }
}
