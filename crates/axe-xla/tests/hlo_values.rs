#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The cost report counts each value once, as XLA's `HloDataflowAnalysis` defines values; lists as
//! relayouts only instructions that move bytes; says where the result's sharding comes from; and
//! refuses the shardings `axe hlo shards` refuses. The modules are the review's repros.

use axe_xla::hlo::per_device::OutputSharding;
use axe_xla::hlo::stats::{report, Report};
use axe_xla::hlo::{parse_module, Module};
use proptest::prelude::*;

fn stats(text: &str) -> Report<'_> {
    let m: Module<'_> = parse_module(text).unwrap();
    // The report borrows the text, not the module.
    let r = report(&m, 10).unwrap();
    drop(m);
    r
}

const ADD: &str =
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n";

/// Async collectives: `ags{0}` and `cps{0}` are `p0`, the `*-done` results are `ags{1}`, `cps{1}` and
/// `ars`. The distinct values are p0 (4096), ags{1} (8192), cps{1} (4096), two u32 contexts and ars
/// (4096): 20488 bytes (XLA's buffer assignment).
#[test]
fn async_collectives_count_each_buffer_once() {
    let text = format!(
        "HloModule m3, num_partitions=2\n\n{ADD}ENTRY main {{\n  \
         p0 = f32[1024]{{0}} parameter(0)\n  \
         ags = (f32[1024]{{0}}, f32[2048]{{0}}) all-gather-start(p0), dimensions={{0}}, replica_groups={{{{0,1}}}}, channel_id=1, use_global_device_ids=true\n  \
         agd = f32[2048]{{0}} all-gather-done(ags)\n  \
         cps = (f32[1024]{{0}}, f32[1024]{{0}}, u32[], u32[]) collective-permute-start(p0), channel_id=2, source_target_pairs={{{{0,1}},{{1,0}}}}\n  \
         cpd = f32[1024]{{0}} collective-permute-done(cps)\n  \
         ars = f32[1024]{{0}} all-reduce-start(p0), replica_groups={{{{0,1}}}}, to_apply=add, channel_id=3\n  \
         ard = f32[1024]{{0}} all-reduce-done(ars)\n  \
         ROOT t = (f32[2048]{{0}}, f32[1024]{{0}}, f32[1024]{{0}}) tuple(agd, cpd, ard)\n}}\n"
    );
    let r = stats(&text);
    assert_eq!(r.materialized.arrays, 6);
    assert_eq!(r.materialized.physical_bytes, 20488);
    assert_eq!(r.entry, r.materialized);
}

/// A prefetch into `S(1)`: `copy-done` returns `copy-start{0}`, and `copy-start{1}` is `p0` itself;
/// the bitcast only names `p0` again and moves nothing. The prefetch moves `p0` into `S(1)`, one
/// relayout at its start, and `a` moves it back.
#[test]
fn a_prefetch_is_one_buffer_in_its_memory_space() {
    let text = "HloModule m2\n\nENTRY main {\n  \
        p0 = f32[256,128]{1,0:T(8,128)} parameter(0)\n  \
        b = f32[256,128]{0,1:T(8,128)} bitcast(p0)\n  \
        cs = (f32[256,128]{1,0:T(8,128)S(1)}, f32[256,128]{1,0:T(8,128)}, u32[]) copy-start(p0)\n  \
        cd = f32[256,128]{1,0:T(8,128)S(1)} copy-done(cs)\n  \
        r = f32[128,256]{1,0:T(8,128)} reshape(p0)\n  \
        a = f32[256,128]{1,0:T(8,128)} add(cd, cd)\n  \
        ROOT t = (f32[256,128]{0,1:T(8,128)}, f32[256,128]{1,0:T(8,128)}, f32[128,256]{1,0:T(8,128)}) tuple(b, a, r)\n}\n";
    let r = stats(text);
    let s1 = r.spaces[&1];
    assert_eq!((s1.arrays, s1.physical_bytes), (1, 128 << 10));
    // p0, the copy's context, r, a.
    let s0 = r.spaces[&0];
    assert_eq!((s0.arrays, s0.physical_bytes), (4, 3 * (128 << 10) + 4));
    let listed: Vec<(&str, &str)> = r
        .relayouts
        .iter()
        .map(|x| (x.instruction, x.kind))
        .collect();
    assert_eq!(
        listed,
        [("cs", "memory space"), ("a", "memory space")],
        "the bitcast moves nothing"
    );
}

