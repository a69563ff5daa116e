//! One entry point for every notation: recognising a sharding's notation from its syntax, reading it onto
//! a mesh, and printing a sharding in any notation.

use crate::error::{Result, ShardError};
use crate::mesh::Mesh;
use crate::model::Sharding;
use crate::notation::{alpa, dtensor, hlo, jax, sdy, sdy_print};

/// A sharding notation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notation {
    /// XLA `HloSharding` text: `{devices=[2,2]<=[4]}`.
    Hlo,
    /// JAX `PartitionSpec`: `P('x', None)`.
    Jax,
    /// PyTorch DTensor placements: `[Shard(0), Replicate()]`.
    Dtensor,
    /// Alpa: `S0R`.
    Alpa,
    /// An Axe layout over device axes and memory: `S[(2,32):(1@gpu_x,1)] + R[2:1@gpu_y]`.
    Axe,
    /// A Shardy tensor sharding, as JAX 0.10 lowers: `#sdy.sharding<@mesh, [{"x"}, {}]>`.
    Sdy,
}

impl Notation {
    /// Every notation, in the order tools list them.
    pub const ALL: [Notation; 6] = [
        Notation::Hlo,
        Notation::Sdy,
        Notation::Jax,
        Notation::Dtensor,
        Notation::Alpa,
        Notation::Axe,
    ];

    /// The name used on the command line and in JSON (`hlo`, `sdy`, `jax`, `dtensor`, `alpa`, `axe`).
    pub fn name(self) -> &'static str {
        match self {
            Notation::Hlo => "hlo",
            Notation::Jax => "jax",
            Notation::Dtensor => "dtensor",
            Notation::Alpa => "alpa",
            Notation::Axe => "axe",
            Notation::Sdy => "sdy",
        }
    }

    /// The notation named `name`.
    pub fn from_name(name: &str) -> Option<Notation> {
        Notation::ALL.into_iter().find(|n| n.name() == name)
    }

    /// The notation `text` is written in, from its syntax: `{...}` is HLO, `P(...)` or
    /// `PartitionSpec(...)` JAX, `[...]` or a tuple of placements `(Shard(0), ...)` DTensor, `S[...]`, `R[...]` or `T.TileLayout(...)` an Axe layout,
    /// letters `R`/`S` with mesh-axis digits (`S0R`, `S01`, `RR`) Alpa, and `#sdy.sharding<...>` (or
    /// `<@mesh, ...>`, or `sdy.mesh` definitions before it) Shardy.
    pub fn detect(text: &str) -> Result<Notation> {
        let t = text.trim();
        let head = t.split('(').next().unwrap_or("").trim();
        if sdy::looks_like(t) {
            Ok(Notation::Sdy)
        } else if t.starts_with('{') {
            Ok(Notation::Hlo)
        } else if t.starts_with('[')
            || (t.starts_with('(')
                && ["Shard", "Replicate", "Partial", "_StridedShard"]
                    .iter()
                    .any(|p| t[1..].trim_start().starts_with(p)))
        {
            Ok(Notation::Dtensor)
        } else if t.starts_with("S[") || t.starts_with("R[") || t.starts_with("T.") {
            Ok(Notation::Axe)
        } else if t.contains('(')
            && ["P", "PartitionSpec"]
                .iter()
                .any(|h| head == *h || head.ends_with(&format!(".{h}")))
        {
            Ok(Notation::Jax)
        } else if !t.is_empty()
            && t.bytes()
                .all(|b| b == b'R' || b == b'S' || b.is_ascii_digit())
        {
            Ok(Notation::Alpa)
        } else {
            Err(ShardError::Parse {
                msg: "not a sharding in any notation ({...} hlo, P(...) jax, [Shard(0), ...] dtensor, S0R alpa, \
                      S[...] axe, #sdy.sharding<...> sdy)"
                    .into(),
                text: text.to_string(),
                offset: 0,
            })
        }
    }
}

/// Reads `text`, in `notation` or the one its syntax shows, as a sharding of an array of `dims`: onto
/// `mesh` where given; without one, HLO text and Axe layouts bring their own mesh (one axis per tile-grid
/// dim; one per device iter), and the other notations need one.
pub fn parse_any(
    text: &str,
    notation: Option<Notation>,
    mesh: Option<&Mesh>,
    dims: &[u64],
) -> Result<(Mesh, Sharding)> {
    parse_any_local(text, notation, mesh, dims).map(|(m, s, _)| (m, s))
}

