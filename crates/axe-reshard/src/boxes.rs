//! Boxes of a device's shard: where they lie in its buffer, and copying them to and from row-major
//! messages and other shards.
//!
//! A shard laid out row-major over its padded local shape ([`DeviceBuffer::rows`]) is addressed by its
//! strides alone: a box of it is a set of contiguous runs (the innermost dims the box spans whole on both
//! sides of a copy, merged), each an offset and a length, and copies go run by run. Work is one step per
//! run plus the bytes moved, memory a few words per dimension, whatever the extents — an odd-length
//! dimension, an uneven last shard and padding cost nothing more. Other layouts (tiled XLA layouts, Axe
//! layouts, and a row-major shard paired with one of them) are copied with `axe-relayout` in pieces
//! whose offset tables stay short (see [`crate::stretch`]).

use std::ops::Range;

use axe_relayout::{relayout, Options, TensorLayout};

use crate::exec_error::{dims_text, region_text, ExecError, ExecResult};
use crate::placement::DeviceBuffer;
use crate::radix::ShardLayout;
use crate::stretch::Pieces;

/// Where a box's elements lie in its buffer, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Spot {
    /// `(start, len)` when the box lies contiguous and row-major (one copy).
    pub contiguous: Option<(usize, usize)>,
    /// `(start, count, run, pitch)` when it lies as `count ≥ 2` equally spaced runs of contiguous
    /// row-major elements (see [`strided`]).
    pub strided: Option<(usize, usize, usize, usize)>,
}

/// A copy between two row-major buffers as runs: `count()` runs of `run` elements, the first at
/// elements `a` and `b`, the others stepping along `outer` (extent, stride in the first buffer, stride
/// in the second), outermost first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Runs {
    a: u64,
    b: u64,
    run: u64,
    outer: Vec<(u64, u64, u64)>,
}

/// Row-major strides (in elements) of `shape`, `None` on overflow.
fn strides(shape: &[u64]) -> Option<Vec<u64>> {
    let mut out = vec![1u64; shape.len()];
    let mut s = 1u64;
    for (o, &d) in out.iter_mut().zip(shape).rev() {
        *o = s;
        s = s.checked_mul(d)?;
    }
    Some(out)
}

impl Runs {
    /// The runs copying the box `ra` of a row-major buffer of shape `sa` to the box `rb` of one of
    /// shape `sb` (boxes in local indices, of equal extents): the innermost dims merge into one run
    /// while each lower dim is whole on both sides. `None` where a box leaves its shape, the extents
    /// differ, or an offset overflows.
    pub(crate) fn pair(
        sa: &[u64],
        ra: &[Range<u64>],
        sb: &[u64],
        rb: &[Range<u64>],
    ) -> Option<Runs> {
        let n = sa.len();
        if ra.len() != n || sb.len() != n || rb.len() != n {
            return None;
        }
        let inside = |s: &[u64], r: &[Range<u64>]| {
            s.iter()
                .zip(r)
                .all(|(&d, r)| r.start <= r.end && r.end <= d)
        };
        if !inside(sa, ra) || !inside(sb, rb) {
            return None;
        }
        let ext: Vec<u64> = ra.iter().map(|r| r.end - r.start).collect();
        if rb.iter().zip(&ext).any(|(r, &e)| r.end - r.start != e) {
            return None;
        }
        let (ta, tb) = (strides(sa)?, strides(sb)?);
        let start = |t: &[u64], r: &[Range<u64>]| {
            t.iter()
                .zip(r)
                .try_fold(0u64, |a, (&s, r)| a.checked_add(s.checked_mul(r.start)?))
        };
        let (a, b) = (start(&ta, ra)?, start(&tb, rb)?);
        let mut k = n;
        let mut run = 1u64;
        while k > 0 {
            k -= 1;
            run = run.checked_mul(ext[k])?;
            if ext[k] != sa[k] || ext[k] != sb[k] {
                break;
            }
        }
        let outer = (0..k).map(|i| (ext[i], ta[i], tb[i])).collect();
        Some(Runs { a, b, run, outer })
    }

    /// The runs of the box `r` of a row-major buffer of shape `s`, paired with a row-major message of
    /// the box's extents.
    pub(crate) fn of(s: &[u64], r: &[Range<u64>]) -> Option<Runs> {
        let ext: Vec<u64> = r.iter().map(|r| r.end.saturating_sub(r.start)).collect();
        let whole: Vec<Range<u64>> = ext.iter().map(|&e| 0..e).collect();
        Runs::pair(s, r, &ext, &whole)
    }

