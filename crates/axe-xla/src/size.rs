//! Sizes in bytes: logical, XLA's padded `ArraySize`, and the exact physical size.

use crate::error::{overflow, Result, XlaError};
use crate::shape::{ArrayShape, Dim, SplitConfig};
use crate::tiling::{static_dims, Tiling};

/// The three sizes of an array, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// XLA's `ByteSizeOf`: the elements alone, ignoring tiles and `L` (`ceil(n·E/8)` when `E` is set).
    pub logical_bytes: i64,
    /// XLA's `ArraySize`. Without tiles it is [`Sizes::logical_bytes`]: `L` is not applied. With tiles,
    /// each dimension is padded with the **first tile only** (dimensions the tile lacks count as 1),
    /// the element count is rounded up to a multiple of `L`, then `E` applied. A dimension with a split
    /// config counts as its largest split (the size is that of one split). It can under-count nested tiles.
    pub xla_array_size_bytes: i64,
    /// Every tile expanded, then `L`, then `E`: the bytes the layout really occupies. With split
    /// configs, the sum over the splits, each tiled, `L`-padded and packed on its own.
    pub physical_bytes: i64,
}

impl Sizes {
    /// `physical_bytes − logical_bytes`.
    pub fn padding_bytes(&self) -> i64 {
        self.physical_bytes - self.logical_bytes
    }
}

/// Bits one element occupies: `E` when set, otherwise the type's byte width times 8.
pub fn element_bits(a: &ArrayShape) -> i64 {
    if a.layout.element_size_in_bits > 0 {
        a.layout.element_size_in_bits
    } else {
        i64::from(a.element_type.byte_width()) * 8
    }
}

/// `ceil(elements · bits / 8)`, checked: the product is formed in 128 bits, so only a byte count that
/// does not fit `i64` overflows (`s4[9223372036854775807]{0:E(4)}` is 2^62 bytes).
fn bytes_of(elements: i64, bits: i64) -> Result<i64> {
    let total = i128::from(elements)
        .checked_mul(i128::from(bits))
        .ok_or_else(|| overflow("computing a byte size"))?;
    let bytes = total / 8 + i128::from(total % 8 != 0);
    i64::try_from(bytes).map_err(|_| overflow("computing a byte size"))
}

/// The least multiple of `multiple` (> 0) that is `≥ n` (≥ 0), checked.
fn round_up(n: i64, multiple: i64) -> Result<i64> {
    let r = n % multiple;
    if r == 0 {
        Ok(n)
    } else {
        n.checked_add(multiple - r)
            .ok_or_else(|| overflow("rounding up to L"))
    }
}

/// The logical, XLA-padded and exact physical sizes of an array.
///
/// Laws: `logical_bytes = ceil(n·bits/8)` for the `n` elements; `physical_bytes` is, over the pieces the
/// split configs cut the array into (one piece, the array, without them), the sum of
/// `ceil(round_up(slots, L)·bits/8)` for the slots of the piece with every tile expanded: each split is
/// a separate piece, tiled, `L`-padded and packed on its own (XLA's split configs place the splits in
/// separate memories). `xla_array_size_bytes` follows XLA's `ShapeUtil::ArraySize`: `logical_bytes` for
/// an untiled layout (even with `L` or split configs), and for a tiled one
/// `ceil(round_up(Π round_up(d_j, t_j) · Π d_rest, L)·bits/8)` over the first tile, each `d` the largest
/// split of its dimension when a split config names it. Without split configs,
/// `logical_bytes ≤ xla_array_size_bytes ≤ physical_bytes`; with them, `logical_bytes ≤ physical_bytes`.
///
/// ```
/// use axe_xla::{parse_shape, sizes};
/// let s = parse_shape("f32[3,5]{1,0:T(8,128)(3,1)}")?;
/// let z = sizes(s.as_array().unwrap())?;
/// assert_eq!((z.logical_bytes, z.xla_array_size_bytes, z.physical_bytes), (60, 4096, 4608));
/// let s = parse_shape("f32[3,5]{1,0:L(7)}")?;
/// let z = sizes(s.as_array().unwrap())?;
/// assert_eq!((z.logical_bytes, z.xla_array_size_bytes, z.physical_bytes), (60, 60, 84));
/// // Splits of 4 and 12 elements, each tiled by 8 on its own: 8 + 16 slots.
/// let s = parse_shape("f32[16]{0:T(8)SC(0:4)}")?;
/// let z = sizes(s.as_array().unwrap())?;
/// assert_eq!((z.logical_bytes, z.xla_array_size_bytes, z.physical_bytes), (64, 64, 96));
/// # Ok::<(), axe_xla::XlaError>(())
/// ```
pub fn sizes(a: &ArrayShape) -> Result<Sizes> {
    named(a, sizes_of(a))
}

