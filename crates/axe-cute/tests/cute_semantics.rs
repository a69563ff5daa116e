//! CuTe's own semantics where they go past an exact tiling: complement by CuTe's definition (and the
//! products and divides built on it), generalised left inverses, evaluation past the size, and trailing
//! extent-1 modes in composition. Each example is checked against its law by enumeration as well.

mod common;

use axe_cute::{
    blocked_product, complement, composition, is_true_left_inverse, left_inverse,
    left_inverse_strict, logical_divide, logical_product, raked_product, CuteError, Layout, Tiler,
};

fn l(s: &str) -> Layout {
    s.parse().expect("layout")
}

fn values(x: &Layout) -> Vec<i64> {
    (0..x.size()).map(|i| x.eval(i).expect("eval")).collect()
}

#[test]
fn complement_follows_cutes_definition_where_no_exact_tiling_exists() {
    // Default bound: the cosize.
    for (a, want) in [("(4,6):(1,6)", "1:0"), ("(4,10):(1,10)", "2:4")] {
        let a = l(a);
        let r = complement(&a, a.cosize().expect("cosize")).expect("complement");
        assert_eq!(r.to_string(), want, "{a}");
        assert!(!axe_cute::complement_is_exact(&a));
    }
    // Larger bounds run the rest mode on from the span of A's leaves.
    assert_eq!(
        complement(&l("(4,6):(1,6)"), 48).expect("c").to_string(),
        "2:36"
    );
    assert_eq!(
        complement(&l("(3,2):(1,7)"), 30).expect("c").to_string(),
        "(2,3):(3,14)"
    );
    // Nothing of R but R(0) meets A's image; R increases.
    let a = l("(3,2):(1,7)");
    let av = values(&a);
    let r = complement(&a, 30).expect("c");
    let rv = values(&r);
    assert!(rv.windows(2).all(|w| w[0] < w[1]));
    assert!(rv[1..].iter().all(|v| !av.contains(v)));
}

#[test]
fn complement_refuses_and_names_the_broken_postcondition() {
    // A leaf starting inside the span of the smaller ones: CuTe's non-injective assertion.
    let e = complement(&l("(2,2):(2,3)"), 8).expect_err("overlap");
    assert!(matches!(e, CuteError::Postcondition { .. }), "{e}");
    assert!(e.to_string().contains("non-injective"), "{e}");
    assert!(e.to_string().contains("every extent is at least 1"), "{e}");
    // CuTe's answer 4:6 has size 4 < 24 / 4. Another layout meets every postcondition (6:6), so the
    // error says that CuTe's construction breaks it, not that no layout exists.
    let a = l("(2,2):(1,3)");
    let e = complement(&a, 24).expect_err("size");
    assert!(matches!(e, CuteError::Postcondition { .. }), "{e}");
    assert!(!e.to_string().contains("no layout"), "{e}");
    assert!(
        e.to_string().contains("size(R) ≥ ⌊M / size(filter(A))⌋"),
        "{e}"
    );
    let (av, other) = (values(&a), values(&l("6:6")));
    assert!(other.windows(2).all(|w| w[0] < w[1]));
    assert!(other[1..].iter().all(|v| !av.contains(v)));
    assert!(other.len() as i64 >= 24 / a.size());
    assert!(a.cosize().expect("cosize") + other[other.len() - 1] >= 24);
    assert!(e.to_string().contains("4:6"), "{e}");
}

#[test]
fn products_and_divides_built_on_a_gapped_complement() {
    // (A, complement(A, 24·2) ∘ 2:1): copies of A at 0 and 36.
    let a = l("(4,6):(1,6)");
    let p = logical_product(&a, &Tiler::Layout(l("2:1"))).expect("product");
    assert_eq!(p.to_string(), "((4,6),2):((1,6),36)");
    let pv = values(&p);
    let mut sorted = pv.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), pv.len(), "the copies do not overlap");
    let b = blocked_product(&a, &l("(2,1):(1,0)")).expect("blocked");
    assert_eq!(b.to_string(), "((4,2),6):((1,36),6)");
    assert_eq!(b.mode(1).expect("m").size(), 6);
    let r = raked_product(&a, &l("(2,1):(1,0)")).expect("raked");
    assert_eq!(r.to_string(), "((2,4),6):((36,1),6)");
    // Dividing by a tiler whose complement has gaps.
    let d = logical_divide(&l("64:1"), &Tiler::Layout(l("(4,6):(1,6)"))).expect("divide");
    assert_eq!(d.to_string(), "((4,6),2):((1,6),36)");
    for i in 0..d.size() {
        assert_eq!(
            d.eval(i).expect("d"),
            l("(4,6,2):(1,6,36)").eval(i).expect("e")
        );
    }
}

