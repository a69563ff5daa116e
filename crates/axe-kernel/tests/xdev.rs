#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Across devices: `copy` between two distributions and `reduce` of pending partial sums, run one thread
//! per device, against brute force over every element of every device's shard; the variants dispatch
//! picks and the reasons of those that decline.

use std::time::Duration;

use axe_kernel::xdev::XOp;
use axe_kernel::{
    run_devices_threads, xdev_lower, DType, DeviceKernelBuilder, DeviceTensorId, KernelError,
    ReduceOp, RunLimits, Target, XdevError,
};
use axe_shard::{AxisUse, Mesh, Sharding};
use proptest::prelude::*;

const TIMEOUT: Duration = Duration::from_secs(60);

/// How a generated sharding distributes an array.
#[derive(Debug, Clone)]
enum Dist {
    /// Device `j` holds it all.
    On(u64),
    /// Per mesh axis, the dim it splits (`None`: replicated along it).
    Split(Vec<Option<usize>>),
}

fn sharding(mesh: &Mesh, dims: &[u64], d: &Dist) -> Sharding {
    match d {
        Dist::On(j) => Sharding::maximal(mesh, dims.to_vec(), *j).unwrap(),
        Dist::Split(per_axis) => {
            let mut dim_axes = vec![Vec::new(); dims.len()];
            for (a, d) in per_axis.iter().enumerate() {
                if let Some(d) = d {
                    dim_axes[*d].push(a);
                }
            }
            Sharding::new(mesh, dims.to_vec(), dim_axes, &[]).unwrap()
        }
    }
}

fn mesh_of(sizes: &[u64]) -> Mesh {
    let names = ["x", "y"];
    let axes: Vec<(&str, u64)> = sizes
        .iter()
        .enumerate()
        .map(|(i, &s)| (names[i], s))
        .collect();
    Mesh::new(&axes).unwrap()
}

