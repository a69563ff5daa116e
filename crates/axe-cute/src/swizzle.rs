//! Swizzles `Sw<B,M,S>` and composed layouts `Sw<B,M,S> o offset o layout`.

use std::fmt;
use std::str::FromStr;

use crate::compose::composition;
use crate::error::{add, CuteError, Result};
use crate::layout::{parse_layout, Layout};
use crate::parse::Parser;

/// CuTe's `Swizzle<B,M,S>`: XOR the `B` bits starting at bit `M + max(0,S)` into the `B` bits starting
/// at bit `M − min(0,S)`: `x ↦ x ^ ((x & yyy) >> S)` (a left shift by `−S` when `S < 0`).
///
/// It is linear over GF(2) on the bits of a nonnegative offset and, as `|S| ≥ B`, an involution.
///
/// ```
/// use axe_cute::Swizzle;
/// let sw: Swizzle = "Sw<3,3,3>".parse()?;
/// assert_eq!(sw.apply(0b001_000_000)?, 0b001_001_000);
/// assert_eq!(sw.apply(sw.apply(12345)?)?, 12345);
/// let neg = Swizzle::new(2, 4, -3)?;          // bits 4..6 into bits 7..9
/// assert_eq!(neg.apply(0b11 << 4)?, (0b11 << 4) | (0b11 << 7));
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Swizzle {
    bits: u32,
    base: u32,
    shift: i32,
}

impl Swizzle {
    /// `Sw<bits, base, shift>`; needs `|shift| ≥ bits` (the two masks are disjoint) and both masks within
    /// bit 62.
    pub fn new(bits: u32, base: u32, shift: i32) -> Result<Swizzle> {
        if shift.unsigned_abs() < bits {
            return Err(CuteError::Swizzle(format!(
                "Sw<{bits},{base},{shift}>: |S| must be at least B, or the masks overlap"
            )));
        }
        let top = u64::from(bits) + u64::from(base) + u64::from(shift.unsigned_abs());
        if top > 63 {
            return Err(CuteError::Swizzle(format!(
                "Sw<{bits},{base},{shift}>: the masks reach bit {top}, past bit 62"
            )));
        }
        Ok(Swizzle { bits, base, shift })
    }

    /// The identity `Sw<0,0,0>`.
    pub fn identity() -> Swizzle {
        Swizzle {
            bits: 0,
            base: 0,
            shift: 0,
        }
    }

    /// `(B, M, S)`.
    pub fn params(&self) -> (u32, u32, i32) {
        (self.bits, self.base, self.shift)
    }

    fn src_mask(&self) -> u64 {
        let ones = (1u64 << self.bits) - 1;
        ones << (self.base + self.shift.max(0).unsigned_abs())
    }

    /// `(yyy, zzz)`: the mask of the bits read and the mask of the bits they are XORed into
    /// (`Sw<3,3,3>`: `(0x1c0, 0x38)`), as CuTe's `yyy_msk` and `zzz_msk`.
    pub fn masks(&self) -> (u64, u64) {
        let ones = (1u64 << self.bits) - 1;
        let zzz = ones << (self.base + self.shift.min(0).unsigned_abs());
        (self.src_mask(), zzz)
    }

    /// CuTe's `size()`: `2^(B + M + |S|)`, the span of offsets past which the pattern of the bits it
    /// touches repeats (at most 2^63, as [`Swizzle::new`] bounds the masks).
    pub fn size(&self) -> u64 {
        1u64 << (self.bits + self.base + self.shift.unsigned_abs())
    }

    /// Applies the swizzle to a nonnegative offset.
    pub fn apply(&self, x: i64) -> Result<i64> {
        let u = u64::try_from(x).map_err(|_| {
            CuteError::Swizzle(format!("{self} applies to nonnegative offsets, not {x}"))
        })?;
        let y = u & self.src_mask();
        let moved = if self.shift >= 0 {
            y >> self.shift.unsigned_abs()
        } else {
            y << self.shift.unsigned_abs()
        };
        i64::try_from(u ^ moved).map_err(|_| crate::error::overflow("swizzling"))
    }

    fn apply_bits(&self, u: u64) -> u64 {
        let y = u & self.src_mask();
        u ^ if self.shift >= 0 {
            y >> self.shift.unsigned_abs()
        } else {
            y << self.shift.unsigned_abs()
        }
    }