#[test]
fn left_inverse_of_a_non_injective_layout_is_cutes_generalised_inverse() {
    // The last three: neither CuTe's answer nor the inverse without stride-0 leaves obeys the law; the
    // bounded search finds one.
    for (text, want) in [
        ("(2,2):(0,1)", "2:2"),
        ("(4,2):(1,0)", "4:1"),
        ("(3,6):(1,1)", "(2,2,2):(1,4,12)"),
        ("(2,4):(2,1)", "(3,2):(2,3)"),
        ("((3,1),(4),3):((1,5),(1),1)", "(2,2,2):(1,4,30)"),
    ] {
        let x = l(text);
        assert!(!is_true_left_inverse(&x).expect("check"));
        let r = left_inverse(&x).expect("generalised");
        assert_eq!(r.to_string(), want);
        for i in 0..x.size() {
            let v = x.eval(i).expect("L");
            assert_eq!(x.eval(r.eval(v).expect("R")).expect("L"), v, "{x} {r}");
        }
        assert!(r.size() >= x.cosize().expect("cosize"));
        assert!(matches!(
            left_inverse_strict(&x),
            Err(CuteError::NoLayout { .. })
        ));
    }
    // A negative stride makes L take a negative value, outside every layout's domain: no R exists,
    // strict or generalised, and the error says why (not an evaluation error from inside the search).
    for text in ["4:-1", "(2,2):(0,-1)", "(3,2):(2,-7)"] {
        let x = l(text);
        assert!((0..x.size()).any(|i| x.eval(i).expect("L") < 0), "{text}");
        for e in [left_inverse(&x), left_inverse_strict(&x)].map(Result::unwrap_err) {
            assert!(
                matches!(
                    e,
                    CuteError::NoLayout {
                        op: "left_inverse",
                        ..
                    }
                ) && e.to_string().contains("negative stride"),
                "{text}: {e}"
            );
        }
    }
    // None found: the error says so once, without claiming that none exists; exhaustively, none of the
    // searched sizes has one.
    let x = l("((2,2,3)):((5,2,7))");
    let e = left_inverse(&x).expect_err("none found");
    assert!(matches!(e, CuteError::Unsupported { .. }), "{e}");
    let msg = e.to_string();
    assert!(!msg.contains("no layout satisfies"), "{msg}");
    assert_eq!(msg.matches("not injective").count(), 1, "{msg}");
    assert!(
        msg.contains("none among the layouts of size 22..44"),
        "{msg}"
    );
    assert!(!common::some_generalised_inverse_within(
        &common::brute(&x),
        x.cosize().expect("cosize")
    ));
    let y = l("(3,6):(1,1)"); // the exhaustive search does find one where one exists
    assert!(common::some_generalised_inverse_within(
        &common::brute(&y),
        y.cosize().expect("cosize")
    ));
    // An injective layout gets its true inverse either way.
    let x = l("(4,(2,3)):(2,(1,8))");
    assert!(is_true_left_inverse(&x).expect("check"));
    assert_eq!(
        left_inverse(&x).expect("li"),
        left_inverse_strict(&x).expect("li")
    );
}

#[test]
fn evaluation_past_the_size_runs_the_last_mode_on() {
    let x = l("(4,3):(1,10)");
    // 12 = (0, 3), 13 = (1, 3): the last mode's coordinate passes its extent 3.
    assert_eq!(x.eval(12).expect("past"), 30);
    assert_eq!(x.eval(13).expect("past"), 31);
    assert_eq!(l("(4,1):(1,0)").eval(7).expect("past"), 3);
    assert_eq!(l("(4,(2,3)):(1,(4,8))").eval(24).expect("past"), 3 * 8);
    assert_eq!(x.idx2crd(13).expect("crd").to_string(), "(1,3)");
    assert!(x.eval(-1).is_err());
}

#[test]
fn trailing_extent_1_modes_run_on_in_composition() {
    assert_eq!(
        composition(&l("(1):(1)"), &l("(4):(1)"))
            .expect("c")
            .to_string(),
        "(4):(1)"
    );
    let a = l("(4,3,1):(3,1,0)");
    let r = composition(&a, &l("24:1")).expect("c");
    assert_eq!(r.to_string(), "(4,3,2):(3,1,0)");
    for i in 0..24 {
        assert_eq!(r.eval(i).expect("r"), a.eval(i).expect("a"));
    }
}

