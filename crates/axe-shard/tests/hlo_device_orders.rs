//! HloShardings over device ids in any order (issue items 13 and 14): random valid HloSharding pairs over
//! the same devices (random device orders, iotas with transposes, replicated subgroups, uneven dims), read
//! onto one mesh, against brute-force enumeration of XLA's semantics: who holds what, the plan's bytes
//! (exactly what each device lacks), exact cover by senders holding what they send, and printing back.

use std::collections::HashMap;
use std::ops::Range;

use axe_shard::notation::hlo::{parse_hlo, to_hlo};
use axe_shard::{parse_pair, plan, CostModel, Mesh, Sharding};
use proptest::prelude::*;

mod common;
use common::Rng;

/// One random HloSharding of an array of `rank` dims over devices `0..n`: its text, its tile grid (tensor
/// dims, then a replicated subgroup dim where `replicated`) and its device list, row-major over the grid.
#[derive(Clone, Debug)]
struct Hlo {
    text: String,
    grid: Vec<u64>,
    list: Vec<u64>,
}

fn random_hlo(rng: &mut Rng, n: u64, rank: usize) -> Hlo {
    let replicated = rng.below(3) == 0;
    let grid = rng.factors(n, rank + usize::from(replicated));
    let replicated = replicated && grid.len() > rank;
    // (XLA refuses an explicit list of one device.)
    let (list, devices) = if n == 1 || rng.below(2) == 0 {
        // An iota with a random reshape and transpose.
        let k = 1 + rng.below(3) as usize;
        let reshape = rng.factors(n, k);
        let mut perm: Vec<usize> = (0..k).collect();
        rng.shuffle(&mut perm);
        let list = iota(&reshape, &perm);
        let text = if k == 1 {
            format!("<=[{n}]")
        } else {
            format!("<=[{}]T({})", join(&reshape), join(&perm))
        };
        (list, text)
    } else {
        let mut list: Vec<u64> = (0..n).collect();
        rng.shuffle(&mut list);
        let text = join(&list);
        (list, text)
    };
    let suffix = if replicated {
        " last_tile_dim_replicate"
    } else {
        ""
    };
    Hlo {
        text: format!("{{devices=[{}]{devices}{suffix}}}", join(&grid)),
        grid,
        list,
    }
}

fn join<T: ToString>(v: &[T]) -> String {
    v.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}

/// `arange(Π r).reshape(r).transpose(p).flatten()`, by brute force.
fn iota(r: &[u64], p: &[usize]) -> Vec<u64> {
    let n: u64 = r.iter().product();
    let t: Vec<u64> = p.iter().map(|&i| r[i]).collect();
    (0..n)
        .map(|mut pos| {
            let mut idx = vec![0u64; r.len()];
            for k in (0..t.len()).rev() {
                idx[p[k]] = pos % t[k];
                pos /= t[k];
            }
            idx.iter().zip(r).fold(0, |v, (&i, &s)| v * s + i)
        })
        .collect()
}

/// XLA's semantics, enumerated: per device, the box it holds (tile `i` of `g` along a dim of `len` is
/// `[i·⌈len/g⌉, (i+1)·⌈len/g⌉) ∩ [0, len)`).
fn brute(h: &Hlo, dims: &[u64]) -> HashMap<u64, Vec<Range<u64>>> {
    let mut out = HashMap::new();
    for (flat, &d) in h.list.iter().enumerate() {
        let mut rest = flat as u64;
        let mut coord = vec![0u64; h.grid.len()];
        for k in (0..h.grid.len()).rev() {
            coord[k] = rest % h.grid[k];
            rest /= h.grid[k];
        }
        let region = dims
            .iter()
            .enumerate()
            .map(|(i, &len)| {
                let chunk = len.div_ceil(h.grid[i]);
                (coord[i] * chunk).min(len)..((coord[i] + 1) * chunk).min(len)
            })
            .collect();
        out.insert(d, region);
    }
    out
}

fn regions_by_device(mesh: &Mesh, s: &Sharding) -> HashMap<u64, Vec<Range<u64>>> {
    s.regions(mesh)
        .expect("regions")
        .into_iter()
        .map(|r| (r.device, r.region))
        .collect()
}

