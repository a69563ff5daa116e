//! A keyword a Gluon layout or a TTGIR attribute does not take is refused at its place, with the
//! keywords it does take; layouts whose dims do not meet name the dims each has.

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

#[test]
fn composing_layouts_whose_dims_do_not_meet_lists_the_dims() {
    use axe_triton::LinearLayout;
    let dims = |names: &[&str]| -> Vec<(String, u64)> {
        names.iter().map(|n| (n.to_string(), 4)).collect()
    };
    let a = LinearLayout::identity(&dims(&["dim0", "dim1"])).unwrap();
    let b = LinearLayout::identity(&dims(&["dim0", "dmi1"])).unwrap();
    let e = a.compose(&b).unwrap_err().to_string();
    assert!(
        e.contains("out-dim `dim1` is not an in-dim of the outer layout (its in-dims: dim0, dmi1)"),
        "{e}"
    );
    let e = a.invert_and_compose(&b).unwrap_err().to_string();
    assert!(
        e.contains(
            "out-dim `dim1` is not an out-dim of the outer layout (its out-dims: dim0, dmi1)"
        ),
        "{e}"
    );
    let c = LinearLayout::identity(&dims(&["dim0"])).unwrap();
    let e = a.compose(&c).unwrap_err().to_string();
    assert!(
        e.contains("2 out-dims (dim0, dim1) feed 1 in-dims (dim0)"),
        "{e}"
    );
    let e = a.invert_and_compose(&c).unwrap_err().to_string();
    assert!(
        e.contains("2 out-dims (dim0, dim1) against 1 (dim0)"),
        "{e}"
    );
}