#[test]
fn filter_drops_stride_0_and_extent_1_leaves() {
    assert_eq!(
        l("(2,(3,4)):(1,(0,2))").filter().expect("f").to_string(),
        "8:1"
    );
    assert_eq!(l("(3,1):(0,5)").filter().expect("f").to_string(), "1:0");
    let by = l("((2,3),(4,5)):((0,1),(3,0))")
        .filter_by(&axe_cute::parse_int_tuple("(1,1)").expect("p"))
        .expect("f");
    assert_eq!(by.to_string(), "(3,4):(1,3)");
}

#[test]
fn algebra_on_a_swizzled_layout_keeps_the_swizzle_outermost() {
    let sw: axe_cute::AnyLayout = "Sw<3,3,3> o 8 o (8,64):(64,1)".parse().expect("sw");
    let b = l("(4,8):(1,8)");
    let c = sw.map_inner(|x| x.compose(&b)).expect("compose");
    for i in 0..c.size() {
        assert_eq!(
            c.eval(i).expect("c"),
            sw.eval(b.eval(i).expect("b")).expect("sw")
        );
    }
    let t = Tiler::Layout(l("4:2"));
    let d = sw.map_inner(|x| logical_divide(x, &t)).expect("divide");
    // (B, B*) itself: the identity divided by B = 4:2.
    let bb = logical_divide(&l("512:1"), &t).expect("(B, B*)");
    for i in 0..d.size() {
        assert_eq!(
            d.eval(i).expect("d"),
            sw.eval(bb.eval(i).expect("bb")).expect("sw")
        );
    }
    let k = sw.map_inner(Layout::coalesce).expect("coalesce");
    for i in 0..k.size() {
        assert_eq!(k.eval(i).expect("k"), sw.eval(i).expect("sw"));
    }
}

mod slicing {
    use axe_cute::{IntTuple, Layout, SliceCoord};
    use proptest::prelude::*;

    use super::common;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// offset + R(j) = L(c with the kept modes' coordinates taken from j), by enumeration.
        #[test]
        fn slice_law(l in common::layout(4, -3..=9), picks in proptest::collection::vec(any::<u16>(), 3)) {
            let modes = l.modes().expect("modes");
            if modes.len() < 2 { return Ok(()); }
            let sizes: Vec<i64> = modes.iter().map(Layout::size).collect();
            // Mode k kept when its pick is even (at least one kept), else fixed at pick % size.
            let mut keep: Vec<bool> = (0..sizes.len()).map(|k| picks[k % 3] % 2 == 0).collect();
            if !keep.iter().any(|&b| b) { keep[0] = true; }
            let coord = SliceCoord::Modes((0..sizes.len()).map(|k| if keep[k] {
                SliceCoord::All
            } else {
                SliceCoord::At(IntTuple::Int(i64::from(picks[k % 3]) % sizes[k]))
            }).collect());
            let (r, off) = l.slice_and_offset(&coord).expect("slice");
            let kept: Vec<usize> = (0..sizes.len()).filter(|&k| keep[k]).collect();
            prop_assert_eq!(r.size(), kept.iter().map(|&k| sizes[k]).product::<i64>());
            for j in 0..r.size() {
                let mut rest = j;
                let mut c = Vec::new();
                for k in 0..sizes.len() {
                    if keep[k] {
                        c.push(IntTuple::Int(rest % sizes[k]));
                        rest /= sizes[k];
                    } else {
                        c.push(IntTuple::Int(i64::from(picks[k % 3]) % sizes[k]));
                    }
                }
                let want = l.eval_coord(&IntTuple::Tuple(c)).expect("L");
                prop_assert_eq!(off + r.eval(j).expect("R"), want, "{} {} {}", l, coord, r);
            }
        }
    }

    #[test]
    fn examples() {
        let l: Layout = "(4,(2,3)):(1,(4,8))".parse().expect("l");
        let s = |t: &str| t.parse::<SliceCoord>().expect("coord");
        assert_eq!(l.slice(&s("(_,0)")).expect("s").to_string(), "(4):(1)");
        assert_eq!(
            l.slice_and_offset(&s("(2,_)")).expect("s").0.to_string(),
            "((2,3)):((4,8))"
        );
        assert_eq!(l.slice_and_offset(&s("(2,_)")).expect("s").1, 2);
        assert!(l.slice(&s("(1,2)")).is_err(), "nothing kept");
        assert!(l.slice(&s("(_,_,_)")).is_err(), "rank mismatch");
        assert!("(_,".parse::<SliceCoord>().is_err());
    }
}
