#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::single_range_in_vec_init,
    missing_docs
)]
//! The paper's examples, written out as golden tests.

use axe_layout::{Axis, Layout, LayoutError};

fn l(s: &str) -> Layout {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn coords(layout: &Layout, idx: &[u64], shape: &[u64]) -> Vec<String> {
    layout
        .apply_multi(idx, shape)
        .unwrap()
        .iter()
        .map(|c| c.to_string())
        .collect()
}

/// Figure 2A: an 8×16 tensor-core tile over 2 warps × 32 lanes × 2 registers, replicated to warps +4,
/// offset to warp 5.
#[test]
fn tensor_core_tile() {
    let t = l("S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp");
    assert_eq!(t.size(), 128);
    assert_eq!(
        coords(&t, &[1, 3], &[8, 16]),
        ["{lane: 5, reg: 1, warp: 5}", "{lane: 5, reg: 1, warp: 9}"]
    );
    let [lane_ax, warp_ax, reg_ax] = ["lane", "warp", "reg"].map(|a| Axis::new(a).unwrap());
    for i in 0..8u64 {
        for j in 0..16u64 {
            let got = t.apply_multi(&[i, j], &[8, 16]).unwrap();
            let got: Vec<(i64, i64, i64)> = got
                .iter()
                .map(|c| (c.get(&lane_ax), c.get(&warp_ax), c.get(&reg_ax)))
                .collect();
            let (lane, warp, reg) = (
                (4 * i + (j / 2) % 4) as i64,
                (j / 8 + 5) as i64,
                (j % 2) as i64,
            );
            assert_eq!(
                got,
                vec![(lane, warp, reg), (lane, warp + 4, reg)],
                "({i}, {j})"
            );
        }
    }
    let spans: Vec<(String, u64)> = t
        .spans()
        .unwrap()
        .into_iter()
        .map(|(a, s)| (a.name().to_string(), s))
        .collect();
    assert_eq!(
        spans,
        [
            ("lane".to_string(), 32),
            ("reg".to_string(), 2),
            ("warp".to_string(), 6)
        ]
    );
    assert_eq!(
        t.to_tvm(),
        "T.TileLayout(T.S[(8, 2, 4, 2):(4 @ Axis.lane, 1 @ Axis.warp, 1 @ Axis.lane, 1 @ Axis.reg)] + T.R[2:4 @ Axis.warp] + 5 @ Axis.warp)"
    );
}

/// Figure 2B: a 64×256 tensor on a 2×2 GPU mesh (gpuid = 2·row + column).
#[test]
fn gpu_mesh_fully_sharded_and_replicated() {
    let full = l("S[(2,32,2,128):(2@gpuid,128,1@gpuid,1)]");
    let shard_rep = l("S[(2,32,256):(2@gpuid,256,1)] + R[2:1@gpuid]");
    let (gpu, m) = (Axis::new("gpuid").unwrap(), Axis::memory());
    let at = |l: &Layout, i: u64, j: u64| -> Vec<(i64, i64)> {
        l.apply_multi(&[i, j], &[64, 256])
            .unwrap()
            .iter()
            .map(|c| (c.get(&gpu), c.get(&m)))
            .collect()
    };
    for i in 0..64u64 {
        for j in 0..256u64 {
            let (dev, local) = (
                (2 * (i / 32) + j / 128) as i64,
                ((i % 32) * 128 + j % 128) as i64,
            );
            assert_eq!(at(&full, i, j), vec![(dev, local)]);
            let (row_group, local) = ((2 * (i / 32)) as i64, ((i % 32) * 256 + j) as i64);
            assert_eq!(
                at(&shard_rep, i, j),
                vec![(row_group, local), (row_group + 1, local)]
            );
        }
    }
    // Fully sharded = a 32×128 local row-major block tiled over the 2×2 device grid ...
    let local = Layout::row_major(&[32, 128]).unwrap();
    let grid = l("S[(2,2):(2@gpuid,1@gpuid)]");
    let (tiled, shape) = local.tile(&grid, &[32, 128], &[2, 2]).unwrap();
    assert_eq!(shape, vec![64, 256]);
    assert!(tiled.equivalent(&full).unwrap());
    // ... and tile_of recovers the device grid from it.
    let (outer, outer_shape) = full.tile_of(&local, &[64, 256], &[32, 128]).unwrap();
    assert_eq!(
        (outer.to_string(), outer_shape),
        ("S[(2,2):(2@gpuid,1@gpuid)]".to_string(), vec![2, 2])
    );
    // Shard + replicate: rows over mesh rows, replicated over mesh columns.
    let (outer, _) = shard_rep
        .tile_of(
            &Layout::row_major(&[32, 256]).unwrap(),
            &[64, 256],
            &[32, 256],
        )
        .unwrap();
    assert_eq!(outer.to_string(), "S[2:2@gpuid] + R[2:1@gpuid]");
}

/// Figure 2C: Trainium SBUF, 128 partitions (P) by a free dimension (F): a 256×512 tensor as two 128-row
/// tiles side by side in F.
#[test]
fn trainium_partition_free() {
    let t = l("S[(2,128,512):(512@F,1@P,1@F)]");
    assert_eq!(coords(&t, &[130, 7], &[256, 512]), ["{F: 519, P: 2}"]);
    assert_eq!(t.span(&Axis::new("P").unwrap()).unwrap(), 128);
    assert_eq!(t.span(&Axis::new("F").unwrap()).unwrap(), 1024);
    let g = t.group(&[256, 512]).unwrap();
    assert_eq!(g.blocks, vec![0..2, 2..3]);
}

/// Blackwell tensor memory (TLane × TCol): a 256×256 tile as two 128-lane halves, 256 columns each.
#[test]
fn blackwell_tensor_memory() {
    let t = l("S[(2,128,256):(256@TCol,1@TLane,1@TCol)]");
    assert_eq!(
        coords(&t, &[17, 130], &[256, 256]),
        ["{TCol: 130, TLane: 17}"]
    );
    assert_eq!(
        coords(&t, &[145, 130], &[256, 256]),
        ["{TCol: 386, TLane: 17}"]
    );
    assert_eq!(t.span(&Axis::new("TLane").unwrap()).unwrap(), 128);
    assert_eq!(t.span(&Axis::new("TCol").unwrap()).unwrap(), 512);
    // The lower half alone is a slice.
    let half = t.slice(&[256, 256], &[128..256, 0..256]).unwrap();
    assert_eq!(half.to_string(), "S[(128,256):(1@TLane,1@TCol)] + 256@TCol");
}

/// Appendix F: (2,2):(8,2) ⊕ (2,2):(4,1) = S[16:1], while no B tiles (2,2):(4,1) into S[16:1].
#[test]
fn appendix_f_direct_sum() {
    let a = l("S[(2,2):(8,2)]");
    let b = l("S[(2,2):(4,1)]");
    let (s, shape) = a.direct_sum(&b, &[2, 2], &[2, 2]).unwrap();
    assert_eq!(shape, vec![4, 4]);
    assert_eq!(s.canonicalize().unwrap().to_string(), "S[16:1]");
    let t = l("S[16:1]");
    assert!(matches!(
        t.tile_of(&b, &[4, 4], &[2, 2]),
        Err(LayoutError::NoTile(_))
    ));
}

/// Appendix G: the column-major 3×5 layout is not bit-linear.
#[test]
fn appendix_g_column_major() {
    let c = Layout::column_major(&[3, 5]).unwrap();
    assert_eq!(c.to_string(), "S[(3,5):(1,3)]");
    let m = |i, j| c.apply_multi(&[i, j], &[3, 5]).unwrap()[0].get(&Axis::memory());
    assert_eq!((m(0, 1), m(0, 2), m(0, 3), m(2, 4)), (3, 6, 9, 14));
    assert_ne!(
        m(0, 1) ^ m(0, 2),
        m(0, 3),
        "a bit-linear map would give f(1) xor f(2) = f(3)"
    );
}

/// Section 3.3: grouping succeeds after canonicalization where TVM refuses.
#[test]
fn group_after_canonicalization() {
    let g = l("S[(3,5,7):(35,7,1)]").group(&[5, 21]).unwrap();
    assert_eq!(g.layout.to_string(), "S[(5,21):(21,1)]");
    assert_eq!(g.blocks, vec![0..1, 1..2]);
    assert!(matches!(
        l("S[(3,5,7):(35,7,1)]").group(&[2, 3]),
        Err(LayoutError::NotAdmitted { .. })
    ));
    assert!(matches!(
        l("S[(6,4):(1,6)]").group(&[4, 6]),
        Err(LayoutError::NoGrouping { .. })
    ));
}

/// Section 3.3: tiling a row-major tile over a row-major grid of tiles gives a block layout.
#[test]
fn block_layout_by_tiling() {
    let (t, shape) = Layout::row_major(&[2, 4])
        .unwrap()
        .tile(&Layout::row_major(&[3, 2]).unwrap(), &[2, 4], &[3, 2])
        .unwrap();
    assert_eq!(shape, vec![6, 8]);
    assert_eq!(t.to_string(), "S[(3,2,2,4):(16,4,8,1)]");
    // Element (3, 5): tile (1, 1) → 16 + 8, within-tile (1, 1) → 4 + 1.
    assert_eq!(coords(&t, &[3, 5], &[6, 8]), ["{m: 29}"]);
}

/// Slicing examples: no-wrap, peeling, one wrap, and a refusal.
#[test]
fn slices() {
    let rm = Layout::row_major(&[8, 8]).unwrap();
    assert_eq!(
        rm.slice(&[8, 8], &[2..6, 0..8]).unwrap().to_string(),
        "S[(4,8):(8,1)] + 16"
    );
    let split = l("S[(4,2):(1,4)]"); // one dimension of 8: digits (4,2)
    assert_eq!(
        split.slice(&[8], &[2..6]).unwrap().to_string(),
        "S[(2,2):(1,4)] + 1"
    ); // peel, then no wrap
    let wrap = l("S[(4,4):(10,1)]");
    assert_eq!(
        wrap.slice(&[16], &[2..6]).unwrap().to_string(),
        "S[(2,2):(8,1)] + 2"
    ); // one wrap
    assert!(matches!(
        split.slice(&[8], &[1..4]),
        Err(LayoutError::NoSlice(_))
    ));
    assert!(matches!(
        rm.slice(&[8, 8], &[2..9, 0..8]),
        Err(LayoutError::BadRegion(_))
    ));
    // A region that carries across a block's iters is checked point by point, within the limit:
    // past it (2^39 + 1 steps here), refused at once rather than walked.
    let huge = l("S[(2,1099511627776):(1,2)]");
    assert!(matches!(
        huge.slice(&[1 << 40, 2], &[0..(1 << 39) + 1, 0..1]),
        Err(LayoutError::TooLarge(_))
    ));
}
