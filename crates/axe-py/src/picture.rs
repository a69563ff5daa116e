//! Pictures for notebooks and files: SVG from `axe-render`, written as SVG, PNG or text.

use pyo3::prelude::*;

use crate::errors::AxeError;

/// An `axe-render` error as a Python exception.
pub fn render_error(e: impl std::fmt::Display) -> PyErr {
    AxeError::new_err(crate::errors::pythonize(&e.to_string()))
}

/// Writes `picture` to `path` in the format its extension names (`.svg`, `.png`, `.txt`), through a
/// temporary file in the destination's folder renamed into place. A new file gets the permissions the
/// umask leaves of `0666` (as any program's new file); a file replaced keeps its own.
pub fn write(picture: &axe_render::Picture, path: impl AsRef<std::path::Path>) -> PyResult<()> {
    write_drawing(None, || Ok(std::borrow::Cow::Borrowed(picture)), path)
}

/// [`write`] of a drawing that has its own SVG (`svg`, also rasterised for `.png`), with `picture`
/// giving the `.txt` form (and the SVG when `svg` is `None`); `picture` runs only when needed.
pub fn write_drawing<'a>(
    svg: Option<&str>,
    picture: impl FnOnce() -> PyResult<std::borrow::Cow<'a, axe_render::Picture>>,
    path: impl AsRef<std::path::Path>,
) -> PyResult<()> {
    let path = path.as_ref();
    let shown = path.display();
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let bytes = match ext.as_deref() {
        Some("svg") => match svg {
            Some(s) => s.as_bytes().to_vec(),
            None => axe_render::to_svg(&*picture()?).into_bytes(),
        },
        Some("png") => {
            let s = match svg {
                Some(s) => s.to_string(),
                None => axe_render::to_svg(&*picture()?),
            };
            axe_render::to_png(&s, 2.0).map_err(render_error)?
        }
        Some("txt") => axe_render::to_text(&*picture()?, false).into_bytes(),
        _ => {
            return Err(AxeError::new_err(format!(
                "{shown}: axe draws .svg, .png and .txt pictures; name the file accordingly"
            )))
        }
    };
    write_bytes(path, &bytes)
}

/// Writes `bytes` to `path` as [`write`] does: through a temporary file in the destination's folder,
/// renamed into place, with the permissions the umask leaves (a file replaced keeps its own).
pub fn write_bytes(path: &std::path::Path, bytes: &[u8]) -> PyResult<()> {
    let shown = path.display();
    let dest = path;
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let mode = match std::fs::metadata(dest) {
        Ok(m) if m.is_dir() => {
            return Err(AxeError::new_err(format!(
                "{shown} is a folder; give a file name"
            )))
        }
        Ok(m) => mode_of(&m),
        Err(_) => 0o666,
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".axe-").suffix(".tmp");
    #[cfg(unix)]
    builder.permissions(permissions(mode));
    #[cfg(not(unix))]
    let _ = mode;
    let mut tmp = builder
        .tempfile_in(dir)
        .map_err(|e| AxeError::new_err(folder_error(&shown.to_string(), dir, &e)))?;
    std::io::Write::write_all(&mut tmp, bytes)
        .map_err(|e| AxeError::new_err(format!("{shown}: {e}")))?;
    tmp.persist(dest)
        .map_err(|e| AxeError::new_err(format!("{shown}: {}", e.error)))?;
    Ok(())
}

/// Why no file can be made in `dir`, the picture's folder, in the user's terms (as the CLI says it):
/// the folder, never the hidden temporary file's name that the io error carries.
fn folder_error(path: &str, dir: &std::path::Path, e: &std::io::Error) -> String {
    let shown = dir.display();
    match std::fs::metadata(dir) {
        Err(_) => format!("{path}: the folder {shown} does not exist"),
        Ok(m) if !m.is_dir() => format!("{path}: {shown} is not a folder"),
        Ok(_) => {
            // The OS's reason, without the temporary file's path that tempfile wraps it with.
            let why = match e.raw_os_error() {
                Some(code) => std::io::Error::from_raw_os_error(code).to_string(),
                None => std::io::Error::from(e.kind()).to_string(),
            };
            format!("{path}: cannot create a file in {shown}: {why}")
        }
    }
}

#[cfg(unix)]
fn mode_of(m: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    m.permissions().mode() & 0o777
}

#[cfg(not(unix))]
fn mode_of(_: &std::fs::Metadata) -> u32 {
    0o666
}

#[cfg(unix)]
fn permissions(mode: u32) -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    std::fs::Permissions::from_mode(mode)
}
