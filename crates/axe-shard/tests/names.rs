//! Mesh axis names a user writes: an axis the mesh does not have is refused with the mesh's axes, never
//! matched to another axis by position.

use axe_layout::Layout;
use axe_shard::axe::from_axe;
use axe_shard::notation::jax::parse_jax;
use axe_shard::Mesh;

fn layout(text: &str) -> Layout {
    text.parse().expect("layout")
}

#[test]
fn a_misspelt_device_axis_is_not_matched_by_position() {
    let mesh = Mesh::new(&[("x", 4), ("y", 4)]).expect("mesh");
    // Dim 0 on y, dim 1 on a misspelt x: by position y would have been read as x, and z as y.
    let l = layout("S[(4,32,4,32):(1@gpu_y,32,1@gpu_z,1)]");
    let e = from_axe(&l, &[128, 128], Some(&mesh))
        .expect_err("gpu_z is no axis of the mesh")
        .to_string();
    assert!(
        e.contains("no mesh axis is named 'z' (the mesh's axes are 'x', 'y'), though the layout's other device axes ('y') name mesh axes"),
        "{e}"
    );
    // Spelt right, it is the sharding it says.
    let l = layout("S[(4,32,4,32):(1@gpu_y,32,1@gpu_x,1)]");
    let back = from_axe(&l, &[128, 128], Some(&mesh)).expect("by name");
    assert_eq!(
        back.sharding,
        parse_jax("P('y', 'x')", &mesh, &[128, 128]).expect("spec")
    );
}

#[test]
fn device_axes_named_their_own_way_still_match_by_position() {
    let mesh = Mesh::new(&[("x", 2), ("y", 4)]).expect("mesh");
    let l = layout("S[(2,32,4,32):(1@gpu_a,32,1@gpu_b,1)]");
    let back = from_axe(&l, &[64, 128], Some(&mesh)).expect("by position");
    assert_eq!(
        back.sharding,
        parse_jax("P('x', 'y')", &mesh, &[64, 128]).expect("spec")
    );
}

#[test]
fn an_unknown_subgroup_kind_lists_the_kinds_at_its_place() {
    let text = "{devices=[2,1,4]<=[8] last_tile_dims={manul}}";
    let e = axe_shard::notation::hlo::parse_hlo(text, &[8, 8], None)
        .expect_err("no such subgroup kind")
        .to_string();
    assert!(
        e.contains(
            r#"subgroup kind "manul" is not supported (the kinds are manual, unreduced and replicated)"#
        ),
        "{e}"
    );
    assert!(
        e.contains(&format!(
            "at offset {}",
            text.find("manul").expect("in the text")
        )),
        "{e}"
    );
}
