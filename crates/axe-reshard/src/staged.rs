//! Reshards run in stages: a source partial with different ops on different mesh axes is reduced one op
//! at a time, in mesh order (`axe_shard::plan_stages`), each stage's destination shards being the next
//! stage's source. Intermediate shards are row-major.

use axe_shard::{Mesh, Plan, Stage};

use crate::comm::Communicator;
use crate::exec::reshard_with;
use crate::exec_error::{ExecError, ExecResult};
use crate::placement::{filled, MemoryLayout, Placement};
use crate::verify::{first_outcome, verify_agreed, Verified};

/// One stage of a run: its plan and the placements it moves between.
#[derive(Clone, Debug, PartialEq)]
pub struct RunStage {
    /// The stage's plan.
    pub plan: Plan,
    /// What the stage starts from.
    pub src: Placement,
    /// What it leaves.
    pub dst: Placement,
}

/// The placements of `stages` (planned from `src.sharding` to `dst.sharding`): the first stage starts
/// from `src`, the last ends at `dst`, and the shardings between are held row-major in `src`'s element
/// type. Law: consecutive stages share their placement, so the stages chain.
pub fn run_stages_of(
    src: &Placement,
    dst: &Placement,
    stages: Vec<Stage>,
) -> ExecResult<Vec<RunStage>> {
    let n = stages.len();
    stages
        .into_iter()
        .enumerate()
        .map(|(i, st)| {
            let between = |s| Placement::new(s, MemoryLayout::RowMajor, src.dtype);
            Ok(RunStage {
                plan: st.plan,
                src: if i == 0 {
                    src.clone()
                } else {
                    between(st.src)?
                },
                dst: if i + 1 == n {
                    dst.clone()
                } else {
                    between(st.dst)?
                },
            })
        })
        .collect()
}

/// The stages as borrowed triples.
fn triples(stages: &[RunStage]) -> Vec<(&Plan, &Placement, &Placement)> {
    stages.iter().map(|s| (&s.plan, &s.src, &s.dst)).collect()
}

/// The inputs the ranks agree on for a staged run ([`crate::run_inputs`]'s): those of a one-stage run from
/// the first source to the last destination, with every stage's plan in place of the one plan (none for
/// no stages).
pub fn staged_inputs(mesh: &Mesh, stages: &[RunStage]) -> Vec<(&'static str, u64)> {
    let (Some(first), Some(last)) = (stages.first(), stages.last()) else {
        return Vec::new();
    };
    let mut v = crate::agree::run_inputs(mesh, &first.plan, &first.src, &last.dst);
    let plans: Vec<&Plan> = stages.iter().map(|s| &s.plan).collect();
    for (name, h) in v.iter_mut() {
        if *name == "the plan" {
            *h = crate::agree::InputHash::of_debug(&plans);
        }
    }
    v
}

/// [`crate::verify_run`] of a staged reshard: the source filled from the first stage's source, the
/// stages run one after another, the last destination checked against the first source (the partial axes
/// reduced in mesh order). Every rank returns the same `Ok`, or an error.
pub fn verify_staged_run<C: Communicator + ?Sized>(
    comm: &C,
    mesh: &Mesh,
    stages: &[RunStage],
) -> ExecResult<Verified> {
    let inputs = staged_inputs(mesh, stages);
    verify_agreed(comm, mesh, &triples(stages), &inputs, true)
}

/// [`verify_staged_run`] on the threads backend (see [`crate::verify_threads`]).
pub fn verify_staged_threads(
    mesh: &Mesh,
    stages: &[RunStage],
    timeout: std::time::Duration,
) -> ExecResult<Verified> {
    for s in stages {
        crate::check::checked(mesh.len(), mesh, &s.plan, &s.src, &s.dst, true)?;
    }
    let inputs = staged_inputs(mesh, stages);
    let t = triples(stages);
    first_outcome(crate::threads::run_threads(mesh.len(), timeout, |c| {
        verify_agreed(&c, mesh, &t, &inputs, false)
    }))
}

/// Runs `stages` on this rank, from `src_buf` into `dst_buf`. Between stages the ranks agree on whether
/// every rank finished the stage, so an error on one rank ends the run on every rank (naming the rank)
/// rather than leaving its peers waiting in the next stage.
pub(crate) fn run_stages<C: Communicator + ?Sized>(
    comm: &C,
    mesh: &Mesh,
    stages: &[(&Plan, &Placement, &Placement)],
    src_buf: &[u8],
    dst_buf: &mut [u8],
    check_whole: bool,
) -> ExecResult<()> {
    let me = comm.rank() as u64;
    let mut held: Option<Vec<u8>> = None;
    for (i, &(plan, src, dst)) in stages.iter().enumerate() {
        let from = held.as_deref().unwrap_or(src_buf);
        if i + 1 == stages.len() {
            return reshard_with(comm, mesh, plan, src, dst, from, dst_buf, check_whole)
                .map(|_| ());
        }
        let step = dst
            .buffer(mesh, me)
            .and_then(|b| filled(b.bytes()?, 0))
            .and_then(|mut out| {
                reshard_with(comm, mesh, plan, src, dst, from, &mut out, check_whole)?;
                Ok(out)
            });
        let mut all = vec![0u8; comm.size()];
        comm.all_gather(&[u8::from(step.is_ok())], &mut all)?;
        let out = step?;
        if let Some(r) = all.iter().position(|&ok| ok != 1) {
            return Err(ExecError::Input(format!(
                "rank {r} failed its part of the reshard (stage {} of {})",
                i + 1,
                stages.len()
            )));
        }
        held = Some(out);
    }
    Err(ExecError::Plan("a run of no stages".into()))
}
