//! The parsers on hostile input: random text, deep nesting and huge numbers give errors with offsets,
//! never a panic or a stack overflow; printed forms parse back.

use axe_cute::{parse_int_tuple, AnyLayout, ComposedLayout, CuteError, Layout, Swizzle, Tiler};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(s in "[()_,:<>Sw o0-9 -]{0,40}") {
        let _ = s.parse::<Layout>();
        let _ = s.parse::<Tiler>();
        let _ = s.parse::<AnyLayout>();
        let _ = s.parse::<ComposedLayout>();
        let _ = s.parse::<Swizzle>();
        if let Ok(l) = s.parse::<Layout>() {
            prop_assert_eq!(l.to_string().parse::<Layout>().expect("reparse"), l);
        }
        if let Ok(t) = s.parse::<Tiler>() {
            prop_assert_eq!(t.to_string().parse::<Tiler>().expect("reparse"), t);
        }
    }

    #[test]
    fn any_unicode_never_panics(s in "\\PC{0,30}") {
        let _ = s.parse::<Layout>();
        let _ = s.parse::<AnyLayout>();
        if let Err(CuteError::Parse(e)) = s.parse::<Layout>() {
            prop_assert!(e.offset <= s.len());
            let _ = e.to_string();
        }
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    for depth in [65usize, 1000, 200_000] {
        let s = format!(
            "{}1{}:{}1{}",
            "(".repeat(depth),
            ")".repeat(depth),
            "(".repeat(depth),
            ")".repeat(depth)
        );
        let e = s.parse::<Layout>().expect_err("too deep");
        assert!(e.to_string().contains("nesting deeper than 64"), "{e}");
        let t = format!("{}1", "<".repeat(depth));
        assert!(t.parse::<Tiler>().is_err());
    }
    let ok = format!(
        "{}4{}:{}1{}",
        "(".repeat(64),
        ")".repeat(64),
        "(".repeat(64),
        ")".repeat(64)
    );
    assert_eq!(ok.parse::<Layout>().expect("64 deep").depth(), 64);
}

#[test]
fn huge_numbers_and_overflow_are_errors() {
    let e = "99999999999999999999999:1"
        .parse::<Layout>()
        .expect_err("huge");
    assert!(
        e.to_string().contains("64 bits") && e.to_string().contains("offset 0"),
        "{e}"
    );
    // The size overflows i64.
    let e = "(4294967296,4294967296):(1,1)"
        .parse::<Layout>()
        .expect_err("size");
    assert!(matches!(e, CuteError::Parse(_)), "{e}");
    assert!(
        e.to_string().contains(
            "integer overflow while computing the size of the shape (4294967296,4294967296)"
        ),
        "{e}"
    );
    let e = "(4294967296,4294967296)"
        .parse::<Layout>()
        .expect_err("strides");
    assert!(
        e.to_string()
            .contains("integer overflow while computing the compact strides"),
        "{e}"
    );
    // Values overflow while evaluating: an error, not a wrap, saying what was computed.
    let l: Layout = "(2,2):(9223372036854775807,1)".parse().expect("fits");
    assert!(matches!(l.eval(1), Ok(9223372036854775807)));
    let l: Layout = "(3,2):(9223372036854775807,1)".parse().expect("fits");
    let e = l.eval(2).expect_err("overflow");
    assert!(matches!(e, CuteError::Overflow(_)), "{e}");
    assert_eq!(
        e.to_string(),
        "integer overflow while evaluating (3,2):(9223372036854775807,1) at index 2: multiplying 2 by 9223372036854775807"
    );
    let e = l.cosize().expect_err("cosize");
    assert!(
        e.to_string()
            .contains("computing the cosize of (3,2):(9223372036854775807,1)"),
        "{e}"
    );
    // A non-printable character is escaped where the message names it.
    let e = "(4,2)\0:(1,4)".parse::<Layout>().expect_err("nul");
    assert!(e.to_string().contains(r"found '\0' at offset 5"), "{e}");
    let e = "(4,\u{7}2)".parse::<Layout>().expect_err("bell");
    assert!(e.to_string().contains(r"found '\u{7}'"), "{e}");
    // A layout whose values overflow is still a layout: composing keeps it, evaluating it errs.
    let r = l.compose(&"3:1".parse().expect("b")).expect("compose");
    assert_eq!(r.to_string(), "3:9223372036854775807");
    assert!(matches!(r.eval(2), Err(CuteError::Overflow(_))));
}

#[test]
fn errors_point_at_the_offending_character() {
    let cases = [
        ("(4,2):(1,2", 10, "expected ','"),
        ("(4,2):(1,(2,3))", 0, "not congruent"),
        ("(4,0):(1,2)", 0, "extent 0"),
        ("(4,2):(1,2) x", 12, "end of input"),
        ("Sw<3,3,2> o 8:1", 0, "at least B"),
        ("<4:1,2:1", 8, "expected '>'"),
    ];
    for (s, at, what) in cases {
        let e = if s.starts_with('<') {
            s.parse::<Tiler>().expect_err("error")
        } else {
            s.parse::<AnyLayout>().expect_err("error")
        };
        match &e {
            CuteError::Parse(p) => {
                assert_eq!(p.offset, at, "{s}: {e}");
                assert!(p.message.contains(what), "{s}: {e}");
            }
            other => panic!("{s}: {other}"),
        }
    }
    assert_eq!(
        parse_int_tuple("(_1,(_-2,3))").expect("static").to_string(),
        "(1,(-2,3))"
    );
    assert_eq!(
        parse_int_tuple("(1,(-2,3))").expect("t").to_static_string(),
        "(_1,(_-2,_3))"
    );
}

#[test]
fn deep_trees_built_in_code_are_refused_without_recursion() {
    let mut t = axe_cute::IntTuple::Int(2);
    for _ in 0..5_000 {
        t = axe_cute::IntTuple::Tuple(vec![t]);
    }
    assert_eq!(t.depth(), 5_000);
    let e = Layout::new(t.clone(), t.clone()).expect_err("too deep");
    assert!(e.to_string().contains("nesting deeper"), "{e}");
}

#[test]
fn an_empty_shape_is_no_tiler() {
    assert!("()".parse::<Tiler>().is_err());
    assert!("<>".parse::<Tiler>().is_err());
    assert!("()".parse::<Layout>().is_err());
}
