//! The `#ttg.padded_shared<...>` attribute of TTGIR, read as the Gluon `PaddedSharedLayout` it prints
//! from, in both of Triton's forms, and refused with the place where it is wrong.

#![allow(clippy::unwrap_used, missing_docs)]

use axe_triton::gluon::parse_gluon;
use axe_triton::TritonError;

#[test]
fn long_form_reads_as_its_gluon_layout() {
    // Triton prints the Gluon layout below as this attribute: block bases are tensor positions, the
    // Gluon form's cga_layout is in units of one CTA's part (here 4×2 of 8×2).
    let attr = parse_gluon(
        "#ttg.padded_shared<[4:+1, 8:+2] {offset = [[0, 1], [2, 0], [1, 0]], block = [[4, 0]]}>",
    )
    .unwrap();
    let gluon = parse_gluon(
        "PaddedSharedLayout(interval_padding_pairs=[[4, 1], [8, 2]], offset_bases=[[0, 1], [2, 0], [1, 0]], cga_layout=[[1, 0]], shape=[8, 2])",
    )
    .unwrap();
    assert_eq!(attr, gluon);
    // The shape is what the bases reach, so no --shape is needed.
    assert_eq!(
        attr.to_linear(&[8, 2]).unwrap().to_ttg(),
        "#ttg.linear<{offset = [[0, 1], [2, 0], [1, 0]], block = [[4, 0]]}>"
    );
}

#[test]
fn short_form_is_the_identity_along_order() {
    let attr = parse_gluon("#ttg.padded_shared<[4:+1] {order = [1, 0], shape = [2, 4]}>").unwrap();
    let gluon = parse_gluon(
        "PaddedSharedLayout(interval_padding_pairs=[[4, 1]], offset_bases=[[0, 1], [0, 2], [1, 0]], cga_layout=[], shape=[2, 4])",
    )
    .unwrap();
    assert_eq!(attr, gluon);
    // Row 1 starts after 4 elements and 1 padding element.
    assert_eq!(
        attr.to_axe(&[2, 4]).unwrap().to_string(),
        "S[(2,4):(5@offset,1@offset)]"
    );
}

#[test]
fn ctas_holding_copies_are_accepted_as_triton_accepts_them() {
    let attr =
        parse_gluon("#ttg.padded_shared<[4:+1] {offset = [[0, 1], [1, 0]], block = [[0, 0]]}>")
            .unwrap();
    let ll = attr.to_linear(&[2, 2]).unwrap();
    assert!(ll.is_surjective() && !ll.is_injective());
    assert_eq!(
        attr.to_axe(&[2, 2]).unwrap().to_string(),
        "S[4:1@offset] + R[2:1@block]"
    );
}

#[test]
fn bad_attributes_are_refused_where_they_are_wrong() {
    let at = |text: &str| match parse_gluon(text).unwrap_err() {
        TritonError::Parse(p) => (p.offset, p.message),
        other => panic!("{text}: {other}"),
    };
    // A padding that is not a power of two: at the pairs.
    let (o, m) = at("#ttg.padded_shared<[4:+3] {order = [0], shape = [4]}>");
    assert_eq!(o, 20, "{m}");
    assert!(m.contains("powers of two"), "{m}");
    // An interval given twice.
    assert!(
        at("#ttg.padded_shared<[4:+1, 4:+2] {order = [0], shape = [4]}>")
            .1
            .contains("twice")
    );
    // A key Triton does not know, at its value.
    let (o, m) = at("#ttg.padded_shared<[4:+1] {order = [0], size = [4]}>");
    assert_eq!(o, 47, "{m}");
    assert!(m.contains("size"), "{m}");
    // An order that is not a permutation of the shape's dims.
    assert!(
        at("#ttg.padded_shared<[4:+1] {order = [0, 0], shape = [4, 4]}>")
            .1
            .contains("order")
    );
    // A block base inside one CTA's part: Triton aborts on it ("layout must factor into CTA and CGA
    // layouts"), axe says why, at the block bases.
    let (o, m) = at("#ttg.padded_shared<[4:+1] {offset = [[0, 1], [2, 0]], block = [[1, 0]]}>");
    assert_eq!(o, 62, "{m}");
    assert!(m.contains("whole CTA parts"), "{m}");
    // Broadcast within a CTA.
    assert!(
        at("#ttg.padded_shared<[4:+1] {offset = [[0, 1], [0, 0]], block = []}>")
            .1
            .contains("zeros")
    );
    // Leading space keeps offsets in the whole input.
    let (o, _) = at("  #ttg.padded_shared<[4:+3] {order = [0], shape = [4]}>");
    assert_eq!(o, 22);
    // Unclosed.
    assert!(parse_gluon("#ttg.padded_shared<[4:+1] {order = [0], shape = [4]}").is_err());
}
