//! Executing a reshard plan on one rank: pack what it sends, one exchange, unpack what it receives, copy
//! what it keeps, combine pending reductions.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

use axe_relayout::Options;
use axe_shard::{Mesh, Plan, ReduceOp, Transfer};

use crate::boxes::{copy_box, Spot};
use crate::check::{check_cover, checked, localize, volume, volume_of, Checked};
use crate::comm::{Communicator, Message, Strided};
use crate::exec_error::{ExecError, ExecResult};
use crate::placement::{buffers, DeviceBuffer, Placement};
use crate::reduce::{combine_in_place, identity_into, in_place, Acc, Elem};

/// What one rank moved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Moved {
    /// Bytes this rank sent.
    pub sent: u64,
    /// Bytes this rank received.
    pub received: u64,
    /// Bytes this rank copied from its own source shard.
    pub copied: u64,
}

/// Executes `plan` on this rank (device id `comm.rank()` of `mesh`): reads this device's source shard
/// from `src_buf` (laid out as `src` says) and writes its destination shard into `dst_buf` (laid out as
/// `dst` says).
///
/// Law: when every rank runs `reshard` with the same arguments on its own buffers, and `plan` is a valid
/// plan from `src.sharding` to `dst.sharding` (each destination element covered once, or once per
/// pending partial contribution), each device's destination buffer holds, at the slot its layout gives
/// every element of its destination region, the value that element has in the source (combined with the
/// pending op over the partial contributions), and zero in every padding byte. Each piece is packed into
/// and unpacked from a contiguous row-major message with `axe-relayout`, so a change of per-device layout
/// costs no extra pass. The plan is checked whole on every rank before any byte moves (devices, regions
/// within their holders, bytes, ops, covered volumes), so a bad plan is the same error everywhere; then
/// the pieces of this rank's own destination are checked to cover it exactly (one bit per element).
pub fn reshard<C: Communicator + ?Sized>(
    comm: &C,
    mesh: &Mesh,
    plan: &Plan,
    src: &Placement,
    dst: &Placement,
    src_buf: &[u8],
    dst_buf: &mut [u8],
) -> ExecResult<Moved> {
    reshard_with(comm, mesh, plan, src, dst, src_buf, dst_buf, true)
}