fn volume(r: &[Range<u64>]) -> u64 {
    r.iter().map(|x| x.end.saturating_sub(x.start)).product()
}

fn intersect(a: &[Range<u64>], b: &[Range<u64>]) -> Vec<Range<u64>> {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.start.max(y.start)..x.end.min(y.end).max(x.start.max(y.start)))
        .collect()
}

fn within(a: &[Range<u64>], b: &[Range<u64>]) -> bool {
    a.iter()
        .zip(b)
        .all(|(x, y)| y.start <= x.start && x.end <= y.end)
}

/// Every element of `dims` in row-major order.
fn elements(dims: &[u64]) -> Vec<Vec<u64>> {
    let mut out = vec![Vec::new()];
    for &d in dims {
        out = out
            .into_iter()
            .flat_map(|p| {
                (0..d).map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    out
}

fn inside(e: &[u64], r: &[Range<u64>]) -> bool {
    e.iter().zip(r).all(|(&x, y)| y.contains(&x))
}

/// Checks one pair; `named`: read onto a given mesh of the device count rather than the source's own.
fn check(seed: u64, named: bool) -> Result<(), TestCaseError> {
    let mut rng = Rng(seed | 1);
    let n = [1u64, 2, 3, 4, 6, 8, 12][rng.below(7) as usize];
    let rank = 1 + rng.below(3) as usize;
    let dims: Vec<u64> = (0..rank).map(|_| 1 + rng.below(9)).collect();
    let (src, dst) = (random_hlo(&mut rng, n, rank), random_hlo(&mut rng, n, rank));
    // A device count, or a mesh of several axes (its sizes a random factorisation of the count).
    let sizes = if rng.below(2) == 0 {
        vec![n]
    } else {
        rng.factors(n, 2)
    };
    let given = Mesh::from_sizes(&sizes).expect("mesh");
    let (mesh, a, b) = parse_pair(&src.text, &dst.text, None, named.then_some(&given), &dims)
        .map_err(|e| TestCaseError::fail(format!("{} -> {}: {e}", src.text, dst.text)))?;
    let (want_a, want_b) = (brute(&src, &dims), brute(&dst, &dims));
    prop_assert_eq!(
        &regions_by_device(&mesh, &a),
        &want_a,
        "source {}",
        &src.text
    );
    prop_assert_eq!(
        &regions_by_device(&mesh, &b),
        &want_b,
        "destination {}",
        &dst.text
    );
    // The plan moves exactly what each device lacks, from senders holding it, covering every element once.
    let p = plan(&mesh, &a, &b, 1, &CostModel::default()).expect("plan");
    let lacks: u64 = want_b
        .iter()
        .map(|(d, r)| volume(r) - volume(&intersect(r, &want_a[d])))
        .sum();
    prop_assert_eq!(p.bytes, lacks, "{} -> {}", &src.text, &dst.text);
    for t in &p.transfers {
        prop_assert!(within(&t.region, &want_a[&t.from]), "{:?}", t);
        prop_assert!(t.from != t.to);
    }
    for l in &p.locals {
        prop_assert!(within(&l.region, &want_a[&l.device]), "{:?}", l);
    }
    for (d, r) in &want_b {
        for e in elements(dims.as_slice()).iter().filter(|e| inside(e, r)) {
            let got = p
                .transfers
                .iter()
                .filter(|t| t.to == *d && inside(e, &t.region))
                .count()
                + p.locals
                    .iter()
                    .filter(|l| l.device == *d && inside(e, &l.region))
                    .count();
            prop_assert_eq!(got, 1, "device {} element {:?}", d, e);
        }
    }
    // Printed as HLO, each reads back to the same regions.
    for (s, want) in [(&a, &want_a), (&b, &want_b)] {
        let text = to_hlo(&mesh, s).expect("hlo");
        let (m2, s2) = parse_hlo(&text, &dims, Some(n)).expect("read back");
        prop_assert_eq!(&regions_by_device(&m2, &s2), want, "{}", text);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_pairs_over_the_source_mesh(seed in any::<u64>()) {
        check(seed, false)?;
    }

    #[test]
    fn random_pairs_over_a_device_count(seed in any::<u64>()) {
        check(seed, true)?;
    }
}

/// A random pair with a manual subgroup of `m` devices: the destination's tiles are dealt out again among
/// the devices of each manual coordinate (a device never changes its manual coordinate).
fn manual_pair(rng: &mut Rng, m: u64, per: u64, rank: usize) -> (Hlo, Hlo, HashMap<u64, u64>) {
    let n = m * per;
    let mut list: Vec<u64> = (0..n).collect();
    rng.shuffle(&mut list);
    let manual_of: HashMap<u64, u64> = list
        .iter()
        .enumerate()
        .map(|(f, &d)| (d, f as u64 % m))
        .collect();
    let make = |rng: &mut Rng, list: Vec<u64>| {
        let mut grid = rng.factors(per, rank);
        grid.push(m);
        Hlo {
            text: format!(
                "{{devices=[{}]{} last_tile_dims={{manual}}}}",
                join(&grid),
                join(&list)
            ),
            grid,
            list,
        }
    };
    let src = make(rng, list.clone());
    let mut groups: Vec<Vec<u64>> = (0..m)
        .map(|k| list.iter().copied().filter(|d| manual_of[d] == k).collect())
        .collect();
    for g in &mut groups {
        rng.shuffle(g);
    }
    let dst_list: Vec<u64> = (0..n)
        .map(|f| groups[(f % m) as usize][(f / m) as usize])
        .collect();
    let dst = make(rng, dst_list);
    (src, dst, manual_of)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Manual subgroups: regions as XLA's semantics give them, bytes each device lacks, and data never
    /// crossing a manual coordinate.
    #[test]
    fn random_manual_pairs(seed in any::<u64>()) {
        let mut rng = Rng(seed | 1);
        let m = [2u64, 3, 4][rng.below(3) as usize];
        let per = [1u64, 2, 3, 4][rng.below(4) as usize];
        let rank = 1 + rng.below(2) as usize;
        let dims: Vec<u64> = (0..rank).map(|_| 1 + rng.below(7)).collect();
        let (src, dst, manual_of) = manual_pair(&mut rng, m, per, rank);
        let (mesh, a, b) = parse_pair(&src.text, &dst.text, None, None, &dims)
            .map_err(|e| TestCaseError::fail(format!("{} -> {}: {e}", src.text, dst.text)))?;
        let (want_a, want_b) = (brute(&src, &dims), brute(&dst, &dims));
        prop_assert_eq!(&regions_by_device(&mesh, &a), &want_a);
        prop_assert_eq!(&regions_by_device(&mesh, &b), &want_b);
        let p = plan(&mesh, &a, &b, 1, &CostModel::default()).expect("plan");
        let lacks: u64 = want_b
            .iter()
            .map(|(d, r)| volume(r) - volume(&intersect(r, &want_a[d])))
            .sum();
        prop_assert_eq!(p.bytes, lacks, "{} -> {}", &src.text, &dst.text);
        for t in &p.transfers {
            prop_assert_eq!(manual_of[&t.from], manual_of[&t.to], "{:?}", t);
            prop_assert!(within(&t.region, &want_a[&t.from]));
        }
    }
}

/// The pair of `src` and `dst` over an array of `dims` read without a mesh.
fn pair(src: &str, dst: &str, dims: &[u64]) -> (Mesh, Sharding, Sharding) {
    parse_pair(src, dst, None, None, dims).expect("a pair over the same devices")
}

#[test]
fn a_permuted_tile_list_to_the_iota_is_a_collective_permute() {
    let (mesh, a, b) = pair("{devices=[4]0,3,1,2}", "{devices=[4]<=[4]}", &[8]);
    let p = plan(&mesh, &a, &b, 4, &CostModel::default()).expect("plan");
    assert_eq!(p.collective.name(), "collective-permute");
    // Device 0 keeps its tile; 3, 1 and 2 each send theirs on.
    assert_eq!((p.transfers.len(), p.locals.len(), p.bytes), (3, 1, 24));
    let moves: Vec<(u64, u64)> = p.transfers.iter().map(|t| (t.from, t.to)).collect();
    for m in [(3, 1), (1, 2), (2, 3)] {
        assert!(moves.contains(&m), "{moves:?}");
    }
}

#[test]
fn a_two_by_two_grid_on_a_device_count_splits_its_axis() {
    let mesh = Mesh::new(&[("d0", 4)]).expect("mesh");
    let (m, s) =
        axe_shard::parse_any("{devices=[2,2]<=[4]}", None, Some(&mesh), &[4, 4]).expect("read");
    assert_eq!(m.names(), ["d0_0", "d0_1"]);
    assert_eq!(m.sizes(), [2, 2]);
    assert_eq!(s.placement(), None);
    assert_eq!(to_hlo(&m, &s).expect("hlo"), "{devices=[2,2]<=[4]}");
    let axe = axe_shard::print(axe_shard::Notation::Axe, &m, &s).expect("axe");
    assert_eq!(axe, "S[(2,2,2,2):(1@gpu_d0_0,2,1@gpu_d0_1,1)]");
}

#[test]
fn a_replicated_list_in_another_order_holds_everything_everywhere() {
    let mesh = Mesh::new(&[("d0", 2)]).expect("mesh");
    let (m, s) = axe_shard::parse_any(
        "{devices=[1,2]1,0 last_tile_dim_replicate}",
        None,
        Some(&mesh),
        &[4],
    )
    .expect("read");
    let r = s.regions(&m).expect("regions");
    assert!(
        r.iter()
            .all(|d| d.region == std::iter::once(0..4u64).collect::<Vec<_>>()),
        "{r:?}"
    );
    assert_eq!(to_hlo(&m, &s).expect("hlo"), "{replicated}");
}

#[test]
fn transposed_iotas_print_canonically_and_stay_iotas() {
    for (text, want) in [
        (
            "{devices=[2,4]<=[2,2,2]T(1,2,0)}",
            "{devices=[2,4]<=[2,4]T(1,0)}",
        ),
        (
            "{devices=[4,2]<=[2,4]T(1,0)}",
            "{devices=[4,2]<=[2,4]T(1,0)}",
        ),
        (
            "{devices=[2,4]0,4,1,5,2,6,3,7}",
            "{devices=[2,4]<=[2,4]T(1,0)}",
        ),
        ("{devices=[4]0,3,1,2}", "{devices=[4]0,3,1,2}"),
        (
            "{devices=[2,1,4]3,2,1,0,5,4,6,7 last_tile_dim_replicate}",
            "{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
        ),
    ] {
        let rank = text
            .split(']')
            .next()
            .map_or(0, |g| g.matches(',').count() + 1)
            - usize::from(text.contains("last_tile_dim_replicate"));
        let (m, s) = parse_hlo(text, &vec![8; rank], None).expect(text);
        assert_eq!(to_hlo(&m, &s).expect("hlo"), want, "{text}");
    }
}

#[test]
fn refused_where_xla_refuses() {
    for (text, count, why) in [
        ("{devices=[1]0}", None, "more than one device"),
        ("{devices=[1,1]0}", None, "more than one device"),
        ("{devices=[4]<=[4]T(0)}", None, "more than one dim"),
        ("{devices=[4]0,1,2,9}", Some(4), "beyond"),
        ("{devices=[2,2]<=[4]}", Some(2), "devices for a mesh of 2"),
    ] {
        let dims = vec![
            8;
            text.split(']')
                .next()
                .map_or(0, |g| g.matches(',').count() + 1)
        ];
        let e = parse_hlo(text, &dims, count).expect_err(text);
        assert!(e.to_string().contains(why), "{text}: {e}");
    }
    // Onto a mesh: a device the mesh lacks.
    let mesh = Mesh::new(&[("d0", 4)]).expect("mesh");
    let e = axe_shard::parse_any("{devices=[4]0,1,2,9}", None, Some(&mesh), &[8]).expect_err("9");
    assert!(e.to_string().contains('9'), "{e}");
}

#[test]
fn manual_subgroups_must_keep_each_device_at_its_manual_coordinate() {
    let src = "{devices=[2,1,2]<=[4] last_tile_dims={manual}}";
    // The tiles swap between the manual groups' members; each device keeps its manual coordinate.
    let (mesh, a, b) = pair(
        src,
        "{devices=[2,1,2]2,3,0,1 last_tile_dims={manual}}",
        &[4, 4],
    );
    let p = plan(&mesh, &a, &b, 4, &CostModel::default()).expect("plan");
    assert_eq!(p.collective.name(), "collective-permute");
    assert_eq!(p.bytes, 4 * 32);
    for t in &p.transfers {
        assert_eq!(t.from % 2, t.to % 2, "{t:?}");
    }
    // Device 0 would move from manual coordinate 0 to 1: refused, saying which.
    let (mesh, a, b) = pair(
        src,
        "{devices=[2,1,2]1,0,3,2 last_tile_dims={manual}}",
        &[4, 4],
    );
    let e = plan(&mesh, &a, &b, 4, &CostModel::default()).expect_err("manual moves");
    assert!(e.to_string().contains("manual"), "{e}");
}

#[test]
fn specs_on_meshes_whose_device_order_is_a_transposed_iota_print_as_iotas() {
    use axe_shard::notation::jax::parse_jax;
    // The mesh x=2,y=4 holding arange(8).reshape(4,2).T: its device list is an iota with a transpose.
    let mesh =
        Mesh::with_devices(&[("x", 2), ("y", 4)], vec![0, 2, 4, 6, 1, 3, 5, 7]).expect("mesh");
    for (spec, want) in [
        ("P('x','y')", "{devices=[2,4]<=[4,2]T(1,0)}"),
        ("P('y','x')", "{devices=[4,2]<=[8]}"),
        (
            "P('x')",
            "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}",
        ),
        (
            "P(None,'y')",
            "{devices=[1,4,2]<=[8] last_tile_dim_replicate}",
        ),
    ] {
        let s = parse_jax(spec, &mesh, &[8, 8]).expect(spec);
        let text = to_hlo(&mesh, &s).expect("hlo");
        assert_eq!(text, want, "{spec}");
        // Read back onto the mesh, it is the same sharding.
        let (m, back) = axe_shard::parse_any(&text, None, Some(&mesh), &[8, 8]).expect("back");
        assert_eq!((&m, &back), (&mesh, &s), "{spec}");
    }
}

#[test]
fn a_partition_spec_to_a_tile_list_in_another_order() {
    // P('x') on x=2,y=2 holds rows 0..2 on devices 0 and 1, rows 2..4 on 2 and 3; the list gives devices
    // 3, 1, 0, 2 one row each. Device 1 keeps row 1 and 2 keeps row 3; 0 and 3 receive theirs.
    let mesh = Mesh::new(&[("x", 2), ("y", 2)]).expect("mesh");
    let (m, a, b) = parse_pair(
        "P('x')",
        "{devices=[4,1]3,1,0,2}",
        None,
        Some(&mesh),
        &[4, 4],
    )
    .expect("pair");
    let p = plan(&m, &a, &b, 4, &CostModel::default()).expect("plan");
    assert_eq!((p.bytes, p.transfers.len(), p.locals.len()), (32, 2, 2));
    // And back: every device needs two rows and holds at most one of them.
    let (m, a, b) = parse_pair(
        "{devices=[4,1]3,1,0,2}",
        "P('x')",
        None,
        Some(&mesh),
        &[4, 4],
    )
    .expect("pair");
    let p = plan(&m, &a, &b, 4, &CostModel::default()).expect("plan");
    assert_eq!(p.bytes, 6 * 16);
    // The destination keeps the mesh's order as its placement; JAX cannot print it, HLO can.
    assert!(b.placement().is_some());
    assert!(axe_shard::print(axe_shard::Notation::Jax, &m, &b).is_err());
    assert_eq!(
        to_hlo(&m, &b).expect("hlo"),
        "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A random iota (reshape with size-1 dims, any transpose) prints in a canonical form that expands to
    /// the same devices: no size-1 dims, no two dims adjacent in both the transpose and the reshape.
    #[test]
    fn iotas_print_canonically(seed in any::<u64>()) {
        let mut rng = Rng(seed | 1);
        let n = [1u64, 2, 4, 6, 8, 12, 16, 24, 36][rng.below(9) as usize];
        let k = 1 + rng.below(4) as usize;
        let reshape = rng.factors(n, k);
        let mut perm: Vec<usize> = (0..k).collect();
        rng.shuffle(&mut perm);
        let list = iota(&reshape, &perm);
        let text = axe_shard::notation::iota::iota_text(&list).expect("an iota");
        let body = text.trim_start_matches("<=[");
        let (r, t) = match body.split_once("]T(") {
            Some((r, t)) => (r, t.trim_end_matches(')')),
            None => (body.trim_end_matches(']'), "0"),
        };
        let r: Vec<u64> = r.split(',').map(|x| x.parse().expect("dim")).collect();
        let t: Vec<usize> = t.split(',').map(|x| x.parse().expect("perm")).collect();
        prop_assert_eq!(iota(&r, &t), list, "{}", text);
        prop_assert!(r.len() == 1 || r.iter().all(|&d| d > 1), "{}", text);
        prop_assert!(t.windows(2).all(|w| w[1] != w[0] + 1), "{}", text);
        prop_assert!(r.len() > 1 || !text.contains('T'), "{}", text);
    }
}

#[test]
fn a_source_without_a_device_list_takes_the_destinations_devices() {
    let (mesh, a, b) = pair("{replicated}", "{devices=[4]0,3,1,2}", &[8]);
    assert_eq!(mesh.len(), 4);
    let p = plan(&mesh, &a, &b, 1, &CostModel::default()).expect("plan");
    assert_eq!((p.bytes, p.collective.name()), (0, "local-slice"));
    let (mesh, a, b) = pair(
        "{maximal device=1}",
        "{devices=[2,2]<=[2,2]T(1,0)}",
        &[4, 4],
    );
    assert_eq!(mesh.len(), 4);
    let p = plan(&mesh, &a, &b, 1, &CostModel::default()).expect("plan");
    assert_eq!(p.bytes, 12);
    assert!(p.transfers.iter().all(|t| t.from == 1));
}

#[test]
fn a_replica_group_listed_in_any_order_reads_on_the_callers_mesh() {
    // Every device order of a 2x2 mesh: P('x') and P('y') printed as HLO (whose replica groups list
    // their members in any order once permuted) read back as themselves, on the caller's mesh.
    for code in 0..24 {
        // The permutation of 0..4 whose Lehmer code is `code`.
        let (mut pool, mut devices, mut c) = (vec![0u64, 1, 2, 3], Vec::new(), code);
        for k in (1..=4).rev() {
            devices.push(pool.remove(c % k));
            c /= k;
        }
        let mesh = Mesh::with_devices(&[("x", 2), ("y", 2)], devices.clone()).expect("mesh");
        for spec in ["P('x')", "P('y')"] {
            let jax = Some(axe_shard::Notation::Jax);
            let (_, s) = axe_shard::parse_any(spec, jax, Some(&mesh), &[4]).expect("jax");
            let text = to_hlo(&mesh, &s).expect("hlo");
            let (m, back) = axe_shard::parse_any(&text, None, Some(&mesh), &[4]).expect("back");
            assert_eq!(
                m.devices(),
                devices.as_slice(),
                "{spec} as {text} on {devices:?}"
            );
            let printed = axe_shard::print(axe_shard::Notation::Jax, &m, &back).expect("print");
            assert_eq!(printed, spec, "{text} on {devices:?}");
        }
    }
    // The text that showed it: devices 1 and 2 (y = 0) hold the first half.
    let mesh = Mesh::with_devices(&[("x", 2), ("y", 2)], vec![2, 0, 1, 3]).expect("mesh");
    let text = "{devices=[2,2]1,2,0,3 last_tile_dim_replicate}";
    let (m, s) = axe_shard::parse_any(text, None, Some(&mesh), &[4]).expect("read");
    let jax = axe_shard::print(axe_shard::Notation::Jax, &m, &s).expect("print");
    assert_eq!((m.devices(), jax.as_str()), (mesh.devices(), "P('y')"));
}
