#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Bit-packed pred (`T(32,128)(32,1)E(1)`) to and from row-major bytes: the kernel on the interpreter is
//! byte-identical to `axe relayout`, with the ballot variants chosen; other layouts are refused with a
//! reason.

use axe_kernel::relayout::relayout_kernel;
use axe_kernel::{emit_cuda, lower, run, RunLimits, Target};
use axe_relayout::{relayout, Options, TensorLayout};

fn shape(s: &str) -> axe_xla::ArrayShape {
    axe_xla::parse_shape(s).unwrap().as_array().unwrap().clone()
}

fn check(src: &str, dst: &str, seed: u64) {
    let (a, b) = (shape(src), shape(dst));
    let r = relayout_kernel(&a, &b).unwrap();
    let prog = lower(&r.kernel, Target::Cpu).unwrap();
    let variants: Vec<&str> = prog.decisions.iter().map(|d| d.variant.as_str()).collect();
    assert!(
        variants.iter().any(|v| v.ends_with("_bits.thread")),
        "{variants:?}"
    );
    let (la, lb) = (
        TensorLayout::from_xla(&a).unwrap(),
        TensorLayout::from_xla(&b).unwrap(),
    );
    let mut x = seed | 1;
    let input: Vec<u8> = (0..r.src_bytes)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    // Bytes of any value: a pred byte's low bit is its value, here as in `axe relayout`.
    let out = run(
        &prog,
        vec![input.clone(), vec![0xAB; r.dst_bytes as usize]],
        RunLimits::default(),
    )
    .unwrap();
    let mut want = vec![0xCD; lb.bytes() as usize];
    relayout(&input, &la, &mut want, &lb, &Options::default()).unwrap();
    assert_eq!(out[1], want, "{src} -> {dst}");
}

#[test]
fn packing_and_unpacking_match_axe_relayout() {
    for (i, dims) in [
        "32,128",
        "64,256",
        "96,384",
        "2,32,128",
        "3,1,64,128",
        "64,512",
        "32,1536",
        "2,32,640",
    ]
    .iter()
    .enumerate()
    {
        let rank = dims.split(',').count();
        let mm: Vec<String> = (0..rank).rev().map(|d| d.to_string()).collect();
        let plain = format!("pred[{dims}]{{{}}}", mm.join(","));
        let packed = format!("pred[{dims}]{{{}:T(32,128)(32,1)E(1)}}", mm.join(","));
        check(&plain, &packed, 7 + i as u64);
        check(&packed, &plain, 11 + i as u64);
    }
}

#[test]
fn the_gpu_code_moves_whole_rows_and_word_vectors() {
    let r = relayout_kernel(
        &shape("pred[64,256]{1,0}"),
        &shape("pred[64,256]{1,0:T(32,128)(32,1)E(1)}"),
    )
    .unwrap();
    let src = emit_cuda(&lower(&r.kernel, Target::Sm90a).unwrap()).unwrap();
    assert!(!src.contains("__ballot_sync"), "{src}");
    assert!(src.contains("uint4"), "16-byte stores of the words: {src}");
}

/// What a warp step takes: packing, two one-tile regions (4-byte row loads), every load of both
/// issued before the first bit is packed; unpacking, four tiles side by side (16-byte row stores),
/// fewer where the row of tiles does not divide.
#[test]
fn packing_loads_two_regions_ahead_and_unpacking_takes_wide_rows() {
    let plan = |src: &str, dst: &str| {
        let r = relayout_kernel(&shape(src), &shape(dst)).unwrap();
        let p = lower(&r.kernel, Target::Sm90a).unwrap();
        let why = p
            .decisions
            .iter()
            .map(|d| d.why.clone())
            .collect::<Vec<_>>()
            .join("\n");
        (why, emit_cuda(&p).unwrap())
    };
    let (b, w) = (
        "pred[64,1024]{1,0}",
        "pred[64,1024]{1,0:T(32,128)(32,1)E(1)}",
    );
    let (pack, src) = plan(b, w);
    assert_eq!(
        pack.matches("loads block in 32 vectors of 4 bytes").count(),
        2,
        "{pack}"
    );
    assert_eq!(
        pack.matches("stores word in 1 vector of 16 bytes").count(),
        2,
        "{pack}"
    );
    // Both regions' loads come before the first packing, each under its own branch.
    let body = &src[src.find("__global__").unwrap()..];
    let first_pack = body.find("// pack_bits").unwrap();
    assert_eq!(body[..first_pack].matches("// copy #").count(), 2, "{src}");
    assert!(body[..first_pack].matches("if (").count() >= 2, "{src}");
    let (unpack, _) = plan(w, b);
    assert!(
        unpack.contains("stores block in 32 vectors of 16 bytes"),
        "{unpack}"
    );
    assert!(
        unpack.contains("loads word in 4 vectors of 16 bytes"),
        "{unpack}"
    );
    // 640 columns: 5 tiles a row, so one tile a region unpacking.
    let (b, w) = ("pred[32,640]{1,0}", "pred[32,640]{1,0:T(32,128)(32,1)E(1)}");
    assert!(plan(b, w)
        .0
        .contains("loads block in 32 vectors of 4 bytes"));
    assert!(plan(w, b)
        .0
        .contains("stores block in 32 vectors of 4 bytes"));
}

