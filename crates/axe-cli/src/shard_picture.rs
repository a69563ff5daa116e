//! `axe shard show -o FILE`: the picture of which device holds which block.

use axe_shard::Mesh;

use crate::render_format::{picture_format, Format};
use crate::shard_cmd::*;

/// Draws the one sharding of `shardings` over `--shape` into `path`, in `format` or the one its
/// extension names (the rule every picture-writing command follows: [`picture_format`]): SVG and PNG
/// draw one block per piece (arrays of rank 1 and 2) or the Axe form's elements; text draws the Axe
/// form's elements, as `axe render --format txt` does, or lists the pieces where the cuts are uneven
/// (no Axe form).
pub(crate) fn picture(
    shardings: &[String],
    target: &Target,
    path: &str,
    format: Option<Format>,
) -> Result<(), String> {
    // The format, checked before any work.
    let format = picture_format("-o", Some(path), format)?;
    let [text] = shardings else {
        return Err("-o draws one sharding; give one".into());
    };
    if text == "-" {
        return Err("-o draws one sharding given as an argument, not '-'".into());
    }
    let shape = target
        .shape
        .as_deref()
        .ok_or("-o draws the sharding over an array: --shape 'f32[64,128]'")?;
    let (dims, _) = shape_arg(shape)?;
    let mesh = mesh_of(target)?;
    let (mesh, s) = read(text, target.from, mesh.as_ref(), &dims)?;
    let elements = || -> Result<axe_render::Picture, String> {
        let layout = axe_shard::axe::to_axe(&mesh, &s, None).map_err(|e| e.to_string())?;
        axe_render::axe_picture(&layout, &dims).map_err(|e| e.to_string())
    };
    let svg = || -> Result<String, String> {
        match blocks_svg(text, shape, &mesh, &s, &dims)? {
            Some(svg) => Ok(svg),
            None => Ok(axe_render::to_svg(&elements()?)),
        }
    };
    let bytes = match format {
        Format::Svg => svg()?.into_bytes(),
        Format::Png => axe_render::to_png(&svg()?, 2.0).map_err(|e| e.to_string())?,
        // Element by element where the sharding has an Axe form, else (uneven cuts) its pieces listed.
        Format::Txt => {
            let title = format!("{} over {shape} on mesh {}", text.trim(), mesh_text(&mesh));
            axe_render::sharding_txt(&mesh, &s, &dims, &title)
                .map_err(|e| e.to_string())?
                .into_bytes()
        }
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
/// `x=2,y=4`, with the device ids in mesh order where they are not `0..N-1` (`x=4 devices 0,3,1,2`;
/// past 16 devices the first 12 and the last 2).
pub(crate) fn mesh_text(mesh: &Mesh) -> String {
    let axes: Vec<String> = mesh
        .names()
        .iter()
        .zip(mesh.sizes())
        .map(|(n, s)| format!("{n}={s}"))
        .collect();
    let ids = mesh.devices();
    if ids.iter().zip(0u64..).all(|(&d, i)| d == i) {
        return axes.join(",");
    }
    let list = |ds: &[u64]| ds.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    let order = if ids.len() <= 16 {
        list(ids)
    } else {
        format!(
            "{},…,{} ({} in all)",
            list(&ids[..12]),
            list(&ids[ids.len() - 2..]),
            ids.len()
        )
    };
    format!("{} devices {order}", axes.join(","))
}
