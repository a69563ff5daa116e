//! `axe shard` as a user runs it: every notation of a sharding, who holds what, errors.
#![allow(clippy::unwrap_used)]

mod common;

use common::{json_lines, run};
use serde_json::json;

/// Runs `axe` with `args` (one string, split at spaces) and expects exit 1 with `want` on stderr.
fn fails(args: &str, want: &str) {
    let args: Vec<&str> = args.split(' ').collect();
    let (code, out, err) = run(&args);
    assert_eq!(code, 1, "{args:?}: {out}");
    assert!(
        err.contains(want) && !err.contains("panicked"),
        "{args:?}: {err}"
    );
}

#[test]
fn jax_spec_lowers_as_jax_does() {
    let v = json_lines(&[
        "shard",
        "convert",
        "P('y','x')",
        "--mesh",
        "x=2,y=4",
        "--to",
        "hlo",
        "--json",
    ]);
    assert_eq!(v[0]["result"], "{devices=[4,2]<=[2,4]T(1,0)}");
}

#[test]
fn show_gives_every_notation_and_each_devices_block() {
    let v = json_lines(&[
        "shard", "show", "S0S1", "--mesh", "2,3", "--shape", "f32[4,6]", "--json",
    ]);
    let o = &v[0];
    assert_eq!(o["hlo"], "{devices=[2,3]<=[6]}");
    assert_eq!(o["alpa"], "S0S1");
    assert_eq!(o["dtensor"], "[Shard(0), Shard(1)]");
    assert_eq!(o["devices"].as_array().unwrap().len(), 6);
    assert_eq!(o["devices"][4]["region"], json!([[2, 4], [2, 4]]));
    assert_eq!(o["devices"][4]["local_shape"], json!([2, 2]));
    assert_eq!(o["devices"][4]["replica_group"], json!([4]));
}

