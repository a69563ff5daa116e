//! Long dimensions: a shard's layout addresses every element exactly where the whole dimension's
//! tables do, the copies of a reshard build tables that grow with their pieces, not their elements
//! (whatever the lengths and layouts), and reshards of long arrays move every element.

#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

mod common;

use axe_relayout::TensorLayout;
use axe_reshard::{copy_cost, row_major, DeviceBuffer, MemoryLayout, Placement};
use axe_shard::{
    notation::jax::parse_jax, plan, AxisUse, CostModel, Mesh, ReduceOp, Sharding, Uneven,
};
use axe_xla::{ArrayShape, Dim, PrimitiveType};
use common::run::{execute, gather_check};
use proptest::prelude::*;

/// The layout of a device's whole padded shard with every dimension kept whole: the oracle.
fn whole(p: &Placement, b: &DeviceBuffer) -> TensorLayout {
    let shape = &b.region.padded_shape;
    match &p.layout {
        MemoryLayout::RowMajor => row_major(shape, p.dtype.bits()).unwrap(),
        MemoryLayout::Xla(l) => {
            let dims: Vec<Dim> = shape.iter().map(|&d| Dim::Static(d as i64)).collect();
            TensorLayout::from_xla(&ArrayShape {
                element_type: p.dtype,
                dims: dims.into(),
                layout: l.clone(),
            })
            .unwrap()
        }
        MemoryLayout::Axe(l) => TensorLayout::from_axe(l, shape, p.dtype.bits()).unwrap(),
    }
}

#[test]
fn a_long_dimension_addresses_as_its_whole_tables() {
    // 2^24 f32 on two devices and replicated: 8 and 16 million elements per shard.
    let mesh = Mesh::new(&[("x", 2)]).unwrap();
    let dims = [1u64 << 24];
    for (spec, layout) in [
        ("P('x')", "row-major"),
        ("P()", "row-major"),
        ("P('x')", "{0:T(1024)}"),
    ] {
        let s = parse_jax(spec, &mesh, &dims).unwrap();
        let p = Placement::new(
            s,
            MemoryLayout::parse(layout, 1).unwrap(),
            PrimitiveType::F32,
        )
        .unwrap();
        for b in p.buffers(&mesh).unwrap() {
            // Element by element (a sample), the same slots as the whole dimension's tables.
            let w = whole(&p, &b);
            assert_eq!(b.bytes().unwrap() as u64, w.bytes());
            for x in (0..b.region.local_shape[0]).step_by(4093) {
                assert_eq!(b.offset(&[x]), w.offset(&[x]), "{spec} {layout} at {x}");
            }
        }
    }
}

/// For every device of a reshard of `dims` from `from` to `to` on `mesh` (layouts `sl` and `dl`):
/// the pieces its copies are cut into and their table entries, within `pieces` and `entries`.
fn cost_within(
    mesh: &[(&str, u64)],
    dims: &[u64],
    (from, sl): (&str, &str),
    (to, dl): (&str, &str),
    pieces: u64,
    entries: u64,
) {
    let mesh = Mesh::new(mesh).unwrap();
    let s = parse_jax(from, &mesh, dims).unwrap();
    let d = parse_jax(to, &mesh, dims).unwrap();
    let p = plan(&mesh, &s, &d, 4, &CostModel::default()).unwrap();
    let rank = dims.len();
    let src = Placement::new(
        s,
        MemoryLayout::parse(sl, rank).unwrap(),
        PrimitiveType::F32,
    )
    .unwrap();
    let dst = Placement::new(
        d,
        MemoryLayout::parse(dl, rank).unwrap(),
        PrimitiveType::F32,
    )
    .unwrap();
    for me in 0..mesh.len() as u64 {
        let c = copy_cost(&mesh, &p, &src, &dst, me).unwrap();
        assert!(
            c.pieces <= pieces && c.entries <= entries && c.largest <= entries,
            "{from} {sl} -> {to} {dl} on {dims:?}, device {me}: {c:?}"
        );
    }
}