    /// `self ∘ other` (`other` first) as one swizzle.
    ///
    /// **Law**: `R(x) = self(other(x))` for every `x ≥ 0`. Both are GF(2)-linear, so the composition is
    /// compared with the candidate swizzle on each of the 63 bit positions, which proves equality on all
    /// offsets. When the composition moves bits along more than one shift or from a non-contiguous range
    /// it is no swizzle and the error says which bit breaks it. Parameters may differ: `Sw<1,0,2> ∘
    /// Sw<1,1,2> = Sw<2,0,2>` (different bases), `Sw<1,0,2> ∘ Sw<0,5,-3> = Sw<1,0,2>` (an identity of any
    /// shift). Two non-identity swizzles with different shifts never compose to a swizzle: as matrices
    /// `(I+N1)(I+N2) = I + N1 + N2 + N1·N2`, with `N1`, `N2` and `N1·N2` on three different bit
    /// diagonals, none of which can cancel another.
    ///
    /// ```
    /// use axe_cute::Swizzle;
    /// let a: Swizzle = "Sw<1,0,2>".parse()?;
    /// let b: Swizzle = "Sw<1,1,2>".parse()?;
    /// assert_eq!(a.compose(&b)?.to_string(), "Sw<2,0,2>");
    /// assert_eq!(a.compose(&a)?.to_string(), "Sw<0,0,0>");
    /// assert!(a.compose(&"Sw<1,1,3>".parse()?).is_err());
    /// # Ok::<(), axe_cute::CuteError>(())
    /// ```
    pub fn compose(&self, other: &Swizzle) -> Result<Swizzle> {
        let cols: Vec<u64> = (0..63)
            .map(|i| self.apply_bits(other.apply_bits(1u64 << i)))
            .collect();
        let moved: Vec<(u32, u64)> = (0u32..63)
            .zip(&cols)
            .map(|(i, c)| (i, c ^ (1u64 << i)))
            .filter(|&(_, n)| n != 0)
            .collect();
        let fail =
            |why: String| CuteError::Swizzle(format!("{self} ∘ {other} is no swizzle: {why}"));
        let Some(&(lo, first)) = moved.first() else {
            return Ok(Swizzle::identity());
        };
        if first.count_ones() != 1 {
            return Err(fail(format!("bit {lo} is XORed into several bits")));
        }
        let shift = i64::from(lo) - i64::from(first.trailing_zeros());
        let bits = u32::try_from(moved.len()).map_err(|_| fail("too many bits".into()))?;
        let base = i64::from(lo) - shift.max(0);
        let cand = Swizzle::new(
            bits,
            u32::try_from(base).map_err(|_| fail("negative base".into()))?,
            i32::try_from(shift).map_err(|_| fail("shift out of range".into()))?,
        )
        .map_err(|e| fail(e.to_string()))?;
        for (i, &c) in (0u32..63).zip(&cols) {
            if cand.apply_bits(1u64 << i) != c {
                return Err(fail(format!(
                    "bit {i} goes to {c:#b}, which no single Sw<B,M,S> does"
                )));
            }
        }
        Ok(cand)
    }
}

pub(crate) fn parse_swizzle(p: &mut Parser<'_>) -> Result<Swizzle> {
    let at = p.pos();
    if !(p.eat_str("Swizzle<") || p.eat_str("Sw<")) {
        return Err(p.err(at, "expected 'Sw<'"));
    }
    let b = p.int()?;
    p.expect(',')?;
    let m = p.int()?;
    p.expect(',')?;
    let s = p.int()?;
    p.expect('>')?;
    let conv = |v: i64| u32::try_from(v).ok();
    match (conv(b), conv(m), i32::try_from(s).ok()) {
        (Some(b), Some(m), Some(s)) => Swizzle::new(b, m, s).map_err(|e| p.err(at, e.to_string())),
        _ => Err(p.err(at, "swizzle parameters out of range")),
    }
}

impl FromStr for Swizzle {
    type Err = CuteError;

    /// Parses `Sw<B,M,S>` or `Swizzle<B,M,S>`.
    fn from_str(s: &str) -> Result<Swizzle> {
        let mut p = Parser::new(s);
        let sw = parse_swizzle(&mut p)?;
        p.end()?;
        Ok(sw)
    }
}

impl fmt::Display for Swizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sw<{},{},{}>", self.bits, self.base, self.shift)
    }
}

/// CuTe's `ComposedLayout`: `i ↦ swizzle(offset + layout(i))`, printed `Sw<3,3,3> o 0 o (8,64):(64,1)`.
///
/// ```
/// use axe_cute::ComposedLayout;
/// let c: ComposedLayout = "Sw<3,3,3> o 0 o (8,64):(64,1)".parse()?;
/// // Row 1, column 0 is offset 64 = 0b1_000_000; bit 6 is XORed into bit 3.
/// assert_eq!(c.eval(1)?, 64 ^ 8);
/// assert_eq!(c.to_string(), "Sw<3,3,3> o 0 o (8,64):(64,1)");
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ComposedLayout {
    /// The outer function.
    pub swizzle: Swizzle,
    /// Added to the layout's value before the swizzle.
    pub offset: i64,
    /// The inner layout.
    pub layout: Layout,
}

impl ComposedLayout {
    /// `swizzle ∘ offset ∘ layout`.
    pub fn new(swizzle: Swizzle, offset: i64, layout: Layout) -> ComposedLayout {
        ComposedLayout {
            swizzle,
            offset,
            layout,
        }
    }

