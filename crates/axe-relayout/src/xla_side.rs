//! What an XLA array side of a relayout must satisfy before its tables are built: an element size the
//! kernels can move, a byte size that fits 64 bits; and the tables of layouts whose Axe form does not
//! exist but whose offsets are still a sum of one table per dimension (a later tile that pads inside an
//! earlier one, `f32[3]{0:T(2)(3)}`).

use axe_xla::{element_bits, ArrayShape, PrimitiveType, TileDim, Tiling};

use crate::error::{RelayoutError, Result};

/// The bits each element of `a` takes in its buffer, where the kernels can move them: the type's own
/// width (a whole byte for sub-byte types unpacked, `E(8)`), a sub-byte type packed narrower (`s4` in
/// `E(4)`), or pred packed into `E(1)`. Law: `Ok(bits)` iff `bits = element_bits(a)` is one of those;
/// an element size wider than the slot the type needs (`f32` in `E(64)`: padded element slots) or
/// narrower than the type (`s8` in `E(4)`, pred in `E(2)` or `E(4)`) is an error naming the attribute.
pub(crate) fn element_slot_bits(a: &ArrayShape) -> Result<u32> {
    let bits = element_bits(a);
    let t = a.element_type;
    let own = i64::from(t.bits());
    let slot = i64::from(t.byte_width()) * 8; // the unpacked slot: sub-byte types take a byte
    let name = t.name();
    if bits > slot {
        return Err(RelayoutError::Layout(format!(
            "{a}: E({bits}) is wider than {name}'s {own} bits: relayout does not move padded element \
             slots (drop the E, or give E({slot}))"
        )));
    }
    let pred = t == PrimitiveType::Pred;
    if bits < own && !(pred && bits == 1) {
        // XLA gives sizes for such layouts but no values: its CPU and GPU backends refuse custom
        // element sizes on types of a byte or more.
        return Err(RelayoutError::Layout(format!(
            "{a}: E({bits}) keeps {bits} of each {name} element's {own} bits, and XLA does not say \
             which values survive; elements pack narrower than their type only as pred into E(1)"
        )));
    }
    u32::try_from(bits).map_err(|_| RelayoutError::Layout(format!("{a}: E({bits}) is no width")))
}

/// Checks that a buffer of `slots` elements of `bits` bits has a byte count that fits 64 bits. Law:
/// `Ok` iff `⌈slots·bits / 8⌉ ≤ u64::MAX`; otherwise an integer-overflow error naming `what` (the
/// shape or layout), never a size.
pub(crate) fn check_byte_size(what: &dyn std::fmt::Display, slots: u64, bits: u32) -> Result<()> {
    let total = u128::from(slots) * u128::from(bits);
    if u64::try_from(total.div_ceil(8)).is_ok() {
        return Ok(());
    }
    Err(RelayoutError::Layout(format!(
        "{what}: integer overflow: its buffer of {slots} elements of {bits} bits takes more than \
         2^64 bytes"
    )))
}

/// The offset tables of an XLA array whose layout has no Axe form over a padded box (`to_axe` failed
/// with `why`), where the offsets are still separable: with no `*` in its tiles, every coordinate of the
/// expanded shape follows one logical dimension, so `linear_index(e) = Σ_i linear_index(e_i·unit_i)`
/// and table `i` lists `linear_index` along dimension `i`. Law: for every logical index `e`,
/// `Σ_i tables[i][e_i] = Tiling::linear_index(e)`. A layout with `*` (a merged run of dimensions that a
/// tile then cuts across) is refused, saying so; `why` (to_axe's reason) names the failing step for
/// any other error.
pub(crate) fn separable_tables(
    a: &ArrayShape,
    tiling: &Tiling,
    dims: &[u64],
    why: &dyn std::fmt::Display,
) -> Result<Vec<Vec<i64>>> {
    let merged = a
        .layout
        .tiles
        .iter()
        .find(|t| t.0.contains(&TileDim::Combined));
    if let Some(tile) = merged {
        return Err(RelayoutError::Layout(format!(
            "{a}: tile {tile} merges dimensions with `*` and then cuts the merged run across them, so \
             an element's offset is not a sum of one offset per dimension, which relayout needs; \
             `axe xla index --all` and `axe xla numpy` describe such layouts, relayout does not move \
             them"
        )));
    }
    let mut tables = Vec::with_capacity(dims.len());
    let mut index = vec![0i64; dims.len()];
    for (i, &d) in dims.iter().enumerate() {
        let mut t = Vec::new();
        if usize::try_from(d).map_or(true, |d| t.try_reserve_exact(d).is_err()) {
            return Err(RelayoutError::Layout(format!(
                "{a}: the offsets of a dim of {d} indices do not fit in memory"
            )));
        }
        for x in 0..d {
            index[i] = i64::try_from(x).map_err(|_| overflow(a))?;
            let at = tiling
                .linear_index(&index)
                .map_err(|e| RelayoutError::Layout(format!("{a}: {e} (its Axe form: {why})")))?;
            t.push(at);
        }
        index[i] = 0;
        tables.push(t);
    }
    Ok(tables)
}

