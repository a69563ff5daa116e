//! What a module's layouts cost: bytes per memory space, padding, the worst tensors, and every place
//! data moves between layouts.
//!
//! Two kinds of total: what the module *materializes* (the values of the entry and of the computations it
//! runs as programs, each counted once; see [`super::calls`]) — the memory footprint people act on — and
//! the sum over *every* instruction of every computation, fusion bodies and their parameters included,
//! which only bounds what the text describes.

use std::collections::BTreeMap;
use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};

use super::partitioned::{ShapeDecision, ShapeReading};
use super::{Computation, Module};
use crate::error::{Result, XlaError};
use crate::primitive::PrimitiveType;
use crate::shape::{ArrayShape, Dims, Shape};
use crate::size::sizes;

/// Bytes of a set of arrays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Number of arrays.
    pub arrays: u64,
    /// Logical bytes (`ByteSizeOf`).
    pub logical_bytes: i64,
    /// XLA's padded `ArraySize`.
    pub xla_bytes: i64,
    /// Exact physical bytes (every tile expanded).
    pub physical_bytes: i64,
}

impl Totals {
    /// Adds `o` into `self`; a sum past `i64::MAX` bytes is an error, never a wrap.
    fn add(&mut self, o: &Totals) -> Result<()> {
        let overflow =
            || XlaError::Overflow("adding up the module's bytes (they exceed 2^63)".to_string());
        self.arrays = self.arrays.checked_add(o.arrays).ok_or_else(overflow)?;
        self.logical_bytes = self
            .logical_bytes
            .checked_add(o.logical_bytes)
            .ok_or_else(overflow)?;
        self.xla_bytes = self
            .xla_bytes
            .checked_add(o.xla_bytes)
            .ok_or_else(overflow)?;
        self.physical_bytes = self
            .physical_bytes
            .checked_add(o.physical_bytes)
            .ok_or_else(overflow)?;
        Ok(())
    }

    /// Physical minus logical bytes.
    pub fn padding_bytes(&self) -> i64 {
        self.physical_bytes - self.logical_bytes
    }

    /// Padding as a percentage of the physical bytes.
    pub fn padding_percent(&self) -> f64 {
        if self.physical_bytes == 0 {
            0.0
        } else {
            100.0 * self.padding_bytes() as f64 / self.physical_bytes as f64
        }
    }
}

/// One tensor and the padding its layout costs.
#[derive(Clone, Debug, PartialEq)]
pub struct Waste {
    /// The computation.
    pub computation: String,
    /// The instruction.
    pub instruction: String,
    /// The array shape (a tuple element for tuple results).
    pub shape: String,
    /// Its sizes.
    pub totals: Totals,
}

/// An instruction whose result layout differs from an operand's (one with the same dimensions), or a
/// transpose: data moves between layouts there.
#[derive(Clone, Debug, PartialEq)]
pub struct Relayout<'a> {
    /// The computation.
    pub computation: &'a str,
    /// The instruction.
    pub instruction: &'a str,
    /// Its opcode.
    pub opcode: &'a str,
    /// The operand whose layout differs.
    pub operand: &'a str,
    /// The operand's shape, printed (shared by every relayout from it).
    pub from: Arc<str>,
    /// The result's shape, printed (shared by every relayout to it).
    pub to: Arc<str>,
    /// Physical bytes written.
    pub bytes: i64,
    /// `"layout"` when the order, tiles or packing differ; `"memory space"` when only `S(n)` does;
    /// `"transpose"` for transposes.
    pub kind: &'static str,
}

