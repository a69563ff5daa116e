#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Hostile text into the shape, sharding and module readers: deep nesting, huge numbers, huge lines and
//! bogus device lists give positioned errors, never a stack overflow, a panic or unbounded work.

use axe_xla::hlo::parse_module;
use axe_xla::hlo::sharding::{parse_sharding, MAX_DEVICES};
use axe_xla::{parse_shape, MAX_NESTING};
use proptest::prelude::*;

fn nested(depth: usize, leaf: &str) -> String {
    format!("{}{leaf}{}", "(".repeat(depth), ")".repeat(depth))
}

#[test]
fn shapes_nest_to_a_limit_with_a_positioned_error() {
    let ok = parse_shape(&nested(MAX_NESTING, "f32[2]")).unwrap();
    assert_eq!(ok.to_string(), nested(MAX_NESTING, "f32[2]{0}"));
    for depth in [MAX_NESTING + 1, 10_000, 1_000_000] {
        let err = parse_shape(&nested(depth, "f32[2]"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("at most {MAX_NESTING}"))
                && err.contains(&format!("offset {MAX_NESTING}")),
            "{}",
            &err[..200.min(err.len())]
        );
        assert!(err.len() < 400, "the error shows a window, not the input");
    }
    // Buffers count as nesting too.
    let err = parse_shape(&format!(
        "{}f32[2]{}",
        "b(".repeat(100_000),
        ")".repeat(100_000)
    ))
    .unwrap_err()
    .to_string();
    assert!(err.contains("at offset"), "{}", &err[..200.min(err.len())]);
}

fn physical(depth: usize) -> String {
    format!(
        "{}f32[1]{}",
        "f32[1]{0:P(".repeat(depth),
        ")}".repeat(depth)
    )
}

#[test]
fn physical_shapes_count_as_nesting() {
    let ok = parse_shape(&physical(MAX_NESTING)).unwrap();
    assert_eq!(parse_shape(&ok.to_string()).unwrap(), ok);
    for depth in [MAX_NESTING + 1, 100_000] {
        let err = parse_shape(&physical(depth)).unwrap_err().to_string();
        // The error points at the P of the first level past the limit.
        let at = MAX_NESTING * "f32[1]{0:P(".len() + "f32[1]{0:".len();
        assert!(
            err.contains(&format!("at most {MAX_NESTING}"))
                && err.contains(&format!("offset {at}")),
            "{}",
            &err[..200.min(err.len())]
        );
        assert!(err.len() < 400, "the error shows a window, not the input");
    }
    // Mixed with tuples and buffers, the limit holds for the sum.
    let mixed = format!("{}{}", "(b(".repeat(50), physical(100));
    assert!(parse_shape(&mixed).is_err());
}

#[test]
fn modules_with_deep_nesting_are_read_or_refused() {
    let deep = 100_000;
    let shape = format!(
        "HloModule m\n\nENTRY %e {{\n  ROOT %p = {} parameter(0)\n}}\n",
        nested(deep, "f32[2]")
    );
    // Every instruction's shape is parsed as the module is read: the nesting limit refuses it there.
    let err = parse_module(&shape).unwrap_err().to_string();
    assert!(
        err.contains("at most") && err.starts_with("4:"),
        "{}",
        &err[..200.min(err.len())]
    );
    assert!(err.len() < 400, "the error shows a window, not the input");
    // An attribute whose value is only read as text may nest as deep as it likes; metadata is read as
    // XLA reads it, and refused.
    let braces = |name: &str| {
        format!(
            "HloModule m\n\nENTRY %e {{\n  ROOT %p = f32[2]{{0}} parameter(0), {name}={}{}\n}}\n",
            "{".repeat(deep),
            "}".repeat(deep)
        )
    };
    let text = braces("foo");
    let m = parse_module(&text).unwrap();
    assert!(m.to_string().contains(&"{".repeat(deep)));
    let err = parse_module(&braces("metadata")).unwrap_err().to_string();
    assert!(
        err.len() < 400 && err.contains("attribute name"),
        "{}",
        &err[..400.min(err.len())]
    );
    let unclosed = format!(
        "HloModule m\n\nENTRY %e {{\n  ROOT %p = f32[2]{{0}} parameter(0), foo={}\n}}\n",
        "(".repeat(deep)
    );
    let err = parse_module(&unclosed).unwrap_err().to_string();
    assert!(err.len() < 400, "{}", &err[..400.min(err.len())]);
}

#[test]
fn errors_in_huge_lines_show_a_window() {
    let line = format!("f32[2]{{0}} {}", "x".repeat(10_000_000));
    let err = parse_shape(&line).unwrap_err().to_string();
    assert!(err.len() < 400, "{}", &err[..400]);
    let module = format!(
        "HloModule m\n\nENTRY %e {{\n  ROOT %p = f32[2]{{0}} parameter(0), metadata={{op_name=\"{}\"}}, x=(\n}}\n",
        "y".repeat(10_000_000)
    );
    let err = parse_module(&module).unwrap_err().to_string();
    assert!(err.len() < 400, "{}", &err[..400]);
    let sharding = format!("{{replicated}} {}", "z".repeat(1_000_000));
    let err = parse_sharding(&sharding).unwrap_err().to_string();
    assert!(err.len() < 400, "{}", &err[..400]);
}

