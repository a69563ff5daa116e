#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Index functions, sizes and the Axe form against brute force on random shapes, orders and 1–3 tiles.

use std::collections::HashSet;

use axe_xla::{
    index_of_linear, linear_index, parse_shape, sizes, to_axe, ArrayShape, Dim, Layout,
    PrimitiveType, Shape, Tile, TileDim, Tiling, XlaError,
};
use proptest::prelude::*;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// A random array: rank 0–3, dimensions 1–9, a random order, 0–3 tiles (the first may combine dims).
fn array_strategy(max_tiles: usize) -> impl Strategy<Value = ArrayShape> {
    (0usize..=3)
        .prop_flat_map(move |rank| {
            (
                proptest::collection::vec(1i64..=9, rank),
                Just((0..rank as i64).collect::<Vec<_>>()).prop_shuffle(),
                proptest::collection::vec(
                    (
                        1usize..=rank + 1,
                        proptest::collection::vec(prop_oneof![1i64..=5, Just(8), Just(16)], 4),
                        any::<u8>(),
                    ),
                    0..=max_tiles,
                ),
                prop_oneof![Just(0i64), Just(4), Just(1)],
                prop_oneof![
                    Just(PrimitiveType::F32),
                    Just(PrimitiveType::Bf16),
                    Just(PrimitiveType::S4),
                    Just(PrimitiveType::Pred)
                ],
            )
        })
        .prop_map(|(dims, m2m, tiles, e, ty)| {
            let mut layout = Layout::with_minor_to_major(m2m);
            for (n, (k, sizes, bits)) in tiles.into_iter().enumerate() {
                let mut t: Vec<TileDim> = sizes[..k.min(4)]
                    .iter()
                    .map(|&s| TileDim::Size(s))
                    .collect();
                if n == 0 && t.len() >= 2 && bits % 3 == 0 {
                    let pos = (bits as usize / 3) % (t.len() - 1);
                    t[pos] = TileDim::Combined;
                }
                layout.tiles.push(Tile(t.into()));
            }
            layout.element_size_in_bits = e;
            ArrayShape {
                element_type: ty,
                dims: dims.into_iter().map(Dim::Static).collect(),
                layout,
            }
        })
}

/// Rank 1–3 with one tile of full rank and no combined dimension.
fn single_tile_strategy() -> impl Strategy<Value = ArrayShape> {
    (1usize..=3)
        .prop_flat_map(|rank| {
            (
                proptest::collection::vec(1i64..=9, rank),
                Just((0..rank as i64).collect::<Vec<_>>()).prop_shuffle(),
                proptest::collection::vec(1i64..=5, rank),
            )
        })
        .prop_map(|(dims, m2m, t)| {
            let mut layout = Layout::with_minor_to_major(m2m);
            layout
                .tiles
                .push(Tile(t.into_iter().map(TileDim::Size).collect()));
            ArrayShape {
                element_type: PrimitiveType::F32,
                dims: dims.into_iter().map(Dim::Static).collect(),
                layout,
            }
        })
}

fn all_indices(dims: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![vec![]];
    for &d in dims {
        out = out
            .into_iter()
            .flat_map(|p: Vec<i64>| (0..d).map(move |i| [p.clone(), vec![i]].concat()))
            .collect();
    }
    out
}

