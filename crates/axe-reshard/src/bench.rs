//! Reshard throughput against the communicator's own collectives of the same bytes, on any backend.
//!
//! Each case reshards an f32 array on a one-axis mesh of all ranks (a two-axis one for the
//! permutation), row-major on every device except where the case says it changes the layout too and times, round by round in the same run, the reshard and the raw operation that moves
//! the same bytes between the same ranks without packing: `all_to_all` for S0→S1 and Partial→S0,
//! `all_gather` for S0→replicated, a point-to-point `exchange` of whole shards for the permutation. A
//! round is a barrier, the operation and a barrier; each side's time is the median of its rounds, the
//! slowest rank's; `ratio` is raw time over reshard time (1.0: as fast as the raw collective).

use std::time::Instant;

use axe_shard::{AxisUse, Mesh, Plan, ReduceOp, Sharding};
use axe_xla::PrimitiveType;

use crate::comm::Communicator;
use crate::exec::reshard;
use crate::exec_error::ExecResult;
use crate::placement::{MemoryLayout, Placement};

/// One measured case.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchCase {
    /// The transition (`S0->S1 all-to-all`, ...).
    pub case: String,
    /// The array's dims (f32).
    pub dims: Vec<u64>,
    /// Bytes the plan sends over the network, all ranks together.
    pub bytes: u64,
    /// Median seconds of one reshard (the slowest rank).
    pub reshard_s: f64,
    /// Median seconds of the raw operation moving the same bytes (the slowest rank).
    pub raw_s: f64,
    /// `raw_s / reshard_s`.
    pub ratio: f64,
}

/// The raw operation a case is compared with.
enum Raw {
    AllToAll,
    AllGather,
    /// Whole source shards sent point to point along the plan's pairs.
    Exchange,
}

/// A planner: the plan from one sharding to another on a mesh, for elements of the given bytes.
pub type Planner<'a> = dyn Fn(&Mesh, &Sharding, &Sharding, u64) -> ExecResult<Plan> + Sync + 'a;

/// The planner of `axe_shard::plan` under its default cost model.
pub fn default_planner(mesh: &Mesh, src: &Sharding, dst: &Sharding, elem: u64) -> ExecResult<Plan> {
    Ok(axe_shard::plan(
        mesh,
        src,
        dst,
        elem,
        &axe_shard::CostModel::default(),
    )?)
}

