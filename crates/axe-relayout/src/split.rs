//! Splitting large dimensions into the factors both layouts of a relayout follow.
//!
//! A [`TensorLayout`] keeps one offset table per dimension, as long as the dimension. For a large
//! dimension that both layouts cut the same way — a 1-D tensor of 50 million elements tiled by 1024, say —
//! the tables would cost 8 bytes per element. But where both layouts' offsets along a dimension of extent
//! `d` decompose as `t(x) = t_outer(x div c) + t_inner(x mod c)` (the Axe form's iters of that dimension
//! stop at the cut `c`), the dimension can be indexed as two, `(d/c, c)`, row-major: the same elements land
//! at the same offsets, and the tables cost `d/c + c` entries. [`pair`] finds every cut both layouts share
//! (or that their iters' cuts, taken together, allow: they must divide one another) and builds both
//! layouts over the finer shape. Dimensions with padding on either side are left whole.
//!
//! ```
//! use axe_relayout::split::{pair, Side};
//! let a = axe_xla::parse_shape("f32[1048576]{0}")?;
//! let b = axe_xla::parse_shape("f32[1048576]{0:T(1024)}")?;
//! let (s, d) = pair(Side::Xla(a.as_array().unwrap()), Side::Xla(b.as_array().unwrap()))?;
//! assert_eq!(s.dims, [1024, 1024]);
//! assert_eq!(d.dims, s.dims);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use axe_layout::Layout;
use axe_xla::{to_axe, ArrayShape, Tiling};

use crate::error::Result;
use crate::tensor::TensorLayout;

mod pieces;
pub use pieces::{pieces, relayout_pieces};

/// Dimensions at least this long are split where both layouts allow (shorter ones cost at most 512 KiB
/// of table per side, and keep the plans they always had).
pub const SPLIT_MIN: u64 = 1 << 16;

/// Factors longer than this are split further where both layouts allow (near their square root): their
/// tables then stay under 512 KiB while the runs along them stay long.
pub const FACTOR_MAX: u64 = 1 << 16;

/// One side of a relayout, before its tables are built.
#[derive(Clone, Copy, Debug)]
pub enum Side<'a> {
    /// An XLA array (every tile, `L` and `E` honoured).
    Xla(&'a ArrayShape),
    /// An Axe layout on the memory axis over logical `dims`, elements of `bits` bits.
    Axe {
        /// The layout.
        layout: &'a Layout,
        /// The logical dimensions.
        dims: &'a [u64],
        /// Bits per element.
        bits: u32,
    },
}

/// A side's Axe form: the layout, the (padded) shape it is grouped by, and the logical dimensions.
struct Form {
    layout: Layout,
    padded: Vec<u64>,
    dims: Vec<u64>,
}

fn form(side: Side<'_>) -> Option<Form> {
    match side {
        Side::Xla(a) => {
            let f = to_axe(a).ok()?;
            let dims = Tiling::new(a)
                .ok()?
                .logical
                .iter()
                .map(|&d| d as u64)
                .collect();
            Some(Form {
                layout: f.layout,
                padded: f.padded_shape,
                dims,
            })
        }
        Side::Axe { layout, dims, .. } => Some(Form {
            layout: layout.clone(),
            padded: dims.to_vec(),
            dims: dims.to_vec(),
        }),
    }
}

/// Per dimension, the cuts `1 < c < d` where the form's iters of that dimension end (suffix products of
/// their extents, innermost first), or `None` where the form does not group by its shape.
fn cuts(f: &Form) -> Option<Vec<Vec<u64>>> {
    let g = f.layout.group(&f.padded).ok()?;
    Some(
        (0..f.padded.len())
            .map(|i| {
                let mut p = 1u64;
                let mut out = Vec::new();
                for it in g.block(i).iter().rev() {
                    p = p.saturating_mul(it.extent());
                    if p > 1 && p < f.padded[i] {
                        out.push(p);
                    }
                }
                out
            })
            .collect(),
    )
}

/// The cuts of one dimension both sides can take: all of them when together they form a chain under
/// divisibility (each cut divides the next, and the extent), else those the two sides share.
fn common(d: u64, a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut all: Vec<u64> = a.iter().chain(b).copied().collect();
    all.sort_unstable();
    all.dedup();
    let chain = all.windows(2).all(|w| w[1].is_multiple_of(w[0]))
        && all.last().is_none_or(|&c| d.is_multiple_of(c));
    if chain {
        all
    } else {
        a.iter().copied().filter(|c| b.contains(c)).collect()
    }
}

/// Whether a side whose iters of a dimension of extent `d` end at the ascending `ends` (interior ones)
/// can be cut at `c`: `c` falls inside one iter, at a divisor of its extent (`p | c | q` for the cuts
/// `p < q` around it, 1 and `d` included).
fn allowed(c: u64, ends: &[u64], d: u64) -> bool {
    let mut p = 1;
    for &q in ends.iter().chain([&d]) {
        if c <= q {
            return c.is_multiple_of(p) && q.is_multiple_of(c);
        }
        p = q;
    }
    false
}

