//! A long dimension with padding, or with no factors to split at (a prime length), moved in pieces.
//!
//! A dimension padded on either side (`f32[100000001]` into `{0:T(1024)}`: no tile divides 100000001)
//! cannot be split into factors whole: its logical indices do not fill the padded ones. It is cut along
//! the padded space instead, at multiples of both sides' inner iters along it, into a **body** (a multiple
//! of about the dimension's square root, split into factors like an unpadded dimension, so the fast
//! kernels move it), the **whole steps** of those inner iters after it, and the **tail**: the last part of
//! one step, with the padding after it. Each piece is a box of the padded space holding a box of the
//! logical one, so each is an Axe form over a padded shape of its own, with the offset tables of a tensor
//! layout; together they cover every padded index once.
//!
//! Where the destination is an XLA layout whose form tiles its buffer (every padded index its own slot:
//! XLA's tilings) and whose elements are whole bytes, each piece zeroes the padding in its own box (the
//! last one the tail padding too), so the relayout writes every byte once. Otherwise the first piece
//! zeroes the destination whole and the others write their elements only.

use std::ops::Range;

use axe_layout::Axis;
use axe_xla::Tiling;

use super::{cuts, dim_factors, form, pair, split_of, Form, Side, FACTOR_MAX, SPLIT_MIN};
use crate::error::Result;
use crate::tensor::{form_tables, injective_together, padding_alone, xla_slots, TensorLayout};
use crate::{relayout, Options, Plan};

/// Builds a relayout as pieces over disjoint boxes that together cover the tensor, each a pair of layouts
/// for [`relayout_pieces`]. A long dimension with padding on either side is cut into a body (split into
/// factors), whole steps of both sides' inner iters, and a tail (see the module doc). Without such a
/// dimension (nor a long unpadded one whose factors leave one past [`super::FACTOR_MAX`], cut the same
/// way), or where a piece cannot be built, this is the one piece of [`pair`]. Law: every logical
/// element lies in exactly one piece, at the offsets of the whole layouts; every piece addresses the whole
/// buffers (its `slots` are theirs).
pub fn pieces(src: Side<'_>, dst: Side<'_>) -> Result<Vec<(TensorLayout, TensorLayout)>> {
    match body_and_tail(src, dst) {
        Some(p) => Ok(p),
        None => Ok(vec![pair(src, dst)?]),
    }
}

/// What a piece's side needs of its whole layout.
struct Whole<'a> {
    side: Side<'a>,
    form: Form,
    slots: u64,
    bits: u32,
    /// An XLA form whose padded indices map one to one onto `[0, expanded)` (see [`tiles_exactly`]):
    /// then its pieces carry padded tables, and each zeroes its own padding.
    exact: bool,
}

