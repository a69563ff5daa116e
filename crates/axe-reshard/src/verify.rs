//! Verifying a reshard end to end: every source shard filled with a known pattern (a function of the
//! global index), the plan executed, every destination element and padding byte checked.

use std::time::{Duration, Instant};

use axe_shard::{AxisUse, Mesh, Plan, ReduceOp, Sharding};
use axe_xla::PrimitiveType;

use crate::comm::Communicator;
pub(crate) use crate::elements::{check_shard, each_element, slots};
use crate::exec_error::{ExecError, ExecResult};
use crate::placement::{filled, Placement};

/// An exact value of the pattern, before it is written in the element type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Value {
    Float(f64),
    Int(i64),
    /// Raw bytes for types without arithmetic, derived from the element index.
    Raw(u64),
}

/// The element type's family.
pub(crate) fn is_float(t: PrimitiveType) -> bool {
    matches!(
        t,
        PrimitiveType::F32 | PrimitiveType::F64 | PrimitiveType::Bf16 | PrimitiveType::F16
    )
}

pub(crate) fn is_int(t: PrimitiveType) -> bool {
    use PrimitiveType as P;
    matches!(
        t,
        P::S8 | P::S16 | P::S32 | P::S64 | P::U8 | P::U16 | P::U32 | P::U64
    )
}

/// The pattern at global linear index `i`: small integers, exact in every float type (bf16 included).
pub(crate) fn base(t: PrimitiveType, i: u64) -> Value {
    if is_float(t) {
        Value::Float((i % 199) as f64 - 99.0)
    } else if is_int(t) {
        Value::Int((i % 97) as i64 + 8)
    } else {
        Value::Raw(i)
    }
}

/// A small deviation in `-3..=3` for contribution `j` of element `i`.
fn wiggle(i: u64, j: u64) -> i64 {
    ((i.wrapping_mul(3).wrapping_add(j.wrapping_mul(5))) % 7) as i64 - 3
}

fn shift(v: Value, by: i64) -> Value {
    match v {
        Value::Float(x) => Value::Float(x + by as f64),
        Value::Int(x) => Value::Int(x.wrapping_add(by)),
        Value::Raw(x) => Value::Raw(x),
    }
}

/// Contribution `j` of `k` of element `i`, for a source whose partial values are pending `op`:
/// combined with `op` over all `j`, they give the pattern.
fn contribution(t: PrimitiveType, i: u64, j: u64, k: u64, op: Option<ReduceOp>) -> Value {
    split(t, base(t, i), i, j, k, op)
}

/// Part `j` of `k` of the value `b` of element `i` under `op`: combined with `op` over all `j`, the
/// parts give `b` (for `avg` and no op every part is `b`).
pub(crate) fn split(
    t: PrimitiveType,
    b: Value,
    i: u64,
    j: u64,
    k: u64,
    op: Option<ReduceOp>,
) -> Value {
    match op {
        None | Some(ReduceOp::Avg) => b,
        Some(ReduceOp::Sum) if j == 0 => shift(b, -(1..k).map(|j| wiggle(i, j)).sum::<i64>()),
        Some(ReduceOp::Sum) => shift(Value::Int(0), wiggle(i, j)).to(t),
        Some(ReduceOp::Max) if j > 0 => shift(b, -wiggle(i, j).abs()),
        Some(ReduceOp::Min) if j > 0 => shift(b, wiggle(i, j).abs()),
        Some(ReduceOp::Product) if j > 0 => Value::Int(1).to(t),
        Some(_) => b,
    }
}

impl Value {
    /// The same number in the family of `t`.
    pub(crate) fn to(self, t: PrimitiveType) -> Value {
        match self {
            Value::Int(x) if is_float(t) => Value::Float(x as f64),
            v => v,
        }
    }