#[test]
fn tile_assignments_name_distinct_devices_within_a_bound() {
    let dup = parse_sharding("{devices=[4]0,0,0,0}").unwrap();
    let err = dup.shards(&[8]).unwrap_err().to_string();
    assert!(err.contains("device 0 appears more than once"), "{err}");
    let neg = parse_sharding("{devices=[2]0,-1}").unwrap();
    assert!(neg.shards(&[8]).is_err());
    let huge = parse_sharding("{devices=[1000000000]<=[1000000000]}").unwrap();
    let err = huge.shards(&[8]).unwrap_err().to_string();
    assert!(err.contains(&MAX_DEVICES.to_string()), "{err}");
    let bad = parse_sharding("{devices=[4]<=[-2,-2]T(0,1)}").unwrap();
    assert!(bad.shards(&[8]).is_err());
    // Numbers past i64 are named, at their offset.
    let err = parse_sharding("{devices=[2]0,99999999999999999999}")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("integer 99999999999999999999 is past XLA's signed 64-bit range at offset 14"),
        "{err}"
    );
    // An iota of more than one dim without its transpose is refused at the missing `T(`, as XLA
    // refuses it ("expects 'T(' to start sharding devices iota_transpose_perm").
    for (text, at) in [
        ("{devices=[2,3]<=[2,3]}", 21),
        ("{devices=[2,2,2]<=[2,4] last_tile_dim_replicate}", 24),
    ] {
        let err = parse_sharding(text).unwrap_err().to_string();
        assert!(
            err.contains("expected T(...) after an iota of more than one dim"),
            "{err}"
        );
        assert!(err.contains(&format!("at offset {at}\n")), "{text}: {err}");
    }
    assert!(parse_sharding("{devices=[2,3]<=[2,3]T(0,1)}").is_ok());
    assert!(parse_sharding("{devices=[6]<=[6]}").is_ok());
    // Sizes near i64::MAX cut without overflow.
    let two = parse_sharding("{devices=[2,1]0,1}").unwrap();
    let s = two.shards(&[i64::MAX, 3]).unwrap();
    assert_eq!(s[1].region[0].end, i64::MAX);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    /// Any nesting of tuples and buffers, balanced or not, at any depth: a shape or an error.
    #[test]
    fn nesting_never_crashes(open in prop::collection::vec(prop::sample::select(vec!["(", "b(", "(f32[2], "]), 0..400),
                             close in 0usize..500, leaf in prop::sample::select(vec!["f32[2]", "", "s8[3]{0}", ")"])) {
        let text = format!("{}{leaf}{}", open.concat(), ")".repeat(close));
        if let Ok(s) = parse_shape(&text) {
            prop_assert_eq!(parse_shape(&s.to_string()).unwrap(), s);
        }
    }

    /// Huge and negative numbers anywhere a number goes: an error or a value, never a wrap or a panic.
    #[test]
    fn huge_numbers(n in prop::sample::select(vec!["0", "-1", "9223372036854775807", "9223372036854775808",
                                                 "18446744073709551616", "99999999999999999999999"]),
                    k in 0usize..6) {
        let text = match k {
            0 => format!("f32[{n},2]"),
            1 => format!("f32[2,2]{{1,0:T({n},2)}}"),
            2 => format!("f32[<={n}]"),
            3 => format!("f32[4]{{0:E({n})}}"),
            4 => format!("f32[4]{{0:S({n})}}"),
            _ => format!("f32[4]{{0:T(2)(2,{n})}}"),
        };
        if let Ok(s) = parse_shape(&text) {
            let _ = axe_xla::validate(&s);
            for (_, a) in s.arrays() {
                let _ = axe_xla::sizes(a);
            }
        }
        if let Ok(sh) = parse_sharding(&format!("{{devices=[2,{n}]<=[{n}]}}")) {
            let _ = sh.shards(&[8, 8]);
        }
    }
}

