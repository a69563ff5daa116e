#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Emitted CUDA compiles with NVRTC for sm_80 and sm_90a (when the pip wheel is installed in the
//! workspace's .venv; skipped otherwise — scripts/kernel-check installs it and runs this in CI).

use std::path::Path;

use axe_kernel::nvrtc::{compile_here, find_nvrtc};
use axe_kernel::relayout::relayout_kernel;
use axe_kernel::{
    emit_cuda_with, lower, BinaryOp, DType, IndexWidth, KernelBuilder, Launch, Op, Scope, Space,
    Swizzle, Target, UnaryOp, Value,
};
use axe_layout::Layout;

mod common;
use common::{builder, warp_rows};

fn pointwise_and_staged() -> axe_kernel::Kernel {
    let mut k = KernelBuilder::new(
        "mix",
        Launch {
            grid: 2,
            cluster: 1,
            threads: 128,
        },
    )
    .unwrap();
    let a = k.buffer("a", Space::Global, DType::F32, 512).unwrap();
    let h = k.buffer("h", Space::Global, DType::F16, 512).unwrap();
    let bh = k.buffer("bh", Space::Global, DType::BF16, 512).unwrap();
    let s = k
        .buffer("tile", Space::Shared(Some(Swizzle::B128)), DType::F32, 512)
        .unwrap();
    let rm = Layout::row_major(&[16, 32]).unwrap();
    let ta = k.tensor("a", a, &[16, 32], rm.clone()).unwrap();
    let th = k.tensor("h", h, &[16, 32], rm.clone()).unwrap();
    let tb = k.tensor("bh", bh, &[16, 32], rm.clone()).unwrap();
    let ts = k.tensor("tile", s, &[16, 32], rm).unwrap();
    k.copy(Scope::cta(), &ts, &ta).unwrap();
    k.barrier();
    k.call(
        Scope::warps(0..1),
        Op::Unary {
            op: UnaryOp::Exp,
            dst: ts.clone(),
            src: ts.clone(),
        },
    )
    .unwrap();
    k.call(
        Scope::threads(32..33),
        Op::Binary {
            op: BinaryOp::Max,
            dst: ts.clone(),
            a: ts.clone(),
            b: ts.clone(),
        },
    )
    .unwrap();
    k.barrier();
    k.call(
        Scope::kernel(),
        Op::Cast {
            dst: th,
            src: ta.clone(),
        },
    )
    .unwrap();
    k.call(
        Scope::kernel(),
        Op::Cast {
            dst: tb.clone(),
            src: ta,
        },
    )
    .unwrap();
    k.fill(Scope::kernel(), &tb, Value::Float(0.0)).unwrap();
    // A register fragment loaded from the tile and stored to another buffer.
    let o = k.buffer("o", Space::Global, DType::F32, 512).unwrap();
    let r = k.buffer("frag", Space::Registers, DType::F32, 4).unwrap();
    let to = k
        .tensor("o", o, &[16, 32], Layout::row_major(&[16, 32]).unwrap())
        .unwrap();
    let tr = k
        .tensor(
            "frag",
            r,
            &[16, 32],
            "S[(4,4,32):(1@warp,1@reg,1@lane)]".parse().unwrap(),
        )
        .unwrap();
    k.barrier();
    k.copy(Scope::warpgroups(0..1), &tr, &ts).unwrap();
    k.copy(Scope::warpgroups(0..1), &to, &tr).unwrap();
    k.build().unwrap()
}