fn overflow(a: &ArrayShape) -> RelayoutError {
    RelayoutError::Layout(format!("{a}: offsets overflow 64 bits"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn array(s: &str) -> ArrayShape {
        axe_xla::parse_shape(s)
            .unwrap_or_else(|e| panic!("{s}: {e}"))
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("{s} is no array"))
    }

    #[test]
    fn element_sizes() {
        assert_eq!(element_slot_bits(&array("f32[2]{0}")).ok(), Some(32));
        assert_eq!(element_slot_bits(&array("f32[2]{0:E(32)}")).ok(), Some(32));
        assert_eq!(element_slot_bits(&array("s4[2]{0}")).ok(), Some(8));
        assert_eq!(element_slot_bits(&array("s4[2]{0:E(4)}")).ok(), Some(4));
        assert_eq!(element_slot_bits(&array("pred[2]{0:E(1)}")).ok(), Some(1));
        let wide = element_slot_bits(&array("f32[2]{0:E(64)}")).unwrap_err();
        assert!(
            wide.to_string()
                .contains("E(64) is wider than f32's 32 bits"),
            "{wide}"
        );
        assert!(element_slot_bits(&array("s8[2]{0:E(16)}")).is_err());
        assert!(element_slot_bits(&array("s4[2]{0:E(16)}")).is_err());
        for narrow in [
            "pred[2]{0:E(2)}",
            "pred[3]{0:E(4)}",
            "s8[2]{0:E(4)}",
            "s4[2]{0:E(2)}",
        ] {
            let e = element_slot_bits(&array(narrow)).unwrap_err().to_string();
            assert!(e.contains("only as pred into E(1)"), "{narrow}: {e}");
        }
    }

    #[test]
    fn byte_sizes() {
        assert!(check_byte_size(&"x", u64::MAX, 8).is_ok());
        assert!(check_byte_size(&"x", u64::MAX / 4 + 1, 32).is_err());
        let e = check_byte_size(&"f32[1]", 1 << 62, 32)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("integer overflow") && e.contains("f32[1]"),
            "{e}"
        );
    }

    #[test]
    fn tables_follow_the_linear_index() {
        for s in [
            "f32[3]{0:T(2)(3)}",
            "f32[5,3]{1,0:T(2,2)(1,3)}",
            "u8[7,5]{0,1:T(4,2)(3,2)}",
        ] {
            let a = array(s);
            let t = Tiling::new(&a).unwrap();
            let dims: Vec<u64> = t.logical.iter().map(|&d| d as u64).collect();
            let tables = separable_tables(&a, &t, &dims, &"").unwrap();
            for x in 0..dims[0] as usize {
                for y in 0..dims.get(1).map_or(1, |&d| d as usize) {
                    let e: Vec<i64> = [x, y][..dims.len()].iter().map(|&v| v as i64).collect();
                    let sum: i64 = e.iter().zip(&tables).map(|(&v, t)| t[v as usize]).sum();
                    assert_eq!(sum, t.linear_index(&e).unwrap(), "{s} {e:?}");
                }
            }
        }
        let a = array("f32[2,3,4]{2,1,0:T(*,2,2)}");
        let t = Tiling::new(&a).unwrap();
        let e = separable_tables(&a, &t, &[2, 3, 4], &"why")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("merges dimensions with `*`") && !e.contains("a later tile"),
            "{e}"
        );
    }
}
