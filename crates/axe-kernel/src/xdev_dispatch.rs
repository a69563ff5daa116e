//! Dispatch across devices: the variants of `copy` and `reduce` at the device scope, each planning with
//! `axe_shard::plan` or declining with a reason, and lowering a [`DeviceKernel`] to a [`DeviceProgram`].
//!
//! Variants, highest priority first:
//!
//! - `copy.local`: nothing crosses devices (every device already holds its destination region);
//! - `copy.reshard`: any redistribution without pending partial values to combine — the plan's
//!   collective (all-gather, all-to-all, permute, general) and its bytes, the minimum any plan needs;
//! - `reduce.reduce_scatter`: the pending sums are combined and the result left split over the reduced
//!   device axes;
//! - `reduce.all_reduce`: the result left replicated over them;
//! - `reduce.reshard`: any other redistribution that combines the pending values on arrival (onto one
//!   device, or split along another axis).

use axe_shard::{plan, AxisUse, Collective, CostModel, Plan};

use crate::dispatch::Target;
use crate::error::KernelError;
use crate::ir::{Decision, Program};
use crate::lower::lower;
use crate::reduce::ReduceOp;
use crate::xdev::{DeviceKernel, DeviceTensor, XCall, XOp, XResult, XdevError};

/// A variant's answer.
#[derive(Debug)]
pub enum Planned {
    /// It applies: why, and the plan every rank executes.
    Plan {
        /// The facts it checked.
        why: String,
        /// The reshard plan.
        plan: Plan,
    },
    /// It does not apply, and why.
    Declined(String),
}

/// One way to carry out a call across devices.
pub trait DeviceVariant: Sync {
    /// `copy.reshard`.
    fn name(&self) -> &'static str;
    /// `copy` or `reduce`.
    fn op(&self) -> &'static str;
    /// Higher runs first.
    fn priority(&self) -> i32;
    /// Plans or declines.
    fn plan(&self, k: &DeviceKernel, call: &XCall) -> Planned;
}

/// Every cross-device variant, highest priority first.
pub fn device_variants() -> Vec<&'static dyn DeviceVariant> {
    let mut v: Vec<&'static dyn DeviceVariant> = vec![
        &CopyLocal,
        &CopyReshard,
        &ReduceScatter,
        &AllReduce,
        &ReduceReshard,
    ];
    v.sort_by_key(|v| std::cmp::Reverse(v.priority()));
    v
}

/// One lowered step.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Every rank executes `plan`, reading its shard of tensor `src` and writing its shard of `dst`.
    Move {
        /// The call it lowers.
        call: usize,
        /// Source tensor.
        src: usize,
        /// Destination tensor.
        dst: usize,
        /// The plan.
        plan: Plan,
    },
    /// Every rank runs `program` on its shards of `binds` (one per global buffer).
    Local {
        /// The call it lowers.
        call: usize,
        /// The lowered single-device kernel.
        program: Box<Program>,
        /// The tensors bound to its global buffers.
        binds: Vec<usize>,
    },
}

/// A kernel across devices, lowered.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceProgram {
    /// The kernel.
    pub kernel: DeviceKernel,
    /// The target of the per-device programs.
    pub target: Target,
    /// The steps, in call order.
    pub steps: Vec<Step>,
    /// One decision per cross-device call and per call of each per-device kernel (prefixed by the
    /// kernel's name), in order.
    pub decisions: Vec<Decision>,
}

fn axis_names(k: &DeviceKernel, axes: &[usize]) -> String {
    let names: Vec<&str> = axes
        .iter()
        .map(|&a| k.mesh.names().get(a).map_or("?", String::as_str))
        .collect();
    names.join(", ")
}

/// The mesh axes whose pending values `src` holds and `dst` does not, with their ops.
fn reduced(src: &DeviceTensor, dst: &DeviceTensor) -> Vec<(usize, axe_shard::ReduceOp)> {
    src.pending()
        .into_iter()
        .filter(|&(a, op)| dst.sharding().axis_use().get(a) != Some(&AxisUse::Partial(op)))
        .collect()
}

fn tensors<'k>(k: &'k DeviceKernel, call: &XCall) -> Option<(&'k DeviceTensor, &'k DeviceTensor)> {
    Some((k.tensors.get(call.src)?, k.tensors.get(call.dst)?))
}

fn plan_of(k: &DeviceKernel, src: &DeviceTensor, dst: &DeviceTensor) -> Result<Plan, String> {
    plan(
        &k.mesh,
        src.sharding(),
        dst.sharding(),
        src.placement.elem_bytes(),
        &CostModel::default(),
    )
    .map_err(|e| format!("axe-shard cannot plan it: {e}"))
}

fn plan_text(p: &Plan) -> String {
    format!(
        "{} message{}, {} bytes across devices (the fewest any plan needs), {} local copies",
        p.transfers.len(),
        if p.transfers.len() == 1 { "" } else { "s" },
        p.bytes,
        p.locals.len()
    )
}

