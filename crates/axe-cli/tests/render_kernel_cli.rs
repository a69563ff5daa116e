//! `axe render` for kernel layouts as a user runs it: CuTe `print_layout` grids (swizzles too), CuTe TV
//! layouts, Triton linear layouts and Gluon layouts (non-power-of-two shapes too), as text, SVG and PNG,
//! and the errors.
#![allow(clippy::unwrap_used)]

mod common;

use common::{arg, folder, run};

const BLOCKED: &str =
    "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])";
const BLOCKED_2X2: &str =
    "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[2, 2], order=[1, 0])";
const BASES: &str = r#"{"in": {"register": [[0, 1], [0, 2]], "lane": [[1, 0], [2, 0]], "warp": [], "block": []}, "out": {"dim0": 4, "dim1": 4}}"#;

/// `axe render ARGS --format txt`, expected to succeed.
fn txt(args: &[&str]) -> String {
    let mut all = vec!["render"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "txt"]);
    let (code, out, err) = run(&all);
    assert_eq!(code, 0, "{args:?}: {err}");
    assert!(err.is_empty(), "{err}");
    out
}

/// The grid row of a text picture whose index is `row`, as its words (the index first).
fn row(out: &str, row: u64) -> Vec<String> {
    let at = out
        .lines()
        .position(|l| {
            !l.trim().is_empty()
                && l.chars()
                    .all(|c| c.is_ascii_digit() || c == ' ' || c == '…')
        })
        .unwrap();
    out.lines()
        .skip(at + 1)
        .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>())
        .find(|w| w.first().map(String::as_str) == Some(&row.to_string()))
        .unwrap()
}

