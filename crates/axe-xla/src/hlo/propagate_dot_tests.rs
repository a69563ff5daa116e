//! The sharding inferred for a `dot` result (and an elementwise one of tiled operands), against XLA's own choice (golden modules from JAX) and
//! against its law (brute force over small shapes).

#![allow(clippy::unwrap_used, clippy::panic)]

use super::parse_module;
use super::per_device::OutputSharding;
use super::propagate::root_sharding_in;
use super::propagate_dot::{dot_sharding, merged_elementwise, DotDims};
use super::sharding::{parse_sharding, Sharding, TileAssignment};
use crate::shape::Shape;

/// One module of `tests/hlo_dot/cases.txt` (written by `gen.py` from jax 0.10.2).
struct Case {
    name: String,
    infers: bool,
    /// XLA's sharding of the result and its output bytes, under GSPMD and under Shardy.
    gspmd: (i64, String),
    shardy: (i64, String),
    hlo: String,
}

fn cases() -> Vec<Case> {
    let text = include_str!("../../tests/hlo_dot/cases.txt");
    let mut out = Vec::new();
    for block in text.split("\n=== ").skip(1) {
        let (head, rest) = block.split_once('\n').unwrap();
        let (name, expect) = head.split_once(' ').unwrap();
        let mut lines = rest.lines().filter(|l| !l.starts_with('#'));
        let mut xla = |tag: &str| {
            let l = lines.next().unwrap().strip_prefix(tag).unwrap();
            let (bytes, s) = l.trim().split_once(' ').unwrap();
            (bytes.parse().unwrap(), s.to_string())
        };
        let (gspmd, shardy) = (xla("gspmd:"), xla("shardy:"));
        let hlo = lines.collect::<Vec<_>>().join("\n") + "\n";
        out.push(Case {
            name: name.to_string(),
            infers: expect == "infers",
            gspmd,
            shardy,
            hlo,
        });
    }
    out
}

/// Per device of `n`, the region it holds of each array of `shape` under `s` (a tuple sharding for a
/// tuple), sorted: two shardings that place the same elements on the same devices compare equal.
fn placement(s: &Sharding, shape: &Shape, n: i64) -> Vec<(i64, Vec<Vec<std::ops::Range<i64>>>)> {
    let arrays = shape.arrays();
    let parts: Vec<&Sharding> = match s {
        Sharding::Tuple(list) => list.iter().collect(),
        one => vec![one; arrays.len()],
    };
    assert_eq!(parts.len(), arrays.len());
    (0..n)
        .map(|d| {
            let regions = parts
                .iter()
                .zip(&arrays)
                .map(|(p, (_, a))| {
                    let dims: Vec<i64> = a.dims.iter().map(|x| x.bound().unwrap()).collect();
                    let shards = p.shards(&dims).unwrap();
                    let mine = shards
                        .iter()
                        .find(|x| x.device.is_none_or(|x| x == d))
                        .unwrap();
                    mine.region.clone()
                })
                .collect();
            (d, regions)
        })
        .collect()
}