#[test]
fn odd_long_reshards_cost_pieces_not_elements() {
    let n = (1u64 << 24) - 1;
    // A 1-D array of 2^24 - 1 f32, tiled by 1024 on either side or both, gathered and scattered on
    // two devices: a few pieces of a few thousand entries, not 16 million.
    for (sl, dl) in [
        ("{0:T(1024)}", "row-major"),
        ("row-major", "{0:T(1024)}"),
        ("{0:T(1024)}", "{0:T(1024)}"),
        ("S[8388608:1]", "row-major"),
        ("row-major", "S[16777215:1] + 5"),
    ] {
        cost_within(&[("x", 2)], &[n], ("P('x')", sl), ("P()", dl), 16, 1 << 17);
    }
    cost_within(
        &[("x", 2)],
        &[n],
        ("P()", "{0:T(1024)}"),
        ("P('x')", "row-major"),
        16,
        1 << 17,
    );
    // Three uneven shards of a prime length.
    cost_within(
        &[("x", 3)],
        &[16_777_213],
        ("P('x')", "{0:T(1024)}"),
        ("P()", "{0:T(256)}"),
        24,
        1 << 17,
    );
    // 2-D, tiled T(8,128), the long dimension odd and split where tiles do not start: the walk goes
    // tile by tile where the two sides' tiles are out of phase, each piece at most 2^16 columns.
    let c = 2_097_151u64;
    cost_within(
        &[("x", 2)],
        &[8, c],
        ("P(None, 'x')", "{1,0:T(8,128)}"),
        ("P()", "row-major"),
        16,
        1 << 16,
    );
    let mesh = [("x", 3)];
    let m = Mesh::new(&mesh).unwrap();
    let s = parse_jax("P(None, 'x')", &m, &[8, c]).unwrap();
    let d = parse_jax("P()", &m, &[8, c]).unwrap();
    let p = plan(&m, &s, &d, 4, &CostModel::default()).unwrap();
    let tiled = MemoryLayout::parse("{1,0:T(8,128)}", 2).unwrap();
    let src = Placement::new(s, tiled.clone(), PrimitiveType::F32).unwrap();
    let dst = Placement::new(d, tiled, PrimitiveType::F32).unwrap();
    for me in 0..3 {
        let cost = copy_cost(&m, &p, &src, &dst, me).unwrap();
        // Out of phase: one table entry per column at most, in pieces of at most 2^16 columns.
        assert!(cost.largest <= 2 * (8 + (1 << 16)), "{cost:?}");
        assert!(cost.pieces <= 3 * (c / (1 << 16) + 4), "{cost:?}");
    }
}

/// A long dimension: powers of two, multiples of them, and lengths that leave a tail on 4 devices.
fn long_dim() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(1u64 << 16),
        Just(1u64 << 17),
        Just(3u64 << 16),
        Just((1u64 << 16) + 6),
        Just((1u64 << 17) + 4),
        Just(2 * 65_537),
    ]
}

/// An array with one long dimension and up to one short one before or after it.
fn dims() -> impl Strategy<Value = Vec<u64>> {
    (long_dim(), 0u64..4, any::<bool>()).prop_map(|(l, short, after)| match (short, after) {
        (0, _) => vec![l],
        (s, true) => vec![l, s],
        (s, false) => vec![s, l],
    })
}

/// Per mesh axis: `None` replicates, `Some(d)` shards dimension `d` (mod rank).
fn sharding(mesh: &Mesh, dims: &[u64], picks: &[Option<usize>], torch: bool) -> Sharding {
    with_partial(mesh, dims, picks, torch, None)
}

/// [`sharding`] with mesh axis `partial` (where it is one and shards nothing) pending a sum.
fn with_partial(
    mesh: &Mesh,
    dims: &[u64],
    picks: &[Option<usize>],
    torch: bool,
    partial: Option<usize>,
) -> Sharding {
    let mut dim_axes = vec![Vec::new(); dims.len()];
    let mut others = Vec::new();
    for (a, p) in picks.iter().take(mesh.rank()).enumerate() {
        match p {
            _ if partial == Some(a) => others.push((a, AxisUse::Partial(ReduceOp::Sum))),
            Some(d) => dim_axes[d % dims.len()].push(a),
            None => {}
        }
    }
    let s = Sharding::new(mesh, dims.to_vec(), dim_axes, &others).unwrap();
    if torch {
        s.with_uneven(Uneven::TorchChunk)
    } else {
        s
    }
}

