#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `axe hlo stats` on the review's repros: each value counted once, only byte-moving relayouts, and
//! the shardings `axe hlo shards` refuses refused with its message.

mod common;

use common::run;
use serde_json::Value;

/// Writes `text` to a file of its own and runs `axe hlo stats [--json] FILE`.
fn stats(name: &str, text: &str, json: bool) -> (i32, String, String) {
    let dir = std::env::temp_dir().join(format!("axe-hlo-review-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.hlo"));
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap();
    if json {
        run(&["hlo", "stats", "--json", path])
    } else {
        run(&["hlo", "stats", path])
    }
}

fn stats_json(name: &str, text: &str) -> Value {
    let (code, out, err) = stats(name, text, true);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn async_pairs_and_prefetches_count_each_buffer_once() {
    let m3b = "HloModule m3, num_partitions=2\n\n\
        add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n\
        ENTRY main {\n  p0 = f32[1024]{0} parameter(0)\n  \
        ags = (f32[1024]{0}, f32[2048]{0}) all-gather-start(p0), dimensions={0}, replica_groups={{0,1}}, channel_id=1, use_global_device_ids=true\n  \
        agd = f32[2048]{0} all-gather-done(ags)\n  \
        cps = (f32[1024]{0}, f32[1024]{0}, u32[], u32[]) collective-permute-start(p0), channel_id=2, source_target_pairs={{0,1},{1,0}}\n  \
        cpd = f32[1024]{0} collective-permute-done(cps)\n  \
        ars = f32[1024]{0} all-reduce-start(p0), replica_groups={{0,1}}, to_apply=add, channel_id=3\n  \
        ard = f32[1024]{0} all-reduce-done(ars)\n  \
        ROOT t = (f32[2048]{0}, f32[1024]{0}, f32[1024]{0}) tuple(agd, cpd, ard)\n}\n";
    let v = stats_json("m3b", m3b);
    assert_eq!(v["entry"]["arrays"], 6);
    assert_eq!(v["entry"]["physical_bytes"], 20488);
    let m2 = "HloModule m2\n\nENTRY main {\n  p0 = f32[256,128]{1,0:T(8,128)} parameter(0)\n  \
        b = f32[256,128]{0,1:T(8,128)} bitcast(p0)\n  \
        cs = (f32[256,128]{1,0:T(8,128)S(1)}, f32[256,128]{1,0:T(8,128)}, u32[]) copy-start(p0)\n  \
        cd = f32[256,128]{1,0:T(8,128)S(1)} copy-done(cs)\n  \
        r = f32[128,256]{1,0:T(8,128)} reshape(p0)\n  \
        a = f32[256,128]{1,0:T(8,128)} add(cd, cd)\n  \
        ROOT t = (f32[256,128]{0,1:T(8,128)}, f32[256,128]{1,0:T(8,128)}, f32[128,256]{1,0:T(8,128)}) tuple(b, a, r)\n}\n";
    let v = stats_json("m2", m2);
    assert_eq!(v["memory_spaces"]["1"]["arrays"], 1);
    assert_eq!(v["memory_spaces"]["1"]["physical_bytes"], 128 << 10);
    assert_eq!(
        v["memory_spaces"]["0"]["physical_bytes"],
        3 * (128 << 10) + 4
    );
    let listed: Vec<&str> = v["relayouts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["instruction"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed,
        ["cs", "a"],
        "a bitcast moves nothing; the prefetch is listed once, at its start"
    );
}

#[test]
fn transposes_and_copies_that_move_nothing_are_not_listed() {
    let text = "HloModule tr\n\nENTRY main {\n  p = f32[5,3]{1,0} parameter(0)\n  \
        t = f32[3,5]{0,1} transpose(p), dimensions={1,0}\n  \
        u = f32[3,5]{1,0} transpose(p), dimensions={1,0}\n  \
        q = f32[1,128]{1,0} parameter(1)\n  c = f32[1,128]{0,1} copy(q)\n  \
        ROOT r = (f32[3,5]{0,1}, f32[3,5]{1,0}, f32[1,128]{0,1}) tuple(t, u, c)\n}\n";
    let (code, out, err) = stats("tr", text, false);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1 relayout "), "{out}");
    assert!(
        out.contains("transpose u: f32[5,3]{1,0} -> f32[3,5]{1,0}"),
        "{out}"
    );
    assert!(
        !out.contains("transpose t:") && !out.contains("copy c:"),
        "{out}"
    );
}

#[test]
fn stats_refuses_the_shardings_shards_refuses() {
    for (sharding, shape) in [
        ("{devices=[2]0,1,2}", "f32[4]"),
        ("{devices=[2,2]<=[4]}", "f32[4]"),
    ] {
        let text = format!(
            "HloModule m\nENTRY e {{\n  ROOT p = {shape}{{0}} parameter(0), sharding={sharding}\n}}\n"
        );
        let (code, _, err) = stats("sharding", &text, false);
        assert_ne!(code, 0);
        let (scode, _, serr) = run(&["hlo", "shards", sharding, "--shape", shape]);
        assert_ne!(scode, 0);
        let message = serr.trim().strip_prefix("error: ").unwrap();
        assert!(err.trim().ends_with(message), "{err} / {serr}");
    }
}

#[test]
fn an_inferred_output_sharding_is_reported_as_such() {
    // No sharding= on the result: the per-device outputs are inferred through the elementwise add,
    // and the report says so, with the whole result as the bound.
    let hlo = "HloModule m\n\nENTRY e {\n  p = f32[10,15]{1,0} parameter(0), sharding={devices=[4,2]<=[8]}\n  \
               c = f32[] constant(1)\n  b = f32[10,15]{1,0} broadcast(c), dimensions={}\n  \
               ROOT a = f32[10,15]{1,0} add(p, b)\n}\n";
    let v = stats_json("inferred", hlo);
    let p = &v["per_device"];
    assert_eq!(p["output_sharding"], "inferred", "{p}");
    assert_eq!(p["output_whole_bytes"], 600, "{p}");
    let (code, out, err) = stats("inferred", hlo, false);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("its sharding is inferred (XLA may choose another)"),
        "{out}"
    );
}

