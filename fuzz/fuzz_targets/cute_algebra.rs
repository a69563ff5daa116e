//! CuTe's algebra on two layouts read from `A;B`: every operator answers or refuses, never a panic;
//! coalescing keeps the function.
#![no_main]
use axe_cute::{
    blocked_product, complement, composition, left_inverse, logical_divide, logical_product,
    right_inverse, zipped_divide, Layout, Tiler,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let Some((a, b)) = text.split_once(';') else {
        return;
    };
    let (Ok(a), Ok(b)) = (a.parse::<Layout>(), b.parse::<Layout>()) else {
        return;
    };
    if let Ok(c) = a.coalesce() {
        assert_eq!(c.size(), a.size(), "coalesce({a}) = {c}");
        for i in 0..a.size().min(256) {
            if let (Ok(x), Ok(y)) = (a.eval(i), c.eval(i)) {
                assert_eq!(x, y, "coalesce({a}) = {c} at {i}");
            }
        }
    }
    let _ = composition(&a, &b);
    let _ = complement(&a, b.size());
    let _ = logical_divide(&a, &Tiler::Layout(b.clone()));
    let _ = zipped_divide(&a, &Tiler::Layout(b.clone()));
    let _ = logical_product(&a, &Tiler::Layout(b.clone()));
    let _ = blocked_product(&a, &b);
    let _ = left_inverse(&a);
    let _ = right_inverse(&a);
    let _ = a.cosize();
    let _ = a.values(1 << 12);
});