/// `result`, with an overflow error naming the shape `a` it happened in (once: an error that already
/// names it is kept as it is).
pub(crate) fn named<T>(a: &ArrayShape, result: Result<T>) -> Result<T> {
    result.map_err(|e| match e {
        XlaError::Overflow(what) => {
            let suffix = format!(" of {a}");
            if what.ends_with(&suffix) {
                XlaError::Overflow(what)
            } else {
                XlaError::Overflow(format!("{what}{suffix}"))
            }
        }
        e => e,
    })
}

/// `L`, at least 1.
fn tail(a: &ArrayShape) -> i64 {
    a.layout.tail_padding_alignment_in_elements.max(1)
}

/// The memory slots of `a`'s layout (split configs aside): every tile expanded, the count rounded up
/// to a multiple of `L`. Law: slot `x < Tiling::expanded_elements()` holds the element
/// [`Tiling::element_at`] names (or is tile padding); the slots from `expanded_elements()` on are `L`
/// tail padding; without split configs, `ceil(memory_slots·bits/8) = physical_bytes`.
///
/// ```
/// use axe_xla::{memory_slots, parse_shape};
/// let s = parse_shape("f32[2,3]{1,0:T(2,2)L(5)}")?;
/// assert_eq!(memory_slots(s.as_array().unwrap())?, 10);
/// # Ok::<(), axe_xla::XlaError>(())
/// ```
pub fn memory_slots(a: &ArrayShape) -> Result<i64> {
    named(
        a,
        Tiling::new(a).and_then(|t| round_up(t.expanded_elements()?, tail(a))),
    )
}

fn sizes_of(a: &ArrayShape) -> Result<Sizes> {
    if !a.element_type.is_array_type() {
        return Err(XlaError::Unsupported(format!(
            "{} has no size",
            a.element_type
        )));
    }
    let bits = element_bits(a);
    let n = static_dims(a)?
        .iter()
        .try_fold(1i64, |p, &d| p.checked_mul(d))
        .ok_or_else(|| overflow("counting elements"))?;
    let logical_bytes = bytes_of(n, bits)?;
    let l = tail(a);
    let mut physical_bytes = 0i64;
    for (count, piece) in split_pieces(a)? {
        let slots = round_up(Tiling::new(&piece)?.expanded_elements()?, l)?;
        physical_bytes = bytes_of(slots, bits)?
            .checked_mul(count)
            .and_then(|b| b.checked_add(physical_bytes))
            .ok_or_else(|| overflow("adding up the splits"))?;
    }
    let xla_array_size_bytes = if a.layout.tiles.is_empty() {
        logical_bytes
    } else {
        let mut first = a.clone();
        first.layout.tiles.truncate(1);
        first.layout.split_configs.clear();
        for (d, c) in first_split_configs(a) {
            if let Some(size) = first.dims.get_mut(d) {
                let extent = size.bound().unwrap_or(0);
                *size = Dim::Static(max_split_size(extent, &c.split_indices)?);
            }
        }
        let xla_elements = round_up(Tiling::new(&first)?.expanded_elements()?, l)?;
        bytes_of(xla_elements, bits)?
    };
    Ok(Sizes {
        logical_bytes,
        xla_array_size_bytes,
        physical_bytes,
    })
}

