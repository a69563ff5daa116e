#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The Hopper gemm (copy engine + mbarriers + wgmma): the interpreter's output against the f64
//! reference, the variants dispatch picks, and the CUDA it emits for sm_90a.

mod numbers;
use axe_kernel::gemm_hopper::gemm_kernel_hopper;
use axe_kernel::{emit_cuda, lower, run, DType, RunLimits, Target};
use numbers::{assert_gemm_close, decode_f32, encode, values};

fn check(m: u64, n: u64, k: u64, d: DType) {
    let g = gemm_kernel_hopper(m, n, k, d).unwrap();
    let p = lower(&g.kernel, Target::Cpu).unwrap();
    let a = values((m * k) as usize, 7, d);
    let b = values((n * k) as usize, 8, d);
    let out = run(
        &p,
        vec![encode(&a, d), encode(&b, d), vec![0; g.c_bytes as usize]],
        RunLimits::default(),
    )
    .unwrap();
    assert_gemm_close(&decode_f32(&out[2]), &a, &b, m, n, k);
}

#[test]
fn one_round_of_stages_matches_the_reference() {
    check(128, 256, 256, DType::BF16);
}

#[test]
fn stages_reused_and_a_partial_round_match_the_reference() {
    // 6 steps of K: the ring of 4 stages turns over and the last round is partial.
    check(128, 256, 384, DType::F16);
}

#[test]
fn several_ctas_in_groups_match_the_reference() {
    check(256, 512, 64, DType::BF16);
}

#[test]
fn dispatch_picks_the_copy_engine_and_wgmma() {
    let g = gemm_kernel_hopper(128, 256, 64, DType::BF16).unwrap();
    let p = lower(&g.kernel, Target::Sm90a).unwrap();
    let picked: Vec<&str> = p.decisions.iter().map(|d| d.variant.as_str()).collect();
    assert!(picked.contains(&"copy_async.tma"), "{picked:?}");
    assert!(picked.contains(&"gemm.wgmma"), "{picked:?}");
    assert_eq!(p.tensor_maps.len(), 2);
    let src = emit_cuda(&p).unwrap();
    for needle in [
        "cp.async.bulk.tensor.2d",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
        "mbarrier.try_wait.parity",
        "setmaxnreg.inc.sync.aligned.u32 232",
        "const __grid_constant__ AxeTensorMap tmap1",
    ] {
        assert!(src.contains(needle), "no {needle} in\n{src}");
    }
    // sm_80 has neither the copy engine nor wgmma: the copies fall back to cp.async on the
    // mbarriers, and the gemm finds no variant, saying why.
    let e = lower(&g.kernel, Target::Sm80).unwrap_err().to_string();
    assert!(e.contains("no variant of gemm"), "{e}");
}

#[test]
fn shapes_off_the_tiles_are_refused() {
    let e = gemm_kernel_hopper(100, 256, 64, DType::BF16)
        .unwrap_err()
        .to_string();
    assert!(e.contains("multiple of 128"), "{e}");
    assert!(gemm_kernel_hopper(128, 256, 64, DType::F32).is_err());
}

#[test]
fn the_hopper_kernel_compiles_for_sm_90a() {
    use axe_kernel::nvrtc::{compile_here, find_nvrtc};
    let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv");
    let Some(lib) = find_nvrtc(&venv) else {
        eprintln!("skipped: no NVRTC under {}", venv.display());
        return;
    };
    let g = gemm_kernel_hopper(8192, 8192, 8192, DType::BF16).unwrap();
    let p = lower(&g.kernel, Target::Sm90a).unwrap();
    let src = emit_cuda(&p).unwrap();
    let c =
        compile_here(&lib, &src, &g.kernel.name, "sm_90a").unwrap_or_else(|e| panic!("{e}\n{src}"));
    assert!(c.ptx.contains("wgmma.mma_async"), "{}", c.ptx);
    assert!(c.cubin.starts_with(b"\x7fELF"));
    if std::env::var_os("AXE_SHOW_CUDA").is_some() {
        eprintln!("{src}\n{}", c.log);
    }
}

#[test]
fn wgmma_declines_with_reasons() {
    use axe_kernel::{KernelBuilder, Launch, Scope, Space, Swizzle};
    use axe_layout::{Axis, Layout};
    let build = |c: Layout| {
        let mut k = KernelBuilder::new(
            "w",
            Launch {
                grid: 1,
                cluster: 1,
                threads: 128,
            },
        )
        .unwrap();
        let sw = Space::Shared(Some(Swizzle::B128));
        let sa = k.buffer("sa", sw, DType::BF16, 64 * 64).unwrap();
        let sb = k.buffer("sb", sw, DType::BF16, 64 * 64).unwrap();
        let r = k.buffer("acc", Space::Registers, DType::F32, 32).unwrap();
        let m = |e: &[u64], s: &[i64]| Layout::strided(e, s, &[Axis::memory(); 2]).unwrap();
        let a = k
            .tensor("A", sa, &[64, 16], m(&[64, 16], &[64, 1]))
            .unwrap();
        let b = k
            .tensor("B", sb, &[16, 64], m(&[16, 64], &[1, 64]))
            .unwrap();
        let c = k.tensor("C", r, &[64, 64], c).unwrap();
        k.gemm(Scope::warpgroups(0..1), &c, &a, &b).unwrap();
        k.build().unwrap()
    };
    let good = lower(
        &build(axe_kernel::wgmma::accumulator(64).unwrap()),
        Target::Sm90a,
    )
    .unwrap();
    assert_eq!(good.decisions[0].variant, "gemm.wgmma");
    // Rows split the other way round between lanes and registers: not the accumulator fragment.
    let bad: Layout = "S[(4,8,2,8,4,2):(1@warp,4@lane,2@reg,4@reg,1@lane,1@reg)]"
        .parse()
        .unwrap();
    let e = lower(&build(bad), Target::Sm90a).unwrap_err().to_string();
    assert!(e.contains("not the wgmma accumulator"), "{e}");
}

/// The accumulator of `wgmma.m64nNk16` holds 64·N elements for every N wgmma takes (a multiple of 8
/// from 8 to 256), each in one (warp, lane, register) of its own; any other N is an error, not the
/// layout of another N.
#[test]
fn wgmma_accumulators_are_for_the_n_wgmma_takes() {
    use std::collections::HashSet;
    for n in (8..=256).step_by(8) {
        let acc = axe_kernel::wgmma::accumulator(n).unwrap();
        assert_eq!(acc.size(), 64 * n, "N = {n}");
        let slots: HashSet<_> = (0..acc.size()).map(|i| acc.apply(i).unwrap()).collect();
        assert_eq!(
            slots.len() as u64,
            64 * n,
            "N = {n}: two elements share a register"
        );
    }
    for n in [0, 4, 12, 260, 264, 1 << 40] {
        let err = axe_kernel::wgmma::accumulator(n).unwrap_err().to_string();
        assert!(
            err.contains(&format!("N = {n}")) && err.contains("multiple of 8"),
            "{err}"
        );
    }
}
