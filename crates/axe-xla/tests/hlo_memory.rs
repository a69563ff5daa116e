//! Per-device bytes of JAX programs on 8 CPU devices, against XLA's own buffer assignment.
//!
//! `tests/hlo_memory/` holds modules written by `scripts/hlo-memory-vs-jax --keep DIR`: each program
//! before optimization (`NAME.before.hlo`, global shapes) and after (`NAME.after.hlo`, shapes already
//! cut by the SPMD partitioner), and `xla_memory_analysis.txt`, what `compiled.memory_analysis()` said
//! each device's arguments and outputs take.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::PathBuf;

use axe_xla::hlo::parse_module;
use axe_xla::hlo::partitioned::ShapeReading;
use axe_xla::hlo::stats::{report, report_with};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/hlo_memory")
}

/// (name, argument bytes, output bytes) as XLA counted them.
fn expected() -> Vec<(String, i64, i64)> {
    let text = std::fs::read_to_string(dir().join("xla_memory_analysis.txt")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn per_device_bytes_equal_xla_memory_analysis() {
    let rows = expected();
    assert!(rows.len() >= 8);
    for (name, args, outs) in rows {
        for (stage, reading) in [
            ("before", ShapeReading::Global),
            ("after", ShapeReading::PerDevice),
        ] {
            let text = std::fs::read_to_string(dir().join(format!("{name}.{stage}.hlo"))).unwrap();
            let m = parse_module(&text).unwrap();
            let r = report(&m, 0).unwrap();
            let p = r.per_device.as_ref().unwrap();
            let d = r.shapes.as_ref().unwrap();
            assert_eq!(d.reading, reading, "{name}.{stage}: {}", d.reason);
            assert_eq!(p.reading, reading);
            assert_eq!(
                (p.argument_bytes, p.output_bytes),
                (args, outs),
                "{name}.{stage}"
            );
            assert_eq!(r.per_device_readings.len(), 2);
        }
    }
}

#[test]
fn the_other_reading_is_kept_and_can_be_asked_for() {
    let text = std::fs::read_to_string(dir().join("rows.after.hlo")).unwrap();
    let m = parse_module(&text).unwrap();
    // Read as global, the per-device shapes would be divided a second time: 1/8 of what XLA says.
    let g = report_with(&m, 0, Some(ShapeReading::Global)).unwrap();
    let p = g.per_device.unwrap();
    assert_eq!(g.shapes.unwrap().reason, "given");
    assert_eq!(p.argument_bytes, 128);
    assert_eq!(p.reading, ShapeReading::Global);
    let auto = report(&m, 0).unwrap();
    let global = &auto.per_device_readings[0];
    assert_eq!(global.reading, ShapeReading::Global);
    assert_eq!(global.argument_bytes, 128);
    assert_eq!(auto.per_device_readings[1].argument_bytes, 1024);
}
