//! Golden examples: CuTe's documentation (`02_layout_algebra.md`, `0y_swizzle`), the peers' known faults,
//! and the TV example of the docs page. Each is also checked against its law where the law is cheap.

use axe_cute::{
    blocked_product, complement, composition_tiler, flat_divide, logical_divide, logical_product,
    raked_product, tiled_divide, tiled_product, tv_from_axe, tv_to_axe, zipped_divide,
    zipped_product, AnyLayout, ComposedLayout, CuteError, Layout, Swizzle, Tiler,
};

fn l(s: &str) -> Layout {
    s.parse().expect("layout")
}

fn t(s: &str) -> Tiler {
    s.parse().expect("tiler")
}

#[test]
fn coalesce_examples() {
    assert_eq!(
        l("(2,(1,6)):(1,(6,2))").coalesce().expect("ok").to_string(),
        "12:1"
    );
    assert_eq!(l("(2,4):(1,2)").coalesce().expect("ok").to_string(), "8:1");
    assert_eq!(
        l("(2,4):(4,1)").coalesce().expect("ok").to_string(),
        "(2,4):(4,1)"
    );
    assert_eq!(l("(1,1):(3,5)").coalesce().expect("ok").to_string(), "1:0");
    let by = l("(2,(1,6)):(1,(6,2))")
        .coalesce_by(&axe_cute::parse_int_tuple("(1,1)").expect("p"))
        .expect("ok");
    assert_eq!(by.to_string(), "(2,6):(1,2)");
}

#[test]
fn composition_examples() {
    let cases = [
        ("(6,2):(8,2)", "(4,3):(3,1)", "((2,2),3):((24,2),8)"),
        ("20:2", "(5,4):(4,1)", "(5,4):(8,2)"),
        ("(10,2):(16,4)", "(5,4):(1,5)", "(5,(2,2)):(16,(80,4))"),
    ];
    for (a, b, want) in cases {
        let r = l(a).compose(&l(b)).expect("composition");
        assert_eq!(r.to_string(), want, "{a} o {b}");
        for i in 0..r.size() {
            assert_eq!(
                r.eval(i).expect("r"),
                l(a).eval(l(b).eval(i).expect("b")).expect("a")
            );
        }
    }
    let r = composition_tiler(&l("(12,(4,8)):(59,(13,1))"), &t("<3:4,8:2>")).expect("by-mode");
    assert_eq!(r.to_string(), "(3,(2,4)):(236,(26,1))");
}

#[test]
fn composition_where_the_peers_fail() {
    // pycute refuses this one; the answer exists.
    let r = l("(4,4):(0,1)").compose(&l("2:3")).expect("exists");
    assert_eq!(r.to_string(), "2:0");
    // pycute answers a layout of size 8; the values 0,1,2,3,10,11 are no layout.
    let e = l("(4,3):(1,10)").compose(&l("6:1")).expect_err("no layout");
    assert!(matches!(e, CuteError::NoLayout { .. }), "{e}");
    // Mode-wise composition is wrong here (CuTe distributes over B's modes): A(B(c)) is not a sum.
    let e = l("(2,2):(1,10)")
        .compose(&l("(2,2):(1,1)"))
        .expect_err("not separable");
    assert!(e.to_string().contains("not a sum"), "{e}");
}

#[test]
fn complement_examples() {
    let cases = [
        ("4:1", 24, "6:4"),
        ("6:4", 24, "4:1"),
        ("(4,6):(1,4)", 24, "1:0"),
        ("4:2", 24, "(2,3):(1,8)"),
        ("(2,4):(1,6)", 24, "3:2"),
        ("(2,2):(1,6)", 24, "(3,2):(2,12)"),
    ];
    for (a, m, want) in cases {
        assert_eq!(
            complement(&l(a), m).expect("complement").to_string(),
            want,
            "{a}"
        );
    }
    // CuTe C++ divides by zero on this one (not injective): its construction gives an extent 0.
    assert!(matches!(
        complement(&l("(5,5):(5,5)"), 125),
        Err(CuteError::Postcondition { .. })
    ));
}