/// `call`, `conditional`, `opt-barrier` and `add-dependency` define no value: the distinct values are
/// p, b and the roots of the callee and the two branches (16 KiB + 1 B).
#[test]
fn calls_branches_and_barriers_alias() {
    let text = "HloModule alias\n\n\
        callee {\n  a = f32[1024]{0} parameter(0)\n  ROOT n = f32[1024]{0} negate(a)\n}\n\n\
        br0 {\n  a = f32[1024]{0} parameter(0)\n  ROOT n = f32[1024]{0} negate(a)\n}\n\n\
        br1 {\n  a = f32[1024]{0} parameter(0)\n  ROOT n = f32[1024]{0} exponential(a)\n}\n\n\
        ENTRY main {\n  p = f32[1024]{0} parameter(0)\n  b = pred[] parameter(1)\n  \
        c = f32[1024]{0} call(p), to_apply=callee\n  \
        k = f32[1024]{0} conditional(b, p, p), true_computation=br0, false_computation=br1\n  \
        o = f32[1024]{0} opt-barrier(k)\n  tok = token[] after-all()\n  \
        d = f32[1024]{0} add-dependency(o, tok)\n  \
        ROOT t = (f32[1024]{0}, f32[1024]{0}) tuple(c, d)\n}\n";
    let r = stats(text);
    assert_eq!(r.materialized.arrays, 5);
    assert_eq!(r.materialized.physical_bytes, 4 * 4096 + 1);
    assert_eq!(r.entry.physical_bytes, 4096 + 1);
}

/// A transpose whose result keeps every element's byte is a bitcast; one that moves them is listed.
/// Copies between layouts that are the same bytes (a size-1 dim moved, a tile of the whole array)
/// are not.
#[test]
fn instructions_that_move_no_bytes_are_not_relayouts() {
    let tr = "HloModule tr\n\nENTRY main {\n  p = f32[5,3]{1,0} parameter(0)\n  \
        t = f32[3,5]{0,1} transpose(p), dimensions={1,0}\n  \
        u = f32[3,5]{1,0} transpose(p), dimensions={1,0}\n  \
        ROOT r = (f32[3,5]{0,1}, f32[3,5]{1,0}) tuple(t, u)\n}\n";
    let r = stats(tr);
    let listed: Vec<(&str, &str, i64)> = r
        .relayouts
        .iter()
        .map(|x| (x.instruction, x.kind, x.bytes))
        .collect();
    assert_eq!(listed, [("u", "transpose", 60)]);
    let noop = "HloModule noop\n\nENTRY main {\n  p = f32[1,128]{1,0} parameter(0)\n  \
        c = f32[1,128]{0,1} copy(p)\n  q = f32[8,128]{1,0:T(8,128)} parameter(1)\n  \
        d = f32[8,128]{1,0} copy(q)\n  e = f32[8,256]{1,0} copy(d)\n  \
        f = f32[8,256]{1,0:T(8,128)} copy(e)\n  \
        ROOT t = (f32[1,128]{0,1}, f32[8,128]{1,0}, f32[8,256]{1,0:T(8,128)}) tuple(c, d, f)\n}\n";
    let r = stats(noop);
    let listed: Vec<&str> = r.relayouts.iter().map(|x| x.instruction).collect();
    assert_eq!(listed, ["f"]);
    // The transformer's head transposes are bitcasts; the copies after them move the data.
    let heads = "HloModule h\n\nENTRY main {\n  p = f32[2,4,16,8]{3,2,1,0} parameter(0)\n  \
        t = f32[2,16,4,8]{3,1,2,0} transpose(p), dimensions={0,2,1,3}\n  \
        ROOT c = f32[2,16,4,8]{3,2,1,0} copy(t)\n}\n";
    let r = stats(heads);
    let listed: Vec<(&str, &str)> = r
        .relayouts
        .iter()
        .map(|x| (x.instruction, x.kind))
        .collect();
    assert_eq!(listed, [("c", "layout")]);
}

/// JAX's `x*2`, a sharding constraint, `+1`, with no `out_shardings`: the result's sharding is
/// inferred (XLA chose another: 600 bytes where the inference gives 180), and the report says so,
/// with the result whole (1200 bytes) as the most a device can hold of it.
#[test]
fn an_inferred_output_sharding_is_marked() {
    let text = "HloModule jit__lambda, entry_computation_layout={(f32[10,30]{1,0})->f32[10,30]{1,0}}\n\n\
        ENTRY main.1 {\n  x.1 = f32[10,30]{1,0} parameter(0)\n  constant.3 = f32[] constant(2)\n  \
        mul.2 = f32[10,30]{1,0} broadcast(constant.3), dimensions={}\n  \
        mul.3 = f32[10,30]{1,0} multiply(x.1, mul.2)\n  \
        sharding_constraint.1 = f32[10,30]{1,0} custom-call(mul.3), custom_call_target=\"Sharding\", sharding={devices=[4,2]<=[8]}\n  \
        constant.2 = f32[] constant(1)\n  add.2 = f32[10,30]{1,0} broadcast(constant.2), dimensions={}\n  \
        ROOT add.3 = f32[10,30]{1,0} add(sharding_constraint.1, add.2)\n}\n";
    let p = stats(text).per_device.unwrap();
    assert_eq!(p.output_sharding, OutputSharding::Inferred);
    assert_eq!((p.output_bytes, p.output_whole_bytes), (180, 1200));
    // Written on the result: given; nothing to follow: whole.
    let given = text.replace(
        "add(sharding_constraint.1, add.2)",
        "add(sharding_constraint.1, add.2), sharding={devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}",
    );
    let p = stats(&given).per_device.unwrap();
    assert_eq!(p.output_sharding, OutputSharding::Given);
    assert_eq!(p.output_bytes, 600);
    let whole = text.replace(
        "ROOT add.3 = f32[10,30]{1,0} add(sharding_constraint.1, add.2)",
        "ROOT add.3 = f32[10,30]{1,0} broadcast(constant.2), dimensions={}",
    );
    let p = stats(&whole).per_device.unwrap();
    assert_eq!(p.output_sharding, OutputSharding::Whole);
    assert_eq!(p.output_bytes, p.output_whole_bytes);
}

