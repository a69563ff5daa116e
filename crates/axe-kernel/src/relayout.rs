//! The shipped `relayout` kernel: the same array between two XLA layouts, written with the description.
//!
//! Each XLA layout's Axe form is a layout over the padded shape ([`axe_xla::to_axe`]). The logical box is
//! cut per dimension into ranges every layout can `slice` (cuts fall on the layouts' digit boundaries,
//! found by `group`), and each box of the cut is one kernel-scope `copy` between the two slices — so
//! dispatch chooses each piece's vector width from its own layouts. The destination's padding (the padded
//! box minus the logical one, the slots inside tiles the padded box's layout skips, and any tail the
//! layout's `L` adds) is one `fill` with 0 per piece, as `axe relayout` zero-fills it; every piece is
//! found from the layouts, never slot by slot.

use std::ops::Range;

use axe_layout::Layout;
use axe_xla::{sizes, to_axe, ArrayShape};

use crate::desc::{Kernel, KernelBuilder, Space, Tensor, Value};
use crate::dtype::DType;
use crate::error::{layout, overflow, KernelError, Result};
use crate::scope::{Launch, Scope};

/// Most pieces (copy and fill calls) a relayout kernel may have.
pub const MAX_PIECES: usize = 4096;
/// Threads per CTA of the relayout kernel.
pub const THREADS: u32 = 256;

/// A relayout kernel and its buffers' sizes.
#[derive(Debug, Clone)]
pub struct Relayout {
    /// The kernel: parameters `src`, `dst`.
    pub kernel: Kernel,
    /// Bytes of the source buffer.
    pub src_bytes: u64,
    /// Bytes of the destination buffer.
    pub dst_bytes: u64,
}

/// CTAs a relayout kernel launches at most (each loops over the rest).
pub const MAX_CTAS: u32 = 4096;

/// The relayout kernel from array `src` to array `dst` (same element type and dimensions).
pub fn relayout_kernel(src: &ArrayShape, dst: &ArrayShape) -> Result<Relayout> {
    relayout_kernel_with(src, dst, MAX_CTAS)
}

