//! Kernels that compute one pointwise operator (`fill`, `neg`/`abs`/`relu`, `add`/`sub`/`mul`/`max`/
//! `min`, `cast` between any two element types) from global arrays into a global array, directly at
//! any scope or on register tensors at CTA scope (loaded by `copy`, stored back by `copy`), between
//! layouts built from the input's bytes (see `kernel_common.rs`). The values are small integers (and
//! halves, for `fill`), so every result is exact in every element type. Law: a kernel the builder
//! accepts and a target lowers, the interpreter runs; afterwards every element of the destination
//! (each replica) holds the operator applied to the operands' elements of the same index, computed
//! here in `f64` and encoded by hand, and every other byte of the destination is untouched.
#![no_main]
use axe_kernel::{BinaryOp, DType, Op, Scope, Space, Target, UnaryOp, Value};
use libfuzzer_sys::fuzz_target;

#[path = "kernel_common.rs"]
mod common;
use common::{builder, check, finish, indices, registers, Bytes, Memory, TYPES};

/// What the kernel computes.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Fill(f64),
    Unary(UnaryOp),
    Binary(BinaryOp),
    Cast,
}

/// `x` (exactly representable) in `dt`'s little-endian bytes.
fn encode(dt: DType, x: f64) -> Vec<u8> {
    let f = x as f32;
    match dt {
        DType::F64 => x.to_le_bytes().to_vec(),
        DType::F32 => f.to_le_bytes().to_vec(),
        DType::BF16 => ((f.to_bits() >> 16) as u16).to_le_bytes().to_vec(),
        DType::F16 => {
            let bits = f.to_bits();
            let sign = ((bits >> 16) & 0x8000) as u16;
            let half = if f == 0.0 {
                sign
            } else {
                let exp = ((bits >> 23) & 0xff) as i32 - 127 + 15;
                sign | ((exp as u16) << 10) | ((bits >> 13) & 0x3ff) as u16
            };
            half.to_le_bytes().to_vec()
        }
        DType::S32 => (x as i32).to_le_bytes().to_vec(),
        DType::S16 => (x as i16).to_le_bytes().to_vec(),
        DType::S8 => (x as i8).to_le_bytes().to_vec(),
        DType::U8 => (x as u8).to_le_bytes().to_vec(),
        other => unreachable!("{other} is not generated"),
    }
}

fn is_float(dt: DType) -> bool {
    matches!(dt, DType::F64 | DType::F32 | DType::F16 | DType::BF16)
}

