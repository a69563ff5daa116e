//! The numpy dtypes that hold each XLA element type, for reading and writing `.npy` files.
//!
//! Reading accepts, for each element type, the dtype numpy gives that type, in either byte order
//! (big-endian data is byte-swapped after reading):
//!
//! | element type | dtypes read | dtype written |
//! |---|---|---|
//! | `pred` | `\|b1` (bool) only | `\|b1` |
//! | `s8`…`s64`, `u8`…`u64` | `i1`…`i8`, `u1`…`u8` | little-endian |
//! | `f16`, `f32`, `f64` | `f2`, `f4`, `f8` | little-endian |
//! | `c64`, `c128` | `c8`, `c16` | little-endian |
//! | `bf16` (numpy has none) | uint16 `u2`, void `V2` (`ml_dtypes.bfloat16` saves `<V2`) | `<u2` |
//! | other 8-bit types (`f8e4m3fn`, …) | uint8 `u1`, void `V1` (`ml_dtypes` saves `<V1`) | `\|u1` |
//! | signed sub-byte integers (`s4`, `s2`, `s1`) | int8 `i1` (values), uint8 `u1` or void `V1` (bits) | `\|i1` (values) |
//! | other sub-byte types (`u4`, `f4e2m1fn`, …) | uint8 `u1`, int8 `i1` or void `V1` (bits) | `\|u1` |
//!
//! A `pred` array is read only from a bool array, whose bytes numpy keeps at 0 or 1; an integer array
//! would bring other byte values into a `pred` tensor. A sub-byte element takes a byte, one element per
//! byte, as XLA keeps it unpacked: its bits low and the rest zero (`ml_dtypes.int4` saves -1 as the
//! byte `0x0f`, a `V1` array). In an int8 array a signed sub-byte element is its value instead (`s4`:
//! -8..7, -1 the byte `0xff`): it is narrowed to its bits when read ([`narrow_values`], a value out of
//! range refused) and sign-extended when written ([`widen_values`]), so that `np.load` gives the values.

use axe_xla::PrimitiveType;
use npyz::{DType, Endianness, TypeChar};

/// The numpy dtype written for an element type (`None`: it has none).
pub fn descr(t: PrimitiveType) -> Option<&'static str> {
    use PrimitiveType::*;
    Some(match t {
        Pred => "|b1",
        S8 => "|i1",
        S16 => "<i2",
        S32 => "<i4",
        S64 => "<i8",
        U8 => "|u1",
        U16 => "<u2",
        U32 => "<u4",
        U64 => "<u8",
        F16 => "<f2",
        Bf16 => "<u2",
        F32 => "<f4",
        F64 => "<f8",
        C64 => "<c8",
        C128 => "<c16",
        _ if t.bits() == 8 => "|u1",
        _ if signed_sub_byte(t).is_some() => "|i1",
        _ if t.is_array_type() && t.bits() < 8 => "|u1",
        _ => return None,
    })
}

/// What reading an array of `dtype` as `t` takes: `Ok(0)` to use its bytes as they are, `Ok(n)` to
/// reverse each run of `n` bytes (big-endian data), or an error saying which dtypes `t` accepts.
pub fn byte_swap_unit(dtype: &DType, t: PrimitiveType) -> Result<usize, String> {
    let DType::Plain(ts) = dtype else {
        return Err(format!(
            "holds a structured array ({}); {t} takes {}",
            dtype.descr(),
            accepted(t)
        ));
    };
    let width = t.byte_width() as u64;
    let kinds: &[TypeChar] = match t {
        PrimitiveType::Pred => &[TypeChar::Bool],
        PrimitiveType::S8 | PrimitiveType::S16 | PrimitiveType::S32 | PrimitiveType::S64 => {
            &[TypeChar::Int]
        }
        PrimitiveType::U8 | PrimitiveType::U16 | PrimitiveType::U32 | PrimitiveType::U64 => {
            &[TypeChar::Uint]
        }
        PrimitiveType::F16 | PrimitiveType::F32 | PrimitiveType::F64 => &[TypeChar::Float],
        PrimitiveType::C64 | PrimitiveType::C128 => &[TypeChar::Complex],
        PrimitiveType::Bf16 => &[TypeChar::Uint, TypeChar::RawData],
        _ if t.bits() == 8 => &[TypeChar::Uint, TypeChar::RawData],
        _ if t.is_array_type() && t.bits() < 8 => {
            &[TypeChar::Int, TypeChar::Uint, TypeChar::RawData]
        }
        _ => &[],
    };
    let fits = kinds.contains(&ts.type_char())
        && ts.size_field() == width
        && !(ts.type_char() == TypeChar::RawData && ts.endianness() == Endianness::Big);
    if !fits {
        return Err(format!("holds '{ts}' elements; {t} takes {}", accepted(t)));
    }
    if ts.endianness() != Endianness::Big || width == 1 {
        return Ok(0);
    }
    // A complex number is two floats, each in the file's byte order.
    Ok(if ts.type_char() == TypeChar::Complex {
        width as usize / 2
    } else {
        width as usize
    })
}

