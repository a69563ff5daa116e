//! Names a user passes on the command line (benchmark cases, ...): an unknown or misspelt one is an
//! error that says what was wrong and lists what is accepted, never an empty run that exits 0.
#![allow(clippy::unwrap_used)]

mod common;

use common::run;

#[test]
fn bench_relayout_only_matching_no_case_lists_the_cases() {
    let (code, out, err) = run(&["bench", "relayout", "--only", "no such case", "--runs", "1"]);
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains(r#"--only "no such case" is in no case's name; the cases are: "#),
        "{err}"
    );
    assert!(
        err.contains("transpose"),
        "the case names are listed: {err}"
    );
    assert!(out.is_empty(), "nothing is measured: {out}");
}

#[test]
fn bench_cute_only_matching_no_case_lists_the_cases() {
    let (code, out, err) = run(&[
        "bench",
        "cute",
        "--rounds",
        "1",
        "--pycute",
        "/nonexistent/axe-test/python",
        "--only",
        "compostion",
    ]);
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains(r#"--only "compostion" is in no case's name; the cases are: "#),
        "{err}"
    );
    assert!(err.contains("composition"), "{err}");
}

#[test]
fn xla_from_axe_type_lists_the_element_types() {
    let (code, out, err) = run(&[
        "xla", "from-axe", "S[4:1]", "--shape", "4", "--type", "flaot32",
    ]);
    assert_ne!(code, 0, "{out}");
    let all = format!("{out}{err}");
    assert!(
        all.contains(r#"--type "flaot32" is not an element type; the element types are pred, s1,"#),
        "{all}"
    );
}

#[test]
fn shard_show_axe_layout_with_a_misspelt_device_axis_is_refused() {
    // gpu_y on dim 0 and a misspelt gpu_z on dim 1: read by position this was P('x', 'y').
    let (code, out, err) = run(&[
        "shard",
        "show",
        "S[(4,32,4,32):(1@gpu_y,32,1@gpu_z,1)]",
        "--from",
        "axe",
        "--shape",
        "f32[128,128]",
        "--mesh",
        "x=4,y=4",
    ]);
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains("no mesh axis is named 'z' (the mesh's axes are 'x', 'y'), though the layout's other device axes ('y') name mesh axes"),
        "{err}"
    );
}

#[test]
fn hlo_sharding_subgroup_kind_lists_the_kinds() {
    let (code, out, err) = run(&[
        "shard",
        "show",
        "{devices=[2,1,4]<=[8] last_tile_dims={manul}}",
        "--shape",
        "f32[8,8]",
        "--mesh",
        "8",
    ]);
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains(
            r#"subgroup kind "manul" is not supported (the kinds are manual, unreduced and replicated)"#
        ),
        "{err}"
    );
    assert!(err.contains('^'), "shown at its place: {err}");
}
