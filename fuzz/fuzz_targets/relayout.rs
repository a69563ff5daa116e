//! Relayouts between two XLA layouts of one array, read from `SRC|DST` (two shapes of the same element
//! type and dims, whole bytes an element, at most 4096 elements): every kernel set this processor runs,
//! with and without non-temporal stores, on one thread (and two with the best set), moves every element to where XLA's index
//! function puts it (`axe_xla::element_offset`, not the relayout's own tables) and zero-fills the rest.
#![no_main]
use axe_relayout::{relayout, Isa, Options, TensorLayout};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let Some((a, b)) = text.split_once('|') else {
        return;
    };
    let (Ok(a), Ok(b)) = (axe_xla::parse_shape(a), axe_xla::parse_shape(b)) else {
        return;
    };
    let (Some(a), Some(b)) = (a.as_array(), b.as_array()) else {
        return;
    };
    if a.element_type != b.element_type || a.dims != b.dims {
        return;
    }
    let bits = axe_xla::element_bits(a);
    if bits % 8 != 0 || bits != axe_xla::element_bits(b) {
        return;
    }
    let (Ok(dims), Ok(_)) = (axe_xla::static_dims(a), axe_xla::static_dims(b)) else {
        return;
    };
    let count = dims.iter().try_fold(1i64, |p, &d| p.checked_mul(d));
    if !matches!(count, Some(1..=4096)) {
        return;
    }
    let (Ok(sl), Ok(dl)) = (TensorLayout::from_xla(a), TensorLayout::from_xla(b)) else {
        return;
    };
    if sl.bytes() > 1 << 20 || dl.bytes() > 1 << 20 {
        return;
    }
    let width = (bits / 8) as usize;
    let src: Vec<u8> = (0..sl.bytes()).map(|i| (i * 131 % 251) as u8).collect();
    // Every element's index, row-major, with its byte offset in each buffer.
    let mut places = Vec::new();
    let mut index = vec![0i64; dims.len()];
    'all: loop {
        let s = axe_xla::element_offset(a, &index)
            .expect("an index within the dims")
            .byte_offset;
        let d = axe_xla::element_offset(b, &index)
            .expect("an index within the dims")
            .byte_offset;
        places.push((index.clone(), s as usize, d as usize));
        for k in (0..dims.len()).rev() {
            index[k] += 1;
            if index[k] < dims[k] {
                continue 'all;
            }
            index[k] = 0;
        }
        break;
    }
    for isa in Isa::available() {
        for streaming in [false, true] {
            // Two threads with the best set only: a split of the work is the same for every set.
            let threads_tried: &[usize] = if isa == Isa::detect() { &[1, 2] } else { &[1] };
            for &threads in threads_tried {
                let opts = Options {
                    zero_padding: true,
                    threads,
                    streaming: Some(streaming),
                    isa: Some(isa),
                    walk: None,
                };
                let mut dst = vec![0xabu8; dl.bytes() as usize];
                if let Err(e) = relayout(&src, &sl, &mut dst, &dl, &opts) {
                    panic!("{a} -> {b} ({}): {e}", isa.name());
                }
                let mut held = vec![false; dst.len()];
                for (index, s, d) in &places {
                    assert_eq!(
                        dst[*d..d + width],
                        src[*s..s + width],
                        "{a} -> {b} ({}, streaming {streaming}, {threads} threads): element {index:?}",
                        isa.name()
                    );
                    held[*d..d + width].fill(true);
                }
                for (k, byte) in dst.iter().enumerate() {
                    assert!(
                        held[k] || *byte == 0,
                        "{a} -> {b} ({}): padding byte {k} is {byte}",
                        isa.name()
                    );
                }
            }
        }
    }
});