/// Row-major, column-major (2-D), or tiles along a 1-D array's only dimension.
fn layout(pick: u8, rank: usize) -> MemoryLayout {
    let text = match (pick % 4, rank) {
        (1, 2) => "{0,1}",
        (2, 1) => "{0:T(256)}",
        (3, 1) => "{0:T(1024)}",
        _ => "row-major",
    };
    MemoryLayout::parse(text, rank).unwrap()
}

/// An Axe layout of a 1-D shard of `p` elements (`p` even): its two halves interleaved (element `x` at
/// `2·(x mod p/2) + x div p/2`), a layout whose iters cut the dimension at `p/2` only.
fn interleaved(p: u64) -> MemoryLayout {
    MemoryLayout::parse(&format!("S[(2,{}):(1,2)]", p / 2), 1).unwrap()
}

fn mesh(sizes: &[u64]) -> Mesh {
    let named: Vec<(String, u64)> = sizes
        .iter()
        .enumerate()
        .map(|(i, &s)| (format!("a{i}"), s))
        .collect();
    let refs: Vec<(&str, u64)> = named.iter().map(|(n, s)| (n.as_str(), *s)).collect();
    Mesh::new(&refs).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Every element of every device's shard lies at the slot the whole dimension's tables give it, in
    /// a buffer of as many bytes.
    #[test]
    fn factored_shards_address_as_whole_ones(
        dims in dims(),
        sizes in prop::collection::vec(1u64..5, 1..3),
        picks in prop::collection::vec(prop::option::of(0usize..2), 2),
        torch in any::<bool>(),
        lay in any::<u8>(),
    ) {
        let mesh = mesh(&sizes);
        let s = sharding(&mesh, &dims, &picks, torch);
        let p = Placement::new(s, layout(lay, dims.len()), PrimitiveType::F32).unwrap();
        for b in p.buffers(&mesh).unwrap().into_iter().filter(|b| b.holds) {
            let w = whole(&p, &b);
            prop_assert_eq!(b.bytes().unwrap() as u64, w.bytes());
            let shape = &b.region.local_shape;
            let n: u64 = shape.iter().product();
            for k in (0..n).step_by(7) {
                let mut rest = k;
                let mut x = vec![0; shape.len()];
                for d in (0..shape.len()).rev() {
                    x[d] = rest % shape[d];
                    rest /= shape[d];
                }
                prop_assert_eq!(b.offset(&x), w.offset(&x), "at {:?}", x);
            }
        }
    }

    /// Reshards between random shardings and layouts of arrays with a long dimension move every
    /// element where the whole-dimension layouts say (the brute-force gather).
    #[test]
    fn long_arrays_reshard(
        dims in dims(),
        sizes in prop::collection::vec(1u64..5, 1..3),
        from in prop::collection::vec(prop::option::of(0usize..2), 2),
        to in prop::collection::vec(prop::option::of(0usize..2), 2),
        torch in any::<bool>(),
        lay in (any::<u8>(), any::<u8>()),
    ) {
        let mesh = mesh(&sizes);
        let s = sharding(&mesh, &dims, &from, torch);
        let d = sharding(&mesh, &dims, &to, false);
        let p = plan(&mesh, &s, &d, 4, &CostModel::default()).unwrap();
        let src = Placement::new(s, layout(lay.0, dims.len()), PrimitiveType::F32).unwrap();
        let dst = Placement::new(d, layout(lay.1, dims.len()), PrimitiveType::F32).unwrap();
        let bufs = execute(&mesh, &p, &src, &dst);
        gather_check(&mesh, &src, &dst, &bufs);
    }

    /// Reshards of long arrays whose source holds partial sums: every destination element is the sum
    /// of its contributions (checked element by element on every device).
    #[test]
    fn long_partial_sums_reduce(
        dims in dims(),
        sizes in prop::collection::vec(2u64..4, 2),
        from in prop::collection::vec(prop::option::of(0usize..2), 2),
        to in prop::collection::vec(prop::option::of(0usize..2), 2),
        partial in 0usize..2,
        lay in (any::<u8>(), any::<u8>()),
    ) {
        let mesh = mesh(&sizes);
        let s = with_partial(&mesh, &dims, &from, false, Some(partial));
        let d = sharding(&mesh, &dims, &to, false);
        let p = plan(&mesh, &s, &d, 4, &CostModel::default()).unwrap();
        let src = Placement::new(s, layout(lay.0, dims.len()), PrimitiveType::F32).unwrap();
        let dst = Placement::new(d, layout(lay.1, dims.len()), PrimitiveType::F32).unwrap();
        execute(&mesh, &p, &src, &dst);
    }
}

