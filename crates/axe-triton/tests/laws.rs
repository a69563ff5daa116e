//! Property tests: every operator's law checked by brute-force enumeration on random linear layouts.

use axe_layout::Layout;
use axe_triton::{gluon::GluonLayout, parse_json, parse_ttg, LinearLayout, TritonError};
use proptest::prelude::*;
use std::collections::BTreeSet;

const IN_NAMES: [&str; 4] = ["register", "lane", "warp", "block"];

/// A random layout: `n_in` in-dims with up to 3 bases, out-dims `dim0..` of sizes up to 8.
fn layout_with(
    out_names: Vec<String>,
    in_names: Vec<String>,
) -> impl Strategy<Value = LinearLayout> {
    let rank = out_names.len();
    prop::collection::vec(0u32..4, rank).prop_flat_map(move |logs| {
        let out: Vec<(String, u64)> = out_names
            .iter()
            .cloned()
            .zip(logs.iter().map(|l| 1u64 << l))
            .collect();
        let sizes: Vec<u64> = out.iter().map(|(_, s)| *s).collect();
        let base = sizes.iter().map(|s| 0..*s).collect::<Vec<_>>();
        let names = in_names.clone();
        prop::collection::vec(prop::collection::vec(base, 0..4), names.len()).prop_map(
            move |dims| {
                let in_dims = names.iter().cloned().zip(dims).collect();
                LinearLayout::new(in_dims, out.clone()).expect("valid by construction")
            },
        )
    })
}

fn any_layout() -> impl Strategy<Value = LinearLayout> {
    (1usize..3, 1usize..4).prop_flat_map(|(rank, n_in)| {
        layout_with(
            (0..rank).map(|i| format!("dim{i}")).collect(),
            IN_NAMES[..n_in].iter().map(|s| s.to_string()).collect(),
        )
    })
}

/// `L(x)` from the definition, for a flat input (first in-dim lowest).
fn brute(l: &LinearLayout, x: u64) -> Vec<u64> {
    let mut acc = vec![0u64; l.out_dims().len()];
    let mut bit = 0;
    for d in l.in_dims() {
        for b in &d.bases {
            if x >> bit & 1 == 1 {
                for (a, v) in acc.iter_mut().zip(b) {
                    *a ^= v;
                }
            }
            bit += 1;
        }
    }
    acc
}

fn flat_in(l: &LinearLayout, inputs: &[u64]) -> u64 {
    let mut flat = 0;
    let mut shift = 0;
    for (v, d) in inputs.iter().zip(l.in_dims()) {
        flat |= v << shift;
        shift += d.bases.len();
    }
    flat
}

