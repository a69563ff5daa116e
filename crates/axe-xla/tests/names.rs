#![allow(clippy::unwrap_used, missing_docs)]
//! An element type XLA does not have is refused at its place, with the element types there are.

use axe_xla::parse_shape;

#[test]
fn an_unknown_element_type_lists_the_element_types() {
    let e = parse_shape("f33[4]{0}").unwrap_err().to_string();
    assert!(
        e.starts_with(r#"unknown element type "f33"; the element types are pred, s1, s2, s4, s8,"#),
        "{e}"
    );
    assert!(
        e.contains(" bf16, f32, f64,") && e.contains("at offset 0\n  f33[4]{0}\n  ^"),
        "{e}"
    );
    // An uppercase spelling of a real type says just that.
    let e = parse_shape("F32[4]").unwrap_err().to_string();
    assert!(
        e.starts_with(r#"unknown element type "F32" (element types are lowercase) at offset 0"#),
        "{e}"
    );
}
