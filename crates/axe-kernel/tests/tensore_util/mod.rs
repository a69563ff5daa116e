//! Helpers for the TensorE tests: a gemm kernel over given SBUF/PSUM layouts, its run on the
//! interpreter against an f64 reference, and the brute-force oracle of legal instruction tiles.
#![allow(dead_code, clippy::unwrap_used, clippy::panic)]

use axe_kernel::{
    lower, run, DType, KernelBuilder, Launch, Program, RunLimits, Scope, Space, Target,
};
use axe_layout::{Axis, Layout};

pub fn l(s: &str) -> Layout {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// Free elements a partition needs for `layout` (its largest `F` plus one).
pub fn free_needed(layout: &Layout) -> u64 {
    let f = Axis::new("F").unwrap();
    let mut hi = layout.offset().get(&f);
    for it in layout.shard() {
        if it.axis() == &f && it.stride() > 0 {
            hi += (it.extent() as i64 - 1) * it.stride();
        }
    }
    hi as u64 + 1
}

/// Layouts of A `[M, K]` and B `[K, N]` in SBUF and C `[M, N]` in PSUM.
#[derive(Debug, Clone)]
pub struct Case {
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub a: Layout,
    pub b: Layout,
    pub c: Layout,
}

/// The kernel: A, B, C row-major in HBM, copied into the case's layouts, one gemm, C copied back.
pub fn kernel(case: &Case, dtype: DType) -> axe_kernel::Result<axe_kernel::Kernel> {
    let (m, n, k) = (case.m, case.n, case.k);
    let mut kb = KernelBuilder::new(
        "tensore_case",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32,
        },
    )?;
    let ga = kb.buffer("a", Space::Global, dtype, m * k)?;
    let gb = kb.buffer("b", Space::Global, dtype, k * n)?;
    let gc = kb.buffer("c", Space::Global, DType::F32, m * n)?;
    let sa = kb.buffer("a_sbuf", Space::Sbuf, dtype, 128 * free_needed(&case.a))?;
    let sb = kb.buffer("b_sbuf", Space::Sbuf, dtype, 128 * free_needed(&case.b))?;
    let pc = kb.buffer(
        "c_psum",
        Space::Psum,
        DType::F32,
        128 * free_needed(&case.c),
    )?;
    let a = kb.tensor("a", ga, &[m, k], Layout::row_major(&[m, k]).unwrap())?;
    let b = kb.tensor("b", gb, &[k, n], Layout::row_major(&[k, n]).unwrap())?;
    let c = kb.tensor("c", gc, &[m, n], Layout::row_major(&[m, n]).unwrap())?;
    let a_s = kb.tensor("a_sbuf", sa, &[m, k], case.a.clone())?;
    let b_s = kb.tensor("b_sbuf", sb, &[k, n], case.b.clone())?;
    let c_p = kb.tensor("c_psum", pc, &[m, n], case.c.clone())?;
    kb.copy(Scope::kernel(), &a_s, &a)?;
    kb.copy(Scope::kernel(), &b_s, &b)?;
    kb.copy(Scope::kernel(), &c_p, &c)?;
    kb.gemm(Scope::kernel(), &c_p, &a_s, &b_s)?;
    kb.copy(Scope::kernel(), &c, &c_p)?;
    kb.build()
}

fn values(n: u64, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            half::bf16::from_f32(((s >> 40) as f64 / (1u64 << 24) as f64 * 4.0 - 2.0) as f32)
                .to_f32()
        })
        .collect()
}

fn bytes(x: &[f32], d: DType) -> Vec<u8> {
    x.iter()
        .flat_map(|&v| match d {
            DType::F32 => v.to_le_bytes().to_vec(),
            DType::F16 => half::f16::from_f32(v).to_le_bytes().to_vec(),
            _ => half::bf16::from_f32(v).to_le_bytes().to_vec(),
        })
        .collect()
}

/// Lowers the case for trn1, runs it on the interpreter with C starting from a non-zero matrix, and
/// checks `C + A·B` against the f64 reference within f32 accumulation error. Returns the program.
pub fn check_numbers(case: &Case, dtype: DType) -> Program {
    let (m, n, k) = (case.m as usize, case.n as usize, case.k as usize);
    let p = lower(&kernel(case, dtype).unwrap(), Target::Trn1).unwrap();
    let a = values(case.m * case.k, 3);
    let b = values(case.k * case.n, 5);
    let c0 = values(case.m * case.n, 9);
    let out = run(
        &p,
        vec![bytes(&a, dtype), bytes(&b, dtype), bytes(&c0, DType::F32)],
        RunLimits::default(),
    )
    .unwrap();
    let got: Vec<f32> = out[2]
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    for i in 0..m {
        for j in 0..n {
            let mut want = f64::from(c0[i * n + j]);
            let mut mag = want.abs();
            for q in 0..k {
                let x = f64::from(a[i * k + q]) * f64::from(b[q * n + j]);
                want += x;
                mag += x.abs();
            }
            let tol = (k as f64 + 2.0) * 2f64.powi(-24) * mag + 1e-30;
            let g = f64::from(got[i * n + j]);
            assert!(
                (g - want).abs() <= tol,
                "C[{i}, {j}] = {g}, the reference is {want} (tolerance {tol}) for {case:?}"
            );
        }
    }
    p
}