/// Adds cuts inside the factors longer than [`FACTOR_MAX`], where both sides allow one: the
/// divisor of the factor nearest its square root that both allow (sides whose iters run straight through
/// a long stretch, such as a contiguous dimension, allow any).
fn refine(d: u64, mut cuts: Vec<u64>, a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut stuck: Vec<u64> = Vec::new(); // the lower ends of long factors with no cut to add
    for _ in 0..64 {
        let mut bounds = vec![1];
        bounds.extend_from_slice(&cuts);
        bounds.push(d);
        let Some((lo, hi)) = bounds
            .windows(2)
            .map(|w| (w[0], w[1]))
            .find(|&(lo, hi)| hi / lo > FACTOR_MAX && !stuck.contains(&lo))
        else {
            break;
        };
        let f = hi / lo;
        let found = (2..=f.isqrt())
            .rev()
            .take(1 << 16)
            .filter(|&g| f.is_multiple_of(g))
            .map(|g| lo * g)
            .find(|&c| allowed(c, a, d) && allowed(c, b, d));
        match found {
            Some(c) => {
                cuts.push(c);
                cuts.sort_unstable();
            }
            None => stuck.push(lo),
        }
    }
    cuts
}

/// The factors of extent `d` at the ascending `cuts`, outermost first: `(d/c_k, c_k/c_(k-1), ..., c_1)`.
fn factors(d: u64, cuts: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(cuts.len() + 1);
    let mut outer = d;
    for &c in cuts.iter().rev() {
        out.push(outer / c);
        outer = c;
    }
    out.push(outer);
    out
}

/// The factors of an unpadded dimension of extent `d` that two forms whose iters along it end at the
/// ascending cuts `a` and `b` both follow: their common cuts, refined inside factors longer than
/// [`FACTOR_MAX`]. Law: the factors multiply to `d`; one may stay longer than [`FACTOR_MAX`] where no
/// divisor both sides allow exists (a prime extent), which [`pieces`] then cuts into a body and a tail.
fn dim_factors(d: u64, a: &[u64], b: &[u64]) -> Vec<u64> {
    factors(d, &refine(d, common(d, a, b), a, b))
}

/// Per dimension of two forms of one tensor, the factors both follow (see the module doc): every dimension
/// of at least [`SPLIT_MIN`] elements with no padding on either side, split where both allow; `None`
/// where nothing splits (or the forms do not group by their shapes). Law: the factors of dimension `i`
/// multiply to `dims[i]`, and both forms' iters of that dimension stop at each factor's boundary.
fn split_of(a: &Form, b: &Form) -> Option<Vec<Vec<u64>>> {
    if a.dims != b.dims {
        return None;
    }
    let (ca, cb) = (cuts(a)?, cuts(b)?);
    let split: Vec<Vec<u64>> = (0..a.dims.len())
        .map(|i| {
            let d = a.dims[i];
            if d < SPLIT_MIN || a.padded[i] != d || b.padded[i] != d {
                vec![d]
            } else {
                dim_factors(d, &ca[i], &cb[i])
            }
        })
        .collect();
    split.iter().any(|f| f.len() > 1).then_some(split)
}

/// Builds both layouts of a relayout, with every dimension of at least [`SPLIT_MIN`] elements and no
/// padding on either side split into the factors both follow (see the module doc): the tables then cost
/// memory proportional to the sum of the factors. Where nothing can be split this is
/// `(TensorLayout::from_xla(..) / from_axe(..))` of each side.
pub fn pair(src: Side<'_>, dst: Side<'_>) -> Result<(TensorLayout, TensorLayout)> {
    let split = match (form(src), form(dst)) {
        (Some(a), Some(b)) => split_of(&a, &b),
        _ => None,
    };
    let build = |side: Side<'_>| match (side, &split) {
        (Side::Xla(a), s) => TensorLayout::from_xla_split(a, s.as_deref()),
        (Side::Axe { layout, bits, .. }, Some(s)) => {
            TensorLayout::from_axe(layout, &s.concat(), bits)
        }
        (Side::Axe { layout, dims, bits }, None) => TensorLayout::from_axe(layout, dims, bits),
    };
    Ok((build(src)?, build(dst)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_join_into_factors() {
        assert_eq!(common(1 << 20, &[1024], &[]), [1024]);
        assert_eq!(common(1 << 20, &[1024], &[128]), [128, 1024]);
        assert_eq!(common(12000, &[1000], &[1024]), Vec::<u64>::new());
        assert_eq!(common(6000, &[1000, 3000], &[3000]), [1000, 3000]);
        assert_eq!(factors(1 << 20, &[128, 1024]), [1024, 8, 128]);
        assert_eq!(factors(100, &[]), [100]);
        // A dimension both sides run straight through splits near its square root.
        assert_eq!(refine(1 << 24, vec![], &[], &[]), [4096]);
        assert!(allowed(4096, &[1024], 1 << 20) && !allowed(1536, &[1024], 1 << 20));
        // A prime extent cannot be split.
        assert_eq!(refine(1_000_003, vec![], &[], &[]), Vec::<u64>::new());
    }
}
