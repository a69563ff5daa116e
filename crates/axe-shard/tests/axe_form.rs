//! Shardings as Axe layouts and back: the paper's 2×2 mesh examples, regions from evaluating the layout,
//! layouts that are not shardings.

use std::collections::BTreeSet;

use axe_layout::Layout;
use axe_shard::axe::{device_axis, from_axe, to_axe};
use axe_shard::notation::hlo::to_hlo;
use axe_shard::notation::jax::parse_jax;
use axe_shard::{AxisUse, Mesh, ShardError, Sharding, Uneven};
use proptest::prelude::*;

fn layout(text: &str) -> Layout {
    text.parse().expect("layout")
}

#[test]
fn paper_2x2_fully_sharded() {
    let mesh = Mesh::new(&[("x", 2), ("y", 2)]).expect("mesh");
    let s = parse_jax("P('x', 'y')", &mesh, &[64, 128]).expect("spec");
    let l = to_axe(&mesh, &s, None).expect("axe");
    assert_eq!(l.to_string(), "S[(2,32,2,64):(1@gpu_x,64,1@gpu_y,1)]");
    let back = from_axe(&l, &[64, 128], None).expect("back");
    assert_eq!(back.mesh, mesh);
    assert_eq!(back.sharding, s);
    assert_eq!(back.local.to_string(), "S[(32,64):(64,1)]");
    // The paper's own form: one device axis, the mesh rows at stride 2.
    let flat = layout("S[(2,32,2,64):(2@gpuid,64,1@gpuid,1)]");
    let back = from_axe(&flat, &[64, 128], None).expect("flat");
    assert_eq!(back.mesh.names(), ["gpuid_0", "gpuid_1"]);
    assert_eq!(back.mesh.sizes(), [2, 2]);
    assert_eq!(
        to_hlo(&back.mesh, &back.sharding).expect("hlo"),
        "{devices=[2,2]<=[4]}"
    );
    let on_mine = from_axe(&flat, &[64, 128], Some(&mesh)).expect("on the caller's mesh");
    assert_eq!(on_mine.sharding, s);
}

#[test]
fn paper_2x2_shard_and_replicate() {
    let mesh = Mesh::new(&[("x", 2), ("y", 2)]).expect("mesh");
    let s = parse_jax("P('x')", &mesh, &[64, 128]).expect("spec");
    let l = to_axe(&mesh, &s, None).expect("axe");
    assert_eq!(
        l.to_string(),
        "S[(2,32,128):(1@gpu_x,128,1)] + R[2:1@gpu_y]"
    );
    let back = from_axe(&l, &[64, 128], None).expect("back");
    assert_eq!((back.mesh, back.sharding), (mesh.clone(), s.clone()));
    let flat = layout("S[(2,32,128):(2@gpuid,128,1)] + R[2:1@gpuid]");
    let back = from_axe(&flat, &[64, 128], Some(&mesh)).expect("flat");
    assert_eq!(back.sharding, s);
    assert_eq!(
        to_hlo(&mesh, &back.sharding).expect("hlo"),
        "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"
    );
}

#[test]
fn per_device_layouts_and_maximal() {
    let mesh = Mesh::new(&[("x", 2), ("y", 2)]).expect("mesh");
    let s = parse_jax("P('y', 'x')", &mesh, &[8, 6]).expect("spec");
    let col = Layout::column_major(&[4, 3]).expect("column-major");
    let l = to_axe(&mesh, &s, Some(&col)).expect("axe");
    assert_eq!(l.to_string(), "S[(2,4,2,3):(1@gpu_y,1,1@gpu_x,4)]");
    let back = from_axe(&l, &[8, 6], Some(&mesh)).expect("back");
    assert_eq!(back.sharding, s);
    assert_eq!(back.local, col);
    let m = Sharding::maximal(&mesh, vec![4, 4], 2).expect("maximal");
    let l = to_axe(&mesh, &m, None).expect("axe");
    assert_eq!(l.to_string(), "S[(4,4):(4,1)] + 1@gpu_x");
    let back = from_axe(&l, &[4, 4], Some(&mesh)).expect("back");
    assert_eq!(back.sharding, m);
}

