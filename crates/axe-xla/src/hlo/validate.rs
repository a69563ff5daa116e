//! What XLA's parser checks once a module's text is read: every shape parsed and valid, opcodes known,
//! names defined once and before use, one `ROOT`, called computations present, async ops paired,
//! literals in range and of the shape's size, the signature's result compatible with the root.
//!
//! Errors point into the module text (`line:col`, the line, a caret): every piece of a [`Module`] borrows
//! from the text, so its position is where its slice starts.

use foldhash::{HashMap, HashSet, HashSetExt};

pub(crate) use super::callees::{async_wrapped_once, computation_names, Callee};
use super::callees::{callee, callee_error};
use super::names::{kept, NameTable};
use super::scan::module_error;
use super::{Computation, Instruction};
use crate::error::{Result, XlaError};
use crate::shape::{Dim, Shape};

pub(crate) use super::opcodes::{known_opcode, OPCODES};

/// Where `piece` (a slice of `text`) starts in `text`.
pub(super) fn at(text: &str, piece: &str) -> usize {
    (piece.as_ptr() as usize)
        .saturating_sub(text.as_ptr() as usize)
        .min(text.len())
}

/// `name` without its `%` sigil.
pub(super) fn bare(name: &str) -> &str {
    name.strip_prefix('%').unwrap_or(name)
}

/// Checks `computations`, read from `text`, as XLA's parser does, one after the other: the error is the
/// first one in module order. Gives each computation's instructions by name (every one of them, each
/// name once), where [`kept`].
pub(crate) fn check(
    text: &str,
    computations: &[Computation<'_>],
) -> Result<Vec<Option<NameTable>>> {
    let names = computation_names(text, computations)?;
    let mut checker = Checker::new(text);
    let mut tables = Vec::with_capacity(computations.len());
    // XLA reads computations in order: a call names one read before the caller.
    let mut before: HashSet<&str> = HashSet::with_capacity(computations.len());
    for c in computations {
        let current = bare(c.name);
        tables.push(kept(checker.computation(c, &mut |name| {
            callee(name, current, &before, &names)
        })?));
        before.insert(current);
    }
    async_wrapped_once(text, &checker.wrapped)?;
    Ok(tables)
}

/// Checks computations one at a time, remembering the shapes it has already checked.
pub(crate) struct Checker<'t, 's> {
    text: &'t str,
    shapes: HashSet<&'s str>,
    /// The `calls=` values of the `async-start`s checked, in order.
    pub(crate) wrapped: Vec<&'s str>,
}

/// Sharding texts already checked, with the shapes (see [`Checker`]).
fn check_sharding<'s>(text: &str, value: &'s str, seen: &mut HashSet<&'s str>) -> Result<()> {
    if seen.contains(value) {
        return Ok(());
    }
    super::sharding::parse_sharding(value).map_err(|e| match e {
        // One location: the sharding reader's offset, within the module text.
        crate::XlaError::Parse(p) => module_error(
            text,
            at(text, value).saturating_add(p.offset),
            format!("sharding: {}", p.message),
        ),
        e => module_error(text, at(text, value), format!("sharding: {e}")),
    })?;
    seen.insert(value);
    Ok(())
}

impl<'t, 's> Checker<'t, 's> {
    /// A checker of computations read from `text`.
    pub(crate) fn new(text: &'t str) -> Self {
        Checker {
            text,
            shapes: HashSet::new(),
            wrapped: Vec::new(),
        }
    }

