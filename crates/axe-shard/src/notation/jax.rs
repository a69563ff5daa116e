//! JAX `PartitionSpec` over a named mesh: `P('x', None, ('y', 'z'))`; mesh axes it does not name replicate,
//! and `unreduced={'y'}` names axes holding partial values pending a sum (JAX's unreduced arrays, which
//! XLA writes as an `unreduced` subgroup).

use crate::model::ReduceOp;

use crate::error::{Result, ShardError};
use crate::mesh::Mesh;
use crate::model::{AxisUse, Sharding};

/// Reads `P(...)` (or `PartitionSpec(...)`) for an array of `dims` on `mesh`.
pub fn parse_jax(text: &str, mesh: &Mesh, dims: &[u64]) -> Result<Sharding> {
    let err = |msg: String, offset: usize| ShardError::Parse {
        msg,
        text: text.to_string(),
        offset,
    };
    let t = text.trim_end();
    let open = t
        .find('(')
        .ok_or_else(|| err("expected P(...)".into(), 0))?;
    let head = t[..open].trim();
    if head != "P"
        && head != "PartitionSpec"
        && !head.ends_with(".P")
        && !head.ends_with(".PartitionSpec")
    {
        return Err(err("expected P(...)".into(), 0));
    }
    if !t.ends_with(')') {
        return Err(err("expected ')'".into(), t.len()));
    }
    let body = &t[open + 1..t.len() - 1];
    let base = open + 1;
    let mut entries: Vec<(Vec<(String, usize)>, usize)> = Vec::new();
    let mut i = 0;
    let b = body.as_bytes();
    let skip = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    let name = |i: &mut usize| -> Result<(String, usize)> {
        let q = b[*i];
        let start = *i + 1;
        let end = body[start..]
            .find(q as char)
            .map(|e| start + e)
            .ok_or_else(|| err("unterminated string".into(), base + *i))?;
        *i = end + 1;
        Ok((body[start..end].to_string(), base + start))
    };
    // Quoted names, comma-separated, through `close`.
    let names = |i: &mut usize, close: u8| -> Result<Vec<(String, usize)>> {
        let mut out = Vec::new();
        loop {
            skip(i);
            match b.get(*i) {
                Some(b'\'' | b'"') => out.push(name(i)?),
                Some(&c) if c == close => {
                    *i += 1;
                    return Ok(out);
                }
                _ => {
                    return Err(err(
                        format!("expected a quoted axis name or '{}'", close as char),
                        base + *i,
                    ))
                }
            }
            skip(i);
            if b.get(*i) == Some(&b',') {
                *i += 1;
            }
        }
    };
    skip(&mut i);
    let mut unreduced: Vec<(String, usize)> = Vec::new();
    while i < b.len() {
        let at = base + i;
        if body[i..].starts_with("reduced") {
            return Err(err(
                "reduced={...} is not read: only unreduced={...} (partial sums) is".into(),
                at,
            ));
        }
        if body[i..].starts_with("unreduced") {
            i += "unreduced".len();
            skip(&mut i);
            if b.get(i) != Some(&b'=') {
                return Err(err("expected '=' after unreduced".into(), base + i));
            }
            i += 1;
            skip(&mut i);
            if b.get(i) != Some(&b'{') {
                return Err(err("expected unreduced={'axis', ...}".into(), base + i));
            }
            i += 1;
            unreduced = names(&mut i, b'}')?;
            skip(&mut i);
            match b.get(i) {
                Some(b',') => {
                    i += 1;
                    skip(&mut i);
                    if i < b.len() {
                        return Err(err(
                            "unreduced={...} comes after the dims' entries".into(),
                            base + i,
                        ));
                    }
                }
                None => {}
                _ => return Err(err("expected ','".into(), base + i)),
            }
            continue;
        }
        if !unreduced.is_empty() {
            return Err(err(
                "unreduced={...} comes after the dims' entries".into(),
                at,
            ));
        }
        match b[i] {
            b'\'' | b'"' => entries.push((vec![name(&mut i)?], at)),
            b'(' => {
                i += 1;
                let group = names(&mut i, b')')?;
                entries.push((group, at));
            }
            _ if body[i..].starts_with("None") => {
                i += 4;
                entries.push((Vec::new(), at));
            }
            _ => {
                return Err(err(
                    "expected a quoted axis name, a tuple of them, or None".into(),
                    at,
                ))
            }
        }
        skip(&mut i);
        match b.get(i) {
            Some(b',') => {
                i += 1;
                skip(&mut i);
            }
            None => {}
            _ => return Err(err("expected ','".into(), base + i)),
        }
    }
    if entries.len() > dims.len() {
        return Err(err(
            format!(
                "{} entries for an array of {} dims",
                entries.len(),
                dims.len()
            ),
            0,
        ));
    }
    let mut dim_axes = vec![Vec::new(); dims.len()];
    let mut used: Vec<Option<usize>> = vec![None; mesh.rank()];
    for (d, (group, _)) in entries.iter().enumerate() {
        for (n, off) in group {
            let a = mesh.axis(n).map_err(|e| err(e.to_string(), *off))?;
            if used[a] == Some(d) {
                return Err(err(format!("mesh axis '{n}' is named twice"), *off));
            }
            if let Some(prev) = used[a] {
                return Err(err(
                    format!(
                        "mesh axis {n:?} shards dims {prev} and {d}: a mesh axis can shard one dim"
                    ),
                    *off,
                ));
            }
            used[a] = Some(d);
            dim_axes[d].push(a);
        }
    }
    let mut others = Vec::new();
    for (n, off) in &unreduced {
        let a = mesh.axis(n).map_err(|e| err(e.to_string(), *off))?;
        if used[a].is_some() || others.iter().any(|&(b, _)| b == a) {
            return Err(err(
                format!("mesh axis '{n}' is unreduced and named elsewhere in the spec"),
                *off,
            ));
        }
        others.push((a, AxisUse::Partial(ReduceOp::Sum)));
    }
    Sharding::new(mesh, dims.to_vec(), dim_axes, &others)
}

