//! Combining partial values: an accumulator per element type, and the float conversions it needs.
//!
//! Floats accumulate in their own width, except bf16 and f16, which accumulate in f32 and are rounded to
//! nearest-even once at the end. Integers accumulate in 64 bits, wrapping, and are truncated to their
//! width at the end (so sums and products wrap exactly as in the element type); `avg` divides the sum by
//! the number of contributions (truncating for integers).

use axe_shard::ReduceOp;
use axe_xla::PrimitiveType;

use crate::exec_error::{ExecError, ExecResult};

/// How an element type is combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Elem {
    F32,
    F64,
    Bf16,
    F16,
    /// Signed integers of this many bytes.
    Int(usize),
    /// Unsigned integers of this many bytes.
    Uint(usize),
}

impl Elem {
    /// The reducible kind of `t`, or an error naming why it cannot be reduced.
    pub(crate) fn of(t: PrimitiveType) -> ExecResult<Elem> {
        use PrimitiveType as P;
        Ok(match t {
            P::F32 => Elem::F32,
            P::F64 => Elem::F64,
            P::Bf16 => Elem::Bf16,
            P::F16 => Elem::F16,
            P::S8 => Elem::Int(1),
            P::S16 => Elem::Int(2),
            P::S32 => Elem::Int(4),
            P::S64 => Elem::Int(8),
            P::U8 => Elem::Uint(1),
            P::U16 => Elem::Uint(2),
            P::U32 => Elem::Uint(4),
            P::U64 => Elem::Uint(8),
            other => {
                return Err(ExecError::Input(format!(
                    "partial values of {} cannot be reduced (supported: f32, f64, bf16, f16, s8-s64, u8-u64)",
                    other.name()
                )))
            }
        })
    }

    /// Bytes per element.
    pub(crate) fn bytes(self) -> usize {
        match self {
            Elem::F32 => 4,
            Elem::F64 => 8,
            Elem::Bf16 | Elem::F16 => 2,
            Elem::Int(b) | Elem::Uint(b) => b,
        }
    }
}

/// bf16 bits to f32 (exact).
pub fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// f32 to bf16 bits, rounded to nearest-even (NaN stays NaN).
pub fn f32_to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return ((b >> 16) as u16) | 0x40;
    }
    let round = 0x7fff + ((b >> 16) & 1);
    (b.wrapping_add(round) >> 16) as u16
}

/// f16 bits to f32 (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let e = u32::from((h >> 10) & 0x1f);
    let m = u32::from(h & 0x3ff);
    match e {
        0 => sign * (m as f32) * f32::from_bits(0x3380_0000), // m × 2^-24
        31 => f32::from_bits((u32::from(h & 0x8000) << 16) | 0x7f80_0000 | (m << 13)),
        _ => f32::from_bits((u32::from(h & 0x8000) << 16) | ((e + 112) << 23) | (m << 13)),
    }
}

/// f32 to f16 bits, rounded to nearest-even (overflow to infinity, NaN stays NaN).
pub fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let a = b & 0x7fff_ffff;
    if a >= 0x7f80_0000 {
        return sign | 0x7c00 | if a > 0x7f80_0000 { 0x200 } else { 0 };
    }
    if a >= 0x477f_f000 {
        return sign | 0x7c00; // 65520 and above round to infinity
    }
    if a < 0x3880_0000 {
        // Below the smallest normal 2^-14: a multiple of 2^-24, exactly scaled, rounded half to even.
        let v = f32::from_bits(a) * 16_777_216.0;
        return sign | v.round_ties_even() as u16;
    }
    let e = (a >> 23) - 112;
    let m = a & 0x7f_ffff;
    let h = (e << 10) | (m >> 13);
    let rest = m & 0x1fff;
    let h = if rest > 0x1000 || (rest == 0x1000 && h & 1 == 1) {
        h + 1
    } else {
        h
    };
    sign | h as u16
}