    /// The element's bytes in type `t`, little-endian (no allocation: this runs once per element).
    pub(crate) fn bytes(self, t: PrimitiveType, w: usize) -> Elem {
        let mut e = Elem {
            b: [0; MAX_ELEM],
            w: w.min(MAX_ELEM),
        };
        let mut put = |src: &[u8]| {
            let n = src.len().min(e.w);
            e.b[..n].copy_from_slice(&src[..n]);
        };
        match self {
            Value::Float(x) => match t {
                PrimitiveType::F64 => put(&x.to_le_bytes()),
                PrimitiveType::Bf16 => put(&crate::reduce::f32_to_bf16(x as f32).to_le_bytes()),
                PrimitiveType::F16 => put(&crate::reduce::f32_to_f16(x as f32).to_le_bytes()),
                _ => put(&(x as f32).to_le_bytes()),
            },
            Value::Int(x) => put(&x.to_le_bytes()),
            Value::Raw(i) => {
                // A type narrower than its byte (pred, s4 unpacked) keeps its bits low, the rest zero.
                let mask = axe_relayout::value_bits(t).map_or(0xff, |b| (1u16 << b) as u8 - 1);
                for (b, slot) in (0u64..).zip(e.b[..e.w].iter_mut()) {
                    *slot = (i.wrapping_mul(31).wrapping_add(b * 17 + 5) % 251) as u8 & mask;
                }
            }
        }
        e
    }
}

/// The widest element the pattern writes (c128).
const MAX_ELEM: usize = 16;

/// An element's bytes: the first `w` of `b`.
#[derive(Clone, Copy)]
pub(crate) struct Elem {
    b: [u8; MAX_ELEM],
    w: usize,
}

impl Elem {
    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.b[..self.w]
    }
}

/// Combines exact values with `op` (`count` values were combined for `avg`).
pub(crate) fn combine(vals: impl IntoIterator<Item = Value>, op: ReduceOp) -> Value {
    let mut it = vals.into_iter();
    let mut count = 1i64;
    let Some(first) = it.next() else {
        return Value::Int(0);
    };
    let r = it.inspect(|_| count += 1).fold(first, |a, b| match (a, b) {
        (Value::Float(a), Value::Float(b)) => Value::Float(match op {
            ReduceOp::Sum | ReduceOp::Avg => a + b,
            ReduceOp::Product => a * b,
            ReduceOp::Max => a.max(b),
            ReduceOp::Min => a.min(b),
        }),
        (Value::Int(a), Value::Int(b)) => Value::Int(match op {
            ReduceOp::Sum | ReduceOp::Avg => a.wrapping_add(b),
            ReduceOp::Product => a.wrapping_mul(b),
            ReduceOp::Max => a.max(b),
            ReduceOp::Min => a.min(b),
        }),
        (a, _) => a,
    });
    match (r, op) {
        (Value::Float(x), ReduceOp::Avg) => Value::Float(x / count as f64),
        (Value::Int(x), ReduceOp::Avg) => Value::Int(x / count),
        (r, _) => r,
    }
}

/// The source's partial mesh axes and their op (one op for all; none without partial axes).
fn partial_axes(s: &Sharding) -> ExecResult<(Vec<usize>, Option<ReduceOp>)> {
    let mut axes = Vec::new();
    let mut op = None;
    for (a, u) in s.axis_use().iter().enumerate() {
        if let AxisUse::Partial(o) = u {
            if op.is_some_and(|p| p != *o) {
                return Err(ExecError::Input(
                    "partial mesh axes with different ops cannot be verified".into(),
                ));
            }
            op = Some(*o);
            axes.push(a);
        }
    }
    Ok((axes, op))
}

/// Row-major index of the coordinates along `axes`.
fn index_along(mesh: &Mesh, coords: &[u64], axes: &[usize]) -> u64 {
    axes.iter()
        .fold(0, |acc, &a| acc * mesh.sizes()[a] + coords[a])
}

/// Devices along manual mesh axes hold different data: the pattern's index is moved by this much per
/// manual coordinate (row-major over the manual axes), by a step the patterns' periods do not divide.
pub(crate) fn manual_shift(mesh: &Mesh, s: &Sharding, coords: &[u64]) -> u64 {
    let axes: Vec<usize> = (0..s.axis_use().len())
        .filter(|&a| s.axis_use()[a] == AxisUse::Manual)
        .collect();
    index_along(mesh, coords, &axes).wrapping_mul(7919)
}

