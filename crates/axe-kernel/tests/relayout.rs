#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The relayout kernel on the interpreter is byte-identical to `axe relayout`.

use axe_kernel::relayout::relayout_kernel;
use axe_kernel::{emit_cuda, lower, run, RunLimits, Target};
use axe_relayout::{relayout, Options, TensorLayout};
use proptest::prelude::*;

fn shape(s: &str) -> axe_xla::ArrayShape {
    axe_xla::parse_shape(s)
        .expect("shape")
        .as_array()
        .expect("array")
        .clone()
}

/// Runs the kernel and the reference on the same pseudo-random source; returns both destinations.
fn both(src: &str, dst: &str) -> (Vec<u8>, Vec<u8>) {
    let (a, b) = (shape(src), shape(dst));
    let r = relayout_kernel(&a, &b).expect("kernel");
    let prog = lower(&r.kernel, Target::Cpu).expect("lower");
    let input: Vec<u8> = (0..r.src_bytes)
        .map(|i| (i.wrapping_mul(2654435761) >> 7) as u8)
        .collect();
    let out = run(
        &prog,
        vec![input.clone(), vec![0xAB; r.dst_bytes as usize]],
        RunLimits::default(),
    )
    .expect("run");
    let (la, lb) = (
        TensorLayout::from_xla(&a).expect("src"),
        TensorLayout::from_xla(&b).expect("dst"),
    );
    let mut want = vec![0xCD; lb.bytes() as usize];
    relayout(&input, &la, &mut want, &lb, &Options::default()).expect("reference");
    (out[1].clone(), want)
}

#[test]
fn relayout_matches_axe_relayout_on_the_bench_shapes_at_test_sizes() {
    for (src, dst) in [
        ("f32[24,40]{1,0}", "f32[24,40]{0,1}"),
        ("f32[16,256]{1,0}", "f32[16,256]{1,0:T(8,128)}"),
        ("bf16[16,256]{1,0}", "bf16[16,256]{1,0:T(8,128)(2,1)}"),
        ("bf16[30,260]{1,0}", "bf16[30,260]{1,0:T(8,128)(2,1)}"),
        ("f32[3,5]{1,0}", "f32[3,5]{1,0:T(2,2)}"),
        ("s8[64,256]{1,0}", "s8[64,256]{1,0:T(32,128)(4,1)}"),
        ("f32[4,6,10]{2,1,0}", "f32[4,6,10]{0,2,1}"),
        ("f16[300,200]{1,0:T(8,128)(2,1)}", "f16[300,200]{0,1}"),
        ("f64[5,7]{0,1}", "f64[5,7]{1,0}"),
        // Large enough for big shared tiles and two-dimensional vectors.
        ("bf16[64,256]{1,0}", "bf16[64,256]{1,0:T(8,128)(2,1)}"),
        ("bf16[64,256]{1,0:T(8,128)(2,1)}", "bf16[64,256]{1,0}"),
        ("s8[64,256]{1,0}", "s8[64,256]{1,0:T(8,128)(4,1)}"),
        ("s8[64,256]{1,0:T(8,128)(4,1)}", "s8[64,256]{1,0}"),
        ("f32[128,96]{1,0}", "f32[128,96]{0,1}"),
        ("f16[16,64,32]{2,1,0}", "f16[16,64,32]{0,1,2}"),
        ("bf16[64,256]{0,1}", "bf16[64,256]{1,0:T(8,128)(2,1)}"),
    ] {
        let (got, want) = both(src, dst);
        assert!(
            got == want,
            "{src} -> {dst}: the kernel's bytes differ from axe relayout's"
        );
    }
}

#[test]
fn contiguous_pieces_get_16_byte_vectors_and_transposes_go_through_shared_memory() {
    let r = relayout_kernel(
        &shape("f32[16,256]{1,0}"),
        &shape("f32[16,256]{1,0:T(8,128)}"),
    )
    .unwrap();
    let p = lower(&r.kernel, Target::Sm80).unwrap();
    assert!(
        p.decisions.iter().all(|d| d.variant == "copy.vec16"),
        "{:?}",
        p.decisions
    );
    let src = emit_cuda(&p).unwrap();
    assert!(src.contains("uint4"));
    let r = relayout_kernel(&shape("f32[24,40]{1,0}"), &shape("f32[24,40]{0,1}")).unwrap();
    let p = lower(&r.kernel, Target::Sm80).unwrap();
    // The transpose goes through a shared tile, with 16-byte vectors on both sides.
    let d = &p.decisions[0];
    assert_eq!(d.variant, "copy.staged", "{d:?}");
    assert!(d.why.contains("16-byte loads and 16-byte stores"), "{d:?}");
    assert!(
        d.declined[0]
            .1
            .contains("16-byte vectors need 4 contiguous f32"),
        "{d:?}"
    );
}