/// Each module of JAX's (a dot on 8 CPU devices, its result unannotated): where axe infers a
/// sharding, both of XLA's partitioners chose one that places every element on the same devices,
/// and axe's output bytes are `memory_analysis()`'s; where it infers none, it counts the result whole
/// (never below XLA's figure).
#[test]
fn dot_results_as_xla_shards_them() {
    let cases = cases();
    assert!(cases.len() >= 40);
    let mut inferred = 0;
    for c in &cases {
        let m = parse_module(&c.hlo).unwrap();
        let entry = m.entry().unwrap();
        let root = entry.instructions.iter().find(|i| i.is_root()).unwrap();
        let shape = root.shape().unwrap().unwrap();
        let ours = root_sharding_in(entry, None, &m.computations);
        let report = super::stats::report(&m, 0).unwrap();
        let p = report.per_device.as_ref().unwrap();
        if c.infers {
            inferred += 1;
            assert_eq!(c.gspmd, c.shardy, "{}: the partitioners differ", c.name);
            let ours = ours.unwrap_or_else(|| panic!("{}: nothing inferred", c.name));
            let xla = parse_sharding(&c.shardy.1).unwrap();
            assert_eq!(
                placement(&ours, &shape, 8),
                placement(&xla, &shape, 8),
                "{}: axe {ours}, XLA {xla}",
                c.name
            );
            assert_eq!(p.output_sharding, OutputSharding::Inferred, "{}", c.name);
            assert_eq!(p.output_bytes, c.shardy.0, "{}", c.name);
        } else {
            assert_eq!(ours, None, "{}", c.name);
            assert_eq!(p.output_sharding, OutputSharding::Whole, "{}", c.name);
            assert!(p.output_bytes >= c.gspmd.0.max(c.shardy.0), "{}", c.name);
        }
    }
    assert!(inferred >= 30);
}

#[test]
fn dot_dims_read_and_checked() {
    let m = parse_module("ENTRY e {\n  a = f32[4,8,16]{2,1,0} parameter(0)\n  b = f32[4,16,6]{2,1,0} parameter(1)\n  ROOT d = f32[4,8,6]{2,1,0} dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}\n}\n").unwrap();
    let d = DotDims::of(m.entry().unwrap().instructions.last().unwrap()).unwrap();
    assert_eq!(
        d.result_dims(false, 3, 3),
        Some(vec![Some(0), Some(1), None])
    );
    assert_eq!(
        d.result_dims(true, 3, 3),
        Some(vec![Some(0), None, Some(2)])
    );
    // A dim out of range, or named twice.
    let bad = DotDims {
        lhs_batch: vec![0],
        rhs_batch: vec![0],
        lhs_contracting: vec![0],
        rhs_contracting: vec![1],
    };
    assert_eq!(bad.result_dims(false, 3, 3), None);
    assert_eq!(d.result_dims(false, 2, 3), None);
}

/// A sharding of an array of rank `rank` over a mesh of `mesh` dims whose devices are `ids` (row
/// major): array dim `k` split over the mesh axes `axes[k]`, in order, the axes no dim takes
/// replicating (as JAX's `NamedSharding` gives it).
fn named(mesh: &[i64], ids: &[i64], axes: &[Vec<usize>]) -> Sharding {
    let mut order: Vec<usize> = axes.iter().flatten().copied().collect();
    let used = order.clone();
    order.extend((0..mesh.len()).filter(|a| !used.contains(a)));
    let mut dims: Vec<i64> = axes
        .iter()
        .map(|a| a.iter().map(|&x| mesh[x]).product())
        .collect();
    let rest: i64 = (0..mesh.len())
        .filter(|a| !used.contains(a))
        .map(|a| mesh[a])
        .product();
    if dims.iter().all(|&d| d == 1) {
        return Sharding::Replicated { metadata: None };
    }
    if rest > 1 {
        dims.push(rest);
    }
    // The mesh's devices transposed to `order`, row major.
    let n = ids.len();
    let mut stride = vec![1usize; mesh.len()];
    for k in (0..mesh.len().saturating_sub(1)).rev() {
        stride[k] = stride[k + 1] * mesh[k + 1] as usize;
    }
    let mut devices = Vec::with_capacity(n);
    let mut idx = vec![0i64; order.len()];
    for _ in 0..n {
        let at: usize = idx
            .iter()
            .zip(&order)
            .map(|(&i, &a)| i as usize * stride[a])
            .sum();
        devices.push(ids[at]);
        for k in (0..idx.len()).rev() {
            idx[k] += 1;
            if idx[k] < mesh[order[k]] {
                break;
            }
            idx[k] = 0;
        }
    }
    Sharding::Tiled {
        tile_assignment: TileAssignment::Explicit { dims, devices },
        last_tile_dim_replicate: rest > 1,
        last_tile_dims: Vec::new(),
        metadata: None,
    }
}

