//! The shipped kernels as their callers see them: each with its global buffers in parameter order — the
//! array each holds (how it is read from or written to a file or an array), whether it is an input, and
//! whether the kernel adds to it. The command line and the Python package build kernels through these.

use axe_xla::{ArrayShape, PrimitiveType};

use crate::desc::Kernel;
use crate::dispatch::Target;
use crate::dtype::DType;
use crate::error::{overflow, KernelError, Result};
use crate::gemm_kernel::{gemm_kernel, Gemm};
use crate::relayout::relayout_kernel;
use crate::softmax::softmax_kernel;

/// One global buffer of a shipped kernel.
#[derive(Debug, Clone)]
pub struct Param {
    /// The parameter's name.
    pub name: &'static str,
    /// Its bytes.
    pub bytes: u64,
    /// The array it holds (element type, dimensions, layout).
    pub array: ArrayShape,
    /// Read by the kernel (an input); else written (an output).
    pub input: bool,
    /// The kernel adds to it, so it must start at zero; else the kernel overwrites every byte.
    pub accumulates: bool,
}

/// A shipped kernel with its buffers.
#[derive(Debug, Clone)]
pub struct Shipped {
    /// The kernel.
    pub kernel: Kernel,
    /// Its global buffers, in parameter order.
    pub params: Vec<Param>,
    /// e.g. `relayout f32[8,8]{1,0} -> f32[8,8]{0,1}`.
    pub describe: String,
    /// The targets this kernel is built for.
    pub built_for: BuiltFor,
}

/// The targets a shipped kernel is built for, and why it is not built for the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltFor {
    /// The targets it lowers for as shipped.
    pub targets: &'static [Target],
    /// Why the other targets are not among them (a clause: "softmax keeps its rows in registers…").
    pub why_not: &'static str,
}

impl BuiltFor {
    /// `Ok` where `target` is one of [`BuiltFor::targets`]; else an error naming the targets it is
    /// built for and why not this one.
    pub fn check(&self, target: Target) -> Result<()> {
        if self.targets.contains(&target) {
            return Ok(());
        }
        let names: Vec<&str> = self.targets.iter().map(|t| t.name()).collect();
        let list = match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => names.join(""),
        };
        Err(KernelError::Invalid(format!(
            "{}: it is built for {list}, not {target}",
            self.why_not
        )))
    }
}

/// What the thread model's kernels (relayout, softmax) say to trn1.
const THREADED_ONLY: [(&str, &str); 2] = [
    ("relayout", "relayout spreads its elements over a grid of CTAs and threads, which trn1 (one program on one NeuronCore) has not"),
    ("softmax", "softmax keeps its rows in registers and shared memory, which trn1 has not"),
];

/// The targets the shipped kernel `name` is built for, one target or another (`gemm` is built for
/// each target it is asked for: [`Shipped::gemm_for`]); empty for a name that is not shipped.
pub fn targets_of(name: &str) -> &'static [Target] {
    match name {
        "gemm" | "gemm_reduce_scatter" => &Target::ALL,
        _ if THREADED_ONLY.iter().any(|(n, _)| *n == name) => &Target::THREADED,
        _ => &[],
    }
}

fn threaded(name: &str) -> BuiltFor {
    BuiltFor {
        targets: &Target::THREADED,
        why_not: THREADED_ONLY
            .iter()
            .find(|(n, _)| *n == name)
            .map_or("", |(_, why)| why),
    }
}

fn row_major(t: PrimitiveType, dims: &[u64]) -> Result<ArrayShape> {
    let dims: Vec<i64> = dims
        .iter()
        .map(|&d| i64::try_from(d).map_err(|_| overflow("converting a dimension")))
        .collect::<Result<_>>()?;
    Ok(ArrayShape::new(t, &dims))
}

fn primitive(d: DType) -> Result<PrimitiveType> {
    PrimitiveType::from_name(&d.to_string())
        .ok_or_else(|| KernelError::Invalid(format!("{d} has no XLA element type")))
}

