//! The pass of the cost report over a module's instructions (see [`super::stats::report_with`]).

use super::names::NameTable;
use super::partitioned::{ShapeDecision, ShapeReading, Signs};
use super::per_device::{OutputSharding, Tally};
use super::stats::{Report, Totals, Waste};
use super::stats_shapes::Shapes;
pub(super) use super::stats_sums::{Counts, Held, TopPadded};
use super::stats_values::{defines, Defines};
use super::{Computation, Instruction, Module};
use crate::error::{overflow, Result, XlaError};
use crate::shape::Shape;

/// How the totals are added up.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Adding {
    /// Each value as it comes: an overflow is found at the value that causes it, as a reader going
    /// through the module finds it.
    EachValue,
    /// Values counted per shape and computation, multiplied out at the computation's end: a fault is
    /// found, but maybe not the first in module order (the caller reads again [`Adding::EachValue`]).
    PerShape,
}

/// The cost report of `module`, its values added up as `adding` says, its instructions looked up by
/// name in the tables its check made where `named` gives them (see [`ByName`]).
pub(crate) fn walk<'a>(
    module: &Module<'a>,
    named: Option<&[Option<NameTable>]>,
    top: usize,
    reading: Option<ShapeReading>,
    adding: Adding,
) -> Result<Report<'a>> {
    let mut shapes = Shapes::default();
    let mut r = Report {
        instructions: module.instruction_count(),
        ..Report::default()
    };
    // At most one relayout an instruction: room for them all at once, so that the list never moves
    // as it grows (the pages of the room no relayout takes are never touched).
    r.relayouts.reserve_exact(r.instructions);
    // The `top` most padded leaves so far: (computation, instruction, shape, leaf, sizes), kept as
    // borrowed text and shape ids until the end so that a module of many padded tensors costs no
    // allocation per tensor.
    let mut waste = TopPadded::new(top);
    let flags = super::calls::materialized(module);
    let mut tally = Tally::default();
    // The entry's parameters and its result.
    let mut arguments = Tally::default();
    let mut signs = Signs::default();
    let entry = super::calls::entry_index(module);
    // With `Adding::PerShape`: the values of the computation at hand per shape.
    let mut counts = Counts::default();
    // The operand names of the instruction at hand.
    let mut names: Vec<&str> = Vec::new();
    // The entry's instructions by name, when the table holds every one of them (given, or every one
    // has a shape), for the sharding of its result.
    let mut entry_names: Option<ByName<'_>> = None;
    for (ci, comp) in module.computations.iter().enumerate() {
        let is_entry = entry == Some(ci);
        let mut ctotal = Totals::default();
        r.relayouts.computation(comp.name);
        // The instructions by bare name (see `ByName`); the shape id of each, as the walk finds it.
        let by_name = ByName::of(named, ci, comp)?;
        let mut ids: Vec<u32> = vec![u32::MAX; comp.instructions.len()];
        for (k, inst) in comp.instructions.iter().enumerate() {
            signs.see(inst);
            if inst.shape_text().is_empty() {
                continue;
            }
            let id = shapes
                .id(inst.shape_text())
                .map_err(|e| located(comp, inst.name(), e))?;
            ids[k] = u32::try_from(id)
                .ok()
                .filter(|&id| id != u32::MAX)
                .ok_or_else(|| overflow("2^32 - 1 distinct shapes"))?;
            let info = &shapes.infos[id];
            let def = defines(inst.opcode(), matches!(info.shape, Shape::Tuple(_)), || {
                inst.attribute("calls").is_some()
            });
            if def != Defines::Nothing {
                let held = flags[ci] && (is_entry || inst.opcode() != "parameter");
                match (adding, def) {
                    (Adding::PerShape, Defines::All) => counts.bump(id, held),
                    // Each value as it comes (a result only some of whose leaves are values is rare).
                    _ => {
                        for (_, space, t) in info.defined_leaves(def) {
                            ctotal.add(t)?;
                            if held {
                                held_sums(&mut r, is_entry).add(*space, t)?;
                            }
                        }
                    }
                }
                if held && top > 0 && info.padded {
                    waste.offer_where(
                        &info.leaves,
                        |k| info.defines_leaf(def, k),
                        |leaf, _, t| (comp.name, inst.name(), id, leaf, *t),
                    );
                }
                if held {
                    // Read only where the reader saw a `sharding=`.
                    match (inst.attribute("sharding"), def) {
                        (Some(text), Defines::All) => {
                            tally.add_sharded(inst.shape_text(), &info.shape, text)
                        }
                        (Some(text), _) => tally
                            .add_sharded_where(&info.shape, text, |k| info.defines_leaf(def, k)),
                        (None, Defines::All) => {
                            shapes.whole(id).and_then(|b| tally.add_unannotated(b))
                        }
                        (None, _) => info
                            .defined_bytes(def)
                            .and_then(|b| tally.add_unannotated(b)),
                    }
                    .map_err(|e| located(comp, inst.name(), e))?;
                }
            }
            if is_entry && inst.opcode() == "parameter" {
                match inst.attribute("sharding") {
                    Some(text) => {
                        arguments.add_sharded(inst.shape_text(), &shapes.infos[id].shape, text)
                    }
                    None => shapes.whole(id).and_then(|b| arguments.add_unannotated(b)),
                }
                .map_err(|e| located(comp, inst.name(), e))?;
            }
            // Relayouts: an array operand with the result's dimensions but other bytes, or a transpose
            // that is not a bitcast; a bitcast moves nothing, whatever its layouts. A `copy-start`'s
            // result, for this, is its destination (the pair is listed once, at its start).
            let id = match super::moves::copy_destination(inst.opcode(), inst.shape_text()) {
                Some(text) => shapes.id(text).map_err(|e| located(comp, inst.name(), e))?,
                None => id,
            };
            if !matches!(shapes.infos[id].shape, Shape::Array(_)) || inst.opcode() == "bitcast" {
                continue;
            }
            let transpose = inst.opcode() == "transpose";
            if !transpose && !shapes.relayouts_possible(id) {
                continue; // every array of the result's dimensions and type has its layout
            }
            super::operands::operand_names(inst, &mut names);
            for &op in &names {
                let Some(src) =
                    defined(&comp.instructions, &by_name, k, op).map(|j| ids[j] as usize)
                else {
                    continue;
                };
                let kind = if transpose {
                    match shapes.transpose(src, id, inst.attribute("dimensions")) {
                        Some(kind) => kind,
                        None => continue,
                    }
                } else if src == id {
                    continue; // the same shape: the same layout
                } else {
                    match shapes.kind(src, id) {
                        Some(kind) => kind,
                        None => continue,
                    }
                };
                let from = shapes.printed(src, &mut r.relayouts)?;
                let to = shapes.printed(id, &mut r.relayouts)?;
                r.relayouts
                    .push(inst.name(), inst.opcode(), op, from, to, kind)?;
                break; // one entry per instruction
            }
        }
        counts.multiply_out(&shapes.infos, &mut ctotal, held_sums(&mut r, is_entry))?;
        r.total.add(&ctotal)?;
        r.computations.push((comp.name.to_string(), ctotal));
        if is_entry && (by_name.unique() || ids.iter().all(|&id| id != u32::MAX)) {
            entry_names = Some(by_name);
        }
    }
    drop(counts);
    r.materialized_computations = flags;
    conclude(
        module,
        reading,
        &mut r,
        &mut shapes,
        tally,
        arguments,
        signs,
        entry_names.as_ref().map(ByName::table),
    )?;
    // Most padded first; among equals, the first written.
    r.top_waste = waste
        .into_best()
        .into_iter()
        .map(|(computation, instruction, id, leaf, totals)| {
            waste_of(&shapes, computation, instruction, id, leaf, totals)
        })
        .collect();
    Ok(r)
}

