//! Emission of the asynchronous statements: `cp.async` and its commit groups, and Hopper's mbarriers,
//! copy engine (TMA), wgmma and `setmaxnreg`, as inline PTX.

use std::fmt::Write;

use super::{ex, raw_addr, Ix};
use crate::desc::Swizzle;
use crate::dtype::DType;
use crate::ir::{Access, LStmt, Program, SmemDesc};

/// Declarations the statements below use: the tensor map's by-value type, shared addresses and wgmma
/// descriptors.
pub(super) const PRELUDE: &str = r#"struct __align__(64) AxeTensorMap { unsigned long long v[16]; };
__device__ __forceinline__ unsigned axe_smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned long long axe_wgmma_desc(unsigned addr, unsigned sbo, unsigned long long mode) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(sbo >> 4) << 32) | (mode << 62);
}
"#;

/// The wgmma descriptor's swizzle mode.
fn mode(s: Swizzle) -> u32 {
    match s {
        Swizzle::B128 => 1,
        Swizzle::B64 => 2,
        Swizzle::B32 => 3,
    }
}

fn smem(prog: &Program, a: &Access, n: Ix) -> String {
    format!("axe_smem({})", raw_addr(prog, a, n))
}

fn fence_operands(prog: &Program, acc: &Access, regs: u32, pad: &str, n: Ix, s: &mut String) {
    let _ = writeln!(
        s,
        "{pad}{{ float* axe_mc = reinterpret_cast<float*>({});\n{pad}  #pragma unroll\n{pad}  for (int axe_i = 0; axe_i < {regs}; ++axe_i) asm volatile(\"\" : \"+f\"(axe_mc[axe_i]) :: \"memory\"); }}",
        raw_addr(prog, acc, n)
    );
}

fn desc(prog: &Program, d: &SmemDesc, n: Ix) -> String {
    format!(
        "axe_wgmma_desc({}, {}u, {}ull)",
        smem(prog, &d.at, n),
        d.sbo,
        mode(d.swizzle)
    )
}