#[test]
fn mismatched_arrays_are_refused() {
    let e = relayout_kernel(&shape("f32[4,4]{1,0}"), &shape("f32[4,5]{1,0}")).unwrap_err();
    assert!(e.to_string().contains("differ"), "{e}");
    let e =
        relayout_kernel(&shape("f32[3,5]{1,0:E(4)}"), &shape("f32[3,5]{0,1:E(4)}")).unwrap_err();
    assert!(e.to_string().contains("whole-byte"), "{e}");
}

fn arb_layout(rank: usize) -> impl Strategy<Value = String> {
    let perm = Just((0..rank).collect::<Vec<usize>>()).prop_shuffle();
    let tile = prop_oneof![
        Just(String::new()),
        Just(":T(2,2)".to_string()),
        Just(":T(4,8)".to_string()),
        Just(":T(8,128)".to_string()),
        Just(":T(8,128)(2,1)".to_string()),
        Just(":T(4)".to_string()),
        Just(":T(8,128)L(1024)".to_string()),
        Just(":T(3,5)".to_string()),
        Just(":T(8,2)(2,1)".to_string()),
        Just(":T(4,4)(2,2)".to_string()),
        Just(":T(2,1)(1,2)".to_string()),
    ];
    (perm, tile).prop_map(|(p, t)| {
        let p: Vec<String> = p.iter().map(|d| d.to_string()).collect();
        format!("{{{}{t}}}", p.join(","))
    })
}

fn arb_case() -> impl Strategy<Value = (Vec<u64>, String, String, &'static str)> {
    (2usize..4).prop_flat_map(|rank| {
        (
            prop::collection::vec(1u64..12, rank),
            arb_layout(rank),
            arb_layout(rank),
            prop::sample::select(vec!["f32", "bf16", "s8", "f64"]),
        )
    })
}

/// The kernel on the interpreter and `axe relayout` give the same bytes for `ty[dims]` from layout `la`
/// to `lb`. Layouts with no Axe form (tiles splitting digits mid-dimension) are skipped by both sides.
fn pair_agrees(dims: &[u64], la: &str, lb: &str, ty: &str) -> Result<(), TestCaseError> {
    let d: Vec<String> = dims.iter().map(|x| x.to_string()).collect();
    let (a, b) = (
        format!("{ty}[{}]{la}", d.join(",")),
        format!("{ty}[{}]{lb}", d.join(",")),
    );
    let (sa, sb) = (shape(&a), shape(&b));
    prop_assume!(axe_xla::to_axe(&sa).is_ok() && axe_xla::to_axe(&sb).is_ok());
    prop_assume!(TensorLayout::from_xla(&sa).is_ok() && TensorLayout::from_xla(&sb).is_ok());
    // Tilings whose digits share no boundaries (T(3,5) against T(4,4)(2,2)) can need more pieces
    // than a kernel may have: refused, cleanly.
    prop_assume!(!matches!(
        relayout_kernel(&sa, &sb),
        Err(axe_kernel::KernelError::TooLarge(_))
    ));
    let (got, want) = both(&a, &b);
    prop_assert!(got == want, "{} -> {}", a, b);
    Ok(())
}

/// Dimensions that powers of two divide, so that staged copies take large tiles.
fn arb_wide_case() -> impl Strategy<Value = (Vec<u64>, String, String, &'static str)> {
    (2usize..4)
        .prop_flat_map(|rank| {
            (
                prop::collection::vec(
                    prop::sample::select(vec![2u64, 8, 16, 24, 64, 128, 256]),
                    rank,
                ),
                arb_layout(rank),
                arb_layout(rank),
                prop::sample::select(vec!["f32", "bf16", "s8", "f16"]),
            )
        })
        .prop_filter("at most 2^16 elements", |(d, ..)| {
            d.iter().product::<u64>() <= 1 << 16
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]
    #[test]
    fn relayout_matches_axe_relayout_on_random_pairs_with_large_tiles((dims, la, lb, ty) in arb_wide_case()) {
        pair_agrees(&dims, &la, &lb, ty)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]
    #[test]
    fn relayout_matches_axe_relayout_on_random_layout_pairs((dims, la, lb, ty) in arb_case()) {
        pair_agrees(&dims, &la, &lb, ty)?;
    }
}

#[test]
fn staged_pieces_share_one_shared_tile() {
    // A transpose cut into several pieces (the padded dimension): every staged piece reuses the tile.
    let r = relayout_kernel(
        &shape("f32[40,100]{1,0}"),
        &shape("f32[40,100]{0,1:T(8,128)}"),
    )
    .unwrap();
    let p = lower(&r.kernel, Target::Sm90a).unwrap();
    let staged = p
        .decisions
        .iter()
        .filter(|d| d.variant == "copy.staged")
        .count();
    let tiles = p
        .buffers
        .iter()
        .filter(|b| b.name.ends_with("_tile"))
        .count();
    assert!(
        staged >= 1 && tiles == 1,
        "{staged} staged calls, {tiles} tiles: {:?}",
        p.decisions
    );
}
