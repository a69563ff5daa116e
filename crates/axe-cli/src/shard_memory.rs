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
