//! Every operator's law, checked by enumeration on random layouts (nested shapes, zero, negative and
//! non-unit strides, sizes that are not powers of two); every "no layout" error confirmed by an
//! exhaustive search for a valid result.

mod common;

use std::collections::HashSet;

use axe_cute::{
    blocked_product, complement, complement_is_exact, composition, flat_divide, left_inverse,
    left_inverse_strict, logical_divide, logical_product, raked_product, right_inverse,
    tiled_divide, zipped_divide, CuteError, IntTuple, Layout, Tiler,
};
use common::*;
use proptest::prelude::*;

fn coord2(a: i64, b: i64) -> IntTuple {
    IntTuple::Tuple(vec![IntTuple::Int(a), IntTuple::Int(b)])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn evaluation_matches_the_definition(l in layout(5, -4..=9)) {
        let want = brute(&l);
        prop_assert_eq!(l.values(1 << 20).expect("values"), want.clone());
        for (i, &v) in want.iter().enumerate() {
            let i = i as i64;
            prop_assert_eq!(l.eval(i).expect("eval"), v);
            let c = l.idx2crd(i).expect("crd");
            prop_assert!(c.congruent(l.shape()));
            prop_assert_eq!(l.eval_coord(&c).expect("crd2idx"), v);
            prop_assert_eq!(l.eval_coord(&IntTuple::Int(i)).expect("flat"), v);
        }
        // Past the size the last leaf runs on (CuTe's evaluation).
        for x in l.size()..l.size() + 5 {
            prop_assert_eq!(l.eval(x).expect("past the size"), extended(&l, x));
        }
        prop_assert!(l.eval(-1).is_err());
        prop_assert_eq!(l.cosize().expect("cosize"), want.iter().max().map_or(1, |m| m.max(&0) + 1));
        prop_assert_eq!(l.to_string().parse::<Layout>().expect("reparse"), l.clone());
        prop_assert_eq!(l.to_static_string().parse::<Layout>().expect("reparse static"), l);
    }

    #[test]
    fn coalesce_keeps_the_map_with_fewest_modes(l in layout(5, -3..=9)) {
        let c = l.coalesce().expect("coalesce");
        prop_assert_eq!(brute(&c), brute(&l));
        let m = c.modes_flat();
        prop_assert!(m.len() == 1 || m.iter().all(|x| x.0 > 1));
        prop_assert!(m.windows(2).all(|w| w[0].0 * w[0].1 != w[1].1));
        let profile = IntTuple::Tuple(vec![IntTuple::Int(1); l.rank()]);
        let by = l.coalesce_by(&profile).expect("by mode");
        prop_assert_eq!(brute(&by), brute(&l));
        prop_assert_eq!(mode_sizes(&by), mode_sizes(&l));
    }

    #[test]
    fn filter_keeps_the_values_of_the_nonzero_stride_leaves(l in layout(5, -3..=9)) {
        let f = l.filter().expect("filter");
        // The indices whose stride-0 digits are 0, in order, written out from the definition.
        let shape = l.shape().leaves();
        let stride = l.stride().leaves();
        let lv = brute(&l);
        let want: Vec<i64> = (0..l.size())
            .filter(|&i| {
                let mut rest = i;
                shape.iter().zip(&stride).all(|(s, d)| {
                    let digit = rest % s;
                    rest /= s;
                    *d != 0 || digit == 0
                })
            })
            .map(|i| lv[i as usize])
            .collect();
        prop_assert_eq!(brute(&f), want);
        let m = f.modes_flat();
        prop_assert!(m.iter().all(|x| x.1 != 0 || f.size() == 1));
    }

    #[test]
    fn composition_is_a_after_b_or_no_layout_exists(
        a in layout(5, -2..=9),
        b in layout(4, 0..=7),
    ) {
        match composition(&a, &b) {
            Ok(r) => {
                prop_assert_eq!(r.size(), b.size());
                if matches!(b.shape(), IntTuple::Tuple(_)) {
                    prop_assert_eq!(mode_sizes(&r), mode_sizes(&b));
                }
                let bv = brute(&b);
                for (i, v) in brute(&r).into_iter().enumerate() {
                    prop_assert_eq!(v, extended(&a, bv[i]), "{} o {} = {} at {}", a, b, r, i);
                }
            }
            Err(CuteError::NoLayout { .. }) => {
                // Any answer R has R_i = c_i ↦ A(B_i(c_i)) on each top-level mode, and is their sum.
                let modes = b.modes().expect("modes");
                let gs: Vec<Vec<i64>> = modes
                    .iter()
                    .map(|m| brute(m).into_iter().map(|x| extended(&a, x)).collect())
                    .collect();
                let all_fit = gs.iter().all(|g| some_layout_fits(g));
                let sizes = mode_sizes(&b);
                let separable = (0..b.size()).all(|x| {
                    let mut rest = x;
                    let mut sum = 0;
                    for (g, s) in gs.iter().zip(&sizes) {
                        sum += g[(rest % s) as usize];
                        rest /= s;
                    }
                    sum == extended(&a, brute(&b)[x as usize])
                });
                prop_assert!(!(all_fit && separable), "{} o {}: error, yet a layout exists", a, b);
            }
            Err(e) => prop_assert!(false, "{} o {}: {}", a, b, e),
        }
    }

    #[test]
    fn complement_obeys_cutes_postconditions_or_cutes_answer_breaks_one(
        a in layout(4, 0..=12),
        bound in 1i64..=80,
    ) {
        let leaves: Vec<(i64, i64)> =
            a.modes_flat().into_iter().filter(|&(s, d)| s > 1 && d != 0).collect();
        let filtered = Layout::from_modes(&leaves).expect("filtered");
        let av: HashSet<i64> = brute(&a).into_iter().collect();
        // CuTe's construction, written out: sorted strides, extents d/current (integer division).
        let mut sorted: Vec<(i64, i64)> = leaves.iter().map(|&(s, d)| (d, s)).collect();
        sorted.sort();
        let mut cute = Vec::new();
        let mut current = 1;
        for &(d, s) in &sorted {
            cute.push((d / current, current));
            current = s * d;
        }
        cute.push(((bound + current - 1) / current, current));
        let cute_size: i64 = cute.iter().map(|m| m.0).product();
        let cute_last: i64 = cute.iter().map(|m| (m.0 - 1) * m.1).sum();
        let cute_ok = cute.iter().all(|m| m.0 >= 1)
            && cute_size >= bound / filtered.size()
            && a.cosize().expect("cosize") + cute_last >= bound;
        match complement(&a, bound) {
            Ok(r) => {
                prop_assert!(cute_ok, "complement({}, {}) = {} though CuTe's answer breaks a postcondition", a, bound, r);
                let rv = brute(&r);
                // The same function as CuTe's answer.
                let cv = brute(&Layout::from_modes(&cute).expect("cute"));
                prop_assert_eq!(&rv, &cv);
                prop_assert!(rv.windows(2).all(|w| w[0] < w[1]), "{} not increasing", r);
                prop_assert!(rv.iter().skip(1).all(|v| !av.contains(v)), "{} meets {}", r, a);
                prop_assert!(r.size() >= bound / filtered.size());
                prop_assert!(a.cosize().expect("cosize") + rv.last().copied().unwrap_or(0) >= bound);
                if axe_cute::complement_is_exact(&a) {
                    let fv = brute(&filtered);
                    let n = filtered.size() * r.size();
                    let all: HashSet<i64> = rv.iter().flat_map(|y| fv.iter().map(move |x| x + y)).collect();
                    prop_assert_eq!(all.len() as i64, n, "(A', R) not a bijection: {} {}", a, r);
                    prop_assert!(all.iter().all(|&v| (0..n).contains(&v)));
                }
            }
            Err(CuteError::Postcondition { .. }) => prop_assert!(!cute_ok, "complement({}, {}) refused; CuTe's answer is fine", a, bound),
            Err(e) => prop_assert!(false, "{}: {}", a, e),
        }
    }

    #[test]
    fn right_inverse_law(l in layout(5, -2..=12)) {
        let r = right_inverse(&l).expect("right inverse");
        let lv = brute(&l);
        for (i, x) in brute(&r).into_iter().enumerate() {
            prop_assert_eq!(lv[x as usize], i as i64, "{} {}", l, r);
        }
        let mut sorted = lv.clone();
        sorted.sort();
        if sorted == (0..l.size()).collect::<Vec<_>>() {
            prop_assert_eq!(r.size(), l.size(), "{} is a bijection; {} is short", l, r);
        }
    }

    #[test]
    fn right_inverse_of_an_injective_layout_is_as_long_as_possible(l in layout(5, 0..=12)) {
        let lv = brute(&l);
        if !injective(&lv) {
            return Ok(());
        }
        let r = right_inverse(&l).expect("right inverse");
        let pre: std::collections::HashMap<i64, i64> =
            lv.iter().enumerate().map(|(i, x)| (*x, i as i64)).collect();
        let mut n = 0;
        while pre.contains_key(&n) { n += 1; }
        // No layout of a size past size(R) maps [0, m) to the (unique) preimages.
        for m in (r.size() + 1)..=n {
            let want: Vec<i64> = (0..m).map(|x| pre[&x]).collect();
            prop_assert!(!some_layout_fits(&want), "{}: R = {} but size {} also works", l, r, m);
        }
    }

    #[test]
    fn left_inverse_law(l in layout(5, 0..=12)) {
        let lv = brute(&l);
        match left_inverse_strict(&l) {
            Ok(r) => {
                prop_assert!(r.size() >= l.cosize().expect("cosize"));
                let rv = brute(&r);
                for (i, x) in lv.iter().enumerate() {
                    prop_assert_eq!(rv[*x as usize], i as i64, "{} {}", l, r);
                }
                prop_assert_eq!(left_inverse(&l).expect("same"), r);
            }
            Err(CuteError::NoLayout { .. }) => prop_assert!(!injective(&lv)),
            Err(CuteError::Unsupported { .. }) => {
                prop_assert!(injective(&lv));
                // Nothing within the searched bounds was missed (small cases, exhaustively).
                if l.size() <= 8 && l.cosize().expect("cosize") <= 24 {
                    prop_assert!(!some_left_inverse_within(&lv, l.cosize().expect("cosize")), "{}", l);
                }
            }
            Err(e) => prop_assert!(false, "{}: {}", l, e),
        }
    }

    #[test]
    fn left_inverse_of_a_non_injective_layout_is_a_generalised_inverse(l in layout(5, 0..=12)) {
        let lv = brute(&l);
        if injective(&lv) {
            return Ok(());
        }
        prop_assert!(!axe_cute::is_true_left_inverse(&l).expect("check"));
        match left_inverse(&l) {
            Ok(r) => {
                prop_assert!(r.size() >= l.cosize().expect("cosize"));
                let rv = brute(&r);
                for &x in &lv {
                    let j = rv[x as usize];
                    prop_assert!((0..l.size()).contains(&j), "{} {}", l, r);
                    prop_assert_eq!(lv[j as usize], x, "L(R(L(i))) != L(i): {} {}", l, r);
                }
            }
            // Nothing found: the error says so (not that none exists), and within the searched bounds
            // there is none (small cases, exhaustively).
            Err(e @ CuteError::Unsupported { .. }) => {
                let msg = e.to_string();
                prop_assert!(msg.contains("no generalised inverse") && msg.contains("was found"), "{}", msg);
                prop_assert_eq!(msg.matches("not injective").count(), 1, "{}", msg);
                let cosize = l.cosize().expect("cosize");
                if l.size() <= 8 && cosize <= 16 {
                    prop_assert!(!some_generalised_inverse_within(&lv, cosize), "{}: {}", l, msg);
                }
            }
            Err(e) => prop_assert!(false, "{}: {}", l, e),
        }
    }

    #[test]
    fn logical_divide_is_a_after_b_and_its_complement(a in layout(5, 0..=9), b in layout(4, 0..=6)) {
        let t = Tiler::Layout(b.clone());
        match logical_divide(&a, &t) {
            Ok(r) => {
                let bs = complement(&b, a.size()).expect("complement exists");
                let bb = Layout::concat(&[b.clone(), bs.clone()]).expect("concat");
                prop_assert_eq!(mode_sizes(&r), vec![b.size(), bs.size()]);
                // (B, B*) reaches past A's size where B* tiles exactly; CuTe's complement of a B with
                // gaps (B = (2,3):(5,1) in 8: B* = 1:0) may cover less, as in CuTe.
                if complement_is_exact(&b) {
                    prop_assert!(r.size() >= a.size());
                }
                let bv = brute(&bb);
                for (i, v) in brute(&r).into_iter().enumerate() {
                    prop_assert_eq!(v, extended(&a, bv[i]));
                }
                prop_assert_eq!(zipped_divide(&a, &t).expect("zipped"), r.clone());
            }
            Err(e) => {
                let expected = complement(&b, a.size())
                    .and_then(|bs| composition(&a, &Layout::concat(&[b.clone(), bs])?));
                prop_assert_eq!(Err(e), expected);
            }
        }
    }

    #[test]
    fn by_mode_divides_regroup_the_logical_divide(
        a0 in layout(4, 0..=6), a1 in layout(4, 0..=6),
        b0 in layout(3, 0..=4), b1 in layout(3, 0..=4),
    ) {
        let a = Layout::concat(&[a0, a1]).expect("a");
        let t = Tiler::Modes(vec![Tiler::Layout(b0), Tiler::Layout(b1)]);
        if let Ok(ld) = logical_divide(&a, &t) {
            let z = zipped_divide(&a, &t).expect("zipped");
            let td = tiled_divide(&a, &t).expect("tiled");
            let fd = flat_divide(&a, &t).expect("flat");
            let (m0, m1) = (ld.mode(0).expect("m0"), ld.mode(1).expect("m1"));
            let (t0, r0) = (m0.mode(0).expect("t0").size(), m0.mode(1).expect("r0").size());
            let (t1, r1) = (m1.mode(0).expect("t1").size(), m1.mode(1).expect("r1").size());
            for x0 in 0..t0 { for y0 in 0..r0 { for x1 in 0..t1 { for y1 in 0..r1 {
                let want = ld.eval_coord(&coord2(x0 + t0 * y0, x1 + t1 * y1)).expect("ld");
                let tile = coord2(x0, x1);
                let rest = coord2(y0, y1);
                let zc = IntTuple::Tuple(vec![tile.clone(), rest]);
                prop_assert_eq!(z.eval_coord(&zc).expect("z"), want);
                let tc = IntTuple::Tuple(vec![tile, IntTuple::Int(y0), IntTuple::Int(y1)]);
                prop_assert_eq!(td.eval_coord(&tc).expect("td"), want);
                let fc = IntTuple::Tuple([x0, x1, y0, y1].map(IntTuple::Int).to_vec());
                prop_assert_eq!(fd.eval_coord(&fc).expect("fd"), want);
            }}}}
        }
    }

    #[test]
    fn logical_product_repeats_a_over_b(a in layout(4, 0..=8), b in layout(4, 0..=5)) {
        match logical_product(&a, &Tiler::Layout(b.clone())) {
            Ok(r) => {
                prop_assert_eq!(r.mode(0).expect("m0"), a.clone());
                let bound = a.size() * b.cosize().expect("cosize");
                let astar = complement(&a, bound).expect("complement");
                let bv = brute(&b);
                let m1 = r.mode(1).expect("m1");
                prop_assert_eq!(m1.size(), b.size());
                for (i, v) in brute(&m1).into_iter().enumerate() {
                    prop_assert_eq!(v, extended(&astar, bv[i]));
                }
                if injective(&brute(&a)) && injective(&bv) {
                    prop_assert!(injective(&brute(&r)), "{} x {} = {} overlaps", a, b, r);
                }
            }
            Err(e) => {
                let expected = complement(&a, a.size() * b.cosize().expect("cosize"))
                    .and_then(|c| composition(&c, &b));
                prop_assert_eq!(Some(e), expected.err());
            }
        }
    }

    #[test]
    fn blocked_and_raked_products_zip_the_logical_product(
        a0 in layout(3, 0..=6), a1 in layout(3, 0..=6),
        b0 in layout(3, 0..=4), b1 in layout(3, 0..=4),
    ) {
        let a = Layout::concat(&[a0, a1]).expect("a");
        let b = Layout::concat(&[b0, b1]).expect("b");
        if let Ok(p) = logical_product(&a, &Tiler::Layout(b.clone())) {
            let bl = blocked_product(&a, &b).expect("blocked");
            let rk = raked_product(&a, &b).expect("raked");
            let sa = mode_sizes(&a);
            let sc = mode_sizes(&p.mode(1).expect("c"));
            for x0 in 0..sa[0] { for x1 in 0..sa[1] { for y0 in 0..sc[0] { for y1 in 0..sc[1] {
                let want = p.eval_coord(&IntTuple::Tuple(vec![coord2(x0, x1), coord2(y0, y1)])).expect("p");
                // Each mode is coalesced: its flat index stands for the zipped pair.
                let blc = coord2(x0 + sa[0] * y0, x1 + sa[1] * y1);
                prop_assert_eq!(bl.eval_coord(&blc).expect("bl"), want);
                let rkc = coord2(y0 + sc[0] * x0, y1 + sc[1] * x1);
                prop_assert_eq!(rk.eval_coord(&rkc).expect("rk"), want);
            }}}}
        }
    }
}
