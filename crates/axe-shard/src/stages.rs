//! Reshards reducing partial values pending different ops on different mesh axes, planned in stages.
//!
//! **The value of a multi-op partial sharding.** A sharding partial over mesh axes `a1 < a2 < … < ak`
//! (mesh order) with ops `op1, …, opk` holds the array `opk over ak ( … op2 over a2 ( op1 over a1 (parts)))`:
//! the first mesh axis is reduced first. This is DTensor's: `redistribute` of `[Partial('max'),
//! Partial('sum')]` to `[Replicate(), Replicate()]` all-reduces mesh dim 0 with `max`, then mesh dim 1
//! with `sum` (`_gen_transform_infos` walks the placements from the first mesh dim; torch walks them from
//! the last only in its first pass for misaligned `Shard`s, where a source with a `Shard` would reduce
//! the other way round; axe keeps one value per sharding, the placement order). Axes with one op next to
//! each other in that order may be reduced together (every op here is associative and commutative, `avg`
//! over equal groups included), so the reduction is one stage per run of equal ops.
//!
//! **What has no meaning.** Reducing axis `r` while an axis `k < r` with another op stays partial: the
//! value reduces `k` before `r`, and `op_r` over `r` of `op_k` over `k` is not `op_k` over `k` of `op_r`
//! over `r` (`max` of sums is not the sum of maxes). [`crate::plan()`] refuses it, saying so.

use crate::error::{Result, ShardError};
use crate::mesh::Mesh;
use crate::model::{AxisUse, ReduceOp, Sharding};
use crate::plan::{plan, CostModel, Plan};

/// One stage of a staged reshard: the plan of `src` → `dst`.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    /// The sharding the stage starts from.
    pub src: Sharding,
    /// The sharding it leaves.
    pub dst: Sharding,
    /// Its plan.
    pub plan: Plan,
}

impl Stage {
    /// The mesh axes this stage reduces, in mesh order, with their op: the axes partial in `src` and not
    /// in `dst`. Law: every op listed is the same one ([`stage_shardings`] makes one stage per op).
    pub fn reduced(&self) -> Vec<(usize, ReduceOp)> {
        partial_axes(&self.src)
            .into_iter()
            .filter(|&(a, _)| !matches!(self.dst.axis_use().get(a), Some(AxisUse::Partial(_))))
            .collect()
    }

    /// What the stage reduces, as `axe shard plan` says it: `max over "x"`, `sum over "y", "z"`, or
    /// `nothing` for a stage reducing no axis (a plan in one stage).
    pub fn reduced_text(&self, mesh: &Mesh) -> String {
        let r = self.reduced();
        let Some(&(_, op)) = r.first() else {
            return "nothing".to_string();
        };
        let names: Vec<String> = r
            .iter()
            .map(|&(a, _)| format!("{:?}", mesh.names().get(a).map_or("?", String::as_str)))
            .collect();
        format!("{} over {}", op.name(), names.join(", "))
    }
}

/// The partial mesh axes of `s`, in mesh order, with their ops ([`Sharding::partial_axes`]).
pub(crate) fn partial_axes(s: &Sharding) -> Vec<(usize, ReduceOp)> {
    s.partial_axes()
}

/// The shardings a reshard from `src` to `dst` passes through: `[(src, s1), (s1, s2), …, (sn, dst)]`,
/// one pair per run of equal ops among the source's partial axes that `dst` reduces (not partial in
/// `dst`), in mesh order. Each intermediate sharding is the previous one with that run's axes replicated.
/// A reshard reducing one op (or none) is one stage, `[(src, dst)]`.
///
/// Law: each stage reduces axes of one op only, every axis before them in mesh order that is still partial
/// in the stage's source has been reduced already or stays partial to the end, and composing the stages
/// gives the value the module doc defines. Whether a stage has a meaning is [`crate::plan()`]'s to say.
pub fn stage_shardings(src: &Sharding, dst: &Sharding) -> Vec<(Sharding, Sharding)> {
    let reduced: Vec<(usize, ReduceOp)> = partial_axes(src)
        .into_iter()
        .filter(|&(a, _)| !matches!(dst.axis_use().get(a), Some(AxisUse::Partial(_))))
        .collect();
    let mut runs: Vec<Vec<usize>> = Vec::new();
    let mut last: Option<ReduceOp> = None;
    for &(a, op) in &reduced {
        match runs.last_mut() {
            Some(run) if last == Some(op) => run.push(a),
            _ => runs.push(vec![a]),
        }
        last = Some(op);
    }
    let mut out = Vec::new();
    let mut cur = src.clone();
    for run in runs.iter().take(runs.len().saturating_sub(1)) {
        let next = cur.reduced_on(run);
        out.push((cur, next.clone()));
        cur = next;
    }
    out.push((cur, dst.clone()));
    out
}

