//! A shape in tiler position is CuTe's tuple tiler, applied by mode and recursively: each integer `n` is
//! `n:1`, each nested tuple a nested tiler. Golden values computed with pycute (nvidia-cutlass 4.2.0.0),
//! and a property test that a shape tiler is its written-out `<...>` form.

mod common;

use axe_cute::{
    composition_tiler, flat_divide, logical_divide, logical_product, tiled_divide, tiled_product,
    zipped_divide, zipped_product, IntTuple, Layout, Result, Tiler,
};
use proptest::collection::vec;
use proptest::prelude::*;

type Op = fn(&Layout, &Tiler) -> Result<Layout>;

const OPS: [(&str, Op); 8] = [
    ("composition", composition_tiler),
    ("logical_divide", logical_divide),
    ("zipped_divide", zipped_divide),
    ("tiled_divide", tiled_divide),
    ("flat_divide", flat_divide),
    ("logical_product", logical_product),
    ("zipped_product", zipped_product),
    ("tiled_product", tiled_product),
];

fn l(s: &str) -> Layout {
    s.parse().expect("layout")
}

fn t(s: &str) -> Tiler {
    s.parse().expect("tiler")
}

/// pycute prints Python tuples: `(4, (2,)):(1, (4,))`. Without spaces and 1-tuple commas it is CuTe's
/// notation.
fn pycute(s: &str) -> Layout {
    l(&s.replace(' ', "").replace(",)", ")"))
}

/// The same function and the same top-level mode sizes (pycute drops or keeps extent-1 leaves and
/// 1-tuples differently from CuTe C++; the map is what both define).
fn assert_same(ours: &Layout, want: &Layout, what: &str) {
    assert_eq!(ours.size(), want.size(), "{what}: size of {ours} vs {want}");
    assert_eq!(ours.rank(), want.rank(), "{what}: rank of {ours} vs {want}");
    let sizes =
        |x: &Layout| -> Vec<i64> { x.modes().expect("modes").iter().map(Layout::size).collect() };
    assert_eq!(sizes(ours), sizes(want), "{what}: mode sizes");
    for i in 0..ours.size() {
        assert_eq!(
            ours.eval(i).expect("ours"),
            want.eval(i).expect("want"),
            "{what}: at {i}, {ours} vs {want}"
        );
    }
}

#[test]
fn a_nested_shape_tiler_applies_by_mode_recursively() {
    assert_eq!(t("(2,(2,3))").to_string(), "<2:1,<2:1,3:1>>");
    assert_eq!(t("(2,4)"), t("<2:1,4:1>"));
    assert_eq!(t("<2:1,(2,3)>"), t("<2:1,<2:1,3:1>>"));
    // A shape with a stride stays one layout; an integer is `n:1`.
    assert_eq!(t("(2,4):(1,2)"), Tiler::Layout(l("(2,4):(1,2)")));
    assert_eq!(t("4"), Tiler::Layout(l("4:1")));
    let a = l("(8,(4,6)):(1,(8,32))");
    // The reviewer's examples, exactly as pycute answers.
    let r = composition_tiler(&a, &t("(2,(2,3))")).expect("composition");
    assert_eq!(r.to_string(), "(2,(2,3)):(1,(8,32))");
    let r = logical_divide(&a, &t("(2,(2,3))")).expect("logical_divide");
    assert_eq!(
        r.to_string(),
        "((2,4),((2,2),(3,2))):((1,2),((8,16),(32,96)))"
    );
}

#[test]
fn shape_tilers_agree_with_pycute() {
    // (A, tiler, [(op, pycute's answer)]); pycute's products were given `Layout(n)` tilers, since its
    // `logical_product` with an integer calls `logical_divide`.
    let a = "(8,(4,6)):(1,(8,32))";
    let a2 = "((4,2),(3,5)):((1,4),(8,24))";
    let cases: [(&str, &str, &str, &str); 19] = [
        (a, "(2,(2,3))", "composition", "(2, (2, 3)):(1, (8, 32))"),
        (
            a,
            "(2,(2,3))",
            "logical_divide",
            "((2, 4), ((2, 2), (3, 2))):((1, 2), ((8, 16), (32, 96)))",
        ),
        (
            a,
            "(2,(2,3))",
            "zipped_divide",
            "((2, (2, 3)), (4, (2, 2))):((1, (8, 32)), (2, (16, 96)))",
        ),
        (
            a,
            "(2,(2,3))",
            "tiled_divide",
            "((2, (2, 3)), 4, (2, 2)):((1, (8, 32)), 2, (16, 96))",
        ),
        (
            a,
            "(2,(2,3))",
            "flat_divide",
            "(2, (2, 3), 4, (2, 2)):(1, (8, 32), 2, (16, 96))",
        ),
        (
            a,
            "(2,(2,3))",
            "logical_product",
            "((8, 2), ((4, 2), (6, 3))):((1, 8), ((8, 1), (32, 1)))",
        ),
        (
            a,
            "(2,(2,3))",
            "zipped_product",
            "((8, (4, 6)), (2, (2, 3))):((1, (8, 32)), (8, (1, 1)))",
        ),
        (
            a,
            "(2,(2,3))",
            "tiled_product",
            "((8, (4, 6)), 2, (2, 3)):((1, (8, 32)), 8, (1, 1))",
        ),
        (
            "(4,(2,3)):(1,(4,8))",
            "(2,(2,3))",
            "logical_product",
            "((4, 2), ((2, 2), (3, 3))):((1, 4), ((4, 1), (8, 1)))",
        ),
        (
            "(4,(2,3)):(1,(4,8))",
            "(2,(2,3))",
            "zipped_product",
            "((4, (2, 3)), (2, (2, 3))):((1, (4, 8)), (4, (1, 1)))",
        ),
        (
            a2,
            "((2,2),(3))",
            "composition",
            "((2, 2), (3, 5)):((1, 4), (8, 24))",
        ),
        (
            a2,
            "((2,2),(3))",
            "logical_divide",
            "(((2, 2), (2, 1)), ((3, 1), 5)):(((1, 2), (4, 0)), ((8, 0), 24))",
        ),
        (
            a2,
            "((2,2),(3))",
            "zipped_divide",
            "(((2, 2), (3,)), ((2, 1), (1, 5))):(((1, 4), (8,)), ((2, 0), (0, 24)))",
        ),
        (a2, "(4,(3,5))", "composition", "(4, (3, 5)):(1, (8, 24))"),
        (
            a2,
            "(4,(3,5))",
            "logical_divide",
            "((4, 2), ((3, 1), (5, 1))):((1, 4), ((8, 0), (24, 0)))",
        ),
        (
            a2,
            "(4,(3,5))",
            "zipped_divide",
            "((4, (3, 5)), (2, (1, 1))):((1, (8, 24)), (4, (0, 0)))",
        ),
        (
            a2,
            "((2,2))",
            "composition",
            "((2, 2), (3, 5)):((1, 4), (8, 24))",
        ),
        (
            a2,
            "((2,2))",
            "logical_divide",
            "(((2, 2), (2, 1)), (3, 5)):(((1, 2), (4, 0)), (8, 24))",
        ),
        (
            a2,
            "((2,2))",
            "zipped_divide",
            "(((2, 2),), ((2, 1), (3, 5))):(((1, 4),), ((2, 0), (8, 24)))",
        ),
    ];
    for (a, tiler, op, want) in cases {
        let f = OPS.iter().find(|o| o.0 == op).expect("op").1;
        let what = format!("{op}({a}, {tiler})");
        let ours = f(&l(a), &t(tiler)).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_same(&ours, &pycute(want), &what);
    }
}