/// The dtypes an element type is read from, in words.
fn accepted(t: PrimitiveType) -> String {
    use PrimitiveType::*;
    match t {
        Pred => "a bool array ('|b1')".into(),
        Bf16 => "bfloat16, which numpy lacks: give its raw 16 bits as a uint16 array ('<u2'), \
                 a 2-byte void array ('|V2') or an ml_dtypes.bfloat16 array"
            .into(),
        _ if descr(t).is_none() => "no numpy dtype; give raw bytes (.bin)".into(),
        _ if t.bits() < 8 => {
            let values = match signed_sub_byte(t) {
                Some(b) => format!(
                    "its values as an int8 array ('|i1': {}..{}) or ",
                    -(1i32 << (b - 1)),
                    (1i32 << (b - 1)) - 1
                ),
                None => String::new(),
            };
            format!(
                "one element a byte: {values}its {} bits as a uint8 array ('|u1') or a 1-byte void array \
                 ('|V1', as ml_dtypes saves it)",
                t.bits()
            )
        }
        _ if t.bits() == 8 && descr(t) == Some("|u1") && t != U8 => {
            "its raw bytes as a uint8 array ('|u1') or a 1-byte void array ('|V1'), \
             as ml_dtypes saves it"
                .into()
        }
        _ => {
            let d = descr(t).unwrap_or("");
            if t.byte_width() == 1 {
                format!("'{d}'")
            } else {
                format!("'{d}' (or big-endian '>{}')", &d[1..])
            }
        }
    }
}

/// The bits of a signed sub-byte integer type (`s4`: 4), whose int8 arrays hold values rather than
/// bits; `None` for every other type.
pub fn signed_sub_byte(t: PrimitiveType) -> Option<u32> {
    (t.is_integer() && t.bits() < 8 && t.name().starts_with('s')).then(|| t.bits())
}

/// Whether an array of `dtype` holding elements of `t` holds them as values to be narrowed to their
/// bits ([`narrow_values`]): an int8 array of a signed sub-byte type. Returns the type's bits.
pub fn carries_values(dtype: &DType, t: PrimitiveType) -> Option<u32> {
    let DType::Plain(ts) = dtype else {
        return None;
    };
    signed_sub_byte(t).filter(|_| ts.type_char() == TypeChar::Int && ts.size_field() == 1)
}

/// Narrows bytes holding values of a `bits`-bit two's complement integer (each an `i8` from
/// `-2^(bits-1)` to `2^(bits-1) - 1`) to those values' bits, low, the rest zero (-1 in 4 bits: `0x0f`).
/// Law: on success, [`widen_values`] gives `data` back; a byte outside the range leaves `data` as it
/// was and is returned with its index (the first), never wrapped.
pub fn narrow_values(data: &mut [u8], bits: u32) -> Result<(), (usize, i8)> {
    let (lo, hi) = (-(1i16 << (bits - 1)), (1i16 << (bits - 1)) - 1);
    if let Some(at) = data
        .iter()
        .position(|&b| !(lo..=hi).contains(&i16::from(b as i8)))
    {
        return Err((at, data[at] as i8));
    }
    let mask = ((1u16 << bits) - 1) as u8;
    data.iter_mut().for_each(|b| *b &= mask);
    Ok(())
}

/// Sign-extends each byte's low `bits` bits into the whole byte (`0x0f` in 4 bits: -1, `0xff`).
/// Law: inverts [`narrow_values`] on bytes whose bits above `bits` are zero.
pub fn widen_values(data: &mut [u8], bits: u32) {
    let shift = 8 - bits;
    data.iter_mut()
        .for_each(|b| *b = (((*b << shift) as i8) >> shift) as u8);
}

