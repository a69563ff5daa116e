//! The one sharding model every notation converts to and from.

use crate::error::{list_text, Result, ShardError};
use crate::mesh::Mesh;

/// The reduction a `Partial` mesh axis has pending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// Sum (DTensor's default).
    Sum,
    /// Average.
    Avg,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
    /// Product.
    Product,
}

impl ReduceOp {
    /// The name DTensor uses (`sum`, `avg`, `max`, `min`, `product`).
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Avg => "avg",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::Product => "product",
        }
    }

    /// The op named `name`.
    pub fn from_name(name: &str) -> Option<ReduceOp> {
        [
            ReduceOp::Sum,
            ReduceOp::Avg,
            ReduceOp::Max,
            ReduceOp::Min,
            ReduceOp::Product,
        ]
        .into_iter()
        .find(|op| op.name() == name)
    }
}

/// What one mesh axis does to the array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisUse {
    /// The axis splits this tensor dim.
    Split(usize),
    /// Devices along the axis hold the same data.
    Replicated,
    /// Devices along the axis are partitioned by hand (XLA's `manual`).
    Manual,
    /// Devices along the axis hold partial values still to be reduced.
    Partial(ReduceOp),
}

/// How a dim of `D` elements is cut into `n` shards when `n` does not divide `D`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Uneven {
    /// XLA's rule: one flat split over the product of the dim's mesh axes, `ceil(D/n)` per shard, the
    /// trailing shards short or empty (6 over 4 is 2,2,2,0; 5 over 4 is 2,2,1,0).
    Xla,
    /// DTensor's rule: `torch.chunk` along each mesh axis in turn, the major axis first, each cutting the
    /// previous axis's local piece (5 over 2×2 is 3 → 2,1 and 2 → 1,1: 2,1,1,1). With one axis per dim it
    /// equals [`Uneven::Xla`].
    TorchChunk,
}

/// What Shardy's propagation may do with one tensor dim (`#sdy.sharding`'s `{"x", ?}p1`): whether the
/// dim is open (`?`: propagation may shard it further, on axes after the listed ones) and its priority
/// (`p1`: lower numbers propagate first). Neither changes who holds what: the sharding is the axes
/// listed. The default is Shardy's: closed, no priority.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DimHint {
    /// The dim is open (`?`).
    pub open: bool,
    /// The dim's priority (`p0`, `p1`, ...).
    pub priority: Option<u64>,
}

/// A sharding of an array of `dims` on a mesh, or everything on one device (maximal).
///
/// Equality compares the dims, their mesh axes, the other axes' uses, the device holding a maximal one,
/// the uneven rule and the placement; not Shardy's [`DimHint`]s, which steer propagation only (as
/// `{"y", ?}p1` and `P('x', 'y')` give every device the same, they are equal).
#[derive(Clone, Debug)]
pub struct Sharding {
    dims: Vec<u64>,
    dim_axes: Vec<Vec<usize>>,
    axis_use: Vec<AxisUse>,
    maximal: Option<u64>,
    uneven: Uneven,
    placement: Option<std::sync::Arc<[u64]>>,
    /// Per tensor dim, Shardy's hints; `None` where every dim has the default.
    hints: Option<std::sync::Arc<[DimHint]>>,
}

impl PartialEq for Sharding {
    fn eq(&self, o: &Sharding) -> bool {
        self.dims == o.dims
            && self.dim_axes == o.dim_axes
            && self.axis_use == o.axis_use
            && self.maximal == o.maximal
            && self.uneven == o.uneven
            && self.placement == o.placement
    }
}

impl Eq for Sharding {}

impl Sharding {
    /// A sharding on `mesh`: `dim_axes[d]` lists the mesh axes splitting tensor dim `d`, major to minor;
    /// `others` gives the use of mesh axes that split no dim (default: replicated).
    pub fn new(
        mesh: &Mesh,
        dims: Vec<u64>,
        dim_axes: Vec<Vec<usize>>,
        others: &[(usize, AxisUse)],
    ) -> Result<Sharding> {
        if dim_axes.len() != dims.len() {
            return Err(ShardError::Sharding(format!(
                "{} dims sharded but the array has {} dims",
                dim_axes.len(),
                dims.len()
            )));
        }
        let mut axis_use = vec![AxisUse::Replicated; mesh.rank()];
        let mut seen = vec![false; mesh.rank()];
        for (d, axes) in dim_axes.iter().enumerate() {
            for &a in axes {
                let name = mesh.names().get(a).ok_or_else(|| {
                    ShardError::Sharding(format!(
                        "mesh axis {a} out of range (the mesh has {})",
                        mesh.rank()
                    ))
                })?;
                if seen[a] {
                    return Err(ShardError::Sharding(format!(
                        "mesh axis {name:?} is used twice"
                    )));
                }
                seen[a] = true;
                axis_use[a] = AxisUse::Split(d);
            }
        }
        for &(a, u) in others {
            if a >= mesh.rank() {
                return Err(ShardError::Sharding(format!("mesh axis {a} out of range")));
            }
            if seen[a] || matches!(u, AxisUse::Split(_)) {
                return Err(ShardError::Sharding(format!(
                    "mesh axis {:?} is used twice",
                    mesh.names()[a]
                )));
            }
            axis_use[a] = u;
        }
        Ok(Sharding {
            dims,
            dim_axes,
            axis_use,
            maximal: None,
            uneven: Uneven::Xla,
            placement: None,
            hints: None,
        })
    }