/// The sums of the report the values held in memory add to; the entry's too for those of the entry
/// computation (`is_entry`).
fn held_sums<'r>(r: &'r mut Report<'_>, is_entry: bool) -> Held<'r> {
    Held {
        spaces: &mut r.spaces,
        materialized: &mut r.materialized,
        entry: is_entry.then_some(&mut r.entry),
    }
}

/// The end of the report, once every instruction was walked: the entry's result (`entry_names`, the
/// entry's instructions by name when every one has a shape) and the figures per device.
#[allow(clippy::too_many_arguments)]
pub(super) fn conclude<'a>(
    module: &Module<'a>,
    reading: Option<ShapeReading>,
    r: &mut Report<'a>,
    shapes: &mut Shapes<'a>,
    tally: Tally<'a>,
    arguments: Tally<'a>,
    signs: Signs<'a>,
    entry_names: Option<&NameTable>,
) -> Result<()> {
    let mut outputs = Tally::default();
    let entry = super::calls::entry_index(module);
    let mut output = (OutputSharding::Whole, 0);
    if let Some(comp) = entry.and_then(|e| module.computations.get(e)) {
        output = add_output(
            comp,
            shapes,
            &mut outputs,
            entry_names,
            &module.computations,
        )?;
    }
    let partitions = module
        .attribute("num_partitions")
        .and_then(|n| n.trim().parse::<usize>().ok());
    if let Some(mut readings) = tally.finish(partitions, &arguments, &outputs) {
        for p in &mut readings {
            (p.output_sharding, p.output_whole_bytes) = output;
        }
        let decision = match reading {
            Some(reading) => ShapeDecision {
                reading,
                reason: "given".to_string(),
            },
            None => signs.decide(module),
        };
        r.per_device = readings
            .iter()
            .find(|p| p.reading == decision.reading)
            .cloned();
        r.per_device_readings = readings.to_vec();
        r.shapes = Some(decision);
    }
    Ok(())
}

