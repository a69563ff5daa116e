#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::single_range_in_vec_init,
    missing_docs
)]
//! The parser and every operator on arbitrary input: errors, never panics; overflow is an error.

mod common;

use axe_layout::Layout;
use axe_testkit::mutate;
use proptest::prelude::*;

const SEEDS: &[&str] = &[
    "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp",
    "T.TileLayout(T.S[(8, 2):(4 @ Axis.laneid, 1)] + 5 @ Axis.warpid)",
    "S[(3,5)] + (2@a + -3)",
    "S[4096:1]",
    "S[] + R[(2,2):(1@w,-4@w)]",
];

fn exercise(l: &Layout) {
    let _ = l.canonicalize();
    let _ = l.satisfies_gap_condition();
    let _ = l.spans();
    let _ = l.equivalent(l);
    let size = l.size();
    for x in [0, 1, size / 2, size.saturating_sub(1), size] {
        let _ = l.apply(x);
        let _ = l.base_at(x);
    }
    let _ = l.group(&[size]);
    let _ = l.group(&[2, size / 2]);
    let _ = l.slice(&[size], &[size / 3..size / 2 + 1]);
    let _ = l.tile(l, &[size], &[size]);
    let _ = l.tile_of(l, &[size], &[size]);
    let _ = l.tile_of_outer(l, &[size], &[size]);
    let _ = l.direct_sum(l, &[size], &[size]);
}