    /// Every device of the mesh holds the whole array.
    pub fn replicated(mesh: &Mesh, dims: Vec<u64>) -> Sharding {
        let n = dims.len();
        Sharding {
            dims,
            dim_axes: vec![Vec::new(); n],
            axis_use: vec![AxisUse::Replicated; mesh.rank()],
            maximal: None,
            uneven: Uneven::Xla,
            placement: None,
            hints: None,
        }
    }

    /// Device `device` (an id of the mesh) holds the whole array; the others hold nothing.
    pub fn maximal(mesh: &Mesh, dims: Vec<u64>, device: u64) -> Result<Sharding> {
        if !mesh.devices().contains(&device) {
            return Err(ShardError::Sharding(format!(
                "device {device} is not in the mesh"
            )));
        }
        let mut s = Sharding::replicated(mesh, dims);
        s.maximal = Some(device);
        Ok(s)
    }

    /// The same sharding under another uneven-shard rule.
    pub fn with_uneven(mut self, uneven: Uneven) -> Sharding {
        self.uneven = uneven;
        self
    }

    /// The same sharding with its own device placement: `devices[v]` is the device that plays mesh position
    /// `v` (row-major) for this sharding, where the mesh's own order is not the one its tiles follow (an
    /// HloSharding's tile assignment names devices in any order). `devices` must hold the mesh's device ids,
    /// each once; the mesh's own order is no placement. A maximal sharding has none (it names its device).
    pub fn with_placement(mut self, mesh: &Mesh, devices: Vec<u64>) -> Result<Sharding> {
        let mut a = devices.clone();
        let mut b = mesh.devices().to_vec();
        a.sort_unstable();
        b.sort_unstable();
        if a != b {
            return Err(ShardError::Sharding(format!(
                "a placement of devices {} is not an order of the mesh's devices {}",
                list_text(&devices),
                list_text(mesh.devices())
            )));
        }
        self.placement = (self.maximal.is_none() && devices.as_slice() != mesh.devices())
            .then(|| std::sync::Arc::from(devices));
        Ok(self)
    }

    /// The same sharding with Shardy's hints `hints`, one per tensor dim ([`DimHint`]; all default: none).
    /// Errors: a list of another length, a priority on a closed dim listing no axis (Shardy's verifier
    /// refuses `{}p0`), hints on a maximal sharding (it lists no dims). Law: the regions are unchanged.
    pub fn with_hints(mut self, hints: Vec<DimHint>) -> Result<Sharding> {
        if hints.iter().all(|h| *h == DimHint::default()) {
            self.hints = None;
            return Ok(self);
        }
        if hints.len() != self.dims.len() {
            return Err(ShardError::Sharding(format!(
                "{} dims' hints for an array of {} dims",
                hints.len(),
                self.dims.len()
            )));
        }
        if self.maximal.is_some() {
            return Err(ShardError::Sharding(
                "a maximal sharding lists no dims, so it has no open dims or priorities".into(),
            ));
        }
        if let Some(d) = (0..hints.len())
            .find(|&d| hints[d].priority.is_some() && !hints[d].open && self.dim_axes[d].is_empty())
        {
            return Err(ShardError::Sharding(format!(
                "dim {d} is closed and lists no mesh axis, so it has no priority (Shardy's \
                 verifier refuses {{}}p{})",
                hints[d].priority.unwrap_or(0)
            )));
        }
        self.hints = Some(std::sync::Arc::from(hints));
        Ok(self)
    }

    /// Shardy's hint for tensor dim `d` ([`DimHint`]; the default where it has none).
    pub fn dim_hint(&self, d: usize) -> DimHint {
        self.hints
            .as_ref()
            .and_then(|h| h.get(d).copied())
            .unwrap_or_default()
    }

    /// Whether some dim is open or has a priority (what only Shardy text says).
    pub fn has_hints(&self) -> bool {
        self.hints.is_some()
    }