fn all_outputs(l: &LinearLayout) -> Vec<Vec<u64>> {
    let sizes: Vec<u64> = l.out_dims().iter().map(|(_, s)| *s).collect();
    let total: u64 = sizes.iter().product();
    (0..total)
        .map(|mut k| {
            sizes
                .iter()
                .map(|s| {
                    let c = k % s;
                    k /= s;
                    c
                })
                .collect()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn map_and_apply_follow_the_xor_of_bases(l in any_layout()) {
        let map = l.map().expect("small");
        prop_assert_eq!(map.len() as u64, l.in_size());
        for (x, out) in map.iter().enumerate() {
            prop_assert_eq!(out, &brute(&l, x as u64));
            prop_assert_eq!(&l.apply_flat(x as u64).expect("in range"), out);
        }
    }

    #[test]
    fn injective_and_surjective_match_enumeration(l in any_layout()) {
        let map = l.map().expect("small");
        let distinct: BTreeSet<_> = map.iter().cloned().collect();
        prop_assert_eq!(l.is_injective(), distinct.len() == map.len());
        prop_assert_eq!(l.is_surjective(), distinct.len() as u64 == l.out_size());
    }

    #[test]
    fn compose_is_b_after_a(a in any_layout(), seed in any::<u64>()) {
        // B's in-dims are A's out-dims (same sizes or larger), out-dims fresh.
        let mut rng = seed;
        let mut next = || { rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); rng >> 33 };
        let out = vec![("x".to_string(), 8u64), ("y".to_string(), 2u64)];
        let in_dims: Vec<(String, Vec<Vec<u64>>)> = a.out_dims().iter().map(|(n, s)| {
            let bits = s.trailing_zeros() + (next() % 2) as u32;
            (n.clone(), (0..bits).map(|_| vec![next() % 8, next() % 2]).collect())
        }).collect();
        let b = LinearLayout::new(in_dims, out).expect("valid");
        let c = a.compose(&b).expect("dims fit");
        for x in 0..a.in_size() {
            let mid = brute(&a, x);
            prop_assert_eq!(c.apply_flat(x).expect("in range"), b.apply(&mid).expect("fits"));
        }
    }

    #[test]
    fn invert_and_compose_gives_the_smallest_preimage(a in any_layout(), b_seed in any_layout()) {
        // B over the same out-dims as A.
        let b_out = a.out_dims().to_vec();
        let b_in: Vec<(String, Vec<Vec<u64>>)> = b_seed.in_dims().iter().map(|d| {
            (format!("o_{}", d.name), d.bases.iter().map(|base| {
                b_out.iter().enumerate().map(|(j, (_, s))| base.get(j).copied().unwrap_or(0) % s).collect()
            }).collect())
        }).collect();
        let b = LinearLayout::new(b_in, b_out).expect("valid");
        match a.invert_and_compose(&b) {
            Ok(c) => {
                for x in 0..a.in_size() {
                    let target = brute(&a, x);
                    let y = c.apply_flat(x).expect("in range");
                    prop_assert_eq!(&b.apply(&y).expect("fits"), &target);
                    let smallest = (0..b.in_size()).find(|z| brute(&b, *z) == target).expect("reached");
                    prop_assert_eq!(flat_in(&b, &y), smallest);
                }
            }
            Err(TritonError::NotSurjective(_)) => prop_assert!(!b.is_surjective() || all_outputs(&b).len() as u64 != b.out_size()),
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }

    #[test]
    fn pseudoinvert_and_invert_laws(l in any_layout()) {
        let outs = all_outputs(&l);
        let reached: BTreeSet<Vec<u64>> = (0..l.in_size()).map(|x| brute(&l, x)).collect();
        match l.pseudoinvert() {
            Ok(p) => {
                for y in &outs {
                    let x = p.apply(y).expect("fits");
                    prop_assert_eq!(&l.apply(&x).expect("fits"), y);
                }
            }
            Err(_) => prop_assert!(reached.len() < outs.len()),
        }
        let bijective = reached.len() == outs.len() && l.in_size() == l.out_size();
        match l.invert() {
            Ok(inv) => {
                prop_assert!(bijective);
                for x in 0..l.in_size() {
                    let y = brute(&l, x);
                    prop_assert_eq!(flat_in(&l, &inv.apply(&y).expect("fits")), x);
                }
            }
            Err(_) => prop_assert!(!bijective),
        }
    }

    #[test]
    fn to_axe_is_the_preimage_relation_and_round_trips(l in any_layout()) {
        let shape: Vec<u64> = l.out_dims().iter().map(|(_, s)| *s).collect();
        match l.to_axe() {
            Ok(axe) => {
                for x in 0..axe.size() {
                    let t = axe_layout::unflatten(x, &shape).expect("in range");
                    let got: BTreeSet<String> = axe.apply(x).expect("in range").iter().map(|c| c.to_string()).collect();
                    let want: BTreeSet<String> = (0..l.in_size()).filter(|h| brute(&l, *h) == t).map(|h| {
                        let mut c = axe_layout::Coord::zero();
                        let mut rest = h;
                        for d in l.in_dims() {
                            let n = d.bases.len();
                            let v = rest & ((1 << n) - 1);
                            rest >>= n;
                            c.add_on(&axe_triton::axis_of(&d.name).expect("name"), v as i64).expect("small");
                        }
                        c.to_string()
                    }).collect();
                    prop_assert_eq!(got, want);
                }
                let names: Vec<&str> = l.in_dims().iter().map(|d| d.name.as_str()).collect();
                let back = LinearLayout::from_axe(&axe, &shape, &names).expect("round trip");
                prop_assert_eq!(back, l);
            }
            Err(TritonError::NotSurjective(_)) => prop_assert!(!l.is_surjective()),
            Err(TritonError::NotAffine(_)) | Err(TritonError::NotExpressible(_)) => {}
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }

    #[test]
    fn text_forms_round_trip(l in any_layout()) {
        prop_assert_eq!(parse_json(&l.to_json()).expect("own output"), l.clone());
        let t = parse_ttg(&l.to_ttg()).expect("own output");
        prop_assert_eq!(t.in_dims(), l.in_dims());
        // The attribute carries no out-dims; with no bases at all there is nothing to recover them from.
        if l.in_bits() > 0 {
            let padded: Vec<Vec<u64>> = t.map().expect("small");
            prop_assert_eq!(padded, l.map().expect("small"));
        }
    }

    #[test]
    fn parsers_never_panic(s in "\\PC{0,60}") {
        let _ = parse_json(&s);
        let _ = parse_ttg(&s);
        let _ = axe_triton::gluon::parse_gluon(&s);
    }

    #[test]
    fn parsers_never_panic_on_near_misses(s in "[\\[\\]{}(),:=\"a-z0-9 #<>-]{0,60}") {
        let _ = parse_json(&s);
        let _ = parse_ttg(&s);
        let _ = axe_triton::gluon::parse_gluon(&s);
    }

    #[test]
    fn blocked_axe_equals_the_linear_layout(
        spt in prop::collection::vec(0u32..3, 2), tpw in prop::collection::vec(0u32..3, 2),
        wpc in prop::collection::vec(0u32..2, 2), shape in prop::collection::vec(0u32..5, 2), swap in any::<bool>(),
    ) {
        let p = |v: &Vec<u32>| v.iter().map(|e| 1u64 << e).collect::<Vec<_>>();
        let g = GluonLayout::Blocked {
            size_per_thread: p(&spt), threads_per_warp: p(&tpw), warps_per_cta: p(&wpc),
            order: if swap { vec![0, 1] } else { vec![1, 0] },
        };
        let shape = p(&shape);
        let ll = g.to_linear(&shape).expect("powers of two");
        let direct = g.to_axe(&shape).expect("powers of two divide");
        let via = ll.to_axe().expect("blocked layouts are affine");
        prop_assert!(direct.equivalent(&via).expect("comparable"), "{direct} vs {via}");
    }

    #[test]
    fn blocked_axe_beyond_powers_of_two(
        spt in prop::collection::vec(1u64..4, 2), tpw in prop::collection::vec(1u64..4, 2),
        wpc in prop::collection::vec(1u64..3, 2), reps in prop::collection::vec(1u64..4, 2), swap in any::<bool>(),
    ) {
        let order = if swap { vec![0usize, 1] } else { vec![1, 0] };
        let g = GluonLayout::Blocked {
            size_per_thread: spt.clone(), threads_per_warp: tpw.clone(), warps_per_cta: wpc.clone(), order: order.clone(),
        };
        let shape: Vec<u64> = (0..2).map(|d| spt[d] * tpw[d] * wpc[d] * reps[d]).collect();
        let axe: Layout = g.to_axe(&shape).expect("whole tiles");
        // Oracle: enumerate hardware (reg, lane, warp) in mixed radix and place each element.
        let mixed = |mut id: u64, per: &Vec<u64>| { let mut c = vec![0u64; 2]; for &d in &order { c[d] = id % per[d]; id /= per[d]; } c };
        let nreg: u64 = spt.iter().product::<u64>() * reps.iter().product::<u64>();
        let nlane: u64 = tpw.iter().product();
        let nwarp: u64 = wpc.iter().product();
        let mut want = vec![BTreeSet::new(); (shape[0] * shape[1]) as usize];
        for r in 0..nreg {
            let rs = mixed(r % spt.iter().product::<u64>(), &spt);
            let rr = mixed(r / spt.iter().product::<u64>(), &reps);
            for ln in 0..nlane {
                let lc = mixed(ln, &tpw);
                for w in 0..nwarp {
                    let wc = mixed(w, &wpc);
                    let idx: Vec<u64> = (0..2).map(|d| ((rr[d] * wpc[d] + wc[d]) * tpw[d] + lc[d]) * spt[d] + rs[d]).collect();
                    want[(idx[0] * shape[1] + idx[1]) as usize].insert((r as i64, ln as i64, w as i64));
                }
            }
        }
        let (reg, lane, warp) = (axe_layout::Axis::new("reg").expect("axis"), axe_layout::Axis::new("lane").expect("axis"), axe_layout::Axis::new("warp").expect("axis"));
        for (x, w) in want.iter().enumerate() {
            let got: BTreeSet<(i64, i64, i64)> = axe.apply(x as u64).expect("in range").iter().map(|c| (c.get(&reg), c.get(&lane), c.get(&warp))).collect();
            prop_assert_eq!(&got, w);
        }
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(parse_json(&deep).is_err());
    assert!(parse_ttg(&deep).is_err());
    let calls = format!("{}{}", "SliceLayout(0, ".repeat(10_000), ")".repeat(10_000));
    assert!(axe_triton::gluon::parse_gluon(&calls).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Axe → linear → Axe is the identity on Axe layouts whose every bit lands on one hardware bit.
    #[test]
    fn axe_to_linear_and_back(
        logs in prop::collection::vec(0u32..3, 1..3), replicas in 0usize..3, slots in prop::collection::vec(0usize..3, 9),
        perm_seed in any::<u64>(),
    ) {
        let axes = ["reg", "lane", "warp"].map(|a| axe_layout::Axis::new(a).expect("axis"));
        let n_bits = logs.iter().sum::<u32>() as usize + replicas;
        // Give each bit an axis, then number the bits on each axis in a random order.
        let mut order: Vec<usize> = (0..n_bits).collect();
        let mut r = perm_seed;
        for i in (1..order.len()).rev() {
            r = r.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            order.swap(i, (r >> 33) as usize % (i + 1));
        }
        let mut count = [0u32; 3];
        let mut place = vec![(0usize, 0u32); n_bits];
        for &b in &order {
            let a = slots[b % slots.len()];
            place[b] = (a, count[a]);
            count[a] += 1;
        }
        let mut shard = Vec::new();
        let mut k = 0;
        for l in &logs {
            // Bits of one dim, most significant first.
            let bits: Vec<usize> = (k..k + *l as usize).collect();
            for &b in bits.iter().rev() {
                let (a, bit) = place[b];
                shard.push(axe_layout::Iter::new(2, 1i64 << bit, axes[a]).expect("iter"));
            }
            k += *l as usize;
        }
        let replica: Vec<_> = (k..n_bits).map(|b| {
            let (a, bit) = place[b];
            axe_layout::Iter::new(2, 1i64 << bit, axes[a]).expect("iter")
        }).collect();
        let axe = Layout::new(shard, replica, axe_layout::Coord::zero()).expect("layout");
        let shape: Vec<u64> = logs.iter().map(|l| 1u64 << l).collect();
        let ll = LinearLayout::from_axe(&axe, &shape, &["register", "lane", "warp"]).expect("bit layout");
        let back = ll.to_axe().expect("affine by construction");
        prop_assert!(back.equivalent(&axe).expect("comparable"), "{axe} -> {} -> {back}", ll.to_json());
    }
}

/// Every subset of `[0, 8)` (as a bit mask) that is a Minkowski sum of progressions `{0, d, .., (e-1)d}`.
fn progression_sums() -> BTreeSet<u32> {
    let mut seen = BTreeSet::from([1u32]);
    let mut todo = vec![1u32];
    while let Some(m) = todo.pop() {
        for d in 1..8u32 {
            for e in 2..=8u32 {
                if (e - 1) * d >= 8 {
                    break;
                }
                let mut n = 0u32;
                let mut ok = true;
                for x in (0..8).filter(|x| m >> x & 1 == 1) {
                    for k in 0..e {
                        let y = x + k * d;
                        if y >= 8 {
                            ok = false;
                        } else {
                            n |= 1 << y;
                        }
                    }
                }
                if ok && seen.insert(n) {
                    todo.push(n);
                }
            }
        }
    }
    seen
}

/// Whether any Axe layout `A` has `A(t) = { h : L(h) = t }` (for in-dims of size at most 8), by brute
/// force: every preimage is the preimage of 0 shifted, the shifts add up bit by bit with each bit moving
/// along one axis, and the preimage of 0 is a product over axes of sums of progressions.
fn axe_exists(l: &LinearLayout, sums: &BTreeSet<u32>) -> bool {
    let n = l.in_dims().len();
    let shape: Vec<u64> = l.out_dims().iter().map(|(_, s)| *s).collect();
    let split = |h: u64| -> Vec<i64> {
        let mut rest = h;
        l.in_dims()
            .iter()
            .map(|d| {
                let v = rest & ((1 << d.bases.len()) - 1);
                rest >>= d.bases.len();
                v as i64
            })
            .collect()
    };
    let pre = |t: &Vec<u64>| -> BTreeSet<Vec<i64>> {
        (0..l.in_size())
            .filter(|h| &brute(l, *h) == t)
            .map(split)
            .collect()
    };
    let total: u64 = shape.iter().product();
    let zero = pre(&vec![0; shape.len()]);
    if zero.is_empty() {
        return false;
    }
    let min0 = zero.iter().next().expect("nonempty").clone();
    let mut shifts = Vec::new();
    for x in 0..total {
        let t = axe_layout::unflatten(x, &shape).expect("in range");
        let p = pre(&t);
        let Some(m) = p.iter().next() else {
            return false;
        };
        let s: Vec<i64> = m.iter().zip(&min0).map(|(a, b)| a - b).collect();
        let moved: BTreeSet<Vec<i64>> = zero
            .iter()
            .map(|z| z.iter().zip(&s).map(|(a, b)| a + b).collect())
            .collect();
        if moved != p {
            return false;
        }
        shifts.push(s);
    }
    // Shifts add up over the bits of the flat index, each bit moving along one axis.
    for (x, s) in shifts.iter().enumerate() {
        let mut sum = vec![0i64; n];
        for b in 0..64 {
            if x >> b & 1 == 1 {
                let one = &shifts[1 << b];
                if one.iter().filter(|v| **v != 0).count() > 1 {
                    return false;
                }
                for (a, v) in sum.iter_mut().zip(one) {
                    *a += v;
                }
            }
        }
        if &sum != s {
            return false;
        }
    }
    // The preimage of 0, shifted to its minimum, is a product over axes of sums of progressions.
    let per_axis: Vec<BTreeSet<i64>> = (0..n)
        .map(|a| zero.iter().map(|z| z[a] - min0[a]).collect())
        .collect();
    let product: usize = per_axis.iter().map(|s| s.len()).product();
    if product != zero.len() {
        return false;
    }
    per_axis.iter().all(|s| {
        s.iter().all(|v| (0..8).contains(v))
            && sums.contains(&s.iter().fold(0u32, |m, v| m | 1 << v))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// `to_axe` answers exactly when some Axe layout exists (checked by brute force), and never a wrong one.
    #[test]
    fn to_axe_refuses_only_when_no_axe_layout_exists(l in any_layout()) {
        let sums = progression_sums();
        let exists = axe_exists(&l, &sums);
        match l.to_axe() {
            Ok(_) => prop_assert!(exists),
            Err(e) => prop_assert!(!exists, "refused ({e}) but brute force finds one for {}", l.to_json()),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Dot operands of NVMMA accumulators: read from text, every power-of-two shape is covered (surjective)
    /// by an affine layout (copies along K become replicas); other shapes are typed errors.
    #[test]
    fn dot_operands_cover_the_tensor_affinely(
        op in 0u64..2, hopper in any::<bool>(), kw in 0u32..5, w0 in 0u32..3, w1 in 0u32..3,
        e0 in 0u32..8, e1 in 0u32..8, odd in any::<bool>(),
    ) {
        let parent = if hopper {
            format!("NVMMADistributedLayout(version=[3, 0], warps_per_cta=[{}, {}], instr_shape=[16, 64, 16])", 4 << w0.min(1), 1 << w1)
        } else {
            format!("NVMMADistributedLayout(version=[2, 0], warps_per_cta=[{}, {}], instr_shape=[16, 8])", 1 << w0, 1 << w1)
        };
        let text = format!("DotOperandLayout(operand_index={op}, parent={parent}, k_width={})", 1u64 << kw);
        let parsed = axe_triton::gluon::parse_gluon(&text);
        if hopper && op == 1 {
            prop_assert!(parsed.is_err());
            return Ok(());
        }
        let g = parsed.expect("parses");
        let shape = [(1u64 << e0) * if odd { 3 } else { 1 }, 1u64 << e1];
        match g.to_linear(&shape) {
            Ok(ll) => {
                prop_assert!(!odd);
                prop_assert!(ll.is_surjective());
                prop_assert!(ll.to_axe().is_ok(), "{text} over {shape:?}");
            }
            Err(e) => prop_assert!(odd && matches!(e, TritonError::NotPowerOfTwo { .. }), "{e}"),
        }
    }

    /// NVMMA shared layouts: a bijection wherever Triton lays them out (a typed error elsewhere), an Axe
    /// layout exactly when there is no swizzle.
    #[test]
    fn nvmma_shared_is_a_bijection_affine_only_unswizzled(
        swizzle in prop::sample::select(vec![0u64, 32, 64, 128]), bits in prop::sample::select(vec![8u64, 16, 32, 64]),
        transposed in any::<bool>(), e0 in 0u32..10, e1 in 0u32..10,
    ) {
        let text = format!("NVMMASharedLayout({swizzle}, {bits}, 2, {})", if transposed { "True" } else { "False" });
        let g = axe_triton::gluon::parse_gluon(&text).expect("parses");
        let shape = [1u64 << e0, 1u64 << e1];
        match g.to_linear(&shape) {
            Ok(ll) => {
                prop_assert!(ll.is_injective() && ll.is_surjective(), "{text} over {shape:?}");
                prop_assert_eq!(g.to_axe(&shape).is_ok(), swizzle == 0);
            }
            Err(e) => prop_assert!(swizzle != 0 && matches!(e, TritonError::Gluon(_)), "{e}"),
        }
        // Any shape at all: an answer or a typed error, never a panic.
        let _ = g.to_linear(&[e0 as u64 * 3, e1 as u64]);
        let _ = g.to_axe(&[e0 as u64 * 3, e1 as u64]);
    }
}

/// A random bijection: `bits` out-bits spread over out-dims, an invertible GF(2) matrix (a permutation
/// mixed by row XORs), its columns split over in-dims whose names are drawn from a pool that shares the
/// out-dims' names (XOR swizzles over `dim0`/`dim1` are written that way).
fn invertible_layout() -> impl Strategy<Value = LinearLayout> {
    (1usize..3, 1u32..7).prop_flat_map(|(rank, bits)| {
        let cuts = prop::collection::vec(0..=bits, rank - 1);
        let n_in = 1usize..4;
        // Often the identity order and few mixes, so that some in-dim keeps the bases of the identity
        // on the out-dim of its name (the case Triton's broadcasting rule meets).
        let perm = prop_oneof![
            Just((0..bits).collect::<Vec<u32>>()),
            Just((0..bits).collect::<Vec<u32>>()).prop_shuffle(),
        ];
        let mixes = prop::collection::vec((0..bits, 0..bits), 0..5);
        let in_cuts = prop::collection::vec(0..=bits, 3);
        let names = prop::sample::subsequence(vec!["dim0", "dim1", "dim2", "register", "lane"], 3)
            .prop_shuffle();
        (cuts, n_in, perm, mixes, in_cuts, names, any::<bool>()).prop_map(
            move |(mut cuts, n_in, perm, mixes, mut in_cuts, mut names, aligned)| {
                // Columns of the matrix: column i is the image of in-bit i (packed out-bits).
                let mut cols: Vec<u64> = perm.iter().map(|p| 1u64 << p).collect();
                for (a, b) in mixes {
                    if a != b {
                        cols[a as usize] ^= cols[b as usize];
                    }
                }
                cuts.sort_unstable();
                let mut out = Vec::new();
                let mut prev = 0;
                for (j, c) in cuts.iter().chain(std::iter::once(&bits)).enumerate() {
                    out.push((format!("dim{j}"), 1u64 << (c - prev)));
                    prev = *c;
                }
                let unpack = |v: u64| {
                    let mut shift = 0;
                    out.iter()
                        .map(|(_, s)| {
                            let c = (v >> shift) & (s - 1);
                            shift += s.trailing_zeros();
                            c
                        })
                        .collect::<Vec<u64>>()
                };
                if aligned {
                    // In-dims named and sized as the out-dims, `dimK` over out-dim `dimK`'s bits.
                    in_cuts = cuts.clone();
                    names = vec!["dim0", "dim1", "dim2"];
                } else {
                    in_cuts.truncate(n_in - 1);
                    in_cuts.sort_unstable();
                }
                let mut ins = Vec::new();
                let mut prev = 0u32;
                for (k, c) in in_cuts.iter().chain(std::iter::once(&bits)).enumerate() {
                    let bases = (prev..*c).map(|i| unpack(cols[i as usize])).collect();
                    ins.push((names[k].to_string(), bases));
                    prev = *c;
                }
                LinearLayout::new(ins, out).expect("valid by construction")
            },
        )
    })
}

#[test]
fn xor_swizzle_over_shared_names_inverts() {
    let l = parse_json(
        r#"{"in": {"dim0": [[1,1],[2,2]], "dim1": [[0,1],[0,2]]}, "out": {"dim0": 4, "dim1": 4}}"#,
    )
    .expect("valid");
    assert!(l.is_injective() && l.is_surjective());
    let inv = l.invert().expect("a bijection inverts");
    for x in 0..l.in_size() {
        let y = brute(&l, x);
        assert_eq!(flat_in(&l, &inv.apply(&y).expect("fits")), x);
    }
    // The same bases under other in-dim names invert alike.
    let renamed = parse_json(r#"{"in": {"register": [[1,1],[2,2]], "lane": [[0,1],[0,2]]}, "out": {"dim0": 4, "dim1": 4}}"#)
        .expect("valid");
    assert_eq!(
        renamed.invert().expect("bijection").in_dims(),
        inv.in_dims()
    );
    assert!(l.pseudoinvert().is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// `invert(L) ∘ L` and `L ∘ invert(L)` are the identity, checked on every input, for random bijections
    /// whose in-dims may share names with the out-dims.
    #[test]
    fn every_bijection_inverts(l in invertible_layout()) {
        prop_assert!(l.is_injective() && l.is_surjective());
        let inv = l.invert().map_err(|e| TestCaseError::fail(format!("{e} for {}", l.to_json())))?;
        for x in 0..l.in_size() {
            let y = brute(&l, x);
            prop_assert_eq!(flat_in(&l, &inv.apply(&y).expect("fits")), x);
        }
        for y in all_outputs(&l) {
            let x = inv.apply(&y).expect("fits");
            prop_assert_eq!(l.apply(&x).expect("fits"), y);
        }
        let p = l.pseudoinvert().expect("surjective");
        prop_assert_eq!(p, inv);
    }
}

/// Layouts whose out-dims are `dim0..` in order, in another order, or named otherwise, and whose in-dims
/// have any name, some of which the attribute cannot spell.
fn any_named_layout() -> impl Strategy<Value = LinearLayout> {
    let outs = prop_oneof![
        Just(vec!["dim0", "dim1"]),
        Just(vec!["dim1", "dim0"]),
        Just(vec!["dim0"]),
        Just(vec!["dim1"]),
        Just(vec!["x", "y"]),
        Just(vec!["dim0", "dim2"]),
        Just(vec!["dim0", "dim1", "dim2"]),
    ];
    let ins = prop_oneof![
        Just(vec!["register", "lane"]),
        Just(vec!["lane", "register"]),
        Just(vec!["register", "lane", "warp", "block"]),
        Just(vec!["block", "warp"]),
        Just(vec!["register", "offset"]),
        Just(vec!["offset"]),
        Just(vec!["dim0", "dim1"]),
        Just(vec!["a b"]),
        Just(vec!["9lives", "warp"]),
    ];
    (outs, ins).prop_flat_map(|(o, i)| {
        layout_with(
            o.iter().map(|s| s.to_string()).collect(),
            i.iter().map(|s| s.to_string()).collect(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// `ttg()` reads back as the same layout with Triton's four in-dims (`ttg_form`), and refuses only
    /// where the layout has an in-dim Triton's attribute does not read, or the attribute would read
    /// back as another layout.
    #[test]
    fn ttg_reads_back_as_the_same_layout_or_is_refused(l in any_named_layout()) {
        let form = l.ttg_form();
        let unchecked_ok = form
            .as_ref()
            .is_some_and(|f| parse_ttg(&f.to_ttg()).map(|b| b == *f).unwrap_or(false));
        match l.ttg() {
            Ok(text) => {
                let f = form.expect("a form");
                prop_assert_eq!(&text, &f.to_ttg());
                prop_assert_eq!(parse_ttg(&text).expect("own output"), f);
                for (d, name) in parse_ttg(&text).expect("own output").in_dims().iter().zip(["register", "lane", "warp", "block"]) {
                    prop_assert_eq!(d.name.as_str(), name);
                }
            }
            Err(TritonError::NotExpressible(why)) => {
                prop_assert!(!unchecked_ok, "refused a form that reads back: {}", why);
                prop_assert!(why.contains("JSON form"), "{}", why);
            }
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }
}

#[test]
fn ttg_refuses_out_dims_out_of_order_naming_why() {
    // Registers move dim1; read back as `dim0, dim1` they would move dim0.
    let l = parse_json(r#"{"in": {"register": [[1, 0], [2, 0]], "lane": [[0, 1]]}, "out": {"dim1": 4, "dim0": 2}}"#)
        .expect("valid");
    let why = l.ttg().expect_err("out of order").to_string();
    assert!(
        why.contains("dim1, dim0") && why.contains("out-dim 0 is `dim1`"),
        "{why}"
    );
    let named = parse_json(r#"{"in": {"register": [[1]]}, "out": {"x": 2}}"#).expect("valid");
    assert!(named.ttg().expect_err("named").to_string().contains("`x`"));
    let larger = parse_json(r#"{"in": {"register": [[1]]}, "out": {"dim0": 4}}"#).expect("valid");
    let why = larger.ttg().expect_err("sizes").to_string();
    assert!(why.contains("size 4") && why.contains("only 2"), "{why}");
    let fine = parse_json(
        r#"{"in": {"register": [[1, 0]], "lane": [[0, 1]]}, "out": {"dim0": 2, "dim1": 2}}"#,
    )
    .expect("valid");
    // Triton reads all four in-dims: the missing ones are written empty.
    assert_eq!(
        fine.ttg().expect("fits"),
        "#ttg.linear<{register = [[1, 0]], lane = [[0, 1]], warp = [], block = []}>"
    );
    // A shared layout's `offset` is no in-dim of `#ttg.linear` (Triton would ignore it).
    let shared =
        parse_json(r#"{"in": {"offset": [[1, 0], [0, 1]]}, "out": {"dim0": 2, "dim1": 2}}"#)
            .expect("valid");
    let why = shared.ttg().expect_err("offset").to_string();
    assert!(
        why.contains("register, lane, warp and block") && why.contains("offset"),
        "{why}"
    );
}