/// Emits `st` if it is one of Hopper's statements; false otherwise.
pub(super) fn stmt(prog: &Program, st: &LStmt, pad: &str, n: Ix, s: &mut String) -> bool {
    match st {
        LStmt::CpAsync {
            dst, src, bytes, ..
        } => {
            let cache = if *bytes == 16 { "cg" } else { "ca" };
            let _ = writeln!(
                s,
                "{pad}asm volatile(\"cp.async.{cache}.shared.global [%0], [%1], {bytes};\" :: \"r\"(axe_smem({})), \"l\"({}) : \"memory\");",
                super::addr(prog, dst, n),
                super::addr(prog, src, n)
            );
        }
        LStmt::CpAsyncArrive { bar } => {
            let _ = writeln!(
                s,
                "{pad}asm volatile(\"cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\" :: \"r\"({}) : \"memory\");",
                smem(prog, bar, n)
            );
        }
        LStmt::AsyncCommit => {
            let _ = writeln!(
                s,
                "{pad}asm volatile(\"cp.async.commit_group;\" ::: \"memory\");"
            );
        }
        LStmt::AsyncWait(k) => {
            let _ = writeln!(
                s,
                "{pad}asm volatile(\"cp.async.wait_group {k};\" ::: \"memory\");"
            );
        }
        LStmt::MbarInit { bar, count } => {
            let _ = writeln!(
                s,
                "{pad}asm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\" :: \"r\"({}), \"r\"({count}u) : \"memory\");",
                smem(prog, bar, n)
            );
        }
        // sm_80 has no fence.mbarrier_init (nor a copy engine to fence for): the CTA barrier that
        // follows makes the initialisation visible to cp.async.
        LStmt::FenceMbarInit if prog.target == "sm_80" => {
            let _ = writeln!(
                s,
                "{pad}// fence.mbarrier_init: sm_90's; the barrier below suffices on sm_80"
            );
        }
        LStmt::FenceMbarInit => {
            let _ = writeln!(
                s,
                "{pad}asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");"
            );
        }
        LStmt::MbarArrive { bar } => {
            let _ = writeln!(
                s,
                "{pad}asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\" :: \"r\"({}) : \"memory\");",
                smem(prog, bar, n)
            );
        }
        LStmt::MbarExpectTx { bar, bytes } => {
            let _ = writeln!(
                s,
                "{pad}asm volatile(\"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\" :: \"r\"({}), \"r\"({bytes}u) : \"memory\");",
                smem(prog, bar, n)
            );
        }
        LStmt::MbarWait { bar, parity } => {
            // try_wait (which may suspend the thread a while) is sm_90's; sm_80 polls with test_wait.
            let wait = if prog.target == "sm_80" {
                "test_wait"
            } else {
                "try_wait"
            };
            let _ = writeln!(
                s,
                "{pad}asm volatile(\"{{\\n.reg .pred P1;\\nAXE_WAIT:\\nmbarrier.{wait}.parity.shared::cta.b64 P1, [%0], %1;\\n@P1 bra AXE_DONE;\\nbra AXE_WAIT;\\nAXE_DONE:\\n}}\" :: \"r\"({}), \"r\"((unsigned)({})) : \"memory\");",
                smem(prog, bar, n),
                ex(parity, n)
            );
        }
        LStmt::TmaLoad {
            map, dst, src, bar, ..
        } => {
            let Some(m) = prog.tensor_maps.get(*map) else {
                let _ = writeln!(s, "{pad}#error \"tensor map {map} is missing\"");
                return true;
            };
            let el = format!("(({}) / {})", ex(&src.byte, n), m.elem_bytes);
            // The box's coordinates, innermost first: its first element's index, mixed radix over
            // the map's dims.
            let rank = m.dims.len();
            let mut coords = Vec::with_capacity(rank);
            let mut radix: u64 = 1;
            for (k, &d) in m.dims.iter().enumerate() {
                let q = if radix == 1 {
                    el.clone()
                } else {
                    format!("({el} / {radix})")
                };
                coords.push(if k + 1 == rank {
                    format!("\"r\"((int){q})")
                } else {
                    format!("\"r\"((int)({q} % {d}))")
                });
                radix = radix.saturating_mul(d);
            }
            let slots: Vec<String> = (0..rank).map(|k| format!("%{}", k + 2)).collect();
            let _ = writeln!(
                s,
                "{pad}asm volatile(\"cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {{{}}}], [%{}];\"\n{pad}    :: \"r\"({}), \"l\"((unsigned long long)&tmap{map}), {}, \"r\"({}) : \"memory\");",
                slots.join(", "),
                rank + 2,
                smem(prog, dst, n),
                coords.join(", "),
                smem(prog, bar, n)
            );
        }
        LStmt::Wgmma {
            dtype,
            n: cols,
            c,
            a,
            b,
            ..
        } => {
            let ty = if *dtype == DType::BF16 { "bf16" } else { "f16" };
            let regs = cols / 2;
            let list: Vec<String> = (0..regs).map(|i| format!("%{i}")).collect();
            let outs: Vec<String> = (0..regs).map(|i| format!("\"+f\"(axe_mc[{i}])")).collect();
            let _ = writeln!(
                s,
                "{pad}{{\n{pad}  float* axe_mc = reinterpret_cast<float*>({});\n{pad}  const unsigned long long axe_da = {};\n{pad}  const unsigned long long axe_db = {};",
                raw_addr(prog, c, n),
                desc(prog, a, n),
                desc(prog, b, n)
            );
            let _ = writeln!(
                s,
                "{pad}  asm volatile(\"{{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\nwgmma.mma_async.sync.aligned.m64n{cols}k16.f32.{ty}.{ty} {{{}}}, %{}, %{}, p, 1, 1, 0, 0;\\n}}\"\n{pad}      : {}\n{pad}      : \"l\"(axe_da), \"l\"(axe_db));\n{pad}}}",
                list.join(", "),
                regs,
                regs + 1,
                outs.join(", ")
            );
        }
        LStmt::WgmmaFence { acc, regs } => {
            fence_operands(prog, acc, *regs, pad, n, s);
            let _ = writeln!(
                s,
                "{pad}asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");"
            );
        }
        LStmt::WgmmaCommit => {
            let _ = writeln!(
                s,
                "{pad}asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");"
            );
        }
        LStmt::WgmmaWait { pending, acc, regs } => {
            let _ = writeln!(
                s,
                "{pad}asm volatile(\"wgmma.wait_group.sync.aligned {pending};\" ::: \"memory\");"
            );
            fence_operands(prog, acc, *regs, pad, n, s);
        }
        LStmt::SetMaxNReg { inc, regs } => {
            let _ = writeln!(
                s,
                "{pad}asm volatile(\"setmaxnreg.{}.sync.aligned.u32 {regs};\");",
                if *inc { "inc" } else { "dec" }
            );
        }
        _ => return false,
    }
    true
}