/// [`relayout_kernel`] launching at most `max_ctas` CTAs (at least 1).
pub fn relayout_kernel_with(src: &ArrayShape, dst: &ArrayShape, max_ctas: u32) -> Result<Relayout> {
    if src.element_type != dst.element_type || src.dims != dst.dims {
        return Err(KernelError::Invalid(format!(
            "relayout moves one array between layouts: {src} and {dst} differ in element type or dimensions"
        )));
    }
    if src.dims.iter().any(|d| d.bound() == Some(0)) {
        return Err(KernelError::Invalid(format!(
            "{src} -> {dst}: the array has no elements, so a relayout has nothing to move and no kernel is made"
        )));
    }
    // Both sides' element sizes: a layout with an element size (`E(1)` packs pred into bits) counts.
    let (bits, dst_bits) = (axe_xla::element_bits(src), axe_xla::element_bits(dst));
    if dst_bits % 8 != 0 || bits % 8 != 0 {
        return match crate::relayout_bits::bits_kernel(src, dst, max_ctas)? {
            Ok(r) => Ok(r),
            Err(only) => Err(KernelError::Invalid(format!("{src} -> {dst}: relayout kernels move whole-byte elements, and bit-packed pred only {only}; other bit-packed layouts are moved by `axe relayout` on the CPU"))),
        };
    }
    if dst_bits != bits {
        return Err(KernelError::Invalid(format!("{src} -> {dst}: the source holds each element in {bits} bits and the destination in {dst_bits}; a relayout keeps each element's bits (only pred packs narrower, into E(1))")));
    }
    let dtype = u32::try_from(bits)
        .ok()
        .filter(|b| b % 8 == 0)
        .and_then(|b| {
            // The array's own dtype where axe-kernel has it (messages read "f32"), else one of its width.
            let own = src.element_type.to_string().parse::<DType>().ok();
            own.filter(|d| d.bytes() == b / 8).or_else(|| DType::of_bytes(b / 8))
        })
        .ok_or_else(|| KernelError::Invalid(format!("{src}: relayout kernels move whole-byte elements of 1, 2, 4 or 8 bytes, not {bits}-bit ones (bit-packed layouts are moved by `axe relayout` on the CPU)")))?;
    let eb = u64::from(dtype.bytes());
    let xla = |a: &ArrayShape| -> Result<(axe_xla::AxeForm, u64)> {
        let form = to_axe(a).map_err(|e| KernelError::Invalid(format!("{a}: {e}")))?;
        let bytes = sizes(a)
            .map_err(|e| KernelError::Invalid(format!("{a}: {e}")))?
            .physical_bytes;
        let bytes = u64::try_from(bytes).map_err(|_| overflow("sizing a buffer"))?;
        Ok((form, bytes))
    };
    let (sf, src_bytes) = xla(src)?;
    let (df, dst_bytes) = xla(dst)?;
    let dims: Vec<u64> = sf.region.iter().map(|r| r.end).collect();
    let total: u64 = dims.iter().product();
    let most = u64::from(max_ctas.max(1));
    let grid = u32::try_from(total.div_ceil(u64::from(THREADS) * 4).clamp(1, most)).unwrap_or(1);
    let mut k = KernelBuilder::new(
        "relayout",
        Launch {
            grid,
            cluster: 1,
            threads: THREADS,
        },
    )?;
    let sb = k.buffer("src", Space::Global, dtype, src_bytes / eb)?;
    let db = k.buffer("dst", Space::Global, dtype, dst_bytes / eb)?;
    let st = k.tensor("src", sb, &sf.padded_shape, sf.layout.clone())?;
    let dt = k.tensor("dst", db, &df.padded_shape, df.layout.clone())?;
    let mut pieces = 0usize;
    // The logical box, cut where both layouts slice.
    let logical: Vec<Range<u64>> = dims.iter().map(|&d| 0..d).collect();
    let slots = dst_bytes / eb;
    for region in boxes(&[&st, &dt], &logical, &mut pieces)? {
        let s = st.region(&region)?;
        let d = dt.region(&region)?;
        k.copy(Scope::kernel(), &d, &s)?;
    }
    // Padding: every slot of the destination buffer no element lands on: the padded box minus the
    // logical one (boxes of the padded tensor), and the slots the padded box's layout leaves out
    // (inside tiles, and the tail), found from its iters. Planning costs what the layouts do,
    // whatever the array's size.
    let mut fams = Vec::new();
    for pad in padding_boxes(&dims, &df.padded_shape) {
        for region in boxes(&[&dt], &pad, &mut pieces)? {
            fams.push(in_memory_order(&dt.region(&region)?.layout).ok_or_else(|| {
                KernelError::Invalid(format!(
                    "{dst}: its padding {region:?} is not a strided family of slots"
                ))
            })?);
        }
    }
    let gaps = gaps(&df.layout, slots).map_err(|why| {
        KernelError::Invalid(format!(
            "{dst}: its Axe form {} {why}, so its padding has no strided form",
            df.layout
        ))
    })?;
    // (`pieces` counts the copies and the padding's boxes already.)
    if gaps.len() + pieces > MAX_PIECES {
        return Err(KernelError::TooLarge(format!(
            "the relayout needs more than {MAX_PIECES} pieces"
        )));
    }
    fams.extend(gaps);
    // A fill writes the same value to every slot, in any order: each family goes in memory order.
    for (n, (shape, strides, start)) in fams.into_iter().enumerate() {
        let axes = vec![axe_layout::Axis::memory(); shape.len()];
        let l = Layout::strided(&shape, &strides, &axes)
            .and_then(|l| l.with_offset(&axe_layout::Coord::on(axe_layout::Axis::memory(), start)))
            .map_err(layout("the padding"))?;
        let t = k.tensor(&format!("dst_pad{n}"), db, &shape, l)?;
        k.fill(Scope::kernel(), &t, Value::Int(0))?;
    }
    Ok(Relayout {
        kernel: k.build()?,
        src_bytes,
        dst_bytes,
    })
}

