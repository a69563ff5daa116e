#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The cost report's totals: exact sums, and an error (never a wrap) past `i64::MAX` bytes.

use axe_xla::hlo::{parse_module, stats::report};

/// A module whose entry holds `n` parameters of `shape`.
fn module(shape: &str, n: usize) -> String {
    let mut s = String::from("HloModule m\n\nENTRY %e {\n");
    for i in 0..n {
        let root = if i + 1 == n { "ROOT " } else { "" };
        s.push_str(&format!("  {root}%p{i} = {shape} parameter({i})\n"));
    }
    s.push_str("}\n");
    s
}

#[test]
fn totals_add_up() {
    let text = module("f32[1024,1024]{1,0}", 3);
    let r = report(&parse_module(&text).unwrap(), 5).unwrap();
    assert_eq!(r.total.arrays, 3);
    assert_eq!(r.total.logical_bytes, 3 * (4 << 20));
    assert_eq!(r.total.physical_bytes, 3 * (4 << 20));
}

#[test]
fn totals_past_i64_are_an_error() {
    // Each array is 4·(2^58 − 1) = 2^60 − 4 bytes (its bit count just fits i64): eight fit, nine do not.
    let big = "f32[288230376151711743]{0}";
    let text = module(big, 8);
    let eight = report(&parse_module(&text).unwrap(), 5).unwrap();
    assert_eq!(eight.total.logical_bytes, 8 * ((1i64 << 60) - 4));
    let err = report(&parse_module(&module(big, 9)).unwrap(), 5).unwrap_err();
    assert!(err.to_string().contains("exceed 2^63"), "{err}");
}

#[test]
fn materialized_leaves_out_fusion_bodies_and_callee_parameters() {
    let text = "HloModule m\n\n\
        %fused (p: f32[1024]) -> f32[1024] {\n  %p = f32[1024]{0} parameter(0)\n  %a = f32[1024]{0} negate(%p)\n  %b = f32[1024]{0} exponential(%a)\n  ROOT %c = f32[1024]{0} add(%a, %b)\n}\n\n\
        %body (t: f32[1024]) -> f32[1024] {\n  %t = f32[1024]{0} parameter(0)\n  ROOT %f = f32[1024]{0} fusion(%t), kind=kLoop, calls=%fused\n}\n\n\
        %cond (t: f32[1024]) -> pred[] {\n  %t = f32[1024]{0} parameter(0)\n  ROOT %k = pred[] constant(false)\n}\n\n\
        ENTRY %e (x: f32[1024]) -> f32[1024] {\n  %x = f32[1024]{0} parameter(0)\n  %g = f32[1024]{0} fusion(%x), kind=kLoop, calls=%fused\n  ROOT %w = f32[1024]{0} while(%g), condition=%cond, body=%body\n}\n";
    let r = report(&parse_module(text).unwrap(), 5).unwrap();
    // Every instruction but the while, whose result is a phi of g and the body's f (XLA's dataflow
    // defines no value there): 4 in %fused, 2 in %body, 2 in %cond (one a pred[]), 2 in the entry.
    assert_eq!(r.total.arrays, 10);
    // Held in memory: the entry's x, g; the while body's fusion result; the condition's constant.
    assert_eq!(r.materialized.arrays, 4);
    assert_eq!(r.materialized.logical_bytes, 3 * 4096 + 1);
    assert_eq!(r.entry.arrays, 2);
    assert_eq!(r.entry.logical_bytes, 2 * 4096);
    assert_eq!(r.materialized_computations, [false, true, true, true]);
    assert_eq!(r.spaces[&0], r.materialized);
}

/// Bytes per device, by hand: a value tiled over 4 devices holds a quarter of its rows on each, a
/// maximal one is whole on its device only, a replicated or unannotated one whole everywhere.
#[test]
fn bytes_per_device_of_a_sharded_module() {
    let text = "HloModule m, num_partitions=4\n\nENTRY e {\n  \
                a = f32[8,128] parameter(0), sharding={devices=[4,1]<=[4]}\n  \
                b = f32[6] parameter(1), sharding={maximal device=2}\n  \
                c = f32[5] parameter(2), sharding={replicated}\n  \
                t = (f32[8,128], f32[6]) tuple(a, b), sharding={{devices=[4,1]<=[4]}, {maximal device=2}}\n  \
                u = f32[7,128] parameter(3), sharding={devices=[4,1]<=[4]}\n  \
                ROOT d = f32[8,128] negate(a)\n}\n";
    let m = axe_xla::hlo::parse_module(text).unwrap();
    let p = axe_xla::hlo::stats::report(&m, 5)
        .unwrap()
        .per_device
        .unwrap();
    // Everywhere: a's and u's shards (2 and ceil(7/4) = 2 rows of 512 B), c (20 B), d (4096 B); device 2
    // also b (24 B). The tuple only aliases its operands.
    let common = 1024 + 1024 + 20 + 4096;
    assert_eq!(p.devices, 4);
    assert_eq!((p.largest_bytes, p.largest_device), (common + 24, 2));
    assert_eq!(p.smallest_bytes, common);
    assert_eq!((p.sharded_values, p.unannotated_values), (4, 1));
    // A module without shardings has no per-device figures.
    let plain =
        axe_xla::hlo::parse_module("HloModule m\n\nENTRY e {\n  ROOT p = f32[4] parameter(0)\n}\n")
            .unwrap();
    assert!(axe_xla::hlo::stats::report(&plain, 5)
        .unwrap()
        .per_device
        .is_none());
}