fn dims_of(a: &ArrayShape) -> Vec<i64> {
    a.dims.iter().map(|d| d.bound().unwrap()).collect()
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn tiled_index_is_a_bijection_onto_data_slots(a in array_strategy(3)) {
        let t = Tiling::new(&a).unwrap();
        let total = t.expanded_elements().unwrap();
        let mut seen = HashSet::new();
        for e in all_indices(&dims_of(&a)) {
            let x = t.linear_index(&e).unwrap();
            prop_assert!((0..total).contains(&x));
            prop_assert!(seen.insert(x), "two elements at {}", x);
            prop_assert_eq!(t.element_at(x).unwrap(), Some(e));
        }
        let data = (0..total).filter(|&x| t.element_at(x).unwrap().is_some()).count();
        prop_assert_eq!(data, seen.len());
    }

    #[test]
    fn untiled_index_is_minor_to_major_row_major(a in array_strategy(0)) {
        let t = Tiling::new(&a).unwrap();
        let dims = dims_of(&a);
        // Brute force: strides from minor_to_major.
        let mut stride = vec![0i64; dims.len()];
        let mut acc = 1;
        for &d in &a.layout.minor_to_major {
            stride[d as usize] = acc;
            acc *= dims[d as usize];
        }
        for e in all_indices(&dims) {
            let want: i64 = e.iter().zip(&stride).map(|(i, s)| i * s).sum();
            prop_assert_eq!(linear_index(&a, &e).unwrap(), want);
            prop_assert_eq!(t.linear_index(&e).unwrap(), want);
            prop_assert_eq!(index_of_linear(&a, want).unwrap(), e);
        }
    }

    /// One full-rank tile: the doc's closed formula linear_index((⌊e/t⌋, e mod t), (⌈d/t⌉, t)).
    #[test]
    fn single_tile_matches_the_docs_formula(a in single_tile_strategy()) {
        let t: Vec<i64> = a.layout.tiles[0].0.iter().map(|d| match d { TileDim::Size(s) => *s, TileDim::Combined => 1 }).collect();
        let dims = dims_of(&a);
        let phys: Vec<usize> = a.layout.minor_to_major.iter().rev().map(|&d| d as usize).collect();
        let tiling = Tiling::new(&a).unwrap();
        for e in all_indices(&dims) {
            let pe: Vec<i64> = phys.iter().map(|&d| e[d]).collect();
            let pd: Vec<i64> = phys.iter().map(|&d| dims[d]).collect();
            let mut idx: Vec<i64> = pe.iter().zip(&t).map(|(e, t)| e / t).collect();
            idx.extend(pe.iter().zip(&t).map(|(e, t)| e % t));
            let mut bounds: Vec<i64> = pd.iter().zip(&t).map(|(d, t)| (d + t - 1) / t).collect();
            bounds.extend(&t);
            let want = idx.iter().zip(&bounds).fold(0, |acc, (i, b)| acc * b + i);
            prop_assert_eq!(tiling.linear_index(&e).unwrap(), want);
        }
    }

    /// The Axe form agrees with the tiled linear index at every element; a single tile always has one.
    #[test]
    fn axe_form_agrees_element_by_element(a in array_strategy(3)) {
        let t = Tiling::new(&a).unwrap();
        match to_axe(&a) {
            Ok(form) => {
                let dims = dims_of(&a);
                prop_assert!(form.padded_shape.iter().zip(&dims).all(|(p, d)| *p >= *d as u64));
                for e in all_indices(&dims) {
                    let idx: Vec<u64> = e.iter().map(|&i| i as u64).collect();
                    let got = form.layout.apply_multi(&idx, &form.padded_shape).unwrap();
                    prop_assert_eq!(got.len(), 1);
                    prop_assert_eq!(got[0].get(&axe_layout::Axis::memory()), t.linear_index(&e).unwrap(), "at {:?}", e);
                }
            }
            Err(XlaError::Unsupported(_)) => {
                let simple = a.layout.tiles.len() <= 1 && a.layout.tiles.iter().all(|t| t.0.iter().all(|d| matches!(d, TileDim::Size(_))));
                prop_assert!(!simple, "a single tile always has an Axe form: {}", a);
            }
            Err(e) => prop_assert!(false, "unexpected error {}", e),
        }
    }

    #[test]
    fn sizes_are_ordered(a in array_strategy(3)) {
        let z = sizes(&a).unwrap();
        prop_assert!(z.logical_bytes <= z.xla_array_size_bytes);
        prop_assert!(z.xla_array_size_bytes <= z.physical_bytes);
        let bits = if a.layout.element_size_in_bits > 0 { a.layout.element_size_in_bits } else { i64::from(a.element_type.byte_width()) * 8 };
        let n = Tiling::new(&a).unwrap().expanded_elements().unwrap();
        prop_assert_eq!(z.physical_bytes, (n * bits + 7) / 8);
    }

    /// XLA's `ShapeUtil::ArraySize`, written out: untiled, the element bytes (no `L`); tiled, each
    /// physical dimension rounded up to the first tile's size for it (1 for dimensions the tile lacks),
    /// times the dimensions it does not cover, rounded up to `L`, then `E`.
    #[test]
    fn xla_array_size_is_xlas_formula(a in array_strategy(3), l in 1i64..9) {
        let mut a = a;
        a.layout.tail_padding_alignment_in_elements = l;
        let first = a.layout.tiles.first().cloned();
        prop_assume!(first.as_ref().is_none_or(|t| t.0.iter().all(|d| matches!(d, TileDim::Size(_)))));
        let z = sizes(&a).unwrap();
        let bits = if a.layout.element_size_in_bits > 0 { a.layout.element_size_in_bits } else { i64::from(a.element_type.byte_width()) * 8 };
        let bytes = |n: i64| (n * bits + 7) / 8;
        let dims: Vec<i64> = a.dims.iter().map(|d| d.bound().unwrap()).collect();
        let expected = match first {
            None => bytes(dims.iter().product()),
            Some(tile) => {
                let t: Vec<i64> = tile.0.iter().map(|d| match d { TileDim::Size(s) => *s, TileDim::Combined => unreachable!() }).collect();
                let rank = dims.len();
                let mut n = 1i64;
                for j in 0..t.len().max(rank) {
                    // j counts from the most minor dimension.
                    let d = if j < rank { dims[a.layout.minor_to_major[j] as usize] } else { 1 };
                    n *= if j < t.len() { let s = t[t.len() - 1 - j]; (d + s - 1) / s * s } else { d };
                }
                bytes((n + l - 1) / l * l)
            }
        };
        prop_assert_eq!(z.xla_array_size_bytes, expected, "{}", a);
        prop_assert!(z.xla_array_size_bytes <= z.physical_bytes);
    }

    #[test]
    fn printing_round_trips(a in array_strategy(3), space in 0i64..3, l in 1i64..4) {
        let mut a = a;
        a.layout.memory_space = space;
        a.layout.tail_padding_alignment_in_elements = l;
        let shape = Shape::Tuple(vec![Shape::Array(a.clone()), Shape::Token, Shape::Array(a)]);
        let printed = shape.to_string();
        let back = parse_shape(&printed).unwrap();
        prop_assert_eq!(&back, &shape);
        prop_assert_eq!(back.to_string(), printed);
    }
}

