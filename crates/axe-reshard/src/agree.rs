//! Agreement before any data moves: every rank checks that every other rank was given the same inputs.
//!
//! Ranks started with different arguments would post sends and receives of different sizes, which MPI
//! turns into truncation errors or worse. So before a run moves a byte, each rank sends every other rank
//! one message of fixed size ([`AGREE_BYTES`]): whether it could set up at all, and a 64-bit hash of each
//! of its named inputs (the mesh, the shardings, the shape, the element type, the layouts, the plan, ...).
//! A fixed size means a disagreement can never truncate or overrun the agreement itself; every rank sees
//! every rank's record, so every rank reaches the same verdict and can say which input differs where.

use std::fmt::{self, Write as _};

use axe_shard::{Mesh, Plan};

use crate::comm::Communicator;
use crate::exec_error::{ExecError, ExecResult};
use crate::placement::Placement;

/// The most named inputs a record holds; later ones are folded into the last.
pub const MAX_INPUTS: usize = 15;

/// Bytes of one rank's record: a status word, then [`MAX_INPUTS`] hashes (8 bytes each, little-endian).
pub const AGREE_BYTES: usize = 8 * (MAX_INPUTS + 1);

/// The most ranks an error names one by one (the others are counted).
const NAMED_RANKS: usize = 4;

/// The status word of a rank that set up (the low bits carry a hash of the inputs' names, so ranks
/// running different builds or kinds of run disagree too).
const READY: u64 = 1 << 63;

/// A stable 64-bit hash (FNV-1a) of text written into it: the same on every rank and every build.
#[derive(Clone, Copy, Debug)]
pub struct InputHash(u64);

impl Default for InputHash {
    fn default() -> Self {
        InputHash(0xcbf2_9ce4_8422_2325)
    }
}

impl InputHash {
    /// Adds bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// The hash so far.
    pub fn value(&self) -> u64 {
        self.0
    }

    /// The hash of a value's `Debug` text, written straight into the hash (nothing is allocated).
    pub fn of_debug<T: fmt::Debug + ?Sized>(v: &T) -> u64 {
        let mut h = InputHash::default();
        // Writing into the hash cannot fail.
        let _ = write!(h, "{v:?}");
        h.value()
    }
}

impl fmt::Write for InputHash {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.bytes(s.as_bytes());
        Ok(())
    }
}

/// Checks, collectively, that every rank holds the same inputs; call it on every rank before anything
/// else is exchanged.
///
/// `inputs` is this rank's named inputs, each with its hash (see [`InputHash`]), in the same order on every
/// rank; `None` when this rank could not set up the run (it then reports its own error; the others are
/// told that it failed). Law: returns `Ok(())` on every rank exactly when every rank passed `Some` with
/// equal names and hashes; otherwise every rank returns an error, the same on every rank but the ones
/// that passed `None`, naming the ranks that differ from rank 0 (or failed) and which inputs differ.
/// One fixed-size all-gather of [`AGREE_BYTES`] per rank, whatever the inputs.
pub fn agree<C: Communicator + ?Sized>(comm: &C, inputs: Option<&[(&str, u64)]>) -> ExecResult<()> {
    let mine = record(inputs);
    let n = comm.size();
    let total = AGREE_BYTES
        .checked_mul(n)
        .ok_or_else(|| ExecError::Input(format!("{n} ranks cannot agree in memory")))?;
    let mut all = vec![0u8; total];
    comm.all_gather(&mine, &mut all)?;
    let records: Vec<Vec<u64>> = all.chunks_exact(AGREE_BYTES).map(words).collect();
    let failed: Vec<usize> = (0..n).filter(|&r| records[r][0] & READY == 0).collect();
    if !failed.is_empty() {
        return Err(ExecError::Disagree(format!(
            "{} could not set up the run (each reports why); no data was moved",
            ranks_text(&failed)
        )));
    }
    let names: Vec<&str> = inputs.unwrap_or_default().iter().map(|(n, _)| *n).collect();
    let mut differ: Vec<(usize, Vec<&str>)> = Vec::new();
    for (r, rec) in records.iter().enumerate().skip(1) {
        if rec[0] != records[0][0] {
            differ.push((r, vec!["the kind of run (a different axe or command)"]));
            continue;
        }
        let which: Vec<&str> = (1..=MAX_INPUTS)
            .filter(|&i| rec[i] != records[0][i])
            .map(|i| names.get(i - 1).copied().unwrap_or("the inputs"))
            .collect();
        if !which.is_empty() {
            differ.push((r, which));
        }
    }
    if differ.is_empty() {
        return Ok(());
    }
    let mut text = String::from("the ranks were started with different arguments: ");
    for (k, (r, which)) in differ.iter().take(NAMED_RANKS).enumerate() {
        if k > 0 {
            text.push_str("; ");
        }
        let _ = write!(text, "rank {r} differs from rank 0 in {}", which.join(", "));
    }
    if differ.len() > NAMED_RANKS {
        let _ = write!(text, "; and {} more ranks", differ.len() - NAMED_RANKS);
    }
    text.push_str(" (give every rank the same arguments); no data was moved");
    Err(ExecError::Disagree(text))
}