fn dist(devices: u64, axes: usize, rank: usize) -> impl Strategy<Value = Dist> {
    prop_oneof![
        (0..devices).prop_map(Dist::On),
        proptest::collection::vec(proptest::option::of(0..rank), axes).prop_map(Dist::Split),
    ]
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn decode(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Brute force: the bytes device `device`'s row-major (padded) shard of `s` holds, each element's value
/// `value(global index)`, padding zero.
fn expected_shard(
    mesh: &Mesh,
    s: &Sharding,
    device: u64,
    value: impl Fn(&[u64]) -> f32,
) -> Vec<f32> {
    let r = s
        .regions(mesh)
        .unwrap()
        .into_iter()
        .find(|r| r.device == device)
        .unwrap();
    let holds = s.maximal_device().is_none_or(|m| m == device);
    let total: u64 = r.padded_shape.iter().product();
    let total = if holds { total } else { 0 };
    let mut out = vec![0f32; total as usize];
    for (slot, o) in out.iter_mut().enumerate() {
        // The local index of this slot, row-major over the padded shape.
        let mut rest = slot as u64;
        let mut local = vec![0u64; r.padded_shape.len()];
        for d in (0..local.len()).rev() {
            local[d] = rest % r.padded_shape[d];
            rest /= r.padded_shape[d];
        }
        if local.iter().zip(&r.local_shape).all(|(l, n)| l < n) {
            let g: Vec<u64> = local
                .iter()
                .zip(&r.region)
                .map(|(l, rg)| rg.start + l)
                .collect();
            *o = value(&g);
        }
    }
    out
}

fn flat(dims: &[u64], g: &[u64]) -> u64 {
    g.iter().zip(dims).fold(0, |a, (i, n)| a * n + i)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    /// A copy between two distributions holds, on every device, exactly the source's values of its
    /// destination region; gathered back onto device 0 it is the input; no bytes cross devices exactly
    /// when `copy.local` is chosen.
    #[test]
    fn copy_across_devices_is_a_reshard(
        (sizes, dims, src, dst) in (prop_oneof![
                (1u64..=4).prop_map(|p| vec![p]),
                Just(vec![2u64, 2]),
            ], proptest::collection::vec(1u64..=9, 1..=2))
            .prop_flat_map(|(sizes, dims)| {
                let n: u64 = sizes.iter().product();
                let (axes, rank) = (sizes.len(), dims.len());
                (Just(sizes), Just(dims), dist(n, axes, rank), dist(n, axes, rank))
            })
    ) {
        let mesh = mesh_of(&sizes);
        let (ss, ds) = (sharding(&mesh, &dims, &src), sharding(&mesh, &dims, &dst));
        let mut kb = DeviceKernelBuilder::new("reshard", mesh.clone()).unwrap();
        let on0 = Sharding::maximal(&mesh, dims.clone(), 0).unwrap();
        let t_in = kb.tensor("in", DType::F32, on0.clone()).unwrap();
        let t_src = kb.tensor("src", DType::F32, ss.clone()).unwrap();
        let t_dst = kb.tensor("dst", DType::F32, ds.clone()).unwrap();
        let t_out = kb.tensor("out", DType::F32, on0).unwrap();
        kb.copy(t_src, t_in).unwrap();
        kb.copy(t_dst, t_src).unwrap();
        kb.copy(t_out, t_dst).unwrap();
        let p = xdev_lower(&kb.build(), Target::Cpu).unwrap();
        let value = |g: &[u64]| flat(&dims, g) as f32 + 0.5;
        let n: u64 = dims.iter().product();
        let input: Vec<f32> = (0..n).map(|i| i as f32 + 0.5).collect();
        let shards = run_devices_threads(&p, vec![vec![(t_in.0, f32s(&input))]], RunLimits::default(), TIMEOUT).unwrap();
        for (dev, bufs) in shards.iter().enumerate() {
            prop_assert_eq!(decode(&bufs[t_src.0]), expected_shard(&mesh, &ss, dev as u64, value), "src on device {}", dev);
            prop_assert_eq!(decode(&bufs[t_dst.0]), expected_shard(&mesh, &ds, dev as u64, value), "dst on device {}", dev);
        }
        prop_assert_eq!(decode(&shards[0][t_out.0]), input);
        let axe_kernel::xdev_dispatch::Step::Move { plan, .. } = &p.steps[1] else { panic!("a move") };
        prop_assert_eq!(p.decisions[1].variant == "copy.local", plan.transfers.is_empty());
        prop_assert!(p.decisions[1].variant.starts_with("copy."));
    }

    /// A reduce of partial sums held on every device: each device's shard of the destination is the
    /// element-wise sum over the devices (integer-valued f32, so sums are exact).
    #[test]
    fn reduce_across_devices_sums_the_partials(
        (devices, dims, dst) in (1u64..=4, proptest::collection::vec(1u64..=9, 1..=2))
            .prop_flat_map(|(p, dims)| { let r = dims.len(); (Just(p), Just(dims), dist(p, 1, r)) })
    ) {
        let mesh = mesh_of(&[devices]);
        let partial = Sharding::new(&mesh, dims.clone(), vec![Vec::new(); dims.len()],
            &[(0, AxisUse::Partial(axe_shard::ReduceOp::Sum))]).unwrap();
        let ds = sharding(&mesh, &dims, &dst);
        let mut kb = DeviceKernelBuilder::new("reduce", mesh.clone()).unwrap();
        let t_p = kb.tensor("p", DType::F32, partial).unwrap();
        let t_d = kb.tensor("d", DType::F32, ds.clone()).unwrap();
        kb.reduce(t_d, t_p, ReduceOp::Sum).unwrap();
        let p = xdev_lower(&kb.build(), Target::Cpu).unwrap();
        let n: u64 = dims.iter().product();
        let part = |dev: u64, i: u64| ((i * 7 + dev * 13) % 17) as f32 - 8.0;
        let inputs: Vec<Vec<(usize, Vec<u8>)>> = (0..devices)
            .map(|dev| vec![(t_p.0, f32s(&(0..n).map(|i| part(dev, i)).collect::<Vec<_>>()))])
            .collect();
        let shards = run_devices_threads(&p, inputs, RunLimits::default(), TIMEOUT).unwrap();
        let sum = |g: &[u64]| { let i = flat(&dims, g); (0..devices).map(|d| part(d, i)).sum::<f32>() };
        for (dev, bufs) in shards.iter().enumerate() {
            prop_assert_eq!(decode(&bufs[t_d.0]), expected_shard(&mesh, &ds, dev as u64, sum), "device {}", dev);
        }
        prop_assert!(p.decisions[0].variant.starts_with("reduce."));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, .. ProptestConfig::default() })]

    /// On a 2×2 mesh, partial sums pending over one axis while the other splits a dim (or replicates):
    /// reduced into any distribution, each device holds the sum over the pending axis's contributions.
    #[test]
    fn reduce_over_one_axis_of_a_two_axis_mesh(
        (pending, other, dims, dst) in (0usize..2, proptest::collection::vec(1u64..=7, 1..=2))
            .prop_flat_map(|(pending, dims)| {
                let r = dims.len();
                (Just(pending), proptest::option::of(0..r), Just(dims), dist(4, 2, r))
            })
    ) {
        let mesh = mesh_of(&[2, 2]);
        let mut dim_axes = vec![Vec::new(); dims.len()];
        if let Some(d) = other {
            dim_axes[d].push(1 - pending);
        }
        let ss = Sharding::new(&mesh, dims.clone(), dim_axes,
            &[(pending, AxisUse::Partial(axe_shard::ReduceOp::Sum))]).unwrap();
        let ds = sharding(&mesh, &dims, &dst);
        let mut kb = DeviceKernelBuilder::new("reduce2", mesh.clone()).unwrap();
        let t_p = kb.tensor("p", DType::F32, ss.clone()).unwrap();
        let t_d = kb.tensor("d", DType::F32, ds.clone()).unwrap();
        kb.reduce(t_d, t_p, ReduceOp::Sum).unwrap();
        let prog = xdev_lower(&kb.build(), Target::Cpu).unwrap();
        let part = |c: u64, i: u64| ((i * 7 + c * 13) % 17) as f32 - 8.0;
        let coord = |dev: u64| mesh.coords(dev as usize)[pending];
        let inputs: Vec<Vec<(usize, Vec<u8>)>> = (0..4u64)
            .map(|dev| vec![(t_p.0, f32s(&expected_shard(&mesh, &ss, dev, |g| part(coord(dev), flat(&dims, g)))))])
            .collect();
        let shards = run_devices_threads(&prog, inputs, RunLimits::default(), TIMEOUT).unwrap();
        let sum = |g: &[u64]| { let i = flat(&dims, g); (0..2).map(|c| part(c, i)).sum::<f32>() };
        for (dev, bufs) in shards.iter().enumerate() {
            prop_assert_eq!(decode(&bufs[t_d.0]), expected_shard(&mesh, &ds, dev as u64, sum), "device {}", dev);
        }
    }
}