#[test]
fn layouts_that_are_not_shardings_say_why() {
    let why =
        |text: &str, dims: &[u64]| from_axe(&layout(text), dims, None).unwrap_err().to_string();
    let e = why("S[(2,32,2,64):(2@gpuid,64,2@gpuid,1)]", &[64, 128]);
    assert!(e.contains("split oddly"), "{e}");
    let e = why("S[(32,2,128):(128,1@gpu_x,1)]", &[64, 128]);
    assert!(e.contains("cyclic"), "{e}");
    let e = why("S[(64,128):(128,1)] + R[2:1]", &[64, 128]);
    assert!(e.contains("within memory"), "{e}");
    let e = why("S[(2,64,128):(1@gpu_x,128,1)] + 1@gpu_x", &[128, 128]);
    assert!(e.contains("shifts the devices"), "{e}");
    let e = why("S[(2,64,128):(1@gpu_x,128,1)]", &[64, 64]);
    assert!(e.contains("does not fit"), "{e}");
    let mesh = Mesh::new(&[("x", 2), ("y", 2)]).expect("mesh");
    let e = from_axe(
        &layout("S[(2,64,128):(1@gpu_x,128,1)]"),
        &[128, 128],
        Some(&mesh),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("\"y\" (2 devices) is not in the layout"),
        "{e}"
    );
    let e = from_axe(
        &layout("S[(4,32,128):(1@gpu_x,128,1)]"),
        &[128, 128],
        Some(&mesh),
    )
    .unwrap_err();
    assert!(e.to_string().contains("4 devices"), "{e}");
    // Not expressible the other way: padding, pending reductions.
    let s = parse_jax("P('x')", &mesh, &[5]).expect("spec");
    assert!(matches!(
        to_axe(&mesh, &s, None),
        Err(ShardError::Inexpressible { .. })
    ));
    let p = Sharding::new(
        &mesh,
        vec![4],
        vec![vec![0]],
        &[(1, AxisUse::Partial(axe_shard::ReduceOp::Sum))],
    )
    .expect("partial");
    assert!(matches!(
        to_axe(&mesh, &p, None),
        Err(ShardError::Inexpressible { .. })
    ));
}

fn case() -> impl Strategy<Value = (Vec<u64>, Vec<u64>, Vec<usize>, bool)> {
    (
        prop::collection::vec(1u64..4, 1..4),
        prop::collection::vec(1u64..4, 0..4),
    )
        .prop_flat_map(|(mesh, mult)| {
            let (n, k) = (mesh.len(), mult.len());
            (
                Just(mesh),
                Just(mult),
                prop::collection::vec(0..=k, n),
                any::<bool>(),
            )
        })
}

proptest! {
    #[test]
    fn regions_from_the_axe_form_are_the_shardings((mesh, mult, assign, rev) in case()) {
        let m = Mesh::from_sizes(&mesh).expect("mesh");
        let mut dim_axes = vec![Vec::new(); mult.len()];
        for (a, &d) in assign.iter().enumerate() {
            if d < mult.len() { dim_axes[d].push(a); }
        }
        if rev { dim_axes.iter_mut().for_each(|v| v.reverse()); }
        // Dims divisible by their shard counts: a multiple of the product.
        let dims: Vec<u64> = dim_axes.iter().zip(&mult)
            .map(|(axes, k)| k * axes.iter().map(|&a| mesh[a]).product::<u64>()).collect();
        let s = Sharding::new(&m, dims.clone(), dim_axes, &[]).expect("sharding");
        let l = to_axe(&m, &s, None).expect("axe");
        let regions = s.regions(&m).expect("regions");
        let dev_axes: Vec<axe_layout::Axis> = m.names().iter().map(|n| device_axis(n).expect("axis")).collect();
        let total: u64 = dims.iter().product();
        for e in 0..total {
            let idx = axe_layout::unflatten(e, &dims).expect("index");
            let holders: BTreeSet<usize> = l.apply(e).expect("apply").iter().map(|c| {
                dev_axes.iter().zip(m.sizes()).fold(0usize, |p, (ax, &sz)| p * sz as usize + c.get(ax) as usize)
            }).collect();
            let want: BTreeSet<usize> = regions.iter()
                .filter(|r| r.region.iter().zip(&idx).all(|(rg, i)| rg.contains(i)))
                .map(|r| r.position).collect();
            prop_assert_eq!(holders, want);
        }
        let back = from_axe(&l, &dims, Some(&m)).expect("back");
        prop_assert_eq!(back.sharding.regions(&m).expect("regions"), regions);
        prop_assert_eq!(to_axe(&m, &back.sharding, Some(&back.local)).expect("again"), l);
        // The torch rule gives the same regions on even dims.
        let t = s.clone().with_uneven(Uneven::TorchChunk);
        prop_assert_eq!(to_axe(&m, &t, None).expect("torch"), to_axe(&m, &s, None).expect("xla"));
    }
}

