//! Where each element of a register tensor lives: its places, (thread, register) pairs, one per
//! replica, found by applying the layout to every element. The register operators (`reduce`, the
//! register-wise pointwise operators, register copies, fragments) plan by enumerating them.

use axe_layout::{Axis, Coord};

use crate::desc::Tensor;
use crate::error::{layout, Result};
use crate::scope::WARP;

/// Most element placements (elements × replicas) an operator enumerates.
pub const MAX_PLACES: u64 = 1 << 22;

/// Each element's places: (thread in the scope unit, register), one per replica.
pub(crate) type Places = Vec<Vec<(u32, i64)>>;

/// Where each element of a register tensor lives, or why it cannot be planned (the inner error).
pub(crate) fn places(t: &Tensor, warps: u32) -> Result<std::result::Result<Places, String>> {
    let total = t.size().saturating_mul(t.layout.replica_count());
    if total > MAX_PLACES {
        return Ok(Err(format!(
            "{} has {total} element copies; at most {MAX_PLACES} are planned",
            t.name
        )));
    }
    let ax = |n: &str| Axis::new(n).map_err(layout(n));
    let (lane, warp, reg) = (ax("lane")?, ax("warp")?, ax("reg")?);
    let mut out = Vec::with_capacity(usize::try_from(t.size()).unwrap_or(0));
    for x in 0..t.size() {
        let cs: Vec<Coord> = t
            .layout
            .apply(x)
            .map_err(layout(format!("tensor {}", t.name)))?;
        let mut v = Vec::with_capacity(cs.len());
        for c in cs {
            let (l, w) = (c.get(&lane), c.get(&warp));
            if !(0..i64::from(WARP)).contains(&l) || !(0..i64::from(warps)).contains(&w) {
                return Ok(Err(format!(
                    "{} puts element {x} on lane {l}, warp {w}; the scope has 32 lanes × {warps} warps",
                    t.name
                )));
            }
            v.push(((w * 32 + l) as u32, c.get(&reg)));
        }
        out.push(v);
    }
    Ok(Ok(out))
}
