#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! relayout against a naive element-by-element reference computed from the layouts' own index functions
//! (XLA's tiled linear index, the Axe map), on random shapes (including non-divisible), random layout pairs
//! (XLA with 0–3 tiles, Axe with negative strides and replicas), every element width; and A → B → A is the
//! identity on the logical elements.

use axe_layout::Layout;
use axe_relayout::{plan, relayout, Isa, Mode, Options, Straight, TensorLayout};
use axe_xla::{ArrayShape, Dim, Layout as XlaLayout, PrimitiveType, Tile, TileDim, Tiling};
use proptest::prelude::*;

mod common;
use common::{check_moved, random_bytes, xla_pair};

/// A side of the copy: its TensorLayout plus an independent way to find each element's slots.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant, reason = "a few values per test case")]
enum Side {
    Xla(ArrayShape),
    Axe(Layout, Vec<u64>, u32),
}

impl Side {
    fn tensor(&self) -> Option<TensorLayout> {
        match self {
            Side::Xla(a) => TensorLayout::from_xla(a).ok(),
            Side::Axe(l, dims, bits) => TensorLayout::from_axe(l, dims, *bits).ok(),
        }
    }

    /// Slots of element `e` (all copies), from the layout's own index function.
    fn slots(&self, e: &[u64]) -> Vec<i64> {
        match self {
            Side::Xla(a) => {
                let idx: Vec<i64> = e.iter().map(|&x| x as i64).collect();
                vec![Tiling::new(a).unwrap().linear_index(&idx).unwrap()]
            }
            Side::Axe(l, dims, _) => l
                .apply_multi(e, dims)
                .unwrap()
                .iter()
                .map(|c| c.get(&axe_layout::Axis::memory()))
                .collect(),
        }
    }
}

fn get_bits(buf: &[u8], at: i64, bits: u32) -> u128 {
    let mut v = 0u128;
    for b in 0..bits as i64 {
        let i = at * bits as i64 + b;
        v |= (((buf[(i / 8) as usize] >> (i % 8)) & 1) as u128) << b;
    }
    v
}

fn all_indices(dims: &[u64]) -> Vec<Vec<u64>> {
    let mut out = vec![vec![]];
    for &d in dims {
        out = out
            .into_iter()
            .flat_map(|p: Vec<u64>| (0..d).map(move |i| [p.clone(), vec![i]].concat()))
            .collect();
    }
    out
}

fn xla_side(
    dims: &[u64],
    ty: PrimitiveType,
    e: i64,
    order: Vec<i64>,
    tiles: Vec<Vec<i64>>,
) -> Side {
    let mut layout = XlaLayout::with_minor_to_major(order);
    layout.tiles = tiles
        .into_iter()
        .map(|t| Tile(t.into_iter().map(TileDim::Size).collect()))
        .collect();
    layout.element_size_in_bits = e;
    Side::Xla(ArrayShape {
        element_type: ty,
        dims: dims.iter().map(|&d| Dim::Static(d as i64)).collect(),
        layout,
    })
}

/// Element types with their width in bits: 1, 2, 4, 8, 16 bytes, and packed 4/2/1-bit.
fn width() -> impl Strategy<Value = (PrimitiveType, i64, u32)> {
    prop_oneof![
        Just((PrimitiveType::U8, 0, 8)),
        Just((PrimitiveType::Bf16, 0, 16)),
        Just((PrimitiveType::F32, 0, 32)),
        Just((PrimitiveType::F64, 0, 64)),
        Just((PrimitiveType::C128, 0, 128)),
        Just((PrimitiveType::S4, 4, 4)),
        Just((PrimitiveType::U2, 2, 2)),
        Just((PrimitiveType::Pred, 1, 1)),
    ]
}

fn tiles_strategy(rank: usize) -> impl Strategy<Value = Vec<Vec<i64>>> {
    proptest::collection::vec(
        proptest::collection::vec(prop_oneof![1i64..=4, Just(8)], 1..=rank.max(1)),
        0..=3,
    )
}