#[test]
fn other_bit_packed_layouts_are_refused_with_a_reason() {
    for (src, dst, says) in [
        (
            "pred[30,128]{1,0}",
            "pred[30,128]{1,0:T(32,128)(32,1)E(1)}",
            "multiples of 32 and 128",
        ),
        (
            "pred[64,128]{0,1}",
            "pred[64,128]{1,0:T(32,128)(32,1)E(1)}",
            "between row-major bytes",
        ),
    ] {
        let e = relayout_kernel(&shape(src), &shape(dst))
            .unwrap_err()
            .to_string();
        assert!(e.contains(says) && e.contains("on the CPU"), "{e}");
    }
}

/// A warp packs `[32, 64]` bytes held row by row (lane r: row r) into 64 words (word j in lane j mod 32)
/// by ballots, stores them, unpacks them back by ballots; checks both laws.
#[test]
fn ballots_pack_and_unpack_by_the_laws() {
    use axe_kernel::{DType, KernelBuilder, Launch, Scope, Space};
    use axe_layout::{Axis, Layout};
    let mut k = KernelBuilder::new(
        "bits",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32,
        },
    )
    .unwrap();
    let g_in = k.buffer("x", Space::Global, DType::U8, 32 * 64).unwrap();
    let g_w = k.buffer("w", Space::Global, DType::S32, 64).unwrap();
    let g_out = k.buffer("y", Space::Global, DType::U8, 32 * 64).unwrap();
    let r_block = k.buffer("block", Space::Registers, DType::U8, 64).unwrap();
    let r_back = k.buffer("back", Space::Registers, DType::U8, 64).unwrap();
    let r_words = k.buffer("words", Space::Registers, DType::S32, 2).unwrap();
    let m = |e: &[u64], st: &[i64]| Layout::strided(e, st, &vec![Axis::memory(); e.len()]).unwrap();
    let x = k
        .tensor("x", g_in, &[32, 64], m(&[32, 64], &[64, 1]))
        .unwrap();
    let y = k
        .tensor("y", g_out, &[32, 64], m(&[32, 64], &[64, 1]))
        .unwrap();
    let w = k.tensor("w", g_w, &[64], m(&[64], &[1])).unwrap();
    let rows: Layout = "S[(32,64):(1@lane,1@reg)]".parse().unwrap();
    let block = k.tensor("block", r_block, &[32, 64], rows.clone()).unwrap();
    let back = k.tensor("back", r_back, &[32, 64], rows).unwrap();
    let words = k
        .tensor(
            "words",
            r_words,
            &[64],
            "S[(2,32):(1@reg,1@lane)]".parse().unwrap(),
        )
        .unwrap();
    let warp = Scope::warp;
    k.copy(warp(), &block, &x).unwrap();
    k.pack_bits(warp(), &words, &block).unwrap();
    k.copy(warp(), &w, &words).unwrap();
    k.unpack_bits(warp(), &back, &words).unwrap();
    k.copy(warp(), &y, &back).unwrap();
    let kernel = k.build().unwrap();
    let p = lower(&kernel, Target::Cpu).unwrap();
    let picked: Vec<&str> = p.decisions.iter().map(|d| d.variant.as_str()).collect();
    assert_eq!(picked[1], "pack_bits.ballot", "{picked:?}");
    assert_eq!(picked[3], "unpack_bits.ballot", "{picked:?}");
    let input: Vec<u8> = (0..32 * 64u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let out = run(
        &p,
        vec![input.clone(), vec![0; 256], vec![0xAB; 32 * 64]],
        RunLimits::default(),
    )
    .unwrap();
    for j in 0..64 {
        let want: u32 = (0..32).map(|r| u32::from(input[r * 64 + j] & 1) << r).sum();
        let got = u32::from_le_bytes(out[1][4 * j..4 * j + 4].try_into().unwrap());
        assert_eq!(got, want, "word {j}");
    }
    let want: Vec<u8> = input.iter().map(|v| v & 1).collect();
    assert_eq!(out[2], want);
    let src = emit_cuda(&lower(&kernel, Target::Sm80).unwrap()).unwrap();
    assert!(src.contains("__ballot_sync(0xffffffffu"), "{src}");
}