    /// How many runs (0 for an empty box).
    pub(crate) fn count(&self) -> u64 {
        if self.run == 0 {
            return 0;
        }
        self.outer
            .iter()
            .fold(1u64, |p, &(e, _, _)| p.saturating_mul(e))
    }

    /// Calls `f(offset in the first buffer, offset in the second)` (elements) for each run, in
    /// row-major order of the box.
    fn each(&self, mut f: impl FnMut(u64, u64) -> ExecResult<()>) -> ExecResult<()> {
        if self.count() == 0 {
            return Ok(());
        }
        let mut idx = vec![0u64; self.outer.len()];
        let (mut a, mut b) = (self.a, self.b);
        loop {
            f(a, b)?;
            let mut k = idx.len();
            loop {
                if k == 0 {
                    return Ok(());
                }
                k -= 1;
                let (e, sa, sb) = self.outer[k];
                idx[k] += 1;
                a = a.wrapping_add(sa);
                b = b.wrapping_add(sb);
                if idx[k] < e {
                    break;
                }
                a = a.wrapping_sub(sa.wrapping_mul(e));
                b = b.wrapping_sub(sb.wrapping_mul(e));
                idx[k] = 0;
            }
        }
    }

    /// Copies each run of `w`-byte elements from `src` (the first buffer) to `dst` (the second).
    pub(crate) fn copy(&self, src: &[u8], dst: &mut [u8], w: usize) -> ExecResult<()> {
        let len = to_usize(self.run)?.checked_mul(w).ok_or_else(too_large)?;
        let (sl, dl) = (src.len(), dst.len());
        self.each(|a, b| {
            let (a, b) = (byte(a, w)?, byte(b, w)?);
            let from = a
                .checked_add(len)
                .and_then(|e| src.get(a..e))
                .ok_or_else(|| outside(a, len, sl))?;
            let to = b
                .checked_add(len)
                .and_then(|e| dst.get_mut(b..e))
                .ok_or_else(|| outside(b, len, dl))?;
            to.copy_from_slice(from);
            Ok(())
        })
    }

    /// Where the first buffer's box lies, in bytes of `w`-byte elements.
    fn spot(&self, w: u64) -> Spot {
        let bytes = |x: u64| x.checked_mul(w).and_then(|x| usize::try_from(x).ok());
        let wide: Vec<&(u64, u64, u64)> = self.outer.iter().filter(|o| o.0 > 1).collect();
        if self.count() == 0 {
            return Spot::default();
        }
        match wide.as_slice() {
            [] => Spot {
                contiguous: bytes(self.a).zip(bytes(self.run)),
                strided: None,
            },
            [&(count, pitch, _)] => Spot {
                contiguous: None,
                strided: match (bytes(self.a), usize::try_from(count), bytes(self.run)) {
                    (Some(at), Ok(count), Some(run)) => bytes(pitch).map(|p| (at, count, run, p)),
                    _ => None,
                },
            },
            _ => Spot::default(),
        }
    }
}

fn to_usize(x: u64) -> ExecResult<usize> {
    usize::try_from(x).map_err(|_| too_large())
}

fn byte(x: u64, w: usize) -> ExecResult<usize> {
    to_usize(x)?.checked_mul(w).ok_or_else(too_large)
}

fn too_large() -> ExecError {
    ExecError::Input("a box does not fit in memory".into())
}

fn outside(at: usize, len: usize, have: usize) -> ExecError {
    ExecError::Plan(format!(
        "a run of {len} bytes at byte {at} leaves a buffer of {have} bytes"
    ))
}

impl DeviceBuffer {
    /// Bytes per element.
    fn width(&self) -> usize {
        (self.layout.bits / 8) as usize
    }

    /// The runs of the local box `local` of a row-major shard, paired with a row-major message.
    fn runs(&self, local: &[Range<u64>]) -> ExecResult<Runs> {
        Runs::of(&self.region.padded_shape, local).ok_or_else(|| self.off(local))
    }

    fn off(&self, local: &[Range<u64>]) -> ExecError {
        ExecError::Plan(format!(
            "the local box {} leaves the buffer's shape {}",
            region_text(local),
            dims_text(&self.region.padded_shape)
        ))
    }

