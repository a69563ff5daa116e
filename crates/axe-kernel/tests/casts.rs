#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Casts round once: the interpreter's `cast` to bf16 and f16 against a reference found by search
//! (the two neighbours of the value and the exact midpoint between them), on values at and next to
//! midpoints where rounding through f32 first goes the wrong way; float → s32 truncates and saturates,
//! NaN giving 0, as `cvt.rzi.s32` does; the emitted CUDA rounds once on both targets.

use std::path::Path;

use axe_kernel::nvrtc::{compile_here, find_nvrtc};
use axe_kernel::{emit_cuda, lower, run, DType, Op, RunLimits, Scope, Space, Target};

mod common;
use common::{builder, rm};

/// A 16-bit float format: its positive bit patterns up to infinity, and each one's value (infinity's
/// taken as the next power of two, so the midpoint past the largest finite value is where rounding
/// overflows, and infinity's pattern is even).
struct Fmt {
    inf: u16,
    value: fn(u16) -> f64,
}

const BF16: Fmt = Fmt {
    inf: 0x7f80,
    value: |b| {
        if b == 0x7f80 {
            2f64.powi(128)
        } else {
            half::bf16::from_bits(b).to_f64()
        }
    },
};

const F16: Fmt = Fmt {
    inf: 0x7c00,
    value: |b| {
        if b == 0x7c00 {
            2f64.powi(16)
        } else {
            half::f16::from_bits(b).to_f64()
        }
    },
};

