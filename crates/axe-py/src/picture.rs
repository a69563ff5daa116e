//! Pictures for notebooks and files: SVG from `axe-render`, written as SVG, PNG or text.

use pyo3::prelude::*;

use crate::errors::AxeError;

/// An `axe-render` error as a Python exception.
pub fn render_error(e: impl std::fmt::Display) -> PyErr {
    AxeError::new_err(e.to_string())
}

/// Writes `picture` to `path` in the format its extension names (`.svg`, `.png`, `.txt`), through a
/// temporary file in the destination's folder renamed into place.
pub fn write(picture: &axe_render::Picture, path: &str) -> PyResult<()> {
    let ext = std::path::Path::new(path)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let bytes = match ext.as_deref() {
        Some("svg") => axe_render::to_svg(picture).into_bytes(),
        Some("png") => {
            axe_render::to_png(&axe_render::to_svg(picture), 2.0).map_err(render_error)?
        }
        Some("txt") => axe_render::to_text(picture, false).into_bytes(),
        _ => {
            return Err(AxeError::new_err(format!(
                "{path}: axe draws .svg, .png and .txt pictures; name the file accordingly"
            )))
        }
    };
    let dest = std::path::Path::new(path);
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".axe-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| AxeError::new_err(format!("{path}: {e}")))?;
    std::io::Write::write_all(&mut tmp, &bytes)
        .map_err(|e| AxeError::new_err(format!("{path}: {e}")))?;
    tmp.persist(dest)
        .map_err(|e| AxeError::new_err(format!("{path}: {}", e.error)))?;
    Ok(())
}
