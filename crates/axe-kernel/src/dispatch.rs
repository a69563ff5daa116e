//! Dispatch: each operator has variants registered per target with a priority and a predicate. The
//! first variant (highest priority) that applies lowers the call; a variant that does not apply declines
//! with a reason a person understands; when none applies the error lists every variant and its reason; a
//! call may force a variant (which must still apply).

use std::fmt;
use std::str::FromStr;

use crate::desc::{Call, Kernel};
use crate::error::{KernelError, Result};
use crate::expr::Var;
use crate::ir::{Decision, LStmt};

/// `n` of `noun` in words a decision's text reads: `1 vector`, `4 vectors` (`noun` takes an `s`).
pub(crate) fn count(n: impl fmt::Display, noun: &str) -> String {
    let n = n.to_string();
    format!("{n} {noun}{}", if n == "1" { "" } else { "s" })
}

/// A compilation target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// The CPU interpreter (any variant without a GPU-only instruction).
    Cpu,
    /// Ampere (A100): `cp.async`, `ldmatrix`, `mma.sync`.
    Sm80,
    /// Hopper with the `a` features: TMA, `wgmma`, clusters.
    Sm90a,
    /// AWS Trainium 1 (one NeuronCore): SBUF and PSUM, the TensorE systolic array
    /// ([`crate::tensore`]); emitted as NKI-style text ([`crate::emit_nki()`]).
    Trn1,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 4] = [Target::Cpu, Target::Sm80, Target::Sm90a, Target::Trn1];
    /// The targets of the CUDA thread model (CTAs, warps, threads, shared memory, registers): the
    /// default of [`Variant::targets`].
    pub const THREADED: [Target; 3] = [Target::Cpu, Target::Sm80, Target::Sm90a];

    /// `cpu`, `sm_80`, `sm_90a`, `trn1`.
    pub fn name(self) -> &'static str {
        match self {
            Target::Cpu => "cpu",
            Target::Sm80 => "sm_80",
            Target::Sm90a => "sm_90a",
            Target::Trn1 => "trn1",
        }
    }

    /// Shared memory one CTA may use, in bytes (sm_80: 163 KiB; sm_90: 227 KiB; the interpreter: as sm_90;
    /// trn1 has none: its on-chip memories are SBUF and PSUM).
    pub fn shared_capacity(self) -> u64 {
        match self {
            Target::Trn1 => 0,
            Target::Sm80 => 163 * 1024,
            Target::Cpu | Target::Sm90a => 227 * 1024,
        }
    }

    /// The NVRTC `--gpu-architecture` value, for GPU targets.
    pub fn arch(self) -> Option<&'static str> {
        match self {
            Target::Cpu | Target::Trn1 => None,
            Target::Sm80 => Some("sm_80"),
            Target::Sm90a => Some("sm_90a"),
        }
    }

    /// The targets CUDA C++ is emitted for: exactly those with an [`Target::arch`].
    pub const CUDA: [Target; 2] = [Target::Sm80, Target::Sm90a];

    /// **Law**: `Ok` exactly for the targets of [`Target::CUDA`] (those with an NVRTC architecture);
    /// for the others an error naming the CUDA targets and what the asked one is for instead
    /// (`cpu`: the interpreter runs its program; `trn1`: NKI text).
    pub fn check_cuda(self) -> Result<()> {
        let instead = match self {
            Target::Sm80 | Target::Sm90a => return Ok(()),
            Target::Cpu => {
                "cpu is the interpreter's target: its program is run on the CPU (and explained), not compiled"
            }
            Target::Trn1 => "trn1 programs are emitted as NKI-style text (emit_nki)",
        };
        Err(KernelError::Invalid(format!(
            "CUDA is emitted for the GPU targets sm_80 and sm_90a, not {self}; {instead}"
        )))
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Target {
    type Err = KernelError;
    fn from_str(s: &str) -> Result<Target> {
        Target::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| {
                KernelError::Invalid(format!(
                    "unknown target {s:?}; expected cpu, sm_80, sm_90a or trn1"
                ))
            })
    }
}