    /// The size of the inner layout.
    pub fn size(&self) -> i64 {
        self.layout.size()
    }

    /// `swizzle(offset + layout(i))` for `i ∈ [0, size)`.
    pub fn eval(&self, i: i64) -> Result<i64> {
        self.swizzle.apply(add(self.offset, self.layout.eval(i)?)?)
    }

    /// `(swizzle ∘ offset ∘ L) ∘ B = swizzle ∘ offset ∘ (L ∘ B)`; **law**: `R(c) = self(B(c))`, from the
    /// composition law of `L ∘ B`.
    pub fn compose(&self, b: &Layout) -> Result<ComposedLayout> {
        Ok(ComposedLayout::new(
            self.swizzle,
            self.offset,
            composition(&self.layout, b)?,
        ))
    }
}

pub(crate) fn parse_composed(p: &mut Parser<'_>) -> Result<ComposedLayout> {
    let swizzle = parse_swizzle(p)?;
    p.expect('o')?;
    let save = p.pos();
    let first = p.int_tuple();
    let offset = match first {
        Ok(crate::IntTuple::Int(v)) if p.eat('o') => Some(v),
        _ => None,
    };
    if offset.is_none() {
        p.set_pos(save);
    }
    let layout = parse_layout(p)?;
    Ok(ComposedLayout::new(swizzle, offset.unwrap_or(0), layout))
}

impl FromStr for ComposedLayout {
    type Err = CuteError;

    /// Parses `Sw<B,M,S> o OFFSET o LAYOUT` or `Sw<B,M,S> o LAYOUT`.
    fn from_str(s: &str) -> Result<ComposedLayout> {
        let mut p = Parser::new(s);
        let c = parse_composed(&mut p)?;
        p.end()?;
        Ok(c)
    }
}

impl fmt::Display for ComposedLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} o {} o {}", self.swizzle, self.offset, self.layout)
    }
}

/// A layout as CuTe prints either kind: plain `shape:stride` or swizzled.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum AnyLayout {
    /// A plain layout.
    Plain(Layout),
    /// A swizzled layout.
    Composed(ComposedLayout),
}

impl AnyLayout {
    /// The plain layout, or the inner layout of a swizzled one (its shape, rank and depth are the
    /// composed layout's).
    pub fn layout(&self) -> &Layout {
        match self {
            AnyLayout::Plain(l) => l,
            AnyLayout::Composed(c) => &c.layout,
        }
    }

    /// The domain size.
    pub fn size(&self) -> i64 {
        match self {
            AnyLayout::Plain(l) => l.size(),
            AnyLayout::Composed(c) => c.size(),
        }
    }

    /// The value at flat index `i`.
    pub fn eval(&self, i: i64) -> Result<i64> {
        match self {
            AnyLayout::Plain(l) => l.eval(i),
            AnyLayout::Composed(c) => c.eval(i),
        }
    }

    /// `op` applied to the (inner) layout, a swizzle kept outermost: CuTe's algebra on a
    /// `ComposedLayout` for the operators that act on the domain side (composition, the divides,
    /// coalesce, filter).
    ///
    /// **Law**: `Sw ∘ off ∘ op(L)`; when `op(L)(c) = L(g(c))` for some `g` (composition: `g = B`; a
    /// divide: `g = (B, B*)`; coalesce: `g = id`), then `R(c) = self(g(c))`.
    ///
    /// ```
    /// use axe_cute::{AnyLayout, Layout};
    /// let sw: AnyLayout = "Sw<3,3,3> o 0 o (8,64):(64,1)".parse()?;
    /// let b: Layout = "(4,8):(1,8)".parse()?;
    /// let r = sw.map_inner(|l| l.compose(&b))?;
    /// assert_eq!(r.to_string(), "Sw<3,3,3> o 0 o (4,8):(64,1)");
    /// for i in 0..r.size() { assert_eq!(r.eval(i)?, sw.eval(b.eval(i)?)?); }
    /// # Ok::<(), axe_cute::CuteError>(())
    /// ```
    pub fn map_inner(&self, op: impl FnOnce(&Layout) -> Result<Layout>) -> Result<AnyLayout> {
        Ok(match self {
            AnyLayout::Plain(l) => AnyLayout::Plain(op(l)?),
            AnyLayout::Composed(c) => {
                AnyLayout::Composed(ComposedLayout::new(c.swizzle, c.offset, op(&c.layout)?))
            }
        })
    }
}

impl FromStr for AnyLayout {
    type Err = CuteError;

    /// Parses a plain or a swizzled layout.
    fn from_str(s: &str) -> Result<AnyLayout> {
        if s.trim_start().starts_with("Sw") {
            Ok(AnyLayout::Composed(s.parse()?))
        } else {
            Ok(AnyLayout::Plain(s.parse()?))
        }
    }
}

impl fmt::Display for AnyLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnyLayout::Plain(l) => write!(f, "{l}"),
            AnyLayout::Composed(c) => write!(f, "{c}"),
        }
    }
}