/// The value of the element at element offset `p` of operand `k`: a small integer, never negative
/// in an unsigned type.
fn value(dt: DType, k: usize, p: usize) -> f64 {
    let v = ((p * 7 + k * 5 + 3) % 13) as f64;
    if dt == DType::U8 {
        v
    } else {
        v - 6.0
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let dt = TYPES[b.next() as usize % TYPES.len()];
    let rank = 1 + b.next() as usize % 3;
    let dims: Vec<u64> = (0..rank).map(|_| 1 + (b.next() % 8) as u64).collect();
    let kind = match b.next() % 4 {
        0 => Kind::Fill(f64::from(b.next() % 13) - 6.0 + if is_float(dt) { 0.5 } else { 0.0 }),
        1 => Kind::Unary([UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Relu][b.next() as usize % 3]),
        2 => Kind::Binary(
            [
                BinaryOp::Add,
                BinaryOp::Sub,
                BinaryOp::Mul,
                BinaryOp::Max,
                BinaryOp::Min,
            ][b.next() as usize % 5],
        ),
        _ => Kind::Cast,
    };
    let src_dt = match kind {
        Kind::Cast => TYPES[b.next() as usize % TYPES.len()],
        _ => dt,
    };
    // Results that would be negative in an unsigned type are not generated.
    let unsigned_ok = match kind {
        Kind::Fill(v) => v >= 0.0,
        Kind::Unary(UnaryOp::Neg) | Kind::Binary(BinaryOp::Sub) => false,
        Kind::Cast => src_dt == DType::U8,
        _ => true,
    };
    if dt == DType::U8 && !unsigned_ok {
        return;
    }
    let operands = match kind {
        Kind::Fill(_) => 0,
        Kind::Binary(_) => 2,
        _ => 1,
    };
    let through_registers = b.next() % 2 == 1;
    let (scope, grid, threads) = match (through_registers, b.next() % 4) {
        (false, 0) => (Scope::kernel(), 1 + (b.next() % 2) as u32, 64),
        (false, 1) => (Scope::warp(), 1, 32),
        (false, 2) => (Scope::threads(0..1), 1, 32),
        (_, k) => (Scope::cta(), 1, 32 * (1 + k as u32)),
    };
    let srcs: Vec<Memory> = (0..operands)
        .map(|_| Memory::read(&mut b, &dims, true, false))
        .collect();
    let dst = Memory::read(&mut b, &dims, false, true);
    let mut k = builder(grid, threads);
    let mut what = format!("{kind:?} {src_dt}->{dt} {dims:?}:");
    let mut inputs = Vec::new();
    let mut ts = Vec::new();
    for (i, m) in srcs.iter().enumerate() {
        let name = ["a", "b"][i];
        let buf = k
            .buffer(name, Space::Global, src_dt, m.elems)
            .expect("a source");
        let t = k
            .tensor(name, buf, &dims, m.layout(&dims))
            .unwrap_or_else(|e| panic!("{what} source {name}: {e}"));
        what += &format!(" {}", t.layout);
        inputs.push(
            (0..m.elems as usize)
                .flat_map(|p| encode(src_dt, value(src_dt, i, p)))
                .collect::<Vec<u8>>(),
        );
        ts.push(t);
    }
    let db = k
        .buffer("d", Space::Global, dt, dst.elems)
        .expect("the destination");
    let td = k
        .tensor("D", db, &dims, dst.layout(&dims))
        .unwrap_or_else(|e| panic!("{what} destination: {e}"));
    what += &format!(" -> {}", td.layout);
    let op = |dst: &axe_kernel::Tensor, src: &[axe_kernel::Tensor]| match kind {
        Kind::Fill(v) => Op::Fill {
            dst: dst.clone(),
            value: if is_float(dt) {
                Value::Float(v)
            } else {
                Value::Int(v as i64)
            },
        },
        Kind::Unary(op) => Op::Unary {
            op,
            dst: dst.clone(),
            src: src[0].clone(),
        },
        Kind::Binary(op) => Op::Binary {
            op,
            dst: dst.clone(),
            a: src[0].clone(),
            b: src[1].clone(),
        },
        Kind::Cast => Op::Cast {
            dst: dst.clone(),
            src: src[0].clone(),
        },
    };
    let built = if through_registers {
        // Every operand in one register layout, so that each thread computes on its own elements.
        let (layout, regs) = registers(&mut b, &dims, u64::from(threads / 32));
        what += &format!(" through registers {layout} ({threads} threads)");
        let mut reg = |name: &str, t: DType| {
            let buf = k.buffer(name, Space::Registers, t, regs).ok()?;
            k.tensor(name, buf, &dims, layout.clone()).ok()
        };
        let (Some(rd), Some(rs)) = (
            reg("rd", dt),
            (0..operands)
                .map(|i| reg(["ra", "rb"][i], src_dt))
                .collect::<Option<Vec<_>>>(),
        ) else {
            return;
        };
        ts.iter()
            .zip(&rs)
            .try_for_each(|(t, r)| k.copy(Scope::cta(), r, t).map(|_| ()))
            .and_then(|_| k.call(Scope::cta(), op(&rd, &rs)))
            .and_then(|_| k.copy(Scope::cta(), &td, &rd))
    } else {
        k.call(scope, op(&td, &ts))
    };
    let Some(kernel) = finish(k, built, &what) else {
        return;
    };
    // What each element of the destination must hold.
    let w = dt.bytes() as usize;
    let blank = vec![0xabu8; dst.elems as usize * w];
    let mut want = blank.clone();
    for index in indices(&dims) {
        let x: Vec<f64> = srcs
            .iter()
            .enumerate()
            .map(|(i, m)| value(src_dt, i, m.places(&index)[0]))
            .collect();
        let r = match kind {
            Kind::Fill(v) => v,
            Kind::Unary(UnaryOp::Neg) => -x[0],
            Kind::Unary(UnaryOp::Abs) => x[0].abs(),
            Kind::Unary(UnaryOp::Relu) => x[0].max(0.0),
            Kind::Binary(BinaryOp::Add) => x[0] + x[1],
            Kind::Binary(BinaryOp::Sub) => x[0] - x[1],
            Kind::Binary(BinaryOp::Mul) => x[0] * x[1],
            Kind::Binary(BinaryOp::Max) => x[0].max(x[1]),
            Kind::Binary(BinaryOp::Min) => x[0].min(x[1]),
            Kind::Cast => x[0],
            other => unreachable!("{other:?} is not generated"),
        };
        if dt == DType::U8 && r < 0.0 {
            return;
        }
        let bytes = encode(dt, r);
        for d in dst.places(&index) {
            want[d * w..(d + 1) * w].copy_from_slice(&bytes);
        }
    }
    let mut globals = inputs;
    globals.push(blank);
    let out = globals.len() - 1;
    check(&kernel, &Target::ALL, &globals, (out, &want, w), &what);
});