/// Whether contributions of `elem` under `op` combine in the destination's own bytes: the type is its
/// own accumulator (f32, f64) and nothing is divided at the end.
pub(crate) fn in_place(elem: Elem, op: ReduceOp) -> bool {
    matches!(elem, Elem::F32 | Elem::F64) && op != ReduceOp::Avg
}

/// `dst[i] = op(dst[i], src[i])` over elements of an [`in_place`] type, both contiguous, equally long.
pub(crate) fn combine_in_place(elem: Elem, op: ReduceOp, dst: &mut [u8], src: &[u8]) {
    fn run<T: Copy>(
        dst: &mut [u8],
        src: &[u8],
        read: impl Fn(&[u8]) -> T,
        write: impl Fn(T, &mut [u8]),
        f: impl Fn(T, T) -> T,
    ) {
        let w = std::mem::size_of::<T>();
        for (d, s) in dst.chunks_exact_mut(w).zip(src.chunks_exact(w)) {
            let v = f(read(d), read(s));
            write(v, d);
        }
    }
    macro_rules! float {
        ($t:ty) => {{
            let read = |c: &[u8]| <$t>::from_le_bytes(c.try_into().unwrap_or_default());
            let write = |v: $t, d: &mut [u8]| d.copy_from_slice(&v.to_le_bytes());
            match op {
                ReduceOp::Sum | ReduceOp::Avg => run(dst, src, read, write, |a, x| a + x),
                ReduceOp::Product => run(dst, src, read, write, |a, x| a * x),
                ReduceOp::Max => run(dst, src, read, write, |a, x| {
                    nan_max(a, x, <$t>::is_nan, true)
                }),
                ReduceOp::Min => run(dst, src, read, write, |a, x| {
                    nan_max(a, x, <$t>::is_nan, false)
                }),
            }
        }};
    }
    match elem {
        Elem::F32 => float!(f32),
        Elem::F64 => float!(f64),
        _ => {}
    }
}

/// Fills `dst` (whole elements of `elem`) with the identity of `op`.
pub(crate) fn identity_into(elem: Elem, op: ReduceOp, dst: &mut [u8]) {
    let mut one = vec![0u8; elem.bytes()];
    Acc::new(elem, op, 1).finish(0, &mut one);
    for d in dst.chunks_exact_mut(one.len()) {
        d.copy_from_slice(&one);
    }
}

/// The values being combined, one per destination element, row-major.
#[derive(Debug)]
enum Values {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I64(Vec<i64>),
    U64(Vec<u64>),
}

/// Accumulates contributions for `len` elements of one type under one op.
#[derive(Debug)]
pub(crate) struct Acc {
    elem: Elem,
    op: ReduceOp,
    values: Values,
    /// Per element, how many contributions it has had (kept for `avg` only).
    counts: Vec<u32>,
}

/// `acc[i] = f(acc[i], xs[i])`, one loop per `f`.
fn fold<T: Copy>(acc: &mut [T], xs: impl Iterator<Item = T>, f: impl Fn(T, T) -> T) {
    for (a, x) in acc.iter_mut().zip(xs) {
        *a = f(*a, x);
    }
}

/// [`fold`] for floats under `op`; `max` and `min` propagate NaN.
fn fold_float<T>(acc: &mut [T], xs: impl Iterator<Item = T>, op: ReduceOp, nan: fn(T) -> bool)
where
    T: Copy + PartialOrd + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    match op {
        ReduceOp::Sum | ReduceOp::Avg => fold(acc, xs, |a, x| a + x),
        ReduceOp::Product => fold(acc, xs, |a, x| a * x),
        ReduceOp::Max => fold(acc, xs, |a, x| nan_max(a, x, nan, true)),
        ReduceOp::Min => fold(acc, xs, |a, x| nan_max(a, x, nan, false)),
    }
}

fn nan_max<T: PartialOrd + Copy>(a: T, b: T, nan: fn(T) -> bool, take_larger: bool) -> T {
    if nan(a) {
        a
    } else if nan(b) || (take_larger && b > a) || (!take_larger && b < a) {
        b
    } else {
        a
    }
}

