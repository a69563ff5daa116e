//! Shardy shardings against XLA and JAX (`scripts/shard-sdy-corpus` writes the corpus with jaxlib 0.10.2):
//! each random `#sdy.sharding<...>` gives every device the region of the HloSharding XLA's Shardy export
//! makes of it (or is refused where XLA refuses it), prints back to a text that reads the same, and each
//! `NamedSharding` prints as `jax.jit(...).lower()` prints it.
#![allow(clippy::panic)]

use axe_shard::notation::sdy::parse_sdy_mesh;
use axe_shard::{parse_any, print, Notation};

mod common;
use common::holdings;

#[test]
fn sdy_reads_as_xla_exports_it_and_prints_back() {
    let (mut read, mut refused, mut specs) = (0, 0, 0);
    for (i, line) in include_str!("corpus/sdy.jsonl").lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).expect("json line");
        let mesh = parse_sdy_mesh(v["mesh"].as_str().expect("mesh")).expect("mesh");
        let dims: Vec<u64> = v["shape"]
            .as_array()
            .expect("shape")
            .iter()
            .map(|d| d.as_u64().expect("dim"))
            .collect();
        let sdy = v["sdy"].as_str().expect("sdy");
        let got = parse_any(sdy, None, Some(&mesh), &dims);
        if v.get("error").is_some() {
            assert!(got.is_err(), "line {}: {sdy} is refused by XLA", i + 1);
            refused += 1;
            continue;
        }
        let (m1, s1) = got.unwrap_or_else(|e| panic!("line {}: {sdy}: {e}", i + 1));
        if let Some(spec) = v["spec"].as_str() {
            let (m0, s0) = parse_any(spec, Some(Notation::Jax), Some(&mesh), &dims).expect("spec");
            assert_eq!(
                print(Notation::Sdy, &m0, &s0).expect("sdy"),
                sdy,
                "line {}",
                i + 1
            );
            assert_eq!(holdings(&m0, &s0), holdings(&m1, &s1), "line {}", i + 1);
            specs += 1;
            continue;
        }
        let hlo = v["hlo"].as_str().expect("hlo");
        let (m2, s2) = parse_any(hlo, Some(Notation::Hlo), Some(&mesh), &dims).expect("hlo");
        assert_eq!(
            holdings(&m1, &s1),
            holdings(&m2, &s2),
            "line {}: {sdy} against XLA's {hlo}",
            i + 1
        );
        // Printed back: one canonical text, read on the same mesh to the same holdings.
        let t = print(Notation::Sdy, &m1, &s1).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        let (m3, s3) = parse_any(&t, None, Some(&m1), &dims)
            .unwrap_or_else(|e| panic!("line {}: {t}: {e}", i + 1));
        assert_eq!(
            holdings(&m1, &s1),
            holdings(&m3, &s3),
            "line {}: {t}",
            i + 1
        );
        assert_eq!(
            print(Notation::Sdy, &m3, &s3).expect("sdy"),
            t,
            "line {}",
            i + 1
        );
        read += 1;
    }
    assert!(
        read >= 150 && refused >= 10 && specs >= 10,
        "{read} {refused} {specs}"
    );
}
