//! `composition(A, B)`: `R(c) = A(B(c))`, and by-mode tilers.

use std::fmt;
use std::str::FromStr;

use crate::coalesce::coalesce_modes;
use crate::error::{mul, no_layout, CuteError, Result};
use crate::fit::{first_mismatch, fit, preview, MAX_CHECK};
use crate::int_tuple::IntTuple;
use crate::layout::{eval_modes, parse_layout, Layout};
use crate::parse::Parser;

/// What a layout is divided by or multiplied with: one layout, or a tuple of tilers applied mode by mode
/// (`<2:1,(2,2):(1,4)>`; CuTe's `Tile<...>`). A shape written alone is CuTe's tuple tiler, by mode and
/// recursively: each integer `n` is the layout `n:1` and each nested tuple a nested tiler, so `(2,4)` is
/// `<2:1,4:1>` and `(2,(2,3))` is `<2:1,<2:1,3:1>>`; with a stride, `(2,4):(1,2)` is one layout.
///
/// ```
/// let t: axe_cute::Tiler = "(2,(2,3))".parse()?;
/// assert_eq!(t.to_string(), "<2:1,<2:1,3:1>>");
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Tiler {
    /// The whole layout is composed with / divided by this layout.
    Layout(Layout),
    /// Mode `i` of the layout is handled by element `i`; later modes are kept as they are.
    Modes(Vec<Tiler>),
}

impl Tiler {
    /// CuTe's tiler of a shape: an integer `n` is the layout `n:1`, a tuple the by-mode tiler of its
    /// elements, recursively (`(2,(2,3))` is `<2:1,<2:1,3:1>>`).
    pub fn from_shape(shape: &IntTuple) -> Result<Tiler> {
        match shape {
            IntTuple::Int(s) => Ok(Tiler::Layout(Layout::int(*s, 1)?)),
            IntTuple::Tuple(v) if v.is_empty() => Err(CuteError::BadLayout(
                "the empty shape () is no tiler".into(),
            )),
            IntTuple::Tuple(v) => Ok(Tiler::Modes(
                v.iter().map(Tiler::from_shape).collect::<Result<_>>()?,
            )),
        }
    }
}

pub(crate) fn parse_tiler(p: &mut Parser<'_>) -> Result<Tiler> {
    if p.eat('<') {
        p.enter()?;
        let mut v = vec![parse_tiler(p)?];
        while p.eat(',') {
            v.push(parse_tiler(p)?);
        }
        p.expect('>')?;
        p.leave();
        Ok(Tiler::Modes(v))
    } else {
        // A shape alone is CuTe's tuple tiler (by mode, recursively); with a stride it is a layout.
        let save = p.pos();
        let start = p.pos();
        if let Ok(shape @ IntTuple::Tuple(_)) = p.int_tuple() {
            if p.peek() != Some(':') {
                return Tiler::from_shape(&shape).map_err(|e| p.err(start, e.to_string()));
            }
        }
        p.set_pos(save);
        Ok(Tiler::Layout(parse_layout(p)?))
    }
}

impl FromStr for Tiler {
    type Err = CuteError;

    /// Parses a layout or `<T0,T1,...>`.
    fn from_str(s: &str) -> Result<Tiler> {
        let mut p = Parser::new(s);
        let t = parse_tiler(&mut p)?;
        p.end()?;
        Ok(t)
    }
}

impl fmt::Display for Tiler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tiler::Layout(l) => write!(f, "{l}"),
            Tiler::Modes(v) => {
                f.write_str("<")?;
                for (i, t) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(">")
            }
        }
    }
}