/// A 2-device mesh with a partial-sum `[8,4]` tensor `p`, a split one `s`, a replicated one `r`.
fn three() -> (DeviceKernelBuilder, [DeviceTensorId; 3]) {
    let mesh = mesh_of(&[2]);
    let mut kb = DeviceKernelBuilder::new("k", mesh.clone()).unwrap();
    let partial = Sharding::new(
        &mesh,
        vec![8, 4],
        vec![vec![], vec![]],
        &[(0, AxisUse::Partial(axe_shard::ReduceOp::Sum))],
    )
    .unwrap();
    let p = kb.tensor("p", DType::F32, partial).unwrap();
    let s = kb
        .tensor(
            "s",
            DType::F32,
            Sharding::new(&mesh, vec![8, 4], vec![vec![0], vec![]], &[]).unwrap(),
        )
        .unwrap();
    let r = kb
        .tensor("r", DType::F32, Sharding::replicated(&mesh, vec![8, 4]))
        .unwrap();
    (kb, [p, s, r])
}

fn declined(e: XdevError) -> Vec<(String, String)> {
    match e {
        XdevError::Kernel(KernelError::NoVariant { declined, .. }) => declined,
        other => panic!("expected no variant, got {other}"),
    }
}

#[test]
fn dispatch_picks_reduce_scatter_and_all_reduce_from_the_destination() {
    let (mut kb, [p, s, r]) = three();
    kb.reduce(s, p, ReduceOp::Sum).unwrap();
    kb.reduce(r, p, ReduceOp::Sum).unwrap();
    kb.copy(r, s).unwrap();
    kb.copy(s, r).unwrap();
    let prog = xdev_lower(&kb.build(), Target::Cpu).unwrap();
    let v: Vec<&str> = prog.decisions.iter().map(|d| d.variant.as_str()).collect();
    assert_eq!(
        v,
        [
            "reduce.reduce_scatter",
            "reduce.all_reduce",
            "copy.reshard",
            "copy.local"
        ]
    );
    let d = &prog.decisions;
    assert_eq!(d[0].scope, "devices(x=2)");
    assert!(d[0].why.contains("reduce-scatter"), "{}", d[0].why);
    assert!(d[0].why.contains("[Partial()]"), "{}", d[0].why);
    assert_eq!(d[1].declined[0].0, "reduce.reduce_scatter");
    assert!(
        d[1].declined[0]
            .1
            .contains("not split over the reduced device axis x")
            && d[1].declined[0].1.contains("all-reduce"),
        "{}",
        d[1].declined[0].1
    );
    assert!(d[2].why.contains("all-gather"), "{}", d[2].why);
    assert_eq!(d[2].declined[0].0, "copy.local");
    assert!(d[2].declined[0].1.contains("bytes must cross devices"));
    assert!(d[3].why.contains("nothing crosses devices"), "{}", d[3].why);
}