/// A random shape of depth ≤ 3, rank ≤ 3, extents 1..=4.
fn shape() -> impl Strategy<Value = IntTuple> {
    let leaf = (1..=4i64).prop_map(IntTuple::Int);
    leaf.prop_recursive(3, 12, 3, |inner| {
        vec(inner, 1..=3).prop_map(IntTuple::Tuple)
    })
}

/// The tiler a shape stands for, written out: `n` as `n:1`, a tuple as `<...>`.
fn written_out(s: &IntTuple) -> String {
    match s {
        IntTuple::Int(n) => format!("{n}:1"),
        IntTuple::Tuple(v) => {
            let parts: Vec<String> = v.iter().map(written_out).collect();
            format!("<{}>", parts.join(","))
        }
    }
}

/// The size of `A ∘ s`: the tiler's sizes, and those of the modes of `A` it does not name.
fn tiled_size(a: &Layout, s: &IntTuple) -> Option<i64> {
    match s {
        IntTuple::Int(n) => Some(*n),
        IntTuple::Tuple(v) => a
            .modes()
            .ok()?
            .iter()
            .enumerate()
            .try_fold(1, |acc, (k, ak)| {
                Some(acc * v.get(k).map_or(Some(ak.size()), |sk| tiled_size(ak, sk))?)
            }),
    }
}

/// `(A ∘ s)(i)` from the definition of a tuple tiler: an integer `n` takes `A`'s first `n` indices, a
/// tuple splits `i` colexicographically over its modes' sizes and then `A`'s untouched modes, and sums
/// mode by mode.
fn reference(a: &Layout, s: &IntTuple, i: i64) -> Option<i64> {
    match s {
        IntTuple::Int(_) => a.eval(i).ok(),
        IntTuple::Tuple(v) => {
            let modes = a.modes().ok()?;
            let mut rest = i;
            let mut sum = 0;
            for (k, ak) in modes.iter().enumerate() {
                let n = match v.get(k) {
                    Some(sk) => tiled_size(ak, sk)?,
                    None => ak.size(),
                };
                let last = k + 1 == modes.len();
                let digit = if last { rest } else { rest % n };
                rest = if last { 0 } else { rest / n };
                sum += match v.get(k) {
                    Some(sk) => reference(ak, sk, digit)?,
                    None => ak.eval(digit).ok()?,
                };
            }
            Some(sum)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Parsing a shape as a tiler gives its written-out `<...>` form, and every operator answers the
    /// same for both (result or error).
    #[test]
    fn a_shape_tiler_is_its_written_out_form(
        s in shape(),
        a in common::layout(4, 0..=9),
    ) {
        let text = s.to_string();
        let shape_tiler = t(&text);
        let written = t(&written_out(&s));
        prop_assert_eq!(&shape_tiler, &written, "{} vs {}", text, written_out(&s));
        prop_assert_eq!(Tiler::from_shape(&s).expect("from_shape"), written.clone());
        for (name, f) in OPS {
            let x = f(&a, &shape_tiler).map_err(|e| e.to_string());
            let y = f(&a, &written).map_err(|e| e.to_string());
            prop_assert_eq!(x, y, "{}({}, {})", name, a, text);
        }
        // The composition's map, from the definition of a tuple tiler.
        if let Ok(r) = composition_tiler(&a, &shape_tiler) {
            for i in 0..r.size() {
                prop_assert_eq!(Some(r.eval(i).expect("eval")), reference(&a, &s, i), "{} o {} at {}", a, text, i);
            }
        }
    }
}
