//! What a module's layouts cost: bytes per memory space, padding, the worst tensors, and every place
//! data moves between layouts.
//!
//! Two kinds of total: what the module *materializes* (the values of the entry and of the computations it
//! runs as programs, each counted once; see [`super::calls`]) — the memory footprint people act on — and
//! the sum over *every* instruction of every computation, fusion bodies and their parameters included,
//! which only bounds what the text describes.

use std::collections::{BTreeMap, HashMap};

use super::{Computation, Module};
use crate::error::{Result, XlaError};
use crate::shape::Shape;
use crate::size::sizes;

/// Opcodes whose result only aliases other values (counting them would count bytes twice).
const ALIASING: [&str; 3] = ["tuple", "get-tuple-element", "bitcast"];

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
pub struct Relayout {
    /// The computation.
    pub computation: String,
    /// The instruction.
    pub instruction: String,
    /// Its opcode.
    pub opcode: String,
    /// The operand whose layout differs.
    pub operand: String,
    /// The operand's shape.
    pub from: String,
    /// The result's shape.
    pub to: String,
    /// Physical bytes written.
    pub bytes: i64,
    /// `"layout"` when the order, tiles or packing differ; `"memory space"` when only `S(n)` does;
    /// `"transpose"` for transposes.
    pub kind: &'static str,
}

/// The whole report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
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
    pub relayouts: Vec<Relayout>,
    /// Totals per computation, in module order (every instruction but aliasing ones).
    pub computations: Vec<(String, Totals)>,
    /// Per computation, in module order: whether its values are materialized.
    pub materialized_computations: Vec<bool>,
    /// For a module with `sharding=` attributes: the materialized bytes per device (see
    /// [`super::per_device`]).
    pub per_device: Option<super::per_device::PerDevice>,
}

struct Info {
    /// Per array leaf: (shape text, memory space, sizes).
    leaves: Vec<(String, i64, Totals)>,
    shape: Shape,
}

fn info_of(text: &str) -> Result<Info> {
    let shape = crate::text::parse_shape(text)?;
    let mut leaves = Vec::new();
    for (_, a) in shape.arrays() {
        if a.dims.iter().any(|d| d.bound().is_none()) {
            continue; // unbounded dynamic: no size
        }
        let z = sizes(a)?;
        leaves.push((
            a.to_string(),
            a.layout.memory_space,
            Totals {
                arrays: 1,
                logical_bytes: z.logical_bytes,
                xla_bytes: z.xla_array_size_bytes,
                physical_bytes: z.physical_bytes,
            },
        ));
    }
    Ok(Info { leaves, shape })
}

/// A padded leaf in the running for the top list: (padding, reverse order, index into the kept list,
/// leaf, unused).
type Candidate = (i64, usize, usize, usize, usize);

/// The cost report of a module (see [`Report`]); `top` is how many wasteful tensors to keep.
pub fn report(module: &Module<'_>, top: usize) -> Result<Report> {
    let mut cache: HashMap<&str, std::rc::Rc<Info>> = HashMap::new();
    let mut r = Report {
        instructions: module.instruction_count(),
        ..Report::default()
    };
    // The `top` most padded leaves so far, least padded first: (padding, order, computation, instruction,
    // shape), kept as borrowed text until the end so that a module of many padded tensors costs no
    // allocation per tensor.
    let mut waste: std::collections::BinaryHeap<std::cmp::Reverse<Candidate>> =
        std::collections::BinaryHeap::with_capacity(top.saturating_add(1).min(1 << 16));
    let mut seen = 0usize;
    let mut kept: Vec<(&str, &str, std::rc::Rc<Info>, Totals)> = Vec::new();
    let flags = super::calls::materialized(module);
    let mut tally = super::per_device::Tally::default();
    let entry = super::calls::entry_index(module);
    for (ci, comp) in module.computations.iter().enumerate() {
        let is_entry = entry == Some(ci);
        let mut ctotal = Totals::default();
        let mut by_name: HashMap<&str, std::rc::Rc<Info>> =
            HashMap::with_capacity(comp.instructions.len());
        for inst in &comp.instructions {
            if inst.shape_text.is_empty() {
                continue;
            }
            let info = match cache.get(inst.shape_text) {
                Some(i) => i.clone(),
                None => {
                    let i = std::rc::Rc::new(
                        info_of(inst.shape_text).map_err(|e| located(comp, inst.name, e))?,
                    );
                    cache.insert(inst.shape_text, i.clone());
                    i
                }
            };
            by_name.insert(inst.bare_name(), info.clone());
            if !ALIASING.contains(&inst.opcode) {
                let held = flags[ci] && (is_entry || inst.opcode != "parameter");

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
                            kept.push((comp.name, inst.name, info.clone(), *t));
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
                    tally
                        .add(inst.shape_text, &info.shape, inst.attribute("sharding"))
                        .map_err(|e| located(comp, inst.name, e))?;
                }
            }
            // Relayouts: an array operand with the result's dimensions but another layout, or a transpose.
            let Shape::Array(result) = &info.shape else {
                continue;
            };
            for op in inst.operand_names() {
                let Some(op_info) = by_name.get(op) else {
                    continue;
                };
                let Shape::Array(src) = &op_info.shape else {
                    continue;
                };
                let kind = if inst.opcode == "transpose" {
                    Some("transpose")
                } else if src.dims != result.dims
                    || src.element_type != result.element_type
                    || src.layout == result.layout
                {
                    None
                } else {
                    let mut same_space = src.layout.clone();
                    same_space.memory_space = result.layout.memory_space;
                    Some(if same_space == result.layout {
                        "memory space"
                    } else {
                        "layout"
                    })
                };
                if let Some(kind) = kind {
                    r.relayouts.push(Relayout {
                        computation: comp.name.to_string(),
                        instruction: inst.name.to_string(),
                        opcode: inst.opcode.to_string(),
                        operand: op.to_string(),
                        from: src.to_string(),
                        to: result.to_string(),
                        bytes: info.leaves.first().map_or(0, |l| l.2.physical_bytes),
                        kind,
                    });
                    break; // one entry per instruction
                }
            }
        }
        r.total.add(&ctotal)?;
        r.computations.push((comp.name.to_string(), ctotal));
    }
    r.materialized_computations = flags;
    let partitions = module
        .attribute("num_partitions")
        .and_then(|n| n.trim().parse::<usize>().ok());
    r.per_device = tally.finish(partitions);
    // Most padded first; among equals, the first written.
    let mut best: Vec<(i64, usize, usize, usize)> = waste
        .into_iter()
        .map(|w| (w.0 .0, w.0 .1, w.0 .2, w.0 .3))
        .collect();
    best.sort_by(|a, b| b.cmp(a));
    r.top_waste = best
        .into_iter()
        .map(|(_, _, k, leaf)| {
            let (computation, instruction, info, totals) = &kept[k];
            Waste {
                computation: computation.to_string(),
                instruction: instruction.to_string(),
                shape: info.leaves[leaf].0.clone(),
                totals: *totals,
            }
        })
        .collect();
    Ok(r)
}

fn located(comp: &Computation<'_>, name: &str, e: XlaError) -> XlaError {
    XlaError::Unsupported(format!("in {} instruction {name}: {e}", comp.name))
}