/// The padded box `Π [0, padded_i)` minus the logical `Π [0, dims_i)`, as disjoint boxes: for each
/// dimension `d` with padding, `[dims_d, padded_d)` in `d`, the logical range before it and the
/// padded one after.
fn padding_boxes(dims: &[u64], padded: &[u64]) -> Vec<Vec<Range<u64>>> {
    (0..dims.len())
        .filter(|&d| padded[d] > dims[d])
        .map(|d| {
            (0..dims.len())
                .map(|j| match j.cmp(&d) {
                    std::cmp::Ordering::Less => 0..dims[j],
                    std::cmp::Ordering::Equal => dims[j]..padded[j],
                    std::cmp::Ordering::Greater => 0..padded[j],
                })
                .collect()
        })
        .collect()
}

/// A strided family of runs: shape, strides (innermost 1) and start, in elements.
type Family = (Vec<u64>, Vec<i64>, i64);

/// The slots layout `l` reaches (on memory, with strides of at least 0, no replicas) as one strided
/// family in memory order: its iters sorted by stride, largest first, each merged into the next where
/// it continues it (stride = the next one's stride × extent).
fn in_memory_order(l: &Layout) -> Option<Family> {
    if !l.replica().is_empty() {
        return None;
    }
    if l.shard().iter().any(|it| it.extent() == 0) {
        return None;
    }
    let mut its: Vec<(i64, u64)> = Vec::with_capacity(l.shard().len());
    for it in l.shard().iter().filter(|it| it.extent() > 1) {
        if !it.axis().is_memory() || it.stride() < 0 {
            return None;
        }
        its.push((it.stride(), it.extent()));
    }
    its.sort_unstable_by(|a, b| b.cmp(a));
    let mut merged: Vec<(i64, u64)> = Vec::with_capacity(its.len() + 1);
    for (s, e) in its {
        match merged.last_mut() {
            Some((ps, pe)) if i64::try_from(e).ok().and_then(|e| s.checked_mul(e)) == Some(*ps) => {
                *pe = pe.checked_mul(e)?;
                *ps = s;
            }
            _ => merged.push((s, e)),
        }
    }
    if merged.last().is_none_or(|&(s, _)| s != 1) {
        merged.push((1, 1));
    }
    let start = l.offset().get(&axe_layout::Axis::memory());
    Some((
        merged.iter().map(|m| m.1).collect(),
        merged.iter().map(|m| m.0).collect(),
        start,
    ))
}

/// The slots of `[0, slots)` that layout `l` (on memory, from offset 0) does not reach, as strided
/// families of runs, or why it has none: its iters do not nest, or it reaches past the buffer. With the
/// iters sorted by stride, each `(e, s)` places `e` copies of the image of those below it `s` apart;
/// where that image spans `b ≤ s`, the gaps inside the span are `e` copies of the gaps below, and
/// `e − 1` copies of the run `[b, s)`. So the families, with the run from the whole span to `slots`,
/// number at most one more than the iters, and their union with `l`'s image is `[0, slots)`,
/// disjointly.
fn gaps(l: &Layout, slots: u64) -> std::result::Result<Vec<Family>, String> {
    if !l.replica().is_empty() || !l.offset().is_zero() {
        return Err("has replicas or an offset".into());
    }
    if l.shard().iter().any(|it| it.extent() == 0) {
        return Err("has an iter of extent 0".into());
    }
    let big = || "is too large".to_string();
    let mut its: Vec<(u64, u64)> = Vec::with_capacity(l.shard().len());
    for it in l.shard().iter().filter(|it| it.extent() > 1) {
        let stride = u64::try_from(it.stride())
            .ok()
            .filter(|_| it.axis().is_memory())
            .ok_or("has an iter off memory or with a negative stride")?;
        its.push((stride, it.extent()));
    }
    its.sort_unstable();
    // From the innermost out: the gaps inside the span of the iters so far.
    let (mut fams, mut span): (Vec<Family>, u64) = (Vec::new(), 1);
    for (s, e) in its {
        if span > s {
            return Err(
                "does not nest its iters (each stride at least the span of those below it)".into(),
            );
        }
        let si = i64::try_from(s).map_err(|_| big())?;
        for f in &mut fams {
            f.0.insert(0, e);
            f.1.insert(0, si);
        }
        let start = i64::try_from(span).map_err(|_| big())?;
        match e {
            _ if s == span => {}
            2 => fams.push((vec![s - span], vec![1], start)),
            _ => fams.push((vec![e - 1, s - span], vec![si, 1], start)),
        }
        span = (e - 1)
            .checked_mul(s)
            .and_then(|x| x.checked_add(span))
            .ok_or_else(big)?;
    }
    if span > slots {
        return Err(format!(
            "reaches slot {}, past the buffer's {slots}",
            span - 1
        ));
    }
    if slots > span {
        let start = i64::try_from(span).map_err(|_| big())?;
        fams.push((vec![slots - span], vec![1], start));
    }
    Ok(fams)
}