#[test]
fn a_copy_of_pending_sums_declines_and_says_to_reduce() {
    let (mut kb, [p, s, _]) = three();
    kb.copy(s, p).unwrap();
    let reasons = declined(xdev_lower(&kb.build(), Target::Cpu).unwrap_err());
    assert_eq!(reasons.len(), 2);
    for (v, r) in &reasons {
        assert!(v.starts_with("copy."));
        assert!(
            r.contains("pending a sum over device axis x") && r.contains("call reduce"),
            "{v}: {r}"
        );
    }
}

#[test]
fn a_reduce_without_pending_values_or_of_another_op_declines() {
    let (mut kb, [_, s, r]) = three();
    kb.reduce(r, s, ReduceOp::Sum).unwrap();
    let err = xdev_lower(&kb.build(), Target::Cpu).unwrap_err();
    assert!(
        err.to_string()
            .contains("no variant of reduce #0 at devices(x=2) scope"),
        "{err}"
    );
    let reasons = declined(err);
    let names: Vec<&str> = reasons.iter().map(|(v, _)| v.as_str()).collect();
    assert_eq!(
        names,
        [
            "reduce.reduce_scatter",
            "reduce.all_reduce",
            "reduce.reshard"
        ]
    );
    assert!(reasons
        .iter()
        .all(|(_, r)| r.contains("s holds no partial values")));

    let (mut kb, [p, s, _]) = three();
    kb.reduce(s, p, ReduceOp::Max).unwrap();
    let reasons = declined(xdev_lower(&kb.build(), Target::Cpu).unwrap_err());
    assert!(
        reasons[0]
            .1
            .contains("pending a sum, not the max asked for"),
        "{}",
        reasons[0].1
    );
}

#[test]
fn a_forced_variant_must_apply_and_exist() {
    let (mut kb, [p, s, _]) = three();
    kb.reduce_forced(s, p, ReduceOp::Sum, Some("reduce.all_reduce"))
        .unwrap();
    let e = xdev_lower(&kb.build(), Target::Cpu).unwrap_err();
    assert!(
        matches!(&e, XdevError::Kernel(KernelError::Forced { variant, reason, .. })
            if variant == "reduce.all_reduce" && reason.contains("not replicated")),
        "{e}"
    );
    let (mut kb, [p, s, _]) = three();
    kb.reduce_forced(s, p, ReduceOp::Sum, Some("reduce.reshard"))
        .unwrap();
    let prog = xdev_lower(&kb.build(), Target::Cpu).unwrap();
    assert_eq!(prog.decisions[0].variant, "reduce.reshard");
    assert!(prog.decisions[0].why.starts_with("forced; "));
    let (mut kb, [_, s, r]) = three();
    kb.copy_forced(r, s, Some("copy.nope")).unwrap();
    let e = xdev_lower(&kb.build(), Target::Cpu).unwrap_err();
    assert!(e.to_string().contains("copy.local, copy.reshard"), "{e}");
}

#[test]
fn bad_descriptions_are_clear_errors() {
    let (mut kb, [p, _, _]) = three();
    let mesh = kb.mesh().clone();
    let other = kb
        .tensor("q", DType::F32, Sharding::replicated(&mesh, vec![4, 8]))
        .unwrap();
    let e = kb.copy(other, p).unwrap_err().to_string();
    assert!(
        e.contains("copy q ← p: the shapes and element types must match"),
        "{e}"
    );
    // A sharding of another mesh (two axes on a one-axis mesh) is caught when its shards are sized.
    let e = kb.tensor(
        "worse",
        DType::F32,
        Sharding::new(&mesh_of(&[2, 2]), vec![4], vec![vec![0, 1]], &[]).unwrap(),
    );
    assert!(e.is_err());
    let bad_ids = Mesh::with_devices(&[("x", 2)], vec![1, 2]).unwrap();
    let e = DeviceKernelBuilder::new("k", bad_ids)
        .unwrap_err()
        .to_string();
    assert!(e.contains("device ids must be 0 to 1 in some order"), "{e}");
    // A per-device kernel whose buffers do not match the bound shards.
    let g = axe_kernel::gemm_kernel::gemm_kernel(128, 128, 32, DType::BF16).unwrap();
    let (mut kb, [p, s, r]) = three();
    let e = kb
        .kernel(g.kernel.clone(), &[p, s])
        .unwrap_err()
        .to_string();
    assert!(e.contains("3 global buffers, 2 tensors are bound"), "{e}");
    let e = kb.kernel(g.kernel, &[p, s, r]).unwrap_err().to_string();
    assert!(e.contains("buffer a holds bf16; tensor p is f32"), "{e}");
}

