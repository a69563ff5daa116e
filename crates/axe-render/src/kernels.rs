//! Pictures of kernel layouts (feature `kernels`): CuTe layouts (the `print_layout` grid, TV layouts over
//! their tile) and Triton linear or Gluon layouts (who holds each element), adapted to this crate's
//! plain pictures.

use axe_cute::{AnyLayout, Layout as CuteLayout};
use axe_triton::gluon::parse_gluon;
use axe_triton::{hardware_map, out_shape, parse_linear, LinearLayout};

use crate::{
    cute_layout_picture, hardware_picture, tv_picture, Holders, Picture, RenderError, Result,
    MAX_HOLDERS,
};

/// The picture of a CuTe layout (plain or swizzled, as CuTe prints it): its `print_layout` grid (rank 1
/// or 2), or with `tv` the thread/value picture of a TV layout `(T, V) → tile index` over the tile
/// `shape` (`[M, N]`, or `[N]` for one row).
pub fn cute_picture(text: &str, tv: bool, shape: Option<&[u64]>) -> Result<Picture> {
    cute(text, tv, shape).map_err(RenderError::Input)
}

/// The picture of a Triton linear layout (JSON bases or `#ttg.linear<{...}>`; `shape`, if given, must be
/// its out-dims) or of a Gluon layout over `shape`, including shapes Triton cannot lay out: which
/// register, lane and warp hold each element.
pub fn triton_picture(text: &str, shape: Option<&[u64]>) -> Result<Picture> {
    triton(text, shape).map_err(RenderError::Input)
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The picture of a CuTe layout: its `print_layout` grid, or with `tv` its thread/value picture over
/// the tile `shape` (`M,N`, or `N` for a one-row tile).
fn cute(text: &str, tv: bool, shape: Option<&[u64]>) -> std::result::Result<Picture, String> {
    let text = text.trim();
    if tv {
        let shape = shape.ok_or(
            "a TV layout is drawn over its tile: give the tile's shape, --shape M,N (or N)",
        )?;
        return cute_tv(text, shape);
    }
    if shape.is_some() {
        return Err(
            "--shape is the tile of a TV layout (with --tv); a CuTe layout's grid comes from its modes"
                .into(),
        );
    }
    let l: AnyLayout = text.parse().map_err(err)?;
    let inner = l.layout();
    let (rows, cols) = match inner.rank() {
        0 | 1 => (1, l.size()),
        2 => (
            inner.mode(0).map_err(err)?.size(),
            inner.mode(1).map_err(err)?.size(),
        ),
        r => {
            return Err(format!(
                "CuTe's print_layout draws layouts of rank 1 or 2; {l} has rank {r} (group its modes, e.g. (A,(B,C)))"
            ))
        }
    };
    let to_u64 = |x: i64| u64::try_from(x).map_err(|_| RenderError::Input(format!("size {x}")));
    let offset = |m: u64, n: u64| -> Result<i64> {
        let index = i64::try_from(n)
            .ok()
            .and_then(|n| n.checked_mul(rows))
            .zip(i64::try_from(m).ok())
            .and_then(|(a, m)| a.checked_add(m))
            .ok_or_else(|| RenderError::Input(format!("coordinate ({m}, {n}) overflows")))?;
        l.eval(index).map_err(|e| RenderError::Input(e.to_string()))
    };
    // Sw<B,M,S> permutes 2^B units of 2^M offsets (2^(M+|S|) for a negative shift): colour by unit.
    let colour = match &l {
        AnyLayout::Composed(c) if c.swizzle.params().0 > 0 => {
            let (bits, base, shift) = c.swizzle.params();
            let low = if shift < 0 {
                base + shift.unsigned_abs()
            } else {
                base
            };
            (
                1u64.checked_shl(low).unwrap_or(1),
                1u64.checked_shl(bits.min(3)).unwrap_or(8),
            )
        }
        _ => (1, 8),
    };
    cute_layout_picture(
        &l.to_string(),
        (to_u64(rows).map_err(err)?, to_u64(cols).map_err(err)?),
        colour,
        &offset,
    )
    .map_err(err)
}

/// The TV picture: every (thread, value) pair of `text`, a TV layout `(T, V) → tile index`, placed on the
/// tile (index `m + M·n`, CuTe's column-major order).
fn cute_tv(text: &str, tile: &[u64]) -> std::result::Result<Picture, String> {
    let tv: CuteLayout = text
        .parse()
        .map_err(|e| format!("a TV layout is a plain CuTe layout ((T, V) → tile index): {e}"))?;
    if tv.rank() != 2 {
        return Err(format!(
            "a TV layout has two modes (thread, value); {tv} has {}",
            tv.rank()
        ));
    }
    let (m, n) = match tile {
        [n] => (1u64, *n),
        [m, n] => (*m, *n),
        _ => {
            return Err(format!(
                "the tile of a TV layout is M,N (or N), not {tile:?}"
            ))
        }
    };
    let cells = m
        .checked_mul(n)
        .filter(|&c| c > 0)
        .ok_or_else(|| format!("a {}×{} tile", m, n) + " has no cells or too many")?;
    let size = u64::try_from(tv.size()).map_err(err)?;
    if size > MAX_HOLDERS as u64 {
        return Err(format!(
            "the TV layout has {size} (thread, value) pairs; at most {MAX_HOLDERS} are drawn"
        ));
    }
    let threads = u64::try_from(tv.mode(0).map_err(err)?.size()).map_err(err)?;
    let values = u64::try_from(tv.mode(1).map_err(err)?.size()).map_err(err)?;
    let dims = [
        ("thread".to_string(), threads),
        ("value".to_string(), values),
    ];
    let shape: Vec<u64> = if tile.len() == 1 { vec![n] } else { vec![m, n] };
    let mut holders = Holders::new(&shape, &dims).map_err(err)?;
    for i in 0..size {
        let (t, v) = (i % threads, i / threads);
        // `i < size <= MAX_HOLDERS` fits in i64.
        let x = tv.eval(i as i64).map_err(err)?;
        let x = u64::try_from(x)
            .ok()
            .filter(|&x| x < cells)
            .ok_or_else(|| {
                format!("thread {t}, value {v} maps to {x}, outside the {m}×{n} tile")
            })?;
        let index = if tile.len() == 1 {
            vec![x]
        } else {
            vec![x % m, x / m]
        };
        holders.add(&index, &[t, v]).map_err(err)?;
    }
    tv_picture(&format!("TV layout {tv} over the tile {tile:?}"), holders).map_err(err)
}

/// The picture of a Triton linear layout (its out-dims are the tensor; `shape`, if given, must match) or
/// a Gluon layout over `shape`: through Triton's linear layout where it exists, else through the Axe
/// layout and its hardware map (shapes that are not powers of two).
fn triton(text: &str, shape: Option<&[u64]>) -> std::result::Result<Picture, String> {
    let t = text.trim();
    if axe_triton::gluon::is_linear_text(t) {
        let ll = parse_linear(t).map_err(err)?;
        let out = out_shape(&ll);
        if let Some(s) = shape {
            if s != out.as_slice() {
                return Err(format!(
                    "--shape {s:?} differs from the layout's out-dims {out:?}; leave it out"
                ));
            }
        }
        return with_aliases(linear_picture(&ll, &defining_line(t)), t);
    }
    let g = parse_gluon(t).map_err(err)?;
    let shape = shape.ok_or("a Gluon layout is drawn over a tensor shape: --shape 32,16")?;
    let title = format!("{} over {shape:?}", defining_line(t));
    with_aliases(gluon_picture(&g, shape, &title), t)
}

/// A layout's text split into its TTGIR alias lines (`#mma = #ttg.nvidia_mma<...>`, each a line of
/// its own before the layout) and the layout itself: the rest, on one line (a title is one line).
fn split_aliases(t: &str) -> (Vec<&str>, String) {
    let lines: Vec<&str> = t.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let is_alias = |l: &str| {
        l.strip_prefix('#').is_some_and(|rest| {
            let name = rest.split('=').next().unwrap_or("").trim();
            rest.contains('=')
                && !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        })
    };
    let n = lines.iter().take_while(|l| is_alias(l)).count();
    let n = n.min(lines.len().saturating_sub(1));
    (lines[..n].to_vec(), lines[n..].join(" "))
}

/// The one-line title of a layout's text: the layout without its alias lines ([`split_aliases`]).
fn defining_line(t: &str) -> String {
    split_aliases(t).1
}

/// `picture` (titled by the layout's [`defining_line`]) with the alias lines of `t` kept as a note under
/// the title: `where #mma = #ttg.nvidia_mma<...>`.
fn with_aliases(
    picture: std::result::Result<Picture, String>,
    t: &str,
) -> std::result::Result<Picture, String> {
    let mut p = picture?;
    let (aliases, _) = split_aliases(t);
    if !aliases.is_empty() {
        p.notes.insert(0, format!("where {}", aliases.join("; ")));
    }
    Ok(p)
}

/// The picture of Gluon layout `g` over `shape`, titled `title`.
fn gluon_picture(
    g: &axe_triton::gluon::GluonLayout,
    shape: &[u64],
    title: &str,
) -> std::result::Result<Picture, String> {
    match g.to_linear(shape) {
        Ok(ll) => linear_picture(&ll, title),
        Err(why) => {
            let axe = g
                .to_axe(shape)
                .map_err(|e| format!("{why}; nor has it an Axe layout: {e}"))?;
            let hw =
                hardware_map(&axe, shape, &["register", "lane", "warp", "block"]).map_err(err)?;
            let mut holders = Holders::new(shape, &hw.in_dims).map_err(err)?;
            for (k, index) in hw.map.iter().enumerate() {
                holders
                    .add(index, &unpack(k as u64, &hw.in_dims))
                    .map_err(err)?;
            }
            hardware_picture(title, holders).map_err(err)
        }
    }
}

/// Every input of a linear layout and the tensor element it holds.
fn linear_picture(ll: &LinearLayout, title: &str) -> std::result::Result<Picture, String> {
    if ll.in_size() > MAX_HOLDERS as u64 {
        return Err(format!(
            "the layout has {} hardware inputs; at most {MAX_HOLDERS} are drawn",
            ll.in_size()
        ));
    }
    let dims = ll.in_dim_sizes();
    let mut holders = Holders::new(&out_shape(ll), &dims).map_err(err)?;
    for k in 0..ll.in_size() {
        let index = ll.apply_flat(k).map_err(err)?;
        holders.add(&index, &unpack(k, &dims)).map_err(err)?;
    }
    hardware_picture(title, holders).map_err(err)
}

/// The coordinates of flat input `k` over `dims`, the first fastest.
fn unpack(mut k: u64, dims: &[(String, u64)]) -> Vec<u64> {
    dims.iter()
        .map(|(_, s)| {
            let s = (*s).max(1);
            let v = k % s;
            k /= s;
            v
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const MMA: &str = "#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], CTAsPerCGA = [1, 1], CTASplitNum = [1, 1], CTAOrder = [1, 0], instrShape = [16, 8]}>";
    const DOT: &str = "#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>";

    #[test]
    fn alias_lines_split_from_the_layout() {
        let text = format!("{MMA}\n{DOT}\n");
        assert_eq!(split_aliases(&text), (vec![MMA], DOT.to_string()));
        // One line: no aliases.
        assert_eq!(split_aliases(DOT), (vec![], DOT.to_string()));
        // A layout broken over lines (no alias header) is joined, not cut to its last line.
        let broken = "BlockedLayout(size_per_thread=[1, 4],\n  threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])";
        let (aliases, layout) = split_aliases(broken);
        assert!(aliases.is_empty());
        assert_eq!(
            layout,
            "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])"
        );
    }

    /// The title of a picture of an aliased layout is its defining line; the alias is a note.
    #[test]
    fn an_aliased_layout_has_a_one_line_title() {
        let text = format!("{MMA}\n{DOT}");
        let p = triton_picture(&text, Some(&[64, 16])).unwrap();
        assert_eq!(p.title, format!("{DOT} over [64, 16]"));
        assert_eq!(p.notes[0], format!("where {MMA}"));
        for t in [crate::to_svg(&p), crate::to_text(&p, false)] {
            let title_line = t.lines().find(|l| l.contains("dot_op")).unwrap();
            assert!(title_line.contains("over [64, 16]"), "{title_line}");
        }
    }
}
