//! axe's JAX → HloSharding lowering against JAX's own (`scripts/shard-jax-corpus` writes the corpus with
//! jax 0.10.2: `NamedSharding(mesh, spec)._to_xla_hlo_sharding(ndim)` over meshes of 8 devices, in three
//! device orders).

use std::collections::BTreeMap;

use axe_shard::notation::hlo::{parse_hlo, parse_hlo_on, to_hlo};
use axe_shard::notation::jax::{parse_jax, to_jax};
use axe_shard::Mesh;

#[test]
fn axe_lowers_every_partition_spec_as_jax_does() {
    let text = include_str!("corpus/jax.jsonl");
    let (mut checked, mut reordered) = (0, 0);
    for (i, line) in text.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).expect("json line");
        let axes: Vec<(String, u64)> = v["mesh"]
            .as_array()
            .expect("mesh")
            .iter()
            .map(|a| {
                (
                    a[0].as_str().expect("name").to_string(),
                    a[1].as_u64().expect("size"),
                )
            })
            .collect();
        let named: Vec<(&str, u64)> = axes.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        // JAX's HloSharding names devices by their position in the mesh (its device assignment), so the
        // mesh's own device order does not enter: the text is the same for every order.
        let mesh = Mesh::new(&named).expect("mesh");
        let ndim = v["ndim"].as_u64().expect("ndim") as usize;
        let dims = vec![16u64; ndim];
        let spec = v["spec"].as_str().expect("spec");
        let want = v["hlo"].as_str().expect("hlo");
        let s =
            parse_jax(spec, &mesh, &dims).unwrap_or_else(|e| panic!("line {}: {spec}: {e}", i + 1));
        let got = to_hlo(&mesh, &s).expect("hlo");
        assert_eq!(got, want, "line {}: {spec} on {axes:?}", i + 1);
        // And back: the text read onto the mesh holds the same regions.
        let back = parse_hlo_on(want, &mesh, &dims).expect("read back");
        assert_eq!(
            back.regions(&mesh).expect("regions"),
            s.regions(&mesh).expect("regions")
        );
        let again = parse_jax(&to_jax(&mesh, &s).expect("jax"), &mesh, &dims).expect("jax again");
        assert_eq!(again, s);
        // On the mesh in the corpus's device order, axe names device ids where JAX names positions:
        // the device at position p holds what JAX's text gives position p.
        let ids: Vec<u64> = v["devices"]
            .as_array()
            .expect("devices")
            .iter()
            .map(|d| d.as_u64().expect("id"))
            .collect();
        let ordered = Mesh::with_devices(&named, ids.clone()).expect("ordered mesh");
        let so = parse_jax(spec, &ordered, &dims).expect("spec on the ordered mesh");
        let ours = to_hlo(&ordered, &so).expect("hlo");
        if ids.iter().enumerate().all(|(p, &d)| d == p as u64) {
            assert_eq!(ours, want, "line {}", i + 1);
        }
        let by_device = |text: &str| -> BTreeMap<u64, Vec<std::ops::Range<u64>>> {
            let (m, s) = parse_hlo(text, &dims, Some(8)).expect("hlo text");
            s.regions(&m)
                .expect("regions")
                .into_iter()
                .map(|r| (r.device, r.region))
                .collect()
        };
        let jax_regions = by_device(want);
        let our_regions = by_device(&ours);
        for (p, &id) in ids.iter().enumerate() {
            assert_eq!(
                our_regions[&id],
                jax_regions[&(p as u64)],
                "line {}: {spec} on devices {ids:?}: axe {ours}, JAX {want}",
                i + 1
            );
        }
        reordered += usize::from(ours != want);
        checked += 1;
    }
    assert!(checked >= 700, "only {checked} corpus lines");
    // The device orders are exercised: many texts name other devices than JAX's positions.
    assert!(
        reordered >= 50,
        "only {reordered} texts differ by device order"
    );
}
