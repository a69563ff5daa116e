//! `PaddedSharedLayout`: the placement in padded memory against a brute-force reading of Triton's
//! definition (insert `padding` elements after every `interval` elements, summed over the pairs; the
//! linear component maps logical offset and CTA to the tensor), on random layouts, and golden examples.

#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use axe_layout::Axis;
use axe_triton::gluon::{padded_offset, padded_size, parse_gluon};
use proptest::prelude::*;

/// Where each of `n` logical offsets lands when, after every `interval` elements written, `padding`
/// elements are skipped (for each pair), and the buffer's length (nothing skipped after the last).
fn lay_out(pairs: &[(u64, u64)], n: u64) -> (Vec<u64>, u64) {
    let mut at = Vec::new();
    let mut next = 0u64;
    for o in 0..n {
        at.push(next);
        next += 1;
        if o + 1 < n {
            for (i, p) in pairs {
                if (o + 1) % i == 0 {
                    next += p;
                }
            }
        }
    }
    (at, next)
}

fn list(v: &[Vec<u64>]) -> String {
    let items: Vec<String> = v
        .iter()
        .map(|b| {
            let c: Vec<String> = b.iter().map(u64::to_string).collect();
            format!("[{}]", c.join(", "))
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// A random padded layout: shape, cga bases (at most one split per dim), offset bases (a random order
/// of the part's bits) and distinct power-of-two intervals with power-of-two paddings.
/// Shape, offset bases, cga bases, interval/padding pairs.
type Padded = (Vec<u64>, Vec<Vec<u64>>, Vec<Vec<u64>>, Vec<(u64, u64)>);

fn any_padded() -> impl Strategy<Value = Padded> {
    (1usize..4)
        .prop_flat_map(|rank| {
            (
                prop::collection::vec(0u32..4, rank),
                prop::collection::vec(any::<bool>(), rank),
                any::<u64>(),
                prop::collection::btree_map(0u32..7, 0u32..4, 1..4),
            )
        })
        .prop_map(|(logs, split, seed, pairs)| {
            let rank = logs.len();
            let unit = |d: usize, v: u64| -> Vec<u64> {
                (0..rank).map(|j| if j == d { v } else { 0 }).collect()
            };
            let mut cga = Vec::new();
            let mut offset = Vec::new();
            for d in 0..rank {
                let k = u32::from(split[d] && logs[d] > 0);
                if k == 1 {
                    cga.push(unit(d, 1));
                }
                for j in 0..logs[d] - k {
                    offset.push(unit(d, 1 << j));
                }
            }
            // A seeded shuffle of the offset bits and of the CTA bits.
            let mut s = seed;
            for v in [&mut offset, &mut cga] {
                for i in (1..v.len()).rev() {
                    s = s
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    v.swap(i, (s >> 33) as usize % (i + 1));
                }
            }
            let shape = logs.iter().map(|l| 1u64 << l).collect();
            let pairs = pairs
                .into_iter()
                .map(|(i, p)| (1u64 << i, 1u64 << p))
                .collect();
            (shape, offset, cga, pairs)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every tensor element sits, in the Axe layout, at the padded offset and CTA the definition gives it.
    #[test]
    fn axe_layout_is_the_padded_placement((shape, offset, cga, pairs) in any_padded()) {
        let text = format!(
            "PaddedSharedLayout(interval_padding_pairs={}, offset_bases={}, cga_layout={}, shape={:?})",
            list(&pairs.iter().map(|(i, p)| vec![*i, *p]).collect::<Vec<_>>()),
            list(&offset),
            list(&cga),
            shape
        );
        let g = parse_gluon(&text).unwrap();
        let axe = g.to_axe(&shape).unwrap();
        let linear = g.to_linear(&shape).unwrap();
        let rank = shape.len();
        let mut part = shape.clone();
        for b in &cga {
            for d in 0..rank {
                if b[d] != 0 {
                    part[d] /= 2;
                }
            }
        }
        let n_offsets = 1u64 << offset.len();
        let (at, size) = lay_out(&pairs, n_offsets);
        prop_assert_eq!(padded_size(&pairs, n_offsets).unwrap(), size);
        let (off_axis, block_axis) = (Axis::new("offset").unwrap(), Axis::new("block").unwrap());
        let mut seen = 0u64;
        for b in 0..1u64 << cga.len() {
            for o in 0..n_offsets {
                let mut t = vec![0u64; rank];
                for (k, base) in offset.iter().enumerate() {
                    if o >> k & 1 == 1 {
                        for d in 0..rank { t[d] += base[d]; }
                    }
                }
                for (k, base) in cga.iter().enumerate() {
                    if b >> k & 1 == 1 {
                        for d in 0..rank { t[d] += base[d] * part[d]; }
                    }
                }
                // The linear component is the logical placement.
                let mut inputs = vec![o, b];
                inputs.truncate(linear.in_dims().len());
                prop_assert_eq!(linear.apply(&inputs).unwrap(), t.clone());
                let flat = t.iter().zip(&shape).fold(0u64, |acc, (x, s)| acc * s + x);
                let homes = axe.apply(flat).unwrap();
                prop_assert_eq!(homes.len(), 1);
                prop_assert_eq!(homes[0].get(&off_axis), at[o as usize] as i64, "offset {} of {}", o, text);
                prop_assert_eq!(homes[0].get(&block_axis), b as i64);
                prop_assert_eq!(padded_offset(&pairs, o).unwrap(), at[o as usize]);
                seen += 1;
            }
        }
        prop_assert_eq!(seen, shape.iter().product::<u64>());
        prop_assert_eq!(axe.size(), seen);
    }

    /// The padded size is Triton's: the elements plus, per pair, `elements / interval` paddings, less
    /// one padding where the last interval ends at the last element.
    #[test]
    fn padded_size_is_tritons(n in 1u64..5000, pairs in prop::collection::btree_map(0u32..12, 0u32..5, 1..4)) {
        let pairs: Vec<(u64, u64)> = pairs.into_iter().map(|(i, p)| (1u64 << i, 1u64 << p)).collect();
        let mut triton = n;
        for (i, p) in &pairs {
            triton += (n / i) * p;
            if n % i == 0 {
                triton -= p;
            }
        }
        prop_assert_eq!(padded_size(&pairs, n).unwrap(), triton);
        prop_assert_eq!(lay_out(&pairs, n).1, triton);
    }
}

#[test]
fn rows_padded_and_permuted() {
    // 8×4, rows stored in the order 0, 2, 4, 6, 1, 3, 5, 7; one padding element after every row, two
    // more after every two rows.
    let g = parse_gluon(
        "PaddedSharedLayout(interval_padding_pairs=[[4, 1], [8, 2]], offset_bases=[[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]], cga_layout=[], shape=[8, 4])",
    )
    .unwrap();
    assert_eq!(
        g.to_axe(&[8, 4]).unwrap().to_string(),
        "S[(2,2,2,4):(12@offset,5@offset,24@offset,1@offset)]"
    );
    // Row 1 is logical offset 16: after 4 rows (4 single paddings) and 2 pairs of rows (2 × 2).
    assert_eq!(padded_offset(&[(4, 1), (8, 2)], 16).unwrap(), 24);
    assert_eq!(padded_size(&[(4, 1), (8, 2)], 32).unwrap(), 45);
    let ll = g.to_linear(&[8, 4]).unwrap();
    assert_eq!(
        ll.to_ttg(),
        "#ttg.linear<{offset = [[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]], block = []}>"
    );
    assert!(g
        .to_linear(&[4, 8])
        .unwrap_err()
        .to_string()
        .contains("for shape [8, 4]"));
}

#[test]
fn two_ctas_split_the_rows() {
    // 4×2 over two CTAs, each holding two rows, padded by one after every two elements.
    let g = parse_gluon(
        "PaddedSharedLayout(interval_padding_pairs=[[2, 1]], offset_bases=[[0, 1], [1, 0]], cga_layout=[[1, 0]], shape=[4, 2])",
    )
    .unwrap();
    assert_eq!(
        g.to_axe(&[4, 2]).unwrap().to_string(),
        "S[(2,2,2):(1@block,3@offset,1@offset)]"
    );
}

#[test]
fn malformed_layouts_are_refused_where_they_are_wrong() {
    let cases = [
        (
            "interval_padding_pairs=[], offset_bases=[[1]], cga_layout=[], shape=[2]",
            "at least one",
            "interval_padding_pairs",
        ),
        (
            "interval_padding_pairs=[[6, 1]], offset_bases=[[1]], cga_layout=[], shape=[2]",
            "powers of two",
            "interval_padding_pairs",
        ),
        (
            "interval_padding_pairs=[[2, 1], [2, 4]], offset_bases=[[1]], cga_layout=[], shape=[2]",
            "twice",
            "interval_padding_pairs",
        ),
        (
            "interval_padding_pairs=[[2, 1, 3]], offset_bases=[[1]], cga_layout=[], shape=[2]",
            "[interval, padding]",
            "interval_padding_pairs",
        ),
        (
            "interval_padding_pairs=[[2, 1]], offset_bases=[[1], [1]], cga_layout=[], shape=[4]",
            "once",
            "offset_bases",
        ),
        (
            "interval_padding_pairs=[[2, 1]], offset_bases=[[3]], cga_layout=[], shape=[4]",
            "power of two",
            "offset_bases",
        ),
        (
            "interval_padding_pairs=[[2, 1]], offset_bases=[[0]], cga_layout=[], shape=[2]",
            "broadcast",
            "offset_bases",
        ),
        (
            "interval_padding_pairs=[[2, 1]], offset_bases=[[1, 1]], cga_layout=[], shape=[2, 2]",
            "one dim",
            "offset_bases",
        ),
        (
            "interval_padding_pairs=[[2, 1]], offset_bases=[[1]], cga_layout=[], shape=[3]",
            "power of two",
            "shape",
        ),
        (
            "interval_padding_pairs=[[2, 1]], offset_bases=[], cga_layout=[[2]], shape=[2]",
            "cga_layout",
            "cga_layout",
        ),
    ];
    for (args, says, at) in cases {
        let text = format!("PaddedSharedLayout({args})");
        let e = parse_gluon(&text).unwrap_err().to_string();
        assert!(e.contains(says), "{text}: {e}");
        let offset = text.find(&format!("{at}=")).unwrap() + at.len() + 1;
        assert!(e.contains(&format!("at offset {offset}")), "{text}: {e}");
    }
}
