//! A keyword a Gluon layout or a TTGIR attribute does not take is refused at its place, with the
//! keywords it does take.

#![allow(clippy::unwrap_used, missing_docs)]

use axe_triton::gluon::parse_gluon;

#[test]
fn a_misspelt_gluon_argument_lists_the_arguments() {
    let text = "BlockedLayout(size_per_thread=[1, 4], threads_per_wrap=[8, 4], warps_per_cta=[4, 1], order=[1, 0])";
    let e = parse_gluon(text).unwrap_err().to_string();
    assert!(
        e.contains("`BlockedLayout` has no argument `threads_per_wrap` (it has size_per_thread, threads_per_warp, warps_per_cta, order"),
        "{e}"
    );
    assert!(e.contains("at offset") && e.contains('^'), "{e}");
}

#[test]
fn a_misspelt_padded_shared_key_lists_the_keys() {
    let e = parse_gluon("#ttg.padded_shared<[4:+1] {ofset = [[0, 1], [1, 0]]}>")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unexpected key `ofset` (the keys are offset, block, order and shape)"),
        "{e}"
    );
}