/// Device `device`'s source buffer filled with the pattern: element `i` of the global array (row-major
/// linear index) holds a small integer function of `i` (and of the device's coordinates on manual
/// mesh axes, whose devices hold different data); where the source has partial axes, each device
/// holds its contribution, and the contributions combine under the pending op to the pattern. Padding
/// is zero.
pub fn fill_source(mesh: &Mesh, src: &Placement, device: u64) -> ExecResult<Vec<u8>> {
    if crate::verify_nested::mixed(&src.sharding) {
        return crate::verify_nested::fill_nested(mesh, src, device);
    }
    let b = src.buffer(mesh, device)?;
    let t = src.dtype;
    let w = src.elem_bytes() as usize;
    let (axes, op) = partial_axes(&src.sharding)?;
    if op.is_some() && !is_float(t) && !is_int(t) {
        return Err(ExecError::Input(format!(
            "partial values of {} cannot be reduced",
            t.name()
        )));
    }
    let coords = mesh.coords(b.region.position);
    let j = index_along(mesh, &coords, &axes);
    let k: u64 = axes.iter().map(|&a| mesh.sizes()[a]).product();
    let shift = manual_shift(mesh, &src.sharding, &coords);
    let mut buf = filled(b.bytes()?, 0)?;
    let dims = src.sharding.dims().to_vec();
    if !b.holds {
        return Ok(buf);
    }
    each_element(&dims, Some(&b.region), |i, _, local| {
        let v = contribution(t, i.wrapping_add(shift), j, k, op).bytes(t, w);
        for s in slots(&b, local, w) {
            buf[s..s + w].copy_from_slice(v.as_slice());
        }
        Ok(())
    })?;
    Ok(buf)
}

/// Checks device `device`'s destination buffer: every element of its region equals the pattern (or,
/// where the destination keeps some of the source's partial axes, the combination of the contributions
/// along the others; or, off coordinate 0 of axes newly pending `sum` or `product`, the op's identity),
/// in every copy; every other byte of the layout's bytes is zero.
pub fn check_destination(
    mesh: &Mesh,
    src: &Placement,
    dst: &Placement,
    device: u64,
    buf: &[u8],
) -> ExecResult<()> {
    if crate::verify_nested::mixed(&src.sharding) {
        return crate::verify_nested::check_nested(mesh, src, dst, device, buf);
    }
    let b = dst.buffer(mesh, device)?;
    let t = dst.dtype;
    let w = dst.elem_bytes() as usize;
    let (s_axes, op) = partial_axes(&src.sharding)?;
    let (d_axes, d_op) = partial_axes(&dst.sharding)?;
    let kept = d_axes.iter().any(|a| s_axes.contains(a));
    if kept && d_op != op {
        return Err(ExecError::Input(
            "axes partial in both shardings must pend the same op".into(),
        ));
    }
    let manual = |s: &Sharding| -> Vec<usize> {
        (0..s.axis_use().len())
            .filter(|&a| s.axis_use()[a] == AxisUse::Manual)
            .collect()
    };
    if manual(&src.sharding) != manual(&dst.sharding) {
        return Err(ExecError::Input(
            "manual mesh axes must be manual in both shardings".into(),
        ));
    }
    let coords = mesh.coords(b.region.position);
    let shift = manual_shift(mesh, &dst.sharding, &coords);
    // Off coordinate 0 of an axis newly pending sum or product, a device holds the op's identity.
    let identity = match d_op {
        Some(o @ (ReduceOp::Sum | ReduceOp::Product))
            if d_axes
                .iter()
                .any(|a| !s_axes.contains(a) && coords[*a] != 0) =>
        {
            if !is_float(t) && !is_int(t) {
                return Err(ExecError::Input(format!(
                    "{} has no identity of {}",
                    t.name(),
                    o.name()
                )));
            }
            Some(Value::Int(i64::from(o == ReduceOp::Product)).to(t))
        }
        _ => None,
    };
    let k: u64 = s_axes.iter().map(|&a| mesh.sizes()[a]).product();
    // The contributions this device's elements combine: those whose coordinates on the destination's
    // partial axes are this device's.
    let js: Vec<u64> = (0..k)
        .filter(|&j| {
            let mut rest = j;
            let mut ok = true;
            for &a in s_axes.iter().rev() {
                let c = rest % mesh.sizes()[a];
                rest /= mesh.sizes()[a];
                if d_axes.contains(&a) && c != coords[a] {
                    ok = false;
                }
            }
            ok
        })
        .collect();
    check_shard(buf, &b, &dst.sharding, w, device, |i| {
        let i = i.wrapping_add(shift);
        let vals = js.iter().map(|&j| contribution(t, i, j, k, op));
        match (identity, op) {
            (Some(v), _) => v,
            (None, Some(op)) if js.len() > 1 => combine(vals, op),
            _ => js
                .first()
                .map_or(base(t, i), |&j| contribution(t, i, j, k, op)),
        }
        .bytes(t, w)
    })
}

pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The outcome of a verified run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verified {
    /// Bytes the plan sends over the network (all ranks together).
    pub bytes: u64,
    /// Seconds the reshard took: the slowest rank, from a common barrier to its end.
    pub seconds: f64,
}

/// Runs a verified reshard on this rank (collective: every rank calls it with the same arguments, which
/// the ranks check first with [`crate::agree`], so ranks given different ones all fail cleanly): fills
/// this device's source with [`fill_source`], executes `plan`, checks the destination with
/// [`check_destination`], and agrees with every other rank on the outcome. Every rank returns the same
/// `Ok`, or an error (its own, or naming the first rank that failed).
pub fn verify_run<C: Communicator + ?Sized>(
    comm: &C,
    mesh: &Mesh,
    plan: &Plan,
    src: &Placement,
    dst: &Placement,
) -> ExecResult<Verified> {
    let inputs = crate::agree::run_inputs(mesh, plan, src, dst);
    verify_agreed(comm, mesh, &[(plan, src, dst)], &inputs, true)
}

/// The slowest rate at which a rank fills its source shard or checks its destination shard, in bytes
/// a second: a tenth of what a loaded 2-core machine does, so that only a rank that died or stalled
/// outlasts the grace.
const LOCAL_BYTES_PER_SEC: u64 = 8 << 20;

/// The longest one rank's own work before or after the reshard may take (filling its source and its
/// destination, or checking the destination), at [`LOCAL_BYTES_PER_SEC`]: the largest source plus
/// destination buffer any device holds.
fn local_work(mesh: &Mesh, src: &Placement, dst: &Placement) -> ExecResult<Duration> {
    let mut most = 0u64;
    for &d in mesh.devices() {
        let bytes = (src.buffer(mesh, d)?.bytes()? as u64)
            .saturating_add(dst.buffer(mesh, d)?.bytes()? as u64);
        most = most.max(bytes);
    }
    Ok(Duration::from_secs(most / LOCAL_BYTES_PER_SEC))
}

/// [`verify_run`] with the inputs' hashes already made, and the plan checked whole here only where
/// `check_whole` (ranks sharing one process hash the inputs and check the plan once for all).
pub(crate) fn verify_agreed<C: Communicator + ?Sized>(
    comm: &C,
    mesh: &Mesh,
    stages: &[(&Plan, &Placement, &Placement)],
    inputs: &[(&str, u64)],
    check_whole: bool,
) -> ExecResult<Verified> {
    crate::agree::agree(comm, Some(inputs))?;
    let (Some(&(_, src, _)), Some(&(_, _, dst))) = (stages.first(), stages.last()) else {
        return Err(ExecError::Plan("a run of no stages".into()));
    };
    let me = comm.rank() as u64;
    // A rank with little to fill waits at the barrier for one with much: that wait is the peer's own
    // work, not a stall, so the timeout is stretched by the longest a rank's share of it may take.
    let grace = local_work(mesh, src, dst)?;
    comm.set_grace(grace);
    let src_buf = fill_source(mesh, src, me)?;
    let mut dst_buf = filled(dst.buffer(mesh, me)?.bytes()?, 0xa5)?;
    comm.barrier()?;
    comm.set_grace(Duration::ZERO);
    let start = Instant::now();
    let run = crate::staged::run_stages(comm, mesh, stages, &src_buf, &mut dst_buf, check_whole);
    let seconds = start.elapsed().as_secs_f64();
    comm.set_grace(grace);
    let outcome = run.and_then(|_| check_destination(mesh, src, dst, me, &dst_buf));
    let mut mine = [0u8; 9];
    mine[0] = u8::from(outcome.is_ok());
    mine[1..].copy_from_slice(&seconds.to_le_bytes());
    let mut all = vec![0u8; 9 * comm.size()];
    let gathered = comm.all_gather(&mine, &mut all);
    comm.set_grace(Duration::ZERO);
    gathered?;
    outcome?;
    let mut slowest = 0f64;
    for (r, c) in all.chunks_exact(9).enumerate() {
        if c[0] != 1 {
            return Err(ExecError::Input(format!(
                "rank {r} failed its part of the reshard"
            )));
        }
        let mut s = [0u8; 8];
        s.copy_from_slice(&c[1..]);
        slowest = slowest.max(f64::from_le_bytes(s));
    }
    Ok(Verified {
        bytes: stages.iter().map(|(p, _, _)| p.bytes).sum(),
        seconds: slowest,
    })
}

