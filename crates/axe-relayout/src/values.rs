//! Checks on the values a source holds, where the bytes alone do not say what they mean: an element
//! narrower than the byte it is kept in unpacked (pred's one bit, s4's four) has its bits low and the
//! rest zero, and any other byte is refused rather than read one way by the bit packing (its low bits)
//! and another by a byte copy (the byte itself).

use crate::tensor::TensorLayout;

/// The bits of value an element of type `t` keeps in the byte it takes unpacked, where that is less than
/// the byte: 1 for pred (0 or 1), the type's own bits for sub-byte types (4 for s4, u4 and f4e2m1fn);
/// `None` for types that fill their bytes. Law: `Some(b)` iff every value of `t` is a byte below `2^b`
/// and some byte is not.
pub fn value_bits(t: axe_xla::PrimitiveType) -> Option<u32> {
    if t == axe_xla::PrimitiveType::Pred {
        Some(1)
    } else {
        Some(t.bits()).filter(|&b| b < 8)
    }
}

/// The lowest byte offset of `src` at which an element of any of the source layouts `parts` (each
/// element in a whole byte) holds a byte of `value_bits` bits or more (for pred, 1: a byte other than 0
/// or 1; for s4 and u4, 4), and that byte. Layouts of other widths (packed into `E(n)` bits) hold only
/// their bits and are skipped. Law: `None` iff every element's byte is below `2^value_bits`; padding
/// bytes are not elements and may hold anything. The common case, no such byte anywhere in the buffer,
/// is one pass at memory speed; only a buffer holding one is walked element by element.
pub fn first_out_of_range(
    src: &[u8],
    parts: &[&TensorLayout],
    value_bits: u32,
) -> Option<(u64, u8)> {
    let limit = u8::try_from(1u32.checked_shl(value_bits)?).ok()?; // 8 bits or more: any byte
    let parts: Vec<&TensorLayout> = parts.iter().copied().filter(|l| l.bits == 8).collect();
    let end = parts
        .iter()
        .map(|l| usize::try_from(l.bytes()).unwrap_or(usize::MAX))
        .max()?
        .min(src.len());
    let buf = src.get(..end)?;
    if buf.iter().all(|&b| b < limit) {
        return None;
    }
    let mut first: Option<(u64, u8)> = None;
    for l in parts {
        each_offset(l, |o| {
            let Some(&v) = usize::try_from(o).ok().and_then(|o| buf.get(o)) else {
                return;
            };
            if v >= limit && first.is_none_or(|(f, _)| o < f) {
                first = Some((o, v));
            }
        });
    }
    first
}

/// Calls `f` with the slot of every logical element of `l` (first copy), in row-major index order.
fn each_offset(l: &TensorLayout, mut f: impl FnMut(u64)) {
    let t = &l.tables;
    if t.iter().any(Vec::is_empty) {
        return; // no element
    }
    let base = l.replicas.first().copied().unwrap_or(0);
    let mut idx = vec![0usize; t.len()];
    loop {
        let o = idx
            .iter()
            .zip(t)
            .try_fold(base, |acc, (&i, tab)| acc.checked_add(tab[i]));
        if let Some(o) = o.and_then(|o| u64::try_from(o).ok()) {
            f(o);
        }
        let mut k = t.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < t[k].len() {
                break;
            }
            idx[k] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(s: &str) -> TensorLayout {
        let a = axe_xla::parse_shape(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        TensorLayout::from_xla(a.as_array().unwrap_or_else(|| panic!("{s}")))
            .unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn pred_bytes_past_one_are_found() {
        let l = layout("pred[2,3]{1,0}");
        assert_eq!(first_out_of_range(&[1, 0, 1, 0, 0, 1], &[&l], 1), None);
        assert_eq!(
            first_out_of_range(&[1, 0, 2, 0, 255, 1], &[&l], 1),
            Some((2, 2))
        );
        // Padding may hold anything: pred[3] tiled by 4 has one padding byte.
        let t = layout("pred[3]{0:T(4)}");
        assert_eq!(first_out_of_range(&[0, 1, 1, 7], &[&t], 1), None);
        assert_eq!(first_out_of_range(&[0, 9, 1, 7], &[&t], 1), Some((1, 9)));
        // Packed bits are always 0 or 1.
        let p = layout("pred[16]{0:E(1)}");
        assert_eq!(first_out_of_range(&[0xff, 0xff], &[&p], 1), None);
        // An s4 kept in a byte: its four bits low.
        let s4 = layout("s4[3]{0}");
        assert_eq!(first_out_of_range(&[15, 8, 7], &[&s4], 4), None);
        assert_eq!(
            first_out_of_range(&[15, 0xf8, 7], &[&s4], 4),
            Some((1, 0xf8))
        );
        assert_eq!(
            first_out_of_range(&[255, 1, 2], &[&layout("u8[3]")], 8),
            None
        );
        // A scalar.
        assert_eq!(
            first_out_of_range(&[3], &[&layout("pred[]")], 1),
            Some((0, 3))
        );
    }
}