fn side_strategy(dims: Vec<u64>, w: (PrimitiveType, i64, u32)) -> impl Strategy<Value = Side> {
    let rank = dims.len();
    let d1 = dims.clone();
    let xla = (
        Just((0..rank as i64).collect::<Vec<_>>()).prop_shuffle(),
        tiles_strategy(rank),
    )
        .prop_map(move |(order, tiles)| xla_side(&d1, w.0, w.1, order, tiles));
    let d2 = dims.clone();
    // An Axe layout: a permuted, possibly negative-stride, possibly gapped strided layout with replicas.
    let axe = (
        Just((0..rank).collect::<Vec<_>>()).prop_shuffle(),
        proptest::collection::vec((any::<bool>(), 1i64..=2), rank),
        0usize..=2,
    )
        .prop_map(move |(perm, flips, reps)| {
            let mut strides = vec![0i64; rank];
            let mut acc = 1i64;
            for &d in perm.iter().rev() {
                strides[d] = acc * flips[d].1;
                acc *= d2[d] as i64 * flips[d].1;
            }
            let mut offset = 0i64;
            for d in 0..rank {
                if flips[d].0 {
                    offset += (d2[d] as i64 - 1) * strides[d];
                    strides[d] = -strides[d];
                }
            }
            let mut text = format!(
                "S[({}):({})]",
                d2.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                strides
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            );
            if rank == 0 {
                text = "S[]".into();
            }
            if reps > 0 {
                text.push_str(&format!(" + R[{reps}:{acc}]", reps = reps + 1));
            }
            if offset > 0 {
                text.push_str(&format!(" + {offset}"));
            }
            Side::Axe(text.parse().unwrap(), d2.clone(), w.2)
        });
    prop_oneof![3 => xla, 1 => axe]
}

fn case() -> impl Strategy<Value = (Side, Side, u64)> {
    (
        proptest::collection::vec(1u64..=7, 0..=3),
        width(),
        any::<u64>(),
    )
        .prop_flat_map(|(dims, w, seed)| {
            (
                side_strategy(dims.clone(), w),
                side_strategy(dims, w),
                Just(seed),
            )
        })
}

/// Relays `a` into `b` from random bytes (both buffers starting `shift` bytes into their allocation)
/// and checks every element, every copy, the padding, and the way back.
fn check(
    a: &Side,
    b: &Side,
    seed: u64,
    shift: (usize, usize),
    opts: &Options,
) -> Result<(), TestCaseError> {
    let (Some(ta), Some(tb)) = (a.tensor(), b.tensor()) else {
        return Ok(());
    };
    prop_assume!(tb.injective && ta.injective);
    let (sbits, dbits) = (ta.bits, tb.bits);
    // The low min(source, destination) bits of each element move; the rest of the destination's are 0.
    let mask = |v: u128| {
        if sbits.min(dbits) >= 128 {
            v
        } else {
            v & ((1u128 << sbits.min(dbits)) - 1)
        }
    };
    // Buffers start `shift` bytes past a 64-byte boundary (0: aligned, as the widest stores want).
    let at = |v: &Vec<u8>, shift: usize| v.as_ptr().align_offset(64) + shift;
    let mut src_alloc = random_bytes(ta.bytes() as usize + shift.0 + 64, seed);
    let from = at(&src_alloc, shift.0);
    let src = &mut src_alloc[from..];
    let mut dst_alloc = vec![0xa5u8; tb.bytes() as usize + shift.1 + 64];
    let to = at(&dst_alloc, shift.1);
    let dst = &mut dst_alloc[to..];
    let plan = relayout(src, &ta, dst, &tb, opts).unwrap();
    let dims = ta.dims.clone();
    let mut covered = vec![false; tb.slots as usize];
    for e in all_indices(&dims) {
        let from = a.slots(&e)[0];
        let want = mask(get_bits(src, from, sbits));
        for to in b.slots(&e) {
            prop_assert_eq!(
                get_bits(dst, to, dbits),
                want,
                "element {:?}: {:?} -> {:?} ({})",
                e,
                a,
                b,
                plan
            );
            covered[to as usize] = true;
        }
    }
    // Padding: every slot no element went to is zero.
    for (slot, c) in covered.iter().enumerate() {
        if !c {
            prop_assert_eq!(
                get_bits(dst, slot as i64, dbits),
                0,
                "padding slot {} not zeroed ({})",
                slot,
                plan
            );
        }
    }
    // Slack: the bits past the last slot, in the buffer's last byte, are zero as well.
    let used = tb.slots * u64::from(dbits);
    if used % 8 != 0 {
        let last = dst[tb.bytes() as usize - 1];
        prop_assert_eq!(last >> (used % 8), 0, "slack bits not zeroed ({})", plan);
    }
    // And back: A -> B -> A gives the logical elements back.
    let mut back_alloc = vec![0u8; ta.bytes() as usize + shift.0 + 64];
    let back_at = at(&back_alloc, shift.0);
    let back = &mut back_alloc[back_at..];
    relayout(dst, &tb, back, &ta, opts).unwrap();
    for e in all_indices(&dims) {
        let at = a.slots(&e)[0];
        prop_assert_eq!(
            get_bits(back, at, sbits),
            mask(get_bits(src, at, sbits)),
            "back at {:?}",
            e
        );
    }
    Ok(())
}