    /// The same sharding with `from`'s Shardy hints (an array of the same dims, restated on another mesh).
    pub(crate) fn hints_of(mut self, from: &Sharding) -> Sharding {
        if from.dims.len() == self.dims.len() && self.maximal.is_none() {
            self.hints = from.hints.clone();
        }
        self
    }

    /// The sharding's own device placement, where it has one (see [`Sharding::with_placement`]).
    pub fn placement(&self) -> Option<&[u64]> {
        self.placement.as_deref()
    }

    /// The device playing mesh position `v` for this sharding.
    pub fn device_at(&self, mesh: &Mesh, v: usize) -> u64 {
        match &self.placement {
            Some(p) => p[v],
            None => mesh.devices()[v],
        }
    }

    /// Per mesh position `p`, the position its device plays for this sharding (the identity without a
    /// placement).
    pub fn played_positions(&self, mesh: &Mesh) -> Vec<usize> {
        match &self.placement {
            None => (0..mesh.len()).collect(),
            Some(pl) => {
                let at: std::collections::HashMap<u64, usize> =
                    pl.iter().enumerate().map(|(v, &d)| (d, v)).collect();
                mesh.devices()
                    .iter()
                    .enumerate()
                    .map(|(p, d)| at.get(d).copied().unwrap_or(p))
                    .collect()
            }
        }
    }

    /// [`ShardError::Inexpressible`] for `notation` (which places devices by the mesh's order) when the
    /// sharding has a placement of its own. The message says how to read it so that it has one: on a mesh
    /// listing its devices in the tiles' order, or with no mesh (HLO and Shardy text then bring their own).
    /// The order is shown whole up to 16 devices, else its first 12 and the count.
    pub(crate) fn require_mesh_order(&self, notation: &'static str) -> Result<()> {
        match &self.placement {
            None => Ok(()),
            Some(p) => {
                let order = if p.len() <= 16 {
                    format!("{p:?}")
                } else {
                    let head: Vec<String> = p[..12].iter().map(u64::to_string).collect();
                    format!("[{}, … ({} devices)]", head.join(", "), p.len())
                };
                Err(ShardError::Inexpressible {
                    notation,
                    why: format!(
                        "its tiles follow the device order {order}, not the mesh's; {notation} places \
                         devices by the mesh's order: read it on a mesh listing its devices in the \
                         tiles' order, or with no mesh, to write it in {notation}"
                    ),
                })
            }
        }
    }

    /// The array's dims.
    pub fn dims(&self) -> &[u64] {
        &self.dims
    }

    /// Per tensor dim, the mesh axes splitting it, major to minor.
    pub fn dim_axes(&self) -> &[Vec<usize>] {
        &self.dim_axes
    }

    /// Per mesh axis, what it does.
    pub fn axis_use(&self) -> &[AxisUse] {
        &self.axis_use
    }

    /// The mesh axes holding partial values, in mesh order, each with the op that combines them.
    /// Law: `(a, op)` is listed iff `axis_use()[a] == AxisUse::Partial(op)`.
    pub fn partial_axes(&self) -> Vec<(usize, ReduceOp)> {
        self.axis_use
            .iter()
            .enumerate()
            .filter_map(|(a, u)| match u {
                AxisUse::Partial(op) => Some((a, *op)),
                _ => None,
            })
            .collect()
    }

    /// The device holding everything, for a maximal sharding.
    pub fn maximal_device(&self) -> Option<u64> {
        self.maximal
    }

    /// The uneven-shard rule.
    pub fn uneven(&self) -> Uneven {
        self.uneven
    }

    /// The number of shards of tensor dim `d` (the product of its mesh axes' sizes).
    pub fn shards_of(&self, mesh: &Mesh, d: usize) -> u64 {
        self.dim_axes[d].iter().map(|&a| mesh.sizes()[a]).product()
    }

    /// The same sharding with the partial mesh axes `axes` reduced to replicated (axes that are not
    /// partial are left as they are): the sharding of the array once those partial values are combined.
    pub(crate) fn reduced_on(&self, axes: &[usize]) -> Sharding {
        let mut s = self.clone();
        for &a in axes {
            if let Some(u @ AxisUse::Partial(_)) = s.axis_use.get_mut(a) {
                *u = AxisUse::Replicated;
            }
        }
        s
    }

    /// The mesh axes not splitting any dim, in mesh order, with their use.
    pub fn unsplit_axes(&self) -> Vec<(usize, AxisUse)> {
        self.axis_use
            .iter()
            .enumerate()
            .filter(|(_, u)| !matches!(u, AxisUse::Split(_)))
            .map(|(a, &u)| (a, u))
            .collect()
    }
}