/// The plans of [`stage_shardings`]: each stage planned with [`crate::plan()`] (its law holds per stage).
/// Executed one after another, each stage's destination shards being the next one's source, they turn
/// `src` into `dst`, reducing the source's partial axes in mesh order (the module doc's value). Errors:
/// any stage's plan error, named by its stage where there is more than one.
pub fn plan_stages(
    mesh: &Mesh,
    src: &Sharding,
    dst: &Sharding,
    elem_bytes: u64,
    cost: &CostModel,
) -> Result<Vec<Stage>> {
    let pairs = stage_shardings(src, dst);
    let n = pairs.len();
    pairs
        .into_iter()
        .enumerate()
        .map(|(i, (s, d))| {
            let p = plan(mesh, &s, &d, elem_bytes, cost).map_err(|e| match e {
                ShardError::Sharding(m) if n > 1 => {
                    ShardError::Sharding(format!("stage {} of {n}: {m}", i + 1))
                }
                e => e,
            })?;
            Ok(Stage {
                src: s,
                dst: d,
                plan: p,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::notation::dtensor::parse_dtensor;

    /// `op` over `vals` (`avg`: their mean).
    fn combine(op: ReduceOp, vals: &[f64]) -> f64 {
        let f = |a: f64, b: f64| match op {
            ReduceOp::Sum | ReduceOp::Avg => a + b,
            ReduceOp::Product => a * b,
            ReduceOp::Max => a.max(b),
            ReduceOp::Min => a.min(b),
        };
        let r = vals[1..].iter().fold(vals[0], |a, &b| f(a, b));
        if op == ReduceOp::Avg {
            r / vals.len() as f64
        } else {
            r
        }
    }

    /// Contribution `j` (the coordinates on the source's partial axes) of element `e`.
    fn part(j: &[u64], e: u64, seed: u64) -> f64 {
        let h = j
            .iter()
            .fold(seed.wrapping_add(e * 17), |h, &c| h * 31 + c * 7 + 3);
        (h % 7) as f64 - 3.0
    }

    /// The row-major linear index of a global index.
    fn lin(dims: &[u64], idx: &[u64]) -> u64 {
        idx.iter().zip(dims).fold(0, |a, (&i, &d)| a * d + i)
    }

    /// Every global index of `region`.
    fn each(region: &[std::ops::Range<u64>]) -> Vec<Vec<u64>> {
        region.iter().fold(vec![vec![]], |acc, r| {
            acc.iter()
                .flat_map(|p| {
                    r.clone().map(move |i| {
                        let mut q = p.clone();
                        q.push(i);
                        q
                    })
                })
                .collect()
        })
    }

    /// Runs `stages` on values by brute force: device → (linear index → value).
    fn simulate(
        mesh: &Mesh,
        stages: &[Stage],
        start: HashMap<u64, HashMap<u64, f64>>,
    ) -> HashMap<u64, HashMap<u64, f64>> {
        let mut held = start;
        for st in stages {
            let dims = st.src.dims().to_vec();
            let mut next: HashMap<u64, HashMap<u64, f64>> = HashMap::new();
            let mut pending: HashMap<(u64, u64), (ReduceOp, Vec<f64>)> = HashMap::new();
            let pieces = st
                .plan
                .locals
                .iter()
                .map(|l| (l.device, l.device, &l.region, l.reduce))
                .chain(
                    st.plan
                        .transfers
                        .iter()
                        .map(|t| (t.from, t.to, &t.region, t.reduce)),
                );
            for (from, to, region, reduce) in pieces {
                for idx in each(region) {
                    let e = lin(&dims, &idx);
                    let v = held[&from][&e];
                    match reduce {
                        None => {
                            next.entry(to).or_default().insert(e, v);
                        }
                        Some(op) => pending.entry((to, e)).or_insert((op, vec![])).1.push(v),
                    }
                }
            }
            for ((to, e), (op, vals)) in pending {
                next.entry(to).or_default().insert(e, combine(op, &vals));
            }
            for d in mesh.devices() {
                next.entry(*d).or_default();
            }
            held = next;
        }
        held
    }

    /// What device `coords` holds of element `e` reducing `src`'s partial axes not partial in `dst`, in
    /// mesh order (the first reduced first), computed directly from the parts.
    fn reference(
        mesh: &Mesh,
        src: &Sharding,
        dst: &Sharding,
        coords: &[u64],
        e: u64,
        seed: u64,
    ) -> f64 {
        let axes = partial_axes(src);
        // Every combination of coordinates on the partial axes, with its part.
        let mut table: Vec<(Vec<u64>, f64)> = vec![(vec![], 0.0)];
        for &(a, _) in &axes {
            let keep = matches!(dst.axis_use()[a], AxisUse::Partial(_));
            table = table
                .iter()
                .flat_map(|(j, _)| {
                    (0..mesh.sizes()[a])
                        .filter(move |&c| !keep || c == coords[a])
                        .map(move |c| {
                            let mut k = j.clone();
                            k.push(c);
                            (k, 0.0)
                        })
                })
                .collect();
        }
        for (j, v) in table.iter_mut() {
            *v = part(j, e, seed);
        }
        // Reduce the first partial axis first: group by the coordinates after it.
        for (i, &(a, op)) in axes.iter().enumerate() {
            if matches!(dst.axis_use()[a], AxisUse::Partial(_)) {
                continue;
            }
            let mut groups: Vec<(Vec<u64>, Vec<f64>)> = Vec::new();
            for (j, v) in &table {
                let mut key = j.clone();
                key[i] = 0;
                match groups.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, vs)) => vs.push(*v),
                    None => groups.push((key, vec![*v])),
                }
            }
            table = groups
                .into_iter()
                .map(|(k, vs)| (k, combine(op, &vs)))
                .collect();
        }
        assert_eq!(table.len(), 1);
        table[0].1
    }

    /// Law: on small meshes, for sources partial with any ops on any axes, the staged plans reduce to
    /// exactly the reference value (the partial axes reduced in mesh order) on every destination
    /// element; they are refused exactly where an axis is reduced while an earlier one with another op
    /// stays partial.
    #[test]
    fn staged_reductions_equal_the_reference_by_brute_force() {
        let ops = [
            ReduceOp::Sum,
            ReduceOp::Max,
            ReduceOp::Min,
            ReduceOp::Product,
            ReduceOp::Avg,
        ];
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let (mut planned, mut refused, mut staged) = (0, 0, 0);
        for case in 0..300u64 {
            let rank = 2 + next(2) as usize;
            let names = ["x", "y", "z"];
            let axes: Vec<(&str, u64)> = (0..rank).map(|a| (names[a], 1 + next(3))).collect();
            let mesh = Mesh::new(&axes).unwrap();
            let dims = vec![1 + next(5), 1 + next(3)];
            let mut src_p = Vec::new();
            let mut dst_p = Vec::new();
            for _ in 0..rank {
                let op = ops[next(5) as usize];
                let s = if next(4) == 0 {
                    format!("Shard({})", next(2))
                } else {
                    format!("Partial({})", op.name())
                };
                let d = match next(3) {
                    0 if s.starts_with("Partial") => s.clone(),
                    0 | 1 => "Replicate()".to_string(),
                    _ => format!("Shard({})", next(2)),
                };
                src_p.push(s);
                dst_p.push(d);
            }
            let text = |p: &[String]| format!("[{}]", p.join(", "));
            let src = parse_dtensor(&text(&src_p), &mesh, &dims).unwrap();
            let dst = parse_dtensor(&text(&dst_p), &mesh, &dims).unwrap();
            let partial = partial_axes(&src);
            let kept = |a: usize| matches!(dst.axis_use()[a], AxisUse::Partial(_));
            let meaningless = partial.iter().any(|&(r, op_r)| {
                !kept(r)
                    && partial
                        .iter()
                        .any(|&(k, op_k)| k < r && kept(k) && op_k != op_r)
            });
            let stages = plan_stages(&mesh, &src, &dst, 4, &CostModel::default());
            let what = format!(
                "case {case}: {} -> {} on {axes:?}, {dims:?}",
                text(&src_p),
                text(&dst_p)
            );
            if meaningless {
                let e = stages.expect_err(&what).to_string();
                assert!(e.contains("cannot be reduced while"), "{what}: {e}");
                refused += 1;
                continue;
            }
            let stages = stages.unwrap_or_else(|e| panic!("{what}: {e}"));
            let regions = src.regions(&mesh).unwrap();
            let mut start: HashMap<u64, HashMap<u64, f64>> = HashMap::new();
            for r in &regions {
                let c = mesh.coords(r.position);
                let j: Vec<u64> = partial.iter().map(|&(a, _)| c[a]).collect();
                let m = start.entry(r.device).or_default();
                for idx in each(&r.region) {
                    let e = lin(&dims, &idx);
                    m.insert(e, part(&j, e, case));
                }
            }
            staged += usize::from(stages.len() > 1);
            let out = simulate(&mesh, &stages, start);
            for r in dst.regions(&mesh).unwrap() {
                let c = mesh.coords(r.position);
                for idx in each(&r.region) {
                    let e = lin(&dims, &idx);
                    let want = reference(&mesh, &src, &dst, &c, e, case);
                    let got = out[&r.device][&e];
                    assert!(
                        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                        "{what}: element {idx:?} on {}: {got} != {want}",
                        r.device
                    );
                }
            }
            planned += 1;
        }
        assert!(
            planned > 100 && refused > 5 && staged > 20,
            "{planned} planned ({staged} in stages), {refused} refused"
        );
    }

    /// DTensor's `[Partial(max), Partial(sum)]` is `sum` over the second mesh dim of `max` over the first:
    /// two stages, the max first.
    #[test]
    fn max_then_sum_is_two_stages_in_mesh_order() {
        let mesh = Mesh::new(&[("x", 2), ("y", 3)]).unwrap();
        let src = parse_dtensor("[Partial(max), Partial(sum)]", &mesh, &[7, 3]).unwrap();
        let dst = parse_dtensor("[Replicate(), Replicate()]", &mesh, &[7, 3]).unwrap();
        let st = plan_stages(&mesh, &src, &dst, 1, &CostModel::default()).unwrap();
        assert_eq!(st.len(), 2);
        assert_eq!(st[0].dst.axis_use()[0], AxisUse::Replicated);
        assert_eq!(st[0].dst.axis_use()[1], AxisUse::Partial(ReduceOp::Sum));
        assert!(st[0]
            .plan
            .transfers
            .iter()
            .all(|t| t.reduce == Some(ReduceOp::Max)));
        assert!(st[1]
            .plan
            .transfers
            .iter()
            .all(|t| t.reduce == Some(ReduceOp::Sum)));
        // Keeping the outer sum while reducing the inner max is one stage; the other way has no meaning.
        let inner = parse_dtensor("[Replicate(), Partial(sum)]", &mesh, &[7, 3]).unwrap();
        assert_eq!(
            plan_stages(&mesh, &src, &inner, 1, &CostModel::default())
                .unwrap()
                .len(),
            1
        );
        let outer = parse_dtensor("[Partial(max), Replicate()]", &mesh, &[7, 3]).unwrap();
        let e = plan(&mesh, &src, &outer, 1, &CostModel::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("\"y\" (sum) cannot be reduced while mesh axis \"x\" (max) stays partial"),
            "{e}"
        );
    }
}
