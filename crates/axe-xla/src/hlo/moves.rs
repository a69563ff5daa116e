//! Whether an instruction moves bytes between layouts: the relayouts of the cost report.
//!
//! Data moves where a result holds an operand's elements at other bytes. A `bitcast` never moves any
//! (it only names its operand's buffer again), and neither does a `copy` or a `transpose` whose result
//! keeps every element at the byte it had: XLA calls those bitcasts (`ShapeUtil::TransposeIsBitcast`,
//! `ReshapeIsBitcast`) and its simplifier rewrites them into `bitcast`. Two layouts are compared by the
//! physical map they give (every element's place, through [`crate::to_axe`]'s Axe form, and the bytes
//! they take, through [`crate::size::sizes`]), never by their text: `f32[1,128]{1,0}` and `{0,1}`, or
//! `f32[8,128]{1,0:T(8,128)}` and `{1,0}`, are the same bytes.

use super::relayouts::Kind;
use crate::shape::{ArrayShape, Dim, Shape};

/// Whether arrays `a` and `b` are the same bytes: the same element type and dimensions, every element
/// at the same offset, and the same number of bytes in all (padding included), in the same memory space
/// with the same packing and the rest of the layout alike.
///
/// Law: `same_bytes(a, b)` iff `sizes(a).physical_bytes == sizes(b).physical_bytes` and
/// `element_offset(a, i) == element_offset(b, i)` for every index `i` (tested against that enumeration
/// on random small shapes and layouts). The Axe forms decide it: the same map over the same padded box,
/// or the same map over each array's own elements; where an array's elements have no Axe form of their
/// own (three rows of a 2×2 split), arrays of up to 4096 elements are placed one by one. Where none of
/// this can be worked out (a layout the Axe form does not describe, dynamic dimensions, larger arrays),
/// the answer is `false` unless the layouts are equal: a relayout reported, never one hidden.
pub(crate) fn same_bytes(a: &ArrayShape, b: &ArrayShape) -> bool {
    if a.element_type != b.element_type || a.dims != b.dims {
        return false;
    }
    if a.layout == b.layout {
        return true;
    }
    // All but the order and the tiles alike (`D(...)` aside: XLA drops it); split configs cut the
    // array into pieces the Axe form does not follow, so they must be equal layouts.
    let mut rest = a.layout.clone();
    rest.minor_to_major = b.layout.minor_to_major.clone();
    rest.tiles = b.layout.tiles.clone();
    rest.dim_level_types = b.layout.dim_level_types.clone();
    if rest != b.layout || !a.layout.split_configs.is_empty() {
        return false;
    }
    if a.dims.iter().any(|d| !matches!(d, Dim::Static(_))) {
        return false;
    }
    let (Ok(sa), Ok(sb)) = (crate::size::sizes(a), crate::size::sizes(b)) else {
        return false;
    };
    if sa.physical_bytes != sb.physical_bytes {
        return false;
    }
    if a.dims.contains(&Dim::Static(0)) {
        return true; // no element: nothing to place
    }
    let (Ok(fa), Ok(fb)) = (crate::axe::to_axe(a), crate::axe::to_axe(b)) else {
        return false;
    };
    // The same map over the same padded box places the same region's elements alike, whether or not
    // that region has an Axe form of its own (`f32[3,4]` in tiles of 2 rows: three rows of a 2×2 split).
    let box_alike = fa.padded_shape == fb.padded_shape && fa.region == fb.region;
    if box_alike && fa.layout.equivalent(&fb.layout).unwrap_or(false) {
        return true;
    }
    let map = |f: crate::axe::AxeForm| {
        let dims: Vec<u64> = f.region.iter().map(|r| r.end).collect();
        if f.padded_shape == dims {
            Some(f.layout)
        } else {
            f.layout.slice(&f.padded_shape, &f.region).ok()
        }
    };
    match (map(fa), map(fb)) {
        (Some(x), Some(y)) => x.equivalent(&y).unwrap_or(false),
        _ => offsets_alike(a, b, ENUMERATED_MAX),
    }
}

/// The most elements [`same_bytes`] places one by one where a region has no Axe form of its own.
const ENUMERATED_MAX: i64 = 1 << 12;

