//! PyTorch DTensor placements, one per mesh dim: `[Shard(0), Replicate()]`, `Partial()`, `Partial(sum)`.
//! A negative `Shard(d)` counts from the last dim, as torch normalises it (`Shard(-1)` is the last).
//!
//! Several `Shard(d)` on one tensor dim shard it left to right over the mesh dims (the leftmost mesh dim is
//! the major one), each cutting the previous local piece with `torch.chunk`: read shardings use
//! [`Uneven::TorchChunk`].

use crate::error::{Result, ShardError};
use crate::mesh::Mesh;
use crate::model::{AxisUse, ReduceOp, Sharding, Uneven};

/// Reads placements for an array of `dims` on `mesh`: a list `[...]` or a tuple `(...)` as torch prints
/// `dtensor.placements` (`(Shard(dim=0), Replicate())`), a trailing comma allowed.
pub fn parse_dtensor(text: &str, mesh: &Mesh, dims: &[u64]) -> Result<Sharding> {
    let err = |msg: String, offset: usize| ShardError::Parse {
        msg,
        text: text.to_string(),
        offset,
    };
    let t = text.trim_end();
    let lead = t.len() - t.trim_start().len();
    let body = t.trim_start();
    let inner = body
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .or_else(|| body.strip_prefix('(').and_then(|s| s.strip_suffix(')')))
        .ok_or_else(|| err("expected [placement, ...] or (placement, ...)".into(), lead))?;
    let mut dim_axes = vec![Vec::new(); dims.len()];
    let mut others = Vec::new();
    let mut offset = lead + 1;
    let mut items: Vec<&str> = if inner.trim().is_empty() {
        Vec::new()
    } else {
        top_level_items(inner)
    };
    // A trailing comma, as Python writes a one-placement tuple: `(Shard(0),)`.
    if items.len() > 1 && items.last().is_some_and(|i| i.trim().is_empty()) {
        items.pop();
    }
    if items.len() != mesh.rank() {
        return Err(err(
            format!(
                "{} placements for a mesh of {} dims",
                items.len(),
                mesh.rank()
            ),
            lead,
        ));
    }
    for (a, item) in items.iter().enumerate() {
        let at = offset + (item.len() - item.trim_start().len());
        let p = item.trim();
        let arg = |name: &str| -> Option<String> {
            p.strip_prefix(name)
                .and_then(|r| r.trim_start().strip_prefix('('))
                .and_then(|r| r.strip_suffix(')'))
                .map(|r| {
                    r.trim()
                        .trim_start_matches("reduce_op=")
                        .trim_matches(['\'', '"'])
                        .to_string()
                })
        };
        if p.starts_with("_StridedShard") {
            return Err(err(
                "_StridedShard is read from torch's placement objects, not from text: pass \
                 DTensor's placements themselves (axe.torch.sharding_of(dtensor.placements, ...))"
                    .into(),
                at,
            ));
        }
        if let Some(d) = arg("Shard") {
            let d: i64 = d
                .strip_prefix("dim=")
                .unwrap_or(&d)
                .trim()
                .parse()
                .map_err(|_| err(format!("bad tensor dim {d:?}"), at))?;
            // As torch: a negative dim counts from the last (Shard(-1) is the last dim).
            let rank = dims.len() as i64;
            let k = if d < 0 { d + rank } else { d };
            if !(0..rank).contains(&k) {
                return Err(err(
                    format!(
                        "Shard({d}) on an array of {} dims (dims {}..{})",
                        dims.len(),
                        -rank,
                        rank - 1
                    ),
                    at,
                ));
            }
            dim_axes[k as usize].push(a);
        } else if arg("Replicate").is_some_and(|x| x.is_empty()) {
            others.push((a, AxisUse::Replicated));
        } else if let Some(op) = arg("Partial") {
            let op = if op.is_empty() {
                Some(ReduceOp::Sum)
            } else {
                ReduceOp::from_name(&op)
            };
            let op = op
                .ok_or_else(|| err("unknown reduce op (sum, avg, max, min, product)".into(), at))?;
            others.push((a, AxisUse::Partial(op)));
        } else {
            return Err(err(
                "expected Shard(d), Replicate() or Partial(op)".into(),
                at,
            ));
        }
        offset += item.len() + 1;
    }
    Ok(Sharding::new(mesh, dims.to_vec(), dim_axes, &others)?.with_uneven(Uneven::TorchChunk))
}

/// The comma-separated items of `inner`, split only outside parentheses (`_StridedShard(0,
/// split_factor=2)` is one item).
fn top_level_items(inner: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&inner[start..]);
    out
}

/// The placements of `s` on `mesh`: a dim's mesh axes must run left to right (major first).
pub fn to_dtensor(mesh: &Mesh, s: &Sharding) -> Result<String> {
    s.require_rule(mesh, crate::model::Uneven::TorchChunk, "dtensor")?;
    s.require_mesh_order("dtensor")?;
    let bad = |why: String| ShardError::Inexpressible {
        notation: "dtensor",
        why,
    };
    if s.maximal_device().is_some() {
        return Err(bad("one device holds everything (maximal)".into()));
    }
    for (d, axes) in s.dim_axes().iter().enumerate() {
        if axes.windows(2).any(|w| w[0] > w[1]) {
            return Err(bad(format!(
                "dim {d} is split over mesh dims right to left"
            )));
        }
    }
    let parts: Result<Vec<String>> = s
        .axis_use()
        .iter()
        .map(|u| match u {
            AxisUse::Split(d) => Ok(format!("Shard({d})")),
            AxisUse::Replicated => Ok("Replicate()".to_string()),
            AxisUse::Partial(ReduceOp::Sum) => Ok("Partial()".to_string()),
            AxisUse::Partial(op) => Ok(format!("Partial({})", op.name())),
            AxisUse::Manual => Err(bad("a mesh axis is manual".into())),
        })
        .collect();
    Ok(format!("[{}]", parts?.join(", ")))
}