/// [`reshard`], checking the plan whole only where `check_whole`: ranks sharing one process check it
/// once for all with [`crate::check::checked`] and skip it here (the same verdict, once rather than
/// once per rank). The rank's own pieces are checked either way.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reshard_with<C: Communicator + ?Sized>(
    comm: &C,
    mesh: &Mesh,
    plan: &Plan,
    src: &Placement,
    dst: &Placement,
    src_buf: &[u8],
    dst_buf: &mut [u8],
    check_whole: bool,
) -> ExecResult<Moved> {
    let Checked {
        src_regions,
        dst_regions,
        pending,
        elem,
    } = checked(comm.size(), mesh, plan, src, dst, check_whole)?;

    let me = comm.rank();
    let (sb, db) = buffers(src, dst, &src_regions[me], &dst_regions[me])?;
    check_cover(plan, me as u64, &db, &pending)?;
    for (buf, b, what) in [
        (src_buf.len(), &sb, "source"),
        (dst_buf.len(), &db, "destination"),
    ] {
        if buf < b.bytes()? {
            return Err(ExecError::Input(format!(
                "device {me}'s {what} buffer has {buf} bytes, its shard needs {}",
                b.bytes()?
            )));
        }
    }
    db.zero_padding(dst_buf)?;
    if let Some((op, _)) = &pending.fill {
        if pending.fills(mesh, db.region.position) {
            fill_identity(dst_buf, &db, Elem::of(dst.dtype)?, *op)?;
        }
    }
    let opts = Options {
        zero_padding: false,
        threads: 1,
        ..Options::default()
    };
    let me64 = me as u64;
    let mut moved = Moved::default();

    // What this rank sends: a slice of its source buffer where the piece is contiguous there, else one
    // packed copy per distinct region.
    let outgoing: Vec<&Transfer> = plan.transfers.iter().filter(|t| t.from == me64).collect();
    let mut packed: Vec<Vec<u8>> = Vec::new();
    let mut packed_at: HashMap<&[Range<u64>], usize> = HashMap::new();
    let mut sources: Vec<Source> = Vec::with_capacity(outgoing.len());
    for t in &outgoing {
        let spot = sb.spot(&localize(&t.region, &sb.region)?)?;
        moved.sent = moved.sent.saturating_add(t.bytes);
        let runs = if comm.sends_strided() {
            spot.strided.filter(|&(at, count, run, pitch)| {
                count.checked_mul(run) == Some(t.bytes as usize)
                    && at <= src_buf.len()
                    && Strided::new(&src_buf[at..], count, run, pitch).is_some()
            })
        } else {
            None
        };
        match (spot.contiguous, runs) {
            (Some((s, len)), _) if len as u64 == t.bytes && s + len <= src_buf.len() => {
                sources.push(Source::Slice(s, len));
            }
            (_, Some((at, count, run, pitch))) => {
                sources.push(Source::Strided(at, count, run, pitch));
            }
            _ => {
                let i = match packed_at.get(t.region.as_slice()) {
                    Some(&i) => i,
                    None => {
                        packed.push(pack(src_buf, &sb, &t.region, &opts)?);
                        packed_at.insert(&t.region, packed.len() - 1);
                        packed.len() - 1
                    }
                };
                sources.push(Source::Packed(i));
            }
        }
    }
    // A packed message goes out as itself on its last use (a backend that copies may take it).
    let mut uses = vec![0usize; packed.len()];
    for s in &sources {
        if let Source::Packed(i) = *s {
            uses[i] += 1;
        }
    }
    let mut packed: Vec<Option<Vec<u8>>> = packed.into_iter().map(Some).collect();
    let mut sends: Vec<(usize, Message<'_>)> = Vec::with_capacity(outgoing.len());
    for (t, s) in outgoing.iter().zip(&sources) {
        let msg = match *s {
            Source::Slice(at, len) => Message::Bytes(Cow::Borrowed(&src_buf[at..at + len])),
            Source::Strided(at, count, run, pitch) => Message::Strided(
                Strided::new(&src_buf[at..], count, run, pitch)
                    .ok_or_else(|| ExecError::Plan("strided runs outside the buffer".into()))?,
            ),
            Source::Packed(i) => {
                uses[i] -= 1;
                let msg = if uses[i] == 0 {
                    packed[i].take()
                } else {
                    packed[i].clone()
                };
                Message::Bytes(Cow::Owned(
                    msg.ok_or_else(|| ExecError::Plan("a message packed twice".into()))?,
                ))
            }
        };
        sends.push((t.to as usize, msg));
    }

    // What it receives: straight into its destination buffer where the piece is contiguous there (and
    // stored, not combined), else into a message to unpack or combine.
    let incoming: Vec<&Transfer> = plan.transfers.iter().filter(|t| t.to == me64).collect();
    let mut direct: Vec<(usize, usize, usize)> = Vec::new();
    for (i, t) in incoming.iter().enumerate() {
        moved.received = moved.received.saturating_add(t.bytes);
        if t.reduce.is_none() {
            let spot = db.spot(&localize(&t.region, &db.region)?)?;
            if let Some((s, len)) = spot.contiguous {
                if len as u64 == t.bytes {
                    direct.push((s, len, i));
                }
            }
        }
    }
    direct.sort_unstable();
    let mut messages: Vec<Option<Vec<u8>>> = (0..incoming.len()).map(|_| None).collect();
    {
        let mut slices: Vec<Option<&mut [u8]>> = (0..incoming.len()).map(|_| None).collect();
        let mut rest: &mut [u8] = dst_buf;
        let mut base = 0usize;
        for &(s, len, i) in &direct {
            // Pieces of a valid plan are disjoint; one that is not (or leaves the buffer) goes through a
            // message instead.
            if s < base || s - base + len > rest.len() {
                continue;
            }
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(s - base);
            let (piece, tail) = tail.split_at_mut(len);
            slices[i] = Some(piece);
            rest = tail;
            base = s + len;
        }
        for (i, t) in incoming.iter().enumerate() {
            if slices[i].is_none() {
                messages[i] = Some(vec![0u8; to_usize(t.bytes)?]);
            }
        }
        let mut recvs: Vec<(usize, &mut [u8])> = incoming
            .iter()
            .zip(slices)
            .zip(messages.iter_mut())
            .filter_map(|((t, slice), msg)| {
                let buf = match slice {
                    Some(b) => b,
                    None => msg.as_mut()?.as_mut_slice(),
                };
                Some((t.from as usize, buf))
            })
            .collect();
        if recvs.len() != incoming.len() {
            return Err(ExecError::Plan("a receive has no buffer".into()));
        }
        if comm.takes_messages() {
            comm.exchange_messages(sends, &mut recvs)?;
        } else {
            // Sent from here; packed buffers are kept for the next reshard.
            comm.exchange_messages(
                sends
                    .iter()
                    .map(|(r, m)| {
                        let m = match m {
                            Message::Bytes(b) => Message::Bytes(Cow::Borrowed(b.as_ref())),
                            Message::Strided(s) => Message::Strided(*s),
                        };
                        (*r, m)
                    })
                    .collect(),
                &mut recvs,
            )?;
            for (_, m) in sends {
                if let Message::Bytes(Cow::Owned(v)) = m {
                    give_back(v);
                }
            }
        }
    }

    // Reductions of f32 and f64 combine straight into a destination shard whose elements lie contiguous;
    // others accumulate apart and are finished into the shard at the end.
    let dst_empty = dst.sharding.maximal_device().is_some_and(|m| m != me64);
    let w = elem as usize;
    let total = to_usize(volume(&db.region.local_shape).saturating_mul(elem))?;
    let whole: Vec<Range<u64>> = db.region.local_shape.iter().map(|&d| 0..d).collect();
    let in_place_at = match (pending.reduce, Elem::of(dst.dtype)) {
        (Some((op, _)), Ok(e)) if !dst_empty && in_place(e, op) => db
            .spot(&whole)?
            .contiguous
            .filter(|&(at, len)| len == total && at + len <= dst_buf.len())
            .map(|(at, _)| at),
        _ => None,
    };
    let mut started = false;
    let mut acc: Option<Acc> = None;
    let mut reduced: Vec<Vec<Range<u64>>> = Vec::new();
    let mut reduced_set: HashSet<Vec<Range<u64>>> = HashSet::new();
    let mut combine = |acc: &mut Option<Acc>,
                       dst_buf: &mut [u8],
                       region: &[Range<u64>],
                       op: ReduceOp,
                       msg: &[u8]| {
        let e = Elem::of(dst.dtype)?;
        let local = localize(region, &db.region)?;
        if let Some(at0) = in_place_at {
            let out = &mut dst_buf[at0..at0 + total];
            if !started {
                started = true;
                if region == db.region.region.as_slice() && msg.len() == total {
                    out.copy_from_slice(msg); // the first contribution covers the shard: stored
                    return Ok(());
                }
                identity_into(e, op, out);
            }
            for_rows(&db.region.local_shape, &local, |at, from, len| {
                combine_in_place(
                    e,
                    op,
                    &mut out[at * w..(at + len) * w],
                    &msg[from * w..(from + len) * w],
                );
            });
            return Ok(());
        }
        let a = match acc {
            Some(a) => a,
            None => acc.insert(Acc::new(e, op, to_usize(volume(&db.region.local_shape))?)),
        };
        for_rows(&db.region.local_shape, &local, |at, from, len| {
            a.combine(at, &msg[from * w..(from + len) * w]);
        });
        if reduced_set.insert(region.to_vec()) {
            reduced.push(region.to_vec());
        }
        Ok::<(), ExecError>(())
    };

    // What this device keeps, then what it received, in plan order.
    for l in plan
        .locals
        .iter()
        .filter(|l| l.device == me64 && !dst_empty)
    {
        moved.copied = moved
            .copied
            .saturating_add(volume_of(&l.region).saturating_mul(elem));
        match l.reduce {
            None => {
                let from = localize(&l.region, &sb.region)?;
                let to = localize(&l.region, &db.region)?;
                copy_box(src_buf, &sb, &from, dst_buf, &db, &to, &opts)?;
            }
            Some(op) => {
                let from = sb.spot(&localize(&l.region, &sb.region)?)?;
                match from.contiguous {
                    Some((at, len)) if at + len <= src_buf.len() => {
                        combine(&mut acc, dst_buf, &l.region, op, &src_buf[at..at + len])?;
                    }
                    _ => {
                        let msg = pack(src_buf, &sb, &l.region, &opts)?;
                        combine(&mut acc, dst_buf, &l.region, op, &msg)?;
                    }
                }
            }
        }
    }
    for (t, msg) in incoming.iter().zip(messages) {
        let Some(msg) = msg else {
            continue; // received in place
        };
        if dst_empty {
            continue; // a scalar sent to a device holding nothing (see `check_plan`): dropped
        }
        match t.reduce {
            None => db.unpack(&msg, dst_buf, &localize(&t.region, &db.region)?, &opts)?,
            Some(op) => combine(&mut acc, dst_buf, &t.region, op, &msg)?,
        }
    }
    if let Some(acc) = acc {
        for region in &reduced {
            let local = localize(region, &db.region)?;
            let extents: Vec<u64> = region.iter().map(|r| r.end - r.start).collect();
            let bytes = to_usize(volume(&extents).saturating_mul(elem))?;
            let Spot { contiguous, .. } = db.spot(&local)?;
            match contiguous {
                Some((at, len)) if len == bytes && at + len <= dst_buf.len() => {
                    let out = &mut dst_buf[at..at + len];
                    for_rows(&db.region.local_shape, &local, |a, o, n| {
                        acc.finish(a, &mut out[o * w..(o + n) * w]);
                    });
                }
                _ => {
                    let mut msg = vec![0u8; bytes];
                    for_rows(&db.region.local_shape, &local, |a, o, n| {
                        acc.finish(a, &mut msg[o * w..(o + n) * w]);
                    });
                    db.unpack(&msg, dst_buf, &local, &opts)?;
                }
            }
        }
    }
    Ok(moved)
}

/// Where a message's bytes come from.
enum Source {
    /// `len` bytes of the source buffer from byte `at`.
    Slice(usize, usize),
    /// A packed message.
    Packed(usize),
    /// `(at, count, run, pitch)`: `count` runs of `run` bytes of the source buffer from byte `at`,
    /// `pitch` bytes apart, for a communicator that sends strided messages itself.
    Strided(usize, usize, usize, usize),
}

/// Writes the identity of `op` into every element of a device's destination shard.
fn fill_identity(buf: &mut [u8], b: &DeviceBuffer, elem: Elem, op: ReduceOp) -> ExecResult<()> {
    let shape = &b.region.local_shape;
    let count = to_usize(volume(shape))?;
    if count == 0 {
        return Ok(());
    }
    let mut one = vec![0u8; elem.bytes()];
    Acc::new(elem, op, 1).finish(0, &mut one);
    let msg = one.repeat(count);
    let whole: Vec<Range<u64>> = shape.iter().map(|&d| 0..d).collect();
    let opts = Options {
        zero_padding: false,
        threads: 1,
        ..Options::default()
    };
    b.unpack(&msg, buf, &whole, &opts)
}

/// Packs the global box `region` of a device's shard into a contiguous row-major message.
fn pack(
    buf: &[u8],
    b: &DeviceBuffer,
    region: &[Range<u64>],
    opts: &Options,
) -> ExecResult<Vec<u8>> {
    let local = localize(region, &b.region)?;
    let bytes = volume_of(&local).saturating_mul(u64::from(b.layout.bits / 8));
    let mut msg = scratch(to_usize(bytes)?);
    b.pack(buf, &local, &mut msg, opts)?;
    Ok(msg)
}

thread_local! {
    /// Message buffers of earlier reshards on this thread, kept for the next: a large fresh buffer costs
    /// a page fault per page and the kernel's zeroing, about as much as packing into it.
    static SCRATCH: std::cell::RefCell<Vec<Vec<u8>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The most bytes of buffers kept for reuse per thread.
const SCRATCH_KEPT: usize = 1 << 30;

/// A buffer of `n` bytes (contents unspecified: every byte is written by a full relayout into it),
/// reused from an earlier reshard where one is big enough.
fn scratch(n: usize) -> Vec<u8> {
    let reused = SCRATCH.with(|pool| {
        let mut pool = pool.borrow_mut();
        let i = pool.iter().position(|b| b.capacity() >= n)?;
        Some(pool.swap_remove(i))
    });
    match reused {
        Some(mut b) => {
            if b.len() >= n {
                b.truncate(n);
            } else {
                b.resize(n, 0);
            }
            b
        }
        None => vec![0u8; n],
    }
}

/// Keeps `buf` for [`scratch`] (up to [`SCRATCH_KEPT`] bytes in all).
fn give_back(buf: Vec<u8>) {
    SCRATCH.with(|pool| {
        let mut pool = pool.borrow_mut();
        let kept: usize = pool.iter().map(Vec::capacity).sum();
        if kept.saturating_add(buf.capacity()) <= SCRATCH_KEPT {
            pool.push(buf);
        }
    });
}

fn to_usize(x: u64) -> ExecResult<usize> {
    usize::try_from(x).map_err(|_| ExecError::Input(format!("{x} bytes do not fit in memory")))
}

/// Calls `f(index in the row-major shape, index in the row-major box, run length)` for each row of the
/// local box `local` of `shape`.
pub(crate) fn for_rows(
    shape: &[u64],
    local: &[Range<u64>],
    mut f: impl FnMut(usize, usize, usize),
) {
    let Some((last, outer)) = local.split_last() else {
        f(0, 0, 1);
        return;
    };
    let len = (last.end - last.start) as usize;
    if len == 0 || outer.iter().any(|r| r.is_empty()) {
        return;
    }
    let mut idx: Vec<u64> = outer.iter().map(|r| r.start).collect();
    let mut row = 0usize;
    loop {
        let mut at = 0u64;
        for (i, &x) in idx.iter().enumerate() {
            at = at * shape[i] + x;
        }
        at = at * shape[shape.len() - 1] + last.start;
        f(at as usize, row * len, len);
        row += 1;
        let mut k = idx.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < outer[k].end {
                break;
            }
            idx[k] = outer[k].start;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::row_major;

    #[test]
    fn rows_of_a_box_in_a_shape() {
        let mut seen = Vec::new();
        for_rows(&[3, 4], &[1..3, 1..3], |a, b, l| seen.push((a, b, l)));
        assert_eq!(seen, vec![(5, 0, 2), (9, 2, 2)]);
        let mut scalar = Vec::new();
        for_rows(&[], &[], |a, b, l| scalar.push((a, b, l)));
        assert_eq!(scalar, vec![(0, 0, 1)]);
    }

    #[test]
    fn an_empty_shard_needs_no_bytes() {
        // A row-major layout of zero elements has zero slots and needs no bytes.
        let l = row_major(&[0, 3], 32).expect("layout");
        assert_eq!(l.bytes(), 0);
    }
}