#[test]
fn emitted_kernels_compile_for_both_gpu_targets() {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv");
    let Some(lib) = find_nvrtc(&venv) else {
        eprintln!(
            "skipped: no NVRTC under {} (scripts/kernel-check installs it)",
            venv.display()
        );
        return;
    };
    let shape = |s: &str| axe_xla::parse_shape(s).unwrap().as_array().unwrap().clone();
    let relayout = relayout_kernel(
        &shape("bf16[30,260]{1,0}"),
        &shape("bf16[30,260]{1,0:T(8,128)(2,1)}"),
    )
    .unwrap();
    for kernel in [pointwise_and_staged(), relayout.kernel] {
        for (t, w) in [
            (Target::Sm80, IndexWidth::Narrow),
            (Target::Sm90a, IndexWidth::Narrow),
            (Target::Sm90a, IndexWidth::Wide),
        ] {
            let p = lower(&kernel, t).unwrap();
            let src = emit_cuda_with(&p, w).unwrap();
            // Asked to, these small kernels index with 32-bit arithmetic (unsigned where no value is
            // negative).
            let narrow = src.contains("const unsigned tid = threadIdx.x;")
                || src.contains("const int tid = threadIdx.x;");
            assert_eq!(narrow, w == IndexWidth::Narrow, "{src}");
            assert_eq!(narrow, !src.contains("LL"), "{src}");
            let c = compile_here(&lib, &src, &kernel.name, t.arch().unwrap())
                .unwrap_or_else(|e| panic!("{e}\n{src}"));
            assert!(c.ptx.contains(".entry"), "{}", c.ptx);
            assert!(c.cubin.starts_with(b"\x7fELF"));
            let regs = axe_kernel::nvrtc::cubin_registers(&c.cubin).expect("registers");
            assert!((1..=255).contains(&regs), "{regs} registers");
        }
    }
    assert_eq!(
        axe_kernel::nvrtc::cubin_registers(b"\x7fELF\x02 truncated"),
        None
    );
    // Bad source is an error carrying NVRTC's log, not a crash.
    let e = compile_here(
        &lib,
        "__global__ void k() { undeclared(); }",
        "bad",
        "sm_80",
    )
    .unwrap_err();
    assert!(e.to_string().contains("undeclared"), "{e}");
}

/// A kernel or buffer may not take a name the generated code already gives a meaning (a keyword, a
/// CUDA built-in, a name the emitted source declares or calls); names that merely look like one may.
#[test]
fn names_the_generated_code_reserves_are_refused() {
    let launch = Launch {
        grid: 1,
        cluster: 1,
        threads: 32,
    };
    let taken = [
        "int",
        "float",
        "tid",
        "cta",
        "smem",
        "threadIdx",
        "uint4",
        "make_float2",
        "int32_t",
        "v0",
        "tmap1",
        "axe_exp_sub",
        "AxeTensorMap",
        "fmax",
        "expf",
        "lambda",
        "nl",
        "def",
    ];
    for name in taken {
        let e = KernelBuilder::new(name, launch).unwrap_err().to_string();
        assert!(e.contains("is taken in the generated code"), "{name}: {e}");
        let mut k = KernelBuilder::new("k", launch).unwrap();
        let e = k
            .buffer(name, Space::Global, DType::F32, 4)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is taken in the generated code"), "{name}: {e}");
    }
    for bad in ["", "1a", "_a", "a-b", "a b", "é"] {
        assert!(KernelBuilder::new(bad, launch).is_err(), "{bad:?}");
    }
    let mut k = KernelBuilder::new("k", launch).unwrap();
    for fine in [
        "tidy", "ctas", "v", "vx1", "float8", "uint5", "integer", "tmap", "maximum",
    ] {
        k.buffer(fine, Space::Global, DType::F32, 4)
            .unwrap_or_else(|e| panic!("{fine}: {e}"));
    }
    let e = k
        .buffer("tidy", Space::Global, DType::F32, 4)
        .unwrap_err()
        .to_string();
    assert!(e.contains("taken by another buffer"), "{e}");
}

/// A warp's row sum whose user buffers take the names dispatch once gave its scratch registers, and
/// whose tensor names hold a newline and a trailing backslash (text that would end or continue a
/// `//` comment): the comments stay one line each, and the source compiles.
fn hostile_names() -> axe_kernel::Kernel {
    let mut k = builder("rowsum", 1, 32);
    let g = k.buffer("g", Space::Global, DType::F32, 64).unwrap();
    let o = k.buffer("o", Space::Global, DType::F32, 2).unwrap();
    let rs = k
        .buffer("reduce1_partner", Space::Registers, DType::F32, 2)
        .unwrap();
    let rd = k
        .buffer("reduce1_pairs", Space::Registers, DType::F32, 2)
        .unwrap();
    let (x, m) = warp_rows(&mut k, ("x\n}int broken;", rs), ("m\\", rd));
    let gt = k
        .tensor("g", g, &[2, 32], Layout::row_major(&[2, 32]).unwrap())
        .unwrap();
    let ot = k
        .tensor("o", o, &[2, 1], Layout::row_major(&[2, 1]).unwrap())
        .unwrap();
    k.copy(Scope::warp(), &x, &gt).unwrap();
    k.reduce(Scope::warp(), &m, &x, &[1], axe_kernel::ReduceOp::Sum)
        .unwrap();
    k.copy(Scope::warp(), &ot, &m).unwrap();
    k.build().unwrap()
}