    /// Checks `c`; `exists` says what a call to a computation (bare name) finds there. Gives `c`'s
    /// instructions by name (every one of them, each name once).
    pub(crate) fn computation(
        &mut self,
        c: &Computation<'s>,
        exists: &mut dyn FnMut(&'s str) -> Callee,
    ) -> Result<NameTable> {
        computation(self.text, c, exists, &mut self.shapes, &mut self.wrapped)
    }

    /// Checks `insts`, one run of a computation's instructions, into `run` (see [`Run`]).
    pub(crate) fn run(
        &mut self,
        insts: &[Instruction<'s>],
        run: &mut Run<'s>,
        exists: &mut dyn FnMut(&'s str) -> Callee,
    ) -> Result<()> {
        instructions(
            self.text,
            insts,
            run,
            exists,
            &mut self.shapes,
            &mut self.wrapped,
        )
    }
}

/// `shape_text` (a slice of `text`) parsed and validated, or the error at its place in the module.
fn parse_at(text: &str, shape_text: &str) -> Result<Shape> {
    let parsed = crate::text::parse_shape(shape_text).and_then(|s| {
        crate::validate::validate(&s)?;
        Ok(s)
    });
    match parsed {
        Ok(s) => Ok(s),
        Err(XlaError::Parse(p)) => Err(module_error(
            text,
            at(text, shape_text) + p.offset,
            p.message,
        )),
        Err(e) => Err(module_error(text, at(text, shape_text), e.to_string())),
    }
}

/// Checks `shape_text` once per distinct text.
fn check_shape<'s>(text: &str, shape_text: &'s str, seen: &mut HashSet<&'s str>) -> Result<()> {
    if !seen.contains(shape_text) {
        parse_at(text, shape_text)?;
        seen.insert(shape_text);
    }
    Ok(())
}

fn computation<'s>(
    text: &str,
    c: &Computation<'s>,
    exists: &mut dyn FnMut(&'s str) -> Callee,
    shapes: &mut HashSet<&'s str>,
    wrapped: &mut Vec<&'s str>,
) -> Result<NameTable> {
    if c.instructions.is_empty() {
        return Err(module_error(
            text,
            at(text, c.name),
            format!("computation {} has no instructions", bare(c.name)),
        ));
    }
    let mut run = Run::with_capacity(c.instructions.len())?;
    instructions(text, &c.instructions, &mut run, exists, shapes, wrapped)?;
    parameter_numbers(text, c, [&run.parameters])?;
    signature(text, c, run.root.as_ref())?;
    Ok(run.defined)
}

/// What checking a run of one computation's instructions found: the names it defines with their
/// positions in the run (a [`NameTable`] of the run's list, 10 bytes a name: see [`opcode_in`]), its
/// parameter numbers, its root. A run that continues earlier runs of its computation
/// (`outside` given) notes the operands it does not define, and the async operands it completes, for the
/// earlier runs to hold; a whole computation's run (`outside` absent) reports them as errors.
#[derive(Default)]
pub(crate) struct Run<'s> {
    pub(crate) defined: NameTable,
    /// Parameter numbers, each with the instruction that takes it.
    pub(crate) parameters: HashMap<u64, Instruction<'s>>,
    pub(crate) root: Option<Instruction<'s>>,
    pub(crate) outside: Option<Vec<&'s str>>,
    /// `(operand, base)` of each `BASE-done` / `BASE-update` whose operand is not in the run.
    pub(crate) outside_pairs: Vec<(&'s str, &'s str)>,
    /// The last four names defined (bare), most recent first: operands mostly name one of them, which
    /// needs no hashing.
    recent: [&'s str; 4],
}

impl Run<'_> {
    /// An empty run with room for `instructions` names; an error for 2^32 - 1 or more.
    pub(crate) fn with_capacity(instructions: usize) -> Result<Self> {
        Ok(Run {
            defined: NameTable::with_room(instructions)?,
            ..Run::default()
        })
    }
}

/// The opcode of the instruction named `name` (bare) among `insts`, the instructions `run` checked.
pub(crate) fn opcode_in<'s>(
    run: &Run<'_>,
    insts: &[Instruction<'s>],
    name: &str,
) -> Option<&'s str> {
    let k = run.defined.get(insts, name)?;
    insts.get(k).map(Instruction::opcode)
}