#[test]
fn uneven_shards_follow_xlas_rule() {
    let v = json_lines(&[
        "shard",
        "show",
        "{devices=[4]<=[4]}",
        "--shape",
        "f32[5]",
        "--json",
    ]);
    let sizes: Vec<u64> = v[0]["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["local_shape"][0].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, [2, 2, 1, 0]);
}

#[test]
fn replicated_axes_form_replica_groups() {
    let v = json_lines(&[
        "shard",
        "show",
        "P('x')",
        "--mesh",
        "x=2,y=2",
        "--shape",
        "f32[64,128]",
        "--json",
    ]);
    let o = &v[0];
    assert_eq!(o["hlo"], "{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
    assert_eq!(o["devices"][1]["replica_group"], json!([0, 1]));
    assert_eq!(o["devices"][1]["region"], json!([[0, 32], [0, 128]]));
}

#[test]
fn a_device_order_names_the_devices() {
    let v = json_lines(&[
        "shard",
        "show",
        "P('x')",
        "--mesh",
        "x=2",
        "--devices",
        "1,0",
        "--shape",
        "f32[4]",
        "--json",
    ]);
    assert_eq!(v[0]["devices"][0]["device"], 1);
    assert_eq!(v[0]["hlo"], "{devices=[2]1,0}");
}

#[test]
fn batches_from_stdin_answer_each_line() {
    let out = assert_cmd::Command::cargo_bin("axe")
        .unwrap()
        .args([
            "shard", "convert", "-", "--mesh", "x=2,y=2", "--shape", "f32[4,4]", "--to", "alpa",
            "--json",
        ])
        .write_stdin("P('x','y')\nP('q')\nP()\n")
        .output()
        .unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["result"], "S0S1");
    assert!(lines[1]["error"]
        .as_str()
        .unwrap()
        .contains("unknown mesh axis"));
    assert_eq!(lines[2]["result"], "RR");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn bad_input_is_a_clear_error() {
    fails(
        "shard show P('x','x') --mesh x=2 --shape f32[4,4]",
        "shards dims 0 and 1",
    );
    fails(
        "shard show P('z') --mesh x=2 --shape f32[4]",
        "unknown mesh axis",
    );
    fails("shard show P('x') --shape f32[4]", "give the mesh");
    fails(
        "shard show {devices=[2,2]<=[4]} --mesh 8 --shape f32[4,4]",
        "devices",
    );
    fails(
        "shard show P('x') --mesh x=4294967296,y=4294967296 --shape f32[4]",
        "devices",
    );
}

#[test]
fn plans_name_their_collective_and_count_bytes() {
    let v = json_lines(&[
        "shard",
        "plan",
        "P('x',None)",
        "P(None,'x')",
        "--mesh",
        "x=4",
        "--shape",
        "f32[64,128]",
        "--json",
    ]);
    assert_eq!(v[0]["collective"], "all-to-all");
    // Each device keeps a quarter of its shard and sends the other three quarters: 3/16 of the array each.
    assert_eq!(v[0]["bytes"], 64 * 128 * 4 * 3 / 4);
    assert_eq!(v[0]["transfers"].as_array().unwrap().len(), 12);
    let t = &v[0]["transfers"][0];
    assert_eq!(t["bytes"], 16 * 32 * 4);
    let v = json_lines(&[
        "shard",
        "plan",
        "[Partial(), Replicate()]",
        "[Shard(0), Replicate()]",
        "--mesh",
        "x=2,y=2",
        "--shape",
        "bf16[64,128]",
        "--json",
    ]);
    assert_eq!(v[0]["collective"], "reduce-scatter");
    assert_eq!(v[0]["transfers"][0]["reduce"], "sum");
    assert_eq!(v[0]["bytes"], 4 * 32 * 128 * 2);
}

#[test]
fn plan_errors_name_the_side() {
    fails(
        "shard plan P('x') P('z') --mesh x=2 --shape f32[4]",
        "destination: ",
    );
    fails(
        "shard plan P('x') P('z') --mesh x=2 --shape f32[4]",
        "unknown mesh axis",
    );
    fails("shard plan P('x') P() --mesh x=2", "--shape");
    fails(
        "shard plan P('x') P() --mesh x=2 --shape f32[4] --gbps 0",
        "--gbps",
    );
}

#[test]
fn runs_are_verified_element_by_element() {
    // The paper's fully sharded 64x128 on a 2x2 mesh, tiled on each device, gathered row-major.
    let v = json_lines(&[
        "shard",
        "run",
        "P('x','y')",
        "P()",
        "--mesh",
        "x=2,y=2",
        "--shape",
        "f32[64,128]",
        "--src-layout",
        "{1,0:T(8,128)}",
        "--json",
    ]);
    assert_eq!(v[0]["verified"], true);
    assert_eq!(v[0]["bytes"], 4 * 3 * 32 * 64 * 4);
    assert_eq!(v[0]["collective"], "all-gather");
    // Pending sums in bf16, reduced and scattered; uneven shards.
    let v = json_lines(&[
        "shard",
        "run",
        "[Partial(), Shard(1)]",
        "P('x','y')",
        "--mesh",
        "x=2,y=2",
        "--shape",
        "bf16[64,128]",
        "--json",
    ]);
    assert_eq!(v[0]["verified"], true);
    let v = json_lines(&[
        "shard",
        "run",
        "{devices=[4]<=[4]}",
        "{devices=[4]0,2,1,3}",
        "--mesh",
        "x=2,y=2",
        "--shape",
        "s32[5]",
        "--json",
    ]);
    assert_eq!(v[0]["verified"], true);
    // One device is one device.
    let (code, out, err) = run(&[
        "shard", "run", "P('x')", "P()", "--mesh", "x=1", "--shape", "f32[3]",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("every destination element on 1 device ("),
        "{out}"
    );
}

#[test]
fn run_errors_are_clear() {
    fails(
        "shard run P('x') P() --mesh x=2 --shape f32[8] --dst-layout {0:T(",
        "--dst-layout",
    );
    fails(
        "shard run P('x') P() --mesh x=2 --devices 4,7 --shape f32[8]",
        "device ids must be",
    );
    // Sizes past memory are errors before anything is allocated, never an abort.
    // (Beyond any address space, so that no overcommit setting lets them through.)
    for shape in ["f32[100000000000000000]", "f32[1000000000,100000000]"] {
        fails(
            &format!("shard run P('x') P() --mesh x=2 --shape {shape}"),
            "does not fit in memory",
        );
    }
    if !cfg!(feature = "mpi") {
        fails(
            "shard run P('x') P() --mesh x=2 --shape f32[8] --backend mpi",
            "--features mpi",
        );
    }
}

/// A threads run started by an MPI launcher as one of several processes is refused at once (its peers
/// would wait for a rank that never joins MPI); as the only process it runs.
#[test]
fn a_threads_run_under_mpirun_with_peers_is_refused() {
    let args = [
        "shard", "run", "P('x')", "P()", "--mesh", "x=2", "--shape", "f32[8]",
    ];
    for (var, n, ok) in [
        ("OMPI_COMM_WORLD_SIZE", "2", false),
        ("PMI_SIZE", "4", false),
        ("MV2_COMM_WORLD_SIZE", "3", false),
        ("OMPI_COMM_WORLD_SIZE", "1", true),
    ] {
        let out = assert_cmd::Command::cargo_bin("axe")
            .unwrap()
            .env(var, n)
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.success(), ok, "{var}={n}: {err}");
        if !ok {
            assert!(
                err.contains(&format!("started {n} processes ({var}={n})"))
                    && err.contains("--backend mpi")
                    && err.lines().count() == 1,
                "{err}"
            );
        }
    }
}

#[test]
fn bench_shard_gives_a_ratio_per_case() {
    let v = json_lines(&[
        "bench",
        "shard",
        "--ranks",
        "2",
        "--shard-mib",
        "1",
        "--rounds",
        "1",
        "--json",
    ]);
    assert!(v.len() >= 5 + 20, "{v:?}");
    for o in &v {
        assert!(o["case"].is_string(), "{o}");
        assert!(o["ratio"].as_f64().unwrap() > 0.0, "{o}");
    }
    assert!(v
        .iter()
        .any(|o| o["case"] == "plan all-to-all 4096 devices"));
    assert!(v
        .iter()
        .any(|o| o["case"].as_str().unwrap().contains("all-gather 2 ranks")));
}

#[test]
fn show_draws_which_device_holds_which_block() {
    let dir = common::folder("shard-svg");
    let svg = dir.join("mesh.svg").to_string_lossy().to_string();
    let (code, _, err) = run(&[
        "shard",
        "show",
        "P('x')",
        "--mesh",
        "x=2,y=2",
        "--shape",
        "f32[8,16]",
        "-o",
        &svg,
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    // One block per row band, named by the replicas holding it.
    assert!(
        text.starts_with("<svg") && text.contains(">0,1</text>") && text.contains(">2,3</text>"),
        "{text}"
    );
    let png = dir.join("mesh.png").to_string_lossy().to_string();
    let (code, _, err) = run(&[
        "shard",
        "show",
        "P('x','y')",
        "--mesh",
        "x=2,y=2",
        "--shape",
        "f32[8,16]",
        "-o",
        &png,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    // No shape, or a sharding the Axe form cannot hold: an error, and no file.
    let bad = dir.join("bad.svg").to_string_lossy().to_string();
    let (code, _, err) = run(&["shard", "show", "P('x')", "--mesh", "x=2", "-o", &bad]);
    assert_eq!(code, 1);
    assert!(err.contains("--shape"), "{err}");
    assert_eq!(common::names(&dir), ["mesh.png", "mesh.svg"]);
    // An uneven sharding is drawn too; the device left without data is named.
    let uneven = dir.join("uneven.svg").to_string_lossy().to_string();
    let (code, _, err) = run(&[
        "shard", "show", "P('x')", "--mesh", "x=4", "--shape", "f32[5]", "-o", &uneven,
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&uneven).unwrap();
    assert!(text.contains("holding nothing: 3"), "{text}");
}

#[test]
fn large_replica_groups_are_listed_once() {
    // 4,096 replicas of the whole array: listing each device's group would take 16 million ids.
    let v = json_lines(&[
        "shard",
        "show",
        "{replicated}",
        "--mesh",
        "4096",
        "--shape",
        "f32[8]",
        "--json",
    ]);
    let groups = v[0]["replica_groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0].as_array().unwrap().len(), 4096);
    assert_eq!(v[0]["devices"][4095]["replica_group_index"], 0);
    assert!(v[0]["devices"][0].get("replica_group").is_none());
    let (code, out, _) = run(&[
        "shard",
        "show",
        "{replicated}",
        "--mesh",
        "4096",
        "--shape",
        "f32[8]",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("0,1,2,3,… (4096 devices)"), "{}", &out[..400]);
}

#[test]
fn show_gives_each_devices_buffer_in_its_memory_layout() {
    let v = json_lines(&[
        "shard",
        "show",
        "P('x', None)",
        "--shape",
        "bf16[100,300]",
        "--mesh",
        "x=4,y=2",
        "--layout",
        "{1,0:T(8,128)(2,1)}",
        "--json",
    ]);
    let d = &v[0]["devices"][0];
    // 25 rows pad to 32 and 300 columns to 384 under the (8,128) tile: 32·384·2 bytes.
    assert_eq!(d["memory"]["layout"], "bf16[25,300]{1,0:T(8,128)(2,1)}");
    assert_eq!(d["memory"]["bytes"], 24576);
    // An Axe layout on m over the local shape, and row-major.
    let v = json_lines(&[
        "shard",
        "show",
        "S0R",
        "--shape",
        "f32[8,4]",
        "--mesh",
        "x=2,y=2",
        "--layout",
        "S[(4,4):(1,4)]",
        "--json",
    ]);
    assert_eq!(v[0]["devices"][3]["memory"]["bytes"], 64);
    // The Axe form stores each shard in the layout given, or the input's own memory iters.
    let answer = |args: &str| {
        let args: Vec<&str> = args.split(' ').chain(["--json"]).collect();
        json_lines(&args)[0].clone()
    };
    for (args, want) in [
        (
            "shard show P('x',None) --mesh x=4 --shape f32[64,256] --layout {0,1}",
            "S[(4,16,256):(1@gpu_x,1,16)]",
        ),
        (
            "shard show P('x',None) --mesh x=4 --shape f32[64,256] --layout row-major",
            "S[(4,16,256):(1@gpu_x,256,1)]",
        ),
        (
            "shard show S[(2,32,128):(1@gpu_x,1,32)] --mesh x=2 --shape f32[64,128]",
            "S[(2,32,128):(1@gpu_x,1,32)]",
        ),
        (
            "shard show S[(2,32,128):(1@gpu_x,1,32)] --mesh x=2 --shape f32[64,128] --layout {1,0}",
            "S[(2,32,128):(1@gpu_x,128,1)]",
        ),
        (
            "shard convert --to axe S[(2,32,128):(1@gpu_x,1,32)] --shape f32[64,128]",
            "S[(2,32,128):(1@gpu_x,1,32)]",
        ),
    ] {
        let v = answer(args);
        let got = if args.contains("convert") {
            &v["result"]
        } else {
            &v["axe"]
        };
        assert_eq!(got, want, "{args}");
    }
    // A tiled layout that pads the shard has no Axe form, which says so.
    let v = json_lines(&[
        "shard",
        "show",
        "P('x')",
        "--shape",
        "bf16[100,300]",
        "--mesh",
        "x=4",
        "--layout",
        "{1,0:T(8,128)(2,1)}",
        "--json",
    ]);
    assert_eq!(v[0]["axe"], serde_json::Value::Null);
    let why = v[0]["axe_why"].as_str().unwrap();
    assert!(
        why.contains("pads each device's [25,300] shard to [32,384]"),
        "{why}"
    );
    fails(
        "shard show S0R --mesh x=2,y=2 --layout {1,0}",
        "--layout needs the array",
    );
    fails(
        "shard show S0R --shape f32[8,4] --mesh x=2,y=2 --layout {1,0:T(2,}",
        "--layout",
    );
}

#[test]
fn sharding_pictures_are_one_block_per_piece_naming_every_device() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("m.svg");
    let png = dir.path().join("m.png");
    for (sharding, shape) in [
        ("P('data', None)", "bf16[64,128]"),
        ("P('data', 'model')", "bf16[64,128]"),
        ("P(None, ('data', 'model'))", "f32[256,1024]"),
    ] {
        for out in [&svg, &png] {
            let (code, _, err) = run(&[
                "shard",
                "show",
                sharding,
                "--mesh",
                "data=2,model=4",
                "--shape",
                shape,
                "-o",
                out.to_str().unwrap(),
            ]);
            assert_eq!(code, 0, "{err}");
        }
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(
            text.contains(&format!("{sharding} over {shape} on mesh data=2,model=4")),
            "{text}"
        );
        // Every device is named, alone or in its block's list of replicas.
        let named = |d: u32| {
            text.split("</text>").any(|t| {
                t.rsplit('>')
                    .next()
                    .is_some_and(|l| l.split(',').any(|x| x == d.to_string()))
            })
        };
        assert!((0..8).all(named), "{text}");
        let bytes = std::fs::read(&png).unwrap();
        let width = u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
        assert!(width <= 2000, "{sharding} over {shape}: {width} px wide");
    }
}

/// Partials pending different ops on different mesh axes are reduced in stages, the first mesh axis first
/// (DTensor's order), and verified; reducing one past another op that stays partial is refused.
#[test]
fn mixed_partial_ops_plan_and_run_in_stages() {
    let (mesh, shape) = ("--mesh 2,3", "--shape s8[7,3]");
    let words = |s: &'static str| s.split(' ').collect::<Vec<&str>>();
    let (code, out, err) = run(&words(
        "shard plan [Partial(max),Partial(sum)] P() --mesh 2,3 --shape s8[7,3] --list 1",
    ));
    assert_eq!(code, 0, "{err}");
    let golden = "stage 1 of 2 (max over \"d0\"): all-reduce: 126 B in 6 transfers and 6 local copies, about 5.0 µs
       3 -> 0      [0:7, 0:3] 21 B (max into the receiver)
  ... and 5 more transfers (see --json)
       0 -> 0      [0:7, 0:3] 21 B (local copy, max into it)
  ... and 5 more local copies (see --json)
stage 2 of 2 (sum over \"d1\"): all-reduce: 252 B in 12 transfers and 6 local copies, about 10.0 µs
       1 -> 0      [0:7, 0:3] 21 B (sum into the receiver)
  ... and 11 more transfers (see --json)
       0 -> 0      [0:7, 0:3] 21 B (local copy, sum into it)
  ... and 5 more local copies (see --json)
";
    assert_eq!(out, golden);
    let v = json_lines(&words(
        "shard run [Partial(max),Partial(sum),Shard(1)] P('x') --mesh x=2,y=3,z=2 --shape bf16[7,5] --json",
    ));
    assert_eq!(v[0]["verified"], true);
    assert_eq!(v[0]["collective"], "all-reduce then point-to-point");
    fails(
        &format!("shard run [Partial(sum),Partial(max)] [Partial(sum),Replicate()] {mesh} {shape}"),
        "mesh axis \"d1\" (max) cannot be reduced while mesh axis \"d0\" (sum) stays partial",
    );
}

/// Sub-byte elements move unpacked, one element a byte; packed into E(4) they are refused by name.
#[test]
fn s4_reshards_unpacked() {
    let v = json_lines(&[
        "shard", "run", "P('x')", "P('y')", "--mesh", "x=2,y=2", "--shape", "s4[8,4]", "--json",
    ]);
    assert_eq!(
        (v[0]["verified"].clone(), v[0]["bytes"].clone()),
        (json!(true), json!(32))
    );
    fails(
        "shard run P('x') P('y') --mesh x=2,y=2 --shape s4[8,4] --src-layout {1,0:E(4)}",
        "packed sub-byte shards are not resharded",
    );
}
