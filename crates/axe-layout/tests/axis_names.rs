#![allow(clippy::unwrap_used, missing_docs)]
//! `Layout::axis`: a name the layout does not mention is an error that names it and lists the axes.

use axe_layout::{Axis, Layout, LayoutError};

fn l(s: &str) -> Layout {
    s.parse().unwrap()
}

#[test]
fn a_mentioned_axis_is_found_wherever_it_appears() {
    let t = l("S[(8,2):(4@lane,1)] + R[2:4@warp] + 3@gpu");
    for name in ["lane", "m", "warp", "gpu"] {
        assert_eq!(t.axis(name).unwrap(), Axis::new(name).unwrap());
    }
}

#[test]
fn an_absent_axis_names_itself_and_lists_the_axes() {
    let t = l("S[(8,2):(4@lane,1)] + R[2:4@warp]");
    let e = t.axis("nope").unwrap_err();
    assert_eq!(
        e,
        LayoutError::UnknownAxis {
            axis: "nope".into(),
            axes: vec!["lane".into(), "m".into(), "warp".into()],
        }
    );
    assert_eq!(
        e.to_string(),
        r#"the layout has no axis "nope"; its axes are lane, m, warp"#
    );
    // The memory axis is not implied: a layout on threads alone does not have it.
    assert!(matches!(
        l("S[32:1@lane]").axis("m"),
        Err(LayoutError::UnknownAxis { .. })
    ));
    // A name that is not an identifier says so, before any lookup.
    assert!(matches!(t.axis("9x"), Err(LayoutError::InvalidAxis(_))));
}

#[test]
fn a_layout_with_no_axis_takes_any_valid_name() {
    let t = l("S[]");
    assert!(t.axes().is_empty());
    assert_eq!(t.axis("lane").unwrap(), Axis::new("lane").unwrap());
    assert!(matches!(t.axis(""), Err(LayoutError::InvalidAxis(_))));
}