/// The leaves of `A` for composition: coalesced, at least one mode; the last mode runs on past its
/// extent (A is evaluated at any `x ≥ 0` as CuTe does). As in CuTe, a last leaf of extent 1 is kept
/// with its stride to run on (`(4,3,1):(3,1,0)` runs on with stride 0, `1:1` with stride 1), where
/// plain coalescing would drop it.
pub(crate) fn extended_modes(a: &Layout) -> Vec<(i64, i64)> {
    let mut flat = a.modes_flat();
    if let Some(last) = flat.last_mut() {
        if last.0 == 1 {
            // Extent 2 stands for "runs on": only the last mode's stride matters past the others.
            last.0 = 2;
        }
    }
    let m = coalesce_modes(flat);
    if m.is_empty() {
        vec![(1, 0)]
    } else {
        m
    }
}

/// `A(x)` for any `x ≥ 0`, the last coalesced mode running on.
pub(crate) fn eval_extended(a: &[(i64, i64)], x: i64) -> Result<i64> {
    eval_modes(a, x)
}

/// CuTe's closed form of `A ∘ s:d` when every divisibility condition holds exactly: divide `d` out of
/// `A`'s modes (each mode's extent divides what is left of `d` or the reverse), then take `s` indices
/// (same condition). `None` when a condition fails.
pub(crate) fn compose_leaf(a: &[(i64, i64)], s: i64, d: i64) -> Result<Option<Vec<(i64, i64)>>> {
    if s == 1 {
        return Ok(Some(Vec::new()));
    }
    if d == 0 {
        return Ok(Some(vec![(s, 0)]));
    }
    let k = a.len();
    let mut j = 0usize;
    let mut rest_stride = d;
    let mut cur;
    loop {
        let (aj, dj) = a[j];
        if j + 1 == k {
            cur = (aj, mul(dj, rest_stride)?);
            break;
        }
        if rest_stride == 1 {
            cur = (aj, dj);
            break;
        }
        if rest_stride % aj == 0 {
            rest_stride /= aj;
            j += 1;
        } else if aj % rest_stride == 0 {
            cur = (aj / rest_stride, mul(dj, rest_stride)?);
            break;
        } else {
            return Ok(None);
        }
    }
    let mut out = Vec::with_capacity(k - j);
    let mut rest = s;
    loop {
        if j + 1 == k {
            out.push((rest, cur.1));
            break;
        }
        if rest % cur.0 == 0 {
            out.push(cur);
            rest /= cur.0;
            if rest == 1 {
                break;
            }
            j += 1;
            cur = a[j];
        } else if cur.0 % rest == 0 {
            out.push((rest, cur.1));
            break;
        } else {
            return Ok(None);
        }
    }
    Ok(Some(coalesce_modes(out)))
}

/// Whether the leaves of `B` (extent > 1, stride ≠ 0, sorted by stride) satisfy `s_l·d_l | d_{l+1}`:
/// then, each leaf composed by the closed form, `B(c) = Σ c_l·d_l` has its digits in disjoint ranges of a
/// refinement of `A`'s radix, so `A(B(c)) = Σ A(c_l·d_l)` and the leaf-wise result is exact.
fn leaves_nest(leaves: &[(i64, i64)]) -> bool {
    let mut l: Vec<(i64, i64)> = leaves
        .iter()
        .copied()
        .filter(|&(s, d)| s > 1 && d != 0)
        .collect();
    l.sort_by_key(|&(_, d)| d);
    l.windows(2).all(|w| {
        w[0].0
            .checked_mul(w[0].1)
            .is_some_and(|span| span > 0 && w[1].1 % span == 0)
    })
}

