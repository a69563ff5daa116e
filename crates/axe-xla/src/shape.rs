//! XLA shapes and layouts as data, field for field as HLO text writes them.
//!
//! These types hold whatever the text says, valid or not; [`crate::validate()`] checks them with XLA's rules
//! (`ValidateLayoutForShape`) as a separate step, the way XLA does.

use crate::inline::InlineVec;
use crate::primitive::PrimitiveType;

/// The dimensions of an array shape (inline up to rank 6).
pub type Dims = InlineVec<Dim, 6>;
/// A layout's `minor_to_major` (inline up to rank 6).
pub type MinorToMajor = InlineVec<i64, 6>;
/// The dimensions of one tile (inline up to 2, as XLA keeps them).
pub type TileDims = InlineVec<TileDim, 2>;
/// The tiles of a layout (inline up to 2).
pub type Tiles = InlineVec<Tile, 2>;

/// One dimension of an array shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A static size `n`.
    Static(i64),
    /// A bounded dynamic size `<=n`.
    Bounded(i64),
    /// An unbounded dynamic size `?`.
    Unbounded,
}

impl Default for Dim {
    /// `Static(0)`.
    fn default() -> Dim {
        Dim::Static(0)
    }
}

impl Dim {
    /// The static size, or the bound of a bounded dynamic size; `None` for `?`.
    pub fn bound(self) -> Option<i64> {
        match self {
            Dim::Static(n) | Dim::Bounded(n) => Some(n),
            Dim::Unbounded => None,
        }
    }
}

/// One dimension of a tile: a size, or `*` (combine this dimension with the next more minor one; XLA
/// stores it as `INT64_MIN` and the tiling doc writes −1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TileDim {
    /// A tile size.
    Size(i64),
    /// `*`: a combined dimension.
    Combined,
}

impl Default for TileDim {
    /// `Size(0)`.
    fn default() -> TileDim {
        TileDim::Size(0)
    }
}

/// A tile `(t_1, ..., t_k)`, applied to the last `k` dimensions of the shape it tiles.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Tile(pub TileDims);

/// A split config `(dimension: indices)`: where a physical dimension (0 = most major) is split.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SplitConfig {
    /// The physical dimension, counted from the most major.
    pub dimension: i64,
    /// The split points along it.
    pub split_indices: Vec<i64>,
}

/// The storage format of one dimension in the legacy `D(...)` layout field (sparse formats).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DimLevelType {
    /// `D`: dense.
    Dense,
    /// `C`: compressed.
    Compressed,
    /// `S`: singleton.
    Singleton,
    /// `H`: loose compressed.
    LooseCompressed,
}

impl DimLevelType {
    /// The letter HLO text writes (`D`, `C`, `S`, `H`).
    pub fn letter(self) -> char {
        match self {
            DimLevelType::Dense => 'D',
            DimLevelType::Compressed => 'C',
            DimLevelType::Singleton => 'S',
            DimLevelType::LooseCompressed => 'H',
        }
    }
}

/// One entry of `D(...)`: a level type, then `+` (not unique) and `~` (not ordered), in that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DimLevel {
    /// The level type letter.
    pub level_type: DimLevelType,
    /// `false` when the entry carries `+`.
    pub unique: bool,
    /// `false` when the entry carries `~`.
    pub ordered: bool,
}

impl std::fmt::Display for DimLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.level_type.letter())?;
        if !self.unique {
            f.write_str("+")?;
        }
        if !self.ordered {
            f.write_str("~")?;
        }
        Ok(())
    }
}

/// An XLA layout: every field HLO text can print, with XLA's defaults.
///
/// Two layouts are equal (and hash alike) iff they print alike: `D(...)` is left out, and an `M(n)` of
/// `n ≤ 0`, which is not printed, equals none. So `parse(print(l)) == l`.
#[derive(Clone, Debug)]
pub struct Layout {
    /// Logical dimensions from the fastest-varying (most minor) to the slowest.
    pub minor_to_major: MinorToMajor,
    /// `D(...)`: legacy dimension level types, as the text gave them. XLA's parser checks them (only `D`,
    /// `C`, `S`, `H`, each with an optional `+` then `~`) and then drops them: they take no part in
    /// validation, sizes, indexing or equality, and XLA (and so this crate) never prints them.
    pub dim_level_types: Vec<DimLevel>,
    /// Tiles applied in turn (`T(8,128)(2,1)`).
    pub tiles: Tiles,
    /// `L(n)`: the tiled element count is rounded up to a multiple of `n` (default 1).
    pub tail_padding_alignment_in_elements: i64,
    /// `#(type)`: index type of a sparse array (rejected by validation for dense arrays).
    pub index_primitive_type: Option<PrimitiveType>,
    /// `*(type)`: pointer type of a sparse array (rejected by validation for dense arrays).
    pub pointer_primitive_type: Option<PrimitiveType>,
    /// `E(n)`: element size in bits when packed; 0 means the type's natural width.
    pub element_size_in_bits: i64,
    /// `S(n)`: memory space (0 default/HBM, 1 fast memory such as TPU VMEM, 5 host, ...). Kept as a full
    /// integer; XLA itself stores it in 8 bits (`S(200)` prints as `S(-56)` there).
    pub memory_space: i64,
    /// `SC(d:i,j)...`: split configs.
    pub split_configs: Vec<SplitConfig>,
    /// `P(shape)`: physical shape of a sparse array (rejected by validation for dense arrays).
    pub physical_shape: Option<Box<Shape>>,
    /// `M(n)`: bytes of dynamic-shape metadata before the data (printed only when positive).
    pub dynamic_shape_metadata_prefix_bytes: i64,
}