/// Options the kernels care about: cached or non-temporal stores, 1–3 threads, either side walked in
/// order where run copies may walk either (the instruction set is chosen by [`check_every_isa`]).
fn options() -> impl Strategy<Value = Options> {
    (
        1usize..=3,
        prop_oneof![Just(None), Just(Some(true)), Just(Some(false))],
        prop_oneof![
            Just(None),
            Just(Some(Straight::Source)),
            Just(Some(Straight::Destination))
        ],
    )
        .prop_map(|(threads, streaming, walk)| Options {
            zero_padding: true,
            threads,
            isa: None,
            streaming,
            walk,
        })
}

/// [`check`] under every instruction set this processor runs (AVX-512, AVX2, SSE2 and portable on an
/// AVX-512 machine; NEON and portable on aarch64), each against the same reference: every kernel path
/// writes the same bytes.
fn check_every_isa(
    a: &Side,
    b: &Side,
    seed: u64,
    shift: (usize, usize),
    opts: &Options,
) -> Result<(), TestCaseError> {
    for isa in Isa::available() {
        let opts = Options {
            isa: Some(isa),
            ..*opts
        };
        check(a, b, seed, shift, &opts).map_err(|e| match e {
            TestCaseError::Fail(why) => TestCaseError::fail(format!("{}: {why}", isa.name())),
            other => other,
        })?;
    }
    Ok(())
}

