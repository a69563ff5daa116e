//! Shared by the kernel tests: a builder for a plain launch, row-major layouts, f32 bytes, and
//! random register layouts for the reduce and register-copy property tests.
#![allow(dead_code)]

use axe_kernel::{BufferId, KernelBuilder, Launch, Tensor};
use axe_layout::{Axis, Coord, Iter, Layout};
use proptest::prelude::*;

/// A kernel builder for a launch of `grid` CTAs of `threads` threads, no clusters.
pub fn builder(name: &str, grid: u32, threads: u32) -> KernelBuilder {
    KernelBuilder::new(
        name,
        Launch {
            grid,
            cluster: 1,
            threads,
        },
    )
    .unwrap()
}

/// Two rows of 32 held by a warp (row `r` in register `r`, column `j` in lane `j`), tensor `src` over
/// register buffer `rs`, and their row sums' destination `[2, 1]` in every lane, tensor `dst` over
/// `rd`.
pub fn warp_rows(
    k: &mut KernelBuilder,
    (src, rs): (&str, BufferId),
    (dst, rd): (&str, BufferId),
) -> (Tensor, Tensor) {
    let x = k
        .tensor(
            src,
            rs,
            &[2, 32],
            "S[(2,32):(1@reg,1@lane)]".parse().unwrap(),
        )
        .unwrap();
    let m = k
        .tensor(
            dst,
            rd,
            &[2, 1],
            "S[(2,1):(1@reg,1@reg)] + R[32:1@lane]".parse().unwrap(),
        )
        .unwrap();
    (x, m)
}

/// The row-major layout of `shape`.
pub fn rm(shape: &[u64]) -> Layout {
    Layout::row_major(shape).expect("layout")
}

/// The little-endian bytes of `v`.
pub fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// One digit of a register layout: its dim (0 or 1), axis (0 reg, 1 lane, 2 warp) and extent.
#[derive(Debug, Clone, Copy)]
pub struct Digit {
    pub dim: usize,
    pub axis: usize,
    pub extent: u64,
}

pub const AXES: [&str; 3] = ["reg", "lane", "warp"];

/// A register layout over `[R, C]` from digits (each dim's digits outer to inner, in the order given),
/// each axis' strides a mixed radix in the order `order[axis]` lists the digits; and the layout of the
/// reduction's destination: the kept digits as they are, the reduced ones on lane/warp as replicas,
/// those on reg dropped.
pub fn layouts(digits: &[Digit], order: &[usize], dims: &[usize]) -> (Vec<u64>, Layout, Layout) {
    layouts_replicated(digits, order, dims, &[])
}

/// [`layouts`] with the digits `replica` marks (lane or warp ones) made replicas of the source instead
/// of indexing it (its shape leaves them out), and replicas of the destination too.
pub fn layouts_replicated(
    digits: &[Digit],
    order: &[usize],
    dims: &[usize],
    replica: &[bool],
) -> (Vec<u64>, Layout, Layout) {
    let mut stride = vec![0i64; digits.len()];
    let mut next = [1i64; 3];
    for &i in order {
        let a = digits[i].axis;
        stride[i] = next[a];
        next[a] *= digits[i].extent as i64;
    }
    let mut shape = vec![1u64; 2];
    let (mut shard, mut dshard, mut drep) = (Vec::new(), Vec::new(), Vec::new());
    let mut rep = Vec::new();
    for (dim, ext) in shape.iter_mut().enumerate() {
        for (i, d) in digits.iter().enumerate().filter(|(_, d)| d.dim == dim) {
            let it = Iter::new(d.extent, stride[i], Axis::new(AXES[d.axis]).unwrap()).unwrap();
            if replica.get(i) == Some(&true) {
                rep.push(it);
                drep.push(it);
                continue;
            }
            *ext *= d.extent;
            shard.push(it);
            if !dims.contains(&dim) {
                dshard.push(it);
            } else if d.axis != 0 {
                drep.push(it);
            }
        }
    }
    if shard.is_empty() {
        shard.push(Iter::new(1, 0, Axis::new("reg").unwrap()).unwrap());
    }
    let src = Layout::new(shard, rep, Coord::zero()).unwrap();
    let dst = if dshard.is_empty() {
        Layout::new(
            vec![Iter::new(1, 0, Axis::new("reg").unwrap()).unwrap()],
            drep,
            Coord::zero(),
        )
    } else {
        Layout::new(dshard, drep, Coord::zero())
    }
    .unwrap();
    (shape, src, dst)
}

/// Random digits: lanes multiply to 32 and warps to the launch's warps (every thread holds elements),
/// powers of two on lane and warp, any small extent on reg.
pub fn digits() -> impl Strategy<Value = (Vec<Digit>, Vec<usize>, u32)> {
    (0u32..3, prop::collection::vec((0usize..2, 1u64..4), 0..3)).prop_flat_map(|(wlog, regs)| {
        // Lane bits 5 and warp bits wlog, cut into digits of 1 or 2 bits, each on a random dim.
        let mut parts = Vec::new();
        for (axis, bits) in [(1usize, 5u32), (2, wlog)] {
            let mut left = bits;
            while left > 0 {
                let b = if left >= 2 && parts.len() % 2 == 0 {
                    2
                } else {
                    1
                };
                parts.push((axis, 1u64 << b));
                left -= b;
            }
        }
        let n = parts.len() + regs.len();
        (
            prop::collection::vec(0usize..2, n),
            Just(parts),
            Just(regs),
            Just(wlog),
            Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
            Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
        )
            .prop_map(|(dimsel, parts, regs, wlog, perm, order)| {
                let mut ds: Vec<Digit> = parts
                    .iter()
                    .map(|&(axis, extent)| Digit {
                        dim: 0,
                        axis,
                        extent,
                    })
                    .chain(regs.iter().map(|&(_, e)| Digit {
                        dim: 0,
                        axis: 0,
                        extent: e + 1,
                    }))
                    .collect();
                for (d, s) in ds.iter_mut().zip(dimsel) {
                    d.dim = s;
                }
                let ds: Vec<Digit> = perm.iter().map(|&i| ds[i]).collect();
                (ds, order, 1u32 << wlog)
            })
    })
}