impl Acc {
    /// `len` elements, each at the identity of `op`.
    pub(crate) fn new(elem: Elem, op: ReduceOp, len: usize) -> Acc {
        let values = match elem {
            Elem::F32 | Elem::Bf16 | Elem::F16 => Values::F32(vec![
                match op {
                    ReduceOp::Sum | ReduceOp::Avg => 0.0,
                    ReduceOp::Product => 1.0,
                    ReduceOp::Max => f32::NEG_INFINITY,
                    ReduceOp::Min => f32::INFINITY,
                };
                len
            ]),
            Elem::F64 => Values::F64(vec![
                match op {
                    ReduceOp::Sum | ReduceOp::Avg => 0.0,
                    ReduceOp::Product => 1.0,
                    ReduceOp::Max => f64::NEG_INFINITY,
                    ReduceOp::Min => f64::INFINITY,
                };
                len
            ]),
            Elem::Int(_) => Values::I64(vec![
                match op {
                    ReduceOp::Sum | ReduceOp::Avg => 0,
                    ReduceOp::Product => 1,
                    ReduceOp::Max => i64::MIN,
                    ReduceOp::Min => i64::MAX,
                };
                len
            ]),
            Elem::Uint(_) => Values::U64(vec![
                match op {
                    ReduceOp::Sum | ReduceOp::Avg | ReduceOp::Max => 0,
                    ReduceOp::Product => 1,
                    ReduceOp::Min => u64::MAX,
                };
                len
            ]),
        };
        let counts = if op == ReduceOp::Avg {
            vec![0; len]
        } else {
            Vec::new()
        };
        Acc {
            elem,
            op,
            values,
            counts,
        }
    }

