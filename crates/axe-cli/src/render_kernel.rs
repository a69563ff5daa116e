//! `axe render` for kernel layouts: CuTe layouts (the `print_layout` grid, TV layouts over their tile) and
//! Triton linear or Gluon layouts (who holds each element), adapted to `axe-render`'s plain data.

use axe_render::Picture;
use clap::ValueEnum;

/// Which notation the input is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Source {
    /// A CuTe layout: `(4,2):(2,1)`, `Sw<3,3,3> o 0 o (8,64):(64,1)` (a TV layout with --tv).
    Cute,
    /// A Triton linear layout (`{"in": ...}`, `#ttg.linear<{...}>`) or a Gluon layout (`BlockedLayout(...)`).
    Triton,
    /// An XLA shape with layout.
    Xla,
    /// An Axe layout.
    Axe,
}

/// `BlockedLayout(`-style text: a name ending in `Layout`, then `(`.
fn looks_gluon(t: &str) -> bool {
    t.split_once('(').is_some_and(|(name, _)| {
        let name = name.trim_end();
        name.ends_with("Layout") && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The notation of `text` when it is a CuTe or Triton/Gluon layout; `None` leaves it to the XLA and Axe
/// readers (an XLA tuple shape, which also starts with `(`, included).
pub fn detect(text: &str) -> Option<Source> {
    let t = text.trim_start();
    if t.starts_with('{') || t.starts_with('#') || looks_gluon(t) {
        Some(Source::Triton)
    } else if t.starts_with("Sw<")
        || t.starts_with(|c: char| c.is_ascii_digit())
        || (t.starts_with('(') && axe_xla::parse_shape(t).is_err())
    {
        Some(Source::Cute)
    } else {
        None
    }
}

/// The picture of a CuTe layout (see [`axe_render::cute_picture`]).
pub fn cute(text: &str, tv: bool, shape: Option<&[u64]>) -> Result<Picture, String> {
    axe_render::cute_picture(text, tv, shape).map_err(|e| e.to_string())
}

/// The picture of a Triton or Gluon layout (see [`axe_render::triton_picture`]).
pub fn triton(text: &str, shape: Option<&[u64]>) -> Result<Picture, String> {
    axe_render::triton_picture(text, shape).map_err(|e| e.to_string())
}