/// `axe render ARGS -o DIR/NAME`, expected to succeed; the file's text.
fn svg(dir: &std::path::Path, name: &str, args: &[&str]) -> String {
    let path = arg(&dir.join(name));
    let mut all = vec!["render"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", &path]);
    let (code, _, err) = run(&all);
    assert_eq!(code, 0, "{args:?}: {err}");
    let s = std::fs::read_to_string(&path).unwrap();
    assert!(s.starts_with("<svg"));
    s
}

/// The label and sublabel the SVG draws in cell (r, c).
fn svg_cell(svg: &str, r: usize, c: usize) -> (String, Option<String>) {
    let tag = format!(r#"class="label" data-row="{r}" data-col="{c}""#);
    let mut lines = svg.lines().skip_while(|l| !l.contains(&tag));
    let text = |l: &str| {
        let start = l.find('>').unwrap() + 1;
        l[start..l.rfind("</text>").unwrap()].to_string()
    };
    let label = text(lines.next().unwrap());
    let sub = lines
        .next()
        .filter(|l| l.contains(r#"class="sublabel""#))
        .map(text);
    (label, sub)
}

fn fails(args: &[&str], says: &str) {
    let mut all = vec!["render"];
    all.extend_from_slice(args);
    let (code, out, err) = run(&all);
    assert_eq!(code, 1, "{args:?}: {out}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains(says), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn cute_print_layout_grid() {
    let out = txt(&["(4,2):(2,1)"]);
    assert!(out.starts_with("(4,2):(2,1)\n"), "{out}");
    assert_eq!(row(&out, 0), ["0", "0", "1"]);
    assert_eq!(row(&out, 1), ["1", "2", "3"]);
    assert_eq!(row(&out, 3), ["3", "6", "7"]);
    // Hierarchical modes: (m, n) is m + 4n, colexicographic within each mode.
    let out = txt(&["((2,2),2):((1,8),2)"]);
    assert_eq!(row(&out, 2), ["2", "8", "10"]);
    // Rank 1: one row.
    let out = txt(&["8:2"]);
    assert_eq!(
        row(&out, 0),
        ["0", "0", "2", "4", "6", "8", "10", "12", "14"]
    );
}

#[test]
fn cute_swizzled_grid_and_files() {
    let dir = folder("render-cute");
    let s = svg(&dir, "sw.svg", &["Sw<1,0,1> o 0 o (2,2):(2,1)"]);
    assert_eq!(svg_cell(&s, 0, 1).0, "1");
    assert_eq!(svg_cell(&s, 1, 0).0, "3");
    assert_eq!(svg_cell(&s, 1, 1).0, "2");
    // A large swizzled layout shows its corner.
    let out = txt(&["Sw<3,3,3> o 0 o (8,64):(64,1)"]);
    assert!(out.contains("the first 24 of 64 columns"), "{out}");
    assert_eq!(row(&out, 1)[1..4], ["72", "73", "74"]);
    let png = arg(&dir.join("l.png"));
    assert_eq!(run(&["render", "(4,2):(2,1)", "-o", &png]).0, 0);
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
}

/// The grid of a text picture: its lines from the column header (digits only) on.
fn grid(out: &str) -> Vec<&str> {
    out.lines()
        .skip_while(|l| {
            l.trim().is_empty()
                || !l
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == ' ' || c == '…')
        })
        .collect()
}

#[test]
fn cute_tv_layout() {
    // Thread t holds column t of a 2×4 tile, values 0 and 1 down the column: in the words of every
    // picture of threads, thread t is lane t and value v is register v.
    assert_eq!(
        txt(&["(4,2):(2,1)", "--tv", "--shape", "2,4"]),
        "TV layout (4,2):(2,1) over the tile [2, 4]
  each cell: the lane holding it (L = lane) and in small text its register (r = register)
  CuTe's thread T is lane L (T = L); its value V is register r (V = r)
         0      1      2      3
0    L0 r0  L1 r0  L2 r0  L3 r0
1    L0 r1  L1 r1  L2 r1  L3 r1
"
    );
    let dir = folder("render-tv");
    let s = svg(&dir, "tv.svg", &["(4,2):(2,1)", "--tv", "--shape", "2,4"]);
    assert_eq!(svg_cell(&s, 1, 3), ("L3".into(), Some("r1".into())));
    assert_eq!(svg_cell(&s, 0, 2), ("L2".into(), Some("r0".into())));
    assert!(s.contains(">lane 3<"), "the legend names the lanes");
    // Replicated: threads 1 and 3 both hold (1, 0).
    let out = txt(&["((2,2),2):((1,0),2)", "--tv", "--shape", "2,2"]);
    assert!(out.contains("L1 r0 ×2"), "{out}");
    assert!(out.contains("×N"), "{out}");
    // A one-row tile.
    let out = txt(&["(2,2):(2,1)", "--tv", "--shape", "4"]);
    assert_eq!(
        row(&out, 0),
        ["0", "L0", "r0", "L0", "r1", "L1", "r0", "L1", "r1"]
    );
    // Past one warp: thread 37 is lane 5 of warp 1.
    let out = txt(&["(64,1):(1,0)", "--tv", "--shape", "4,16"]);
    assert!(
        out.contains("CuTe's thread T is lane L of warp W (T = 32·W + L)"),
        "{out}"
    );
    assert_eq!(row(&out, 1)[19..21], ["W1", "L5"]);
    for l in grid(&out).iter().skip(1) {
        assert!(!l.contains('T') && !l.contains('V'), "{l}");
    }
}

/// One vocabulary: CuTe's SM80 16×8 accumulator (a TV layout) and Triton's NVIDIA MMA v2 layout of one
/// warp over 16×8 are the same placement, and their pictures draw the same grid, label for label.
#[test]
fn cute_and_triton_pictures_of_one_mma_tile_agree() {
    let cute = txt(&["((4,8),(2,2)):((32,1),(16,8))", "--tv", "--shape", "16,8"]);
    let triton = txt(&[
        "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], CTAsPerCGA = [1, 1], CTASplitNum = [1, 1], CTAOrder = [1, 0], instrShape = [16, 8]}>",
        "--shape",
        "16,8",
    ]);
    assert_eq!(grid(&cute), grid(&triton), "{cute}\n{triton}");
    assert_eq!(grid(&cute).len(), 17, "{cute}");
    assert_eq!(row(&cute, 9)[1..5], ["L4", "r2", "L4", "r3"]);
}

/// A TTGIR alias header before the layout: the title is the layout's own line, the alias a note, in
/// text, SVG and PNG (drawn from the SVG).
#[test]
fn an_aliased_layout_is_titled_on_one_line() {
    let mma = "#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], CTAsPerCGA = [1, 1], CTASplitNum = [1, 1], CTAOrder = [1, 0], instrShape = [16, 8]}>";
    let dot = "#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>";
    let text = format!("{mma}\n{dot}\n");
    let out = txt(&[&text, "--shape", "64,16"]);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some(format!("{dot} over [64, 16]").as_str()));
    assert_eq!(lines.next(), Some(format!("  where {mma}").as_str()));
    let dir = folder("render-alias");
    let s = svg(&dir, "a.svg", &[&text, "--shape", "64,16"]);
    let title = s.lines().find(|l| l.contains(r#"id="title""#)).unwrap();
    assert!(
        title.ends_with(&format!(
            ">{} over [64, 16]</text>",
            dot.replace('>', "&gt;").replace('<', "&lt;")
        )),
        "{title}"
    );
    let png = arg(&dir.join("a.png"));
    assert_eq!(run(&["render", &text, "--shape", "64,16", "-o", &png]).0, 0);
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
}

#[test]
fn gluon_blocked_layout() {
    let out = txt(&[BLOCKED, "--shape", "32,16"]);
    let r0 = row(&out, 0).join(" ");
    assert!(
        r0.starts_with("0 W0 L0 r0 W0 L0 r1 W0 L0 r2 W0 L0 r3 W0 L1 r0 W0 L1 r1"),
        "{r0}"
    );
    assert!(row(&out, 8).join(" ").starts_with("8 W1 L0 r0"), "{out}");
    let dir = folder("render-gluon");
    let s = svg(&dir, "g.svg", &[BLOCKED, "--shape", "32,16"]);
    assert_eq!(svg_cell(&s, 0, 5), ("W0 L1".into(), Some("r1".into())));
    assert_eq!(svg_cell(&s, 8, 0), ("W1 L0".into(), Some("r0".into())));
    assert!(s.contains("warp 1"), "the legend names the warps");
    // Beyond Triton's power-of-two wall: 48 rows through the Axe layout's hardware map.
    let out = txt(&[BLOCKED_2X2, "--shape", "48,64"]);
    assert!(out.contains("over [48, 64]"), "{out}");
    assert!(out.contains("of 48 rows"), "{out}");
    assert!(
        row(&out, 0).join(" ").starts_with("0 W0 L0 r0 W0 L0 r1"),
        "{out}"
    );
    let png = arg(&dir.join("g.png"));
    assert_eq!(
        run(&["render", BLOCKED_2X2, "--shape", "48,64", "-o", &png]).0,
        0
    );
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
}

#[test]
fn triton_linear_layouts() {
    // Lane i, register j holds (i, j): one warp, coloured by lane.
    let out = txt(&[BASES]);
    assert!(row(&out, 2).join(" ").ends_with("L2 r2 L2 r3"), "{out}");
    // Without colours, no colour legend: the labels name the lanes.
    assert!(!out.contains("lane 3"), "{out}");
    let ttg = "#ttg.linear<{register = [[0, 1]], lane = [[1, 0], [2, 0], [0, 2]], warp = [], block = []}>";
    let dir = folder("render-linear");
    let s = svg(&dir, "l.svg", &[ttg]);
    assert_eq!(svg_cell(&s, 1, 3), ("L5".into(), Some("r1".into())));
    // Broadcast: two lanes hold each element.
    let bcast = r#"{"in": {"register": [[0, 1]], "lane": [[1, 0], [0, 0]]}, "out": {"dim0": 2, "dim1": 2}}"#;
    let out = txt(&[bcast]);
    assert!(out.contains("L1 r1 ×2"), "{out}");
    // --from forces the reading.
    let out = txt(&["--from", "triton", BASES]);
    assert!(out.contains("L2 r3"), "{out}");
}

#[test]
fn xla_and_axe_inputs_are_unchanged() {
    let out = txt(&["f32[3,5]{1,0:T(2,2)}"]);
    assert!(out.contains("12 13 16 17 20"), "{out}");
    let out = txt(&["--from", "axe", "S[4:1]"]);
    assert!(out.starts_with("S[4:1]"), "{out}");
    fails(&["(f32[2], f32[3])"], "not an array shape");
}

#[test]
fn errors_are_clear() {
    fails(&["(2,2,2):(1,2,4)"], "rank 1 or 2");
    fails(&["(4,2):(2"], "error");
    fails(&["(4,2):(2,1)", "--shape", "4,2"], "--tv");
    fails(&["(4,2):(2,1)", "--tv"], "--shape M,N");
    fails(
        &["(4,2):(2,1)", "--tv", "--shape", "2,2"],
        "outside the 2×2 tile",
    );
    fails(&["(4,2,2):(2,1,8)", "--tv", "--shape", "4,4"], "two modes");
    fails(&["(4,2):(2,1)", "--tv", "--shape", "2,2,2"], "M,N");
    fails(
        &["Sw<3,3,3> o 0 o (8,64):(64,1)", "--tv", "--shape", "8,64"],
        "plain",
    );
    fails(&[BLOCKED], "--shape 32,16");
    fails(&[BLOCKED, "--shape", "32"], "rank");
    fails(&["BlockedLayout(size_per_thread=[1, 4]"], "error");
    fails(&[BASES, "--shape", "8,8"], "out-dims");
    fails(&["f32[3,5]", "--tv", "--shape", "3,5"], "--tv is for CuTe");
    fails(&["--from", "xla", "(4,2):(2,1)"], "error");
    fails(&["--from", "cute", "f32[3,5]"], "error");
    fails(&["{not json"], "error");
    // Too large to enumerate: refused, not attempted.
    fails(
        &["(1048576,8):(8,1)", "--tv", "--shape", "8,1048576"],
        "at most",
    );
}
