//! Planning cases for benchmarks: typical reshards on meshes of 8 to 4,096 devices.

use crate::error::Result;
use crate::mesh::Mesh;
use crate::model::{AxisUse, ReduceOp, Sharding};

/// One planning case: a name, the mesh, and the source and destination shardings.
pub type BenchPlan = (String, Mesh, Sharding, Sharding);

/// Reshard cases whose planning time `axe bench shard` measures, on `x` × `y` meshes of 8, 64, 512 and
/// 4,096 devices, for an array of 8,192 × 8,192 (each within groups of `y` devices, so a plan has
/// `devices × y` messages at most):
///
/// - `all-to-all`: `P(('x','y'), None)` → `P('x', 'y')`;
/// - `all-gather`: `P('x', 'y')` → `P('x', None)`;
/// - `reduce-scatter`: `[Shard(0), Partial()]` → `P(('x','y'))`;
/// - `permute`: `P(('x','y'))` → `P(('y','x'))` (every shard moves whole to one other device);
/// - `transpose`: `P('x', 'y')` → `P('y', 'x')`.
pub fn bench_plans() -> Result<Vec<BenchPlan>> {
    let dims = vec![8192u64, 8192];
    let mut out = Vec::new();
    for (x, y) in [(2u64, 4u64), (8, 8), (16, 32), (64, 64)] {
        let n = x * y;
        let mesh = Mesh::new(&[("x", x), ("y", y)])?;
        let s =
            |d: Vec<Vec<usize>>, o: &[(usize, AxisUse)]| Sharding::new(&mesh, dims.clone(), d, o);
        let partial = AxisUse::Partial(ReduceOp::Sum);
        let cases = [
            (
                "all-to-all",
                s(vec![vec![0, 1], vec![]], &[])?,
                s(vec![vec![0], vec![1]], &[])?,
            ),
            (
                "all-gather",
                s(vec![vec![0], vec![1]], &[])?,
                s(vec![vec![0], vec![]], &[])?,
            ),
            (
                "reduce-scatter",
                s(vec![vec![0], vec![]], &[(1, partial)])?,
                s(vec![vec![0, 1], vec![]], &[])?,
            ),
            (
                "permute",
                s(vec![vec![0, 1], vec![]], &[])?,
                s(vec![vec![1, 0], vec![]], &[])?,
            ),
            (
                "transpose",
                s(vec![vec![0], vec![1]], &[])?,
                s(vec![vec![1], vec![0]], &[])?,
            ),
        ];
        for (name, src, dst) in cases {
            out.push((format!("plan {name} {n} devices"), mesh.clone(), src, dst));
        }
    }
    Ok(out)
}
