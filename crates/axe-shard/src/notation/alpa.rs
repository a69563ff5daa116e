//! Alpa's sharding specs: one token per tensor dim, `R` (replicated) or `S` and the mesh axes splitting it,
//! major first (`S0S1`, `S01R`, `RS0`, `RR`). Mesh axes it does not name replicate.

use crate::error::{Result, ShardError};
use crate::mesh::Mesh;
use crate::model::{AxisUse, Sharding};

/// Reads an Alpa spec for an array of `dims` on `mesh` (axes are mesh axis numbers, one digit each).
pub fn parse_alpa(text: &str, mesh: &Mesh, dims: &[u64]) -> Result<Sharding> {
    let err = |msg: String, offset: usize| ShardError::Parse {
        msg,
        text: text.to_string(),
        offset,
    };
    let b = text.as_bytes();
    let mut dim_axes: Vec<Vec<usize>> = Vec::new();
    let mut used = vec![false; mesh.rank()];
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'R' => {
                dim_axes.push(Vec::new());
                i += 1;
            }
            b'S' => {
                i += 1;
                let mut axes = Vec::new();
                while i < b.len() && b[i].is_ascii_digit() {
                    let a = usize::from(b[i] - b'0');
                    if a >= mesh.rank() {
                        return Err(err(
                            format!("mesh axis {a} out of range (the mesh has {})", mesh.rank()),
                            i,
                        ));
                    }
                    if used[a] {
                        return Err(err(format!("mesh axis {a} is used twice"), i));
                    }
                    used[a] = true;
                    axes.push(a);
                    i += 1;
                }
                if axes.is_empty() {
                    return Err(err("expected mesh axis digits after 'S'".into(), i));
                }
                dim_axes.push(axes);
            }
            _ => return Err(err("expected 'R' or 'S'".into(), i)),
        }
    }
    if dim_axes.len() != dims.len() {
        return Err(err(
            format!(
                "{} dims in the spec for an array of {} dims",
                dim_axes.len(),
                dims.len()
            ),
            0,
        ));
    }
    Sharding::new(mesh, dims.to_vec(), dim_axes, &[])
}

/// The Alpa spec of `s` on `mesh`: only replicated unsplit axes, and meshes of at most 10 axes.
pub fn to_alpa(mesh: &Mesh, s: &Sharding) -> Result<String> {
    s.require_rule(mesh, crate::model::Uneven::Xla, "alpa")?;
    s.require_mesh_order("alpa")?;
    let bad = |why: String| ShardError::Inexpressible {
        notation: "alpa",
        why,
    };
    if s.maximal_device().is_some() {
        return Err(bad("one device holds everything (maximal)".into()));
    }
    if s.dims().is_empty() {
        // One letter a dim: a scalar's spec would be empty text, which reads as nothing.
        return Err(bad("a scalar has no dims to write a letter for".into()));
    }
    if mesh.rank() > 10 {
        return Err(bad("mesh axes are single digits".into()));
    }
    if let Some((a, _)) = s
        .unsplit_axes()
        .iter()
        .find(|(_, u)| *u != AxisUse::Replicated)
    {
        return Err(bad(format!("mesh axis {a} is manual or partial")));
    }
    Ok(s.dim_axes()
        .iter()
        .map(|axes| {
            if axes.is_empty() {
                "R".to_string()
            } else {
                format!(
                    "S{}",
                    axes.iter().map(|a| a.to_string()).collect::<String>()
                )
            }
        })
        .collect())
}