#[test]
fn overflow_is_an_error() {
    let a = parse_shape("f32[9223372036854775807,2]").unwrap();
    let a = a.as_array().unwrap();
    assert!(sizes(a).unwrap_err().to_string().contains("overflow"));
    let b = parse_shape("f32[4611686018427387904]{0:T(3)}").unwrap();
    assert!(matches!(
        Tiling::new(b.as_array().unwrap()).map(|t| t.expanded_elements()),
        Ok(Ok(_)) | Err(_) | Ok(Err(_))
    ));
    assert!(sizes(b.as_array().unwrap()).is_err());
    assert!(parse_shape("f32[9223372036854775808]").is_err());
}

/// The layouts people write: rank 1–3, one tile (no wider than the dimensions) over the last k ≤ rank
/// physical dimensions, and optionally
/// a second tile of rank ≤ 2 whose sizes divide the first tile's (like `(8,128)(2,1)`).
fn two_tile_strategy() -> impl Strategy<Value = ArrayShape> {
    (1usize..=3)
        .prop_flat_map(|rank| {
            (
                proptest::collection::vec(1i64..=9, rank),
                Just((0..rank as i64).collect::<Vec<_>>()).prop_shuffle(),
                1usize..=rank,
                proptest::collection::vec(prop_oneof![1i64..=4, Just(8)], rank),
                proptest::option::of((1usize..=2, proptest::collection::vec(1i64..=4, 2))),
            )
        })
        .prop_map(|(dims, m2m, k, first, second)| {
            let mut layout = Layout::with_minor_to_major(m2m.clone());
            // Tile sizes no larger than the dimensions they cover (src/recognise/tests.rs also tries
            // wider tiles, leading tile dimensions and ranks up to 5).
            let physical: Vec<i64> = m2m.iter().rev().map(|&d| dims[d as usize]).collect();
            let first: Vec<i64> = first[..k]
                .iter()
                .zip(&physical[physical.len() - k..])
                .map(|(&t, &d)| t.min(d))
                .collect();
            layout
                .tiles
                .push(Tile(first.iter().map(|&t| TileDim::Size(t)).collect()));
            if let Some((k2, picks)) = second {
                let k2 = k2.min(k);
                let sizes: Vec<i64> = (0..k2)
                    .map(|j| {
                        let t = first[k - k2 + j];
                        let divisors: Vec<i64> = (1..=t).filter(|d| t % d == 0).collect();
                        divisors[picks[j] as usize % divisors.len()]
                    })
                    .collect();
                layout
                    .tiles
                    .push(Tile(sizes.into_iter().map(TileDim::Size).collect()));
            }
            ArrayShape {
                element_type: PrimitiveType::F32,
                dims: dims.into_iter().map(Dim::Static).collect(),
                layout,
            }
        })
}

