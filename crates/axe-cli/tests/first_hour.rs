//! What a new user meets first: help that says what a command takes, errors that name the real problem,
//! exit codes that scripts can use, and `.npy` files in either order.
#![allow(clippy::unwrap_used)]

mod common;

use common::run;

#[test]
fn an_index_of_the_wrong_rank_is_a_rank_mismatch_not_out_of_bounds() {
    let (code, _, err) = run(&["xla", "index", "f32[3,5]", "--index", "1"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("has 1 coordinate(s), but the array has 2 dimension(s) [3, 5]"),
        "{err}"
    );
    let (code, _, err) = run(&["xla", "index", "f32[3,5]", "--index", "3,0"]);
    assert_eq!(code, 1);
    assert!(err.contains("out of bounds"), "{err}");
}

#[test]
fn xla_index_without_an_element_names_both_ways_to_give_one() {
    let (code, _, err) = run(&["xla", "index", "f32[3,5]"]);
    assert_eq!(code, 2);
    assert!(err.contains("--index") && err.contains("--all"), "{err}");
    let (code, _, err) = run(&["xla", "index", "f32[3,5]", "--index", "1,1", "--all"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn tpu_layout_asks_for_shapes_not_shapes_with_layouts() {
    let (code, out, _) = run(&["xla", "tpu-layout", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("'bf16[16,256]'"), "{out}");
    assert!(!out.contains("with layouts"), "{out}");
    let (code, out, err) = run(&["xla", "tpu-layout", "bf16[16,256]"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("{1,0:T(8,128)(2,1)}"), "{out}");
}

#[test]
fn layout_equiv_exits_as_cmp_does() {
    let (code, out, _) = run(&["layout", "equiv", "S[(2,4):(4,1)]", "S[8:1]"]);
    assert_eq!((code, out.trim()), (0, "equivalent"));
    let (code, out, _) = run(&["layout", "equiv", "S[4:1]", "S[4:2]"]);
    assert_eq!((code, out.trim()), (1, "not equivalent"));
    let (code, out, _) = run(&["layout", "equiv", "S[4:1]", "S[4:2]", "--json"]);
    assert_eq!(code, 1);
    assert!(out.contains("\"equivalent\":false"), "{out}");
}

#[test]
fn explain_refuses_a_shape_option_it_would_ignore() {
    let (code, _, err) = run(&["explain", "f32[4,4]", "--shape", "4,4"]);
    assert_eq!(code, 1);
    assert!(err.contains("--shape is for Axe layouts"), "{err}");
    let (code, _, err) = run(&["explain", "S[16:1]", "--shape", "4,4"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_missing_output_folder_is_named_not_the_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.bin");
    std::fs::write(&input, [0u8; 16]).unwrap();
    let out = dir.path().join("no-such-folder/out.bin");
    let (code, _, err) = run(&[
        "relayout",
        "--shape",
        "f32[2,2]",
        "--to",
        "{0,1}",
        input.to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("no-such-folder does not exist"), "{err}");
    assert!(!err.contains(".out.bin."), "{err}");
}

/// A `.npy` file of `dims` f32 values `values` (in the file's order), C or Fortran order.
fn npy(path: &std::path::Path, dims: &[u64], values: &[f32], order: npyz::Order) {
    use npyz::WriterBuilder;
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .order(order)
        .shape(dims)
        .writer(std::fs::File::create(path).unwrap())
        .begin_nd()
        .unwrap();
    w.extend(values.iter().copied()).unwrap();
    w.finish().unwrap();
}

fn read_npy(path: &std::path::Path) -> (Vec<u64>, npyz::Order, Vec<f32>) {
    let f = npyz::NpyFile::new(std::fs::File::open(path).unwrap()).unwrap();
    let (shape, order) = (f.shape().to_vec(), f.order());
    (shape, order, f.into_vec::<f32>().unwrap())
}

#[test]
fn fortran_order_npy_files_are_the_column_major_layout() {
    let dir = tempfile::tempdir().unwrap();
    // The 2×3 array [[0,1,2],[3,4,5]], kept column by column.
    let f = dir.path().join("f.npy");
    npy(&f, &[2, 3], &[0., 3., 1., 4., 2., 5.], npyz::Order::Fortran);
    let f = f.to_str().unwrap();
    // Read as what it is: to row-major .npy ...
    let c = dir.path().join("c.npy");
    let (code, _, err) = run(&[
        "relayout",
        "--shape",
        "f32[2,3]",
        "--to",
        "{1,0}",
        f,
        c.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        read_npy(&c),
        (vec![2, 3], npyz::Order::C, vec![0., 1., 2., 3., 4., 5.])
    );
    // ... and to column-major, which is the file's own layout: the same bytes, in a Fortran-order .npy.
    let back = dir.path().join("back.npy");
    let (code, _, err) = run(&[
        "relayout",
        "--shape",
        "f32[2,3]{0,1}",
        "--to",
        "{0,1}",
        f,
        back.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        read_npy(&back),
        (
            vec![2, 3],
            npyz::Order::Fortran,
            vec![0., 3., 1., 4., 2., 5.]
        )
    );
    // A tiled --shape is not what a Fortran-order file holds.
    let (code, _, err) = run(&[
        "relayout",
        "--shape",
        "f32[2,3]{0,1:T(2,2)}",
        "--to",
        "{1,0}",
        f,
        "x.bin",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("column-major (Fortran order)"), "{err}");
}

#[test]
fn explain_reads_every_layout_notation_and_names_the_command_for_shardings() {
    let (code, out, err) = run(&["explain", "(8,(4,2)):(4,(1,32))"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("CuTe layout") && out.contains("S[(2,4,8):(32,1,4)]"),
        "{out}"
    );
    let gluon = "BlockedLayout(size_per_thread=[1,4], threads_per_warp=[8,4], warps_per_cta=[2,1], order=[1,0])";
    let (code, out, err) = run(&["explain", gluon, "--shape", "16,16"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Triton layout") && out.contains("@lane"),
        "{out}"
    );
    let (code, _, err) = run(&["explain", "Sw<3,3,3> o 0 o (8,64):(64,1)"]);
    assert_eq!(code, 1);
    assert!(err.contains("axe cute show"), "{err}");
    for sharding in ["P('x')", "{devices=[2,1]<=[2]}", "[Shard(0), Replicate()]"] {
        let (code, _, err) = run(&["explain", sharding]);
        assert_eq!(code, 1, "{sharding}");
        assert!(err.contains("is a sharding; `axe shard show"), "{err}");
    }
}

#[test]
fn render_draws_a_sharding_over_its_mesh() {
    let (code, out, err) = run(&[
        "render",
        "P('x','y')",
        "--shape",
        "8,16",
        "--mesh",
        "x=2,y=2",
        "--format",
        "txt",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1@gpu_x") && out.contains("1/1"), "{out}");
    // Alpa's notation draws the same picture: S0S1 is P('x','y') on a two-axis mesh.
    let (code, alpa, err) = run(&[
        "render", "S0S1", "--shape", "8,16", "--mesh", "x=2,y=2", "--format", "txt",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(alpa, out);
    let (code, _, err) = run(&["render", "P('x')", "--format", "txt"]);
    assert_eq!(code, 1);
    assert!(err.contains("--shape"), "{err}");
    let (code, _, err) = run(&["render", "(4,2):(2,1)", "--mesh", "x=2"]);
    assert_eq!(code, 1);
    assert!(err.contains("--mesh is for shardings"), "{err}");
}

#[test]
fn hlo_shards_names_the_command_for_other_notations() {
    let (code, _, err) = run(&["hlo", "shards", "P('x')", "--shape", "f32[4,4]"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("`axe shard show` reads every notation"),
        "{err}"
    );
    let (code, out, err) = run(&[
        "hlo",
        "shards",
        "{devices=[2,1]<=[2]}",
        "--shape",
        "f32[4,4]",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("device    1: [2:4, 0:4]"), "{out}");
}

#[test]
fn a_module_without_relayouts_says_so_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.hlo");
    std::fs::write(
        &path,
        "HloModule m\n\nENTRY e {\n  p = f32[4,4]{1,0} parameter(0)\n  ROOT n = f32[4,4]{1,0} negate(p)\n}\n",
    )
    .unwrap();
    let (code, out, err) = run(&["hlo", "stats", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("no relayouts"), "{out}");
    assert!(!out.contains("0 relayouts"), "{out}");
}

#[test]
fn render_draws_a_sharding_as_blocks_at_a_realistic_size() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("m.svg");
    // The array may be given as an XLA shape, as `shard show` takes it.
    let (code, _, err) = run(&[
        "render",
        "P('data', None)",
        "--mesh",
        "data=2,model=4",
        "--shape",
        "bf16[64,128]",
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    let width: u32 = text
        .split("width=\"")
        .nth(1)
        .and_then(|w| w.split('"').next())
        .and_then(|w| w.parse().ok())
        .unwrap();
    assert!(width <= 2000, "{width} px wide");
    // One block per device region, each naming its devices once; the title says what was typed.
    for label in [
        ">0,1,2,3<",
        ">4,5,6,7<",
        "P('data', None) over [64,128] on mesh data=2,model=4",
    ] {
        assert!(text.contains(label), "no {label} in {text}");
    }
    assert!(!text.contains(">R "), "no per-element cells: {text}");
}

#[test]
fn render_formats_say_what_they_hold() {
    // Text has no colours, so its notes say nothing of them; SVG keeps them.
    let (code, out, err) = run(&["render", "(4,2):(2,1)", "--format", "txt"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("colour"), "{out}");
    let (code, out, _) = run(&["render", "(4,2):(2,1)", "--format", "svg"]);
    assert_eq!(code, 0);
    assert!(out.contains("colour"), "{out}");
    // A file named .svg never receives PNG bytes.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.svg");
    let (code, _, err) = run(&[
        "render",
        "(4,2):(2,1)",
        "-o",
        path.to_str().unwrap(),
        "--format",
        "png",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("is named .svg, but --format asks for png"),
        "{err}"
    );
    assert!(!path.exists());
}