/// The whole report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report<'a> {
    /// Instructions read.
    pub instructions: usize,
    /// Materialized totals per memory space `S(n)`.
    pub spaces: BTreeMap<i64, Totals>,
    /// What the module keeps in memory: the values of the entry and of the computations it runs as programs
    /// (while bodies and conditions, conditional branches, calls, async computations), without values that
    /// only alias others (tuple, get-tuple-element, bitcast) and without the parameters of called
    /// computations (they are their caller's operands). Fusion bodies and per-element functions (reducers,
    /// comparators) are left out: their values never live in buffers.
    pub materialized: Totals,
    /// The part of [`Report::materialized`] in the entry computation (its parameters included).
    pub entry: Totals,
    /// Every instruction of every computation, fusion bodies and their parameters included (aliasing ops
    /// aside): not a memory footprint, since a fusion's values are counted as well as its result.
    pub total: Totals,
    /// The materialized tensors with the most padding, worst first.
    pub top_waste: Vec<Waste>,
    /// Every relayout, in module order.
    pub relayouts: Vec<Relayout<'a>>,
    /// Totals per computation, in module order (every instruction but aliasing ones).
    pub computations: Vec<(String, Totals)>,
    /// Per computation, in module order: whether its values are materialized.
    pub materialized_computations: Vec<bool>,
    /// For a module with `sharding=` attributes or `num_partitions` above one: the materialized bytes per
    /// device in the reading of its shapes that applies (see [`super::per_device`]).
    pub per_device: Option<super::per_device::PerDevice>,
    /// The same figures in both readings, global first (empty when `per_device` is `None`).
    pub per_device_readings: Vec<super::per_device::PerDevice>,
    /// Which reading `per_device` follows, and why.
    pub shapes: Option<super::partitioned::ShapeDecision>,
}

/// A distinct shape text, parsed and sized once.
struct Info {
    shape: Shape,
    /// Per array leaf with a size (unbounded dynamic arrays have none): its position among
    /// [`Shape::arrays`], its memory space and its sizes.
    leaves: Vec<(usize, i64, Totals)>,
}

fn info_of(text: &str) -> Result<Info> {
    let shape = crate::text::parse_shape(text)?;
    let mut leaves = Vec::new();
    for (k, (_, a)) in shape.arrays().into_iter().enumerate() {
        if a.dims.iter().any(|d| d.bound().is_none()) {
            continue; // unbounded dynamic: no size
        }
        let z = sizes(a)?;
        leaves.push((
            k,
            a.layout.memory_space,
            Totals {
                arrays: 1,
                logical_bytes: z.logical_bytes,
                xla_bytes: z.xla_array_size_bytes,
                physical_bytes: z.physical_bytes,
            },
        ));
    }
    Ok(Info { shape, leaves })
}

/// Text as a map key, hashed as its bytes alone (a `str` key adds a terminator, hashed separately).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Text<'a>(&'a str);

impl std::hash::Hash for Text<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write(self.0.as_bytes());
    }
}

/// The module's distinct shape texts, each parsed once: a text's id is its position in `infos`.
#[derive(Default)]
struct Shapes<'a> {
    ids: HashMap<Text<'a>, usize>,
    infos: Vec<Info>,
    /// Per id: the array printed, once a relayout names it.
    printed: Vec<Option<Arc<str>>>,
    /// Per id: the bytes a value without `sharding=` holds on every device, once needed.
    whole: Vec<Option<i64>>,
    /// The last text looked up, and its id.
    last: Option<(&'a str, usize)>,
    /// Per id of an array shape: its group, the arrays of its element type and dimensions.
    group_of: Vec<Option<usize>>,
    /// The groups by element type and dimensions.
    groups: HashMap<(PrimitiveType, Dims), usize>,
    /// Per group: the id of its first array, and whether another array of the group has another layout.
    group: Vec<(usize, bool)>,
}

impl<'a> Shapes<'a> {
    /// The id of `text`, parsed and sized the first time it is seen.
    fn id(&mut self, text: &'a str) -> Result<usize> {
        if let Some((last, id)) = self.last {
            if last == text {
                return Ok(id);
            }
        }
        let id = match self.ids.get(&Text(text)) {
            Some(&id) => id,
            None => self.add(text)?,
        };
        self.last = Some((text, id));
        Ok(id)
    }