/// Checks `insts`, one run of a computation's instructions, into `run`.
fn instructions<'s>(
    text: &str,
    insts: &[Instruction<'s>],
    run: &mut Run<'s>,
    exists: &mut dyn FnMut(&'s str) -> Callee,
    shapes: &mut HashSet<&'s str>,
    wrapped: &mut Vec<&'s str>,
) -> Result<()> {
    let err = |piece: &str, msg: String| module_error(text, at(text, piece), msg);
    let mut recent = [""; 2];
    let mut opcodes = super::opcheck::OpcodeCache::default();
    for (k, inst) in insts.iter().enumerate() {
        if inst.is_root() {
            if run.root.is_some() {
                return Err(err(inst.name(), "a computation has only one ROOT".into()));
            }
            run.root = Some(*inst);
        }
        let shape_text = inst.shape_text();
        // Dumps repeat a few shapes: one of the last two checked needs no hashing.
        if !shape_text.is_empty() && shape_text != recent[0] && shape_text != recent[1] {
            check_shape(text, shape_text, shapes)?;
            recent = [shape_text, recent[0]];
        }
        let opcode = inst.opcode();
        let Some(info) = opcodes.info(opcode) else {
            return Err(err(opcode, format!("unknown opcode {opcode:?}")));
        };
        super::opcheck::instruction(text, inst, info)?;
        if opcode == "parameter" {
            let number = inst.operands_text().trim();
            // XLA reads the number as an int64.
            let Some(n) = number.parse::<u64>().ok().filter(|&n| n <= i64::MAX as u64) else {
                return Err(err(
                    inst.operands_text(),
                    format!("parameter number {number} is past 2^63 - 1"),
                ));
            };
            if run.parameters.insert(n, *inst).is_some() {
                return Err(err(
                    inst.operands_text(),
                    format!("parameter number {number} is taken by an earlier parameter"),
                ));
            }
        }
        // Sharding texts live beside the shapes in the checked set (they never look alike).
        let attributes = inst.attributes();
        if let Some(v) = attributes.get("sharding") {
            check_sharding(text, v, shapes)?;
        }
        match opcode {
            "parameter" => {}
            "constant" if !inst.shape_text().is_empty() => {
                let s = parse_at(text, inst.shape_text())?;
                super::literal::check(text, inst.operands_text(), &s)?;
            }
            _ => {
                let count = operands(text, insts, inst.operands_text(), run, shapes, 0)?;
                super::opcheck::operand_count(text, inst, info, count)?;
            }
        }
        pairing(text, inst, insts, run)?;
        // Control predecessors are instructions defined before, in the same computation.
        if attributes.has_control() {
            if let Some(v) = attributes.get("control-predecessors") {
                let names = super::attrcheck::names(v)
                    .map_err(|(off, why)| module_error(text, at(text, v) + off, why))?;
                for (_, name) in names {
                    defined_before(text, insts, name, run)?;
                }
            }
        }
        // Called computations exist (the reader noted whether any attribute names one).
        if attributes.has_calls() {
            for a in &attributes {
                if a.name == "calls" && opcode == "async-start" {
                    wrapped.push(a.value);
                }
                if super::attributes::CALLING_ATTRIBUTES.contains(&a.name) {
                    let list = a.value.trim_start_matches('{').trim_end_matches('}');
                    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                        if let Some(why) = callee_error(bare(name), exists(bare(name))) {
                            return Err(err(name, why));
                        }
                    }
                }
            }
        }
        let name = bare(inst.name());
        if !run.defined.add_new(insts, k)? {
            return Err(err(
                inst.name(),
                format!("instruction {name} is defined twice"),
            ));
        }
        run.recent = [name, run.recent[0], run.recent[1], run.recent[2]];
    }
    Ok(())
}

/// A computation's parameters are numbered 0 to N - 1 (XLA's computations take their parameters by
/// position; its parser stops the process on a gap). `runs`: the numbers, each with its parameter, of
/// the runs that make up computation `c`, no number in two.
pub(crate) fn parameter_numbers<'s, 'r>(
    text: &str,
    c: &Computation<'s>,
    runs: impl IntoIterator<Item = &'r HashMap<u64, Instruction<'s>>>,
) -> Result<()>
where
    's: 'r,
{
    let runs: Vec<_> = runs.into_iter().collect();
    let count: usize = runs.iter().map(|r| r.len()).sum();
    let past = runs
        .iter()
        .flat_map(|r| r.iter())
        .filter(|(&n, _)| n >= count as u64)
        .min_by_key(|(_, inst)| inst.name().as_ptr() as usize);
    match past {
        None => Ok(()),
        Some((n, inst)) => Err(module_error(
            text,
            at(text, inst.operands_text()),
            format!(
                "parameter number {n} of computation {}, which has {count} parameter(s): they are \
                 numbered 0 to {}",
                bare(c.name),
                count.saturating_sub(1)
            ),
        )),
    }
}