proptest! {
    #![proptest_config(config(150))]

    /// from_axe recognises the Axe form (over its padded shape) of every such layout, returning a layout
    /// with the same map.
    #[test]
    fn from_axe_inverts_to_axe(a in two_tile_strategy()) {
        let form = to_axe(&a).unwrap();
        let found = axe_xla::from_axe(&form.layout, &form.padded_shape).unwrap();
        let found = found.unwrap_or_else(|| panic!("no XLA layout found for {} ({})", form.layout, a));
        let padded: Vec<Dim> = form.padded_shape.iter().map(|&p| Dim::Static(p as i64)).collect();
        let b = ArrayShape { layout: found, dims: padded.into(), ..a.clone() };
        let back = to_axe(&b).unwrap();
        prop_assert!(back.layout.equivalent(&form.layout).unwrap(), "{} vs {}", a, b);
    }
}

/// A random shape: an array of [`array_strategy`], a token, an opaque value, or a tuple of 0–3 of them,
/// nested up to three deep.
fn shape_strategy() -> impl Strategy<Value = Shape> {
    let leaf = prop_oneof![
        6 => array_strategy(1).prop_map(Shape::Array),
        1 => Just(Shape::Token),
        1 => Just(Shape::Opaque),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        proptest::collection::vec(inner, 0..=3).prop_map(Shape::Tuple)
    })
}

proptest! {
    #![proptest_config(config(64))]

    /// `part_sizes` (XLA's `ByteSizeOf` of every part): a tuple's is 8 bytes an element; the tuples'
    /// add up to 8 bytes times every tuple element, nested ones included; the arrays' are their logical
    /// bytes, in the order of `Shape::arrays`; a token's 0, an opaque value's 8; the whole comes first.
    #[test]
    fn part_sizes_are_xlas_byte_size_of(s in shape_strategy()) {
        fn tuple_elements(s: &Shape) -> i64 {
            match s {
                Shape::Tuple(es) => es.len() as i64 + es.iter().map(tuple_elements).sum::<i64>(),
                _ => 0,
            }
        }
        let parts = axe_xla::part_sizes(&s).unwrap();
        prop_assert!(parts[0].index.is_empty() && std::ptr::eq(parts[0].shape, &s));
        let mut tables = 0;
        let mut arrays = Vec::new();
        for p in &parts {
            match p.shape {
                Shape::Tuple(es) => {
                    prop_assert_eq!(p.byte_size_of, 8 * es.len() as i64);
                    tables += p.byte_size_of;
                }
                Shape::Array(a) => {
                    prop_assert_eq!(Some(p.byte_size_of), p.sizes.map(|z| z.logical_bytes));
                    arrays.push((p.index.clone(), sizes(a).unwrap()));
                }
                Shape::Token => prop_assert_eq!(p.byte_size_of, 0),
                Shape::Opaque => prop_assert_eq!(p.byte_size_of, 8),
                Shape::Buffer(_) => prop_assert!(false, "a buffer is listed as what it holds"),
            }
        }
        prop_assert_eq!(tables, 8 * tuple_elements(&s));
        let want: Vec<_> = s.arrays().into_iter().map(|(i, a)| (i, sizes(a).unwrap())).collect();
        prop_assert_eq!(arrays, want);
    }
}