/// What of a layout its printed form shows, as [`Layout`]'s equality and hash read it.
type PrintedKey<'a> = (
    &'a MinorToMajor,
    &'a Tiles,
    i64,
    Option<PrimitiveType>,
    Option<PrimitiveType>,
    i64,
    i64,
    &'a [SplitConfig],
    Option<&'a Shape>,
    i64,
);

impl Layout {
    /// Every field the printed form shows, `M(n ≤ 0)` as `M(0)`. Law: `a.printed_key() == b.printed_key()`
    /// iff `a` and `b` print alike.
    fn printed_key(&self) -> PrintedKey<'_> {
        (
            &self.minor_to_major,
            &self.tiles,
            self.tail_padding_alignment_in_elements,
            self.index_primitive_type,
            self.pointer_primitive_type,
            self.element_size_in_bits,
            self.memory_space,
            &self.split_configs,
            self.physical_shape.as_deref(),
            self.dynamic_shape_metadata_prefix_bytes.max(0),
        )
    }
}

impl PartialEq for Layout {
    /// Equal iff both print alike (`D(...)` and `M(n ≤ 0)` aside; see [`Layout`]).
    fn eq(&self, other: &Layout) -> bool {
        self.printed_key() == other.printed_key()
    }
}

impl Eq for Layout {}

impl std::hash::Hash for Layout {
    /// Hashes what equality compares, so equal layouts hash alike.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.printed_key().hash(state);
    }
}

impl Layout {
    /// The default layout of a rank-`rank` array: `{rank-1, ..., 1, 0}` (row-major), nothing else.
    pub fn default_for_rank(rank: usize) -> Layout {
        Layout::with_minor_to_major((0..rank as i64).rev().collect::<MinorToMajor>())
    }

    /// A layout with the given order (a `Vec<i64>`, a slice or a [`MinorToMajor`]) and every attribute
    /// at its default.
    pub fn with_minor_to_major(minor_to_major: impl Into<MinorToMajor>) -> Layout {
        Layout {
            minor_to_major: minor_to_major.into(),
            dim_level_types: Vec::new(),
            tiles: Tiles::new(),
            tail_padding_alignment_in_elements: 1,
            index_primitive_type: None,
            pointer_primitive_type: None,
            element_size_in_bits: 0,
            memory_space: 0,
            split_configs: Vec::new(),
            physical_shape: None,
            dynamic_shape_metadata_prefix_bytes: 0,
        }
    }

    /// Whether any attribute after the `:` would print (everything but `minor_to_major` at its default;
    /// `D(...)` never prints).
    pub fn has_attributes(&self) -> bool {
        !self.tiles.is_empty()
            || self.tail_padding_alignment_in_elements != 1
            || self.index_primitive_type.is_some()
            || self.pointer_primitive_type.is_some()
            || self.element_size_in_bits != 0
            || self.memory_space != 0
            || !self.split_configs.is_empty()
            || self.physical_shape.is_some()
            || self.dynamic_shape_metadata_prefix_bytes > 0
    }
}

/// An array shape: element type, dimensions and layout (the default layout when the text gave none).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArrayShape {
    /// The element type.
    pub element_type: PrimitiveType,
    /// The dimensions, logical order.
    pub dims: Dims,
    /// The layout.
    pub layout: Layout,
}

impl ArrayShape {
    /// A static array with the default (row-major) layout.
    pub fn new(element_type: PrimitiveType, dims: &[i64]) -> ArrayShape {
        ArrayShape {
            element_type,
            dims: dims.iter().map(|&d| Dim::Static(d)).collect(),
            layout: Layout::default_for_rank(dims.len()),
        }
    }

    /// The rank (number of dimensions).
    pub fn rank(&self) -> usize {
        self.dims.len()
    }
}

/// An XLA shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[allow(
    clippy::large_enum_variant,
    reason = "an array kept inline is what makes parsing allocation-free; boxing it would add one per shape"
)]
pub enum Shape {
    /// `f32[3,5]{1,0:T(2,2)}`
    Array(ArrayShape),
    /// `(f32[], s32[2]{0})`
    Tuple(Vec<Shape>),
    /// `token[]`
    Token,
    /// `opaque[]`
    Opaque,
    /// `b(f32[4]{0})`: a buffer holding an array.
    Buffer(Box<Shape>),
}

impl Shape {
    /// The array shape, if this is an array.
    pub fn as_array(&self) -> Option<&ArrayShape> {
        match self {
            Shape::Array(a) => Some(a),
            _ => None,
        }
    }

    /// Every array in the shape (tuples flattened, buffers opened), depth first, with its index path.
    pub fn arrays(&self) -> Vec<(Vec<usize>, &ArrayShape)> {
        fn walk<'a>(
            s: &'a Shape,
            path: &mut Vec<usize>,
            out: &mut Vec<(Vec<usize>, &'a ArrayShape)>,
        ) {
            match s {
                Shape::Array(a) => out.push((path.clone(), a)),
                Shape::Tuple(es) => {
                    for (i, e) in es.iter().enumerate() {
                        path.push(i);
                        walk(e, path, out);
                        path.pop();
                    }
                }
                Shape::Buffer(inner) => walk(inner, path, out),
                Shape::Token | Shape::Opaque => {}
            }
        }
        let mut out = Vec::new();
        walk(self, &mut Vec::new(), &mut out);
        out
    }
}