/// Axe memory layouts on long 1-D shards: one that follows the factors, one that cuts the dimension
/// elsewhere (its shards stay whole, and a reshard between the two still moves every element).
#[test]
fn axe_layouts_of_long_shards() {
    let mesh = Mesh::new(&[("x", 2)]).unwrap();
    let n = 1u64 << 18;
    let dims = [n];
    let s = parse_jax("P('x')", &mesh, &dims).unwrap();
    let r = parse_jax("P()", &mesh, &dims).unwrap();
    let strided = MemoryLayout::parse(&format!("S[{}:1] + {}", n / 2, 3), 1).unwrap();
    for (src_l, dst_l) in [
        (strided.clone(), MemoryLayout::RowMajor),
        (interleaved(n / 2), MemoryLayout::RowMajor),
        (MemoryLayout::RowMajor, interleaved(n)),
        (interleaved(n / 2), interleaved(n)),
    ] {
        let src = Placement::new(s.clone(), src_l.clone(), PrimitiveType::F32).unwrap();
        let dst = Placement::new(r.clone(), dst_l.clone(), PrimitiveType::F32).unwrap();
        for (p, b) in [
            (&src, src.buffers(&mesh).unwrap()),
            (&dst, dst.buffers(&mesh).unwrap()),
        ] {
            for b in b {
                let w = whole(p, &b);
                for x in (0..b.region.local_shape[0]).step_by(101) {
                    assert_eq!(b.offset(&[x]), w.offset(&[x]), "{src_l:?} at {x}");
                }
            }
        }
        let p = plan(&mesh, &s, &r, 4, &CostModel::default()).unwrap();
        let bufs = execute(&mesh, &p, &src, &dst);
        gather_check(&mesh, &src, &dst, &bufs);
    }
}

/// A long odd dimension tiled by 128 on both sides, cut by three devices where tiles do not start (the
/// two sides' tiles out of phase), and between tiled and row-major shards: every element moves where
/// the whole-dimension layouts say (the brute-force gather), in pieces of at most 2^16 columns.
#[test]
fn tiles_out_of_phase_reshard() {
    let c = 3 * 65_536 + 1;
    let dims = [2u64, c];
    let mesh = Mesh::new(&[("x", 3)]).unwrap();
    let tiled = MemoryLayout::parse("{1,0:T(2,128)}", 2).unwrap();
    for (from, to, sl, dl) in [
        ("P(None, 'x')", "P()", &tiled, &tiled),
        ("P()", "P(None, 'x')", &tiled, &MemoryLayout::RowMajor),
        ("P(None, 'x')", "P('x')", &MemoryLayout::RowMajor, &tiled),
    ] {
        let s = parse_jax(from, &mesh, &dims).unwrap();
        let d = parse_jax(to, &mesh, &dims).unwrap();
        let p = plan(&mesh, &s, &d, 4, &CostModel::default()).unwrap();
        let src = Placement::new(s, sl.clone(), PrimitiveType::F32).unwrap();
        let dst = Placement::new(d, dl.clone(), PrimitiveType::F32).unwrap();
        for me in 0..3 {
            let cost = copy_cost(&mesh, &p, &src, &dst, me).unwrap();
            assert!(
                cost.largest <= 2 * (2 + (1 << 16)),
                "{from} -> {to}: {cost:?}"
            );
        }
        let bufs = execute(&mesh, &p, &src, &dst);
        gather_check(&mesh, &src, &dst, &bufs);
    }
}