/// Rebuilds `tree` with leaf `k` replaced by the shape/stride of `parts[k]`.
fn replace_leaves(
    tree: &IntTuple,
    parts: &mut impl Iterator<Item = Vec<(i64, i64)>>,
) -> (IntTuple, IntTuple) {
    match tree {
        IntTuple::Int(_) => {
            let m = parts.next().unwrap_or_default();
            match m.as_slice() {
                [] => (IntTuple::Int(1), IntTuple::Int(0)),
                [(s, d)] => (IntTuple::Int(*s), IntTuple::Int(*d)),
                _ => (
                    IntTuple::Tuple(m.iter().map(|x| IntTuple::Int(x.0)).collect()),
                    IntTuple::Tuple(m.iter().map(|x| IntTuple::Int(x.1)).collect()),
                ),
            }
        }
        IntTuple::Tuple(v) => {
            let mut s = Vec::with_capacity(v.len());
            let mut d = Vec::with_capacity(v.len());
            for t in v {
                let (a, b) = replace_leaves(t, parts);
                s.push(a);
                d.push(b);
            }
            (IntTuple::Tuple(s), IntTuple::Tuple(d))
        }
    }
}

/// `composition(A, B)` (`A ∘ B`).
///
/// **Law**: `R(c) = A(B(c))` for every index `c ∈ [0, size(B))`, `size(R) = size(B)`, and when `B`'s
/// shape is a tuple `rank(R) = rank(B)` and `size(R_i) = size(B_i)` for every top-level mode, where `A` is
/// evaluated past its size as [`Layout::eval`] does (the last leaf runs on, even of extent 1, as in CuTe:
/// `(1):(1) ∘ 4:1 = 4:1`, `(4,3,1):(3,1,0) ∘ 24:1 = (4,3,2):(3,1,0)`). `B` must not take negative values.
///
/// The result follows CuTe's closed form leaf by leaf when its divisibility conditions hold and `B`'s
/// leaves nest (a proof, no enumeration). Otherwise the function `c ↦ A(B(c))` is enumerated (up to
/// [`MAX_CHECK`] points): the leaf-wise answer is checked, else each top-level mode is fitted exactly,
/// and the whole is checked. So `(4,4):(0,1) ∘ 2:3 = 2:0` (pycute refuses it) and
/// `(4,3):(1,10) ∘ 6:1` is an error, since `0,1,2,3,10,11` is no layout (pycute answers a layout of
/// size 8).
///
/// ```
/// use axe_cute::Layout;
/// let a: Layout = "(6,2):(8,2)".parse()?;
/// let b: Layout = "(4,3):(3,1)".parse()?;
/// assert_eq!(a.compose(&b)?.to_string(), "((2,2),3):((24,2),8)");
/// let a: Layout = "(4,4):(0,1)".parse()?;
/// assert_eq!(a.compose(&"2:3".parse()?)?.to_string(), "2:0");
/// let a: Layout = "(4,3):(1,10)".parse()?;
/// assert!(a.compose(&"6:1".parse()?).is_err());
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
pub fn composition(a: &Layout, b: &Layout) -> Result<Layout> {
    compose_modes(&extended_modes(a), &|| a.to_string(), b)
}

