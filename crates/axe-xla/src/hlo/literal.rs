//! Literals of `constant(...)`: each number in its element type's range, and as many elements per
//! nesting level as the shape's dims (what XLA's parser checks). A literal XLA printed elided, `{...}`
//! (large constants), is read as XLA reads it: `...` may end the first nesting level, after at most
//! as many elements as the first dim.

use super::scan::module_error;
use crate::error::Result;
use crate::shape::{Dim, Shape};
use crate::PrimitiveType;

/// What XLA's parser takes as one number of a literal of a type.
enum Range {
    /// Integers written in decimal within `[lo, hi]`: sN and uN, and s64, u64 and pred, which XLA
    /// reads as any 64-bit integer, signed or not.
    Int(i128, i128),
    /// Decimal numbers that stay finite as XLA converts them (see [`Float`]).
    Float(Float),
    Unchecked,
}

/// How XLA converts a decimal number into a float type: parsed as an f64 (past its range: out of range),
/// then rounded to f32 (past its range: out of range), then rounded to nearest, ties to even, into the
/// type, which must not overflow (to infinity or, for types without one, NaN). `Narrow`: the type's
/// largest finite value `max` and the gap `ulp` from it to the next value its exponents could hold; a
/// number rounds past `max` from `max + ulp/2` up, or from just past it where `max`'s last mantissa bit
/// is 0 (`tie_down`: a tie goes to `max`). `positive`: the type has no zero and no sign (`f8e8m0fnu`),
/// so XLA refuses a number that reads as 0, -0 or less (a positive one too small rounds to the least
/// value, `2^-127`, and is taken).
#[derive(Clone, Copy)]
enum Float {
    F64,
    F32,
    Narrow {
        max: f64,
        ulp: f64,
        tie_down: bool,
        positive: bool,
    },
}

fn range(t: PrimitiveType) -> Range {
    use PrimitiveType as P;
    let bits = i128::from(t.bits());
    let narrow = |max: f64, ulp: f64, tie_down| {
        Range::Float(Float::Narrow {
            max,
            ulp,
            tie_down,
            positive: false,
        })
    };
    match t {
        P::Pred | P::S64 | P::U64 => Range::Int(-(1i128 << 63), (1i128 << 64) - 1),
        _ if t.is_integer() && t.name().starts_with('u') => Range::Int(0, (1i128 << bits) - 1),
        _ if t.is_integer() => Range::Int(-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
        P::F64 | P::C128 => Range::Float(Float::F64),
        // Types XLA converts saturating (no infinity, no NaN): f32's range only.
        P::F32 | P::C64 | P::F4E2m1fn | P::F6E2m3fn | P::F6E3m2fn => Range::Float(Float::F32),
        P::F16 => narrow(65504.0, 32.0, false),
        P::Bf16 => narrow(3.389_531_389_251_535_5e38, 2f64.powi(120), false),
        P::F8E5m2 | P::F8E5m2fnuz => narrow(57344.0, 8192.0, false),
        P::F8E4m3fn => narrow(448.0, 32.0, true),
        P::F8E4m3 | P::F8E4m3fnuz => narrow(240.0, 16.0, false),
        P::F8E4m3b11fnuz => narrow(30.0, 2.0, false),
        P::F8E3m4 => narrow(15.5, 0.5, false),
        // Powers of two only: 2^127, then 2^128 (NaN); the tie at 1.5·2^127 rounds up. No zero, no sign.
        P::F8E8m0fnu => Range::Float(Float::Narrow {
            max: 2f64.powi(127),
            ulp: 2f64.powi(127),
            tie_down: false,
            positive: true,
        }),
        _ => Range::Unchecked,
    }
}

impl Float {
    /// Why XLA refuses the number `v` (already read as an f64) for this type, if it does. Law: refused
    /// iff `v` is past f64's range, past f32's once rounded to it (all but f64), rounds past the
    /// type's largest finite value, or is `≤ 0` (`-0` too) for a type without zero and sign.
    fn refuses(self, v: f64) -> Option<String> {
        if !v.is_finite() {
            return Some(format!("past f64's range (largest {:e})", f64::MAX));
        }
        if let Float::Narrow { positive: true, .. } = self {
            if v <= 0.0 {
                return Some(
                    "the type has no zero and no sign: its values are the powers of two from 2^-127 to 2^127"
                        .to_string(),
                );
            }
        }
        if matches!(self, Float::F64) {
            return None;
        }
        let single = v as f32;
        if single.is_infinite() {
            return Some(format!("past f32's range (largest {:e})", f32::MAX));
        }
        let Float::Narrow {
            max, ulp, tie_down, ..
        } = self
        else {
            return None;
        };
        let edge = max + ulp / 2.0;
        let m = f64::from(single).abs();
        let largest = if max < 1e6 {
            format!("{max}")
        } else {
            format!("{max:e}")
        };
        (m > edge || m == edge && !tie_down)
            .then(|| format!("it rounds past the largest finite value, {largest}"))
    }
}

/// Whether `tok` is a decimal integer as XLA writes one: an optional `-`, then digits.
fn is_decimal_integer(tok: &str) -> bool {
    let digits = tok.strip_prefix('-').unwrap_or(tok);
    !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())
}