    fn add(&mut self, text: &'a str) -> Result<usize> {
        let id = self.infos.len();
        let info = info_of(text)?;
        let group = match &info.shape {
            Shape::Array(a) => Some(match self.groups.entry((a.element_type, a.dims.clone())) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    let g = *e.get();
                    let (first, mixed) = &mut self.group[g];
                    if !*mixed {
                        if let Shape::Array(f) = &self.infos[*first].shape {
                            *mixed = f.layout != a.layout;
                        }
                    }
                    g
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    self.group.push((id, false));
                    *e.insert(self.group.len() - 1)
                }
            }),
            _ => None,
        };
        self.infos.push(info);
        self.group_of.push(group);
        self.printed.push(None);
        self.whole.push(None);
        self.ids.insert(Text(text), id);
        Ok(id)
    }

    /// Whether some array seen so far has the dimensions and element type of array shape `id` but
    /// another layout: only then can an operand's layout differ from a result's of shape `id`.
    fn relayouts_possible(&self, id: usize) -> bool {
        self.group_of[id].is_some_and(|g| self.group[g].1)
    }

    /// The array of shape `id` printed (`id` must be an array shape).
    fn printed(&mut self, id: usize) -> Arc<str> {
        let info = &self.infos[id];
        self.printed[id]
            .get_or_insert_with(|| match &info.shape {
                Shape::Array(a) => a.to_string().into(),
                s => s.to_string().into(),
            })
            .clone()
    }

    /// The bytes a value of shape `id` without `sharding=` holds on every device.
    fn whole(&mut self, id: usize) -> Result<i64> {
        if let Some(b) = self.whole[id] {
            return Ok(b);
        }
        let b = super::per_device::whole_bytes(&self.infos[id].shape)?;
        self.whole[id] = Some(b);
        Ok(b)
    }
}

/// Opcodes whose result only aliases other values (counting them would count bytes twice).
fn aliasing(opcode: &str) -> bool {
    matches!(opcode, "tuple" | "get-tuple-element" | "bitcast")
}

/// How data moves from an operand of shape `src` into a result `result` that is not a transpose: `None`
/// unless `src` is an array of the result's dimensions and type in another layout.
fn relayout_kind(src: &Shape, result: &ArrayShape) -> Option<&'static str> {
    let Shape::Array(src) = src else {
        return None;
    };
    if src.dims != result.dims
        || src.element_type != result.element_type
        || src.layout == result.layout
    {
        return None;
    }
    let mut same_space = src.layout.clone();
    same_space.memory_space = result.layout.memory_space;
    Some(if same_space == result.layout {
        "memory space"
    } else {
        "layout"
    })
}

/// A padded leaf in the running for the top list: (padding, reverse order, index into the kept list,
/// leaf, unused).
type Candidate = (i64, usize, usize, usize, usize);

/// The cost report of a module (see [`Report`]); `top` is how many wasteful tensors to keep. Whether
/// its shapes are global or per device is decided from the module ([`super::partitioned::decide`]).
pub fn report<'a>(module: &Module<'a>, top: usize) -> Result<Report<'a>> {
    report_with(module, top, None)
}

