//! `axe shard plan` and `show` as a user reads them (new-user review items 6 and 15, the guide writer's
//! notes): local copies listed beside the transfers, the collective of no name called point-to-point,
//! estimates in µs, `--layout` reporting each side's buffer per device, bytes worded per device, and HLO
//! text with no mesh naming no axis of one device.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use common::{json_lines, run};
use serde_json::json;

/// `axe` with `args` split at spaces: its stdout, after checking it succeeded.
fn out(args: &str) -> String {
    let args: Vec<&str> = args.split(' ').collect();
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

#[test]
fn a_plan_lists_its_local_copies_and_each_sides_buffer_under_layout() {
    let plan = "shard plan P('x',None) P(None,'y') --mesh x=2,y=2 --shape f32[60,100]";
    let golden = "all-to-all: 23.4 KiB in 4 transfers and 4 local copies, about 5.2 µs
       2 -> 0      [30:60, 0:50] 5.9 KiB
       3 -> 1      [30:60, 50:100] 5.9 KiB
       0 -> 2      [0:30, 0:50] 5.9 KiB
       1 -> 3      [0:30, 50:100] 5.9 KiB
       0 -> 0      [0:30, 0:50] 5.9 KiB (local copy)
       1 -> 1      [0:30, 50:100] 5.9 KiB (local copy)
       2 -> 2      [30:60, 0:50] 5.9 KiB (local copy)
       3 -> 3      [30:60, 50:100] 5.9 KiB (local copy)
";
    assert_eq!(out(plan), golden);
    // The layout pads each buffer (30×100 to 32×128, 60×50 to 64×128); the transfers stay as they were.
    let tiled = out(&format!("{plan} --layout {{1,0:T(8,128)}}"));
    let memory = "source memory       f32[30,100]{1,0:T(8,128)}: 16.0 KiB on each of 4 devices
destination memory  f32[60,50]{1,0:T(8,128)}: 32.0 KiB on each of 4 devices
";
    assert_eq!(tiled, format!("{golden}{memory}"));
    let args: Vec<&str> = plan
        .split(' ')
        .chain(["--dst-layout", "{0,1}", "--json"])
        .collect();
    let v = &json_lines(&args)[0];
    assert_eq!(
        v["memory"],
        json!({
            "source": [{"layout": "f32[30,100]{1,0}", "bytes_per_device": 12000, "devices": [0, 1, 2, 3]}],
            "destination": [{"layout": "f32[60,50]{0,1}", "bytes_per_device": 12000, "devices": [0, 1, 2, 3]}],
        })
    );
    // Every destination device gets its whole region: what it receives and what it copies locally.
    let mut got = [0u64; 4];
    for t in v["transfers"].as_array().unwrap() {
        got[t["to"].as_u64().unwrap() as usize] += t["bytes"].as_u64().unwrap();
    }
    for l in v["locals"].as_array().unwrap() {
        got[l["device"].as_u64().unwrap() as usize] += l["bytes"].as_u64().unwrap();
    }
    assert_eq!(got, [60 * 50 * 4; 4]);
    // Without a layout the JSON has no memory; a layout that does not fit names its option.
    let args: Vec<&str> = plan.split(' ').chain(["--json"]).collect();
    assert!(json_lines(&args)[0].get("memory").is_none());
    let args: Vec<&str> = plan.split(' ').chain(["--dst-layout", "{0}"]).collect();
    let (code, _, err) = run(&args);
    assert!(code == 1 && err.contains("--dst-layout"), "{err}");
}

#[test]
fn the_collective_of_no_name_is_point_to_point_and_estimates_are_in_microseconds() {
    let text = out("shard plan P('x') P('y') --mesh x=2,y=3 --shape f32[6,6] --list 1");
    assert_eq!(
        text,
        "point-to-point: 144 B in 4 transfers and 4 local copies, about 5.0 µs
       3 -> 1      [3:4, 0:6] 24 B
  ... and 3 more transfers (see --json)
       0 -> 0      [0:2, 0:6] 48 B (local copy)
  ... and 3 more local copies (see --json)
"
    );
    let v = json_lines(&[
        "shard", "plan", "P('x')", "P('y')", "--mesh", "x=2,y=3", "--shape", "f32[6,6]", "--json",
    ]);
    assert_eq!(v[0]["collective"], "point-to-point");
    assert_eq!(v[0]["estimate_us"], 5.00192);
}

#[test]
fn shown_bytes_are_each_devices_own() {
    let text =
        out("shard show P('x',None) --mesh x=2,y=2 --shape f32[60,100] --layout {1,0:T(8,128)}");
    assert!(
        text.contains("memory   f32[30,100]{1,0:T(8,128)}: 16.0 KiB on each of 4 devices\n"),
        "{text}"
    );
    let (code, text, err) = run(&[
        "shard",
        "show",
        "{maximal device=1}",
        "--mesh",
        "4",
        "--shape",
        "f32[8,128]",
        "--layout",
        "{1,0:T(8,128)}",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains("memory   f32[0,0]{1,0:T(8,128)}: 0 B on each of 3 devices\n")
            && text.contains("memory   f32[8,128]{1,0:T(8,128)}: 4.0 KiB on device 1\n"),
        "{text}"
    );
}

#[test]
fn hlo_text_with_no_mesh_names_no_axis_of_one_device() {
    let text = "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}";
    let (code, text, err) = run(&["shard", "show", text, "--shape", "f32[8,8]"]);
    assert_eq!(code, 0, "{err}");
    for line in [
        "jax      P('t0')\n",
        "alpa     S0R\n",
        "dtensor  [Shard(0), Replicate()]\n",
        "mesh     t0=4,t2=2 devices 0,4,1,5,2,6,3,7\n",
        "     5  [2:4, 0:8]  [2, 8]       1,5\n",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
}

#[test]
fn a_mesh_given_is_kept_and_says_how_to_read_the_tiles_order() {
    let kept = out("shard show {devices=[4]0,3,1,2} --mesh x=4 --shape f32[8]");
    assert!(kept.contains("mesh     x=4\n"), "{kept}");
    assert!(
        kept.contains("jax      - (not expressible in jax: its tiles follow the device order [0, 3, 1, 2], not the mesh's; jax places devices by the mesh's order: read it on a mesh listing its devices in the tiles' order, or with no mesh, to write it in jax)"),
        "{kept}"
    );
    // A long order is cut, so the reason stays one short line whatever the mesh.
    let reversed: Vec<String> = (0..32).rev().map(|d| d.to_string()).collect();
    let long = out(&format!(
        "shard show {{devices=[32]{}}} --mesh x=32 --shape f32[32]",
        reversed.join(",")
    ));
    assert!(
        long.contains(
            "device order [31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, … (32 devices)], not"
        ),
        "{long}"
    );
    let ordered =
        out("shard show {devices=[4]0,3,1,2} --mesh x=4 --devices 0,3,1,2 --shape f32[8]");
    assert!(ordered.contains("jax      P('x')\n"), "{ordered}");
    let own = out("shard show {devices=[4]0,3,1,2} --shape f32[8]");
    assert!(
        own.contains("jax      P('t0')\n") && own.contains("mesh     t0=4 devices 0,3,1,2\n"),
        "{own}"
    );
}