/// The `P(...)` text of `s` on `mesh`: only replicated unsplit axes are expressible.
pub fn to_jax(mesh: &Mesh, s: &Sharding) -> Result<String> {
    s.require_rule(mesh, crate::model::Uneven::Xla, "jax")?;
    s.require_mesh_order("jax")?;
    if s.maximal_device().is_some() {
        return Err(ShardError::Inexpressible {
            notation: "jax",
            why: "one device holds everything (maximal)".into(),
        });
    }
    let mut unreduced = Vec::new();
    for (a, u) in s.unsplit_axes() {
        match u {
            AxisUse::Replicated | AxisUse::Split(_) => {}
            AxisUse::Partial(ReduceOp::Sum) => unreduced.push(format!("'{}'", mesh.names()[a])),
            _ => {
                return Err(ShardError::Inexpressible {
                    notation: "jax",
                    why: format!(
                        "mesh axis {:?} is manual or partial under another op than a sum",
                        mesh.names()[a]
                    ),
                })
            }
        }
    }
    let mut parts: Vec<String> = s
        .dim_axes()
        .iter()
        .map(|axes| match axes.as_slice() {
            [] => "None".to_string(),
            [a] => format!("'{}'", mesh.names()[*a]),
            many => format!(
                "({})",
                many.iter()
                    .map(|&a| format!("'{}'", mesh.names()[a]))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
        .collect();
    while parts.last().is_some_and(|p| p == "None") {
        parts.pop();
    }
    if !unreduced.is_empty() {
        parts.push(format!("unreduced={{{}}}", unreduced.join(", ")));
    }
    Ok(format!("P({})", parts.join(", ")))
}
