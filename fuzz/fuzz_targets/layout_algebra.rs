//! The Axe layout operators on two layouts read from `A;B`: every operator answers or refuses, never a
//! panic; `tile_of` inverts `tile` (`tile(A, tile_of(tile(A, B), A)) ≡ tile(A, B)`).
#![no_main]
use axe_layout::Layout;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let Some((a, b)) = text.split_once(';') else {
        return;
    };
    let (Ok(a), Ok(b)) = (a.parse::<Layout>(), b.parse::<Layout>()) else {
        return;
    };
    let (sa, sb) = ([a.size()], [b.size()]);
    let _ = a.group(&sa);
    let _ = a.slice(&sa, &[0..a.size().min(3)]);
    let _ = a.direct_sum(&b, &sb, &sa);
    let _ = a.equivalent(&b);
    let _ = a.spans();
    // `apply` lists an element's every replica point (up to 2^24): bounded by what it answers, which is
    // not what this target is after.
    if a.replica_count() <= 1 << 12 {
        let _ = a.apply(a.size().saturating_sub(1));
    }
    if let Ok((t, shape)) = a.tile(&b, &sa, &sb) {
        if let Ok((b2, outer)) = t.tile_of(&a, &shape, &sa) {
            if let Ok((t2, _)) = a.tile(&b2, &sa, &outer) {
                if let Ok(same) = t2.equivalent(&t) {
                    assert!(
                        same,
                        "A={a} B={b}: tile={t}, tile_of gave {b2}, whose tile is {t2}"
                    );
                }
            }
        }
    }
});