/// A copy's plan, or why a copy cannot do it.
fn copy_plan(k: &DeviceKernel, call: &XCall) -> Result<(Plan, String), String> {
    let (src, dst) = tensors(k, call).ok_or("the call names no such tensor")?;
    let r = reduced(src, dst);
    if !r.is_empty() {
        let axes: Vec<usize> = r.iter().map(|x| x.0).collect();
        return Err(format!(
            "{} holds partial values pending a {} over device axis {} that {} does not; a copy does not combine them: call reduce",
            src.name,
            r[0].1.name(),
            axis_names(k, &axes),
            dst.name
        ));
    }
    let p = plan_of(k, src, dst)?;
    let from_to = format!("{} → {}", src.describe(&k.mesh), dst.describe(&k.mesh));
    Ok((p, from_to))
}

/// A reduce's plan, or why no reduction across devices applies.
fn reduce_plan(k: &DeviceKernel, call: &XCall) -> Result<(Plan, String), String> {
    let XOp::Reduce(op) = call.op else {
        return Err("not a reduce".into());
    };
    let (src, dst) = tensors(k, call).ok_or("the call names no such tensor")?;
    let r = reduced(src, dst);
    if r.is_empty() {
        return Err(format!(
            "{} holds no partial values pending over a device axis that {} does not keep ({}): nothing to combine across devices",
            src.name,
            dst.name,
            src.describe(&k.mesh)
        ));
    }
    let want = match op {
        ReduceOp::Sum => axe_shard::ReduceOp::Sum,
        ReduceOp::Max => axe_shard::ReduceOp::Max,
    };
    if let Some(&(a, pending)) = r.iter().find(|x| x.1 != want) {
        return Err(format!(
            "the values {} holds over device axis {} are pending a {}, not the {} asked for",
            src.name,
            axis_names(k, &[a]),
            pending.name(),
            want.name()
        ));
    }
    let axes: Vec<usize> = r.iter().map(|x| x.0).collect();
    let p = plan_of(k, src, dst)?;
    let what = format!(
        "{} over device axis {}: {} → {}",
        want.name(),
        axis_names(k, &axes),
        src.describe(&k.mesh),
        dst.describe(&k.mesh)
    );
    Ok((p, what))
}

fn outcome(
    r: Result<(Plan, String), String>,
    accept: impl Fn(&Plan) -> Result<String, String>,
) -> Planned {
    match r.and_then(|(p, what)| accept(&p).map(|why| (p, format!("{what}; {why}")))) {
        Ok((plan, why)) => Planned::Plan { why, plan },
        Err(reason) => Planned::Declined(reason),
    }
}

struct CopyLocal;
struct CopyReshard;
struct ReduceScatter;
struct AllReduce;
struct ReduceReshard;

impl DeviceVariant for CopyLocal {
    fn name(&self) -> &'static str {
        "copy.local"
    }
    fn op(&self) -> &'static str {
        "copy"
    }
    fn priority(&self) -> i32 {
        30
    }
    fn plan(&self, k: &DeviceKernel, call: &XCall) -> Planned {
        outcome(copy_plan(k, call), |p| {
            if p.transfers.is_empty() {
                Ok(format!(
                    "every device already holds its destination region ({}): {} local copies, nothing crosses devices",
                    p.collective.name(),
                    p.locals.len()
                ))
            } else {
                Err(format!(
                    "{} bytes must cross devices ({})",
                    p.bytes,
                    p.collective.name()
                ))
            }
        })
    }
}

impl DeviceVariant for CopyReshard {
    fn name(&self) -> &'static str {
        "copy.reshard"
    }
    fn op(&self) -> &'static str {
        "copy"
    }
    fn priority(&self) -> i32 {
        20
    }
    fn plan(&self, k: &DeviceKernel, call: &XCall) -> Planned {
        outcome(copy_plan(k, call), |p| {
            Ok(format!("as {}: {}", p.collective.name(), plan_text(p)))
        })
    }
}

fn reduced_axes_text(k: &DeviceKernel, call: &XCall) -> String {
    tensors(k, call).map_or_else(String::new, |(s, d)| {
        let axes: Vec<usize> = reduced(s, d).iter().map(|x| x.0).collect();
        axis_names(k, &axes)
    })
}

impl DeviceVariant for ReduceScatter {
    fn name(&self) -> &'static str {
        "reduce.reduce_scatter"
    }
    fn op(&self) -> &'static str {
        "reduce"
    }
    fn priority(&self) -> i32 {
        30
    }
    fn plan(&self, k: &DeviceKernel, call: &XCall) -> Planned {
        outcome(reduce_plan(k, call), |p| {
            if p.collective == Collective::ReduceScatter {
                Ok(format!(
                    "the result stays split over device axis {}: a reduce-scatter, {}",
                    reduced_axes_text(k, call),
                    plan_text(p)
                ))
            } else {
                Err(format!(
                    "the destination is not split over the reduced device axis {} (the plan is {}, not a reduce-scatter)",
                    reduced_axes_text(k, call),
                    p.collective.name()
                ))
            }
        })
    }
}

