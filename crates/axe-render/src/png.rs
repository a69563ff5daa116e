//! Rasterising SVG to PNG with resvg: labels in the embedded DejaVu Sans Mono (so a machine without fonts
//! still gets them), the system's fonts as a fallback, and a pixel budget.

use std::sync::Arc;

use resvg::usvg::fontdb;

use crate::error::{RenderError, Result};

/// The most pixels a PNG may have: 64 megapixels (256 MiB of RGBA while drawing).
pub const MAX_PNG_PIXELS: u64 = 64 * 1024 * 1024;

/// The family of the embedded font, named first in every SVG's `font-family`.
pub const FONT_FAMILY: &str = "DejaVu Sans Mono";

/// DejaVu Sans Mono (Bitstream Vera licence: `fonts/LICENSE`).
static FONT: &[u8] = include_bytes!("../fonts/DejaVuSansMono.ttf");

/// Which fonts the rasteriser may use for labels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fonts {
    /// The embedded font, then the system's fonts for characters it lacks.
    #[default]
    EmbeddedAndSystem,
    /// The embedded font alone (as on a machine with no fonts installed).
    EmbeddedOnly,
}

/// Rasterises an SVG document to PNG bytes at `scale` (1.0 = one pixel per SVG unit), with the embedded
/// font and the system's fonts. Errors when the picture would exceed [`MAX_PNG_PIXELS`].
pub fn to_png(svg: &str, scale: f32) -> Result<Vec<u8>> {
    to_png_with(svg, scale, Fonts::default())
}

/// [`to_png`] with a choice of fonts.
pub fn to_png_with(svg: &str, scale: f32, fonts: Fonts) -> Result<Vec<u8>> {
    if !scale.is_finite() || scale <= 0.0 {
        return Err(RenderError::Scale(scale.to_string()));
    }
    let mut opt = resvg::usvg::Options {
        font_family: FONT_FAMILY.to_string(),
        ..resvg::usvg::Options::default()
    };
    let db = opt.fontdb_mut();
    db.load_font_source(fontdb::Source::Binary(Arc::new(FONT)));
    if fonts == Fonts::EmbeddedAndSystem {
        db.load_system_fonts();
    }
    db.set_monospace_family(FONT_FAMILY);
    db.set_sans_serif_family(FONT_FAMILY);
    db.set_serif_family(FONT_FAMILY);
    let tree =
        resvg::usvg::Tree::from_str(svg, &opt).map_err(|e| RenderError::Raster(e.to_string()))?;
    let (width, height) = pixels(tree.size().width(), tree.size().height(), scale)?;
    let mut pixmap = resvg::tiny_skia::Pixmap::new(width, height)
        .ok_or_else(|| RenderError::Raster(format!("cannot allocate {width}×{height} pixels")))?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| RenderError::Raster(e.to_string()))
}

/// The PNG's size in pixels for an SVG of `w`×`h` units at `scale`, within the budget.
fn pixels(w: f32, h: f32, scale: f32) -> Result<(u32, u32)> {
    let (w, h) = (
        (f64::from(w) * f64::from(scale)).ceil(),
        (f64::from(h) * f64::from(scale)).ceil(),
    );
    if !(w >= 1.0 && h >= 1.0) {
        return Err(RenderError::Raster("empty picture".into()));
    }
    let too_large = || RenderError::PngTooLarge {
        width: w as u64,
        height: h as u64,
        max_pixels: MAX_PNG_PIXELS,
    };
    // Compared in f64 first: the product of two huge sides must not wrap.
    if w * h > MAX_PNG_PIXELS as f64 {
        return Err(too_large());
    }
    let width = u32::try_from(w as u64).map_err(|_| too_large())?;
    let height = u32::try_from(h as u64).map_err(|_| too_large())?;
    Ok((width, height))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn sizes_within_the_budget_pass_and_larger_ones_fail() {
        assert_eq!(pixels(100.0, 50.0, 2.0).unwrap(), (200, 100));
        assert!(pixels(8192.0, 8192.0, 1.0).is_ok());
        assert!(matches!(
            pixels(8192.0, 8193.0, 1.0),
            Err(RenderError::PngTooLarge { .. })
        ));
        assert!(matches!(
            pixels(1.0e30, 1.0e30, 1.0),
            Err(RenderError::PngTooLarge { .. })
        ));
        assert!(pixels(0.0, 10.0, 1.0).is_err());
    }

    #[test]
    fn bad_scales_are_refused() {
        let svg = r#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>"#;
        for s in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            assert!(matches!(to_png(svg, s), Err(RenderError::Scale(_))), "{s}");
        }
        assert!(to_png(svg, 1.0).is_ok());
    }
}