#[test]
fn divide_examples() {
    let a = l("(4,2,3):(2,1,8)");
    assert_eq!(
        logical_divide(&a, &t("4:2")).expect("ok").to_string(),
        "((2,2),(2,3)):((4,1),(2,8))"
    );
    let a = l("(9,(4,8)):(59,(13,1))");
    let tiler = t("<3:3,(2,4):(1,8)>");
    assert_eq!(
        logical_divide(&a, &tiler).expect("ok").to_string(),
        "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))"
    );
    assert_eq!(
        zipped_divide(&a, &tiler).expect("ok").to_string(),
        "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"
    );
    assert_eq!(
        tiled_divide(&a, &tiler).expect("ok").to_string(),
        "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))"
    );
    assert_eq!(
        flat_divide(&a, &tiler).expect("ok").to_string(),
        "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))"
    );
}

#[test]
fn product_examples() {
    let a = l("(2,2):(4,1)");
    assert_eq!(
        logical_product(&a, &t("6:1")).expect("ok").to_string(),
        "((2,2),(2,3)):((4,1),(2,8))"
    );
    let a = l("(2,5):(5,1)");
    let b = l("(3,4):(1,3)");
    assert_eq!(
        blocked_product(&a, &b).expect("ok").to_string(),
        "(6,(5,4)):(5,(1,30))"
    );
    assert_eq!(
        raked_product(&a, &b).expect("ok").to_string(),
        "((3,2),(4,5)):((10,5),(30,1))"
    );
    // By mode, each mode of A is repeated within its own mode (CuTe's by-mode product).
    let z = zipped_product(&a, &t("<3:1,4:1>")).expect("ok");
    assert_eq!(z.to_string(), "((2,5),(3,4)):((5,1),(1,5))");
    let tp = tiled_product(&a, &t("<3:1,4:1>")).expect("ok");
    assert_eq!(tp.to_string(), "((2,5),3,4):((5,1),1,5)");
    // CuTe C++ dies with SIGFPE here; CuTe's complement has an extent 0, which is an error message.
    let e = logical_product(&l("(5,5):(5,5)"), &t("2:1")).expect_err("no complement");
    assert!(matches!(e, CuteError::Postcondition { .. }), "{e}");
}

#[test]
fn inverse_examples() {
    let a = l("(4,(2,3)):(2,(1,8))");
    let r = a.right_inverse().expect("ok");
    for i in 0..r.size() {
        assert_eq!(a.eval(r.eval(i).expect("r")).expect("a"), i);
    }
    // pycute stops at the stride-0 mode; CuTe C++ and this crate skip it.
    assert_eq!(
        l("(2,4):(0,1)").right_inverse().expect("ok").to_string(),
        "4:2"
    );
    assert_eq!(
        l("(3,2):(2,1)").left_inverse().expect("ok").to_string(),
        "(2,3):(3,1)"
    );
    // No complement, yet a left inverse (pycute answers 2:1, which breaks R(L(i)) = i at i = 2).
    assert_eq!(
        l("(2,3):(1,3)").left_inverse().expect("ok").to_string(),
        "(3,3):(1,2)"
    );
    // Neither closed form applies; the bounded search solves for the strides.
    assert_eq!(
        l("(2,2):(2,3)").left_inverse().expect("ok").to_string(),
        "(2,3):(1,1)"
    );
    assert_eq!(
        l("(4,3):(6,5)").left_inverse().expect("ok").to_string(),
        "(3,2,5):(-3,10,1)"
    );
    assert!(matches!(
        l("(4,3):(3,2)").left_inverse(),
        Err(CuteError::Unsupported { .. })
    ));
}

