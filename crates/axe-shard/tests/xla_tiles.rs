//! axe's reading and printing of tile assignments against XLA's own HLO parser and printer
//! (`scripts/shard-jax-corpus` writes the corpus with jaxlib: random iotas with and without transposes,
//! explicit device lists, and texts XLA refuses).

use axe_shard::notation::hlo::{parse_hlo, to_hlo};
use axe_shard::notation::iota::iota_text;

/// The device list of an explicit `{devices=[...]a,b,c...}` text, if it is one.
fn explicit_list(text: &str) -> Option<Vec<u64>> {
    let body = text.split(']').nth(1)?;
    let list = body.split([' ', '}']).next()?;
    if list.starts_with("<=") {
        return None;
    }
    list.split(',').map(|x| x.parse().ok()).collect()
}

#[test]
fn axe_reads_and_prints_tile_assignments_as_xla_does() {
    let corpus = include_str!("corpus/xla_tiles.jsonl");
    let (mut printed, mut refused, mut beyond) = (0, 0, 0);
    for (i, line) in corpus.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).expect("json line");
        let text = v["text"].as_str().expect("text");
        let rank = v["rank"].as_u64().expect("rank") as usize;
        let n = v["devices"].as_u64().expect("devices");
        let dims = vec![12u64; rank];
        let dims_i = vec![12i64; rank];
        let got = parse_hlo(text, &dims, Some(n));
        if let Some(err) = v["error"].as_str() {
            let e = got.expect_err(&format!(
                "line {}: XLA refuses {text} ({err}); axe read it",
                i + 1
            ));
            // The reader `axe hlo shards` and HLO modules use refuses it too, with the same error.
            let x = axe_xla::hlo::sharding::parse_sharding(text).map(|s| s.shards(&dims_i));
            assert!(
                matches!(x, Err(_) | Ok(Err(_))),
                "line {}: XLA refuses {text}; axe-xla read it",
                i + 1
            );
            if let (Err(axe_xla::XlaError::Parse(p)), axe_shard::ShardError::Parse { offset, .. }) =
                (&x, &e)
            {
                assert_eq!(p.offset, *offset, "line {}: {text}", i + 1);
            }
            let module = format!(
                "HloModule m\n\nENTRY %e {{\n  ROOT %p = f32[{}] parameter(0), sharding={text}\n}}\n",
                vec!["12"; rank].join(",")
            );
            assert!(
                axe_xla::hlo::parse_module(&module).is_err(),
                "line {}: XLA refuses a module with sharding={text}; axe read it",
                i + 1
            );
            refused += 1;
            continue;
        }
        let want = v["xla"].as_str().expect("xla");
        if explicit_list(text).is_some_and(|l| l.iter().any(|&d| d >= n)) {
            // XLA's parser has no device count; axe refuses an id beyond the one given.
            let e = got.expect_err("an id beyond the count");
            assert!(e.to_string().contains("beyond"), "line {}: {e}", i + 1);
            beyond += 1;
            continue;
        }
        let (mesh, s) = got.unwrap_or_else(|e| panic!("line {}: {text}: {e}", i + 1));
        let ours = to_hlo(&mesh, &s).expect("hlo");
        if n == 1 && want.ends_with("]<=[1]}") {
            // XLA keeps a one-device iota tiled; on one device that is `{replicated}`, which axe prints.
            assert_eq!(ours, "{replicated}", "line {}: {text}", i + 1);
            printed += 1;
            continue;
        }
        match explicit_list(want).and_then(|l| iota_text(&l).map(|t| (l, t))) {
            // XLA keeps an explicit list that is an iota as written; axe prints the iota.
            Some((_, iota)) => {
                let head = want.split(']').next().expect("grid");
                assert!(
                    ours.starts_with(&format!("{head}]{iota}")),
                    "line {}: {text}: XLA {want}, axe {ours}",
                    i + 1
                );
            }
            None => assert_eq!(ours, want, "line {}: {text}", i + 1),
        }
        // What axe prints reads back to the same regions.
        let (m2, s2) = parse_hlo(&ours, &dims, Some(n)).expect("read back");
        let by_dev = |m: &axe_shard::Mesh, s: &axe_shard::Sharding| {
            let mut r: Vec<_> = s
                .regions(m)
                .expect("regions")
                .into_iter()
                .map(|r| (r.device, r.region))
                .collect();
            r.sort_by_key(|x| x.0);
            r
        };
        assert_eq!(by_dev(&m2, &s2), by_dev(&mesh, &s), "line {}", i + 1);
        printed += 1;
    }
    assert!(
        printed >= 900 && refused >= 20 && beyond >= 5,
        "{printed} printed, {refused} refused, {beyond} beyond the count"
    );
}