/// What a variant sees: the kernel, the target, and a supply of fresh variables.
#[derive(Debug)]
pub struct Ctx<'a> {
    /// The kernel being lowered.
    pub kernel: &'a Kernel,
    /// The target.
    pub target: Target,
    next_var: u32,
    extra: Vec<crate::desc::Buffer>,
    maps: Vec<crate::ir::TensorMap>,
    /// The windows around the call being lowered: (buffer, the alignment of its base in bytes).
    pub(crate) windows: Vec<(usize, u64)>,
}

impl<'a> Ctx<'a> {
    /// A context for lowering `kernel` for `target`.
    pub fn new(kernel: &'a Kernel, target: Target) -> Ctx<'a> {
        Ctx {
            kernel,
            target,
            next_var: kernel.vars,
            extra: Vec::new(),
            maps: Vec::new(),
            windows: Vec::new(),
        }
    }

    /// Adds a buffer a variant needs (a shared-memory tile, a register stage); its index. Call it only
    /// once the variant applies.
    pub fn add_buffer(&mut self, b: crate::desc::Buffer) -> usize {
        self.extra.push(b);
        self.kernel.buffers.len() + self.extra.len() - 1
    }

    /// A scratch buffer like `b` (same space, dtype and size) that an earlier call added, else `b` added.
    /// Only for variants that end with a CTA barrier, so the next call may reuse the scratch.
    pub fn scratch(&mut self, b: crate::desc::Buffer) -> usize {
        match self
            .extra
            .iter()
            .position(|e| e.space == b.space && e.dtype == b.dtype && e.elems == b.elems)
        {
            Some(i) => self.kernel.buffers.len() + i,
            None => self.add_buffer(b),
        }
    }

    /// The kernel's buffers and those variants added.
    pub fn buffers(&self) -> Vec<crate::desc::Buffer> {
        self.kernel
            .buffers
            .iter()
            .chain(&self.extra)
            .cloned()
            .collect()
    }

    /// The index of tensor map `m` among the program's (added unless an equal one is there).
    pub fn tensor_map(&mut self, m: crate::ir::TensorMap) -> usize {
        match self.maps.iter().position(|x| *x == m) {
            Some(i) => i,
            None => {
                self.maps.push(m);
                self.maps.len() - 1
            }
        }
    }

    /// The tensor maps variants asked for.
    pub fn tensor_maps(&self) -> Vec<crate::ir::TensorMap> {
        self.maps.clone()
    }

    /// A fresh variable.
    pub fn var(&mut self) -> Var {
        self.next_var += 1;
        Var(self.next_var - 1)
    }

    /// Variables used so far.
    pub fn vars(&self) -> u32 {
        self.next_var
    }
}

/// A variant's answer.
#[derive(Debug)]
pub enum Outcome {
    /// It applies: why, and the lowered statements.
    Lowered {
        /// Why it applies (the facts it checked).
        why: String,
        /// The code.
        code: Vec<LStmt>,
    },
    /// It does not apply, and why.
    Declined(String),
}

impl Outcome {
    /// A variant's plan — its code and why it applies, or why not — as an outcome.
    pub fn of(plan: std::result::Result<(Vec<LStmt>, String), String>) -> Outcome {
        match plan {
            Ok((code, why)) => Outcome::Lowered { why, code },
            Err(reason) => Outcome::Declined(reason),
        }
    }
}

/// One way to lower an operator.
pub trait Variant: Sync {
    /// The variant's name (`copy.vec16`).
    fn name(&self) -> &'static str;
    /// The operator it lowers (`copy`).
    fn op(&self) -> &'static str;
    /// Higher runs first.
    fn priority(&self) -> i32;
    /// The targets it is registered for: unless it says otherwise, those of the CUDA thread model
    /// ([`Target::THREADED`]: the interpreter runs every instruction a variant emits); Trainium's
    /// variants name [`Target::Trn1`].
    fn targets(&self) -> &'static [Target] {
        &Target::THREADED
    }
    /// Applies or declines.
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome>;
}

/// The registered variants.
pub struct Registry {
    variants: Vec<&'static dyn Variant>,
}