fn random_layout() -> impl Strategy<Value = (String, Vec<u64>)> {
    let axis = prop::sample::select(vec!["", "@gpu_x", "@gpu_y", "@gpuid"]);
    let iter = (
        1u64..4,
        prop::sample::select(vec![0i64, 1, 2, 3, 4, 6, 8, -1]),
        axis.clone(),
    );
    (
        prop::collection::vec(iter, 1..6),
        prop::collection::vec(
            (2u64..4, prop::sample::select(vec![1i64, 2, 4]), axis),
            0..3,
        ),
        any::<bool>(),
    )
        .prop_map(|(shard, replica, split)| {
            let ext: Vec<String> = shard.iter().map(|i| i.0.to_string()).collect();
            let st: Vec<String> = shard.iter().map(|i| format!("{}{}", i.1, i.2)).collect();
            let mut text = format!("S[({}):({})]", ext.join(","), st.join(","));
            if !replica.is_empty() {
                let ext: Vec<String> = replica.iter().map(|i| i.0.to_string()).collect();
                let st: Vec<String> = replica.iter().map(|i| format!("{}{}", i.1, i.2)).collect();
                text += &format!(" + R[({}):({})]", ext.join(","), st.join(","));
            }
            let size: u64 = shard.iter().map(|i| i.0).product();
            // One dim, or the first iter's extent and the rest.
            let dims = if split && shard.len() > 1 {
                vec![shard[0].0, size / shard[0].0]
            } else {
                vec![size]
            };
            (text, dims)
        })
}

proptest! {
    #[test]
    fn any_layout_is_read_as_the_sharding_it_is_or_refused((text, dims) in random_layout()) {
        let l = layout(&text);
        let Ok(a) = from_axe(&l, &dims, None) else { return Ok(()); };
        // Accepted: the devices of L(e) are exactly the devices whose region holds e.
        let mut dev: Vec<axe_layout::Axis> = l.axes().into_iter().filter(axe_shard::axe::is_device_axis).collect();
        dev.sort();
        dev.dedup();
        let regions = a.sharding.regions(&a.mesh).expect("regions");
        let total: u64 = dims.iter().product();
        for e in 0..total {
            let idx = axe_layout::unflatten(e, &dims).expect("index");
            let holders: BTreeSet<usize> = l.apply(e).expect("apply").iter().map(|c| {
                dev.iter().fold(0usize, |p, ax| {
                    p * l.span(ax).expect("span") as usize + c.get(ax) as usize
                })
            }).collect();
            let want: BTreeSet<usize> = regions.iter()
                .filter(|r| r.region.iter().zip(&idx).all(|(rg, i)| rg.contains(i)))
                .map(|r| r.position).collect();
            prop_assert_eq!(holders, want, "{} read as {:?}", text, a.sharding);
        }
        // Printed back with its own memory iters, each element lies at the same memory offsets.
        let printed = axe_shard::print_local(axe_shard::Notation::Axe, &a.mesh, &a.sharding, Some(&a.local))
            .expect("print");
        let again = layout(&printed);
        let mem: Vec<axe_layout::Axis> = l.axes().into_iter().filter(|x| !axe_shard::axe::is_device_axis(x)).collect();
        let memory = |l: &Layout, e: u64| -> BTreeSet<Vec<i64>> {
            l.apply(e).expect("apply").iter().map(|c| mem.iter().map(|ax| c.get(ax)).collect()).collect()
        };
        for e in 0..total {
            prop_assert_eq!(memory(&again, e), memory(&l, e), "{} printed as {}", text, printed);
        }
    }
}