/// The entry of the top list for leaf `leaf` of a value of shape `id`.
pub(super) fn waste_of(
    shapes: &Shapes<'_>,
    computation: &str,
    instruction: &str,
    id: usize,
    leaf: usize,
    totals: Totals,
) -> Waste {
    let shape = &shapes.infos[id].shape;
    let array = shapes.infos[id].leaves[leaf].0;
    Waste {
        computation: computation.to_string(),
        instruction: instruction.to_string(),
        shape: shape.arrays()[array].1.to_string(),
        totals,
    }
}

/// Adds the entry's result to `outputs`: its arrays, under its sharding (written, else inferred by
/// [`super::propagate`], else whole on every device), and its tuple index tables. Returns where that
/// sharding came from and the result's bytes whole on one device (tables included; 0 without a
/// result). Law: the bytes added on the device holding the most never exceed the whole bytes.
fn add_output<'a>(
    comp: &Computation<'a>,
    shapes: &mut Shapes<'a>,
    outputs: &mut Tally<'a>,
    names: Option<&NameTable>,
    computations: &[Computation<'a>],
) -> Result<(OutputSharding, i64)> {
    let Some(root) = comp
        .instructions
        .iter()
        .find(|i| i.is_root())
        .or(comp.instructions.last())
    else {
        return Ok((OutputSharding::Whole, 0));
    };
    if root.shape_text().is_empty() {
        return Ok((OutputSharding::Whole, 0));
    }
    (|| {
        let id = shapes.id(root.shape_text())?;
        let shape = &shapes.infos[id].shape;
        let tables = super::per_device::tuple_table_bytes(shape)?;
        outputs.add_everywhere(tables)?;
        let whole = shapes
            .whole(id)?
            .checked_add(tables)
            .ok_or_else(|| overflow("the bytes of the entry's result"))?;
        let shape = &shapes.infos[id].shape;
        if let Some(text) = root.attribute("sharding") {
            outputs.add_sharded(root.shape_text(), shape, text)?;
            return Ok((OutputSharding::Given, whole));
        }
        match super::propagate::root_sharding_in(comp, names, computations) {
            Some(s) => {
                outputs.add_parsed(shape, &s)?;
                Ok((OutputSharding::Inferred, whole))
            }
            None => {
                outputs.add_unannotated(shapes.whole(id)?)?;
                Ok((OutputSharding::Whole, whole))
            }
        }
    })()
    .map_err(|e| located(comp, root.name(), e))
}

/// The instructions of a computation by bare name, for [`defined`]: the table its check made, which
/// holds every instruction and each name once (see [`super::stats::CheckedModule`]), or else one of
/// the instructions with a shape, made in one tight loop whose memory accesses overlap (where a name
/// is given twice, the last wins).
pub(super) enum ByName<'t> {
    Checked(&'t NameTable),
    Made(NameTable),
}