impl Registry {
    /// The standard variants of every operator.
    pub fn standard() -> Registry {
        let mut variants: Vec<&'static dyn Variant> = Vec::new();
        variants.extend(crate::copy::variants());
        variants.extend(crate::pointwise::variants());
        variants.extend(crate::registers::variants());
        variants.extend(crate::reduce::variants());
        variants.extend(crate::regwise::variants());
        variants.extend(crate::regcopy::variants());
        variants.extend(crate::staged::variants());
        variants.extend(crate::gemm::variants());
        variants.extend(crate::ldmatrix::variants());
        variants.extend(crate::stmatrix::variants());
        variants.extend(crate::tma::variants());
        variants.extend(crate::cp_async::variants());
        variants.extend(crate::wgmma::variants());
        variants.extend(crate::bits::variants());
        variants.extend(crate::tensore::variants());
        variants.sort_by_key(|v| std::cmp::Reverse(v.priority()));
        Registry { variants }
    }

    /// The variants for `op` on `target`, highest priority first.
    pub fn for_op(&self, op: &str, target: Target) -> Vec<&'static dyn Variant> {
        self.variants
            .iter()
            .copied()
            .filter(|v| v.op() == op && v.targets().contains(&target))
            .collect()
    }

    /// Every variant, for listings.
    pub fn all(&self) -> &[&'static dyn Variant] {
        &self.variants
    }

    /// Dispatches one call: the forced variant, or the first that applies.
    pub fn dispatch(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<(Decision, Vec<LStmt>)> {
        let op = call.op.kind();
        let candidates = self.for_op(op, ctx.target);
        let decision = |variant: &str, why: String, declined| Decision {
            op: call.label(),
            scope: call.scope.to_string(),
            variant: variant.to_string(),
            why,
            declined,
        };
        if let Some(forced) = &call.force {
            let Some(v) = candidates.iter().find(|v| v.name() == forced) else {
                let names: Vec<&str> = candidates.iter().map(|v| v.name()).collect();
                return Err(KernelError::Forced {
                    op: call.label(),
                    variant: forced.clone(),
                    reason: format!(
                        "no such variant of {op} on {}; it has {}",
                        ctx.target,
                        names.join(", ")
                    ),
                });
            };
            return match lower_in_windows(*v, call, ctx)? {
                Outcome::Lowered { why, code } => Ok((
                    decision(v.name(), format!("forced; {why}"), Vec::new()),
                    code,
                )),
                Outcome::Declined(reason) => Err(KernelError::Forced {
                    op: call.label(),
                    variant: forced.clone(),
                    reason,
                }),
            };
        }
        let mut declined = Vec::new();
        for v in candidates {
            match lower_in_windows(v, call, ctx)? {
                Outcome::Lowered { why, code } => {
                    return Ok((decision(v.name(), why, declined), code))
                }
                Outcome::Declined(reason) => declined.push((v.name().to_string(), reason)),
            }
        }
        Err(KernelError::NoVariant {
            op: call.label(),
            scope: call.scope.to_string(),
            target: ctx.target.to_string(),
            declined,
        })
    }
}

/// `v.lower(call, ctx)`, declined where the code would misalign a vector through a window around the
/// call. A variant that declines leaves `ctx` as it found it (buffers and tensor maps it added are
/// taken back).
fn lower_in_windows(v: &dyn Variant, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
    let (extra, maps) = (ctx.extra.len(), ctx.maps.len());
    let mut out = v.lower(call, ctx)?;
    if let Outcome::Lowered { code, .. } = &out {
        let kernel = ctx.kernel;
        if let Some(why) = ctx.windows.iter().find_map(|&(buf, align)| {
            let name = kernel.buffers.get(buf).map_or("?", |b| b.name.as_str());
            crate::lower::window_misfit(code, buf, align, name)
        }) {
            out = Outcome::Declined(why);
        }
    }
    if let Outcome::Declined(_) = out {
        ctx.extra.truncate(extra);
        ctx.maps.truncate(maps);
    }
    Ok(out)
}