/// This rank's record: the status word, then the hashes (inputs past the last slot folded into it).
fn record(inputs: Option<&[(&str, u64)]>) -> [u8; AGREE_BYTES] {
    let mut out = [0u8; AGREE_BYTES];
    let Some(inputs) = inputs else {
        return out;
    };
    let mut kinds = InputHash::default();
    let mut slots = [0u64; MAX_INPUTS];
    for (i, (name, h)) in inputs.iter().enumerate() {
        kinds.bytes(name.as_bytes());
        kinds.bytes(&[0]);
        let s = i.min(MAX_INPUTS - 1);
        slots[s] = if i < MAX_INPUTS {
            *h
        } else {
            slots[s].rotate_left(5) ^ h
        };
    }
    kinds.bytes(&(inputs.len() as u64).to_le_bytes());
    let status = READY | (kinds.value() >> 1);
    out[..8].copy_from_slice(&status.to_le_bytes());
    for (i, s) in slots.iter().enumerate() {
        out[8 * (i + 1)..8 * (i + 2)].copy_from_slice(&s.to_le_bytes());
    }
    out
}

fn words(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

/// "rank 3", "ranks 1, 2 and 5", "ranks 1, 2, 3, 4 and 7 more".
fn ranks_text(r: &[usize]) -> String {
    match r {
        [one] => format!("rank {one}"),
        _ if r.len() > NAMED_RANKS + 1 => {
            let shown: Vec<String> = r[..NAMED_RANKS].iter().map(|x| x.to_string()).collect();
            format!(
                "ranks {} and {} more",
                shown.join(", "),
                r.len() - NAMED_RANKS
            )
        }
        _ => {
            let shown: Vec<String> = r[..r.len() - 1].iter().map(|x| x.to_string()).collect();
            format!("ranks {} and {}", shown.join(", "), r[r.len() - 1])
        }
    }
}

/// The named inputs of a reshard, hashed for [`agree`]: the mesh, the shape, the element type, each
/// sharding, each memory layout and the plan.
pub fn run_inputs(
    mesh: &Mesh,
    plan: &Plan,
    src: &Placement,
    dst: &Placement,
) -> Vec<(&'static str, u64)> {
    let h = |v: &dyn fmt::Debug| InputHash::of_debug(v);
    vec![
        ("the mesh", h(mesh)),
        ("the shape", h(&src.sharding.dims())),
        ("the element type", h(&(src.dtype, dst.dtype))),
        ("the source sharding", h(&src.sharding)),
        ("the destination sharding", h(&dst.sharding)),
        ("the source layout", h(&src.layout)),
        ("the destination layout", h(&dst.layout)),
        ("the plan", h(plan)),
    ]
}
