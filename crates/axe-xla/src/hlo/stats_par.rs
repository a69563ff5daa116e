//! The cost report's pass over a module in parallel (see [`super::stats::report_with`]): the module's
//! instructions, in module order, cut into chunks of a fixed count (a chunk may end inside a
//! computation or hold many), each walked on its own, and the chunks' partial results merged in order.
//!
//! Three passes, each over the chunks in parallel with a merge in module order after it:
//!
//! 1. each chunk parses the distinct shape texts it meets; merged, they number the module's shapes in
//!    the order a walk in module order meets them, and every instruction's shape gets its module-wide
//!    id;
//! 2. the entry's instructions, and those of each computation a chunk boundary cuts, are put into a
//!    name table (one large computation by several threads at once, [`NameTable::of_parallel`]; a
//!    computation within one chunk gets its table from that chunk, freed once walked), unless the
//!    module's check made them ([`super::stats::CheckedModule`]);
//! 3. each chunk counts its values per shape and computation, its sizes per device, its padded
//!    tensors (the most padded it holds) and its relayouts (an operand anywhere before in the
//!    computation, found in the name table); merged, the sums are the module's, the top list the most
//!    padded of the chunks' lists, the relayouts those of the chunks in order.
//!
//! Sums of sizes never shrink, so a sum one reading in module order can add up has no partial sum that
//! overflows; what a chunk finds wrong is wrong for one reading too. On any fault the caller reads the
//! module again in order, value by value, for the first error and its place.

use std::collections::BTreeMap;
use std::ops::Range;

use foldhash::HashMap;
use rayon::prelude::*;

use super::moves::{copy_destination, relayout_kind, transpose_kind};
use super::names::NameTable;
use super::partitioned::{ShapeReading, Signs};
use super::per_device::Tally;
use super::relayouts::{Kind, Record, Relayouts};
use super::stats::{Report, Totals};
use super::stats_shapes::Shapes;
use super::stats_values::{defines, Defines};
use super::stats_walk::{conclude, defined, waste_of, ByName, Counts, Held, TopPadded};
use super::{Instruction, Module};
use crate::error::{overflow, Result};
use crate::shape::Shape;

/// No shape (an instruction without one).
const NONE: u32 = u32::MAX;

/// A padded leaf kept for the top list: padding, its order among the padded leaves walked (in the
/// chunk, then in the module), computation, instruction, shape id, leaf, sizes.
type Padded = (i64, usize, usize, usize, usize, usize, Totals);

/// What one chunk adds to the report.
#[derive(Default)]
struct Part<'a> {
    signs: Signs<'a>,
    tally: Tally<'a>,
    arguments: Tally<'a>,
    /// Per computation the chunk holds instructions of: the sizes of its values there.
    totals: Vec<(usize, Totals)>,
    spaces: BTreeMap<i64, Totals>,
    materialized: Totals,
    entry: Totals,
    /// The chunk's most padded leaves (at most the report's `top`), and how many padded leaves it held.
    padded: Vec<Padded>,
    seen: usize,
    /// The relayouts it holds, their shapes as ids.
    relayouts: Vec<Record<'a>>,
    /// Which shapes (by id) they name.
    named: Vec<bool>,
}

/// The computations of `module` holding instructions `range` (positions in module order, `starts`
/// the position of each computation's first), with the positions within each.
fn spans(
    starts: &[usize],
    range: Range<usize>,
) -> impl Iterator<Item = (usize, Range<usize>)> + '_ {
    // The last computation starting at or before the range's start, empty ones passed over.
    let first = starts
        .partition_point(|&s| s <= range.start)
        .saturating_sub(1);
    (first..starts.len().saturating_sub(1))
        .take_while(move |&ci| starts[ci] < range.end)
        .filter_map(move |ci| {
            let (a, b) = (starts[ci].max(range.start), starts[ci + 1].min(range.end));
            (a < b).then(|| (ci, a - starts[ci]..b - starts[ci]))
        })
}