/// The report refuses the shardings `Sharding::shards` (`axe hlo shards`) refuses, with its message.
#[test]
fn stats_refuses_what_shards_refuses() {
    use axe_xla::hlo::sharding::parse_sharding;
    for (sharding, shape, dims) in [
        ("{devices=[2]0,1,2}", "f32[4]{0}", vec![4]),
        ("{devices=[2,2]<=[4]}", "f32[4]{0}", vec![4]),
        ("{devices=[2]<=[2]}", "f32[4,2]{1,0}", vec![4, 2]),
        ("{devices=[2,1,2]<=[4]}", "f32[4,2]{1,0}", vec![4, 2]),
    ] {
        let text = format!(
            "HloModule m\nENTRY e {{\n  ROOT p = {shape} parameter(0), sharding={sharding}\n}}\n"
        );
        let m = parse_module(&text).unwrap();
        let got = report(&m, 3).unwrap_err().to_string();
        let want = parse_sharding(sharding)
            .unwrap()
            .shards(&dims)
            .unwrap_err()
            .to_string();
        assert!(got.ends_with(&want), "{sharding}: {got} / {want}");
    }
    // Accepted by both: a trailing replicated grid dim.
    let ok = "HloModule m\nENTRY e {\n  ROOT p = f32[4,2]{1,0} parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n}\n";
    assert!(report(&parse_module(ok).unwrap(), 3).is_ok());
}

/// One step of a generated module: a value computed, or a way of passing the current value on.
#[derive(Clone, Copy, Debug)]
enum Step {
    Negate,
    OptBarrier,
    AddDependency,
    Bitcast,
    TupleGte,
    AllReduce,
    AllGather,
    CollectivePermute,
    Copy,
    Call,
    While,
}

