#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The shipped gemm kernel: the interpreter's output against the f64 reference (B column-major and
//! row-major), the variants dispatch picks, the shapes it refuses, and NVRTC's compile for sm_80 and
//! sm_90a (mma.sync in the PTX, registers per thread).

mod numbers;
use axe_kernel::{lower, run, DType, Program, RunLimits, Target};
use numbers::{decode_f32, encode, values};

use axe_kernel::gemm_kernel::{gemm_kernel, gemm_kernel_b, gemm_reference, BMajor};

/// Runs the shipped kernel on the interpreter; checks C against the f64 reference within the f32
/// accumulation bound.
fn check_shipped(m: u64, n: u64, k: u64, d: DType, target: Target) -> Program {
    check_major(m, n, k, d, target, BMajor::Col)
}

fn check_major(m: u64, n: u64, k: u64, d: DType, target: Target, major: BMajor) -> Program {
    let g = gemm_kernel_b(m, n, k, d, major).unwrap();
    let p = lower(&g.kernel, target).unwrap();
    let a = values((m * k) as usize, 7, d);
    // b as the reference takes it (column-major); the kernel gets it as `major` says.
    let b = values((n * k) as usize, 8, d);
    let given: Vec<f32> = match major {
        BMajor::Col => b.clone(),
        BMajor::Row => (0..(k * n) as usize)
            .map(|x| b[(x % n as usize) * k as usize + x / n as usize])
            .collect(),
    };
    let out = run(
        &p,
        vec![
            encode(&a, d),
            encode(&given, d),
            vec![0; g.c_bytes as usize],
        ],
        RunLimits::default(),
    )
    .unwrap();
    numbers::assert_gemm_close(&decode_f32(&out[2]), &a, &b, m, n, k);
    p
}

#[test]
fn the_shipped_kernel_matches_the_reference() {
    let p = check_shipped(128, 128, 64, DType::BF16, Target::Sm80);
    let v = |op: &str| {
        p.decisions
            .iter()
            .find(|d| d.op.starts_with(op))
            .map(|d| d.variant.clone())
            .unwrap()
    };
    assert_eq!(v("gemm"), "gemm.mma_sync");
    let gemm = p
        .decisions
        .iter()
        .find(|d| d.op.starts_with("gemm"))
        .unwrap();
    assert!(gemm.why.contains("32 mma.sync per warp"), "{}", gemm.why);
    for d in &p.decisions {
        let want = match &d.op[..4] {
            "fill" => "fill.registers",
            "gemm" => "gemm.mma_sync",
            _ if d.why.contains("_frag") => "copy.ldmatrix",
            "copy" if d.op.starts_with("copy_async") => "copy_async.cp_async",
            _ => "copy.registers.vector",
        };
        assert_eq!(d.variant, want, "{d:?}");
        // Tiles move in 16-byte vectors, C in 8-byte vectors, fragments by ldmatrix.
        if d.variant == "copy.ldmatrix" {
            assert!(d.why.contains("ldmatrix per warp"), "{d:?}");
        } else if d.variant == "copy_async.cp_async" {
            assert!(d.why.contains("16-byte vectors"), "{d:?}");
        } else if d.op.starts_with("copy") {
            assert!(
                ["16 bytes", "4 bytes", "8 bytes"]
                    .iter()
                    .any(|w| d.why.contains(&format!(" of {w}")) && d.why.contains(" vector")),
                "{d:?}"
            );
        }
    }
    // Three stages, each filled by two cp.async copies (A and Bᵀ) per K step.
    assert!(
        p.decisions
            .iter()
            .filter(|d| d.variant == "copy_async.cp_async")
            .count()
            >= 6
    );
    check_shipped(256, 128, 96, DType::F16, Target::Sm90a);
    check_shipped(128, 256, 128, DType::BF16, Target::Cpu);
}

#[test]
fn a_row_major_b_loads_its_fragments_transposed() {
    let p = check_major(128, 128, 64, DType::BF16, Target::Sm80, BMajor::Row);
    let frag = |name: &str| {
        p.decisions
            .iter()
            .find(|d| d.why.starts_with(name))
            .unwrap()
            .clone()
    };
    let b = frag("B_frag");
    assert_eq!(b.variant, "copy.ldmatrix");
    assert!(
        b.why.contains("16 32-bit words per thread")
            && b.why.contains("(16 transposed): 4 ldmatrix per warp"),
        "{b:?}"
    );
    assert!(frag("A_frag")
        .why
        .contains("(0 transposed): 8 ldmatrix per warp"));
    // The row-major B tile [32, 128] comes in by cp.async in 16-byte vectors too.
    assert!(p.decisions.iter().any(
        |d| d.variant == "copy_async.cp_async" && d.why.contains("shared S[(32,128):(136,1)]")
    ));
    check_major(128, 256, 96, DType::F16, Target::Sm90a, BMajor::Row);
}

#[test]
fn shapes_it_cannot_do_are_errors() {
    let e = |m, n, k, d| gemm_kernel(m, n, k, d).unwrap_err().to_string();
    assert!(e(100, 128, 32, DType::BF16).contains("multiples of 128"));
    assert!(e(128, 128, 48, DType::BF16).contains("K of 32"));
    assert!(e(128, 128, 32, DType::F32).contains("bf16 or f16"));
    assert!(e(0, 128, 32, DType::F16).contains("at least 1"));
    assert!(gemm_reference(2, 2, 2, &[0.0; 3], &[0.0; 4]).is_err());
}

#[test]
fn the_shipped_kernel_compiles_to_mma_sync_with_nvrtc() {
    let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv");
    let Some(lib) = axe_kernel::nvrtc::find_nvrtc(&venv) else {
        eprintln!("skipped: no NVRTC under {}", venv.display());
        return;
    };
    for (d, major) in [
        (DType::BF16, BMajor::Col),
        (DType::F16, BMajor::Col),
        (DType::BF16, BMajor::Row),
    ] {
        let g = gemm_kernel_b(4096, 4096, 4096, d, major).unwrap();
        for t in [Target::Sm80, Target::Sm90a] {
            let src = axe_kernel::emit_cuda(&lower(&g.kernel, t).unwrap()).unwrap();
            assert!(src.contains("__launch_bounds__(256, 2)"), "{src}");
            let c = axe_kernel::nvrtc::compile_here(&lib, &src, "gemm", t.arch().unwrap())
                .unwrap_or_else(|e| panic!("{e}\n{src}"));
            let ty = if d == DType::BF16 { "bf16" } else { "f16" };
            assert!(
                c.ptx.contains(&format!(
                    "mma.sync.aligned.m16n8k16.row.col.f32.{ty}.{ty}.f32"
                )),
                "{}",
                c.ptx
            );
            assert!(c.ptx.contains("cp.async.cg.shared.global"), "{}", c.ptx);
            let trans = c
                .ptx
                .contains("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16");
            assert_eq!(trans, major == BMajor::Row);
            assert!(!c.ptx.contains(".local"), "registers spill to local memory");
            let regs = axe_kernel::nvrtc::cubin_registers(&c.cubin).expect("registers");
            assert!((1..=255).contains(&regs), "{regs} registers");
            eprintln!("gemm {d} {t} B {major:?}: {regs} registers per thread");
            if std::env::var_os("AXE_DUMP_PTX").is_some() {
                let f = format!("/tmp/gemm_{d}_{t}_{major:?}");
                std::fs::write(format!("{f}.cu"), &src).unwrap();
                std::fs::write(format!("{f}.ptx"), &c.ptx).unwrap();
                std::fs::write(format!("{f}.cubin"), &c.cubin).unwrap();
            }
        }
    }
}