/// Whether every element of `a` and `b` (static dimensions, alike) is at the same bit offset, checked
/// one element at a time for arrays of at most `most` elements; `false` for larger ones (a relayout
/// reported, never one hidden).
fn offsets_alike(a: &ArrayShape, b: &ArrayShape, most: i64) -> bool {
    let dims: Vec<i64> = a
        .dims
        .iter()
        .map(|d| match d {
            Dim::Static(n) => *n,
            _ => -1,
        })
        .collect();
    let count = dims
        .iter()
        .try_fold(1i64, |n, &d| (d >= 0).then(|| n.checked_mul(d)).flatten());
    if count.is_none_or(|n| n > most) {
        return false;
    }
    let mut index = vec![0i64; dims.len()];
    if dims.contains(&0) {
        return true;
    }
    loop {
        let (Ok(x), Ok(y)) = (
            crate::size::element_offset(a, &index),
            crate::size::element_offset(b, &index),
        ) else {
            return false;
        };
        if x.bit_offset != y.bit_offset {
            return false;
        }
        let mut k = dims.len();
        loop {
            if k == 0 {
                return true;
            }
            k -= 1;
            index[k] += 1;
            if index[k] < dims[k] {
                break;
            }
            index[k] = 0;
        }
    }
}

/// How data moves from an operand of shape `src` into a result `result` of an instruction that is not
/// a transpose: `None` unless `src` is an array of the result's dimensions and type whose bytes differ
/// from the result's; [`Kind::MemorySpace`] when only the memory space `S(n)` makes them differ,
/// [`Kind::Layout`] otherwise.
///
/// Law: `None` whenever `same_bytes(src, result)`; `Some(MemorySpace)` iff the spaces differ and
/// `same_bytes` holds once `src` is put in the result's space.
pub(crate) fn relayout_kind(src: &Shape, result: &ArrayShape) -> Option<Kind> {
    let Shape::Array(src) = src else {
        return None;
    };
    if src.dims != result.dims
        || src.element_type != result.element_type
        || src.layout == result.layout
    {
        return None;
    }
    let mut moved = src.clone();
    moved.layout.memory_space = result.layout.memory_space;
    if !same_bytes(&moved, result) {
        Some(Kind::Layout)
    } else if src.layout.memory_space != result.layout.memory_space {
        Some(Kind::MemorySpace)
    } else {
        None
    }
}

/// Where a `copy-start` puts its operand: the text of the first element of its `(destination, source,
/// context)` result (`copy-done` only hands that buffer on), so that an asynchronous copy is one
/// relayout, at its start, as a synchronous `copy` is. `None` for any other opcode, or a shape that is
/// not a tuple.
///
/// Law: for `opcode == "copy-start"` and `shape` = `(E0, E1, ...)`, `Some(E0)` (blanks trimmed), `E0`
/// ending at the first `,` outside brackets; `None` otherwise.
pub(crate) fn copy_destination<'a>(opcode: &str, shape: &'a str) -> Option<&'a str> {
    if opcode != "copy-start" {
        return None;
    }
    let inner = shape.trim().strip_prefix('(')?;
    let mut depth = 0usize;
    for (i, c) in inner.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth > 0 => depth -= 1,
            ',' | ')' if depth == 0 => return Some(inner[..i].trim()).filter(|e| !e.is_empty()),
            _ => {}
        }
    }
    None
}

/// The permutation of a transpose's `dimensions={...}` attribute (`None` when it is not a list of
/// integers).
pub(crate) fn permutation(dimensions: &str) -> Option<Vec<usize>> {
    let inner = dimensions
        .trim()
        .strip_prefix('{')?
        .strip_suffix('}')?
        .trim();
    if inner.is_empty() {
        return Some(Vec::new());
    }
    inner.split(',').map(|d| d.trim().parse().ok()).collect()
}