/// The module of `steps` over `f32[n]` values, written with XLA's forwarding and async forms
/// (`forwarded`), or with each replaced by what it stands for: nothing for an op that only passes its
/// operand on, the synchronous collective (and a `u32[]` constant per context) for an async pair, the
/// callee's and body's values written in line.
fn program(steps: &[Step], forwarded: bool) -> String {
    let mut comps = String::from(ADD);
    let mut body = String::from("  v0 = f32[16]{0} parameter(0)\n");
    let mut cur = "v0".to_string();
    let mut len = 16;
    for (i, step) in steps.iter().enumerate() {
        let s = format!("f32[{len}]{{0}}");
        let y = format!("v{}", i + 1);
        let mut line = |l: String| body.push_str(&format!("  {l}\n"));
        match (step, forwarded) {
            (Step::Negate, _) => line(format!("{y} = {s} negate({cur})")),
            (Step::OptBarrier, true) => line(format!("{y} = {s} opt-barrier({cur})")),
            (Step::AddDependency, true) => {
                line(format!("tocond{i} = token[] after-all()"));
                line(format!("{y} = {s} add-dependency({cur}, tocond{i})"));
            }
            (Step::Bitcast, true) => line(format!("{y} = {s} bitcast({cur})")),
            (Step::TupleGte, true) => {
                line(format!("tup{i} = ({s}) tuple({cur})"));
                line(format!("{y} = {s} get-tuple-element(tup{i}), index=0"));
            }
            // A pass-through stands for nothing: the next step reads the value itself.
            (Step::OptBarrier | Step::AddDependency | Step::Bitcast | Step::TupleGte, false) => {
                continue
            }
            (Step::AllReduce, true) => {
                line(format!("st{i} = {s} all-reduce-start({cur}), to_apply=add"));
                line(format!("{y} = {s} all-reduce-done(st{i})"));
            }
            (Step::AllReduce, false) => line(format!("{y} = {s} all-reduce({cur}), to_apply=add")),
            (Step::AllGather, _) => {
                let g = format!("f32[{}]{{0}}", 2 * len);
                if forwarded {
                    line(format!(
                        "st{i} = ({s}, {g}) all-gather-start({cur}), dimensions={{0}}"
                    ));
                    line(format!("{y} = {g} all-gather-done(st{i})"));
                } else {
                    line(format!("{y} = {g} all-gather({cur}), dimensions={{0}}"));
                }
                len *= 2;
            }
            (Step::CollectivePermute, true) => {
                line(format!("st{i} = ({s}, {s}, u32[], u32[]) collective-permute-start({cur}), source_target_pairs={{{{0,1}}}}"));
                line(format!("{y} = {s} collective-permute-done(st{i})"));
            }
            (Step::CollectivePermute, false) => {
                line(format!("cx{i}a = u32[] constant(0)"));
                line(format!("cx{i}b = u32[] constant(0)"));
                line(format!(
                    "{y} = {s} collective-permute({cur}), source_target_pairs={{{{0,1}}}}"
                ));
            }
            (Step::Copy, true) => {
                let f = format!("f32[{len}]{{0:S(1)}}");
                line(format!("st{i} = ({f}, {s}, u32[]) copy-start({cur})"));
                line(format!("{y}f = {f} copy-done(st{i})"));
                line(format!("{y} = {s} negate({y}f)"));
            }
            (Step::Copy, false) => {
                let f = format!("f32[{len}]{{0:S(1)}}");
                line(format!("cx{i} = u32[] constant(0)"));
                line(format!("{y}f = {f} copy({cur})"));
                line(format!("{y} = {s} negate({y}f)"));
            }
            (Step::Call | Step::While, true) => {
                let name = format!("callee{i}");
                comps.push_str(&format!(
                    "{name} {{\n  a = {s} parameter(0)\n  ROOT n = {s} negate(a)\n}}\n\n"
                ));
                if matches!(step, Step::Call) {
                    line(format!("{y} = {s} call({cur}), to_apply={name}"));
                } else {
                    comps.push_str(&format!(
                        "cond{i} {{\n  a = {s} parameter(0)\n  ROOT k = pred[] constant(false)\n}}\n\n"
                    ));
                    line(format!(
                        "{y} = {s} while({cur}), condition=cond{i}, body={name}"
                    ));
                }
            }
            (Step::Call | Step::While, false) => {
                line(format!("{y} = {s} negate({cur})"));
                if matches!(step, Step::While) {
                    line(format!("cond{i} = pred[] constant(false)"));
                }
            }
        }
        cur = y;
    }
    body.push_str(&format!("  ROOT r = f32[{len}]{{0}} negate({cur})\n"));
    format!("HloModule g, num_partitions=2\n\n{comps}ENTRY main {{\n{body}}}\n")
}

proptest! {
    /// Law: the values a module holds with pass-through ops, async pairs, calls and loops add up to
    /// those of the module with each replaced by what it stands for ([`program`]), in all and per
    /// memory space.
    #[test]
    fn forwarded_values_add_up_to_the_module_without_them(
        steps in proptest::collection::vec(
            prop_oneof![
                Just(Step::Negate), Just(Step::OptBarrier), Just(Step::AddDependency),
                Just(Step::Bitcast), Just(Step::TupleGte), Just(Step::AllReduce),
                Just(Step::AllGather), Just(Step::CollectivePermute), Just(Step::Copy),
                Just(Step::Call), Just(Step::While),
            ],
            0..12,
        )
    ) {
        let with = program(&steps, true);
        let without = program(&steps, false);
        let (a, b) = (stats(&with), stats(&without));
        prop_assert_eq!(a.materialized, b.materialized, "{}\n{}", with, without);
        prop_assert_eq!(&a.spaces, &b.spaces);
    }
}

/// The same values counted in chunks on two threads as in one walk: a module of the review's async
/// and aliasing patterns repeated past the size the report is worked out in parallel from.
#[test]
fn forwarded_values_in_chunks_are_those_of_one_walk() {
    let steps = [
        Step::AllGather,
        Step::Copy,
        Step::CollectivePermute,
        Step::AllReduce,
        Step::OptBarrier,
        Step::Call,
        Step::While,
        Step::TupleGte,
        Step::Negate,
    ];
    let many: Vec<Step> = steps
        .iter()
        .cycle()
        .take(8000)
        .map(|&s| {
            if matches!(s, Step::AllGather) {
                Step::Negate
            } else {
                s
            }
        })
        .collect();
    let text = program(&many, true);
    let m = parse_module(&text).unwrap();
    assert!(m.instruction_count() >= 16_384, "{}", m.instruction_count());
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| report(&m, 10).unwrap())
    };
    let one = run(1);
    assert_eq!(run(2), one);
    let without = program(&many, false);
    assert_eq!(stats(&without).materialized, one.materialized);
}