/// Large flat inputs parse: the readers' work is linear in the text (a quadratic reader would take hours
/// here, not a fraction of a second).
#[test]
fn large_flat_inputs_parse() {
    let n = 100_000;
    let tuple = format!("({})", vec!["f32[2]{0}"; n].join(", "));
    let s = parse_shape(&tuple).unwrap();
    assert_eq!(parse_shape(&s.to_string()).unwrap(), s);
    let dims = format!("f32[{}]", vec!["1"; n].join(","));
    let wide = parse_shape(&dims).unwrap();
    assert_eq!(parse_shape(&wide.to_string()).unwrap(), wide);
    let mut module = String::from("HloModule m\n\nENTRY %e {\n  %p0 = f32[2]{0} parameter(0)\n");
    for i in 1..n {
        module.push_str(&format!(
            "  %p{i} = f32[2]{{0}} add(f32[2]{{0}} %p{}, %p0), metadata={{op_name=\"a\"}}\n",
            i - 1
        ));
    }
    module.push_str("  ROOT %r = f32[2]{0} copy(%p0)\n}\n");
    let m = parse_module(&module).unwrap();
    assert_eq!(m.instruction_count(), n + 1);
    let printed = m.to_string();
    assert_eq!(parse_module(&printed).unwrap().to_string(), printed);
    let devices: Vec<String> = (0..n).map(|d| d.to_string()).collect();
    let sharding = format!("{{devices=[{n}]{}}}", devices.join(","));
    let sh = parse_sharding(&sharding).unwrap();
    assert_eq!(sh.shards(&[n as i64]).unwrap().len(), n);
}

#[test]
fn shardings_xla_refuses_are_refused_at_its_offset() {
    // (text, offset of the error, as XLA's parser reports it)
    for (text, at, why) in [
        ("{devices=[1]0}", 1, "more than one device"),
        (
            "{devices=[1,1]3 last_tile_dim_replicate}",
            1,
            "more than one device",
        ),
        ("{ devices=[1]0}", 2, "more than one device"),
        ("{{replicated}, {devices=[1]0}}", 16, "more than one device"),
        ("{devices=[4]<=[4]T(0)}", 17, "more than one dim"),
        ("{devices=[4]<=[4] T(0)}", 18, "more than one dim"),
        ("{devices=[1]<=[1]T()}", 17, "more than one dim"),
        (
            "{devices=[4,2]<=[8]T(0) last_tile_dim_replicate}",
            19,
            "more than one dim",
        ),
    ] {
        match parse_sharding(text) {
            Err(axe_xla::XlaError::Parse(p)) => {
                assert_eq!(p.offset, at, "{text}");
                assert!(p.message.contains(why), "{text}: {}", p.message);
            }
            other => panic!("{text}: {other:?}"),
        }
    }
    // What XLA reads: a one-device iota, a transpose of a two-dim iota.
    for text in [
        "{devices=[1]<=[1]}",
        "{devices=[4]<=[2,2]T(1,0)}",
        "{devices=[2]1,0}",
    ] {
        parse_sharding(text).expect(text);
    }
}

#[test]
fn xlas_other_sharding_kinds_and_shard_groups_read_and_print_back() {
    // Each as jaxlib 0.10.2's HloSharding.from_string reads and prints it (metadata kept here, as
    // module text prints it).
    for text in [
        "{unknown}",
        "{unknown shard_as 0}",
        "{unreduced}",
        "{replicated shard_like 3}",
        "{manual shard_as 1}",
        "{maximal device=1 shard_as 2}",
        "{devices=[2]0,1 shard_as 1}",
        "{devices=[2]0,1 shard_like 2 metadata={op_name=\"a\"}}",
        "{devices=[2,2]<=[4] last_tile_dim_replicate shard_as 1}",
        "{devices=[2,1,2]<=[4] last_tile_dims={unreduced} shard_like 0}",
    ] {
        let s = parse_sharding(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(s.to_string(), text);
    }
    // Metadata before the group reads too; each at most once.
    let s = parse_sharding("{devices=[2]0,1 metadata={op_name=\"a\"} shard_as 1}").unwrap();
    assert_eq!(
        s.to_string(),
        "{devices=[2]0,1 metadata={op_name=\"a\"} shard_as 1}"
    );
    for bad in [
        "{devices=[2]0,1 shard_as 1 shard_like 2}",
        "{replicated metadata={} metadata={}}",
        "{devices=[2]0,1 shard_as x}",
    ] {
        assert!(parse_sharding(bad).is_err(), "{bad}");
    }
    // {unreduced} and {unknown} hold the whole array on every device, as replicated does.
    for t in ["{unreduced}", "{unknown}"] {
        let s = parse_sharding(t).unwrap().shards(&[4]).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(
            (s[0].region[0].start, s[0].region[0].end, s[0].region.len()),
            (0, 4, 1)
        );
    }
}

#[test]
fn a_bad_sharding_in_a_module_is_one_error_at_its_place() {
    let text = "HloModule m\nENTRY e {\n  ROOT p = f32[4]{0} parameter(0), sharding={devices=[2]0,1 bogus}\n}\n";
    let e = parse_module(text).unwrap_err().to_string();
    assert!(e.contains("sharding: expected \"}\""), "{e}");
    assert!(!e.contains('␊') && e.matches('^').count() == 1, "{e}");
    // The caret is under `bogus`, column 61 of line 3.
    assert!(e.contains("3:61"), "{e}");
}