/// [`verify_run`] on the threads backend: one thread per device of `mesh`, each waiting at most
/// `timeout` per operation. Returns the agreed outcome, or the root error of the failing ranks (a rank's
/// own error before the ones its peers saw when it stopped). The inputs are hashed and the plan is
/// checked whole once for all ranks (they share them), not once per rank: a plan of `n²` pieces costs
/// `n²`, not `n³`.
pub fn verify_threads(
    mesh: &Mesh,
    plan: &Plan,
    src: &Placement,
    dst: &Placement,
    timeout: std::time::Duration,
) -> ExecResult<Verified> {
    crate::check::checked(mesh.len(), mesh, plan, src, dst, true)?;
    let inputs = crate::agree::run_inputs(mesh, plan, src, dst);
    first_outcome(crate::threads::run_threads(mesh.len(), timeout, |c| {
        verify_agreed(&c, mesh, &[(plan, src, dst)], &inputs, false)
    }))
}

/// The first rank's value when every rank succeeded; else the most telling error: a rank's own error
/// where there is one, else a timeout (the rank that waited in vain and stopped), else a peer's
/// disappearance (which a timeout elsewhere causes), else a rank told that another failed; the lowest
/// rank's among equals.
pub(crate) fn first_outcome<T>(out: Vec<ExecResult<T>>) -> ExecResult<T> {
    use crate::error::CommError;
    let rank = |e: &ExecError| match e {
        ExecError::Comm(CommError::Timeout { .. }) => 1,
        ExecError::Comm(CommError::PeerGone { .. }) => 2,
        ExecError::Input(m) if m.contains("failed its part") => 3,
        _ => 0,
    };
    let mut first_err: Option<ExecError> = None;
    let mut first_ok = None;
    for r in out {
        match r {
            Ok(v) => {
                if first_ok.is_none() {
                    first_ok = Some(v);
                }
            }
            Err(e) => match &first_err {
                Some(f) if rank(f) <= rank(&e) => {}
                _ => first_err = Some(e),
            },
        }
    }
    match (first_err, first_ok) {
        (Some(e), _) => Err(e),
        (None, Some(v)) => Ok(v),
        (None, None) => Err(ExecError::Input("no ranks ran".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CommError;

    #[test]
    fn the_root_error_of_a_run_is_reported() {
        let gone = || {
            Err::<(), _>(ExecError::Comm(CommError::PeerGone {
                rank: 2,
                why: "it stopped before receiving".into(),
            }))
        };
        let timeout = || {
            Err::<(), _>(ExecError::Comm(CommError::Timeout {
                seconds: 1,
                what: "rank 1 in a barrier".into(),
            }))
        };
        let told = || Err::<(), _>(ExecError::Input("rank 3 failed its part".into()));
        let own = || Err::<(), _>(ExecError::Plan("a bad piece".into()));
        // A rank timed out and stopped; the others then saw it gone: the timeout is the cause.
        let e = first_outcome(vec![gone(), gone(), timeout()]).unwrap_err();
        assert!(
            matches!(e, ExecError::Comm(CommError::Timeout { .. })),
            "{e}"
        );
        let e = first_outcome(vec![told(), gone(), Ok(())]).unwrap_err();
        assert!(
            matches!(e, ExecError::Comm(CommError::PeerGone { .. })),
            "{e}"
        );
        let e = first_outcome(vec![timeout(), told(), own(), gone()]).unwrap_err();
        assert!(matches!(e, ExecError::Plan(_)), "{e}");
        assert!(first_outcome(vec![Ok(()), Ok(())]).is_ok());
    }
}