/// `axe hlo stats`'s way, the report looking names up in the tables the module's check made
/// (`parse_checked`), gives the report of the module read alone, on one thread and on two: here on
/// modules large enough to be read in pieces, whose large computations' tables are kept (one
/// computation of 20,000 instructions cut into pieces and joined; many computations).
#[test]
fn the_report_of_a_checked_module_is_the_report_of_the_module() {
    use axe_xla::hlo::stats::{parse_checked, report_with};
    use axe_xla::hlo::synth::{synth_module, synth_one_computation};
    for text in [synth_one_computation(20_000, 7), synth_module(20_000, 7)] {
        assert!(
            text.len() > 1 << 20,
            "{} bytes: not read in pieces",
            text.len()
        );
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let alone = report_with(&parse_module(&text).unwrap(), 10, None).unwrap();
                let checked = parse_checked(&text).unwrap();
                assert_eq!(checked.module(), &parse_module(&text).unwrap());
                assert_eq!(
                    checked.report_with(10, None).unwrap(),
                    alone,
                    "{threads} threads"
                );
                assert!(!alone.relayouts.is_empty());
            });
        }
    }
}

/// Arrays with an unbounded dimension (`?`) have no size: the report skips them and counts the ones held
/// in memory — each value once (forwarding results, fusion bodies and callee parameters left out), in
/// the parallel walk of a large module as in one walk.
#[test]
fn unbounded_arrays_are_skipped_and_counted() {
    let text = "HloModule m\n\n\
        %fused (a: f32[?]) -> f32[?] {\n  %a = f32[?]{0} parameter(0)\n  ROOT %n = f32[?]{0} negate(%a)\n}\n\n\
        %callee (c: f32[?]) -> f32[?] {\n  %c = f32[?]{0} parameter(0)\n  ROOT %e = f32[?]{0} exponential(%c)\n}\n\n\
        ENTRY %e (p: f32[?], q: f32[4]) -> (f32[?], f32[?], f32[4]) {\n  %p = f32[?]{0} parameter(0)\n  %q = f32[4]{0} parameter(1)\n  \
        %f = f32[?]{0} fusion(%p), kind=kLoop, calls=%fused\n  %k = f32[?]{0} call(%f), to_apply=%callee\n  \
        %t = (f32[?]{0}, f32[?]{0}) tuple(%f, %k)\n  %g = f32[?]{0} get-tuple-element(%t), index=0\n  \
        ROOT %r = (f32[?]{0}, f32[?]{0}, f32[4]{0}) tuple(%g, %k, %q)\n}\n";
    let r = report(&parse_module(text).unwrap(), 5).unwrap();
    // p, f, and the callee's root e; not the fusion body, the callee parameter, k, t, g or r.
    assert_eq!(r.unbounded_skipped, 3);
    assert_eq!(r.materialized.arrays, 1);
    assert_eq!(r.materialized.logical_bytes, 16);
    let plain = module("f32[4]{0}", 2);
    let none = report(&parse_module(&plain).unwrap(), 5).unwrap();
    assert_eq!(none.unbounded_skipped, 0);
    // A large module (walked in parallel on two threads or more): the same count.
    let big = module("f32[?,8]{1,0}", 20_000);
    let r = report(&parse_module(&big).unwrap(), 5).unwrap();
    assert_eq!((r.unbounded_skipped, r.materialized.arrays), (20_000, 0));
}

/// A result without `sharding=` made by a transpose takes its operand's sharding with the tile grid
/// permuted (JAX's `x.T`, `hlo/real/s5.before.hlo` of the review: XLA's `memory_analysis()` gives 60
/// output bytes a device).
#[test]
fn an_inferred_output_follows_a_transpose() {
    let text = "HloModule jit__lambda\n\nENTRY main.1 {\n  \
                x.1 = bf16[12,20]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}\n  \
                ROOT transpose.1 = bf16[20,12]{0,1} transpose(x.1), dimensions={1,0}\n}\n";
    let m = axe_xla::hlo::parse_module(text).unwrap();
    let p = axe_xla::hlo::stats::report(&m, 5)
        .unwrap()
        .per_device
        .unwrap();
    assert_eq!((p.argument_bytes, p.output_bytes), (60, 60));
    assert_eq!(
        p.output_sharding,
        axe_xla::hlo::per_device::OutputSharding::Inferred
    );
    assert_eq!(p.output_whole_bytes, 480);
}

/// `PerDevice::figures`: every field once, by the names `--json` and Python give it, in order, each
/// value its field's.
#[test]
fn per_device_figures_are_its_fields_by_name() {
    use axe_xla::hlo::partitioned::ShapeReading;
    use axe_xla::hlo::per_device::{Figure, OutputSharding, PerDevice};
    let p = PerDevice {
        devices: 8,
        largest_bytes: 3,
        largest_device: 5,
        smallest_bytes: 2,
        sharded_values: 7,
        unannotated_values: 11,
        reading: ShapeReading::PerDevice,
        argument_bytes: 13,
        output_bytes: 17,
        output_sharding: OutputSharding::Inferred,
        output_whole_bytes: 19,
    };
    let n = Figure::Number;
    assert_eq!(
        p.figures(),
        [
            ("shapes", Figure::Name("per-device")),
            ("devices", n(8)),
            ("argument_bytes", n(13)),
            ("output_bytes", n(17)),
            ("largest_bytes", n(3)),
            ("largest_device", n(5)),
            ("smallest_bytes", n(2)),
            ("sharded_values", n(7)),
            ("unannotated_values", n(11)),
            ("output_sharding", Figure::Name("inferred")),
            ("output_whole_bytes", n(19)),
        ]
    );
    let huge = PerDevice {
        devices: usize::MAX,
        ..PerDevice::default()
    };
    assert_eq!(huge.figures()[1], ("devices", n(i64::MAX)));
}