/// [`report`], with the reading of the shapes given (`None`: decided from the module).
pub fn report_with<'a>(
    module: &Module<'a>,
    top: usize,
    reading: Option<ShapeReading>,
) -> Result<Report<'a>> {
    let mut shapes = Shapes::default();
    let mut r = Report {
        instructions: module.instruction_count(),
        ..Report::default()
    };
    // The `top` most padded leaves so far, least padded first: (padding, order, computation, instruction,
    // shape), kept as borrowed text and shape ids until the end so that a module of many padded tensors
    // costs no allocation per tensor.
    let mut waste: std::collections::BinaryHeap<std::cmp::Reverse<Candidate>> =
        std::collections::BinaryHeap::with_capacity(top.saturating_add(1).min(1 << 16));
    let mut seen = 0usize;
    let mut kept: Vec<(&str, &str, usize, Totals)> = Vec::new();
    let flags = super::calls::materialized(module);
    let mut tally = super::per_device::Tally::default();
    // The entry's parameters and its result.
    let mut arguments = super::per_device::Tally::default();
    let mut outputs = super::per_device::Tally::default();
    let mut signs = super::partitioned::Signs::default();
    let entry = super::calls::entry_index(module);
    // The kind of relayout from one shape id to another (see `relayout_kind`), decided once per pair.
    let mut kinds: HashMap<(usize, usize), Option<&'static str>> = HashMap::new();
    // The shape id of each instruction of the computation at hand, by bare name (the last of a name).
    let mut by_name: HashMap<Text<'_>, usize> = HashMap::new();
    // The operand names of the instruction at hand.
    let mut names: Vec<&str> = Vec::new();
    for (ci, comp) in module.computations.iter().enumerate() {
        let is_entry = entry == Some(ci);
        let mut ctotal = Totals::default();
        by_name.clear();
        by_name.reserve(comp.instructions.len());
        for inst in &comp.instructions {
            signs.see(inst);
            if inst.shape_text().is_empty() {
                continue;
            }
            let id = shapes
                .id(inst.shape_text())
                .map_err(|e| located(comp, inst.name(), e))?;
            by_name.insert(Text(inst.bare_name()), id);
            let info = &shapes.infos[id];
            if !aliasing(inst.opcode()) {
                let held = flags[ci] && (is_entry || inst.opcode() != "parameter");
                for (leaf, (_, space, t)) in info.leaves.iter().enumerate() {
                    ctotal.add(t)?;
                    if !held {
                        continue;
                    }
                    r.spaces.entry(*space).or_default().add(t)?;
                    r.materialized.add(t)?;
                    if is_entry {
                        r.entry.add(t)?;
                    }
                    let pad = t.padding_bytes();
                    if pad > 0 && top > 0 {
                        let least = waste.peek().map(|w| w.0 .0);
                        if waste.len() < top || least.is_some_and(|l| pad > l) {
                            kept.push((comp.name, inst.name(), id, *t));
                            waste.push(std::cmp::Reverse((
                                pad,
                                usize::MAX - seen,
                                kept.len() - 1,
                                leaf,
                                0,
                            )));
                            if waste.len() > top {
                                waste.pop();
                            }
                        }
                        seen += 1;
                    }
                }
                if held {
                    // Read only where the reader saw a `sharding=`.
                    match inst.attribute("sharding") {
                        Some(text) => tally.add_sharded(inst.shape_text(), &info.shape, text),
                        None => shapes.whole(id).and_then(|b| tally.add_unannotated(b)),
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
            // Relayouts: an array operand with the result's dimensions but another layout, or a transpose.
            let Shape::Array(result) = &shapes.infos[id].shape else {
                continue;
            };
            let transpose = inst.opcode() == "transpose";
            if !transpose && !shapes.relayouts_possible(id) {
                continue; // every array of the result's dimensions and type has its layout
            }
            super::operands::operand_names(inst, &mut names);
            for &op in &names {
                let Some(&src) = by_name.get(&Text(op)) else {
                    continue;
                };
                let kind = if transpose {
                    if !matches!(shapes.infos[src].shape, Shape::Array(_)) {
                        continue;
                    }
                    "transpose"
                } else if src == id {
                    continue; // the same shape: the same layout
                } else {
                    let infos = &shapes.infos;
                    let kind = *kinds
                        .entry((src, id))
                        .or_insert_with(|| relayout_kind(&infos[src].shape, result));
                    match kind {
                        Some(kind) => kind,
                        None => continue,
                    }
                };
                let bytes = shapes.infos[id]
                    .leaves
                    .first()
                    .map_or(0, |l| l.2.physical_bytes);
                r.relayouts.push(Relayout {
                    computation: comp.name,
                    instruction: inst.name(),
                    opcode: inst.opcode(),
                    operand: op,
                    from: shapes.printed(src),
                    to: shapes.printed(id),
                    bytes,
                    kind,
                });
                break; // one entry per instruction
            }
        }
        r.total.add(&ctotal)?;
        r.computations.push((comp.name.to_string(), ctotal));
    }
    r.materialized_computations = flags;
    if let Some(comp) = entry.and_then(|e| module.computations.get(e)) {
        add_output(comp, &mut shapes, &mut outputs)?;
    }
    let partitions = module
        .attribute("num_partitions")
        .and_then(|n| n.trim().parse::<usize>().ok());
    if let Some(readings) = tally.finish(partitions, &arguments, &outputs) {
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
    // Most padded first; among equals, the first written.
    let mut best: Vec<(i64, usize, usize, usize)> = waste
        .into_iter()
        .map(|w| (w.0 .0, w.0 .1, w.0 .2, w.0 .3))
        .collect();
    best.sort_by(|a, b| b.cmp(a));
    r.top_waste = best
        .into_iter()
        .map(|(_, _, k, leaf)| {
            let (computation, instruction, id, totals) = kept[k];
            let shape = &shapes.infos[id].shape;
            let array = shapes.infos[id].leaves[leaf].0;
            Waste {
                computation: computation.to_string(),
                instruction: instruction.to_string(),
                shape: shape.arrays()[array].1.to_string(),
                totals,
            }
        })
        .collect();
    Ok(r)
}

/// Adds the entry's result to `outputs`: its arrays, under its sharding (written, else inferred by
/// [`super::propagate`], else whole on every device), and its tuple index tables.
fn add_output<'a>(
    comp: &Computation<'a>,
    shapes: &mut Shapes<'a>,
    outputs: &mut super::per_device::Tally<'a>,
) -> Result<()> {
    let Some(root) = comp
        .instructions
        .iter()
        .find(|i| i.is_root())
        .or(comp.instructions.last())
    else {
        return Ok(());
    };
    if root.shape_text().is_empty() {
        return Ok(());
    }
    (|| {
        let id = shapes.id(root.shape_text())?;
        let shape = &shapes.infos[id].shape;
        outputs.add_everywhere(super::per_device::tuple_table_bytes(shape)?)?;
        if let Some(text) = root.attribute("sharding") {
            return outputs.add_sharded(root.shape_text(), &shapes.infos[id].shape, text);
        }
        match super::propagate::root_sharding(comp) {
            Some(s) => outputs.add_parsed(&shapes.infos[id].shape, &s),
            None => shapes.whole(id).and_then(|b| outputs.add_unannotated(b)),
        }
    })()
    .map_err(|e| located(comp, root.name(), e))
}

fn located(comp: &Computation<'_>, name: &str, e: XlaError) -> XlaError {
    XlaError::Unsupported(format!("in {} instruction {name}: {e}", comp.name))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::hlo::parse_module;

    #[test]
    fn relayouts_memory_spaces_and_transposes() {
        let text = "HloModule m\n\n\
            ENTRY %e (p: f32[8,4]) -> f32[4,8] {\n  \
            %p = f32[8,4]{1,0} parameter(0)\n  \
            %s = f32[8,4]{1,0:S(1)} copy(%p)\n  \
            %c = f32[8,4]{0,1} copy(f32[8,4]{1,0:S(1)} %s)\n  \
            %n = f32[8,4]{0,1} negate(%c)\n  \
            ROOT %t = f32[4,8]{1,0} transpose(%n), dimensions={1,0}\n}\n";
        let r = report(&parse_module(text).unwrap(), 3).unwrap();
        let seen: Vec<(&str, &str, &str, &str, &str)> = r
            .relayouts
            .iter()
            .map(|x| (x.instruction, x.operand, &*x.from, &*x.to, x.kind))
            .collect();
        assert_eq!(
            seen,
            [
                (
                    "%s",
                    "p",
                    "f32[8,4]{1,0}",
                    "f32[8,4]{1,0:S(1)}",
                    "memory space"
                ),
                ("%c", "s", "f32[8,4]{1,0:S(1)}", "f32[8,4]{0,1}", "layout"),
                ("%t", "n", "f32[8,4]{0,1}", "f32[4,8]{1,0}", "transpose"),
            ]
        );
        assert!(r.relayouts.iter().all(|x| x.bytes == 128));
    }
}