/// [`parse_any`], with the per-device memory layout the text gives: an Axe layout's memory iters (in dim
/// order, a layout of the local shape on its memory axes, as [`crate::axe::from_axe`] reads them), `None`
/// for the other notations, which say nothing about memory. [`print_local`] writes it back.
pub fn parse_any_local(
    text: &str,
    notation: Option<Notation>,
    mesh: Option<&Mesh>,
    dims: &[u64],
) -> Result<(Mesh, Sharding, Option<axe_layout::Layout>)> {
    let notation = match notation {
        Some(n) => n,
        None => Notation::detect(text)?,
    };
    let need = |m: Option<&Mesh>| -> Result<Mesh> {
        m.cloned().ok_or_else(|| {
            ShardError::Mesh(format!(
                "a {} sharding names mesh axes; give the mesh (e.g. --mesh x=2,y=4)",
                notation.name()
            ))
        })
    };
    match notation {
        Notation::Hlo => match mesh {
            // On the caller's mesh, in its device order: a tile assignment in another order keeps a
            // device placement (so the notations that place devices by the mesh's order say they
            // cannot hold it), rather than the mesh taking the sharding's order.
            Some(m) => {
                let (m, mut ss) = crate::notation::fit::onto(&[(text, Notation::Hlo)], m, dims)?;
                let s = ss
                    .pop()
                    .ok_or_else(|| ShardError::Sharding("no sharding read".into()))?;
                Ok((m, s, None))
            }
            // A mesh of its own, without the grid's size-1 dims (no notation names an axis of one).
            None => hlo::parse_hlo_own(text, dims, None).map(|(m, s)| (m, s, None)),
        },
        Notation::Jax => {
            let m = need(mesh)?;
            let s = jax::parse_jax(text, &m, dims)?;
            Ok((m, s, None))
        }
        Notation::Sdy => sdy::parse_sdy(text, mesh, dims).map(|(m, s)| (m, s, None)),
        Notation::Dtensor => {
            let m = need(mesh)?;
            let s = dtensor::parse_dtensor(text, &m, dims)?;
            Ok((m, s, None))
        }
        Notation::Alpa => {
            let m = need(mesh)?;
            let s = alpa::parse_alpa(text, &m, dims)?;
            Ok((m, s, None))
        }
        Notation::Axe => {
            let layout: axe_layout::Layout = text.parse().map_err(|e| match e {
                // The reader's own location, shown once.
                axe_layout::LayoutError::Parse(p) => ShardError::Parse {
                    msg: p.message,
                    text: text.to_string(),
                    offset: p.offset,
                },
                e => ShardError::Parse {
                    msg: e.to_string(),
                    text: text.to_string(),
                    offset: 0,
                },
            })?;
            let a = crate::axe::from_axe(&layout, dims, mesh)?;
            Ok((a.mesh, a.sharding, Some(a.local)))
        }
    }
}

/// Reads a source and a destination sharding of one array of `dims` onto one mesh: `mesh` where given,
/// else the one the source brings (HLO text and Axe layouts bring their own; the destination's where an
/// HLO source does not fix the device count, as `{replicated}` does not). HLO text is over device ids:
/// a tile assignment in any device order is read onto the mesh, splitting its axes into the factors the
/// tile grid needs and giving a sharding a device placement of its own where no mesh order serves both
/// (see [`Sharding::with_placement`]); the mesh's device order is then the source's, so that only the
/// destination has one. `notation` applies to both texts (each detected from its syntax when `None`).
///
/// Law: each sharding's regions ([`Sharding::regions`]) on the returned mesh are, per device id, the
/// regions its text gives that device.
pub fn parse_pair(
    src: &str,
    dst: &str,
    notation: Option<Notation>,
    mesh: Option<&Mesh>,
    dims: &[u64],
) -> Result<(Mesh, Sharding, Sharding)> {
    let which = |t: &str| -> Result<Notation> {
        match notation {
            Some(n) => Ok(n),
            None => Notation::detect(t),
        }
    };
    let (ns, nd) = (which(src)?, which(dst)?);
    let base = match mesh {
        Some(m) => m.clone(),
        None => {
            let own = parse_any(src, Some(ns), None, dims)?.0;
            // `{replicated}`, `{manual}` and `{maximal device=N}` do not fix the device count: a
            // destination listing more devices brings the mesh.
            match parse_any(dst, Some(nd), None, dims) {
                Ok((theirs, _))
                    if matches!(ns, Notation::Hlo | Notation::Sdy) && theirs.len() > own.len() =>
                {
                    theirs
                }
                _ => own,
            }
        }
    };
    let (m, ss) = crate::notation::fit::onto(&[(src, ns), (dst, nd)], &base, dims)?;
    let (m, ss) = crate::notation::fit::rebase(m, ss)?;
    match <[Sharding; 2]>::try_from(ss) {
        Ok([a, b]) => Ok((m, a, b)),
        Err(_) => Err(ShardError::Sharding("two shardings expected".into())),
    }
}

/// `s` on `mesh` in `notation`; [`ShardError::Inexpressible`] says why a notation cannot hold it. The
/// Axe form stores each device's shard row-major; [`print_local`] takes another memory layout.
pub fn print(notation: Notation, mesh: &Mesh, s: &Sharding) -> Result<String> {
    print_local(notation, mesh, s, None)
}

/// [`print()`], each device storing its local shape in `local` (a layout of the local shape on memory
/// axes, as [`crate::axe::to_axe`] takes it; row-major when `None`). Only the Axe form shows memory; the
/// other notations ignore `local`.
pub fn print_local(
    notation: Notation,
    mesh: &Mesh,
    s: &Sharding,
    local: Option<&axe_layout::Layout>,
) -> Result<String> {
    match notation {
        Notation::Hlo => hlo::to_hlo(mesh, s),
        Notation::Jax => jax::to_jax(mesh, s),
        Notation::Dtensor => dtensor::to_dtensor(mesh, s),
        Notation::Alpa => alpa::to_alpa(mesh, s),
        Notation::Axe => Ok(crate::axe::to_axe(mesh, s, local)?.to_string()),
        Notation::Sdy => sdy_print::to_sdy(mesh, s),
    }
}