/// Whether `result = transpose(operand), dimensions=perm` leaves every element at the byte it had
/// (result dimension `i` is operand dimension `perm[i]`): a bitcast, which moves nothing.
///
/// Law: true iff `same_bytes(operand, back)`, where `back` is the result read in the operand's
/// dimension order (dims `operand.dims`, minor_to_major `perm[m]` for each `m` of the result's, the
/// rest of its layout as it is); false when `perm` is not a permutation that maps the operand's
/// dimensions onto the result's.
pub(crate) fn transpose_is_bitcast(
    operand: &ArrayShape,
    result: &ArrayShape,
    perm: &[usize],
) -> bool {
    let rank = operand.dims.len();
    if perm.len() != rank || result.dims.len() != rank {
        return false;
    }
    let mut seen = vec![false; rank];
    for (i, &p) in perm.iter().enumerate() {
        if p >= rank || std::mem::replace(&mut seen[p], true) || result.dims[i] != operand.dims[p] {
            return false;
        }
    }
    let mut back = result.clone();
    back.dims = operand.dims.clone();
    let mut order = crate::shape::MinorToMajor::new();
    for &m in result.layout.minor_to_major.iter() {
        match usize::try_from(m).ok().and_then(|m| perm.get(m)) {
            Some(&p) => order.push(p as i64),
            None => return false,
        }
    }
    back.layout.minor_to_major = order;
    same_bytes(operand, &back)
}

