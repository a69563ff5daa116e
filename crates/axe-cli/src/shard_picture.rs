//! `axe shard show --svg`: the picture of which device holds which block.

use axe_shard::Mesh;

use crate::shard_cmd::*;

/// Draws the one sharding of `shardings` over `--shape` into `path` (SVG, or PNG by its extension).
pub(crate) fn picture(shardings: &[String], target: &Target, path: &str) -> Result<(), String> {
    // The format from the extension, checked before any work (as `render -o` does): SVG, or PNG.
    let ext = std::path::Path::new(path)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let png = match ext.as_deref() {
        None | Some("svg") => false,
        Some("png") => true,
        Some(other) => {
            return Err(format!(
                "--svg {path}: axe draws sharding pictures as .svg or .png, not .{other}; name the file accordingly"
            ))
        }
    };
    let [text] = shardings else {
        return Err("--svg draws one sharding; give one".into());
    };
    if text == "-" {
        return Err("--svg draws one sharding given as an argument, not '-'".into());
    }
    let shape = target
        .shape
        .as_deref()
        .ok_or("--svg needs the array: --shape 'f32[64,128]'")?;
    let (dims, _) = shape_arg(shape)?;
    let mesh = mesh_of(target)?;
    let (mesh, s) = read(text, target.from, mesh.as_ref(), &dims)?;
    let svg = match blocks_svg(text, shape, &mesh, &s, &dims)? {
        Some(svg) => svg,
        None => {
            let layout = axe_shard::axe::to_axe(&mesh, &s, None).map_err(|e| e.to_string())?;
            let p = axe_render::axe_picture(&layout, &dims).map_err(|e| e.to_string())?;
            axe_render::to_svg(&p)
        }
    };
    let bytes = if png {
        axe_render::to_png(&svg, 2.0).map_err(|e| e.to_string())?
    } else {
        svg.into_bytes()
    };
    crate::output::write_atomically(path, &bytes)
}

/// The block picture of sharding `s` (typed as `text`) over an array of `dims` (`shape` as the user
/// gave it) on `mesh`: one block per piece, named by the devices holding it (as JAX draws shardings).
/// `None` for arrays of rank 3 or more, which are drawn element by element.
pub(crate) fn blocks_svg(
    text: &str,
    shape: &str,
    mesh: &Mesh,
    s: &axe_shard::Sharding,
    dims: &[u64],
) -> Result<Option<String>, String> {
    let title = format!("{} over {shape} on mesh {}", text.trim(), mesh_text(mesh));
    axe_render::sharding_svg(mesh, s, dims, &title).map_err(|e| e.to_string())
}

/// `data=2,model=4`.
pub(crate) fn mesh_text(mesh: &Mesh) -> String {
    let axes: Vec<String> = mesh
        .names()
        .iter()
        .zip(mesh.sizes())
        .map(|(n, s)| format!("{n}={s}"))
        .collect();
    axes.join(",")
}