#[test]
fn swizzle_examples() {
    let c: ComposedLayout = "Sw<3,3,3> o 0 o (8,64):(64,1)".parse().expect("composed");
    // Row r of the 8×64 tile has its 8-element chunks permuted by XOR with r.
    for r in 0..8 {
        for chunk in 0..8 {
            let coord = r + 8 * (chunk * 8);
            assert_eq!(c.eval(coord).expect("eval"), r * 64 + ((chunk ^ r) * 8));
        }
    }
    assert_eq!(c.to_string(), "Sw<3,3,3> o 0 o (8,64):(64,1)");
    let a: AnyLayout = "Sw<2,0,-2> o 4 o 8:1".parse().expect("any");
    assert_eq!(a.to_string(), "Sw<2,0,-2> o 4 o 8:1");
    assert_eq!(a.eval(1).expect("eval"), 5 ^ 4);
    assert_eq!(
        "Sw<3,4,3>"
            .parse::<Swizzle>()
            .expect("sw")
            .compose(&"Sw<3,4,3>".parse().expect("sw"))
            .expect("id")
            .to_string(),
        "Sw<0,0,0>"
    );
    assert!("Sw<3,3,2>".parse::<Swizzle>().is_err());
}

#[test]
fn axe_examples() {
    let a = l("((2,4),8):((1,16),2)");
    assert_eq!(a.to_axe().expect("axe").to_string(), "S[(8,4,2):(2,16,1)]");
    let back = Layout::from_axe(&a.to_axe().expect("axe"), Some(a.shape())).expect("back");
    assert_eq!(back, a);
    let tv = l("((4,8),(2,2)):((16,1),(8,64))");
    let axe = tv_to_axe(&tv).expect("tv");
    assert_eq!(axe.to_string(), "S[(2,4,2,8):(2@val,1@tid,1@val,4@tid)]");
    assert_eq!(tv_from_axe(&axe).expect("back"), tv);
    let e = tv_to_axe(&l("(4,2):(1,2)")).expect_err("overlap");
    assert!(e.to_string().contains("overlaps"), "{e}");
}

#[test]
fn a_shape_as_tiler_divides_by_mode() {
    // CuTe: zipped_divide(make_layout((8,6)), make_shape(2,3)) tiles 2×3 blocks.
    let a = l("(8,6):(1,8)");
    let z = zipped_divide(&a, &t("(2,3)")).expect("ok");
    assert_eq!(z.to_string(), "((2,3),(4,2)):((1,8),(2,24))");
    assert_eq!(t("(2,3)"), t("<2:1,3:1>"));
    assert_eq!(t("(2,3):(1,2)"), Tiler::Layout(l("(2,3):(1,2)")));
}

#[test]
fn the_pictures_of_the_docs_page() {
    let sw: AnyLayout = "Sw<3,0,3> o 0 o (8,8):(8,1)".parse().expect("sw");
    let g = axe_cute::layout_grid(&sw).expect("grid");
    assert_eq!(g[1], vec![9, 8, 11, 10, 13, 12, 15, 14]);
    assert_eq!(g[7], vec![63, 62, 61, 60, 59, 58, 57, 56]);
    let plain: AnyLayout = "(4,(2,3)):(1,(4,8))".parse().expect("plain");
    let g = axe_cute::layout_grid(&plain).expect("grid");
    assert_eq!(g[3], vec![3, 7, 11, 15, 19, 23]);
    let tv = l("((2,4),(2,2)):((8,1),(4,16))");
    let cells = axe_cute::tv_grid(&tv, 8, 4).expect("tv grid");
    assert_eq!(
        cells[0],
        vec![vec![(0, 0)], vec![(1, 0)], vec![(0, 2)], vec![(1, 2)]]
    );
    assert_eq!(cells[7][3], vec![(7, 3)]);
}

#[test]
fn swizzle_composition_across_parameters() {
    let sw = |s: &str| s.parse::<Swizzle>().expect("sw");
    assert_eq!(
        sw("Sw<1,0,2>")
            .compose(&sw("Sw<0,5,-3>"))
            .expect("id")
            .to_string(),
        "Sw<1,0,2>"
    );
    assert_eq!(
        sw("Sw<2,4,-3>")
            .compose(&sw("Sw<1,6,-3>"))
            .expect("ok")
            .to_string(),
        "Sw<3,4,-3>"
    );
    let e = sw("Sw<2,0,3>")
        .compose(&sw("Sw<2,0,-3>"))
        .expect_err("two diagonals");
    assert!(matches!(e, CuteError::Swizzle(_)), "{e}");
}