impl Shipped {
    /// The inputs, in order.
    pub fn inputs(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| p.input)
    }

    /// `relayout`: array `src` into `dst`'s layout (params `src`, `dst`).
    pub fn relayout(src: &ArrayShape, dst: &ArrayShape) -> Result<Shipped> {
        let r = relayout_kernel(src, dst)?;
        let param = |name, bytes, array: &ArrayShape, input| Param {
            name,
            bytes,
            array: array.clone(),
            input,
            accumulates: false,
        };
        Ok(Shipped {
            built_for: threaded("relayout"),
            describe: format!("relayout {src} -> {dst}"),
            params: vec![
                param("src", r.src_bytes, src, true),
                param("dst", r.dst_bytes, dst, false),
            ],
            kernel: r.kernel,
        })
    }

    /// `softmax` over the rows of a row-major `[rows, cols]` array of `dtype` (params `x`, `y`).
    pub fn softmax(rows: u64, cols: u64, dtype: DType) -> Result<Shipped> {
        let s = softmax_kernel(rows, cols, dtype)?;
        let a = row_major(primitive(dtype)?, &[rows, cols])?;
        let param = |name, input| Param {
            name,
            bytes: s.bytes,
            array: a.clone(),
            input,
            accumulates: false,
        };
        Ok(Shipped {
            built_for: threaded("softmax"),
            describe: format!("softmax over the rows of {a}"),
            params: vec![param("x", true), param("y", false)],
            kernel: s.kernel,
        })
    }

    /// `gemm`: `C[M,N] (f32) += A[M,K] · B` with B given as `[N,K]` (params `a`, `b`, `c`; `c` starts at
    /// zero for `C = A·B`).
    pub fn gemm(m: u64, n: u64, k: u64, dtype: DType) -> Result<Shipped> {
        Shipped::gemm_for(m, n, k, dtype, Target::Sm80)
    }

    /// [`Shipped::gemm`] as shipped for `target`: on sm_90a, when M, N and K are multiples of 128, 256
    /// and 64, the copy-engine and wgmma kernel ([`crate::gemm_hopper`]); else the `mma.sync` one
    /// ([`crate::gemm_kernel`]).
    pub fn gemm_for(m: u64, n: u64, k: u64, dtype: DType, target: Target) -> Result<Shipped> {
        let g = gemm_for(m, n, k, dtype, target)?;
        let t = primitive(dtype)?;
        let built_for = if target == Target::Trn1 {
            BuiltFor {
                targets: &[Target::Trn1],
                why_not: "this gemm is trn1's (TensorE, SBUF and PSUM); the GPUs' is built with their target",
            }
        } else if hopper_fits(m, n, k, target) {
            BuiltFor {
                targets: &[Target::Cpu, Target::Sm90a],
                why_not: "this gemm is sm_90a's (TMA and wgmma); another target's is built with that target",
            }
        } else {
            BuiltFor {
                targets: &Target::THREADED,
                why_not: "this gemm is the GPUs' (mma.sync); trn1's is built with target trn1",
            }
        };
        Ok(Shipped {
            built_for,
            describe: format!("gemm {m}×{n}×{k} {dtype} (C f32 = A · B, B given as [N,K])"),
            params: vec![
                Param {
                    name: "a",
                    bytes: g.a_bytes,
                    array: row_major(t, &[m, k])?,
                    input: true,
                    accumulates: false,
                },
                Param {
                    name: "b",
                    bytes: g.b_bytes,
                    array: row_major(t, &[n, k])?,
                    input: true,
                    accumulates: false,
                },
                Param {
                    name: "c",
                    bytes: g.c_bytes,
                    array: row_major(PrimitiveType::F32, &[m, n])?,
                    input: false,
                    accumulates: true,
                },
            ],
            kernel: g.kernel,
        })
    }
}

/// `gemm_reduce_scatter` across `devices` devices ([`crate::gemm_rs`]): each device multiplies its
/// K-slices with the gemm shipped for `target`, then the partial sums are reduced and scattered along M.
pub fn gemm_reduce_scatter(
    (m, n, k): (u64, u64, u64),
    dtype: DType,
    devices: u64,
    target: Target,
) -> crate::xdev::XResult<crate::gemm_rs::GemmReduceScatter> {
    crate::gemm_rs::gemm_reduce_scatter(m, n, k, dtype, devices, target)
}

/// The gemm kernel shipped for `target` (see [`Shipped::gemm_for`]).
pub fn gemm_for(m: u64, n: u64, k: u64, dtype: DType, target: Target) -> Result<Gemm> {
    if target == Target::Trn1 {
        crate::tensore_kernel::gemm_kernel_trn(m, n, k, dtype)
    } else if hopper_fits(m, n, k, target) {
        crate::gemm_hopper::gemm_kernel_hopper(m, n, k, dtype)
    } else {
        gemm_kernel(m, n, k, dtype)
    }
}

/// Whether the gemm shipped for `target` is the copy-engine and wgmma one: on sm_90a, for M, N and K
/// positive multiples of its tile.
fn hopper_fits(m: u64, n: u64, k: u64, target: Target) -> bool {
    use crate::gemm_hopper::{TILE_K, TILE_M, TILE_N};
    let fits = m.is_multiple_of(TILE_M) && n.is_multiple_of(TILE_N) && k.is_multiple_of(TILE_K);
    target == Target::Sm90a && fits && m > 0 && n > 0 && k > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped_for(t: Target) -> Vec<(&'static str, Shipped)> {
        let src = ArrayShape::new(PrimitiveType::F32, &[8, 64]);
        let dst = ArrayShape {
            layout: axe_xla::parse_layout("{0,1}", 2).unwrap(),
            ..src.clone()
        };
        vec![
            ("relayout", Shipped::relayout(&src, &dst).unwrap()),
            ("softmax", Shipped::softmax(4, 64, DType::F32).unwrap()),
            (
                "gemm",
                Shipped::gemm_for(128, 256, 64, DType::BF16, t).unwrap(),
            ),
        ]
    }

    /// A shipped kernel lowers on every target it says it is built for, is refused with its reason on
    /// every other, and `targets_of` is the union over the targets it is asked for.
    #[test]
    fn kernels_lower_exactly_where_they_are_built_for() {
        for asked in Target::ALL {
            for (name, s) in shipped_for(asked) {
                for t in Target::ALL {
                    let ok = s.built_for.targets.contains(&t);
                    match s.built_for.check(t) {
                        Ok(()) => {
                            assert!(ok);
                            crate::lower(&s.kernel, t)
                                .unwrap_or_else(|e| panic!("{name} for {asked} on {t}: {e}"));
                        }
                        Err(e) => {
                            assert!(!ok);
                            let e = e.to_string();
                            assert!(e.starts_with(s.built_for.why_not), "{e}");
                            assert!(e.ends_with(&format!("not {t}")), "{e}");
                        }
                    }
                }
                for t in s.built_for.targets {
                    assert!(targets_of(name).contains(t), "{name} on {t}");
                }
                if name == "gemm" {
                    assert!(s.built_for.targets.contains(&asked), "gemm for {asked}");
                }
            }
        }
        for name in ["relayout", "softmax"] {
            assert_eq!(targets_of(name), &Target::THREADED[..]);
        }
        assert_eq!(targets_of("gemm"), &Target::ALL[..]);
        assert!(targets_of("nope").is_empty());
    }
}
