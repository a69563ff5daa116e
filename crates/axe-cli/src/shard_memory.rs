//! `axe shard show --layout L`: each device's memory layout of its shard and the bytes it allocates.

use std::collections::HashMap;

use axe_reshard::{MemoryLayout, Placement};
use axe_shard::{DeviceRegion, Mesh, Sharding};
use axe_xla::{ArrayShape, PrimitiveType};

/// One device's buffer: its layout (an XLA shape of the padded local shape, or the Axe layout) and bytes.
pub struct Memory {
    pub layout: String,
    pub bytes: u64,
}

/// The memory of every device in `regions` under `layout` (`{1,0:T(8,128)}`, `row-major`, or an Axe
/// layout on `m` over each padded local shape), computed once per distinct padded shape.
pub fn memory(
    mesh: &Mesh,
    sharding: &Sharding,
    regions: &[DeviceRegion],
    layout: &str,
    ty: PrimitiveType,
) -> Result<Vec<Memory>, String> {
    let rank = sharding.dims().len();
    let parsed = MemoryLayout::parse(layout, rank).map_err(|e| format!("--layout: {e}"))?;
    let placement = Placement::new(sharding.clone(), parsed.clone(), ty)
        .map_err(|e| format!("--layout: {e}"))?;
    let mut seen: HashMap<&[u64], (String, u64)> = HashMap::new();
    let mut out = Vec::with_capacity(regions.len());
    for r in regions {
        if let Some((l, b)) = seen.get(r.padded_shape.as_slice()) {
            out.push(Memory {
                layout: l.clone(),
                bytes: *b,
            });
            continue;
        }
        let dims: Vec<i64> = r
            .padded_shape
            .iter()
            .map(|&d| i64::try_from(d).map_err(|_| format!("a local dim of {d} elements")))
            .collect::<Result<_, _>>()?;
        let text = match &parsed {
            MemoryLayout::RowMajor => ArrayShape::new(ty, &dims).to_string(),
            MemoryLayout::Xla(l) => ArrayShape {
                layout: l.clone(),
                ..ArrayShape::new(ty, &dims)
            }
            .to_string(),
            MemoryLayout::Axe(l) => l.to_string(),
        };
        let bytes = placement
            .buffer(mesh, r.device)
            .and_then(|b| b.bytes())
            .map_err(|e| format!("--layout on device {}: {e}", r.device))?
            as u64;
        seen.insert(&r.padded_shape, (text.clone(), bytes));
        out.push(Memory {
            layout: text,
            bytes,
        });
    }
    Ok(out)
}

/// Each device's buffer under `layout` as an Axe layout of the sharding's local shape, for the Axe form
/// of the sharded array: `Ok(None)` for row-major (the Axe form's default) or where the sharding has no
/// even local shape (the Axe form then says why it has none); `Err` says why the layout has no place in
/// the Axe form (a tiled layout that pads the local shape: the Axe form has no padding).
pub fn axe_local(
    mesh: &Mesh,
    sharding: &Sharding,
    layout: &str,
    ty: PrimitiveType,
) -> Result<Option<axe_layout::Layout>, String> {
    let dims = sharding.dims();
    let mut local = Vec::with_capacity(dims.len());
    for (d, &len) in dims.iter().enumerate() {
        let n = if sharding.maximal_device().is_some() {
            1
        } else {
            sharding.shards_of(mesh, d)
        };
        if len == 0 || !len.is_multiple_of(n) {
            return Ok(None);
        }
        local.push(len / n);
    }
    match MemoryLayout::parse(layout, dims.len()).map_err(|e| format!("--layout: {e}"))? {
        MemoryLayout::RowMajor => Ok(None),
        MemoryLayout::Axe(l) => Ok(Some(l)),
        MemoryLayout::Xla(l) => {
            let shape_dims: Vec<i64> = local
                .iter()
                .map(|&d| i64::try_from(d).map_err(|_| format!("a local dim of {d} elements")))
                .collect::<Result<_, _>>()?;
            let a = ArrayShape {
                layout: l,
                ..ArrayShape::new(ty, &shape_dims)
            };
            let form =
                axe_xla::to_axe(&a).map_err(|e| format!("the per-device layout {a}: {e}"))?;
            if form.padded_shape != local {
                let list = |v: &[u64]| {
                    let v: Vec<String> = v.iter().map(u64::to_string).collect();
                    format!("[{}]", v.join(","))
                };
                return Err(format!(
                    "the per-device layout {a} pads each device's {} shard to {}; the Axe form has no \
                     padding",
                    list(&local),
                    list(&form.padded_shape)
                ));
            }
            Ok(Some(form.layout))
        }
    }
}
