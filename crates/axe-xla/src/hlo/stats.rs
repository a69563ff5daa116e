//! What a module's layouts cost: bytes per memory space, padding, the worst tensors, and every place
//! data moves between layouts.
//!
//! Two kinds of total: what the module *materializes* (the values of the entry and of the computations it
//! runs as programs, each counted once; see [`super::calls`]) — a sum with no liveness and no buffer
//! reuse, so an upper bound on the memory held at once, not XLA's peak — and the sum over *every*
//! instruction of every computation, fusion bodies and their parameters included, which only bounds what
//! the text describes.

use std::collections::BTreeMap;

use super::names::NameTable;
use super::partitioned::ShapeReading;
pub use super::relayouts::Relayouts;
use super::stats_walk::{walk, Adding};
use super::Module;
use crate::error::{Result, XlaError};

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
    pub(crate) fn add(&mut self, o: &Totals) -> Result<()> {
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

    /// `self` added up `n` times; a product past `i64::MAX` (or `u64::MAX` arrays) is an error.
    pub(crate) fn times(&self, n: u64) -> Result<Totals> {
        let overflow =
            || XlaError::Overflow("adding up the module's bytes (they exceed 2^63)".to_string());
        let k = i64::try_from(n).map_err(|_| overflow())?;
        let bytes = |b: i64| b.checked_mul(k).ok_or_else(overflow);
        Ok(Totals {
            arrays: self.arrays.checked_mul(n).ok_or_else(overflow)?,
            logical_bytes: bytes(self.logical_bytes)?,
            xla_bytes: bytes(self.xla_bytes)?,
            physical_bytes: bytes(self.physical_bytes)?,
        })
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

/// An instruction whose result holds an operand's elements (one with the same dimensions) at other
/// bytes, or a transpose that is not a bitcast: data moves between layouts there. A `bitcast`, and a
/// copy or transpose whose result is the operand's bytes (the same physical map, see
/// `hlo::moves`), moves nothing and is not one.
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
    /// The operand's shape, printed (held once by the report, however many relayouts name it).
    pub from: &'a str,
    /// The result's shape, printed (held once by the report).
    pub to: &'a str,
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
    /// (while bodies and conditions, conditional branches, calls, async computations), each value once as
    /// XLA's dataflow analysis defines values (see `hlo::stats_values`: no value for a result that
    /// only forwards others, such as tuple, get-tuple-element, bitcast, the async `*-done` ops,
    /// `copy-start{1}`, call, while, conditional, opt-barrier) and without the parameters of called
    /// computations (they are their caller's operands). Fusion bodies and per-element functions (reducers,
    /// comparators) are left out: their values never live in buffers. A sum over the whole program, with
    /// no liveness: an upper bound on what is held at once, not XLA's peak.
    pub materialized: Totals,
    /// The part of [`Report::materialized`] in the entry computation (its parameters included).
    pub entry: Totals,
    /// Every instruction of every computation, fusion bodies and their parameters included (forwarded
    /// values aside): not a memory footprint, since a fusion's values are counted as well as its result.
    pub total: Totals,
    /// The materialized tensors with the most padding, worst first.
    pub top_waste: Vec<Waste>,
    /// Every relayout, in module order.
    pub relayouts: Relayouts<'a>,
    /// Totals per computation, in module order (every value defined there, forwarded ones aside).
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
    /// How many arrays with an unbounded dynamic dimension (`?`) the values held in memory have: they
    /// have no size, and every figure above leaves them out.
    pub unbounded_skipped: u64,
}

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
    report_named(module, None, top, reading)
}

/// A module as [`parse_module`](super::parse_module) reads it, with what checking it found that the
/// cost report needs too: each computation's instructions by name. Reporting on it gives what
/// [`report_with`] gives on the module, sooner.
pub struct CheckedModule<'a> {
    module: Module<'a>,
    names: Vec<Option<NameTable>>,
}

/// Reads `text` as [`parse_module`](super::parse_module) does, keeping what its check found for the
/// cost report.
pub fn parse_checked(text: &str) -> Result<CheckedModule<'_>> {
    let (module, names) = super::reader::parse_module_named(text)?;
    Ok(CheckedModule { module, names })
}

impl<'a> CheckedModule<'a> {
    /// The module.
    pub fn module(&self) -> &Module<'a> {
        &self.module
    }

    /// The module, without the rest.
    pub fn into_module(self) -> Module<'a> {
        self.module
    }

    /// [`report_with`] of the module.
    pub fn report_with(&self, top: usize, reading: Option<ShapeReading>) -> Result<Report<'a>> {
        report_named(&self.module, Some(&self.names), top, reading)
    }
}

/// [`report_with`], with the instructions of each computation by name given (every one of them, each
/// name once, as checking the module found them) or not.
fn report_named<'a>(
    module: &Module<'a>,
    names: Option<&[Option<NameTable>]>,
    top: usize,
    reading: Option<ShapeReading>,
) -> Result<Report<'a>> {
    // Counted per shape first (a large module in chunks on every thread); on any fault, read again value
    // by value, so that the error is the first a reading in module order meets, and says where it is.
    let threads = rayon::current_num_threads();
    let n = module.instruction_count();
    let counted = if threads >= 2 && n >= PARALLEL_INSTRUCTIONS {
        let chunk = (n / threads.saturating_mul(4)).max(CHUNK_INSTRUCTIONS);
        super::stats_par::walk_parallel(module, names, top, reading, chunk)
    } else {
        walk(module, names, top, reading, Adding::PerShape)
    };
    let mut r = counted.or_else(|_| walk(module, names, top, reading, Adding::EachValue))?;
    r.unbounded_skipped = super::stats_shapes::skipped_unbounded(module)?;
    Ok(r)
}

/// From this many instructions on, with two threads or more, the report is worked out in parallel.
const PARALLEL_INSTRUCTIONS: usize = 16_384;

/// The fewest instructions a thread walks at once.
const CHUNK_INSTRUCTIONS: usize = 4096;

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
            %b = f32[4,8]{1,0} transpose(%n), dimensions={1,0}\n  \
            ROOT %t = f32[4,8]{0,1} transpose(%n), dimensions={1,0}\n}\n";
        let r = report(&parse_module(text).unwrap(), 3).unwrap();
        let seen: Vec<(&str, &str, &str, &str, &str)> = r
            .relayouts
            .iter()
            .map(|x| (x.instruction, x.operand, x.from, x.to, x.kind))
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
                ("%t", "n", "f32[8,4]{0,1}", "f32[4,8]{0,1}", "transpose"),
            ]
        );
        assert!(r.relayouts.iter().all(|x| x.bytes == 128));
    }
}
