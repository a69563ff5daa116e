//! Triton linear layouts read from any of their texts: inverting answers or refuses, never a panic;
//! `A⁻¹(A(x)) = x` for a bijection and `A(B(y)) = y` for `B = pseudoinvert(A)`; the Axe form answers or
//! refuses.
#![no_main]
use axe_triton::{parse_json, parse_linear, parse_ttg, LinearLayout};
use libfuzzer_sys::fuzz_target;

/// `l` at `x`, or `None` where it refuses.
fn at(l: &LinearLayout, x: &[u64]) -> Option<Vec<u64>> {
    l.apply(x).ok()
}

/// The flat input `x` of `l` as one value per in-dim (the first in-dim in the lowest bits).
fn unflatten(l: &LinearLayout, mut x: u64) -> Vec<u64> {
    l.in_dims()
        .iter()
        .map(|d| {
            let bits = d.bases.len() as u32;
            let v = x & ((1u64 << bits) - 1);
            x >>= bits;
            v
        })
        .collect()
}

/// Whether `b`'s out-dims are `a`'s in-dims in order, so that `b`'s output is `a`'s input.
fn feeds(b: &LinearLayout, a: &LinearLayout) -> bool {
    b.out_dims()
        .iter()
        .map(|(n, _)| n)
        .eq(a.in_dims().iter().map(|d| &d.name))
}

fuzz_target!(|text: &str| {
    let Some(a) = [parse_ttg, parse_linear, parse_json]
        .iter()
        .find_map(|read| read(text).ok())
    else {
        return;
    };
    let _ = a.to_axe();
    let limit = 1u64 << 10;
    if let Ok(inv) = a.invert() {
        if feeds(&inv, &a) {
            for x in 0..a.in_size().min(limit) {
                let Ok(y) = a.apply_flat(x) else { continue };
                assert_eq!(
                    at(&inv, &y),
                    Some(unflatten(&a, x)),
                    "{text:?}: A⁻¹(A({x})) != {x}"
                );
            }
        }
    }
    if let Ok(b) = a.pseudoinvert() {
        if feeds(&b, &a) {
            for y in 0..b.in_size().min(limit) {
                let Ok(x) = b.apply_flat(y) else { continue };
                let Some(image) = at(&a, &x) else { continue };
                let Ok(ys) = LinearLayout::identity(a.out_dims()).and_then(|id| id.apply_flat(y))
                else {
                    continue;
                };
                assert_eq!(image, ys, "{text:?}: A(pseudoinvert(A)({y})) != {y}");
            }
        }
    }
});