#[test]
fn a_tensor_given_as_an_axe_layout_with_device_axes() {
    let mesh = mesh_of(&[2]);
    let mut kb = DeviceKernelBuilder::new("k", mesh.clone()).unwrap();
    let l = axe_layout::parse("S[(2,4,8):(1@gpu_x,8,1)]").unwrap();
    let t = kb.tensor_axe("t", DType::F32, &[8, 8], &l).unwrap();
    let k = kb.build();
    let want = Sharding::new(&mesh, vec![8, 8], vec![vec![0], vec![]], &[]).unwrap();
    assert_eq!(k.tensors[t.0].sharding(), &want);
    assert_eq!(
        k.tensors[t.0].layout(&mesh).unwrap().to_string(),
        l.to_string()
    );
    assert_eq!(
        k.tensors[t.0].describe(&mesh),
        "t f32[8,8] S[(2,4,8):(1@gpu_x,8,1)]"
    );
    assert!(matches!(
        k.calls.first().map(|c| &c.op),
        None | Some(XOp::Copy)
    ));
}

#[test]
fn a_rank_count_other_than_the_mesh_is_refused() {
    let (mut kb, [p, s, _]) = three();
    kb.reduce(s, p, ReduceOp::Sum).unwrap();
    let prog = xdev_lower(&kb.build(), Target::Cpu).unwrap();
    let comms = axe_reshard::ThreadComm::group(3, TIMEOUT).unwrap();
    let e = axe_kernel::run_devices(&comms[0], &prog, vec![], RunLimits::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("runs on 2 devices, one per rank, but there are 3 ranks"),
        "{e}"
    );
    let comms = axe_reshard::ThreadComm::group(2, TIMEOUT).unwrap();
    let e = axe_kernel::run_devices(
        &comms[0],
        &prog,
        vec![(p.0, vec![0; 3])],
        RunLimits::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("device 0's shard of p has 128 bytes; the input has 3"),
        "{e}"
    );
}

#[test]
fn a_copy_reads_and_writes_each_devices_own_memory_layout() {
    // [8,8] split along dim 0 over x=2, each device storing its [4,8] rows column-major.
    let mesh = mesh_of(&[2]);
    let mut kb = DeviceKernelBuilder::new("k", mesh.clone()).unwrap();
    let on0 = Sharding::maximal(&mesh, vec![8, 8], 0).unwrap();
    let t_in = kb.tensor("in", DType::F32, on0.clone()).unwrap();
    let l = axe_layout::parse("S[(2,4,8):(1@gpu_x,1,4)]").unwrap();
    let t_col = kb.tensor_axe("col", DType::F32, &[8, 8], &l).unwrap();
    let t_out = kb.tensor("out", DType::F32, on0).unwrap();
    kb.copy(t_col, t_in).unwrap();
    kb.copy(t_out, t_col).unwrap();
    let p = xdev_lower(&kb.build(), Target::Cpu).unwrap();
    let input: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let shards = run_devices_threads(
        &p,
        vec![vec![(t_in.0, f32s(&input))]],
        RunLimits::default(),
        TIMEOUT,
    )
    .unwrap();
    for (dev, bufs) in shards.iter().enumerate() {
        let col = decode(&bufs[t_col.0]);
        assert_eq!(col.len(), 32);
        for i in 0..4 {
            for j in 0..8 {
                assert_eq!(
                    col[j * 4 + i],
                    input[(dev * 4 + i) * 8 + j],
                    "device {dev} ({i},{j})"
                );
            }
        }
    }
    assert_eq!(decode(&shards[0][t_out.0]), input);
}

#[test]
fn a_failing_device_is_reported_rather_than_its_peers_waiting() {
    let (mut kb, [p, s, _]) = three();
    kb.reduce(s, p, ReduceOp::Sum).unwrap();
    let prog = xdev_lower(&kb.build(), Target::Cpu).unwrap();
    // Device 1's input is the wrong size: it fails before the reduction; device 0 then loses its peer.
    let e = run_devices_threads(
        &prog,
        vec![vec![(p.0, vec![0; 128])], vec![(p.0, vec![0; 5])]],
        RunLimits::default(),
        TIMEOUT,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("device 1's shard of p has 128 bytes; the input has 5"),
        "{e}"
    );
}