/// The operands: names defined before, or nested instructions (`f32[8] exponential(x)`).
/// How deep instructions may nest inside operands.
const MAX_NESTED: usize = 128;

fn operands<'s>(
    text: &str,
    insts: &[Instruction<'s>],
    operands_text: &'s str,
    run: &mut Run<'s>,
    shapes: &mut HashSet<&'s str>,
    depth: usize,
) -> Result<usize> {
    if depth > MAX_NESTED {
        return Err(module_error(
            text,
            at(text, operands_text),
            format!("instructions nest more than {MAX_NESTED} deep in operands"),
        ));
    }
    // Names, '%', commas and spaces only (the common list): each piece between commas is a name. The
    // general reading below takes over at the first piece that is not plain.
    let (plain, rest) =
        super::scan::plain_pieces(operands_text, |name| defined_before(text, insts, name, run))?;
    let Some(from) = rest else {
        return Ok(plain);
    };
    let operands_text = &operands_text[from..];
    let pieces = super::scan::TopLevel::new(operands_text, b',');
    let mut count = plain;
    for piece in pieces {
        count += 1;
        let piece = skip_comments(piece);
        let rest = skip_shape(piece);
        if rest.len() < piece.len() {
            let shape_text = piece[..piece.len() - rest.len()].trim_end();
            check_shape(text, shape_text, shapes)?;
        }
        let rest = rest.trim_start();
        if let Some(open) = rest.find('(') {
            // A nested instruction: OPCODE(operands).
            let opcode = rest[..open].trim();
            if !known_opcode(opcode) {
                return Err(module_error(
                    text,
                    at(text, rest),
                    format!("unknown opcode {opcode:?}"),
                ));
            }
            let inner = rest[open + 1..]
                .strip_suffix(')')
                .unwrap_or(&rest[open + 1..]);
            if !matches!(opcode, "parameter" | "constant") {
                operands(text, insts, inner, run, shapes, depth + 1)?;
            }
            continue;
        }
        let name = rest;
        if !name.is_empty() {
            defined_before(text, insts, name, run)?;
        }
    }
    Ok(count)
}

/// An operand `name` (a slice of `text`) names an instruction defined before, or the error at it (in a
/// run continuing earlier ones, a name not in the run is noted for them).
fn defined_before<'s>(
    text: &str,
    insts: &[Instruction<'s>],
    name: &'s str,
    run: &mut Run<'s>,
) -> Result<()> {
    let name_bare = bare(name);
    if (!name_bare.is_empty()
        && run
            .recent
            .iter()
            .any(|r| super::opcheck::same(r, name_bare)))
        || run.defined.get(insts, name_bare).is_some()
    {
        return Ok(());
    }
    if let Some(outside) = &mut run.outside {
        outside.push(bare(name));
        return Ok(());
    }
    Err(module_error(
        text,
        at(text, name),
        format!(
            "{} is not an instruction defined before this one in its computation",
            bare(name)
        ),
    ))
}

/// `piece` without surrounding white space and leading `/* ... */` comments (`/*index=5*/%x`).
fn skip_comments(piece: &str) -> &str {
    let mut p = piece.trim();
    while let Some(rest) = p.strip_prefix("/*") {
        p = rest.find("*/").map_or("", |e| rest[e + 2..].trim_start());
    }
    p
}