/// Measures every case on `comm`'s ranks (collective: every rank calls it alike and gets the same
/// figures): shards of about `shard_bytes` bytes per device, `rounds` timed rounds each (at least 1).
pub fn bench_reshard<C: Communicator + ?Sized>(
    comm: &C,
    plan: &Planner<'_>,
    shard_bytes: u64,
    rounds: usize,
) -> ExecResult<Vec<BenchCase>> {
    let n = comm.size() as u64;
    let rounds = rounds.max(1);
    // A square f32 array of side a multiple of 128n (whole 8×128 tiles in every shard) whose shards hold
    // about shard_bytes.
    let unit = 128 * n;
    let side = (((shard_bytes / 4).saturating_mul(n)) as f64).sqrt() as u64;
    let side = (side / unit).max(1) * unit;
    let dims = vec![side, side];
    let line = Mesh::new(&[("x", n)])?;
    let s0 = Sharding::new(&line, dims.clone(), vec![vec![0], vec![]], &[])?;
    let s1 = Sharding::new(&line, dims.clone(), vec![vec![], vec![0]], &[])?;
    let rep = Sharding::replicated(&line, dims.clone());
    let partial = Sharding::new(
        &line,
        dims.clone(),
        vec![vec![], vec![]],
        &[(0, AxisUse::Partial(ReduceOp::Sum))],
    )?;
    let mut cases = vec![
        (
            "S0->S1 all-to-all",
            line.clone(),
            s0.clone(),
            s1.clone(),
            Raw::AllToAll,
            false,
        ),
        (
            "S0->S1 T(8,128)->row-major all-to-all",
            line.clone(),
            s0.clone(),
            s1,
            Raw::AllToAll,
            true,
        ),
        (
            "S0->R all-gather",
            line.clone(),
            s0,
            rep,
            Raw::AllGather,
            false,
        ),
        (
            "P->S0 reduce-scatter",
            line.clone(),
            partial,
            Sharding::new(&line, dims.clone(), vec![vec![0], vec![]], &[])?,
            Raw::AllToAll,
            false,
        ),
    ];
    if n >= 4 && n.is_multiple_of(2) {
        let grid = Mesh::new(&[("a", 2), ("b", n / 2)])?;
        let ab = Sharding::new(&grid, dims.clone(), vec![vec![0, 1], vec![]], &[])?;
        let ba = Sharding::new(&grid, dims.clone(), vec![vec![1, 0], vec![]], &[])?;
        cases.push((
            "S(ab)->S(ba) permutation",
            grid,
            ab,
            ba,
            Raw::Exchange,
            false,
        ));
    } else if n >= 2 {
        let a = Sharding::maximal(&line, dims.clone(), 0)?;
        let b = Sharding::maximal(&line, dims.clone(), 1)?;
        cases.push((
            "maximal 0->1 permutation",
            line.clone(),
            a,
            b,
            Raw::Exchange,
            false,
        ));
    }
    let mut out = Vec::new();
    for (name, mesh, src, dst, raw, tiled) in cases {
        let p = plan(&mesh, &src, &dst, 4)?;
        let layout = if tiled {
            MemoryLayout::parse("{1,0:T(8,128)}", 2)?
        } else {
            MemoryLayout::RowMajor
        };
        let src = Placement::new(src, layout, PrimitiveType::F32)?;
        let dst = Placement::new(dst, MemoryLayout::RowMajor, PrimitiveType::F32)?;
        let me = comm.rank() as u64;
        let src_buf = pattern(src.buffer(&mesh, me)?.bytes()?);
        let mut dst_buf = vec![0u8; dst.buffer(&mesh, me)?.bytes()?];
        let shard = src_buf.len();
        let (raw_send, mut raw_recv) = match raw {
            Raw::AllToAll => (
                pattern(shard - shard % n as usize),
                vec![0u8; shard - shard % n as usize],
            ),
            Raw::AllGather => (pattern(shard), vec![0u8; shard * n as usize]),
            Raw::Exchange => (pattern(shard), Vec::new()),
        };
        // The permutation's pairs: who sends its whole shard to whom, as the plan says.
        let sends: Vec<(usize, usize)> = p
            .transfers
            .iter()
            .filter(|t| t.from == me)
            .map(|t| (t.to as usize, (t.bytes as usize).min(raw_send.len())))
            .collect();
        let recvs: Vec<(usize, usize)> = p
            .transfers
            .iter()
            .filter(|t| t.to == me)
            .map(|t| (t.from as usize, t.bytes as usize))
            .collect();
        let mut recv_bufs: Vec<Vec<u8>> = recvs.iter().map(|&(_, b)| vec![0u8; b]).collect();
        let mut times = (Vec::new(), Vec::new());
        // One warm-up round of each, then the timed ones, alternating.
        for round in 0..=rounds {
            comm.barrier()?;
            let t = Instant::now();
            reshard(comm, &mesh, &p, &src, &dst, &src_buf, &mut dst_buf)?;
            comm.barrier()?;
            let a = t.elapsed().as_secs_f64();
            comm.barrier()?;
            let t = Instant::now();
            match raw {
                Raw::AllToAll => comm.all_to_all(&raw_send, &mut raw_recv)?,
                Raw::AllGather => comm.all_gather(&raw_send, &mut raw_recv)?,
                Raw::Exchange => {
                    let s: Vec<(usize, &[u8])> =
                        sends.iter().map(|&(to, b)| (to, &raw_send[..b])).collect();
                    let mut r: Vec<(usize, &mut [u8])> = recvs
                        .iter()
                        .zip(recv_bufs.iter_mut())
                        .map(|(&(from, _), b)| (from, b.as_mut_slice()))
                        .collect();
                    comm.exchange(&s, &mut r)?;
                }
            }
            comm.barrier()?;
            let b = t.elapsed().as_secs_f64();
            if round > 0 {
                times.0.push(a);
                times.1.push(b);
            }
        }
        let reshard_s = slowest(comm, median(&mut times.0))?;
        let raw_s = slowest(comm, median(&mut times.1))?;
        out.push(BenchCase {
            case: name.to_string(),
            dims: dims.clone(),
            bytes: p.bytes,
            reshard_s,
            raw_s,
            ratio: if reshard_s > 0.0 {
                raw_s / reshard_s
            } else {
                0.0
            },
        });
    }
    Ok(out)
}

/// Bytes that are not all zero (so no page is shared or skipped).
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// The largest of every rank's `x`.
fn slowest<C: Communicator + ?Sized>(comm: &C, x: f64) -> ExecResult<f64> {
    let mut all = vec![0u8; 8 * comm.size()];
    comm.all_gather(&x.to_le_bytes(), &mut all)?;
    Ok(all
        .chunks_exact(8)
        .map(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            f64::from_le_bytes(b)
        })
        .fold(0.0, f64::max))
}

/// [`bench_reshard`] on the threads backend with `ranks` threads (waits bounded by `timeout`).
pub fn bench_threads(
    ranks: usize,
    plan: &Planner<'_>,
    shard_bytes: u64,
    rounds: usize,
    timeout: std::time::Duration,
) -> ExecResult<Vec<BenchCase>> {
    crate::verify::first_outcome(crate::threads::run_threads(ranks, timeout, |c| {
        bench_reshard(&c, plan, shard_bytes, rounds)
    }))
}
