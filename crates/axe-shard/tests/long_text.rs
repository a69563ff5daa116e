#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Errors about sharding text: one about a long text quotes a window of it, never the whole text again
//! (a 50 MB line once cost 100 MB of stderr); a placement torch's text cannot carry is refused where it
//! stands.

use axe_shard::notation::any::parse_any;
use axe_shard::notation::hlo::{parse_hlo, parse_hlo_on};
use axe_shard::Mesh;

#[test]
fn errors_about_long_hlo_text_quote_a_window() {
    let long = format!("{{devices=[2]{}}}", "0".repeat(100_000));
    let e = parse_hlo(&long, &[4], None).unwrap_err().to_string();
    assert!(e.len() < 400, "{} bytes: {}", e.len(), &e[..200]);
    assert!(e.contains("…"), "{e}");
    // A tiled sharding whose device count is not the mesh's, written with a long device list.
    let mesh = Mesh::new(&[("x", 2)]).unwrap();
    let ids: Vec<String> = (0..20_000).map(|i| i.to_string()).collect();
    let text = format!("{{devices=[20000]{}}}", ids.join(","));
    let e = parse_hlo_on(&text, &mesh, &[20_000])
        .unwrap_err()
        .to_string();
    assert!(e.len() < 400, "{} bytes", e.len());
    // Short text is quoted whole, as before.
    let e = parse_hlo("{devices=[2,2]0,1,2,3}", &[4], None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"{devices=[2,2]0,1,2,3}\""), "{e}");
}

#[test]
fn errors_about_devices_off_a_large_mesh_list_a_few() {
    // A device the mesh lacks: the mesh's ids are summarised, not listed.
    let ids: Vec<String> = (1..=4096).map(|i| i.to_string()).collect();
    let mesh_ids: Vec<u64> = (0..4096).collect();
    let mesh = Mesh::with_devices(&[("x", 4096)], mesh_ids).unwrap();
    let text = format!("{{devices=[4096]{}}}", ids.join(","));
    let e = parse_any(&text, None, Some(&mesh), &[4096])
        .unwrap_err()
        .to_string();
    assert!(e.contains("not one of the mesh's devices"), "{e:.300}");
    assert!(e.len() < 400, "{} bytes: {e:.300}", e.len());
}

#[test]
fn a_strided_shard_in_text_is_refused_at_its_offset() {
    use axe_shard::notation::dtensor::parse_dtensor;
    let mesh = Mesh::new(&[("dp", 2), ("tp", 2)]).unwrap();
    let text = "[_StridedShard(0, split_factor=2), Shard(0)]";
    match parse_dtensor(text, &mesh, &[8]) {
        Err(axe_shard::ShardError::Parse { msg, offset, .. }) => {
            assert!(msg.contains("_StridedShard"), "{msg}");
            assert_eq!(offset, 1);
        }
        other => panic!("{other:?}"),
    }
    // A comma inside a placement's parentheses does not split it: Shard(dim=0) still reads.
    assert!(parse_dtensor("[Shard(dim=0), Partial(reduce_op='sum')]", &mesh, &[8]).is_ok());
    assert!(parse_dtensor("[Shard(0), Replicate()]", &mesh, &[8]).is_ok());
}
