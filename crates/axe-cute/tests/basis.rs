//! Scaled-basis strides (`1@0`, CuTe's `E<0>`): parsing, evaluation by the definition, and composition
//! with a plain layout checked by enumeration.

mod common;

use axe_cute::{BasisLayout, CuteError};
use proptest::prelude::*;

fn brute(shape: &[i64], strides: &[(i64, usize)], dims: usize, i: i64) -> Vec<i64> {
    let mut v = vec![0; dims];
    let mut rest = i;
    for (k, (s, (d, m))) in shape.iter().zip(strides).enumerate() {
        let digit = if k + 1 == shape.len() { rest } else { rest % s };
        if *d != 0 {
            v[*m] += digit * d;
        }
        rest /= s;
    }
    v
}

#[test]
fn identity_layouts_map_an_index_to_its_coordinate() {
    let id: BasisLayout = "(4,(2,3)):(1@0,(1@1,2@1))".parse().expect("id");
    assert_eq!(id.dims(), 2);
    assert_eq!(id.eval(0).expect("0"), vec![0, 0]);
    assert_eq!(id.eval(5).expect("5"), vec![1, 1]);
    assert_eq!(id.eval(23).expect("23"), vec![3, 5]);
    assert_eq!(id.to_string(), "(4,(2,3)):(1@0,(1@1,2@1))");
    let t: BasisLayout = "(2,2):(0,3@1)".parse().expect("zero stride");
    assert_eq!(t.eval(3).expect("3"), vec![0, 3]);
    // A tile of the identity: rows 0..4 step 2, columns 0..2.
    let r = id
        .compose(&"(2,2):(2,4)".parse().expect("b"))
        .expect("compose");
    assert_eq!(r.to_string(), "(2,2):(2@0,1@1)");
    for bad in ["(4,8):(1,1@1)", "(4,8):(1@0)", "(4,8):(1@9,1@1)", "4:1@"] {
        assert!(bad.parse::<BasisLayout>().is_err(), "{bad}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn evaluation_and_composition_follow_the_definition(
        leaves in proptest::collection::vec((1i64..=4, -2i64..=3, 0usize..=1), 1..=4),
        b in common::layout(4, 0..=6),
    ) {
        let shape: Vec<i64> = leaves.iter().map(|l| l.0).collect();
        let strides: Vec<(i64, usize)> = leaves.iter().map(|l| (l.1, l.2)).collect();
        let text = format!(
            "({}):({})",
            shape.iter().map(i64::to_string).collect::<Vec<_>>().join(","),
            strides.iter().map(|(d, m)| if *d == 0 { "0".into() } else { format!("{d}@{m}") })
                .collect::<Vec<_>>().join(",")
        );
        let a: BasisLayout = text.parse().expect("basis layout");
        let dims = a.dims();
        let size: i64 = shape.iter().product();
        for i in 0..size + 3 {
            prop_assert_eq!(a.eval(i).expect("eval"), brute(&shape, &strides, dims, i));
        }
        prop_assert_eq!(a.to_string().parse::<BasisLayout>().expect("reparse"), a.clone());
        match a.compose(&b) {
            Ok(r) => {
                prop_assert_eq!(r.size(), b.size());
                for i in 0..b.size() {
                    let want = brute(&shape, &strides, dims, b.eval(i).expect("b"));
                    let mut got = r.eval(i).expect("r");
                    got.resize(dims, 0);
                    prop_assert_eq!(got, want, "{} o {} = {}", a, b, r);
                }
            }
            // No layout of the vector values (the encoded composition proves it), or a stride along
            // two directions at once.
            Err(CuteError::NoLayout { .. } | CuteError::Unsupported { .. }) => {}
            Err(e) => prop_assert!(false, "{} o {}: {}", a, b, e),
        }
    }
}