/// `(P, F)` of logical index `idx` of `shape` under `layout` (its first copy).
fn pf(layout: &Layout, idx: [u64; 2], shape: [u64; 2]) -> (i64, i64) {
    let c = &layout.apply_multi(&idx, &shape).unwrap()[0];
    (
        c.get(&Axis::new("P").unwrap()),
        c.get(&Axis::new("F").unwrap()),
    )
}

/// What one operand needs along a dimension: consecutive partitions (free constant), or a free-axis
/// run with a constant step ≥ 1 (partition constant).
#[derive(Clone, Copy)]
pub enum Need {
    Partitions,
    FreeRun,
}

type Operand<'a> = (&'a Layout, [u64; 2], usize, Need);

fn coords((layout, shape, dim, _): &Operand<'_>, size: u64) -> Vec<(i64, i64)> {
    (0..size)
        .map(|x| {
            let mut idx = [0, 0];
            idx[*dim] = x;
            pf(layout, idx, *shape)
        })
        .collect()
}

fn sub(a: (i64, i64), b: (i64, i64)) -> (i64, i64) {
    (a.0 - b.0, a.1 - b.1)
}

/// The step of a first move `d` (from position 0 to position 1) as `need` allows, as a vector.
fn step(d: (i64, i64), need: Need) -> Option<(i64, i64)> {
    match need {
        Need::Partitions => (d == (1, 0)).then_some(d),
        Need::FreeRun => (d.0 == 0 && d.1 >= 1).then_some(d),
    }
}

/// The largest legal tile of a dimension of `size`, by brute force over the layouts' maps: a tile
/// is a set of logical indices, position `i` held by X at `x0 + i·sX` and by Y at `y0 + i·sY` (each a
/// vector: `(1, 0)` on partitions, `(0, s ≥ 1)` on the free axis), whose translates `b + tile`
/// (`b` the smallest index not yet covered) cover the dimension exactly, each mapping the same way.
/// Every first step (the index at position 1) is tried, the tile grown position by position.
pub fn brute_tile(size: u64, limit: u64, x: Operand<'_>, y: Operand<'_>) -> u64 {
    let (cx, cy) = (coords(&x, size), coords(&y, size));
    let mut by_delta = std::collections::HashMap::new();
    for k in 0..size as usize {
        by_delta
            .entry((sub(cx[k], cx[0]), sub(cy[k], cy[0])))
            .or_insert(k);
    }
    let mut best = 1;
    for k1 in 1..size as usize {
        let (Some(sx), Some(sy)) = (step(sub(cx[k1], cx[0]), x.3), step(sub(cy[k1], cy[0]), y.3))
        else {
            continue;
        };
        let mut offs = vec![0usize];
        while (offs.len() as u64) < limit {
            let i = offs.len() as i64;
            match by_delta.get(&((sx.0 * i, sx.1 * i), (sy.0 * i, sy.1 * i))) {
                Some(&k) => offs.push(k),
                None => break,
            }
        }
        for t in (best + 1..=offs.len() as u64).rev() {
            if !size.is_multiple_of(t) {
                continue;
            }
            let tile = &offs[..t as usize];
            let mut covered = vec![false; size as usize];
            let ok = (0..size as usize).all(|b| {
                if covered[b] {
                    return true;
                }
                tile.iter().enumerate().all(|(i, off)| {
                    let k = b + off;
                    let i = i as i64;
                    let good = k < size as usize
                        && !covered[k]
                        && sub(cx[k], cx[b]) == (sx.0 * i, sx.1 * i)
                        && sub(cy[k], cy[b]) == (sy.0 * i, sy.1 * i);
                    if good {
                        covered[k] = true;
                    }
                    good
                })
            });
            if ok {
                best = t;
                break;
            }
        }
    }
    best
}

/// The brute-force largest `(M, N, K)` tile of a case.
pub fn brute(case: &Case) -> (u64, u64, u64) {
    let (m, n, k) = (case.m, case.n, case.k);
    let tk = brute_tile(
        k,
        128,
        (&case.a, [m, k], 1, Need::Partitions),
        (&case.b, [k, n], 0, Need::Partitions),
    );
    let tm = brute_tile(
        m,
        128,
        (&case.a, [m, k], 0, Need::FreeRun),
        (&case.c, [m, n], 0, Need::Partitions),
    );
    let tn = brute_tile(
        n,
        512,
        (&case.b, [k, n], 1, Need::FreeRun),
        (&case.c, [m, n], 1, Need::FreeRun),
    );
    (tm, tn, tk)
}

/// The plan the variant computes for the case's operands (tensors built as in the kernel).
pub fn plan_of(case: &Case) -> Result<axe_kernel::tensore::Plan, String> {
    let mut kb = KernelBuilder::new(
        "p",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32,
        },
    )
    .unwrap();
    let (m, n, k) = (case.m, case.n, case.k);
    let sa = kb
        .buffer("a", Space::Sbuf, DType::BF16, 128 * free_needed(&case.a))
        .unwrap();
    let sb = kb
        .buffer("b", Space::Sbuf, DType::BF16, 128 * free_needed(&case.b))
        .unwrap();
    let pc = kb
        .buffer("c", Space::Psum, DType::F32, 128 * free_needed(&case.c))
        .unwrap();
    let a = kb.tensor("a", sa, &[m, k], case.a.clone()).unwrap();
    let b = kb.tensor("b", sb, &[k, n], case.b.clone()).unwrap();
    let c = kb.tensor("c", pc, &[m, n], case.c.clone()).unwrap();
    axe_kernel::tensore::plan(&c, &a, &b).unwrap()
}