    /// The pieces of a copy between the local box `local` of this shard and a row-major message of
    /// the box's extents (the message's layout returned with them).
    pub(crate) fn message(
        &self,
        local: &[Range<u64>],
    ) -> ExecResult<(ShardLayout, Vec<Range<u64>>)> {
        let ext: Vec<u64> = local
            .iter()
            .map(|r| r.end.saturating_sub(r.start))
            .collect();
        let whole = ext.iter().map(|&e| 0..e).collect();
        Ok((ShardLayout::row_major(&ext, self.layout.bits)?, whole))
    }

    /// Where the local box `local` lies in this shard's buffer.
    pub(crate) fn spot(&self, local: &[Range<u64>]) -> ExecResult<Spot> {
        if self.rows {
            return Ok(self.runs(local)?.spot(self.width() as u64));
        }
        let (msg, whole) = self.message(local)?;
        let pieces = Pieces::new(&self.layout, local, &msg, &whole)?;
        let mut spot = Spot::default();
        if pieces.count() == 1 {
            pieces.each(|sub, _| {
                spot = Spot {
                    contiguous: contiguous(sub),
                    strided: strided(sub),
                };
                Ok(())
            })?;
        } else if pieces.in_order() {
            // Pieces that follow one another in the box's row-major order: contiguous when each is
            // and each starts where the one before ends.
            let mut chain: Option<(usize, usize)> = None;
            let mut whole = true;
            pieces.each(|sub, _| {
                match (chain, contiguous(sub)) {
                    (None, Some(c)) => chain = Some(c),
                    (Some((at, len)), Some((s, n))) if whole && at + len == s => {
                        chain = Some((at, len + n));
                    }
                    _ => whole = false,
                }
                Ok(())
            })?;
            if whole {
                spot.contiguous = chain;
            }
        }
        Ok(spot)
    }

    /// Copies the local box `local` of `buf` (this shard's buffer) into `msg`, row-major.
    pub(crate) fn pack(
        &self,
        buf: &[u8],
        local: &[Range<u64>],
        msg: &mut [u8],
        opts: &Options,
    ) -> ExecResult<()> {
        if self.rows {
            return self.runs(local)?.copy(buf, msg, self.width());
        }
        let (to, whole) = self.message(local)?;
        Pieces::new(&self.layout, local, &to, &whole)?.each(|a, b| {
            relayout(buf, a, msg, b, opts)?;
            Ok(())
        })
    }

    /// Copies the row-major `msg` into the local box `local` of `buf` (this shard's buffer).
    pub(crate) fn unpack(
        &self,
        msg: &[u8],
        buf: &mut [u8],
        local: &[Range<u64>],
        opts: &Options,
    ) -> ExecResult<()> {
        if self.rows {
            let r = self.runs(local)?;
            let back = Runs {
                a: r.b,
                b: r.a,
                run: r.run,
                outer: r.outer.iter().map(|&(e, a, b)| (e, b, a)).collect(),
            };
            return back.copy(msg, buf, self.width());
        }
        let (from, whole) = self.message(local)?;
        Pieces::new(&from, &whole, &self.layout, local)?.each(|a, b| {
            relayout(msg, a, buf, b, opts)?;
            Ok(())
        })
    }

    /// Zeroes every byte of `buf` (this shard's buffer) that holds no element of its local shape (see
    /// [`crate::placement::zero_padding`]): for a row-major shard, the padding past the local shape.
    pub(crate) fn zero_padding(&self, buf: &mut [u8]) -> ExecResult<()> {
        let bytes = self.bytes()?;
        let have = buf.len();
        let buf = buf.get_mut(..bytes).ok_or_else(|| {
            ExecError::Input(format!("a buffer of {have} bytes for a shard of {bytes}"))
        })?;
        if !self.rows {
            // Zeroed whole where any slot is padding (the elements are written afterwards): one pass
            // over the buffer, no table of its padding.
            if !self.layout.dense_over(&self.region.local_shape) {
                buf.fill(0);
            }
            return Ok(());
        }
        let shape = &self.region.padded_shape;
        let local = &self.region.local_shape;
        if local.len() != shape.len() || local.iter().zip(shape).any(|(l, p)| l > p) {
            return Err(ExecError::Plan(format!(
                "the local shape {} leaves the padded shape {}",
                dims_text(local),
                dims_text(shape)
            )));
        }
        let t = strides(shape).ok_or_else(too_large)?;
        zero_rows(buf, shape, local, &t, 0, self.width())
    }
}