    /// Combines the elements in `bytes` (of this type, contiguous) into elements `at..` of the
    /// accumulator.
    pub(crate) fn combine(&mut self, at: usize, bytes: &[u8]) {
        let w = self.elem.bytes();
        let n = bytes.len() / w;
        if !self.counts.is_empty() {
            for c in &mut self.counts[at..at + n] {
                *c = c.saturating_add(1);
            }
        }
        let op = self.op;
        let chunks = bytes.chunks_exact(w);
        match (&mut self.values, self.elem) {
            (Values::F32(v), Elem::Bf16) => {
                let xs = chunks.map(|c| bf16_to_f32(u16::from_le_bytes([c[0], c[1]])));
                fold_float(&mut v[at..at + n], xs, op, f32::is_nan);
            }
            (Values::F32(v), Elem::F16) => {
                let xs = chunks.map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])));
                fold_float(&mut v[at..at + n], xs, op, f32::is_nan);
            }
            (Values::F32(v), _) => {
                let xs = chunks.map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
                fold_float(&mut v[at..at + n], xs, op, f32::is_nan);
            }
            (Values::F64(v), _) => {
                let xs = bytes
                    .chunks_exact(8)
                    .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]));
                fold_float(&mut v[at..at + n], xs, op, f64::is_nan);
            }
            (Values::I64(v), _) => {
                let xs = chunks.map(read_int);
                let v = &mut v[at..at + n];
                match op {
                    ReduceOp::Sum | ReduceOp::Avg => fold(v, xs, i64::wrapping_add),
                    ReduceOp::Product => fold(v, xs, i64::wrapping_mul),
                    ReduceOp::Max => fold(v, xs, i64::max),
                    ReduceOp::Min => fold(v, xs, i64::min),
                }
            }
            (Values::U64(v), _) => {
                let xs = chunks.map(read_uint);
                let v = &mut v[at..at + n];
                match op {
                    ReduceOp::Sum | ReduceOp::Avg => fold(v, xs, u64::wrapping_add),
                    ReduceOp::Product => fold(v, xs, u64::wrapping_mul),
                    ReduceOp::Max => fold(v, xs, u64::max),
                    ReduceOp::Min => fold(v, xs, u64::min),
                }
            }
        }
    }

    /// Writes elements `at..at + out.len() / width` in the element type into `out` (`avg` divided by
    /// each element's count).
    pub(crate) fn finish(&self, at: usize, out: &mut [u8]) {
        let w = self.elem.bytes();
        let n = out.len() / w;
        let count = |i: usize| self.counts.get(at + i).copied().unwrap_or(1).max(1);
        let avg = self.op == ReduceOp::Avg;
        // The common cases, one tight loop each.
        match (&self.values, self.elem, avg) {
            (Values::F32(v), Elem::F32, false) => {
                for (o, x) in out.chunks_exact_mut(4).zip(&v[at..at + n]) {
                    o.copy_from_slice(&x.to_le_bytes());
                }
                return;
            }
            (Values::F32(v), Elem::Bf16, false) => {
                for (o, x) in out.chunks_exact_mut(2).zip(&v[at..at + n]) {
                    o.copy_from_slice(&f32_to_bf16(*x).to_le_bytes());
                }
                return;
            }
            (Values::F64(v), _, false) => {
                for (o, x) in out.chunks_exact_mut(8).zip(&v[at..at + n]) {
                    o.copy_from_slice(&x.to_le_bytes());
                }
                return;
            }
            _ => {}
        }
        for (i, o) in out.chunks_exact_mut(w).enumerate().take(n) {
            match &self.values {
                Values::F32(v) => {
                    let x = if avg {
                        v[at + i] / count(i) as f32
                    } else {
                        v[at + i]
                    };
                    match self.elem {
                        Elem::Bf16 => o.copy_from_slice(&f32_to_bf16(x).to_le_bytes()),
                        Elem::F16 => o.copy_from_slice(&f32_to_f16(x).to_le_bytes()),
                        _ => o.copy_from_slice(&x.to_le_bytes()),
                    }
                }
                Values::F64(v) => {
                    let x = if avg {
                        v[at + i] / f64::from(count(i))
                    } else {
                        v[at + i]
                    };
                    o.copy_from_slice(&x.to_le_bytes());
                }
                Values::I64(v) => {
                    let x = if avg {
                        v[at + i] / i64::from(count(i))
                    } else {
                        v[at + i]
                    };
                    o.copy_from_slice(&x.to_le_bytes()[..w]);
                }
                Values::U64(v) => {
                    let x = if avg {
                        v[at + i] / u64::from(count(i))
                    } else {
                        v[at + i]
                    };
                    o.copy_from_slice(&x.to_le_bytes()[..w]);
                }
            }
        }
    }
}

/// A little-endian signed integer of 1 to 8 bytes, sign-extended.
fn read_int(c: &[u8]) -> i64 {
    let mut b = [0u8; 8];
    b[..c.len()].copy_from_slice(c);
    let shift = 64 - 8 * c.len() as u32;
    (i64::from_le_bytes(b) << shift) >> shift
}

