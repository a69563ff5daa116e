//! Rasterising SVG to PNG with resvg, using the system's fonts for the labels.

use crate::error::{RenderError, Result};

/// Rasterises an SVG document to PNG bytes at `scale` (1.0 = one pixel per SVG unit).
pub fn to_png(svg: &str, scale: f32) -> Result<Vec<u8>> {
    let mut opt = resvg::usvg::Options::default();
    opt.fontdb_mut().load_system_fonts();
    let tree =
        resvg::usvg::Tree::from_str(svg, &opt).map_err(|e| RenderError::Raster(e.to_string()))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or_else(|| RenderError::Raster("empty picture".into()))?;
    let mut pixmap =
        resvg::tiny_skia::Pixmap::new(size.width(), size.height()).ok_or_else(|| {
            RenderError::Raster(format!(
                "cannot allocate {}x{} pixels",
                size.width(),
                size.height()
            ))
        })?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| RenderError::Raster(e.to_string()))
}