/// Cuts `region` into boxes that every tensor in `ts` can slice, dimension by dimension.
fn boxes(
    ts: &[&Tensor],
    region: &[Range<u64>],
    pieces: &mut usize,
) -> Result<Vec<Vec<Range<u64>>>> {
    let mut out: Vec<Vec<Range<u64>>> = vec![Vec::new()];
    for (dim, r) in region.iter().enumerate() {
        let cuts = cut(ts, dim, r.start, r.end, 0)?;
        let mut next = Vec::with_capacity(out.len() * cuts.len());
        for b in &out {
            for c in &cuts {
                let mut nb = b.clone();
                nb.push(c.clone());
                next.push(nb);
            }
        }
        if next.len() + *pieces > MAX_PIECES {
            return Err(KernelError::TooLarge(format!(
                "the relayout needs more than {MAX_PIECES} pieces"
            )));
        }
        out = next;
    }
    *pieces += out.len();
    Ok(out)
}

/// The ranges `[lo, hi)` of dimension `dim` is cut into so that each slices in every tensor (the other
/// dimensions whole; `slice` treats dimensions separately).
fn cut(ts: &[&Tensor], dim: usize, lo: u64, hi: u64, depth: usize) -> Result<Vec<Range<u64>>> {
    let slices = |a: u64, b: u64| {
        ts.iter().all(|t| {
            let region: Vec<Range<u64>> = t
                .shape
                .iter()
                .enumerate()
                .map(|(j, &e)| if j == dim { a..b } else { 0..e })
                .collect();
            t.layout.slice(&t.shape, &region).is_ok()
        })
    };
    if slices(lo, hi) {
        return Ok(std::iter::once(lo..hi).collect());
    }
    if depth > 64 || hi - lo < 2 {
        return Err(KernelError::Invalid(format!(
            "dimension {dim}'s range {lo}..{hi} has no slice in the layouts"
        )));
    }
    // Digit boundaries of every layout in this dimension, coarsest first.
    let mut grains = Vec::new();
    for t in ts {
        let g = t
            .layout
            .group(&t.shape)
            .map_err(layout(format!("grouping tensor {}", t.name)))?;
        let mut p = 1u64;
        for it in g.block(dim).iter().rev() {
            grains.push(p);
            p = p.saturating_mul(it.extent());
        }
    }
    grains.sort_unstable_by(|a, b| b.cmp(a));
    let at = grains
        .iter()
        .filter(|&&g| g > 1)
        .find_map(|&g| {
            let down = hi / g * g;
            let up = (lo / g + 1) * g;
            [down, up].into_iter().find(|&c| c > lo && c < hi)
        })
        .unwrap_or(lo + 1);
    let mut a = cut(ts, dim, lo, at, depth + 1)?;
    a.extend(cut(ts, dim, at, hi, depth + 1)?);
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every slot of `[0, slots)` the families reach, each counted.
    fn reached(fams: &[Family], slots: u64) -> Vec<u32> {
        let mut hit = vec![0u32; slots as usize];
        for (shape, strides, start) in fams {
            let total: u64 = shape.iter().product();
            for mut x in 0..total {
                let mut off = *start;
                for (e, s) in shape.iter().zip(strides).rev() {
                    off += (x % e) as i64 * s;
                    x /= e;
                }
                hit[off as usize] += 1;
            }
        }
        hit
    }

    /// Layouts of 1 to 4 memory iters in any order, nested with random gaps (or, when `loose`,
    /// strides drawn freely), and a buffer a little past their span.
    fn arb_layout() -> impl Strategy<Value = (Layout, u64)> {
        (
            prop::collection::vec((1u64..5, 0u64..4), 1..5),
            any::<bool>(),
            0u64..6,
            Just(()).prop_perturb(|_, mut r| r.random::<u64>()),
        )
            .prop_map(|(its, loose, tail, seed)| {
                let (mut extents, mut strides) = (Vec::new(), Vec::new());
                let mut span = 1u64;
                for (k, &(e, gap)) in its.iter().enumerate() {
                    let s = if loose {
                        1 + (seed >> (k * 8)) % 6
                    } else {
                        span + gap
                    };
                    span = s * (e - 1) + span.max(1);
                    extents.push(e);
                    strides.push(s as i64);
                }
                // Shuffled: the image does not depend on the iters' order.
                let n = extents.len();
                let mut order: Vec<usize> = (0..n).collect();
                for i in (1..n).rev() {
                    order.swap(i, (seed as usize >> (i * 3)) % (i + 1));
                }
                let e: Vec<u64> = order.iter().map(|&i| extents[i]).collect();
                let s: Vec<i64> = order.iter().map(|&i| strides[i]).collect();
                let axes = vec![axe_layout::Axis::memory(); n];
                let slots = 1 + s
                    .iter()
                    .zip(&e)
                    .map(|(s, e)| *s as u64 * (e - 1))
                    .sum::<u64>();
                (Layout::strided(&e, &s, &axes).unwrap(), slots + tail)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]
        /// `gaps(l)` and `l`'s image partition `[0, slots)`, whenever `gaps` answers; it answers for
        /// every nested layout.
        #[test]
        fn gaps_and_the_image_partition_the_buffer((l, slots) in arb_layout()) {
            let fams = gaps(&l, slots);
            let image = in_memory_order(&l).unwrap();
            let nested = {
                let mut its: Vec<(i64, u64)> = l.shard().iter().filter(|i| i.extent() > 1).map(|i| (i.stride(), i.extent())).collect();
                its.sort_unstable();
                let mut span = 1i64;
                its.iter().all(|&(s, e)| { let ok = s >= span; span += s * (e as i64 - 1); ok })
            };
            prop_assert!(fams.is_ok() || !nested, "{l}: nested but no gaps");
            if let Ok(fams) = fams {
                prop_assert!(fams.len() <= l.shard().len() + 1);
                let mut all = fams.clone();
                all.push(image);
                prop_assert!(reached(&all, slots).iter().all(|&c| c == 1), "{l} in {slots}: {fams:?}");
            }
        }
    }

    #[test]
    fn gaps_of_a_tiled_layout() {
        // f16[2,2,2]{1,2,0:T(8,128)(2,1)}'s Axe form: 8 elements in 2048 slots.
        let l: Layout = "S[(2,2,2):(1024,2,1)]".parse().unwrap();
        assert_eq!(
            gaps(&l, 2048).unwrap(),
            vec![(vec![1020], vec![1], 4), (vec![1020], vec![1], 1028)]
        );
        // Strides that interleave (2 and 3 over extents 2 and 3) do not nest.
        let l: Layout = "S[(2,3):(3,2)]".parse().unwrap();
        assert!(gaps(&l, 9).unwrap_err().contains("does not nest"));
        // A layout reaching past its buffer.
        let l: Layout = "S[4:2]".parse().unwrap();
        assert!(gaps(&l, 6).unwrap_err().contains("reaches slot 6"));
        assert_eq!(
            gaps(&l, 8).unwrap(),
            vec![(vec![3, 1], vec![2, 1], 1), (vec![1], vec![1], 7)]
        );
    }
}