fn check(input: &str) {
    if let Ok(l) = input.parse::<Layout>() {
        let printed = l.to_string();
        assert_eq!(
            printed.parse::<Layout>().ok().as_ref(),
            Some(&l),
            "{input} -> {printed}"
        );
        if l.size() <= 1 << 12 && l.replica_count() <= 1 << 8 {
            exercise(&l);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings(s in "\\PC{0,60}") {
        check(&s);
    }

    #[test]
    fn notation_alphabet(s in "[SRT.\\[\\]():,@+\\- 0-9amwlanexis_]{0,50}") {
        check(&s);
    }

    #[test]
    fn mutated_layouts(k in 0..SEEDS.len(), ops in proptest::collection::vec((any::<u8>(), any::<usize>(), prop::sample::select(vec!['(', ')', '[', ']', ':', ',', '@', '+', '-', '0', '9', ' ', 'S', 'R', 'x', '.', 'é'])), 1..6)) {
        check(&mutate(SEEDS[k], &ops));
    }

    /// Huge extents, strides and offsets: every operator answers (usually with an overflow error).
    #[test]
    fn huge_values(
        e in proptest::collection::vec(prop_oneof![Just(1u64), Just(2), Just(3), Just(1 << 31), Just(1 << 32), Just(u64::MAX / 2)], 0..4),
        s in proptest::collection::vec(prop_oneof![Just(i64::MAX), Just(i64::MIN), Just(1i64 << 62), Just(-1), Just(0), Just(7)], 4),
        r in prop_oneof![Just(""), Just(" + R[2:-9223372036854775808@w]"), Just(" + R[(3,3):(4611686018427387904,1)]")],
        o in prop_oneof![Just(""), Just(" + 9223372036854775807"), Just(" + -9223372036854775808@w")],
    ) {
        let iters: Vec<String> = e.iter().zip(&s).map(|(e, s)| format!("{e}:{s}")).collect();
        let text = format!("S[{}]{r}{o}", if iters.is_empty() { String::new() } else { format!("({}):({})", e.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","), s[..e.len()].iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")) });
        if let Ok(l) = text.parse::<Layout>() {
            let size = l.size();
            let _ = l.canonicalize();
            let _ = l.spans();
            let _ = l.satisfies_gap_condition();
            for x in [0, 1, size / 2, size.saturating_sub(1)] {
                let _ = l.base_at(x);
            }
            let _ = l.group(&[size]);
            let _ = l.tile(&l, &[size], &[size]);
            let _ = l.slice(&[size], &[0..1]);
            let _ = l.equivalent(&l);
        }
    }
}

#[test]
fn overflow_is_an_error() {
    let too_big: Result<Layout, _> = "S[(4294967296,4294967296):(1,1)]".parse();
    assert!(too_big.unwrap_err().to_string().contains("overflow"));
    let l: Layout = "S[(2,2):(9223372036854775807,9223372036854775807)]"
        .parse()
        .unwrap();
    assert!(l.apply(3).unwrap_err().to_string().contains("overflow"));
    assert!(l.spans().is_ok());
    let (t, _) = (l.tile(&l, &[4], &[4]).map(|_| ()).unwrap_err(), ());
    assert!(t.to_string().contains("overflow"), "{t}");
    let r: Layout = "S[2:1] + R[2:-9223372036854775808@w]".parse().unwrap();
    assert!(r
        .canonicalize()
        .unwrap_err()
        .to_string()
        .contains("overflow"));
}

#[test]
fn deep_nesting_and_huge_lines_are_short_errors() {
    for text in [
        format!("S[{}4{}:1]", "(".repeat(1_000_000), ")".repeat(1_000_000)),
        format!("S[4:1] + R[{}2:1@w]", "(".repeat(1_000_000)),
        format!("S[4:1] {}", "x".repeat(10_000_000)),
        format!("{}S[4:1]", "é".repeat(1_000_000)),
    ] {
        let err = text.parse::<Layout>().unwrap_err().to_string();
        assert!(err.contains("at offset"), "{}", &err[..200.min(err.len())]);
        assert!(err.len() < 400, "a window, not the input: {}", err.len());
    }
}

#[test]
fn parenthesised_offsets_nest_to_a_limit() {
    let ok: Layout = format!("S[4:1] + {}5@w{}", "(".repeat(64), ")".repeat(64))
        .parse()
        .unwrap();
    assert_eq!(ok.to_string(), "S[4:1] + 5@w");
    for depth in [65, 1_000_000] {
        let err = format!("S[4:1] + {}5@w{}", "(".repeat(depth), ")".repeat(depth))
            .parse::<Layout>()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("at most 64") && err.contains("offset 73"),
            "{}",
            &err[..200.min(err.len())]
        );
    }
}

/// Numbers at and past the edges of the 64-bit types, anywhere a number goes.
fn edge_number() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "0",
        "1",
        "-1",
        "4294967296",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999",
        "340282366920938463463374607431768211456",
    ])
    .prop_map(str::to_string)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    /// Edge numbers as extents, strides and offsets, inside parentheses nested at any depth: a layout or
    /// an error naming an offset, never a wrap or a panic.
    #[test]
    fn edge_numbers_and_nesting(e in edge_number(), s in edge_number(), o in edge_number(),
                                open in 0usize..80, unbalanced in 0usize..3, k in 0usize..4) {
        let close = (open + unbalanced).saturating_sub(1);
        let offset = format!("{}{o}@w{}", "(".repeat(open), ")".repeat(close));
        let text = match k {
            0 => format!("S[{e}:{s}] + {offset}"),
            1 => format!("S[({e},2):({s},1@w)] + R[{e}:{s}@r]"),
            2 => format!("S[({e},{e})] + {offset} + {o}@w"),
            _ => format!("T.TileLayout(T.S[({e}, 2):({s} @ Axis.laneid, 1)] + {offset})"),
        };
        match text.parse::<Layout>() {
            Ok(l) => {
                let printed = l.to_string();
                prop_assert_eq!(printed.parse::<Layout>().ok(), Some(l));
            }
            Err(err) => {
                let err = err.to_string();
                prop_assert!(err.contains(" at offset "), "{}", err);
            }
        }
    }
}

#[test]
fn offsets_that_overflow_name_where() {
    let err = "S[4:1] + 9223372036854775807@w + 1@w"
        .parse::<Layout>()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("overflow") && err.contains("at offset 33"),
        "{err}"
    );
    let err = "S[4:1] + (9223372036854775807@w + 1@w)"
        .parse::<Layout>()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("overflow") && err.contains("at offset 34"),
        "{err}"
    );
}