/// Checks the literal `lit` (a slice of the module `text`) against `shape`.
pub(crate) fn check(text: &str, lit: &str, shape: &Shape) -> Result<()> {
    let base = (lit.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    let err = |off: usize, msg: String| module_error(text, base + off, msg);
    if let Shape::Tuple(_) = shape {
        // XLA prints a large tuple constant as `{...}` but reads tuple literals only in parentheses.
        let t = lit.trim_start();
        if !t.is_empty() && !t.starts_with('(') {
            return Err(err(
                lit.len() - t.len(),
                "a tuple literal is written in parentheses: `(...)`".into(),
            ));
        }
    }
    let Some(a) = shape.as_array() else {
        return Ok(());
    };
    let range = range(a.element_type);
    let name = a.element_type.name();
    // Numbers: each one XLA would read, in range.
    let b = lit.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let starts = c.is_ascii_digit()
            || ((c == b'-' || c == b'+' || c == b'.')
                && b.get(i + 1).is_some_and(u8::is_ascii_digit));
        let after_word =
            i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'.');
        if !starts || after_word || matches!(range, Range::Unchecked) {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < b.len()
            && (b[i].is_ascii_alphanumeric()
                || matches!(b[i], b'.' | b'+' | b'-') && matches!(b[i - 1], b'e' | b'E')
                || b[i] == b'.')
        {
            i += 1;
        }
        let tok = &lit[start..i];
        let refused = |why: String| Err(err(start, format!("{tok} {why}")));
        if matches!(c, b'+' | b'.') {
            return refused(
                "is not a number XLA reads (a number starts with a digit or `-`)".to_string(),
            );
        }
        match range {
            Range::Int(lo, hi) => {
                if !is_decimal_integer(tok) {
                    return refused(format!("is not an integer, as {name} elements are"));
                }
                match tok.parse::<i128>() {
                    Ok(v) if (lo..=hi).contains(&v) => {}
                    _ => return refused(format!("is out of range for {name} [{lo}, {hi}]")),
                }
            }
            Range::Float(f) => {
                let Ok(v) = tok.parse::<f64>() else {
                    return refused(format!("is not a decimal number, as {name} elements are"));
                };
                if let Some(why) = f.refuses(v) {
                    return refused(format!("is out of range for {name}: {why}"));
                }
            }
            Range::Unchecked => {}
        }
    }
    // Elements per level.
    let t = lit.trim_start();
    if !t.starts_with('{') || a.dims.is_empty() || a.element_type.is_complex() {
        return Ok(());
    }
    let dims: Vec<Option<i64>> = a
        .dims
        .iter()
        .map(|d| match d {
            Dim::Static(n) => Some(*n),
            _ => None,
        })
        .collect();
    let mut pos = lit.len() - t.len();
    level(lit, &mut pos, 0, &dims).map_err(|(off, msg)| err(off, msg))
}

/// Reads `{ ... }` at `pos` as nesting level `d`, checking its element count.
fn level(
    lit: &str,
    pos: &mut usize,
    d: usize,
    dims: &[Option<i64>],
) -> std::result::Result<(), (usize, String)> {
    let b = lit.as_bytes();
    let open = *pos;
    *pos += 1;
    let mut count: i64 = 0;
    let mut in_item = false;
    while *pos < b.len() {
        match b[*pos] {
            b'{' => {
                if d + 1 >= dims.len() {
                    return Err((
                        *pos,
                        format!(
                            "the literal nests deeper than the shape's {} dims",
                            dims.len()
                        ),
                    ));
                }
                level(lit, pos, d + 1, dims)?;
                in_item = true;
                continue;
            }
            b'}' => {
                if in_item {
                    count += 1;
                }
                *pos += 1;
                if let Some(want) = dims.get(d).copied().flatten() {
                    if count != want {
                        return Err((open, format!("expected {want} elements at this level of the literal, found {count}")));
                    }
                }
                return Ok(());
            }
            b',' => {
                count += 1;
                in_item = false;
            }
            b'.' if lit[*pos..].starts_with("...") => {
                // An elided literal (`{...}`, what XLA prints for large constants): only at the first
                // nesting level, and last there.
                if d != 0 {
                    return Err((
                        *pos,
                        format!(
                            "`...` (an elided literal) stands at the literal's first nesting level, not at level {}",
                            d + 1
                        ),
                    ));
                }
                let at = *pos;
                *pos += 3;
                while b.get(*pos).is_some_and(u8::is_ascii_whitespace) {
                    *pos += 1;
                }
                if b.get(*pos) != Some(&b'}') {
                    return Err((at, "`...` (an elided literal) must end its literal".into()));
                }
                *pos += 1;
                if let Some(want) = dims.first().copied().flatten() {
                    if count > want {
                        return Err((
                            open,
                            format!("expected at most {want} elements before `...`, found {count}"),
                        ));
                    }
                }
                return Ok(());
            }
            b'(' => {
                // A complex or tuple element: skip to its close.
                let mut depth = 0;
                while *pos < b.len() {
                    match b[*pos] {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    *pos += 1;
                }
                in_item = true;
            }
            c if !c.is_ascii_whitespace() => in_item = true,
            _ => {}
        }
        *pos += 1;
    }
    Err((open, "this '{' of the literal is never closed".into()))
}