/// Shapes and layout pairs the dedicated kernels handle, big enough for whole vectors and ragged
/// edges: tiled and row-major (both ways), sub-tiles that interleave rows ((2,1), (4,1), pred's
/// (32,1) with `E(1)`), transposes.
fn kernel_case() -> impl Strategy<Value = (Side, Side)> {
    let ty = prop_oneof![
        Just((PrimitiveType::U8, 0i64)),
        Just((PrimitiveType::Bf16, 0)),
        Just((PrimitiveType::F32, 0)),
        Just((PrimitiveType::F64, 0)),
        Just((PrimitiveType::Pred, 0)),
    ];
    // Up to 300 along the minor dimension: past the 128-column spans and tiles of the kernels.
    let dims = prop_oneof![
        (1u64..=80, 1u64..=300).prop_map(|(a, b)| vec![a, b]),
        proptest::collection::vec(1u64..=24, 3),
    ];
    (
        dims,
        ty,
        0usize..6,
        any::<bool>(),
        Just(()).prop_perturb(|_, mut rng| rng.next_u64()),
    )
        .prop_map(|(dims, (ty, _), kind, flip, pick)| {
            let rank = dims.len();
            let row_major: Vec<i64> = (0..rank as i64).rev().collect();
            let mut other = row_major.clone();
            other.reverse();
            if rank == 3 && pick % 2 == 0 {
                other = vec![2, 0, 1];
            }
            let rows = [1i64, 2, 4, 8][(pick / 2 % 4) as usize];
            let cols = [16i64, 32, 64, 128][(pick / 8 % 4) as usize];
            let sub: Vec<i64> = match (ty, kind) {
                (PrimitiveType::Bf16, 1) => vec![2, 1],
                (PrimitiveType::U8, 1) => vec![4, 1],
                (PrimitiveType::U8, 2) => vec![2, 1],
                (PrimitiveType::Pred, 1) => vec![32, 1],
                (PrimitiveType::Pred, 2) => vec![16, 1],
                _ => vec![],
            };
            let mut tiles = vec![vec![rows.max(sub.first().copied().unwrap_or(1)), cols]];
            if !sub.is_empty() {
                tiles.push(sub);
            }
            let e = if ty == PrimitiveType::Pred && (kind == 1 || kind == 2) {
                1
            } else {
                0
            };
            let plain = xla_side(&dims, ty, 0, row_major.clone(), vec![]);
            let (a, b) = match kind {
                0..=2 => (plain, xla_side(&dims, ty, e, row_major.clone(), tiles)),
                3 => (plain, xla_side(&dims, ty, 0, other, vec![])),
                4 => (plain, xla_side(&dims, ty, 0, other, tiles)),
                _ => (
                    xla_side(&dims, ty, 0, other, vec![]),
                    xla_side(&dims, ty, 0, row_major, tiles),
                ),
            };
            if flip {
                (b, a)
            } else {
                (a, b)
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn matches_the_naive_reference_and_round_trips((a, b, seed) in case(), opts in options()) {
        check_every_isa(&a, &b, seed, (0, 0), &opts)?;
    }

    #[test]
    fn kernels_match_the_naive_reference(
        (a, b) in kernel_case(),
        seed in any::<u64>(),
        shift in (0usize..=8, 0usize..=8),
        opts in options(),
    ) {
        check_every_isa(&a, &b, seed, shift, &opts)?;
    }
}

/// The tensor layout of an XLA shape string.
fn xla(shape: &str) -> TensorLayout {
    TensorLayout::from_xla(axe_xla::parse_shape(shape).unwrap().as_array().unwrap()).unwrap()
}

#[test]
fn refuses_mismatches_and_small_buffers() {
    let a = xla("f32[4,4]");
    let b = xla("f32[4,5]");
    let c = xla("f32[4,4]{0,1:T(2,2)}");
    let mut out = vec![0u8; 64];
    assert!(relayout(&[0u8; 64], &a, &mut out, &b, &Options::default()).is_err());
    assert!(relayout(&[0u8; 10], &a, &mut out, &c, &Options::default())
        .unwrap_err()
        .to_string()
        .contains("source has 10 bytes"));
    let overlap = TensorLayout::from_axe(&"S[(4,4):(1,1)]".parse().unwrap(), &[4, 4], 32).unwrap();
    assert!(
        relayout(&[0u8; 64], &a, &mut out, &overlap, &Options::default())
            .unwrap_err()
            .to_string()
            .contains("several elements")
    );
    assert!(TensorLayout::from_axe(&"S[4:1@lane]".parse().unwrap(), &[4], 32).is_err());
    assert!(TensorLayout::from_axe(&"S[4:-1]".parse().unwrap(), &[4], 32).is_err());
}

/// An element size narrower than the element's type drops bits whose fate XLA leaves undefined: refused,
/// but for pred packed into E(1). As wide as the type or wider (unpacked sub-byte types) is read.
#[test]
fn element_sizes_narrower_than_the_type_are_refused_but_for_pred() {
    let read =
        |s: &str| TensorLayout::from_xla(axe_xla::parse_shape(s).unwrap().as_array().unwrap());
    for narrow in [
        "s8[4]{0:E(4)}",
        "u8[8]{0:E(1)}",
        "s4[4]{0:E(2)}",
        "bf16[4]{0:E(8)}",
    ] {
        let e = read(narrow).unwrap_err().to_string();
        assert!(e.contains("XLA does not say"), "{narrow}: {e}");
    }
    for fine in [
        "pred[32]{0:E(1)}",
        "s4[4]{0:E(4)}",
        "s4[4]{0}",
        "u2[8]{0:E(2)}",
        "u8[4]{0:E(8)}",
    ] {
        assert!(read(fine).is_ok(), "{fine}");
    }
}

/// The standard TPU layouts at sizes that run every kernel's widest path (whole 128-column spans, whole
/// transpose tiles) and its ragged edges, on every instruction set, cached and non-temporal, both ways:
/// pred's bit packing here, the other kernels in [`kernels_on_tpu_layouts`] (two tests, so that the
/// test harness runs them side by side).
#[test]
fn bit_kernels_on_tpu_layouts() {
    check_tpu_layouts(&[
        ("pred[70,300]{1,0}", "{1,0:T(32,128)(32,1)E(1)}"),
        ("pred[64,256]{1,0}", "{1,0:T(32,128)(32,1)E(1)}"),
        ("pred[40,300]{1,0}", "{1,0:T(16,128)(16,1)E(1)}"),
        ("pred[24,200]{1,0}", "{1,0:T(8,128)(8,1)E(1)}"),
        // Rows of more than eight 64-column chunks (which the bit kernels turn eight at a time), and
        // a chunk left over.
        ("pred[70,1100]{1,0}", "{1,0:T(32,128)(32,1)E(1)}"),
        ("pred[40,600]{1,0}", "{1,0:T(16,128)(16,1)E(1)}"),
        ("pred[24,1090]{1,0}", "{1,0:T(8,128)(8,1)E(1)}"),
    ]);
}

/// [`bit_kernels_on_tpu_layouts`] for the sub-tile interleaves, tile copies and transposes.
#[test]
fn kernels_on_tpu_layouts() {
    check_tpu_layouts(&[
        ("bf16[24,300]{1,0}", "{1,0:T(8,128)(2,1)}"),
        ("s8[40,260]{1,0}", "{1,0:T(8,128)(4,1)}"),
        ("f32[70,300]{1,0}", "{1,0:T(8,128)}"),
        ("f32[70,300]{1,0}", "{0,1}"),
        ("bf16[70,300]{1,0}", "{0,1}"),
        ("bf16[64,300]{1,0}", "{0,1}"),
        ("u8[70,300]{1,0}", "{0,1}"),
        ("f64[40,130]{1,0}", "{0,1}"),
        ("f32[3,50,140]{2,1,0}", "{0,1,2}"),
        ("f32[4,40,3,130]{3,2,1,0}", "{3,1,2,0}"),
    ]);
}

/// Each relayout of `cases` and its inverse under every instruction set, order and thread count.
fn check_tpu_layouts(cases: &[(&str, &str)]) {
    for &(shape, to) in cases {
        let (a, b) = xla_pair(shape, to);
        for isa in Isa::available() {
            for (streaming, walk) in [
                (Some(false), Straight::Source),
                (Some(true), Straight::Destination),
                (Some(true), Straight::Source),
            ] {
                for threads in [1, 2] {
                    let opts = Options {
                        zero_padding: true,
                        threads,
                        isa: Some(isa),
                        streaming,
                        walk: Some(walk),
                    };
                    let (sa, sb) = (Side::Xla(a.clone()), Side::Xla(b.clone()));
                    check(&sa, &sb, 7, (0, 0), &opts).unwrap();
                    check(&sb, &sa, 11, (3, 5), &opts).unwrap();
                }
            }
        }
    }
}

/// A side of a strided 3-D tensor: element `e` lies at `base + Σ e_d·strides_d` (in elements).
type Strided = ([i64; 3], i64);

/// Which transpose a plan names.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kernel {
    /// Tiles of register blocks straight into the destination.
    Direct,
    /// Through the staging buffer (bytes).
    Staged,
    /// Through a buffer, each destination row's partial last line carried to the next tile.
    Carried,
}

/// Whether transposes under `isa` carry partial lines when streamed: where its kernels have
/// non-temporal stores (x86-64's SIMD sets).
fn kernels_carry(isa: Isa) -> bool {
    matches!(isa, Isa::Sse2 | Isa::Avx2 | Isa::Avx512)
}

/// Relayouts `src` from `ta` into `tb` with `opts`, into a destination starting `skew` bytes past a
/// 64-byte boundary; checks that the plan is a transpose of the `kernel` expected and that every
/// element of the `dims` box moved from its strided place in the source to its strided place in the
/// destination. These tensors are large, so the reference is the stride arithmetic itself.
fn check_strided_transpose(
    name: &str,
    (ta, tb): (&TensorLayout, &TensorLayout),
    src: &[u8],
    (opts, kernel, skew): (&Options, Kernel, usize),
    dims: [i64; 3],
    (from, to): (Strided, Strided),
) {
    let explain = plan(ta, tb, opts).unwrap().explain();
    assert!(explain.contains("transpose"), "{name}: {explain}");
    let named = match (explain.contains("staged"), explain.contains("carried")) {
        (true, _) => Kernel::Staged,
        (_, true) => Kernel::Carried,
        _ => Kernel::Direct,
    };
    assert_eq!(named, kernel, "{name}: {explain}");
    let mut dst_alloc = vec![0u8; tb.bytes() as usize + 128];
    let at = dst_alloc.as_ptr().align_offset(64) + skew;
    let dst = &mut dst_alloc[at..at + tb.bytes() as usize];
    relayout(src, ta, dst, tb, opts).unwrap();
    let w = (ta.bits / 8) as usize;
    check_moved(
        &format!("{name}, {:?}", opts.isa),
        (src, dst),
        w,
        &dims,
        ((&from.0[..], from.1), (&to.0[..], to.1)),
    );
}

/// Transposes whose source rows lie far apart (128 KiB and more), with ragged row and column edges:
/// direct tiles of register blocks asking for lines ahead (f32, bf16, f64), bytes into a destination
/// past the caches through the staging buffer (tiles across several outer indices, several column tiles
/// per row), and, streamed with SIMD kernels, destination rows that are not whole cache lines apart
/// carried from tile to tile (rows across one tile or several, destinations across several items, on
/// into the next outer index where its rows continue the last one's, or not).
#[test]
fn far_apart_and_staged_transposes() {
    // (shape, to, the kernel the plan names streamed with SIMD kernels, and otherwise)
    use Kernel::*;
    let cases = [
        ("f32[70,110,300]{2,1,0}", "{0,1,2}", Carried, Direct),
        ("f32[64,128,300]{2,1,0}", "{0,1,2}", Direct, Direct),
        // Rows 33 KiB apart: AVX2 tiles of 128 rows, a whole one and a ragged one.
        ("f32[140,2,4200]{2,1,0}", "{0,1,2}", Carried, Direct),
        ("bf16[40,2,33000]{2,1,0}", "{0,1,2}", Direct, Direct),
        ("f64[21,1,17000]{2,1,0}", "{0,2,1}", Direct, Direct),
        ("u8[70,3,50000]{2,1,0}", "{0,1,2}", Direct, Direct),
        ("u8[70,3,80000]{2,1,0}", "{0,1,2}", Staged, Staged),
        ("u8[300,70,800]{2,1,0}", "{0,1,2}", Carried, Staged),
        ("u8[64,5,60000]{2,1,0}", "{0,1,2}", Staged, Staged),
        // Destination rows across two or three tiles, 1100 to 2400 bytes long, and more columns than
        // one item takes.
        ("f32[600,1,2100]{2,1,0}", "{0,1,2}", Carried, Direct),
        ("bf16[1100,2,300]{2,1,0}", "{0,1,2}", Carried, Direct),
        ("u8[1100,2,900]{2,1,0}", "{0,1,2}", Carried, Direct),
        ("f64[300,1,1200]{2,1,0}", "{0,1,2}", Carried, Direct),
        // Rows of one outer index that do not go on into the next one's.
        ("f32[300,20,700]{2,1,0}", "{0,2,1}", Carried, Direct),
        // Rows of 88 elements, 80 in whole blocks and 8 past them, each outer index's rows going on
        // into the next's, every other one starting half a line past a line boundary.
        ("f32[88,3,1100]{2,1,0}", "{0,1,2}", Carried, Direct),
    ];
    for (shape, to, streamed, plain) in cases {
        let (a, b) = xla_pair(shape, to);
        let (ta, tb) = (
            TensorLayout::from_xla(&a).unwrap(),
            TensorLayout::from_xla(&b).unwrap(),
        );
        let dims: [i64; 3] = std::array::from_fn(|d| ta.dims[d] as i64);
        // Element strides of a minor-to-major permutation without tiles.
        let strides = |l: &ArrayShape| -> Strided {
            let mut st = [0i64; 3];
            let mut n = 1;
            for &d in &l.layout.minor_to_major {
                st[d as usize] = n;
                n *= dims[d as usize];
            }
            (st, 0)
        };
        let src = random_bytes(ta.bytes() as usize, 0x9e37_79b9_7f4a_7c15);
        for isa in Isa::available() {
            for (streaming, threads) in [(false, 1), (true, 2)] {
                let opts = Options {
                    zero_padding: true,
                    threads,
                    isa: Some(isa),
                    streaming: Some(streaming),
                    walk: None,
                };
                let kernel = if streaming && kernels_carry(isa) {
                    streamed
                } else {
                    plain
                };
                check_strided_transpose(
                    &format!("{shape} -> {to}"),
                    (&ta, &tb),
                    &src,
                    (&opts, kernel, 0),
                    dims,
                    (strides(&a), strides(&b)),
                );
            }
        }
    }
}

/// Transposes between Axe layouts whose source rows run backwards (negative row stride) and whose
/// destination columns do too, checked against the strides themselves: f32 in direct tiles (whose
/// lines asked for ahead then lie before the rows) and bytes staged, into a destination that does not
/// start on a cache line.
#[test]
fn transposes_with_negative_strides() {
    for (bits, n2, kernel) in [
        (32u32, 16500i64, Kernel::Direct),
        (8, 210_000, Kernel::Staged),
    ] {
        let n0 = 40i64;
        // Source: row-major with dimension 0 reversed; destination: dimension 0 contiguous, dimension 2
        // reversed.
        let from: Strided = ([-2 * n2, n2, 1], (n0 - 1) * 2 * n2);
        let to: Strided = ([1, n0 * n2, -n0], (n2 - 1) * n0);
        let axe = |(st, base): Strided| -> Layout {
            format!("S[({n0},2,{n2}):({},{},{})] + {base}", st[0], st[1], st[2])
                .parse()
                .unwrap()
        };
        let dims = [n0 as u64, 2, n2 as u64];
        let ta = TensorLayout::from_axe(&axe(from), &dims, bits).unwrap();
        let tb = TensorLayout::from_axe(&axe(to), &dims, bits).unwrap();
        let src = random_bytes(ta.bytes() as usize, 0x2545_f491_4f6c_dd1d);
        for isa in Isa::available() {
            let opts = Options {
                isa: Some(isa),
                threads: 2,
                ..Options::default()
            };
            check_strided_transpose(
                &format!("{bits}-bit"),
                (&ta, &tb),
                &src,
                (&opts, kernel, 16),
                [n0, 2, n2],
                (from, to),
            );
        }
    }
}

#[test]
fn run_copies_walk_the_side_asked_for_straight_through() {
    // (shape, to, the side walked straight through when the source is asked for, and when the
    // destination is): a tiled side is never walked so; a tiled destination is written in order tile
    // by tile instead.
    use Straight::{Destination, Source};
    let cases = [
        (
            "f32[64,40,8,128]{3,2,1,0}",
            "{3,1,2,0}",
            Some(Source),
            Some(Destination),
        ),
        ("f32[100,300]{1,0}", "{1,0:T(8,128)}", Some(Source), None),
        ("f32[40,300]{0,1}", "{0,1:T(8,128)}", Some(Source), None),
        (
            "f32[100,300]{1,0:T(8,128)}",
            "{1,0}",
            None,
            Some(Destination),
        ),
    ];
    for (shape, to, from_source, from_destination) in cases {
        let (a, b) = xla_pair(shape, to);
        let (ta, tb) = (
            TensorLayout::from_xla(&a).unwrap(),
            TensorLayout::from_xla(&b).unwrap(),
        );
        for (walk, want) in [(Source, from_source), (Destination, from_destination)] {
            let opts = Options {
                walk: Some(walk),
                ..Options::default()
            };
            let p = plan(&ta, &tb, &opts).unwrap();
            let Mode::Runs { straight, .. } = p.mode else {
                panic!("{shape} -> {to}: {}", p.explain());
            };
            assert_eq!(straight, want, "{shape} -> {to}, {walk:?}: {}", p.explain());
            let said = match want {
                Some(Source) => "reading the source straight through",
                Some(Destination) => "writing the destination straight through",
                None => "in turn",
            };
            assert!(p.explain().contains(said), "{}", p.explain());
        }
    }
}

#[test]
fn writes_stream_past_the_caches_by_default() {
    // (shape, to, streamed): by the destination's size, or by the pair's where a large source would
    // evict a small destination anyway.
    let cases = [
        ("f32[64,64]{1,0}", "{0,1}", false),
        ("f32[2048,1024]{1,0}", "{0,1}", false), // 8 MiB each, 16 MiB together
        ("f32[2048,2048]{1,0}", "{0,1}", true),  // a 16 MiB destination
        ("pred[8192,8192]{1,0}", "{1,0:T(32,128)(32,1)E(1)}", true), // 64 MiB into 8 MiB
        ("pred[2048,2048]{1,0}", "{1,0:T(32,128)(32,1)E(1)}", false), // 4 MiB into 512 KiB
    ];
    for (shape, to, streamed) in cases {
        let (a, b) = xla_pair(shape, to);
        let (ta, tb) = (
            TensorLayout::from_xla(&a).unwrap(),
            TensorLayout::from_xla(&b).unwrap(),
        );
        let p = plan(&ta, &tb, &Options::default()).unwrap();
        assert_eq!(p.streaming, streamed, "{shape} -> {to}");
        let forced = Options {
            streaming: Some(!streamed),
            ..Options::default()
        };
        assert_eq!(plan(&ta, &tb, &forced).unwrap().streaming, !streamed);
    }
}

#[test]
fn instruction_sets_by_name_and_refusal() {
    for isa in [Isa::Avx512, Isa::Avx2, Isa::Sse2, Isa::Neon, Isa::Portable] {
        assert_eq!(Isa::from_name(isa.name()), Some(isa));
    }
    assert_eq!(Isa::from_name("avx512"), Some(Isa::Avx512));
    assert_eq!(Isa::from_name("neon"), Some(Isa::Neon));
    // Each architecture's own sets, and only those.
    assert_eq!(Isa::Neon.supported(), cfg!(target_arch = "aarch64"));
    assert_eq!(Isa::Sse2.supported(), cfg!(target_arch = "x86_64"));
    assert_eq!(Isa::from_name("mmx"), None);
    let available = Isa::available();
    assert_eq!(available.first().copied(), Some(Isa::detect()));
    assert_eq!(available.last().copied(), Some(Isa::Portable));
    // A set the processor lacks is refused before anything runs.
    let a = xla("f32[4,4]");
    for isa in [Isa::Avx512, Isa::Avx2, Isa::Sse2, Isa::Neon] {
        let opts = Options {
            isa: Some(isa),
            ..Options::default()
        };
        let mut out = vec![0u8; 64];
        let r = relayout(&[0u8; 64], &a, &mut out, &a, &opts);
        assert_eq!(r.is_ok(), isa.supported(), "{isa:?}: {r:?}");
    }
}

#[test]
fn small_relayouts_stay_on_the_calling_thread() {
    let (a, b) = (xla("f32[8,128]{1,0}"), xla("f32[8,128]{1,0:T(8,128)}"));
    let src = vec![1u8; a.bytes() as usize];
    let mut dst = vec![0u8; b.bytes() as usize];
    let plan = relayout(&src, &a, &mut dst, &b, &Options::default()).unwrap();
    assert_eq!(plan.threads, 1, "{plan}");
    let asked = Options {
        threads: 3,
        ..Options::default()
    };
    assert_eq!(relayout(&src, &a, &mut dst, &b, &asked).unwrap().threads, 3);
    assert!(dst.chunks(4).all(|e| e == [1, 1, 1, 1]));
}