/// How data moves in `result = transpose(src), dimensions=...` (`dimensions` the attribute's text):
/// [`Kind::Transpose`], or `None` when the operand is not an array or the transpose is a bitcast
/// ([`transpose_is_bitcast`]).
pub(crate) fn transpose_kind(
    src: &Shape,
    result: &Shape,
    dimensions: Option<&str>,
) -> Option<Kind> {
    let (Shape::Array(src), Shape::Array(result)) = (src, result) else {
        return None;
    };
    let bitcast = dimensions
        .and_then(permutation)
        .is_some_and(|perm| transpose_is_bitcast(src, result, &perm));
    (!bitcast).then_some(Kind::Transpose)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::text::parse_shape;
    use proptest::prelude::*;

    fn array(text: &str) -> ArrayShape {
        parse_shape(text).unwrap().as_array().unwrap().clone()
    }

    /// The reviewer's cases: copies between equivalent layouts and transposes that are bitcasts move
    /// nothing; real relayouts still do.
    #[test]
    fn equivalent_layouts_are_the_same_bytes() {
        let same = |a: &str, b: &str| same_bytes(&array(a), &array(b));
        assert!(same("f32[1,128]{1,0}", "f32[1,128]{0,1}"));
        assert!(same("f32[8,128]{1,0:T(8,128)}", "f32[8,128]{1,0}"));
        assert!(same("f32[3,1,5]{2,1,0}", "f32[3,1,5]{1,2,0}"));
        assert!(
            !same("f32[7,128]{1,0:T(8,128)}", "f32[7,128]{1,0}"),
            "padding differs"
        );
        assert!(!same("f32[8,4]{1,0}", "f32[8,4]{0,1}"));
        assert!(!same("f32[8,4]{1,0}", "f32[8,4]{1,0:S(1)}"));
        assert!(
            same("f32[16,128]{1,0:T(8,128)}", "f32[16,128]{1,0}"),
            "tiles in row order"
        );
        assert!(!same("f32[8,256]{1,0:T(8,128)}", "f32[8,256]{1,0}"));
        // Three rows in tiles of two, the padded boxes alike: the region has no Axe form of its own.
        assert!(same("f32[3,4]{0,1:T(4,2)}", "f32[3,4]{1,0:T(2,1)}"));
        assert!(!same("f32[3,4]{0,1:T(4,2)}", "f32[3,4]{1,0:T(2,2)}"));
        let t = |o: &str, r: &str, perm: &[usize]| transpose_is_bitcast(&array(o), &array(r), perm);
        assert!(t("f32[5,3]{1,0}", "f32[3,5]{0,1}", &[1, 0]));
        assert!(!t("f32[5,3]{1,0}", "f32[3,5]{1,0}", &[1, 0]));
        assert!(t(
            "f32[2,4,16,8]{3,2,1,0}",
            "f32[2,16,4,8]{3,1,2,0}",
            &[0, 2, 1, 3]
        ));
        assert!(
            !t("f32[5,3]{1,0}", "f32[3,5]{0,1}", &[0, 1]),
            "not the operand's dims"
        );
        assert_eq!(permutation("{0, 2,1,3}"), Some(vec![0, 2, 1, 3]));
        let kind = |a: &str, b: &str| relayout_kind(&parse_shape(a).unwrap(), &array(b));
        assert_eq!(kind("f32[1,128]{1,0}", "f32[1,128]{0,1}"), None);
        assert_eq!(
            kind("f32[1,128]{1,0}", "f32[1,128]{0,1:S(1)}"),
            Some(Kind::MemorySpace)
        );
        assert_eq!(
            kind("f32[2,128]{1,0}", "f32[2,128]{0,1}"),
            Some(Kind::Layout)
        );
    }

    #[test]
    fn a_copy_start_puts_its_operand_in_its_first_element() {
        let d = copy_destination;
        assert_eq!(
            d(
                "copy-start",
                "(f32[3,5]{1,0:T(8,128)S(1)}, f32[3,5]{1,0:T(8,128)}, u32[])"
            ),
            Some("f32[3,5]{1,0:T(8,128)S(1)}")
        );
        assert_eq!(
            d(
                "copy-start",
                " ((f32[2]{0}, s32[]), (f32[2]{0}, s32[]), u32[])"
            ),
            Some("(f32[2]{0}, s32[])")
        );
        assert_eq!(d("copy-start", "(f32[2]{0})"), Some("f32[2]{0}"));
        assert_eq!(d("copy-start", "f32[2]{0}"), None);
        assert_eq!(d("copy-start", "()"), None);
        assert_eq!(d("copy-start", "(f32[2]{0}"), None);
        assert_eq!(d("copy", "(f32[2]{0}, f32[2]{0}, u32[])"), None);
    }

    /// Every element's byte offset, and the bytes in all: the physical map, enumerated.
    fn enumerated(a: &ArrayShape) -> Option<(i64, Vec<i64>)> {
        let dims: Vec<i64> = a
            .dims
            .iter()
            .map(|d| match d {
                Dim::Static(n) => *n,
                _ => 0,
            })
            .collect();
        let total = crate::size::sizes(a).ok()?.physical_bytes;
        let mut offsets = Vec::new();
        let mut index = vec![0i64; dims.len()];
        if dims.contains(&0) {
            return Some((total, offsets));
        }
        loop {
            offsets.push(crate::size::element_offset(a, &index).ok()?.bit_offset);
            let mut k = dims.len();
            loop {
                if k == 0 {
                    return Some((total, offsets));
                }
                k -= 1;
                index[k] += 1;
                if index[k] < dims[k] {
                    break;
                }
                index[k] = 0;
            }
        }
    }

    fn layout_text(order: &[usize], tile: Option<(i64, i64)>) -> String {
        let m2m: Vec<String> = order.iter().map(|d| d.to_string()).collect();
        match tile {
            Some((a, b)) => format!("{{{}:T({a},{b})}}", m2m.join(",")),
            None => format!("{{{}}}", m2m.join(",")),
        }
    }

    proptest! {
        /// `same_bytes` is the enumeration of every element's offset and the bytes in all.
        #[test]
        fn same_bytes_is_the_enumerated_physical_map(
            dims in proptest::collection::vec(prop_oneof![Just(1i64), 1i64..6], 2..4),
            perm_a in any::<u64>(),
            perm_b in any::<u64>(),
            tile_a in proptest::option::of((prop_oneof![Just(1i64), Just(2), Just(4)], prop_oneof![Just(1i64), Just(2), Just(4)])),
            tile_b in proptest::option::of((prop_oneof![Just(1i64), Just(2), Just(4)], prop_oneof![Just(1i64), Just(2), Just(4)])),
        ) {
            let rank = dims.len();
            let order = |seed: u64| {
                let mut o: Vec<usize> = (0..rank).collect();
                let mut s = seed;
                for i in (1..rank).rev() {
                    o.swap(i, (s % (i as u64 + 1)) as usize);
                    s /= i as u64 + 1;
                }
                o
            };
            let d: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
            let a = array(&format!("f32[{}]{}", d.join(","), layout_text(&order(perm_a), tile_a)));
            let b = array(&format!("f32[{}]{}", d.join(","), layout_text(&order(perm_b), tile_b)));
            let (ea, eb) = (enumerated(&a), enumerated(&b));
            prop_assume!(ea.is_some() && eb.is_some());
            // Where the Axe form exists for both, the answer is exact; elsewhere it never hides a move.
            let exact = crate::axe::to_axe(&a).is_ok() && crate::axe::to_axe(&b).is_ok();
            let truth = ea == eb;
            if exact {
                prop_assert_eq!(same_bytes(&a, &b), truth, "{} vs {}", a, b);
            } else {
                prop_assert!(!same_bytes(&a, &b) || truth, "{} vs {}", a, b);
            }
        }
    }
}