/// A little-endian unsigned integer of 1 to 8 bytes.
fn read_uint(c: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..c.len()].copy_from_slice(c);
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounds_to_nearest_even() {
        // 257 lies halfway between 256 and 258: the even mantissa (256) wins; 259 rounds up to 260.
        assert_eq!(bf16_to_f32(f32_to_bf16(257.0)), 256.0);
        assert_eq!(bf16_to_f32(f32_to_bf16(259.0)), 260.0);
        assert_eq!(bf16_to_f32(f32_to_bf16(257.5)), 258.0);
        assert!(bf16_to_f32(f32_to_bf16(f32::NAN)).is_nan());
        for h in 0..=u16::MAX {
            let x = bf16_to_f32(h);
            if !x.is_nan() {
                assert_eq!(f32_to_bf16(x), h, "bf16 {h:#x} round-trips");
            }
        }
    }

    #[test]
    fn f16_converts_exactly_and_rounds_to_nearest_even() {
        for h in 0..=u16::MAX {
            let x = f16_to_f32(h);
            if !x.is_nan() {
                assert_eq!(f32_to_f16(x), h, "f16 {h:#x} round-trips");
            }
        }
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        // 2049 is halfway between 2048 and 2050 in f16: even wins; 65520 overflows to infinity.
        assert_eq!(f16_to_f32(f32_to_f16(2049.0)), 2048.0);
        assert_eq!(f16_to_f32(f32_to_f16(2051.0)), 2052.0);
        assert_eq!(f32_to_f16(65520.0), 0x7c00);
        assert_eq!(f32_to_f16(65519.0), 0x7bff);
        assert_eq!(
            f32_to_f16(3.0 * 2f32.powi(-26)),
            0x0001,
            "a quarter ulp below the tie rounds"
        );
    }

    fn run(t: PrimitiveType, op: ReduceOp, parts: &[&[u8]]) -> Vec<u8> {
        let e = Elem::of(t).expect("reducible");
        let n = parts[0].len() / e.bytes();
        let mut acc = Acc::new(e, op, n);
        for p in parts {
            acc.combine(0, p);
        }
        let mut out = vec![0u8; parts[0].len()];
        acc.finish(0, &mut out);
        out
    }

    #[test]
    fn every_op_on_each_type() {
        let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let a = f(&[1.0, -2.0, 3.0]);
        let b = f(&[4.0, 5.0, -6.0]);
        assert_eq!(
            run(PrimitiveType::F32, ReduceOp::Sum, &[&a, &b]),
            f(&[5.0, 3.0, -3.0])
        );
        assert_eq!(
            run(PrimitiveType::F32, ReduceOp::Avg, &[&a, &b]),
            f(&[2.5, 1.5, -1.5])
        );
        assert_eq!(
            run(PrimitiveType::F32, ReduceOp::Max, &[&a, &b]),
            f(&[4.0, 5.0, 3.0])
        );
        assert_eq!(
            run(PrimitiveType::F32, ReduceOp::Min, &[&a, &b]),
            f(&[1.0, -2.0, -6.0])
        );
        assert_eq!(
            run(PrimitiveType::F32, ReduceOp::Product, &[&a, &b]),
            f(&[4.0, -10.0, -18.0])
        );
        let s = |v: &[i8]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        assert_eq!(
            run(
                PrimitiveType::S8,
                ReduceOp::Sum,
                &[&s(&[100, -7]), &s(&[100, -3])]
            ),
            s(&[-56, -10]),
            "s8 sums wrap"
        );
        assert_eq!(
            run(
                PrimitiveType::S8,
                ReduceOp::Avg,
                &[&s(&[100, -7]), &s(&[100, -4])]
            ),
            s(&[100, -5]),
            "s8 averages are exact past the width, truncated"
        );
        let b16 = |v: &[f32]| {
            v.iter()
                .flat_map(|x| f32_to_bf16(*x).to_le_bytes())
                .collect::<Vec<u8>>()
        };
        // 256 + 0.5 + 0.5 is 257 in f32, which rounds to 256 (even) only at the end; summing in bf16
        // would round each step.
        assert_eq!(
            run(
                PrimitiveType::Bf16,
                ReduceOp::Sum,
                &[&b16(&[256.0]), &b16(&[0.5]), &b16(&[0.5]), &b16(&[1.0])]
            ),
            b16(&[258.0])
        );
        assert!(Elem::of(PrimitiveType::Pred).is_err());
        let u = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        assert_eq!(
            run(
                PrimitiveType::U32,
                ReduceOp::Min,
                &[&u(&[7, 0]), &u(&[u32::MAX, 3])]
            ),
            u(&[7, 0])
        );
        let d = |v: &[f64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        assert_eq!(
            run(
                PrimitiveType::F64,
                ReduceOp::Max,
                &[&d(&[f64::NAN]), &d(&[1.0])]
            )[..8],
            d(&[f64::NAN])[..8],
            "max propagates NaN"
        );
    }
}