#[test]
fn hostile_names_stay_in_comments_and_compile() {
    let kernel = hostile_names();
    for t in Target::CUDA {
        let p = lower(&kernel, t).unwrap();
        let src = emit_cuda_with(&p, IndexWidth::Wide).unwrap();
        for line in src
            .lines()
            .filter(|l| l.contains("broken") || l.contains("m\\"))
        {
            let l = line.trim_start();
            assert!(
                l.starts_with("//") && !l.trim_end().ends_with('\\'),
                "{line}"
            );
        }
    }
    // The interpreter sums each row.
    let p = lower(&kernel, Target::Cpu).unwrap();
    let input: Vec<u8> = (0..64).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let out = axe_kernel::run(&p, vec![input, vec![0; 8]], Default::default()).unwrap();
    let sums: Vec<f32> = out[1]
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(sums, [496.0, 1520.0]);
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv");
    let Some(lib) = find_nvrtc(&venv) else {
        eprintln!("skipped NVRTC: none under {}", venv.display());
        return;
    };
    let p = lower(&kernel, Target::Sm80).unwrap();
    let src = emit_cuda_with(&p, IndexWidth::Wide).unwrap();
    compile_here(&lib, &src, &kernel.name, "sm_80").unwrap_or_else(|e| panic!("{e}\n{src}"));
}

/// The names the emitted source declares besides the buffers: each `type name = ...` (and
/// `for (int name = ...`) in the kernel's body.
fn declared_locals(src: &str) -> Vec<String> {
    let body = src.split("__global__").nth(1).unwrap_or("");
    let types = [
        "unsigned", "int", "float", "double", "long", "char", "short", "bool",
    ];
    let mut names = Vec::new();
    for seg in body.split([';', '{', '\n']) {
        let Some((lhs, _)) = seg.split_once(" = ") else {
            continue;
        };
        let toks: Vec<&str> = lhs.split_whitespace().collect();
        let [.., ty, name] = toks.as_slice() else {
            continue;
        };
        let ty = ty.trim_start_matches('(');
        let name = name.trim_start_matches('*');
        let ident = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if ident && (ty.ends_with('*') || types.contains(&ty)) {
            names.push(name.to_string());
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Law: every name the emitted code declares for itself (not a buffer) is one that no buffer may
/// take, so a user's buffer never shadows it — over the shipped kernels, whose programs use mma,
/// ldmatrix, wgmma, shuffles and let-bound variables between them.
#[test]
fn every_local_the_emitted_code_declares_is_refused_as_a_buffer_name() {
    use axe_kernel::shipped::Shipped;
    let shape = |s: &str| axe_xla::parse_shape(s).unwrap().as_array().unwrap().clone();
    let kernels = [
        (
            Shipped::gemm_for(128, 128, 64, DType::BF16, Target::Sm80).unwrap(),
            Target::Sm80,
        ),
        (
            Shipped::gemm_for(128, 256, 64, DType::BF16, Target::Sm90a).unwrap(),
            Target::Sm90a,
        ),
        (Shipped::softmax(8, 1000, DType::F32).unwrap(), Target::Sm80),
        (
            Shipped::relayout(
                &shape("pred[64,256]{1,0}"),
                &shape("pred[64,256]{1,0:T(32,128)(32,1)E(1)}"),
            )
            .unwrap(),
            Target::Sm80,
        ),
    ];
    let mut seen = Vec::new();
    for (s, t) in kernels
        .iter()
        .map(|(s, t)| (&s.kernel, *t))
        .chain([(&hostile_names(), Target::Sm80)])
    {
        let p = lower(s, t).unwrap();
        let src = emit_cuda_with(&p, IndexWidth::Wide).unwrap();
        for name in declared_locals(&src) {
            if p.buffers.iter().any(|b| b.name == name) {
                continue;
            }
            assert!(
                KernelBuilder::new(
                    &name,
                    Launch {
                        grid: 1,
                        cluster: 1,
                        threads: 32
                    }
                )
                .is_err(),
                "{} declares {name}, which a buffer could take",
                s.name
            );
            seen.push(name);
        }
    }
    // The scan finds what it looks for: the mma's, ldmatrix's and wgmma's locals and loop variables.
    for want in [
        "axe_ma", "axe_mc", "axe_row", "axe_da", "axe_i", "tid", "v0",
    ] {
        assert!(
            seen.iter().any(|n| n == want),
            "{want} not found among {seen:?}"
        );
    }
}