/// The review's TPU prefetch: `copy-start` / `copy-done` into `S(1)` is listed once, at its start, as
/// a memory-space move, beside the synchronous `copy` of the same array to `S(1)`.
#[test]
fn an_async_prefetch_is_listed_as_a_memory_space_move() {
    let text = "HloModule m\n\nENTRY e {\n  p1 = f32[3,5]{1,0:T(8,128)} parameter(0)\n  \
        copy-start = (f32[3,5]{1,0:T(8,128)S(1)}, f32[3,5]{1,0:T(8,128)}, u32[]) copy-start(p1)\n  \
        copy-done = f32[3,5]{1,0:T(8,128)S(1)} copy-done(copy-start)\n  \
        copy.2 = f32[3,5]{1,0:T(8,128)S(1)} copy(p1)\n  \
        ROOT t = (f32[3,5]{1,0:T(8,128)S(1)}, f32[3,5]{1,0:T(8,128)S(1)}) tuple(copy-done, copy.2)\n}\n";
    let (code, out, err) = stats("prefetch", text, false);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\n2 relayouts "), "{out}");
    assert!(
        out.contains(
            "4.0 KiB  memory space copy-start copy-start: f32[3,5]{1,0:T(8,128)} -> f32[3,5]{1,0:T(8,128)S(1)}\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("4.0 KiB  memory space copy copy.2: f32[3,5]{1,0:T(8,128)} -> f32[3,5]{1,0:T(8,128)S(1)}\n"),
        "{out}"
    );
    assert!(!out.contains("copy-done copy-done"), "{out}");
}