/// The split configs XLA reads, with the logical dimension each names: for each dimension, the first
/// config naming it (XLA's `MaxSplitSize` stops at the first). A config names a physical dimension,
/// counted from the most major; one naming no dimension is left out (validation rejects it).
fn first_split_configs(a: &ArrayShape) -> Vec<(usize, &SplitConfig)> {
    let rank = a.rank();
    let configs = &a.layout.split_configs;
    let mut out: Vec<(usize, &SplitConfig)> = Vec::new();
    for c in configs {
        let logical = usize::try_from(c.dimension)
            .ok()
            .and_then(|p| rank.checked_sub(p.checked_add(1)?))
            .and_then(|i| a.layout.minor_to_major.get(i))
            .and_then(|&d| usize::try_from(d).ok())
            .filter(|&d| d < rank);
        if let Some(d) = logical {
            if out.iter().all(|&(seen, _)| seen != d) {
                out.push((d, c));
            }
        }
    }
    out
}

/// The most differently sized pieces [`split_pieces`] enumerates.
const MAX_SPLIT_PIECES: usize = 1 << 16;

/// The pieces the split configs of `a` cut it into, equal pieces grouped as (how many, the shape of
/// one, split configs cleared). Each dimension a config names (see [`first_split_configs`]) is cut at
/// its split points, each clamped to lie between the previous point (0 first) and the dimension's
/// size, so a point out of order or past the size cuts an empty piece (XLA reads such configs too:
/// `MaxSplitSize` takes any points); a piece takes one cut of every such dimension. Empty pieces hold
/// nothing and take no memory. Law: `Σ count · Π dims(piece) = Π dims(a)`; without split configs the one
/// piece is `a`.
fn split_pieces(a: &ArrayShape) -> Result<Vec<(i64, ArrayShape)>> {
    let dims = static_dims(a)?;
    let mut whole = a.clone();
    whole.layout.split_configs.clear();
    let mut pieces = vec![(1i64, whole)];
    for (d, c) in first_split_configs(a) {
        let extent = dims[d];
        // The extents of this dimension's cuts, with how many cuts have each.
        let mut cuts: std::collections::BTreeMap<i64, i64> = Default::default();
        let mut last = 0i64;
        for &i in c.split_indices.iter().chain(std::iter::once(&extent)) {
            let i = i.clamp(last, extent.max(last));
            let n = cuts.entry(i - last).or_insert(0);
            *n = n
                .checked_add(1)
                .ok_or_else(|| overflow("counting splits"))?;
            last = i;
        }
        let total = pieces.len().checked_mul(cuts.len());
        if total.is_none_or(|t| t > MAX_SPLIT_PIECES) {
            return Err(XlaError::Unsupported(format!(
                "the split configs of {a} cut it into more than {MAX_SPLIT_PIECES} differently \
                 sized pieces; their physical size is not computed"
            )));
        }
        let mut next = Vec::with_capacity(total.unwrap_or(0));
        for (count, piece) in &pieces {
            for (&size, &k) in &cuts {
                let mut p = piece.clone();
                p.dims[d] = Dim::Static(size);
                let n = count
                    .checked_mul(k)
                    .ok_or_else(|| overflow("counting splits"))?;
                next.push((n, p));
            }
        }
        pieces = next;
    }
    Ok(pieces)
}

/// The largest piece a split config cuts a dimension of `extent` into (XLA's `MaxSplitSize`): the
/// differences of consecutive split points from 0, and `extent` minus the last one, at least 0.
fn max_split_size(extent: i64, split_indices: &[i64]) -> Result<i64> {
    let mut largest = 0i64;
    let mut last = 0i64;
    for &i in split_indices {
        largest = largest.max(
            i.checked_sub(last)
                .ok_or_else(|| overflow("measuring a split"))?,
        );
        last = i;
    }
    Ok(largest.max(
        extent
            .checked_sub(last)
            .ok_or_else(|| overflow("measuring a split"))?,
    ))
}

/// Where an element lives: its linear index (in elements), and its bit and byte offsets with packing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementOffset {
    /// Position in memory order, in elements.
    pub linear: i64,
    /// `linear × element bits`.
    pub bit_offset: i64,
    /// `bit_offset / 8`.
    pub byte_offset: i64,
}

/// The offsets of element `index` of `a` (all tiles applied, sub-byte packing per `E`).
///
/// Law: `linear = Tiling::new(a)?.linear_index(index)`, `bit_offset = linear · bits`, `byte_offset =
/// bit_offset / 8`; an overflow names `a`.
pub fn element_offset(a: &ArrayShape, index: &[i64]) -> Result<ElementOffset> {
    named(a, element_offset_of(a, index))
}

