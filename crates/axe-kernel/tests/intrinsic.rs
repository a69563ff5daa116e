#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `intrinsic`: the escape hatch's text is emitted verbatim with its operands substituted, runs on
//! the interpreter by its CPU meaning (or stops naming it), is checked when written, and compiles
//! with NVRTC for sm_80 and sm_90a.

use axe_kernel::nvrtc::{compile_here, find_nvrtc};
use axe_kernel::{
    emit_cuda, lower, run, BufferId, CpuMeaning, DType, Expr, IntrinsicArg, KernelBuilder, Launch,
    RunLimits, Scope, Space, Target,
};
use std::path::Path;

fn builder() -> KernelBuilder {
    KernelBuilder::new(
        "hatch",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32,
        },
    )
    .unwrap()
}

const TWICE: &str = "{0} = {0} * 2.0f + (float)({1});";

/// Threads `0..16` run `x[t] = 2·x[t] + t` through an intrinsic; `cpu` says so on the CPU or not.
fn twice(cpu: bool) -> axe_kernel::Kernel {
    let mut k = builder();
    let x = k.buffer("x", Space::Global, DType::F32, 32).unwrap();
    let args = [
        IntrinsicArg::Elem {
            buffer: x,
            index: Expr::Thread,
        },
        IntrinsicArg::Value(Expr::Thread),
    ];
    let meaning = CpuMeaning::new(|v: &mut [f64]| v[0] = v[0] * 2.0 + v[1]);
    k.intrinsic(
        Scope::threads(0..16),
        "twice_plus_tid",
        TWICE,
        &args,
        cpu.then_some(meaning),
    )
    .unwrap();
    k.build().unwrap()
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn an_intrinsic_runs_by_its_cpu_meaning_in_its_scope() {
    let p = lower(&twice(true), Target::Cpu).unwrap();
    let input: Vec<f32> = (0..32).map(|i| i as f32 * 0.5 - 3.0).collect();
    let out = run(&p, vec![f32s(&input)], RunLimits::default())
        .unwrap()
        .remove(0);
    let want: Vec<f32> = input
        .iter()
        .enumerate()
        .map(|(t, &x)| if t < 16 { x * 2.0 + t as f32 } else { x })
        .collect();
    assert_eq!(out, f32s(&want));
}

#[test]
fn an_intrinsic_without_a_cpu_meaning_stops_the_interpreter_naming_it() {
    let p = lower(&twice(false), Target::Cpu).unwrap();
    let e = run(&p, vec![vec![0; 128]], RunLimits::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("intrinsic twice_plus_tid") && e.contains("has no CPU meaning"),
        "{e}"
    );
}

#[test]
fn the_text_is_emitted_verbatim_with_its_operands() {
    let p = lower(&twice(true), Target::Sm80).unwrap();
    let src = emit_cuda(&p).unwrap();
    let x0 = src
        .lines()
        .find(|l| l.contains("// intrinsic twice_plus_tid: {0} = "))
        .unwrap_or_else(|| panic!("{src}"));
    // The comment names each operand as the text receives it.
    let (elem, value) = x0
        .split_once("{0} = ")
        .unwrap()
        .1
        .split_once(", {1} = ")
        .unwrap();
    assert!(
        elem.starts_with("(*reinterpret_cast<float*>(x + "),
        "{elem}"
    );
    let body = TWICE.replace("{0}", elem).replace("{1}", value.trim_end());
    assert!(src.contains(&format!("{{ {body} }}")), "{body}\n{src}");
    // Threads 0..16 only.
    let at = src.find(&format!("{{ {body} }}")).unwrap();
    let guard = src[..at].rfind("if (").unwrap();
    assert!(src[guard..at].contains("16"), "{}", &src[guard..at]);
}

#[test]
fn a_line_comment_in_the_text_leaves_the_block_closed() {
    // `{ text }` on one line: a `//` comment in the text swallowed the closing brace.
    let mut k = builder();
    let x = k.buffer("x", Space::Global, DType::F32, 32).unwrap();
    let at = IntrinsicArg::Elem {
        buffer: x,
        index: Expr::Thread,
    };
    k.intrinsic(Scope::cta(), "one", "{0} = 1.0f; // one", &[at], None)
        .unwrap();
    let src = emit_cuda(&lower(&k.build().unwrap(), Target::Sm80).unwrap()).unwrap();
    let line = src
        .lines()
        .position(|l| l.trim_start().starts_with("{ ") && l.ends_with("= 1.0f; // one"))
        .unwrap_or_else(|| panic!("{src}"));
    let next = src.lines().nth(line + 1).unwrap_or_default();
    assert_eq!(next.trim(), "}", "{src}");
}

#[test]
fn bad_text_is_an_error_at_its_offset() {
    let mut k = builder();
    let x = k.buffer("x", Space::Global, DType::F32, 32).unwrap();
    let one = [IntrinsicArg::Elem {
        buffer: x,
        index: Expr::Const(0),
    }];
    let mut err = |name: &str, text: &str, args: &[IntrinsicArg]| {
        k.intrinsic(Scope::cta(), name, text, args, None)
            .unwrap_err()
            .to_string()
    };
    let e = err("a", "{0} = {1};", &one);
    assert!(
        e.contains("placeholder {1} names no operand (it has 1) at byte 6"),
        "{e}"
    );
    assert!(e.contains("\n  {0} = {1};\n        ^"), "{e}");
    let e = err("a", "asm volatile(\"nanosleep.u32 0;\"", &one);
    assert!(e.contains("an unclosed '(' at byte 12"), "{e}");
    let e = err("a", "asm volatile(\"nanosleep.u32 0;);", &one);
    assert!(e.contains("a string not closed at byte 13"), "{e}");
    let e = err("a", "{ x; }}", &one);
    assert!(e.contains("an unmatched '}' at byte 6"), "{e}");
    let e = err("a", "x\0", &one);
    assert!(e.contains("a NUL character at byte 1"), "{e}");
    let e = err("a b", "x;", &one);
    assert!(e.contains("intrinsic name \"a b\""), "{e}");
    let e = err(
        "a",
        "x;",
        &[IntrinsicArg::Elem {
            buffer: BufferId(7),
            index: Expr::Const(0),
        }],
    );
    assert!(e.contains("no buffer #7"), "{e}");
    // Unclosed comments and character literals are errors like unclosed strings.
    let e = err("a", "{0} = 1; /* (", &one);
    assert!(e.contains("a comment not closed at byte 9"), "{e}");
    // A `//` comment ending in a backslash (blanks after it too) would take the next line with it.
    for (text, at) in [("{0} = 1; // x\\", 14), ("{0} = 1; // x\\ \n;", 15)] {
        let e = err("a", text, &one);
        assert!(
            e.contains(&format!(
                "ending in a backslash, which joins the next line to the comment at byte {at}"
            )),
            "{text:?}: {e}"
        );
    }
    // A backslash elsewhere in a comment, or a `/* */` one ending in it, is fine.
    let mut fine = builder();
    let y = fine.buffer("y", Space::Global, DType::F32, 32).unwrap();
    let at = [IntrinsicArg::Elem {
        buffer: y,
        index: Expr::Const(0),
    }];
    for text in [
        "{0} = 1; // a\\b",
        "{0} = 1; /* a\\ */",
        "{0} = 1; // a\\b\n;",
    ] {
        fine.intrinsic(Scope::cta(), "ok", text, &at, None)
            .unwrap_or_else(|e| panic!("{text:?}: {e}"));
    }
    let e = err("a", "{0} = ')\n;", &one);
    assert!(
        e.contains("a character literal not closed on its line at byte 6"),
        "{e}"
    );
    // Units the launch has not: refused as for operator calls (an empty or too-wide slice ran
    // nowhere, or everywhere, silently).
    for scope in [
        Scope::warps(1..2),
        Scope::threads(5..5),
        Scope::warpgroups(0..1),
    ] {
        let e = k
            .intrinsic(scope.clone(), "a", "x;", &one, None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("intrinsic a: scope "), "{scope}: {e}");
    }
    // Brackets inside character literals and comments are text too (they were counted: valid CUDA
    // was refused); a quote after a digit is a digit separator. Unclosed ones are errors.
    for ok in [
        "{0} = (c == ')') ? 1.0f : 0.0f;",
        "{0} = 1.0f; // don't (",
        "{0} = (float)('\"');",
        "/* { */ {0} = 1'000;",
        "{0} = (float)'\\\\'; /* ( */",
    ] {
        let e = k.intrinsic(Scope::cta(), "ok", ok, &one, None);
        assert!(e.is_ok(), "{ok}: {e:?}");
    }
    // Braces in PTX and inside strings are text; only `{digits}` is a placeholder.
    k.intrinsic(
        Scope::cta(),
        "ok",
        "asm volatile(\"{ .reg .pred p; }\" :: \"f\"({0}));",
        &one,
        None,
    )
    .unwrap();
}

#[test]
fn intrinsics_compile_with_nvrtc() {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv");
    let Some(lib) = find_nvrtc(&venv) else {
        eprintln!("skipped: no NVRTC (set AXE_NVRTC or install it in .venv)");
        return;
    };
    let mut k = builder();
    let x = k.buffer("x", Space::Global, DType::F32, 32).unwrap();
    let elem = IntrinsicArg::Elem {
        buffer: x,
        index: Expr::Thread,
    };
    k.intrinsic(
        Scope::cta(),
        "nap",
        "asm volatile(\"nanosleep.u32 0;\");",
        &[],
        None,
    )
    .unwrap();
    k.intrinsic(
        Scope::warp(),
        "add",
        "asm volatile(\"add.f32 %0, %0, %0;\" : \"+f\"({0}));",
        &[elem],
        None,
    )
    .unwrap();
    let kernel = k.build().unwrap();
    for t in [Target::Sm80, Target::Sm90a] {
        let src = emit_cuda(&lower(&kernel, t).unwrap()).unwrap();
        let c = compile_here(&lib, &src, &kernel.name, t.arch().unwrap())
            .unwrap_or_else(|e| panic!("{e}\n{src}"));
        assert!(c.ptx.contains("nanosleep.u32 0;"), "{}", c.ptx);
        assert!(c.ptx.contains("add.f32"), "{}", c.ptx);
    }
    // Inline assembly ptxas rejects is NVRTC's error, not a crash.
    let mut k = builder();
    k.intrinsic(
        Scope::cta(),
        "bogus",
        "asm volatile(\"no.such.instruction;\");",
        &[],
        None,
    )
    .unwrap();
    let kernel = k.build().unwrap();
    let src = emit_cuda(&lower(&kernel, Target::Sm80).unwrap()).unwrap();
    let e = compile_here(&lib, &src, &kernel.name, "sm_80").unwrap_err();
    assert!(
        e.to_string().contains("ptxas") && e.to_string().contains("no"),
        "{e}"
    );
}

#[test]
fn a_tensor_element_is_the_element_its_layout_names() {
    use axe_layout::{Axis, Layout};
    let mut k = builder();
    let x = k.buffer("x", Space::Global, DType::F32, 64).unwrap();
    let r = k.buffer("r", Space::Registers, DType::F32, 8).unwrap();
    let m = Axis::memory();
    let g = Layout::strided(&[4, 8], &[16, 1], &[m, m]).unwrap();
    let t = k.tensor("t", x, &[4, 8], g).unwrap();
    // Element 9 is (1, 1): memory element 16 + 1.
    assert_eq!(
        IntrinsicArg::element(&t, 9).unwrap(),
        IntrinsicArg::Elem {
            buffer: x,
            index: Expr::Const(17)
        }
    );
    let reg = Layout::strided(&[4], &[2], &[Axis::new("reg").unwrap()]).unwrap();
    let tr = k.tensor("tr", r, &[4], reg).unwrap();
    assert_eq!(
        IntrinsicArg::element(&tr, 3).unwrap(),
        IntrinsicArg::Elem {
            buffer: r,
            index: Expr::Const(6)
        }
    );
}

#[test]
fn an_intrinsic_in_a_window_addresses_the_moved_buffer() {
    let mut k = builder();
    let x = k.buffer("x", Space::Global, DType::S32, 64).unwrap();
    let bump = CpuMeaning::new(|v: &mut [f64]| v[0] += 100.0);
    k.window(x, Expr::Const(32), 1, |k| {
        k.intrinsic(
            Scope::threads(0..4),
            "bump",
            "{0} += 100;",
            &[IntrinsicArg::Elem {
                buffer: x,
                index: Expr::Thread,
            }],
            Some(bump),
        )
    })
    .unwrap();
    let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
    let input: Vec<u8> = (0..64i32).flat_map(|i| i.to_le_bytes()).collect();
    let out = run(&p, vec![input], RunLimits::default())
        .unwrap()
        .remove(0);
    let want: Vec<u8> = (0..64i32)
        .map(|i| if (32..36).contains(&i) { i + 100 } else { i })
        .flat_map(|i| i.to_le_bytes())
        .collect();
    assert_eq!(out, want);
}
