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
    let placement =
        Placement::new(sharding.clone(), parsed, ty).map_err(|e| format!("--layout: {e}"))?;
    memory_of(mesh, &placement, regions, "--layout")
}

/// The memory of every device in `regions` (of `placement.sharding` on `mesh`) under the placement's
/// layout, computed once per distinct padded shape; an error names `flag`, the option that gave it.
pub fn memory_of(
    mesh: &Mesh,
    placement: &Placement,
    regions: &[DeviceRegion],
    flag: &str,
) -> Result<Vec<Memory>, String> {
    let (parsed, ty) = (&placement.layout, placement.dtype);
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
        let text = match parsed {
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
            .map_err(|e| format!("{flag} on device {}: {e}", r.device))? as u64;
        seen.insert(&r.padded_shape, (text.clone(), bytes));
        out.push(Memory {
            layout: text,
            bytes,
        });
    }
    Ok(out)
}

/// Each distinct buffer of `mem` (the memory of the devices `devices`, in the same order) once: its
/// layout, its bytes (each device's own, not a sum) and the devices that allocate it, in first-seen order.
pub fn kinds<'a>(mem: &'a [Memory], devices: &[u64]) -> Vec<(&'a str, u64, Vec<u64>)> {
    let mut kinds: Vec<(&str, u64, Vec<u64>)> = Vec::new();
    for (m, &d) in mem.iter().zip(devices) {
        match kinds.iter_mut().find(|k| k.0 == m.layout && k.1 == m.bytes) {
            Some(k) => k.2.push(d),
            None => kinds.push((&m.layout, m.bytes, vec![d])),
        }
    }
    kinds
}

/// `16.0 KiB on each of 4 devices` (or `on device 3`): one buffer's bytes, which are each device's own.
pub fn per_device_text(bytes: u64, devices: &[u64]) -> String {
    let b = crate::shard_plan::human(bytes);
    match devices {
        [one] => format!("{b} on device {one}"),
        many => format!("{b} on each of {} devices", many.len()),
    }
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