impl<'a> Whole<'a> {
    fn new(side: Side<'a>) -> Option<Whole<'a>> {
        let form = form(side)?;
        let (slots, bits, exact) = match side {
            Side::Xla(a) => {
                let tiling = Tiling::new(a).ok()?;
                let expanded = u64::try_from(tiling.expanded_elements().ok()?).ok()?;
                let slots = xla_slots(a, &tiling).ok()?;
                // (A width the kernels do not move, or a size past 64 bits: the whole layout's
                // error, from `pair`.)
                let bits = crate::xla_side::element_slot_bits(a).ok()?;
                crate::xla_side::check_byte_size(a, slots, bits).ok()?;
                (slots, bits, tiles_exactly(&form, expanded))
            }
            Side::Axe { bits, .. } => (axe_slots(side)?, bits, false),
        };
        Some(Whole {
            side,
            form,
            slots,
            bits,
            exact,
        })
    }

    /// This side's piece over `form` (from [`Whole::piece_form`]), its dimensions split by `split`; the
    /// `last` piece holds the tail padding. `None` where the piece cannot be built or reaches outside
    /// the buffer.
    fn piece(&self, form: &Form, last: bool, split: Option<&[Vec<u64>]>) -> Option<TensorLayout> {
        let mut t = match self.side {
            Side::Axe { .. } => {
                let dims = split.map_or_else(|| form.dims.clone(), <[Vec<u64>]>::concat);
                let mut t = TensorLayout::from_axe(&form.layout, &dims, self.bits).ok()?;
                t.dense = false;
                t
            }
            Side::Xla(_) => {
                let f = form_tables(&form.layout, &form.padded, &form.dims, split).ok()?;
                let padded = f.padded.filter(|_| self.exact);
                TensorLayout {
                    dims: f.dims,
                    bits: self.bits,
                    tables: f.tables,
                    replicas: vec![0],
                    slots: self.slots,
                    dense: false,
                    injective: true,
                    padded,
                    // The tail padding (past the expanded tiles) is the last piece's.
                    padded_slots: if last {
                        self.form_covered()
                    } else {
                        self.slots
                    },
                }
            }
        };
        // Each piece addresses the whole buffer.
        let reach = crate::plan::offset_range(&t)?;
        if reach.0 < 0 || reach.1 as u64 >= self.slots || t.slots > self.slots {
            return None;
        }
        t.slots = self.slots;
        if !t.padded_in_bounds() {
            t.padded = None;
        }
        Some(t)
    }

    /// The whole padded box's indices (`expanded` for an exact XLA form).
    fn form_covered(&self) -> u64 {
        self.form
            .padded
            .iter()
            .try_fold(1u64, |p, &d| p.checked_mul(d))
            .unwrap_or(u64::MAX)
    }

    /// The form of this side's piece: the padded box `lo..hi` along `i` (to the padded extent when
    /// `last`) and whole along the others, holding `hi − lo` logical indices along `i`.
    fn piece_form(&self, i: usize, (lo, hi): (u64, u64), last: bool) -> Option<Form> {
        let f = &self.form;
        let end = if last { *f.padded.get(i)? } else { hi };
        let region: Vec<Range<u64>> = (0..f.padded.len())
            .map(|j| if j == i { lo..end } else { 0..f.padded[j] })
            .collect();
        let layout = f.layout.slice(&f.padded, &region).ok()?;
        let mut dims = f.dims.clone();
        *dims.get_mut(i)? = hi - lo;
        Some(Form {
            layout,
            padded: region.iter().map(|r| r.end - r.start).collect(),
            dims,
        })
    }
}

/// Whether an Axe form maps its padded box one to one onto `[0, expanded)`, by the test
/// [`TensorLayout::from_xla`] applies to its padded tables, read off the iters: no offset or replica,
/// no negative stride, the box's size `expanded`, and the highest offset `Σ (extent − 1)·stride` equal to
/// `expanded − 1`.
fn tiles_exactly(f: &Form, expanded: u64) -> bool {
    let l = &f.layout;
    let m = Axis::memory();
    if !l.replica().is_empty() || l.offset().get(&m) != 0 {
        return false;
    }
    let reach = l.shard().iter().try_fold(0i64, |acc, it| {
        if it.axis() != &m || it.stride() < 0 {
            return None;
        }
        let steps = i64::try_from(it.extent().checked_sub(1)?).ok()?;
        acc.checked_add(steps.checked_mul(it.stride())?)
    });
    let covered = f.padded.iter().try_fold(1u64, |p, &d| p.checked_mul(d));
    covered == Some(expanded)
        && reach.and_then(|r| u64::try_from(r).ok()) == expanded.checked_sub(1)
}

/// The pieces of [`pieces`], or `None` where the tensor has no long padded dimension or a piece cannot be
/// built (then the whole-dimension [`pair`] serves).
fn body_and_tail(src: Side<'_>, dst: Side<'_>) -> Option<Vec<(TensorLayout, TensorLayout)>> {
    let (a, b) = (Whole::new(src)?, Whole::new(dst)?);
    let dims = &a.form.dims;
    if dims != &b.form.dims {
        return None;
    }
    if dims.contains(&0) {
        return None; // no element: nothing to cut
    }
    // The longest dimension that factors alone cannot make small: one with padding on either side,
    // or one whose factors keep one past FACTOR_MAX (a prime length: no divisor to cut at).
    let (ca, cb) = (cuts(&a.form)?, cuts(&b.form)?);
    let padded = |i: usize| a.form.padded[i] != dims[i] || b.form.padded[i] != dims[i];
    let stuck = |i: usize| {
        !padded(i)
            && dim_factors(dims[i], &ca[i], &cb[i])
                .iter()
                .any(|&f| f > FACTOR_MAX)
    };
    let i = (0..dims.len())
        .filter(|&i| dims[i] >= SPLIT_MIN && (padded(i) || stuck(i)))
        .max_by_key(|&i| dims[i])?;
    // The product of the iters inside the outermost one along dimension i, per side.
    let inner = |f: &Form| -> Option<u64> {
        let g = f.layout.group(&f.padded).ok()?;
        g.block(i)
            .iter()
            .skip(1)
            .try_fold(1u64, |p, it| p.checked_mul(it.extent()))
    };
    let (pa, pb) = (inner(&a.form)?, inner(&b.form)?);
    let c0 = pa.checked_mul(pb / gcd(pa, pb))?;
    let d = dims[i];
    // The body is a multiple of c = c0·m with m near √(d/c0): it then has divisors to split at, even
    // when d itself is prime, and the tail stays shorter than c.
    let c = c0.checked_mul((d / c0).isqrt().max(1))?;
    let body = d / c * c;
    if body < d / 2 {
        return None; // the tail would be most of it: nothing gained
    }
    // After the body, the rest in two: whole steps of c0 (a slice of the outermost iters on both
    // sides), then less than c0 (a slice of the inner ones), with the padding after it.
    let steps = d / c0 * c0;
    let cuts: Vec<(u64, u64)> = [(0, body), (body, steps), (steps, d)]
        .into_iter()
        .filter(|(lo, hi)| lo < hi)
        .collect();
    let mut out = Vec::with_capacity(cuts.len());
    for (k, &(lo, hi)) in cuts.iter().enumerate() {
        let last = k + 1 == cuts.len();
        let (fa, fb) = (
            a.piece_form(i, (lo, hi), last)?,
            b.piece_form(i, (lo, hi), last)?,
        );
        let split = split_of(&fa, &fb);
        if k == 0 && stuck(i) && !split.as_ref().is_some_and(|s| small(&s[i])) {
            return None; // the body does not split either: nothing gained
        }
        let ta = a.piece(&fa, last, split.as_deref())?;
        let tb = b.piece(&fb, last, split.as_deref())?;
        out.push((ta, tb));
    }
    // Each piece zeroes its own padding only where every one can (whole bytes, padded tables in
    // bounds) and the padding of them all is few enough to zero alone; else the first zeroes the
    // destination whole.
    let padding = out
        .iter()
        .try_fold(0u64, |n, (_, d)| n.checked_add(d.padding_slots()));
    // An Axe destination's pieces were each checked injective alone; where their slots' ranges
    // overlap, two pieces could still share a slot, so they are checked together. (An XLA layout is
    // injective whole: distinct elements have distinct linear indices.)
    if matches!(dst, Side::Axe { .. }) && !disjoint(&out) {
        let parts: Vec<_> = out
            .iter()
            .map(|(_, d)| (d.tables.as_slice(), d.replicas.as_slice()))
            .collect();
        if !injective_together(&parts, b.slots) {
            for (_, d) in &mut out {
                d.injective = false; // refused by the plan, as the whole layout would be
            }
        }
    }
    let own = out.iter().all(|(_, d)| d.zeroes_padding_alone())
        && padding.is_some_and(|p| padding_alone(p, b.slots));
    for (_, d) in &mut out {
        if own {
            d.dense = d.padding_slots() == 0;
        } else {
            d.padded = None;
            d.dense = false;
        }
    }
    Some(out)
}

/// Whether factors are all at most [`FACTOR_MAX`] (their tables small).
fn small(factors: &[u64]) -> bool {
    factors.iter().all(|&f| f <= FACTOR_MAX)
}

/// Whether the pieces' destinations reach disjoint ranges of slots (each piece's every element and
/// copy), so that no two pieces write one slot. Law: true only if no slot lies in two pieces' ranges.
fn disjoint(out: &[(TensorLayout, TensorLayout)]) -> bool {
    let mut ranges = Vec::with_capacity(out.len());
    for (_, d) in out {
        match crate::plan::offset_range(d) {
            Some(r) => ranges.push(r),
            None => return false,
        }
    }
    ranges.sort_unstable();
    ranges.windows(2).all(|w| w[0].1 < w[1].0)
}

/// The slots of an Axe side's buffer: one past its highest memory offset.
fn axe_slots(side: Side<'_>) -> Option<u64> {
    let Side::Axe { layout, .. } = side else {
        return None;
    };
    let m = Axis::memory();
    let mut max = layout.offset().get(&m);
    for it in layout.shard().iter().chain(layout.replica()) {
        if it.axis() == &m {
            let reach = i64::try_from(it.extent().checked_sub(1)?)
                .ok()?
                .checked_mul(it.stride())?;
            max = max.checked_add(reach.max(0))?;
        }
    }
    u64::try_from(max.checked_add(1)?).ok()
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

/// Runs [`relayout`] over each piece of [`pieces`] into the same buffers. Where every piece's destination
/// zeroes its padding alone ([`TensorLayout::zeroes_padding_alone`]), each does (when `opts` asks);
/// otherwise the first zero-fills the destination whole and the others only write their elements. Law:
/// the destination ends as [`relayout`] over the whole layouts leaves it. Returns the first plan.
pub fn relayout_pieces(
    src: &[u8],
    dst: &mut [u8],
    pieces: &[(TensorLayout, TensorLayout)],
    opts: &Options,
) -> Result<Option<Plan>> {
    // (Then no piece zeroes the destination whole, which would wipe the others' elements.)
    let own = pieces.iter().all(|(_, d)| d.zeroes_padding_alone());
    let mut first = None;
    for (k, (s, d)) in pieces.iter().enumerate() {
        let o = Options {
            zero_padding: opts.zero_padding && (own || k == 0),
            ..*opts
        };
        let plan = relayout(src, s, dst, d, &o)?;
        first.get_or_insert(plan);
    }
    Ok(first)
}