fn element_offset_of(a: &ArrayShape, index: &[i64]) -> Result<ElementOffset> {
    let linear = Tiling::new(a)?.linear_index(index)?;
    let bit_offset = linear
        .checked_mul(element_bits(a))
        .ok_or_else(|| overflow("computing a bit offset"))?;
    Ok(ElementOffset {
        linear,
        bit_offset,
        byte_offset: bit_offset / 8,
    })
}

/// Why XLA's `ShapeUtil::ArraySize` can differ from the bytes `layout` occupies, one phrase per reason
/// (empty when it counts exactly what the layout occupies): it pads with the first tile only, leaves out
/// `L` when there are no tiles, counts a split dimension by its largest split (one split, not all), and,
/// untiled, packs sub-byte elements as one piece although each split is packed on its own.
pub fn array_size_reasons(layout: &crate::shape::Layout) -> Vec<&'static str> {
    let mut reasons = Vec::new();
    if layout.tiles.len() > 1 {
        reasons.push("pads with the first tile only");
    }
    if layout.tiles.is_empty() && layout.tail_padding_alignment_in_elements > 1 {
        reasons.push("leaves out L when the layout has no tiles");
    }
    if !layout.tiles.is_empty() && !layout.split_configs.is_empty() {
        reasons.push("counts a split dimension by its largest split (one split's size, not all)");
    }
    if layout.tiles.is_empty()
        && !layout.split_configs.is_empty()
        && layout.element_size_in_bits % 8 != 0
    {
        reasons.push("packs the elements as one piece, but each split is packed on its own");
    }
    reasons
}

/// The bytes of one pointer of a tuple's index table: XLA's `ShapeUtil::ByteSizeOf(shape, pointer_size)`
/// with the pointer size of a 64-bit target.
pub const POINTER_BYTES: i64 = 8;

/// One part of a shape (the whole, a tuple element, an element of that ...), with its size.
#[derive(Clone, Debug, PartialEq)]
pub struct PartSize<'a> {
    /// The index path from the whole shape (empty for the whole).
    pub index: Vec<usize>,
    /// The part (a buffer `b(...)` is listed as the shape it holds).
    pub shape: &'a crate::shape::Shape,
    /// XLA's `ShapeUtil::ByteSizeOf(part, 8)`: for a tuple, its index table, [`POINTER_BYTES`] an
    /// element (what its elements hold is not included: each is a buffer of its own); for an array, its
    /// logical bytes; 0 for a token; [`POINTER_BYTES`] for an opaque value.
    pub byte_size_of: i64,
    /// The three sizes of an array part ([`sizes`]); `None` for any other.
    pub sizes: Option<Sizes>,
}

/// Every part of `shape`, in pre-order (a tuple before its elements), with its size.
///
/// Law: the parts are the whole shape and, recursively, the elements of each tuple; the sum of
/// `byte_size_of` over the tuple parts is [`POINTER_BYTES`] times the number of tuple elements (nested
/// tuples' included); over the array parts it is the sum of their logical bytes. An array without a size
/// (an unbounded dimension `?`) is an error, as in [`sizes`].
///
/// ```
/// use axe_xla::{parse_shape, part_sizes};
/// let s = parse_shape("(f32[2], (s32[], token[]))")?;
/// let bytes: Vec<(Vec<usize>, i64)> =
///     part_sizes(&s)?.into_iter().map(|p| (p.index, p.byte_size_of)).collect();
/// assert_eq!(bytes, [(vec![], 16), (vec![0], 8), (vec![1], 16), (vec![1, 0], 4), (vec![1, 1], 0)]);
/// # Ok::<(), axe_xla::XlaError>(())
/// ```
pub fn part_sizes(shape: &crate::shape::Shape) -> Result<Vec<PartSize<'_>>> {
    use crate::shape::Shape;
    fn walk<'a>(s: &'a Shape, index: &mut Vec<usize>, out: &mut Vec<PartSize<'a>>) -> Result<()> {
        let (byte_size_of, z) = match s {
            Shape::Buffer(inner) => return walk(inner, index, out),
            Shape::Array(a) => {
                let z = sizes(a)?;
                (z.logical_bytes, Some(z))
            }
            Shape::Tuple(es) => (
                i64::try_from(es.len())
                    .ok()
                    .and_then(|n| n.checked_mul(POINTER_BYTES))
                    .ok_or_else(|| overflow("sizing a tuple's index table"))?,
                None,
            ),
            Shape::Token => (0, None),
            Shape::Opaque => (POINTER_BYTES, None),
        };
        out.push(PartSize {
            index: index.clone(),
            shape: s,
            byte_size_of,
            sizes: z,
        });
        if let Shape::Tuple(es) = s {
            for (i, e) in es.iter().enumerate() {
                index.push(i);
                walk(e, index, out)?;
                index.pop();
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(shape, &mut Vec::new(), &mut out)?;
    Ok(out)
}

impl PartSize<'_> {
    /// What the part is, as `axe xla size` names it: `"tuple"`, `"array"`, `"token"` or `"opaque"`.
    pub fn kind(&self) -> &'static str {
        use crate::shape::Shape;
        match (self.shape, &self.sizes) {
            (Shape::Tuple(_), _) => "tuple",
            (_, Some(_)) => "array",
            (Shape::Token, None) => "token",
            _ => "opaque",
        }
    }
}