/// Reverses each run of `unit` bytes of `data` (nothing when `unit` is 0 or 1).
pub fn swap_bytes(data: &mut [u8], unit: usize) {
    if unit > 1 {
        data.chunks_exact_mut(unit).for_each(|c| c.reverse());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn unit(descr: &str, t: PrimitiveType) -> Result<usize, String> {
        byte_swap_unit(&DType::Plain(descr.parse().unwrap()), t)
    }

    #[test]
    fn each_written_dtype_reads_back_as_is() {
        use PrimitiveType::*;
        for t in [
            Pred, S8, S16, S32, S64, U8, U16, U32, U64, F16, Bf16, F32, F64, C64, C128, S4, S2, S1,
            U4, U2, U1, F4E2m1fn, F6E2m3fn, F6E3m2fn,
        ] {
            assert_eq!(unit(descr(t).unwrap(), t), Ok(0), "{t}");
        }
    }

    #[test]
    fn kind_width_and_byte_order_are_checked() {
        use PrimitiveType::*;
        assert_eq!(unit(">f4", F32), Ok(4));
        assert_eq!(unit(">c8", C64), Ok(4));
        assert_eq!(unit(">u2", Bf16), Ok(2));
        assert_eq!(unit("<V2", Bf16), Ok(0));
        assert_eq!(unit("|V2", Bf16), Ok(0));
        for (d, t) in [
            ("<i4", F32),
            ("<u4", F32),
            ("|S4", F32),
            ("<U1", F32),
            ("<f8", F32),
            ("<f2", Bf16),
            ("|u1", Pred),
            ("<i4", U32),
            (">V2", Bf16),
            ("|V4", F32),
        ] {
            let e = unit(d, t).unwrap_err();
            assert!(e.contains(t.to_string().as_str()), "{d} {t}: {e}");
        }
        assert!(unit("<f2", Bf16).unwrap_err().contains("uint16"));
        assert_eq!(unit("<V1", F8E4m3fn), Ok(0));
        assert_eq!(unit("|u1", F8E4m3fn), Ok(0));
        assert!(unit("<f2", F8E4m3fn).unwrap_err().contains("ml_dtypes"));
        assert_eq!(unit("|u1", S4), Ok(0));
        assert_eq!(unit("|i1", U4), Ok(0));
        assert_eq!(unit("|V1", F4E2m1fn), Ok(0));
        assert!(unit("<i2", S4).unwrap_err().contains("int8"));
        assert!(unit("|b1", U4).unwrap_err().contains("uint8"));
        assert!(unit("|u1", Token).unwrap_err().contains(".bin"));
    }

    #[test]
    fn every_type_takes_only_dtypes_of_its_width_and_kind() {
        // Every element type against every dtype numpy can name in a header (of these sizes).
        for &t in PrimitiveType::ALL {
            for order in ["<", ">", "|"] {
                for kind in ["b", "i", "u", "f", "c", "V", "S", "U", "m8[s]", "M8[s]"] {
                    for size in ["1", "2", "4", "8", "16"] {
                        let d = match kind.split_once('8') {
                            Some((k, units)) if size == "8" => format!("{order}{k}8{units}"),
                            Some(_) => continue,
                            None => format!("{order}{kind}{size}"),
                        };
                        let Ok(ts) = d.parse::<npyz::TypeStr>() else {
                            continue; // not a valid dtype (e.g. '|f4')
                        };
                        let Ok(swap) = byte_swap_unit(&DType::Plain(ts.clone()), t) else {
                            continue;
                        };
                        assert_eq!(ts.num_bytes(), Some(t.byte_width() as usize), "{t} {d}");
                        let own = descr(t).unwrap_or_else(|| panic!("{t} took {d}"));
                        let stand_in = matches!(ts.type_char(), TypeChar::RawData)
                            || (ts.type_char() == TypeChar::Uint && own.ends_with("u2"));
                        assert!(
                            own[1..2] == d[1..2]
                                || stand_in
                                || (t.bits() == 8 && t.is_float())
                                || t.bits() < 8,
                            "{t} took {d}"
                        );
                        let big = ts.endianness() == Endianness::Big && t.byte_width() > 1;
                        assert_eq!(swap != 0, big, "{t} {d}");
                    }
                }
            }
        }
    }

    /// Narrowing, against the law value by value: every byte of a signed sub-byte type's range (and
    /// only those) narrows to its low bits, and widening gives it back; a byte out of range fails at
    /// its index and changes nothing.
    #[test]
    fn narrowing_keeps_every_value_and_refuses_the_rest() {
        for bits in 1..8u32 {
            let (lo, hi) = (-(1i32 << (bits - 1)), (1i32 << (bits - 1)) - 1);
            for b in 0..=255u8 {
                let v = i32::from(b as i8);
                let mut d = [0u8, b, 0u8];
                match narrow_values(&mut d, bits) {
                    Ok(()) => {
                        assert!((lo..=hi).contains(&v), "{bits} bits took {v}");
                        assert_eq!(u32::from(d[1]), (v as u32) & ((1 << bits) - 1));
                        widen_values(&mut d, bits);
                        assert_eq!(d, [0, b, 0]);
                    }
                    Err(e) => {
                        assert!(!(lo..=hi).contains(&v), "{bits} bits refused {v}");
                        assert_eq!((e, d), ((1, b as i8), [0, b, 0]));
                    }
                }
            }
        }
        assert_eq!(signed_sub_byte(PrimitiveType::S4), Some(4));
        assert_eq!(signed_sub_byte(PrimitiveType::U4), None);
        assert_eq!(signed_sub_byte(PrimitiveType::S8), None);
    }

    #[test]
    fn swapping_reverses_each_unit() {
        let mut v = vec![1, 2, 3, 4, 5, 6, 7, 8];
        swap_bytes(&mut v, 4);
        assert_eq!(v, [4, 3, 2, 1, 8, 7, 6, 5]);
        swap_bytes(&mut v, 0);
        assert_eq!(v, [4, 3, 2, 1, 8, 7, 6, 5]);
    }
}