/// Zeroes the elements of the row-major block at element `base` over dims `shape` (strides `t`) that
/// lie outside `local`: one fill per slab past the local extent, recursing only into rows that hold
/// elements.
fn zero_rows(
    buf: &mut [u8],
    shape: &[u64],
    local: &[u64],
    t: &[u64],
    base: u64,
    w: usize,
) -> ExecResult<()> {
    let (Some((&p, ps)), Some((&l, ls))) = (shape.split_first(), local.split_first()) else {
        return Ok(());
    };
    let fill = |buf: &mut [u8], from: u64, to: u64| -> ExecResult<()> {
        let (s, e) = (byte(from, w)?, byte(to, w)?);
        let have = buf.len();
        buf.get_mut(s..e)
            .ok_or_else(|| outside(s, e - s, have))?
            .fill(0);
        Ok(())
    };
    let stride = t[0];
    fill(buf, base + l * stride, base + p * stride)?;
    if ps != ls {
        for i in 0..l {
            zero_rows(buf, ps, ls, &t[1..], base + i * stride, w)?;
        }
    }
    Ok(())
}

/// Copies the local box `from` of `src_buf` (laid out as `sb`) to the local box `to` of `dst_buf` (laid
/// out as `db`): run by run where both are row-major, else with `axe-relayout`.
pub(crate) fn copy_box(
    src_buf: &[u8],
    sb: &DeviceBuffer,
    from: &[Range<u64>],
    dst_buf: &mut [u8],
    db: &DeviceBuffer,
    to: &[Range<u64>],
    opts: &Options,
) -> ExecResult<()> {
    if sb.rows && db.rows && sb.width() == db.width() {
        let r = Runs::pair(&sb.region.padded_shape, from, &db.region.padded_shape, to)
            .ok_or_else(|| db.off(to))?;
        return r.copy(src_buf, dst_buf, sb.width());
    }
    Pieces::new(&sb.layout, from, &db.layout, to)?.each(|a, b| {
        relayout(src_buf, a, dst_buf, b, opts)?;
        Ok(())
    })
}

/// The byte range a box occupies when its elements lie contiguous and row-major in the buffer (one
/// copy, whole bytes), as `(start, len)`.
pub(crate) fn contiguous(l: &TensorLayout) -> Option<(usize, usize)> {
    if l.replicas.len() != 1 || !l.bits.is_multiple_of(8) {
        return None;
    }
    let mut stride: i64 = 1;
    let mut start: i64 = l.replicas[0];
    for t in l.tables.iter().rev() {
        let first = *t.first()?;
        start = start.checked_add(first)?;
        for (k, &v) in t.iter().enumerate() {
            if v.checked_sub(first)? != (k as i64).checked_mul(stride)? {
                return None;
            }
        }
        stride = stride.checked_mul(t.len() as i64)?;
    }
    let w = (l.bits / 8) as usize;
    Some((
        usize::try_from(start).ok()?.checked_mul(w)?,
        usize::try_from(stride).ok()?.checked_mul(w)?,
    ))
}

