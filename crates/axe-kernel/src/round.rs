//! Rounding to the 16-bit floats, once, to nearest even.
//!
//! **Law**: for every f64 `x` and every i64 `i`, `f64_to_bf16(x)` is the bfloat16 nearest `x`, a tie
//! going to the even significand, and likewise `i64_to_bf16(i)`, `f64_to_f16(x)`, `i64_to_f16(i)` — one
//! rounding of the exact value, never through f32 (f64 → f32 → bf16 rounds twice, and an f64 just
//! above a bf16 midpoint lands on it in f32 and then goes to even, the wrong way). Values at or past
//! the midpoint between the largest finite value and the next power of two round to infinity; below
//! half the smallest subnormal, to a zero of the value's sign. A NaN gives the canonical NaN `0x7fff`,
//! as PTX's `cvt` does.

/// A binary floating-point format of at most 16 bits: `frac` stored fraction bits, `exp` exponent bits.
#[derive(Debug, Clone, Copy)]
struct Format {
    frac: u32,
    exp: u32,
}

const BF16: Format = Format { frac: 7, exp: 8 };
const F16: Format = Format { frac: 10, exp: 5 };

/// The canonical NaN of both formats (PTX's `cvt` gives it for every NaN).
pub const NAN16: u16 = 0x7fff;

/// The bfloat16 nearest `x` (ties to even), as bits.
pub fn f64_to_bf16(x: f64) -> u16 {
    from_f64(BF16, x)
}

/// The IEEE binary16 nearest `x` (ties to even), as bits.
pub fn f64_to_f16(x: f64) -> u16 {
    from_f64(F16, x)
}

/// The bfloat16 nearest `i` (ties to even), as bits.
pub fn i64_to_bf16(i: i64) -> u16 {
    round(BF16, i < 0, i.unsigned_abs(), 0)
}

/// The IEEE binary16 nearest `i` (ties to even), as bits.
pub fn i64_to_f16(i: i64) -> u16 {
    round(F16, i < 0, i.unsigned_abs(), 0)
}

fn from_f64(f: Format, x: f64) -> u16 {
    let bits = x.to_bits();
    let neg = bits >> 63 == 1;
    let field = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1 << 52) - 1);
    match field {
        0x7ff if frac != 0 => NAN16,
        0x7ff => sign(neg) | inf(f),
        0 => round(f, neg, frac, -1074),
        _ => round(f, neg, frac | 1 << 52, field - 1075),
    }
}

fn sign(neg: bool) -> u16 {
    if neg {
        0x8000
    } else {
        0
    }
}

fn inf(f: Format) -> u16 {
    (((1u32 << f.exp) - 1) << f.frac) as u16
}

/// `±m·2^e` rounded once to `f`.
fn round(f: Format, neg: bool, m: u64, e: i32) -> u16 {
    if m == 0 {
        return sign(neg);
    }
    let bias = (1i32 << (f.exp - 1)) - 1;
    let emin = 1 - bias;
    let frac = f.frac as i32;
    // The value lies in [2^top, 2^(top+1)); its quantum in `f` is 2^q (fixed below the normal range).
    let top = 63 - m.leading_zeros() as i32 + e;
    let q = top.max(emin) - frac;
    let shift = i64::from(q) - i64::from(e);
    // shift ≥ -frac: the value's top bit is at most `frac` places above the quantum.
    let mut r: u64 = if shift <= 0 {
        m << -shift // exact: fewer significant bits than `f` holds
    } else if shift > 64 {
        0 // below half a quantum: m < 2^64 ≤ 2^(shift-1)
    } else {
        let s = shift as u32;
        let r = if s == 64 { 0 } else { m >> s };
        let rest = u128::from(m) & ((1u128 << s) - 1);
        let half = 1u128 << (s - 1);
        if rest > half || (rest == half && r & 1 == 1) {
            r + 1
        } else {
            r
        }
    };
    if r == 0 {
        return sign(neg);
    }
    // r ≤ 2^(frac+1), equal only when rounding carried into the next binade.
    let mut q = i64::from(q);
    if r == 1 << (frac + 1) {
        r >>= 1;
        q += 1;
    }
    if r < 1 << frac {
        return sign(neg) | r as u16; // subnormal (q is emin - frac)
    }
    let biased = q + i64::from(frac) + i64::from(bias);
    if biased >= (1 << f.exp) - 1 {
        return sign(neg) | inf(f);
    }
    sign(neg) | ((biased as u16) << f.frac) | (r - (1 << frac)) as u16
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn exact_values_and_edges() {
        assert_eq!(f64_to_bf16(1.0), 0x3f80);
        assert_eq!(f64_to_bf16(-2.0), 0xc000);
        assert_eq!(f64_to_bf16(0.0), 0);
        assert_eq!(f64_to_bf16(-0.0), 0x8000);
        assert_eq!(f64_to_bf16(f64::INFINITY), 0x7f80);
        assert_eq!(f64_to_bf16(f64::NEG_INFINITY), 0xff80);
        assert_eq!(f64_to_bf16(f64::NAN), NAN16);
        assert_eq!(f64_to_bf16(1e300), 0x7f80);
        assert_eq!(f64_to_bf16(1e-300), 0);
        assert_eq!(f64_to_bf16(-1e-300), 0x8000);
        assert_eq!(f64_to_f16(65504.0), 0x7bff);
        assert_eq!(f64_to_f16(65519.99), 0x7bff);
        assert_eq!(f64_to_f16(65520.0), 0x7c00);
        assert_eq!(f64_to_f16(2f64.powi(-24)), 1);
        assert_eq!(f64_to_f16(2f64.powi(-25)), 0); // a tie, to even (zero)
        assert_eq!(f64_to_f16(2f64.powi(-25) * 1.5), 1);
        assert_eq!(i64_to_bf16(i64::MIN), 0xdf00);
        assert_eq!(i64_to_bf16(i64::MAX), 0x5f00);
        assert_eq!(i64_to_f16(65520), 0x7c00);
        assert_eq!(i64_to_f16(-7), 0xc700);
        assert_eq!(i64_to_bf16(0), 0);
    }

    #[test]
    fn every_f32_agrees_with_a_single_rounding_through_f32() {
        // An f32 source is exact in f64, so rounding it is one rounding; half's f32 → bf16 conversion
        // rounds to nearest even once (its NaNs aside).
        for b in (0..=u32::MAX).step_by(4099) {
            let x = f32::from_bits(b);
            if x.is_nan() {
                continue;
            }
            assert_eq!(
                f64_to_bf16(f64::from(x)),
                half::bf16::from_f32(x).to_bits(),
                "{x:e}"
            );
        }
    }
}