impl DeviceVariant for AllReduce {
    fn name(&self) -> &'static str {
        "reduce.all_reduce"
    }
    fn op(&self) -> &'static str {
        "reduce"
    }
    fn priority(&self) -> i32 {
        20
    }
    fn plan(&self, k: &DeviceKernel, call: &XCall) -> Planned {
        outcome(reduce_plan(k, call), |p| {
            if p.collective == Collective::AllReduce {
                Ok(format!(
                    "the result is replicated over device axis {}: an all-reduce, {}",
                    reduced_axes_text(k, call),
                    plan_text(p)
                ))
            } else {
                Err(format!(
                    "the destination is not replicated over the reduced device axis {} (the plan is {}, not an all-reduce)",
                    reduced_axes_text(k, call),
                    p.collective.name()
                ))
            }
        })
    }
}

impl DeviceVariant for ReduceReshard {
    fn name(&self) -> &'static str {
        "reduce.reshard"
    }
    fn op(&self) -> &'static str {
        "reduce"
    }
    fn priority(&self) -> i32 {
        10
    }
    fn plan(&self, k: &DeviceKernel, call: &XCall) -> Planned {
        outcome(reduce_plan(k, call), |p| {
            Ok(format!(
                "a {} reshard that combines each piece on arrival: {}",
                p.collective.name(),
                plan_text(p)
            ))
        })
    }
}

/// Dispatches one cross-device call: the forced variant, or the first that applies.
fn dispatch(k: &DeviceKernel, call: &XCall) -> XResult<(Decision, Plan)> {
    let variants: Vec<_> = device_variants()
        .into_iter()
        .filter(|v| v.op() == call.kind())
        .collect();
    let decision = |variant: &str, why: String, declined| Decision {
        op: call.label(),
        scope: k.scope(),
        variant: variant.to_string(),
        why,
        declined,
    };
    if let Some(forced) = &call.force {
        let Some(v) = variants.iter().find(|v| v.name() == forced) else {
            let names: Vec<&str> = variants.iter().map(|v| v.name()).collect();
            return Err(XdevError::Kernel(KernelError::Forced {
                op: call.label(),
                variant: forced.clone(),
                reason: format!(
                    "no such variant of {} across devices; it has {}",
                    call.kind(),
                    names.join(", ")
                ),
            }));
        };
        return match v.plan(k, call) {
            Planned::Plan { why, plan } => Ok((
                decision(v.name(), format!("forced; {why}"), Vec::new()),
                plan,
            )),
            Planned::Declined(reason) => Err(XdevError::Kernel(KernelError::Forced {
                op: call.label(),
                variant: forced.clone(),
                reason,
            })),
        };
    }
    let mut declined = Vec::new();
    for v in variants {
        match v.plan(k, call) {
            Planned::Plan { why, plan } => return Ok((decision(v.name(), why, declined), plan)),
            Planned::Declined(reason) => declined.push((v.name().to_string(), reason)),
        }
    }
    Err(XdevError::Kernel(KernelError::NoVariant {
        op: call.label(),
        scope: k.scope(),
        target: "devices".into(),
        declined,
    }))
}

/// Lowers a kernel across devices: each `copy` and `reduce` dispatched to the first variant that
/// applies (its plan from `axe_shard::plan`), each per-device kernel lowered for `target` (its
/// decisions listed after the call's own, prefixed by the kernel's name).
pub fn xdev_lower(k: &DeviceKernel, target: Target) -> XResult<DeviceProgram> {
    let mut steps = Vec::with_capacity(k.calls.len());
    let mut decisions = Vec::new();
    for call in &k.calls {
        match &call.op {
            XOp::Copy | XOp::Reduce(_) => {
                let (d, plan) = dispatch(k, call)?;
                decisions.push(d);
                steps.push(Step::Move {
                    call: call.index,
                    src: call.src,
                    dst: call.dst,
                    plan,
                });
            }
            XOp::Kernel { kernel, binds } => {
                let program = lower(kernel, target)?;
                let names: Vec<&str> = binds
                    .iter()
                    .filter_map(|&b| k.tensors.get(b).map(|t| t.name.as_str()))
                    .collect();
                decisions.push(Decision {
                    op: call.label(),
                    scope: k.scope(),
                    variant: "kernel.each_device".into(),
                    why: format!(
                        "each of the {} devices runs {} ({}, {} calls) on its own shards of {}",
                        k.mesh.len(),
                        kernel.name,
                        target,
                        program.decisions.len(),
                        names.join(", ")
                    ),
                    declined: Vec::new(),
                });
                decisions.extend(program.decisions.iter().map(|d| Decision {
                    op: format!("{}: {}", kernel.name, d.op),
                    ..d.clone()
                }));
                steps.push(Step::Local {
                    call: call.index,
                    program: Box::new(program),
                    binds: binds.clone(),
                });
            }
        }
    }
    Ok(DeviceProgram {
        kernel: k.clone(),
        target,
        steps,
        decisions,
    })
}