/// Where a box's elements lie as equally spaced runs of contiguous row-major elements in the buffer (the
/// rows of a block of a row-major shard), as `(start, count, run, pitch)` in bytes: the innermost dims
/// contiguous, at most one outer dim longer than 1, its offsets an arithmetic progression of at least
/// the run's length. `None` for a single run (see [`contiguous`]) and any other arrangement.
pub(crate) fn strided(l: &TensorLayout) -> Option<(usize, usize, usize, usize)> {
    if l.replicas.len() != 1 || !l.bits.is_multiple_of(8) {
        return None;
    }
    let mut run: i64 = 1;
    let mut start: i64 = l.replicas[0];
    let mut k = l.tables.len();
    while k > 0 {
        let t = &l.tables[k - 1];
        let first = *t.first()?;
        let mut steps = t.iter().enumerate();
        if !steps.all(|(i, &v)| v.checked_sub(first) == (i as i64).checked_mul(run)) {
            break;
        }
        start = start.checked_add(first)?;
        run = run.checked_mul(t.len() as i64)?;
        k -= 1;
    }
    let (mut count, mut pitch) = (1usize, 0i64);
    for t in &l.tables[..k] {
        start = start.checked_add(*t.first()?)?;
        if t.len() > 1 {
            if count > 1 {
                return None;
            }
            let d = t[1].checked_sub(t[0])?;
            if d < run || t.windows(2).any(|p| p[1].checked_sub(p[0]) != Some(d)) {
                return None;
            }
            (count, pitch) = (t.len(), d);
        }
    }
    if count < 2 {
        return None;
    }
    let w = i64::from(l.bits / 8);
    Some((
        usize::try_from(start.checked_mul(w)?).ok()?,
        count,
        usize::try_from(run.checked_mul(w)?).ok()?,
        usize::try_from(pitch.checked_mul(w)?).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::Strided;
    use crate::placement::{row_major, sub_box};
    use proptest::prelude::*;

    #[test]
    fn a_block_of_a_row_major_shard_is_equally_spaced_runs() {
        let full = row_major(&[8, 6, 4], 32).expect("layout");
        // Rows 2..5, columns 1..3 (whole last dim): 3 runs of 2·4 elements, 6·4 elements apart.
        let sub = sub_box(&full, &[2..5, 1..3, 0..4]).expect("box");
        assert_eq!(strided(&sub), Some(((2 * 24 + 4) * 4, 3, 8 * 4, 24 * 4)));
        // The same runs through `Strided`: packed, they are the box row-major.
        let buf: Vec<u8> = (0..8 * 6 * 4 * 4).map(|i| i as u8).collect();
        let (at, count, run, pitch) = strided(&sub).expect("strided");
        let s = Strided::new(&buf[at..], count, run, pitch).expect("inside");
        assert_eq!(s.len(), 3 * 32);
        assert_eq!(s.packed()[..4], buf[at..at + 4]);
        assert_eq!(s.packed()[32..36], buf[at + pitch..at + pitch + 4]);
        // One run is contiguous, not strided; two partial dims are neither.
        assert_eq!(
            strided(&sub_box(&full, &[2..3, 1..3, 0..4]).expect("box")),
            None
        );
        assert_eq!(
            strided(&sub_box(&full, &[2..5, 1..3, 1..3]).expect("box")),
            None
        );
        // Runs that would leave the buffer, or overlap, are refused.
        assert!(Strided::new(&buf[..10], 2, 4, 8).is_none());
        assert!(Strided::new(&buf, 2, 8, 4).is_none());
    }

    /// A shape of up to 3 dims and a box of it.
    fn shape_and_box() -> impl Strategy<Value = (Vec<u64>, Vec<Range<u64>>)> {
        prop::collection::vec(1u64..7, 0..4).prop_flat_map(|shape| {
            let boxes: Vec<_> = shape
                .iter()
                .map(|&d| (0..=d, 0..=d).prop_map(|(a, b)| a.min(b)..a.max(b)))
                .collect();
            (Just(shape), boxes)
        })
    }

    /// The row-major linear index of `x` in `shape`.
    fn linear(shape: &[u64], x: &[u64]) -> u64 {
        shape.iter().zip(x).fold(0, |a, (&d, &i)| a * d + i)
    }

    /// Every index of a box, row-major.
    fn indices(r: &[Range<u64>]) -> Vec<Vec<u64>> {
        let mut out = vec![vec![]];
        for d in r {
            out = out
                .into_iter()
                .flat_map(|p| {
                    d.clone().map(move |i| {
                        let mut q = p.clone();
                        q.push(i);
                        q
                    })
                })
                .collect();
        }
        out
    }

    proptest! {
        /// Runs copy each element of a box of one row-major buffer to the same element of a box of
        /// another (any offsets, any shapes holding them), and only those.
        #[test]
        fn runs_copy_the_box_element_by_element(
            (sa, ra) in shape_and_box(),
            pad in prop::collection::vec(0u64..3, 3),
            shift in prop::collection::vec(0u64..3, 3),
        ) {
            let w = 2usize;
            let rb: Vec<Range<u64>> =
                ra.iter().zip(&shift).map(|(r, &s)| r.start + s..r.end + s).collect();
            let sb: Vec<u64> = rb.iter().zip(&pad).map(|(r, &p)| r.end + p).collect();
            let n = |s: &[u64]| s.iter().product::<u64>() as usize * w;
            let src: Vec<u8> = (0..n(&sa)).map(|i| (i % 251) as u8 + 1).collect();
            let mut got = vec![0u8; n(&sb)];
            let runs = Runs::pair(&sa, &ra, &sb, &rb).expect("runs");
            runs.copy(&src, &mut got, w).expect("copy");
            let mut want = vec![0u8; n(&sb)];
            for x in indices(&ra) {
                let y: Vec<u64> = x.iter().zip(&shift).map(|(a, s)| a + s).collect();
                let (a, b) = (linear(&sa, &x) as usize * w, linear(&sb, &y) as usize * w);
                want[b..b + w].copy_from_slice(&src[a..a + w]);
            }
            prop_assert_eq!(got, want);
            // One run per row of the box's outer dims at most.
            let elems: u64 = ra.iter().map(|r| r.end - r.start).product();
            prop_assert!(runs.count() <= elems);
        }

        /// A box's spot from its runs is the one its offset tables give.
        #[test]
        fn runs_find_the_spot_the_tables_find((shape, r) in shape_and_box()) {
            let full = row_major(&shape, 32).expect("layout");
            let sub = sub_box(&full, &r).expect("box");
            let runs = Runs::of(&shape, &r).expect("runs");
            let spot = runs.spot(4);
            prop_assert_eq!(spot.contiguous, contiguous(&sub));
            prop_assert_eq!(spot.strided, strided(&sub));
        }

        /// Zeroing a row-major shard's padding clears every element outside the local shape and
        /// nothing inside it.
        #[test]
        fn padding_is_zeroed_outside_the_local_shape((shape, r) in shape_and_box()) {
            let local: Vec<u64> = r.iter().map(|r| r.end).collect();
            let w = 4usize;
            let n = shape.iter().product::<u64>() as usize;
            let mut buf = vec![7u8; n * w];
            let t = strides(&shape).expect("strides");
            zero_rows(&mut buf, &shape, &local, &t, 0, w).expect("zeroed");
            for x in indices(&shape.iter().map(|&d| 0..d).collect::<Vec<_>>()) {
                let inside = x.iter().zip(&local).all(|(i, l)| i < l);
                let at = linear(&shape, &x) as usize * w;
                prop_assert_eq!(buf[at], if inside { 7 } else { 0 }, "{:?}", x);
            }
        }
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // one-dimensional boxes
    fn a_long_box_of_a_tiled_shard_lies_as_one_run() {
        use crate::placement::{MemoryLayout, Placement};
        use axe_shard::{notation::jax::parse_jax, Mesh};
        let mesh = Mesh::new(&[("x", 2)]).expect("mesh");
        for n in [(1u64 << 24) - 1, 1 << 24, 16_777_213] {
            let s = parse_jax("P('x')", &mesh, &[n]).expect("sharding");
            let tiled = MemoryLayout::parse("{0:T(1024)}", 1).expect("layout");
            let p = Placement::new(s, tiled, axe_xla::PrimitiveType::F32).expect("placement");
            for b in p.buffers(&mesh).expect("buffers") {
                let l = b.region.local_shape[0];
                // Cut in pieces, the box still lies as one run: sent from the buffer, not packed.
                let spot = b.spot(&[0..l]).expect("spot");
                assert_eq!(spot.contiguous, Some((0, l as usize * 4)), "{n}");
                let spot = b.spot(&[3..l]).expect("spot");
                assert_eq!(spot.contiguous, Some((12, (l as usize - 3) * 4)), "{n}");
            }
        }
        // Rows of a tiled 2-D shard are not one run.
        let s = parse_jax("P()", &mesh, &[16, 1 << 17]).expect("sharding");
        let tiled = MemoryLayout::parse("{1,0:T(8,128)}", 2).expect("layout");
        let p = Placement::new(s, tiled, axe_xla::PrimitiveType::F32).expect("placement");
        let b = p.buffer(&mesh, 0).expect("buffer");
        assert_eq!(b.spot(&[0..2, 0..1 << 17]).expect("spot").contiguous, None);
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // one-dimensional boxes
    fn runs_refuse_boxes_outside_their_shape() {
        assert!(Runs::of(&[4, 4], &[0..5, 0..4]).is_none());
        assert!(Runs::pair(&[4], &[0..2], &[4], &[0..3]).is_none());
        assert!(Runs::of(&[4], &[0..2, 0..1]).is_none());
        // An odd-length dimension is one run, whatever its extent.
        assert_eq!(
            Runs::of(&[8_388_608], &[0..8_388_607]).map(|r| r.count()),
            Some(1)
        );
    }
}
