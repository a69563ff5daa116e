//! The shipped `relayout` kernel: the same array between two XLA layouts, written with the description.
//!
//! Each XLA layout's Axe form is a layout over the padded shape ([`axe_xla::to_axe`]). The logical box is
//! cut per dimension into ranges every layout can `slice` (cuts fall on the layouts' digit boundaries,
//! found by `group`), and each box of the cut is one kernel-scope `copy` between the two slices — so
//! dispatch chooses each piece's vector width from its own layouts. The destination's padding (the padded
//! box minus the logical one, and any tail the layout's `L` adds) is one `fill` with 0 per piece, as
//! `axe relayout` zero-fills it.

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
    // Both sides' element sizes: a layout with an element size (`E(1)` packs pred into bits) counts.
    let (bits, dst_bits) = (axe_xla::element_bits(src), axe_xla::element_bits(dst));
    if dst_bits % 8 != 0 || bits % 8 != 0 {
        return match crate::relayout_bits::bits_kernel(src, dst, max_ctas)? {
            Ok(r) => Ok(r),
            Err(why) => Err(KernelError::Invalid(format!("{src} -> {dst}: relayout kernels move whole-byte elements, and bit-packed ones as {why} (other bit-packed layouts are moved by `axe relayout` on the CPU)"))),
        };
    }
    if dst_bits != bits {
        return Err(KernelError::Invalid(format!("{dst}: relayout kernels move whole-byte elements of 1, 2, 4 or 8 bytes, not {dst_bits}-bit ones (bit-packed layouts are moved by `axe relayout` on the CPU)")));
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
    let mut hit =
        vec![false; usize::try_from(slots).map_err(|_| overflow("sizing the destination"))?];
    for region in boxes(&[&st, &dt], &logical, &mut pieces)? {
        let s = st.region(&region)?;
        let d = dt.region(&region)?;
        mark(&mut hit, &d.layout)?;
        k.copy(Scope::kernel(), &d, &s)?;
    }
    // Padding: every slot of the destination buffer no element lands on, as strided families of runs.
    for (n, (shape, strides, start)) in merge(runs(&hit)).into_iter().enumerate() {
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

/// A strided family of runs: shape, strides (innermost 1) and start, in elements.
type Family = (Vec<u64>, Vec<i64>, i64);

/// Marks the slots `l` (on `m`) reaches; each must be inside `hit`. Linear in the layout's size.
fn mark(hit: &mut [bool], l: &Layout) -> Result<()> {
    let shard = l.shard();
    let mut digits = vec![0u64; shard.len()];
    let mut off = l.offset().get(&axe_layout::Axis::memory());
    loop {
        let at = usize::try_from(off)
            .ok()
            .filter(|&a| a < hit.len())
            .ok_or_else(|| {
                KernelError::Invalid(format!(
                    "the destination layout {l} reaches element {off}, outside its {} slots",
                    hit.len()
                ))
            })?;
        hit[at] = true;
        // Odometer over the iters, last fastest.
        let mut j = shard.len();
        loop {
            if j == 0 {
                return Ok(());
            }
            j -= 1;
            let it = &shard[j];
            if digits[j] + 1 < it.extent() {
                digits[j] += 1;
                off += it.stride();
                break;
            }
            off -= it.stride() * (it.extent() as i64 - 1);
            digits[j] = 0;
        }
    }
}

/// The maximal runs of unmarked slots, each a one-dimensional family.
fn runs(hit: &[bool]) -> Vec<Family> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < hit.len() {
        if hit[i] {
            i += 1;
            continue;
        }
        let s = i;
        while i < hit.len() && !hit[i] {
            i += 1;
        }
        out.push((vec![(i - s) as u64], vec![1], s as i64));
    }
    out
}

/// Merges consecutive families of one shape whose starts step evenly under a new outer dimension,
/// until nothing merges: the padding of tiled layouts becomes a few strided boxes.
fn merge(mut fams: Vec<Family>) -> Vec<Family> {
    loop {
        let mut out: Vec<Family> = Vec::with_capacity(fams.len());
        let mut i = 0;
        while i < fams.len() {
            let (shape, strides, start) = fams[i].clone();
            let mut j = i + 1;
            let step = fams.get(j).map(|f| f.2 - start);
            while let (Some(f), Some(st)) = (fams.get(j), step) {
                if f.0 != shape || f.1 != strides || f.2 - fams[j - 1].2 != st {
                    break;
                }
                j += 1;
            }
            if j - i > 1 {
                let mut sh = vec![(j - i) as u64];
                sh.extend(&shape);
                let mut sd = vec![step.unwrap_or(0)];
                sd.extend(&strides);
                out.push((sh, sd, start));
            } else {
                out.push((shape, strides, start));
            }
            i = j;
        }
        if out.len() == fams.len() {
            return out;
        }
        fams = out;
    }
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
