//! `axe shard` on HloShardings over device ids in any order: shown, planned and run (threads backend, every
//! destination element checked) for pairs whose tile assignments follow no common mesh order.
#![allow(clippy::unwrap_used)]

mod common;

use common::{json_lines, run};

/// A small deterministic generator of device orders.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn shuffled(&mut self, n: u64) -> Vec<u64> {
        let mut v: Vec<u64> = (0..n).collect();
        for i in (1..v.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
        v
    }
}

fn list(v: &[u64]) -> String {
    v.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

#[test]
fn the_issue_examples_plan_and_run() {
    // A permuted tile list to the iota: a collective-permute.
    let v = json_lines(&[
        "shard",
        "plan",
        "{devices=[4]0,3,1,2}",
        "{devices=[4]<=[4]}",
        "--shape",
        "f32[8]",
        "--json",
    ]);
    assert_eq!(v[0]["collective"], "collective-permute", "{v:?}");
    assert_eq!(v[0]["bytes"], 24);
    let v = json_lines(&[
        "shard",
        "run",
        "{devices=[4]0,3,1,2}",
        "{devices=[4]<=[4]}",
        "--shape",
        "f32[8]",
        "--json",
    ]);
    assert_eq!(v[0]["verified"], true);
    // A 2x2 grid on a device count.
    let v = json_lines(&[
        "shard",
        "show",
        "{devices=[2,2]<=[4]}",
        "--mesh",
        "4",
        "--shape",
        "f32[4,4]",
        "--json",
    ]);
    assert_eq!(v[0]["mesh"]["sizes"], serde_json::json!([2, 2]), "{v:?}");
    // A replicated list in another order holds everything everywhere.
    let (code, out, err) = run(&[
        "shard",
        "show",
        "{devices=[1,2]1,0 last_tile_dim_replicate}",
        "--mesh",
        "2",
        "--shape",
        "f32[4]",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("{replicated}"), "{out}");
    let v = json_lines(&[
        "shard",
        "run",
        "{devices=[2,2]<=[4]}",
        "{devices=[1,1,4]3,1,0,2 last_tile_dim_replicate}",
        "--mesh",
        "4",
        "--shape",
        "s32[6,2]",
        "--json",
    ]);
    assert_eq!(v[0]["verified"], true);
}

#[test]
fn random_device_orders_run_and_every_device_gets_its_shard() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // (source grid, destination grid, shape): a grid with one dim more than the shape ends in a replicated
    // subgroup.
    let grids = [
        ("[8]", "[8]", "f32[13]"),
        ("[2,4]", "[4,2]", "f32[6,5]"),
        ("[2,2,2]", "[8,1]", "s32[4,3]"),
        ("[1,2,4]", "[2,2,2]", "bf16[7,4]"),
        ("[6,1]", "[3,2]", "f32[9,4]"),
        ("[2,3,2]", "[12,1]", "f32[12,5]"),
        ("[3,4]", "[2,6]", "f32[5]"),
    ];
    let dims = |g: &str| g.matches(',').count() + 1;
    for (g1, g2, shape) in grids {
        let n: u64 = g1
            .trim_matches(['[', ']'])
            .split(',')
            .map(|x| x.parse::<u64>().unwrap())
            .product();
        let rank = shape.matches(',').count() + 1;
        let rep = |g: &str| {
            if dims(g) > rank {
                " last_tile_dim_replicate"
            } else {
                ""
            }
        };
        for _ in 0..3 {
            let src = format!("{{devices={g1}{}{}}}", list(&rng.shuffled(n)), rep(g1));
            let dst = format!("{{devices={g2}{}{}}}", list(&rng.shuffled(n)), rep(g2));
            let v = json_lines(&["shard", "run", &src, &dst, "--shape", shape, "--json"]);
            assert_eq!(v[0]["verified"], true, "{src} -> {dst}: {v:?}");
        }
    }
}

#[test]
fn iota_tile_assignments_print_as_xla_prints_them_and_xlas_refusals_are_errors() {
    for (text, want) in [
        (
            "{devices=[2,4]<=[2,2,2]T(1,2,0)}",
            "{devices=[2,4]<=[2,4]T(1,0)}",
        ),
        (
            "{devices=[4,2]<=[2,4]T(1,0)}",
            "{devices=[4,2]<=[2,4]T(1,0)}",
        ),
    ] {
        let (code, out, err) = run(&["shard", "convert", text, "--to", "hlo"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(out.trim(), want);
    }
    for (args, want) in [
        (
            vec!["shard", "show", "{devices=[1]0}"],
            "more than one device",
        ),
        (vec!["shard", "show", "{devices=[4]<=[4]T(0)}"], "offset 17"),
        (
            vec!["shard", "show", "{devices=[4]0,1,2,9}", "--mesh", "4"],
            "device 9",
        ),
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 1, "{args:?}");
        assert!(err.contains(want) && !err.contains("panicked"), "{err}");
    }
    // `hlo shards` reads with the same reader: the same refusal, at the same offset.
    for (text, want) in [
        ("{devices=[1]0}", "offset 1"),
        ("{devices=[1,1]2 last_tile_dim_replicate}", "offset 1"),
        ("{devices=[4]<=[4]T(0)}", "offset 17"),
    ] {
        let shape = "f32[4]";
        let (code, out, hlo_err) = run(&["hlo", "shards", "--shape", shape, text]);
        assert_eq!(code, 1, "hlo shards {text}: {out}");
        assert!(
            hlo_err.contains(want) && !hlo_err.contains("panicked"),
            "{hlo_err}"
        );
        let (code, _, show_err) = run(&["shard", "show", "--shape", shape, text]);
        assert_eq!(code, 1, "shard show {text}");
        assert!(show_err.contains(want), "{show_err}");
    }
}

#[test]
fn hlo_read_onto_the_users_mesh_keeps_its_device_order() {
    // On devices 3,2,1,0, {devices=[2,2]<=[4]} gives device 0 the first tile, which P('x','y') gives
    // device 3: the PartitionSpec cannot say it, and the HLO form is the text's own.
    let mesh = [
        "--mesh",
        "x=2,y=2",
        "--devices",
        "3,2,1,0",
        "--shape",
        "f32[4,4]",
    ];
    let convert = |text: &str, to: &str| {
        let mut a = vec!["shard", "convert", text, "--to", to];
        a.extend_from_slice(&mesh);
        run(&a)
    };
    let (code, _, err) = convert("{devices=[2,2]<=[4]}", "jax");
    assert_eq!(code, 1);
    assert!(err.contains("not expressible in jax"), "{err}");
    let (code, out, err) = convert("{devices=[2,2]<=[4]}", "hlo");
    assert_eq!((code, out.trim()), (0, "{devices=[2,2]<=[4]}"), "{err}");
    let (code, out, err) = convert("P('x','y')", "hlo");
    assert_eq!((code, out.trim()), (0, "{devices=[2,2]3,2,1,0}"), "{err}");
    // Without --devices, the mesh's order is 0..N-1 and {devices=[4]0,3,1,2} is no P('x') on it.
    let (code, _, err) = run(&[
        "shard",
        "convert",
        "{devices=[4]0,3,1,2}",
        "--to",
        "dtensor",
        "--mesh",
        "x=4",
        "--shape",
        "f32[8]",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("device order [0, 3, 1, 2]"), "{err}");
    // The text report names the mesh's device order where it is not 0..N-1.
    let (code, out, err) = run(&[
        "shard",
        "show",
        "P('x')",
        "--mesh",
        "x=4",
        "--devices",
        "3,2,1,0",
        "--shape",
        "f32[8]",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("mesh     x=4 devices 3,2,1,0\n"), "{out}");
    // A manual subgroup keeps the order XLA wrote; one that splits no dim is {manual}.
    let t = "{devices=[2,4]<=[2,2,2]T(0,2,1) last_tile_dims={manual}}";
    let v = json_lines(&[
        "shard", "show", t, "--shape", "f32[4]", "--mesh", "8", "--json",
    ]);
    assert_eq!(v[0]["hlo"], t);
    let (code, _, err) = run(&[
        "shard",
        "plan",
        "{devices=[2,4]<=[8] last_tile_dims={manual}}",
        t,
        "--shape",
        "f32[4]",
        "--mesh",
        "8",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("manual (or still partial) axes must hold each device at one coordinate"),
        "{err}"
    );
    let (code, out, err) = run(&[
        "shard",
        "plan",
        "{devices=[1,2]1,0 last_tile_dims={manual}}",
        "{manual}",
        "--shape",
        "f32[4]",
        "--mesh",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("none: 0 B"), "{out}");
}
