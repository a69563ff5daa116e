//! The Axe form of an XLA array layout (`axe_xla::to_axe`): made or refused, never a panic; where made,
//! each logical element's coordinate on `m` is the offset XLA's index function gives it
//! (`axe_xla::element_offset`); reading the Axe layout back as an XLA layout answers or refuses.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let Ok(shape) = axe_xla::parse_shape(text) else {
        return;
    };
    let Some(a) = shape.as_array() else {
        return;
    };
    let Ok(form) = axe_xla::to_axe(a) else {
        return;
    };
    let padded: Option<u64> = form
        .padded_shape
        .iter()
        .try_fold(1u64, |p, &d| p.checked_mul(d));
    if !matches!(padded, Some(1..=4096)) {
        return;
    }
    let _ = axe_xla::from_axe(&form.layout, &form.padded_shape);
    let m = axe_layout::Axis::memory();
    let rank = form.padded_shape.len();
    let mut index = vec![0u64; rank];
    'all: loop {
        if index.iter().zip(&form.region).all(|(i, r)| r.contains(i)) {
            let flat = axe_layout::flatten(&index, &form.padded_shape)
                .expect("an index of the padded shape");
            let at = form
                .layout
                .base_at(flat)
                .expect("a position within the layout")
                .get(&m);
            let xla: Vec<i64> = index.iter().map(|&i| i as i64).collect();
            // An array whose bits pass 2^63 has no bit offsets: XLA's index function refuses it.
            let Ok(want) = axe_xla::element_offset(a, &xla).map(|o| o.linear) else {
                return;
            };
            assert_eq!(
                at, want,
                "{text:?}: element {index:?} is at {at} in the Axe form {}, at {want} by XLA",
                form.layout
            );
        }
        for k in (0..rank).rev() {
            index[k] += 1;
            if index[k] < form.padded_shape[k] {
                continue 'all;
            }
            index[k] = 0;
        }
        break;
    }
});