/// Whether device `d` holds, of an array whose shards are `shards`, the elements at `at` on the dims
/// `to` names (`to[i]`: the coordinate of `at` that dim `i` must cover; `None`: any).
fn covers(
    shards: &[super::sharding::DeviceShard],
    d: i64,
    to: &[Option<usize>],
    at: &[i64],
) -> bool {
    shards.iter().any(|x| {
        x.device.is_none_or(|x| x == d)
            && to
                .iter()
                .enumerate()
                .all(|(i, t)| t.is_none_or(|t| x.region[i].contains(&at[t])))
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

    /// Law of [`dot_sharding`], by brute force: `bmk,bkn->bmn` (batch and the `m`/`n` dims optional)
    /// with operands sharded over one small mesh as JAX shards them (each dim over some mesh axes,
    /// the rest replicating, devices in any order), odd sizes included. Where it answers, a device holds
    /// a result element iff each operand tile it holds covers the element on the operand's
    /// batch and non-contracting dims; where the operands use different mesh axes and agree on the
    /// batch dim, it answers.
    #[test]
    fn inferred_dot_tiles_are_the_operands_tiles(
        mesh in proptest::collection::vec(2i64..4, 1..4),
        sizes in proptest::collection::vec(1i64..7, 4),
        has in proptest::collection::vec(proptest::prelude::any::<bool>(), 2),
        picks in proptest::collection::vec(0usize..8, 6),
        seed in proptest::prelude::any::<u64>(),
    ) {
        let n: i64 = mesh.iter().product();
        let mut ids: Vec<i64> = (0..n).collect();
        let mut state = seed | 1;
        for i in (1..ids.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ids.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let (batch, mdim) = (has[0], has[1]);
        let (b, m, k, nn) = (sizes[0], sizes[1], sizes[2], sizes[3]);
        // Operand dims: lhs [b?, m?, k], rhs [b?, k, n].
        let mut ld = Vec::new();
        let mut rd = Vec::new();
        if batch { ld.push(b); rd.push(b); }
        if mdim { ld.push(m); }
        ld.push(k);
        rd.push(k);
        rd.push(nn);
        let nb = usize::from(batch);
        let dims = DotDims {
            lhs_batch: if batch { vec![0] } else { vec![] },
            rhs_batch: if batch { vec![0] } else { vec![] },
            lhs_contracting: vec![ld.len() - 1],
            rhs_contracting: vec![nb],
        };
        let mut out = Vec::new();
        if batch { out.push(b); }
        if mdim { out.push(m); }
        out.push(nn);
        // Each operand dim takes mesh axis `pick - 1` (0: none), each axis once per operand.
        let axes = |rank: usize, at: usize| -> Vec<Vec<usize>> {
            let mut taken = vec![false; mesh.len()];
            (0..rank).map(|i| {
                let p = picks[at + i] % (mesh.len() + 1);
                if p == 0 || std::mem::replace(&mut taken[p - 1], true) { vec![] } else { vec![p - 1] }
            }).collect()
        };
        let la = axes(ld.len(), 0);
        let mut ra = axes(rd.len(), 3);
        let common_batch = batch && picks[5] % 2 == 0;
        if common_batch {
            ra[0] = la[0].clone();
            for a in ra.iter_mut().skip(1) {
                if a.iter().any(|x| la[0].contains(x)) { *a = vec![]; }
            }
        }
        let ls = named(&mesh, &ids, &la);
        let rs = named(&mesh, &ids, &ra);
        let got = dot_sharding(&dims, (&ls, &ld), (&rs, &rd), &out);
        // Answers where the operands' result axes do not meet.
        let lhs_result: Vec<usize> = la.iter().take(ld.len() - 1).flatten().copied().collect();
        let rhs_result: Vec<usize> = ra.iter().enumerate()
            .filter(|&(i, _)| i != nb && !(common_batch && i == 0)).flat_map(|x| x.1.clone()).collect();
        if !lhs_result.iter().any(|a| rhs_result.contains(a))
            && (!batch || ra[0].is_empty() || la[0].is_empty() || la[0] == ra[0])
        {
            proptest::prop_assert!(got.is_some(), "{ls} {rs}");
        }
        let Some(s) = got else { return Ok(()); };
        let total: i64 = out.iter().product();
        let (ss, lss, rss) = (s.shards(&out).unwrap(), ls.shards(&ld).unwrap(), rs.shards(&rd).unwrap());
        let itself: Vec<Option<usize>> = (0..out.len()).map(Some).collect();
        let (to_l, to_r) = (
            dims.result_dims(false, ld.len(), rd.len()).unwrap(),
            dims.result_dims(true, rd.len(), ld.len()).unwrap(),
        );
        let mut at = vec![0i64; out.len()];
        for d in 0..n {
            for flat in 0..total {
                let mut r = flat;
                for i in (0..out.len()).rev() {
                    at[i] = r % out[i];
                    r /= out[i];
                }
                proptest::prop_assert_eq!(
                    covers(&ss, d, &itself, &at),
                    covers(&lss, d, &to_l, &at) && covers(&rss, d, &to_r, &at),
                    "device {} element {:?}: {} from {} and {}", d, &at, s, ls, rs
                );
            }
        }
    }

    /// Law of [`merged_elementwise`], by brute force: two operands of one rank-2 array sharded over
    /// one mesh; where it answers, a device holds an element iff both its operand tiles do; where the
    /// two use different mesh axes (or the same axes on the same dims), it answers.
    #[test]
    fn merged_elementwise_tiles_are_the_intersections(
        mesh in proptest::collection::vec(2i64..4, 1..4),
        dims in proptest::collection::vec(1i64..7, 2),
        picks in proptest::collection::vec(0usize..8, 4),
        seed in proptest::prelude::any::<u64>(),
    ) {
        let n: i64 = mesh.iter().product();
        let mut ids: Vec<i64> = (0..n).collect();
        let mut state = seed | 1;
        for i in (1..ids.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ids.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let axes = |at: usize| -> Vec<Vec<usize>> {
            let (p, q) = (picks[at] % (mesh.len() + 1), picks[at + 1] % (mesh.len() + 1));
            let q = if q == p { 0 } else { q };
            [p, q].iter().map(|&x| if x == 0 { vec![] } else { vec![x - 1] }).collect()
        };
        let (a, b) = (axes(0), axes(2));
        let (sa, sb) = (named(&mesh, &ids, &a), named(&mesh, &ids, &b));
        let got = merged_elementwise(&[sa.clone(), sb.clone()], &dims);
        let tiled = |x: &[Vec<usize>]| x.iter().any(|v| !v.is_empty());
        let meet = (0..2).any(|i| (0..2).any(|j| i != j && a[i].iter().any(|x| b[j].contains(x))))
            || (0..2).any(|i| !a[i].is_empty() && !b[i].is_empty() && a[i] != b[i]);
        if tiled(&a) && tiled(&b) && !meet {
            proptest::prop_assert!(got.is_some(), "{sa} {sb}");
        }
        let Some(s) = got else { return Ok(()); };
        let same = [Some(0), Some(1)];
        let (ss, las, lbs) = (s.shards(&dims).unwrap(), sa.shards(&dims).unwrap(), sb.shards(&dims).unwrap());
        for d in 0..n {
            for i in 0..dims[0] {
                for j in 0..dims[1] {
                    proptest::prop_assert_eq!(
                        covers(&ss, d, &same, &[i, j]),
                        covers(&las, d, &same, &[i, j]) && covers(&lbs, d, &same, &[i, j]),
                        "device {} element {},{}: {} from {} and {}", d, i, j, s, sa, sb
                    );
                }
            }
        }
    }
}