/// The largest positive pattern whose value is at most `le(value)` holds (values grow with patterns).
fn below(f: &Fmt, le: impl Fn(f64) -> bool) -> u16 {
    let (mut lo, mut hi) = (0u16, f.inf); // le(value(lo)) holds; answer in lo..=hi
    if le((f.value)(hi)) {
        return hi;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if le((f.value)(mid)) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// `|x|` rounded once to nearest even in `f`, found by search: the neighbours `lo ≤ |x| < hi` and their
/// midpoint (exact in f64: one bit more than the format's significand).
fn reference(f: &Fmt, x: f64) -> u16 {
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    if x.is_nan() {
        return 0x7fff;
    }
    let a = x.abs();
    let lo = below(f, |v| v <= a);
    if lo == f.inf {
        return sign | f.inf;
    }
    let mid = ((f.value)(lo) + (f.value)(lo + 1)) / 2.0;
    let up = a > mid || (a == mid && lo & 1 == 1);
    sign | if up { lo + 1 } else { lo }
}

/// The same for an integer, compared exactly in i128 (every value here of magnitude 1 or more is an
/// integer, and so is each midpoint between two values past the format's last odd integer).
fn reference_int(f: &Fmt, i: i64) -> u16 {
    let sign = if i < 0 { 0x8000 } else { 0 };
    let a = i128::from(i).abs();
    let lo = below(f, |v| v <= a as f64 && (v as i128) <= a);
    if lo == f.inf || (f.value)(lo) as i128 == a {
        return sign | lo;
    }
    let twice_mid = (f.value)(lo) as i128 + (f.value)(lo + 1) as i128;
    let up = 2 * a > twice_mid || (2 * a == twice_mid && lo & 1 == 1);
    sign | if up { lo + 1 } else { lo }
}

/// A small deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// f64 values at, just above and just below midpoints of `f` (where rounding through f32 first lands
/// on the midpoint and goes to even), plus random bit patterns of every exponent.
fn hard_f64s(f: &Fmt, n: usize, seed: u64) -> Vec<f64> {
    let mut r = Rng(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let b = (r.next() % u64::from(f.inf)) as u16;
        let mid = ((f.value)(b) + (f.value)(b + 1)) / 2.0;
        let neg = if r.next() & 1 == 1 { -1.0 } else { 1.0 };
        let ulps = (r.next() % 4) as i64 - 2; // -2..=1 f64 ulps from the midpoint, and below
        let x = f64::from_bits((mid.to_bits() as i64 + ulps) as u64);
        out.push(neg * x);
        out.push(f64::from_bits(r.next()));
    }
    out.truncate(n);
    out
}

/// Runs `dst = cast(src)` over `n` elements at kernel scope on the interpreter.
fn cast(from: DType, to: DType, src: Vec<u8>, n: u64) -> Vec<u8> {
    let mut k = builder("cast", 2, 128);
    let a = k.buffer("a", Space::Global, from, n).unwrap();
    let b = k.buffer("b", Space::Global, to, n).unwrap();
    let ta = k.tensor("a", a, &[n], rm(&[n])).unwrap();
    let tb = k.tensor("b", b, &[n], rm(&[n])).unwrap();
    k.call(Scope::kernel(), Op::Cast { dst: tb, src: ta })
        .unwrap();
    let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
    let zeros = vec![0; (n * u64::from(to.bytes())) as usize];
    run(&p, vec![src, zeros], RunLimits::default())
        .unwrap()
        .remove(1)
}

fn u16s(b: &[u8]) -> Vec<u16> {
    b.chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

#[test]
fn the_reference_rounds_the_known_cases() {
    // 1 + 2^-8 is the midpoint of 1 and 1 + 2^-7 in bf16: a tie, to the even 1.
    assert_eq!(reference(&BF16, 1.0 + 2f64.powi(-8)), 0x3f80);
    assert_eq!(
        reference(&BF16, 1.0 + 2f64.powi(-8) + 2f64.powi(-40)),
        0x3f81
    );
    assert_eq!(reference(&BF16, -3.0e38), 0xff62);
    assert_eq!(reference(&BF16, 3.4e38), 0x7f80);
    assert_eq!(reference(&F16, 65519.0), 0x7bff);
    assert_eq!(reference(&F16, 65520.0), 0x7c00);
    assert_eq!(reference(&F16, 1e-10), 0);
    assert_eq!(reference_int(&BF16, 257), 0x4380); // a tie between 256 and 258: to 256
    assert_eq!(reference_int(&BF16, 259), 0x4382); // a tie between 258 and 260: to 260
    assert_eq!(reference_int(&F16, 2049), 0x6800);
}

#[test]
fn f64_to_bf16_and_f16_round_once_at_and_beside_midpoints() {
    // Hand-picked: just above a tie, f32 has the tie itself (2^-40 is below its last bit), and
    // rounding to even from there goes down.
    let picked = [
        1.0 + 2f64.powi(-8) + 2f64.powi(-40),
        -(1.0 + 2f64.powi(-8) + 2f64.powi(-40)),
        3.0 * 2f64.powi(100) * (1.0 + 2f64.powi(-9) + 2f64.powi(-60)),
        1.0 + 2f64.powi(-11) + 2f64.powi(-40), // for f16
        2049.0 + 2f64.powi(-30),               // for f16: above 2048's tie with 2050
    ];
    for (fmt, to) in [(&BF16, DType::BF16), (&F16, DType::F16)] {
        let mut xs = picked.to_vec();
        xs.extend(hard_f64s(fmt, 4096 - xs.len(), 7));
        xs.extend([
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            0.0,
            -0.0,
            1e-320,
        ]);
        let n = xs.len() as u64;
        let bytes = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
        let got = u16s(&cast(DType::F64, to, bytes, n));
        for (x, g) in xs.iter().zip(got) {
            assert_eq!(g, reference(fmt, *x), "{to} of {x:e} ({:#x})", x.to_bits());
        }
    }
}

#[test]
fn s32_to_bf16_and_f16_round_once() {
    let mut r = Rng(11);
    // 2^24 + 2^16 + 1 is above the bf16 tie between 2^24 and 2^24 + 2^17; f32 rounds it to the tie.
    let mut xs: Vec<i32> = vec![(1 << 24) + (1 << 16) + 1, -((1 << 24) + (1 << 16) + 1)];
    xs.extend([i32::MAX, i32::MIN, 0, -1, 65519, 65520, 257, 259]);
    while xs.len() < 4096 {
        let v = r.next();
        // Near midpoints of large values, and anything.
        let shift = v % 31;
        let mid = ((v >> 8) as i32 | 1 << 30) >> shift;
        xs.push(mid.wrapping_add(((v >> 5) % 5) as i32 - 2));
        xs.push(v as i32);
    }
    let n = xs.len() as u64;
    let bytes: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
    for (fmt, to) in [(&BF16, DType::BF16), (&F16, DType::F16)] {
        let got = u16s(&cast(DType::S32, to, bytes.clone(), n));
        for (x, g) in xs.iter().zip(got) {
            assert_eq!(g, reference_int(fmt, i64::from(*x)), "{to} of {x}");
        }
    }
}

#[test]
fn float_to_s32_truncates_and_saturates_and_nan_gives_zero() {
    // As `cvt.rzi.s32.f64` (`__double2int_rz`, what the CUDA emission uses for both f32 and f64
    // sources): toward zero, clamped to the range, NaN 0.
    let xs: [f32; 9] = [
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        3e9,
        -3e9,
        -2.75,
        2.75,
        2147483520.0,
    ];
    let want = [
        0,
        0,
        i32::MAX,
        i32::MIN,
        i32::MAX,
        i32::MIN,
        -2,
        2,
        2147483520,
    ];
    let bytes = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
    let got = cast(DType::F32, DType::S32, bytes, xs.len() as u64);
    let got: Vec<i32> = got
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn the_rounding_functions_agree_with_the_reference_far_and_wide() {
    use axe_kernel::round::{f64_to_bf16, f64_to_f16, i64_to_bf16, i64_to_f16};
    let mut r = Rng(5);
    for x in hard_f64s(&BF16, 100_000, 1)
        .into_iter()
        .chain(hard_f64s(&F16, 100_000, 2))
    {
        assert_eq!(f64_to_bf16(x), reference(&BF16, x), "bf16 of {x:e}");
        assert_eq!(f64_to_f16(x), reference(&F16, x), "f16 of {x:e}");
    }
    for _ in 0..100_000 {
        // Integers of every width, near midpoints (few low bits set) and anything.
        let v = r.next() as i64 >> (r.next() % 63);
        let near = v & !0xff_ffff | (r.next() % 3) as i64;
        for i in [v, near, near.wrapping_neg()] {
            assert_eq!(i64_to_bf16(i), reference_int(&BF16, i), "bf16 of {i}");
            assert_eq!(i64_to_f16(i), reference_int(&F16, i), "f16 of {i}");
        }
    }
}

/// The sm_80 emission's bf16 rounding, step by step: f64 → f32 toward zero (`__double2float_rz`), the
/// last bit set when that was inexact (round to odd), then f32 → bf16 to nearest even.
fn sm80_bf16(d: f64) -> u16 {
    let mut z = d as f32;
    if z.is_finite() && f64::from(z).abs() > d.abs() {
        // Round-to-nearest went away from zero: step back one f32 toward zero.
        z = f32::from_bits(z.to_bits() - 1);
    }
    if z.is_infinite() && d.is_finite() {
        z = f32::MAX.copysign(z);
    }
    let inexact = !d.is_nan() && f64::from(z) != d;
    let u = z.to_bits() | u32::from(inexact);
    let f = f32::from_bits(u);
    if f.is_nan() {
        return 0x7fff;
    }
    half::bf16::from_f32(f).to_bits()
}

#[test]
fn the_sm80_round_to_odd_path_rounds_once() {
    let mut xs = hard_f64s(&BF16, 200_000, 3);
    xs.extend([3.4e38, 3.3e38, -3.4e38, 1e300, 1e-300, -1e-300, 1e-40, 0.0]);
    for x in xs {
        assert_eq!(sm80_bf16(x), reference(&BF16, x), "{x:e}");
    }
}

#[test]
fn emitted_casts_to_bf16_round_once_on_both_targets() {
    let mut k = builder("casts", 1, 128);
    let a = k.buffer("a", Space::Global, DType::F64, 256).unwrap();
    let i = k.buffer("i", Space::Global, DType::S32, 256).unwrap();
    let b = k.buffer("b", Space::Global, DType::BF16, 256).unwrap();
    let c = k.buffer("c", Space::Global, DType::BF16, 256).unwrap();
    let h = k.buffer("h", Space::Global, DType::F16, 256).unwrap();
    let g = k.buffer("g", Space::Global, DType::F16, 256).unwrap();
    let t = |k: &mut axe_kernel::KernelBuilder, name, buf| k.tensor(name, buf, &[256], rm(&[256]));
    let (ta, ti) = (t(&mut k, "a", a).unwrap(), t(&mut k, "i", i).unwrap());
    let (tb, tc) = (t(&mut k, "b", b).unwrap(), t(&mut k, "c", c).unwrap());
    let (th, tg) = (t(&mut k, "h", h).unwrap(), t(&mut k, "g", g).unwrap());
    k.call(
        Scope::kernel(),
        Op::Cast {
            dst: tb,
            src: ta.clone(),
        },
    )
    .unwrap();
    k.call(
        Scope::kernel(),
        Op::Cast {
            dst: tc,
            src: ti.clone(),
        },
    )
    .unwrap();
    // And f16, from f64 directly (`cvt.rn.f16.f64`, on both targets).
    k.call(
        Scope::kernel(),
        Op::Cast {
            dst: th,
            src: ta.clone(),
        },
    )
    .unwrap();
    k.call(Scope::kernel(), Op::Cast { dst: tg, src: ti })
        .unwrap();
    let kernel = k.build().unwrap();
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv");
    let lib = find_nvrtc(&venv);
    for target in [Target::Sm80, Target::Sm90a] {
        let src = emit_cuda(&lower(&kernel, target).unwrap()).unwrap();
        // Both casts go through the one f64 → bf16 conversion, not through an f32 rounded to nearest.
        assert_eq!(src.matches("axe_f64_to_bf16(").count(), 3, "{src}");
        assert!(!src.contains("__double2float_rn(d)"), "{src}");
        let Some(lib) = &lib else {
            eprintln!("skipped compiling: no NVRTC under {}", venv.display());
            continue;
        };
        let c = compile_here(lib, &src, "casts", target.arch().unwrap())
            .unwrap_or_else(|e| panic!("{e}\n{src}"));
        assert!(c.ptx.contains("cvt.rn.f16.f64"), "{}", c.ptx);
        if target == Target::Sm90a {
            assert!(c.ptx.contains("cvt.rn.bf16.f64"), "{}", c.ptx);
        } else {
            assert!(c.ptx.contains("cvt.rz.f32.f64"), "{}", c.ptx);
            assert!(!c.ptx.contains("cvt.rn.f32.f64"), "{}", c.ptx);
        }
    }
}

#[test]
fn fills_of_bf16_round_their_value_once() {
    let x = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
    let i = (1i64 << 24) + (1 << 16) + 1;
    for (v, want) in [
        (axe_kernel::Value::Float(x), reference(&BF16, x)),
        (axe_kernel::Value::Int(i), reference_int(&BF16, i)),
    ] {
        let mut k = builder("fill", 1, 32);
        let a = k.buffer("a", Space::Global, DType::BF16, 64).unwrap();
        let t = k.tensor("a", a, &[64], rm(&[64])).unwrap();
        k.fill(Scope::cta(), &t, v).unwrap();
        let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
        let out = run(&p, vec![vec![0; 128]], RunLimits::default()).unwrap();
        assert!(u16s(&out[0]).iter().all(|b| *b == want), "{v:?}");
    }
}