/// `piece` after a leading shape (`f32[2]{0}`, `(f32[2], s32[])`, `b(f32[2])`), if it opens with one.
fn skip_shape(piece: &str) -> &str {
    let b = piece.as_bytes();
    let word = b.iter().take_while(|c| c.is_ascii_alphanumeric()).count();
    let opens = match b.get(word) {
        Some(b'[') => word > 0,
        Some(b'(') => word == 0 || &piece[..word] == "b",
        _ => false,
    };
    if !opens {
        return piece;
    }
    let mut i = close(b, word);
    if b.get(i) == Some(&b'{') {
        i = close(b, i);
    }
    // A tuple `( ... )` is a shape only when an opcode follows it.
    &piece[i.min(piece.len())..]
}

/// The index just past the bracket opened at `open` (or the end).
fn close(b: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    b.len()
}

/// An async `OP-update` / `OP-done` takes the `OP-start` (or `OP-update`) it completes; `send-done` and
/// `recv-done` take a `send` / `recv`.
fn pairing<'s>(
    text: &str,
    inst: &Instruction<'s>,
    insts: &[Instruction<'s>],
    run: &mut Run<'s>,
) -> Result<()> {
    let Some(base) = ["-done", "-update"]
        .iter()
        .find_map(|s| inst.opcode().strip_suffix(s))
    else {
        return Ok(());
    };
    let operand = super::scan::TopLevel::new(inst.operands_text(), b',')
        .next()
        .map(|p| skip_shape(skip_comments(p)).trim());
    let op = operand.and_then(|n| opcode_in(run, insts, bare(n)));
    if let (None, Some(_), Some(n)) = (op, &run.outside, operand) {
        // Not in this run: the earlier runs of the computation must hold it.
        run.outside_pairs.push((bare(n), base));
        return Ok(());
    }
    if op.is_some_and(|op| completes(op, base)) {
        Ok(())
    } else {
        let piece = operand.filter(|p| !p.is_empty()).unwrap_or(inst.opcode());
        Err(module_error(
            text,
            at(text, piece),
            format!(
                "{} completes an async op: its operand must be a {base}-start or {base}-update",
                inst.opcode()
            ),
        ))
    }
}

/// Whether an instruction of opcode `op` is what a `BASE-done` / `BASE-update` of `base` completes.
pub(crate) fn completes(op: &str, base: &str) -> bool {
    op.strip_suffix("-start").or(op.strip_suffix("-update")) == Some(base)
        || (matches!(base, "send" | "recv") && op == base)
}

/// The signature's result shape is compatible (same types and dims) with the root's shape.
pub(crate) fn signature(
    text: &str,
    c: &Computation<'_>,
    root: Option<&Instruction<'_>>,
) -> Result<()> {
    let Some((_, result)) = c.signature.rsplit_once("->") else {
        return Ok(());
    };
    let result = result.trim();
    let want = parse_at(text, result)?;
    let root = root.or(c.instructions.last());
    let Some(root) = root.filter(|r| !r.shape_text().is_empty()) else {
        return Ok(());
    };
    let got = parse_at(text, root.shape_text())?;
    if !compatible(&want, &got) {
        return Err(module_error(
            text,
            at(text, result),
            format!(
                "the result shape of computation {}, {result}, is not compatible with its root {}, {}",
                bare(c.name),
                bare(root.name()),
                root.shape_text()
            ),
        ));
    }
    Ok(())
}

/// Same element types and dims, layouts aside (XLA's `ShapeUtil::Compatible`).
fn compatible(a: &Shape, b: &Shape) -> bool {
    match (a, b) {
        (Shape::Array(x), Shape::Array(y)) => {
            x.element_type == y.element_type
                && x.dims.len() == y.dims.len()
                && x.dims
                    .iter()
                    .zip(y.dims.iter())
                    .all(|(p, q)| same_dim(*p, *q))
        }
        (Shape::Tuple(x), Shape::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| compatible(p, q))
        }
        (Shape::Buffer(x), Shape::Buffer(y)) => compatible(x, y),
        (Shape::Token, Shape::Token) | (Shape::Opaque, Shape::Opaque) => true,
        _ => false,
    }
}

fn same_dim(a: Dim, b: Dim) -> bool {
    a == b
}