/// The totals over a shape's parts ([`part_sizes`]): its own `ByteSizeOf`, its index tables and its
/// arrays' three sizes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartTotals {
    /// The whole shape's `ByteSizeOf` (the first part's).
    pub byte_size_of: i64,
    /// The bytes of every tuple's index table, nested ones included.
    pub index_table_bytes: i64,
    /// How many tuples there are, nested ones included.
    pub tuples: usize,
    /// The sum of the array parts' [`Sizes::logical_bytes`].
    pub logical_bytes: i64,
    /// The sum of the array parts' [`Sizes::xla_array_size_bytes`].
    pub xla_array_size_bytes: i64,
    /// The sum of the array parts' [`Sizes::physical_bytes`].
    pub physical_bytes: i64,
}

impl PartTotals {
    /// The arrays' padding: physical bytes less logical bytes.
    pub fn padding_bytes(&self) -> i64 {
        self.physical_bytes - self.logical_bytes
    }

    /// The padding as a percentage of the physical bytes (0 when there are none).
    pub fn padding_percent(&self) -> f64 {
        if self.physical_bytes > 0 {
            100.0 * self.padding_bytes() as f64 / self.physical_bytes as f64
        } else {
            0.0
        }
    }
}

/// The totals over `parts` (as [`part_sizes`] gives them).
///
/// Law: `index_table_bytes` is the sum of the tuple parts' `byte_size_of`, `tuples` their number, and
/// each array total the sum of that size over the array parts; a sum past `i64` is an error.
///
/// ```
/// use axe_xla::{parse_shape, part_sizes, part_totals};
/// let s = parse_shape("(f32[3]{0:T(4)}, (s32[], token[]))")?;
/// let t = part_totals(&part_sizes(&s)?)?;
/// assert_eq!((t.byte_size_of, t.index_table_bytes, t.tuples), (16, 32, 2));
/// assert_eq!((t.logical_bytes, t.physical_bytes, t.padding_bytes()), (16, 20, 4));
/// # Ok::<(), axe_xla::XlaError>(())
/// ```
pub fn part_totals(parts: &[PartSize<'_>]) -> Result<PartTotals> {
    let add = |a: i64, b: i64, what: &str| a.checked_add(b).ok_or_else(|| overflow(what));
    let mut t = PartTotals {
        byte_size_of: parts.first().map_or(0, |p| p.byte_size_of),
        ..PartTotals::default()
    };
    for p in parts {
        if let crate::shape::Shape::Tuple(_) = p.shape {
            t.index_table_bytes = add(
                t.index_table_bytes,
                p.byte_size_of,
                "adding up index tables",
            )?;
            t.tuples += 1;
        }
        if let Some(z) = &p.sizes {
            t.logical_bytes = add(t.logical_bytes, z.logical_bytes, "adding up array bytes")?;
            t.xla_array_size_bytes = add(
                t.xla_array_size_bytes,
                z.xla_array_size_bytes,
                "adding up array bytes",
            )?;
            t.physical_bytes = add(t.physical_bytes, z.physical_bytes, "adding up array bytes")?;
        }
    }
    Ok(t)
}