/// The cost report of `module`, its instructions walked in chunks of `chunk` on the threads of rayon's
/// pool (instructions looked up in `named` as there); equal to [`super::stats_walk::walk`]'s when that
/// succeeds, and an error (maybe not the first in module order, and without its place) when that fails.
pub(crate) fn walk_parallel<'a>(
    module: &Module<'a>,
    named: Option<&[Option<NameTable>]>,
    top: usize,
    reading: Option<ShapeReading>,
    chunk: usize,
) -> Result<Report<'a>> {
    let chunk = chunk.max(1);
    let mut starts = Vec::with_capacity(module.computations.len() + 1);
    let mut n = 0usize;
    for c in &module.computations {
        starts.push(n);
        n = n
            .checked_add(c.instructions.len())
            .ok_or_else(|| overflow("the instructions of a module"))?;
    }
    starts.push(n);
    let inst =
        |ci: usize, k: usize| -> &Instruction<'a> { &module.computations[ci].instructions[k] };

    // 1. Shapes: per chunk its distinct texts, then numbered across the module.
    let mut ids = vec![NONE; n];
    let locals: Vec<Result<_>> = ids
        .par_chunks_mut(chunk)
        .enumerate()
        .map(|(c, slots)| {
            let at = c * chunk;
            let mut shapes = Shapes::default();
            for (ci, ks) in spans(&starts, at..at + slots.len()) {
                for k in ks {
                    let text = inst(ci, k).shape_text();
                    if !text.is_empty() {
                        let id = shapes.id(text)?;
                        slots[starts[ci] + k - at] = u32::try_from(id)
                            .ok()
                            .filter(|&id| id != NONE)
                            .ok_or_else(|| overflow("2^32 - 1 distinct shapes"))?;
                    }
                    // A `copy-start`'s destination too: its relayout's result (see the walk).
                    if let Some(to) = copy_destination(inst(ci, k).opcode(), text) {
                        shapes.id(to)?;
                    }
                }
            }
            Ok(shapes.take())
        })
        .collect();
    let mut shapes = Shapes::default();
    let mut maps = Vec::with_capacity(locals.len());
    for local in locals {
        let map = local?
            .into_iter()
            .map(|(text, info)| {
                u32::try_from(shapes.adopt(text, info))
                    .ok()
                    .filter(|&id| id != NONE)
                    .ok_or_else(|| overflow("2^32 - 1 distinct shapes"))
            })
            .collect::<Result<Vec<u32>>>()?;
        maps.push(map);
    }
    shapes.fill_whole();
    ids.par_chunks_mut(chunk)
        .zip(&maps)
        .for_each(|(slots, map)| {
            for id in slots.iter_mut().filter(|id| **id != NONE) {
                *id = map[*id as usize];
            }
        });
    drop(maps);

    // 2. The name tables of the entry and of the computations a chunk boundary cuts (a chunk makes
    // those of the computations it holds whole, one at a time, as it walks them).
    let keep = |i: &Instruction<'_>| i.has_shape();
    let entry = super::calls::entry_index(module);
    let shared = |ci: usize| {
        let (a, b) = (starts[ci], starts[ci + 1]);
        Some(ci) == entry || (a < b && a / chunk != (b - 1) / chunk)
    };
    let tables: Vec<Option<ByName<'_>>> = module
        .computations
        .par_iter()
        .enumerate()
        .map(|(ci, c)| {
            if !shared(ci) {
                return Ok(None);
            }
            if let Some(checked) = ByName::checked(named, ci, c) {
                return Ok(Some(checked));
            }
            if c.instructions.len() >= 2 * chunk {
                if let Some(t) = NameTable::of_parallel(&c.instructions, keep, chunk)? {
                    return Ok(Some(ByName::Made(t)));
                }
            }
            NameTable::of(&c.instructions, keep).map(|t| Some(ByName::Made(t)))
        })
        .collect::<Result<_>>()?;

    // 3. The walk.
    let flags = super::calls::materialized(module);
    let shapes_ro = &shapes;
    let parts: Vec<Result<Part<'a>>> = (0..n.div_ceil(chunk))
        .into_par_iter()
        .map(|c| {
            let range = c * chunk..((c + 1) * chunk).min(n);
            let mut p = Part::default();
            let mut counts = Counts::with_room(shapes_ro.infos.len());
            let mut waste: TopPadded<Padded> = TopPadded::new(top);
            let mut kinds: HashMap<(u32, u32), Option<Kind>> = HashMap::default();
            let mut transposes: HashMap<(u32, u32, Option<&str>), Option<Kind>> =
                HashMap::default();
            let mut names: Vec<&str> = Vec::new();
            for (ci, ks) in spans(&starts, range) {
                let comp = &module.computations[ci];
                let is_entry = entry == Some(ci);
                let comp_ids = &ids[starts[ci]..starts[ci + 1]];
                let own;
                let table = match &tables[ci] {
                    Some(t) => t,
                    None => {
                        own = ByName::of(named, ci, comp)?;
                        &own
                    }
                };
                // The computation's values in the chunk that are added as they come.
                let mut partial = Totals::default();
                for k in ks {
                    let inst = &comp.instructions[k];
                    p.signs.see(inst);
                    let id = comp_ids[k];
                    if id == NONE {
                        continue;
                    }
                    let id = id as usize;
                    let info = &shapes_ro.infos[id];
                    let def = defines(inst.opcode(), matches!(info.shape, Shape::Tuple(_)), || {
                        inst.attribute("calls").is_some()
                    });
                    if def != Defines::Nothing {
                        let held = flags[ci] && (is_entry || inst.opcode() != "parameter");
                        if def == Defines::All {
                            counts.bump(id, held);
                        } else {
                            // Added as it comes, into the computation's sums and the held ones.
                            let mut sums = Held {
                                spaces: &mut p.spaces,
                                materialized: &mut p.materialized,
                                entry: is_entry.then_some(&mut p.entry),
                            };
                            for (_, space, t) in info.defined_leaves(def) {
                                partial.add(t)?;
                                if held {
                                    sums.add(*space, t)?;
                                }
                            }
                        }
                        if held && top > 0 && info.padded {
                            waste.offer_where(
                                &info.leaves,
                                |k| info.defines_leaf(def, k),
                                |leaf, order, t| (t.padding_bytes(), order, ci, k, id, leaf, *t),
                            );
                        }
                        if held {
                            match (inst.attribute("sharding"), def) {
                                (Some(text), Defines::All) => {
                                    p.tally.add_sharded(inst.shape_text(), &info.shape, text)?
                                }
                                (Some(text), _) => {
                                    p.tally.add_sharded_where(&info.shape, text, |k| {
                                        info.defines_leaf(def, k)
                                    })?
                                }
                                (None, Defines::All) => {
                                    p.tally.add_unannotated(shapes_ro.whole_known(id)?)?
                                }
                                (None, _) => p.tally.add_unannotated(info.defined_bytes(def)?)?,
                            }
                        }
                    }
                    if is_entry && inst.opcode() == "parameter" {
                        match inst.attribute("sharding") {
                            Some(text) => {
                                p.arguments
                                    .add_sharded(inst.shape_text(), &info.shape, text)?
                            }
                            None => p.arguments.add_unannotated(shapes_ro.whole_known(id)?)?,
                        }
                    }
                    // A `copy-start`'s result, for its relayout, is its destination.
                    let id = match copy_destination(inst.opcode(), inst.shape_text()) {
                        Some(to) => shapes_ro.known(to).ok_or_else(|| overflow("a shape"))?,
                        None => id,
                    };
                    let info = &shapes_ro.infos[id];
                    if !matches!(info.shape, Shape::Array(_)) || inst.opcode() == "bitcast" {
                        continue;
                    }
                    let transpose = inst.opcode() == "transpose";
                    if !transpose && !shapes_ro.relayouts_possible(id) {
                        continue;
                    }
                    super::operands::operand_names(inst, &mut names);
                    for &op in &names {
                        let Some(src) =
                            defined(&comp.instructions, table, k, op).map(|j| comp_ids[j])
                        else {
                            continue;
                        };
                        let kind = if transpose {
                            let dimensions = inst.attribute("dimensions");
                            let kind = *transposes
                                .entry((src, id as u32, dimensions))
                                .or_insert_with(|| {
                                    transpose_kind(
                                        &shapes_ro.infos[src as usize].shape,
                                        &info.shape,
                                        dimensions,
                                    )
                                });
                            match kind {
                                Some(kind) => kind,
                                None => continue,
                            }
                        } else if src as usize == id {
                            continue;
                        } else {
                            let kind =
                                *kinds.entry((src, id as u32)).or_insert_with(|| {
                                    match &info.shape {
                                        Shape::Array(result) => relayout_kind(
                                            &shapes_ro.infos[src as usize].shape,
                                            result,
                                        ),
                                        _ => None,
                                    }
                                });
                            match kind {
                                Some(kind) => kind,
                                None => continue,
                            }
                        };
                        // Computation positions fit: their shape ids did.
                        p.relayouts.push(Relayouts::record(
                            ci as u32,
                            (inst.name(), inst.opcode(), op),
                            (src, id as u32),
                            kind,
                        ));
                        if p.named.is_empty() {
                            p.named = vec![false; shapes_ro.infos.len()];
                        }
                        p.named[src as usize] = true;
                        p.named[id] = true;
                        break;
                    }
                }
                // The computation's values in the chunk, multiplied out.
                let mut ctotal = partial;
                let held = Held {
                    spaces: &mut p.spaces,
                    materialized: &mut p.materialized,
                    entry: is_entry.then_some(&mut p.entry),
                };
                counts.multiply_out(&shapes_ro.infos, &mut ctotal, held)?;
                p.totals.push((ci, ctotal));
            }
            p.seen = waste.seen();
            p.padded = waste.into_best();
            Ok(p)
        })
        .collect();

    // The merge, in module order.
    let mut r = Report {
        instructions: n,
        ..Report::default()
    };
    let mut signs = Signs::default();
    let mut tally = Tally::default();
    let mut arguments = Tally::default();
    let mut ctotals = vec![Totals::default(); module.computations.len()];
    let mut padded: Vec<Padded> = Vec::new();
    let mut seen = 0usize;
    let mut found: Vec<Vec<Record<'a>>> = Vec::with_capacity(parts.len());
    let mut named = vec![false; shapes.infos.len()];
    for p in parts {
        let p = p?;
        signs.then(p.signs);
        tally.merge(p.tally)?;
        arguments.merge(p.arguments)?;
        for (ci, t) in p.totals {
            ctotals[ci].add(&t)?;
        }
        for (space, t) in p.spaces {
            r.spaces.entry(space).or_default().add(&t)?;
        }
        r.materialized.add(&p.materialized)?;
        r.entry.add(&p.entry)?;
        padded.extend(p.padded.into_iter().map(|mut w| {
            w.1 += seen;
            w
        }));
        seen += p.seen;
        found.push(p.relayouts);
        for (all, &this) in named.iter_mut().zip(&p.named) {
            *all |= this;
        }
    }
    r.materialized_computations = flags;
    for (c, t) in module.computations.iter().zip(ctotals) {
        r.total.add(&t)?;
        r.computations.push((c.name.to_string(), t));
    }
    // What the walk no longer needs, freed before the relayouts are listed: the shape of every
    // instruction and the name tables (the entry's once the sharding of its result is known).
    let entry_names = entry.filter(|&e| {
        tables[e].as_ref().is_some_and(ByName::unique)
            || ids[starts[e]..starts[e + 1]].iter().all(|&id| id != NONE)
    });
    drop(ids);
    let entry_names = entry_names.and_then(|e| tables.into_iter().nth(e).flatten());
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
    drop(entry_names);
    // The shapes the relayouts name, printed once each (in order of their ids); then each chunk's
    // records point at them, in parallel, and are appended in module order.
    for c in &module.computations {
        r.relayouts.computation(c.name);
    }
    let mut at = vec![u32::MAX; named.len()];
    for (id, _) in named.iter().enumerate().filter(|(_, &n)| n) {
        at[id] = shapes.printed(id, &mut r.relayouts)?;
    }
    found
        .par_iter_mut()
        .for_each(|records| Relayouts::remap(records, &at));
    for records in found {
        r.relayouts.append(records)?;
    }
    // Most padded first; among equals, the first walked.
    padded.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    padded.truncate(top);
    r.top_waste = padded
        .into_iter()
        .map(|(_, _, ci, k, id, leaf, totals)| {
            let i = inst(ci, k);
            waste_of(
                &shapes,
                module.computations[ci].name,
                i.name(),
                id,
                leaf,
                totals,
            )
        })
        .collect();
    Ok(r)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::hlo::parse_module;
    use crate::hlo::stats_walk::{walk, Adding};
    use crate::hlo::synth::{synth_module, synth_one_computation};

    /// The report of `text` in chunks of each of `chunks` instructions, and in one walk with the name
    /// tables its check made: the report of one walk in module order making its own tables when that
    /// succeeds, an error when it fails.
    fn agrees(text: &str, chunks: &[usize], tops: &[usize]) -> usize {
        let Ok((m, named)) = crate::hlo::reader::parse_module_named(text) else {
            return 0;
        };
        assert_eq!(parse_module(text).unwrap(), m);
        for &top in tops {
            let one = walk(&m, None, top, None, Adding::EachValue);
            let checked = walk(&m, Some(&named), top, None, Adding::PerShape);
            match &one {
                Ok(one) => assert_eq!(checked.as_ref().ok(), Some(one), "top {top}"),
                Err(_) => assert!(checked.is_err(), "top {top}"),
            }
            for &chunk in chunks {
                for given in [None, Some(&named[..])] {
                    let par = walk_parallel(&m, given, top, None, chunk);
                    let at = format!("chunk {chunk}, top {top}, tables given {}", given.is_some());
                    match &one {
                        Ok(one) => assert_eq!(par.as_ref().ok(), Some(one), "{at}"),
                        Err(_) => assert!(par.is_err(), "{at}"),
                    }
                }
            }
        }
        1
    }

    #[test]
    fn chunks_give_the_report_of_one_walk() {
        for seed in 1..4 {
            for text in [synth_module(2500, seed), synth_one_computation(2500, seed)] {
                agrees(&text, &[1, 7, 100, 999, 5000], &[0, 1, 3, 10, 1000]);
            }
        }
    }

    /// Every module of the test corpora (JAX and XLA dumps, sharded modules of both readings, modules
    /// the reader refuses), in chunks down to one instruction.
    #[test]
    fn corpus_modules_in_chunks_give_the_report_of_one_walk() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
        let mut dirs = vec![root];
        let mut read = 0;
        while let Some(dir) = dirs.pop() {
            for e in std::fs::read_dir(dir).unwrap() {
                let path = e.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|x| x == "hlo") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    read += agrees(&text, &[1, 2, 5, 64], &[0, 3, 10]);
                }
            }
        }
        assert!(read >= 50, "{read} modules");
    }

    /// A fault: an error in chunks too, and the report gives the first a walk in module order meets.
    #[test]
    fn a_fault_in_any_chunk_is_an_error() {
        let text = "ENTRY %e {\n  \
            %a = s8[4611686018427387904]{0} parameter(0)\n  \
            %b = s8[4611686018427387904]{0} parameter(1)\n  \
            ROOT %c = f32[4611686018427387904]{0} parameter(2)\n}\n";
        let m = parse_module(text).unwrap();
        for chunk in 1..4 {
            assert!(walk_parallel(&m, None, 3, None, chunk).is_err());
        }
        let first = walk(&m, None, 3, None, Adding::EachValue).unwrap_err();
        assert!(first.to_string().contains("exceed 2^63"), "{first}");
    }

    /// Through [`crate::hlo::stats::report`] on two threads, a module large enough to be walked in
    /// chunks: the report of one walk, and with a fault early and another late (in another chunk,
    /// met first there), the early one.
    #[test]
    fn the_report_on_two_threads_is_that_of_one_walk() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let text = synth_one_computation(20_000, 7);
        let m = parse_module(&text).unwrap();
        assert!(m.instruction_count() >= 16_384);
        let one = walk(&m, None, 10, None, Adding::EachValue).unwrap();
        assert_eq!(
            pool.install(|| crate::hlo::stats::report(&m, 10)).unwrap(),
            one
        );
        let mut text = String::from("ENTRY %e {\n");
        for k in 0..20_000 {
            let shape = match k {
                0 | 1 => "s8[4611686018427387904]{0}",
                19_000 => "f32[4611686018427387904]{0}",
                _ => "f32[2]{0}",
            };
            text.push_str(&format!("  %p{k} = {shape} parameter({k})\n"));
        }
        text.push_str("  ROOT %t = f32[2]{0} copy(%p2)\n}\n");
        let m = parse_module(&text).unwrap();
        let first = walk(&m, None, 3, None, Adding::EachValue)
            .unwrap_err()
            .to_string();
        assert!(first.contains("exceed 2^63"), "{first}");
        let chunks = walk_parallel(&m, None, 3, None, 4096)
            .unwrap_err()
            .to_string();
        assert_ne!(chunks, first);
        let got = pool.install(|| crate::hlo::stats::report(&m, 3));
        assert_eq!(got.unwrap_err().to_string(), first);
    }

    /// The spans of a range: each computation it touches, with the positions within it, in order;
    /// empty computations never.
    #[test]
    fn spans_cover_a_range_once() {
        let starts = [0, 3, 3, 4, 10];
        let all: Vec<(usize, usize)> = [(0, 0), (0, 1), (0, 2), (2, 0)]
            .into_iter()
            .chain((0..6).map(|k| (3, k)))
            .collect();
        for a in 0..=10 {
            for b in a..=10 {
                let got: Vec<(usize, usize)> = spans(&starts, a..b)
                    .flat_map(|(ci, ks)| ks.map(move |k| (ci, k)))
                    .collect();
                assert_eq!(got, all[a..b], "{a}..{b}");
            }
        }
    }
}