/// [`composition`] with `A` given by its coalesced leaves (at least one; the last runs on); `a_text`
/// prints `A` for messages.
pub(crate) fn compose_modes(
    am: &[(i64, i64)],
    a_text: &dyn Fn() -> String,
    b: &Layout,
) -> Result<Layout> {
    const OP: &str = "composition";
    let leaves = b.modes_flat();
    let lo = leaves
        .iter()
        .filter(|m| m.1 < 0)
        .try_fold(0i64, |acc, &(s, d)| crate::error::add(acc, mul(s - 1, d)?))?;
    if lo < 0 {
        return Err(no_layout(
            OP,
            format!("B = {b} takes the value {lo}, outside A's domain (indices are at least 0)"),
        ));
    }
    let mut closed = Vec::with_capacity(leaves.len());
    for &(s, d) in &leaves {
        closed.push(compose_leaf(am, s, d)?);
    }
    if closed.iter().all(Option::is_some) && leaves_nest(&leaves) {
        let (s, d) = replace_leaves(b.shape(), &mut closed.into_iter().flatten());
        return Layout::new(s, d);
    }
    if b.size() > MAX_CHECK {
        return Err(CuteError::TooLarge(format!(
            "{} ∘ {b}: outside CuTe's closed form, and {} points are too many to check",
            a_text(),
            b.size()
        )));
    }
    let f = |i: i64| eval_extended(am, b.eval(i)?);
    // Leaf-wise, fitting the leaves the closed form does not cover.
    let mut parts = Vec::with_capacity(leaves.len());
    for (&(s, d), c) in leaves.iter().zip(closed) {
        match c {
            Some(m) => parts.push(Some(m)),
            None => {
                let vals = (0..s)
                    .map(|k| eval_extended(am, mul(k, d)?))
                    .collect::<Result<Vec<_>>>()?;
                parts.push(fit(&vals)?);
            }
        }
    }
    if parts.iter().all(Option::is_some) {
        let (s, d) = replace_leaves(b.shape(), &mut parts.into_iter().flatten());
        let r = Layout::new(s, d)?;
        if first_mismatch(&r, f)?.is_none() {
            return Ok(r);
        }
    }
    // Mode-wise: each top-level mode of B fitted exactly, then the sum checked.
    let mut modes = Vec::new();
    for (i, bi) in b.modes()?.iter().enumerate() {
        let vals = bi
            .values(MAX_CHECK)?
            .into_iter()
            .map(|x| eval_extended(am, x))
            .collect::<Result<Vec<_>>>()?;
        match fit(&vals)? {
            Some(m) => modes.push(Layout::from_modes(&m)?),
            None => {
                return Err(no_layout(
                    OP,
                    format!(
                        "A ∘ (mode {i} of B) takes the values {}, which no layout of size {} takes",
                        preview(&vals),
                        vals.len()
                    ),
                ))
            }
        }
    }
    let r = match b.shape() {
        IntTuple::Int(_) => modes.pop().map_or_else(|| Layout::int(1, 0), Ok)?,
        IntTuple::Tuple(_) => Layout::concat(&modes)?,
    };
    match first_mismatch(&r, f)? {
        None => Ok(r),
        Some(x) => Err(no_layout(
            OP,
            format!(
                "A(B(c)) is not a sum over B's modes: at index {x}, A(B({x})) = {} but the modes alone give {}",
                f(x)?,
                r.eval(x)?
            ),
        )),
    }
}

/// By-mode composition: `A ∘ <B0, B1, ...> = (A_0 ∘ B0, A_1 ∘ B1, ..., A_k, ...)`; a layout tiler is
/// [`composition`].
pub fn composition_tiler(a: &Layout, t: &Tiler) -> Result<Layout> {
    by_mode(a, t, &composition)
}

/// A by-mode tiler names at most as many modes as the layout has.
pub(crate) fn tiler_fits(a: &Layout, t: &Tiler, modes: &[Tiler]) -> Result<()> {
    if modes.len() > a.rank() {
        return Err(CuteError::RankMismatch(format!(
            "the tiler {t} has {} modes, the layout {a} has {}",
            modes.len(),
            a.rank()
        )));
    }
    Ok(())
}

/// Applies `op` to the whole layout or mode by mode, keeping the modes the tiler does not name.
pub(crate) fn by_mode(
    a: &Layout,
    t: &Tiler,
    op: &dyn Fn(&Layout, &Layout) -> Result<Layout>,
) -> Result<Layout> {
    match t {
        Tiler::Layout(b) => op(a, b),
        Tiler::Modes(v) => {
            tiler_fits(a, t, v)?;
            let mut modes = Vec::new();
            for (i, ai) in a.modes()?.into_iter().enumerate() {
                modes.push(match v.get(i) {
                    Some(ti) => by_mode(&ai, ti, op)?,
                    None => ai,
                });
            }
            Layout::concat_owned(modes)
        }
    }
}

impl Layout {
    /// `self ∘ b`; see [`composition`].
    pub fn compose(&self, b: &Layout) -> Result<Layout> {
        composition(self, b)
    }
}
