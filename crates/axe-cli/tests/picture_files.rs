//! Every command that writes a picture names its file and its format the same way (`-o FILE`, the
//! format from the extension or `--format`, a missing or mismatched extension refused), and the shard
//! verbs name a per-device memory layout the same way (`--layout`).
#![allow(clippy::unwrap_used)]

mod common;

use common::run;

/// The picture-writing commands, each as its arguments before `-o FILE`: a layout drawn by `render`
/// and a sharding drawn by `shard show`.
const COMMANDS: [&[&str]; 2] = [
    &["render", "f32[3,5]{1,0:T(2,2)}"],
    &[
        "shard",
        "show",
        "P('x', None)",
        "--mesh",
        "x=2",
        "--shape",
        "f32[8,16]",
    ],
];

/// What the bytes of a picture file are: "svg", "png" or "txt".
fn kind(bytes: &[u8]) -> &'static str {
    if bytes.starts_with(b"\x89PNG") {
        "png"
    } else if bytes.starts_with(b"<svg") || bytes.starts_with(b"<?xml") {
        "svg"
    } else {
        "txt"
    }
}

#[test]
fn every_picture_command_takes_its_format_from_the_name_or_format_alike() {
    let dir = common::folder("picture-names");
    // (file name, --format, what is written: Some(format) or None for a refusal)
    let cases: [(&str, Option<&str>, Option<&str>); 14] = [
        ("a.svg", None, Some("svg")),
        ("a.png", None, Some("png")),
        ("a.PNG", None, Some("png")),
        ("a.txt", None, Some("txt")),
        ("a", None, None),
        ("a.jpg", None, None),
        ("a.svgz", None, None),
        ("b", Some("png"), Some("png")),
        ("b.out", Some("svg"), Some("svg")),
        ("b.txt", Some("txt"), Some("txt")),
        ("c.svg", Some("png"), None),
        ("c.png", Some("svg"), None),
        ("c.txt", Some("svg"), None),
        ("c.SVG", Some("svg"), Some("svg")),
    ];
    for (c, cmd) in COMMANDS.iter().enumerate() {
        for (name, format, want) in cases {
            let path = dir.join(format!("{c}-{name}"));
            let path = path.to_str().unwrap();
            let mut args = cmd.to_vec();
            args.extend(["-o", path]);
            if let Some(f) = format {
                args.extend(["--format", f]);
            }
            let (code, out, err) = run(&args);
            match want {
                Some(k) => {
                    assert_eq!(code, 0, "{args:?}: {err}");
                    assert_eq!(kind(&std::fs::read(path).unwrap()), k, "{args:?}");
                }
                None => {
                    assert_eq!(code, 1, "{args:?} was accepted");
                    assert!(out.is_empty(), "{args:?}: {out}");
                    let named = err.contains(".svg, .png or .txt") && err.contains("--format");
                    let agree = err.contains("make them agree");
                    assert!(named || agree, "{args:?}: {err}");
                    assert!(
                        !std::path::Path::new(path).exists(),
                        "{args:?} wrote {path}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_missing_extension_is_refused_naming_the_accepted_ones() {
    let dir = common::folder("picture-no-extension");
    let pic = dir.join("pic");
    for cmd in COMMANDS {
        let mut args = cmd.to_vec();
        args.extend(["-o", pic.to_str().unwrap()]);
        let (code, _, err) = run(&args);
        assert_eq!(code, 1, "{args:?}");
        assert!(
            err.contains("has no extension") && err.contains(".svg, .png or .txt"),
            "{args:?}: {err}"
        );
    }
    assert!(common::names(&dir).is_empty());
}

#[test]
fn shard_show_takes_o_as_render_does_and_svg_still_works() {
    let dir = common::folder("shard-show-o");
    let a = dir.join("a.png");
    let b = dir.join("b.png");
    let base = COMMANDS[1];
    let mut args = base.to_vec();
    args.extend(["-o", a.to_str().unwrap()]);
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("jax"), "the table is printed too: {out}");
    let mut args = base.to_vec();
    args.extend(["--svg", b.to_str().unwrap()]);
    let (code, _, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let (a, b) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert!(a.starts_with(b"\x89PNG"));
    assert_eq!(a, b, "--svg is -o under its old name");
    // The help names -o and --format, not the old name.
    let (_, help, _) = run(&["shard", "show", "--help"]);
    assert!(help.contains("-o, --output <FILE>"), "{help}");
    assert!(help.contains("--format"), "{help}");
    assert!(!help.contains("--svg"), "{help}");
    // --format says how to draw a file; without one it is an error, not ignored.
    let mut args = base.to_vec();
    args.extend(["--format", "png"]);
    let (code, _, err) = run(&args);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--output"), "{err}");
}

#[test]
fn shard_show_draws_text_as_render_draws_the_sharding() {
    let dir = common::folder("shard-show-txt");
    let txt = dir.join("m.txt");
    let mut args = COMMANDS[1].to_vec();
    args.extend(["-o", txt.to_str().unwrap()]);
    let (code, _, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let (code, rendered, err) = run(&[
        "render",
        "P('x', None)",
        "--mesh",
        "x=2",
        "--shape",
        "8,16",
        "--format",
        "txt",
    ]);
    assert_eq!(code, 0, "{err}");
    let drawn = std::fs::read_to_string(&txt).unwrap();
    assert_eq!(drawn.trim_end(), rendered.trim_end());
    assert!(drawn.contains("gpu_x"), "{drawn}");
}

#[test]
fn a_device_written_in_place_takes_svg_without_an_extension() {
    let dir = common::folder("picture-device");
    let null = dir.join("null");
    std::os::unix::fs::symlink("/dev/null", &null).unwrap();
    for cmd in COMMANDS {
        let mut args = cmd.to_vec();
        args.extend(["-o", null.to_str().unwrap()]);
        let (code, _, err) = run(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
    }
}

/// `axe shard VERB SRC DST ... --json` with the given layout options: the exit code, stdout, and the
/// error (`--json` writes it to stdout as `{"error": ...}`).
fn shard_json(verb: &str, layouts: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "shard",
        verb,
        "P('x', None)",
        "P(None, 'x')",
        "--mesh",
        "x=2",
        "--shape",
        "bf16[32,256]",
        "--json",
    ];
    args.extend_from_slice(layouts);
    let (code, out, err) = run(&args);
    let error = serde_json::from_str::<serde_json::Value>(out.trim())
        .ok()
        .and_then(|v| v["error"].as_str().map(String::from))
        .unwrap_or_default();
    (code, out, err + &error)
}

#[test]
fn layout_names_a_per_device_layout_in_every_shard_verb() {
    let tiled = "{1,0:T(8,128)(2,1)}";
    // plan and run: --layout is both sides, as --src-layout L --dst-layout L, and a side's own option
    // wins over it for that side: an unusable --layout is reported for exactly the sides it reaches.
    for verb in ["plan", "run"] {
        let both = shard_json(verb, &["--layout", tiled]);
        let each = shard_json(verb, &["--src-layout", tiled, "--dst-layout", tiled]);
        assert_eq!(both.0, 0, "{verb}: {}", both.2);
        assert_eq!(each.0, 0, "{verb}: {}", each.2);
        // Unusable on both sides, on the destination alone, on the source alone.
        for options in [
            &["--layout", "{1,0:T("][..],
            &["--layout", "{1,0:T(", "--src-layout", tiled][..],
            &["--layout", "{1,0:T(", "--dst-layout", tiled][..],
        ] {
            let (code, _, err) = shard_json(verb, options);
            assert_eq!(code, 1, "{verb} {options:?}");
            assert!(err.contains("--layout:"), "{verb} {options:?}: {err}");
        }
        let (code, _, err) = shard_json(verb, &["--layout", tiled, "--dst-layout", "{1,0:T("]);
        assert_eq!(code, 1, "{verb}");
        assert!(err.contains("--dst-layout:"), "{verb}: {err}");
        let (code, _, err) = shard_json(verb, &["--layout", tiled, "--src-layout", "{1,0:T("]);
        assert_eq!(code, 1, "{verb}");
        assert!(err.contains("--src-layout:"), "{verb}: {err}");
    }
    // show: --layout, and --src-layout as its other name, give the same buffers.
    let show = |flag: &str| {
        run(&[
            "shard",
            "show",
            "P('x', None)",
            "--mesh",
            "x=2",
            "--shape",
            "bf16[30,200]",
            flag,
            tiled,
        ])
    };
    let (a, b) = (show("--layout"), show("--src-layout"));
    assert_eq!(a.0, 0, "{}", a.2);
    assert_eq!(a, b);
    assert!(a.1.contains("bf16[15,200]{1,0:T(8,128)(2,1)}"), "{}", a.1);
    // The help of each verb names --layout.
    for verb in ["show", "plan", "run"] {
        let (_, help, _) = run(&["shard", verb, "--help"]);
        assert!(help.contains("--layout <LAYOUT>"), "{verb}: {help}");
    }
}

/// A sharding without an Axe form (uneven cuts) is written as text too: its pieces, one line each.
#[test]
fn an_uneven_sharding_writes_its_pieces_as_text() {
    let dir = common::folder("picture-uneven");
    let path = dir.join("u.txt");
    let p = path.to_str().unwrap();
    let (code, _, err) = run(&[
        "shard",
        "show",
        "P('x', None)",
        "--mesh",
        "x=3",
        "--shape",
        "f32[7,4]",
        "-o",
        p,
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[1..],
        [
            "3 pieces of [7, 4]: the region each holds, then its devices",
            "  [0:3, 0:4]  0",
            "  [3:6, 0:4]  1",
            "  [6:7, 0:4]  2"
        ],
        "{text}"
    );
}