impl<'t> ByName<'t> {
    /// The table of computation `ci` (`comp`) in `names`, where it holds each of its instructions.
    pub(super) fn checked(
        names: Option<&'t [Option<NameTable>]>,
        ci: usize,
        comp: &Computation<'_>,
    ) -> Option<ByName<'t>> {
        names
            .and_then(|n| n.get(ci))
            .and_then(Option::as_ref)
            .filter(|t| t.len() == comp.instructions.len())
            .map(ByName::Checked)
    }

    /// [`ByName::checked`], else a table made now.
    pub(super) fn of(
        names: Option<&'t [Option<NameTable>]>,
        ci: usize,
        comp: &Computation<'_>,
    ) -> Result<ByName<'t>> {
        match ByName::checked(names, ci, comp) {
            Some(t) => Ok(t),
            None => NameTable::of(&comp.instructions, |i| i.has_shape()).map(ByName::Made),
        }
    }

    pub(super) fn table(&self) -> &NameTable {
        match self {
            ByName::Checked(t) => t,
            ByName::Made(t) => t,
        }
    }

    /// Whether each name is in the computation once (the table holds every instruction).
    pub(super) fn unique(&self) -> bool {
        matches!(self, ByName::Checked(_))
    }
}

/// The position of the last instruction at or before `k` of `insts` with a shape and the bare name
/// `name` (`table` holds the instructions by name), as a map filled in module order up to `k` finds it.
pub(super) fn defined(
    insts: &[Instruction<'_>],
    table: &ByName<'_>,
    k: usize,
    name: &str,
) -> Option<usize> {
    let named = |j: usize| {
        let i = &insts[j];
        // The lengths and last bytes first (names mostly differ there: `%add.17`, `%add.23`), which
        // costs no call to compare bytes.
        let own = i.name();
        let own = own.strip_prefix('%').unwrap_or(own);
        own.len() == name.len()
            && own.as_bytes().last() == name.as_bytes().last()
            && own == name
            && i.has_shape()
    };
    // Most operands name one of the last few instructions.
    if let Some(j) = (k.saturating_sub(8)..=k).rev().find(|&j| named(j)) {
        return Some(j);
    }
    match table.table().get(insts, name)? {
        // The last of the name in the computation (a made table holds only those with a shape): the
        // last up to `k` too.
        j if j <= k && insts[j].has_shape() => Some(j),
        // The only one of the name has no shape, or comes after `k`.
        _ if table.unique() => None,
        // One of the name after `k` (a name defined twice or used before it is defined, which the reader
        // refuses): the last before it.
        _ => (0..=k).rev().find(|&j| named(j)),
    }
}

fn located(comp: &Computation<'_>, name: &str, e: XlaError) -> XlaError {
    XlaError::Unsupported(format!("in {} instruction {name}: {e}", comp.name))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::hlo::parse_module;
    use crate::hlo::synth::{synth_module, synth_one_computation};

    /// Counting values per shape and multiplying out gives the report adding each value does.
    #[test]
    fn counting_per_shape_gives_the_report_of_adding_each_value() {
        for seed in 1..4 {
            for text in [synth_module(3000, seed), synth_one_computation(3000, seed)] {
                let m = parse_module(&text).unwrap();
                for top in [0, 3, 10] {
                    let counted = walk(&m, None, top, None, Adding::PerShape).unwrap();
                    let each = walk(&m, None, top, None, Adding::EachValue).unwrap();
                    assert!(!counted.relayouts.is_empty());
                    assert_eq!(counted, each, "seed {seed}, top {top}");
                }
            }
        }
    }

    /// A sum past 2^63 before a value that cannot be sized: the report gives the overflow, as a reading
    /// in module order meets it, though counting per shape meets the other fault first.
    #[test]
    fn the_first_fault_in_module_order_is_reported() {
        let text = "ENTRY %e {\n  \
            %a = s8[4611686018427387904]{0} parameter(0)\n  \
            %b = s8[4611686018427387904]{0} parameter(1)\n  \
            ROOT %c = f32[4611686018427387904]{0} parameter(2)\n}\n";
        let m = parse_module(text).unwrap();
        let each = walk(&m, None, 3, None, Adding::EachValue)
            .unwrap_err()
            .to_string();
        let counted = walk(&m, None, 3, None, Adding::PerShape)
            .unwrap_err()
            .to_string();
        assert!(each.contains("exceed 2^63"), "{each}");
        assert_ne!(counted, each);
        let got = crate::hlo::stats::report(&m, 3).unwrap_err().to_string();
        assert_eq!(got, each);
    }

    /// An asynchronous copy into `S(1)` is one relayout, at its `copy-start`, as the synchronous `copy`
    /// of the same array is (its `copy-done` only hands the buffer on); a `copy-start` that changes
    /// nothing is none; walked in chunks, the same list.
    #[test]
    fn an_async_copy_is_one_relayout_at_its_start() {
        let text = "HloModule m\n\nENTRY %e {\n  \
            %p = f32[3,5]{1,0:T(8,128)} parameter(0)\n  \
            %cs = (f32[3,5]{1,0:T(8,128)S(1)}, f32[3,5]{1,0:T(8,128)}, u32[]) copy-start(%p)\n  \
            %cd = f32[3,5]{1,0:T(8,128)S(1)} copy-done(%cs)\n  \
            %c = f32[3,5]{1,0:T(8,128)S(1)} copy(%p)\n  \
            %ks = (f32[3,5]{1,0:T(8,128)}, f32[3,5]{1,0:T(8,128)}, u32[]) copy-start(%p)\n  \
            %kd = f32[3,5]{1,0:T(8,128)} copy-done(%ks)\n  \
            %ls = (f32[3,5]{0,1:T(8,128)S(1)}, f32[3,5]{1,0:T(8,128)}, u32[]) copy-start(%p)\n  \
            %ld = f32[3,5]{0,1:T(8,128)S(1)} copy-done(%ls)\n  \
            ROOT %t = (f32[3,5]{1,0:T(8,128)S(1)}, f32[3,5]{1,0:T(8,128)S(1)}, f32[3,5]{1,0:T(8,128)}, f32[3,5]{0,1:T(8,128)S(1)}) tuple(%cd, %c, %kd, %ld)\n}\n";
        let m = parse_module(text).unwrap();
        let r = crate::hlo::stats::report(&m, 3).unwrap();
        let seen: Vec<(&str, &str, &str, &str, &str, i64)> = r
            .relayouts
            .iter()
            .map(|x| (x.instruction, x.operand, x.from, x.to, x.kind, x.bytes))
            .collect();
        let (tiled, s1) = ("f32[3,5]{1,0:T(8,128)}", "f32[3,5]{1,0:T(8,128)S(1)}");
        assert_eq!(
            seen,
            [
                ("%cs", "p", tiled, s1, "memory space", 4096),
                ("%c", "p", tiled, s1, "memory space", 4096),
                (
                    "%ls",
                    "p",
                    tiled,
                    "f32[3,5]{0,1:T(8,128)S(1)}",
                    "layout",
                    4096
                ),
            ]
        );
        for chunk in 1..5 {
            let par = crate::hlo::stats_par::walk_parallel(&m, None, 3, None, chunk).unwrap();
            assert_eq!(par, r, "chunks of {chunk}");
        }
    }

    /// An operand names the last instruction of its name written before it, even where the same name
    /// is written again later (a module the reader refuses, put together by hand).
    #[test]
    fn an_operand_names_the_last_instruction_of_its_name_before_it() {
        let first =
            "ENTRY %e {\n  %a = f32[8]{0} parameter(0)\n  ROOT %c = f32[8]{0:S(1)} copy(%a)\n}\n";
        let again = "ENTRY %f {\n  ROOT %a = f32[8]{0:S(1)} parameter(0)\n}\n";
        let mut m = parse_module(first).unwrap();
        let other = parse_module(again).unwrap();
        m.computations[0]
            .instructions
            .push(other.computations[0].instructions[0]);
        let r = crate::hlo::stats::report(&m, 3).unwrap();
        let seen: Vec<(&str, &str, &str, &str)> = r
            .relayouts
            .iter()
            .map(|x| (x.instruction, x.operand, x.from, x.kind))
            .collect();
        assert_eq!(seen, [("%c", "a", "f32[8]{0}", "memory space")]);
    }
}
