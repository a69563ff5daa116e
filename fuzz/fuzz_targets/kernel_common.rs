//! Layouts the kernel fuzz targets build from their input's bytes: memory layouts of any dim order,
//! padded, offset, broadcast or replicated, whose element offsets are computed here from their strides
//! (not by `axe-layout`), and register layouts over `reg`, `lane` and `warp`; and the check every
//! target makes of a kernel on each target.
#![allow(dead_code)]
use axe_kernel::{
    emit_cuda, emit_nki, lower, run, DType, Kernel, KernelBuilder, Launch, Result, RunLimits,
    Target,
};
use axe_layout::Layout;

/// The input's bytes, one at a time; zeros once they run out.
pub struct Bytes<'a>(pub &'a [u8]);

impl Bytes<'_> {
    pub fn next(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
}

/// A memory layout of `dims`: strides from its dims in an order read from the input (innermost
/// last), each padded by up to 4 elements, some dims broadcast (stride 0) where `broadcast`, an offset
/// of up to 7 elements, and where `replica` a second copy one whole span on.
pub struct Memory {
    pub strides: Vec<i64>,
    pub offset: i64,
    pub replica: Option<i64>,
    pub elems: u64,
}

impl Memory {
    pub fn read(b: &mut Bytes, dims: &[u64], broadcast: bool, replica: bool) -> Memory {
        let mut order: Vec<usize> = (0..dims.len()).collect();
        // A permutation: the Lehmer code of one byte.
        let mut code = b.next() as usize;
        for i in 0..order.len() {
            let j = i + code % (order.len() - i);
            code /= order.len() - i;
            order.swap(i, j);
        }
        let mut strides = vec![0i64; dims.len()];
        let mut next = 1i64;
        for &d in order.iter().rev() {
            let pad = (b.next() % 5) as i64;
            let zero = broadcast && b.next() % 4 == 3;
            strides[d] = if zero { 0 } else { next };
            if !zero {
                next = next * dims[d] as i64 + pad;
            }
        }
        let offset = (b.next() % 8) as i64;
        let span = offset
            + dims
                .iter()
                .zip(&strides)
                .map(|(&d, &s)| (d as i64 - 1) * s)
                .sum::<i64>()
            + 1;
        let replica = (replica && b.next() % 3 == 0).then_some(span);
        let elems = (span * if replica.is_some() { 2 } else { 1 }) as u64;
        Memory {
            strides,
            offset,
            replica,
            elems,
        }
    }

    /// The layout in Axe notation, on axis `m`.
    pub fn layout(&self, dims: &[u64]) -> Layout {
        let mut text = tuple(dims, &self.strides, &vec![""; dims.len()]);
        if self.offset != 0 {
            text += &format!(" + {}", self.offset);
        }
        if let Some(r) = self.replica {
            text += &format!(" + R[2:{r}]");
        }
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    /// The element offsets of logical index `index` (each replica's).
    pub fn places(&self, index: &[u64]) -> Vec<usize> {
        let at = self.offset
            + index
                .iter()
                .zip(&self.strides)
                .map(|(&i, &s)| i as i64 * s)
                .sum::<i64>();
        let mut out = vec![at as usize];
        if let Some(r) = self.replica {
            out.push((at + r) as usize);
        }
        out
    }
}

/// `S[(d0,d1):(s0@a0,s1@a1)]`, or `S[d:s@a]` for one dim.
pub fn tuple(dims: &[u64], strides: &[i64], axes: &[&str]) -> String {
    let one = |i: usize| {
        let at = if axes[i].is_empty() {
            String::new()
        } else {
            format!("@{}", axes[i])
        };
        format!("{}{at}", strides[i])
    };
    if dims.len() == 1 {
        return format!("S[{}:{}]", dims[0], one(0));
    }
    let d: Vec<String> = dims.iter().map(u64::to_string).collect();
    let s: Vec<String> = (0..dims.len()).map(one).collect();
    format!("S[({}):({})]", d.join(","), s.join(","))
}

/// A register layout of `dims`: each dim on `reg`, `lane` or `warp` as read from the input, strides a
/// mixed radix per axis (inner dims faster), no more than 32 lanes and `warps` warps (a dim that would
/// pass them goes on `reg`); where the input says so, the lanes and warps the dims leave over hold
/// replicas (as operators that every thread of a CTA runs need), when they divide them.
pub struct Registers {
    pub axes: Vec<&'static str>,
    pub strides: Vec<i64>,
    /// The registers a thread holds.
    pub regs: u64,
    /// The replicas over the lanes and warps left over: `(extent, stride@axis)`.
    pub cover: Vec<(u64, String)>,
}

impl Registers {
    pub fn read(b: &mut Bytes, dims: &[u64], warps: u64) -> Registers {
        let names = ["reg", "lane", "warp"];
        let limit = [u64::MAX, 32, warps];
        let mut next = [1u64; 3];
        let mut axes = vec![""; dims.len()];
        let mut strides = vec![0i64; dims.len()];
        for d in (0..dims.len()).rev() {
            let mut a = (b.next() % 3) as usize;
            if next[a] * dims[d] > limit[a] {
                a = 0;
            }
            axes[d] = names[a];
            strides[d] = next[a] as i64;
            next[a] *= dims[d];
        }
        let mut cover = Vec::new();
        if b.next() % 4 != 3 {
            for a in [1, 2] {
                if limit[a] > next[a] && limit[a] % next[a] == 0 {
                    cover.push((limit[a] / next[a], format!("{}@{}", next[a], names[a])));
                }
            }
        }
        Registers {
            axes,
            strides,
            regs: next[0],
            cover,
        }
    }

    /// The layout, with the dims `reduced` says cut to extent 1: where such a dim lies on lanes or
    /// warps, its threads hold replicas of the result (as `reduce` wants of its destination).
    pub fn layout(&self, dims: &[u64], reduced: &[bool]) -> Layout {
        let mut reps = self.cover.clone();
        let mut kept = dims.to_vec();
        for d in 0..dims.len() {
            if reduced.get(d).copied().unwrap_or(false) {
                kept[d] = 1;
                if self.axes[d] != "reg" && dims[d] > 1 {
                    reps.push((dims[d], format!("{}@{}", self.strides[d], self.axes[d])));
                }
            }
        }
        let mut text = tuple(&kept, &self.strides, &self.axes);
        if !reps.is_empty() {
            let e: Vec<String> = reps.iter().map(|(e, _)| e.to_string()).collect();
            let s: Vec<&str> = reps.iter().map(|(_, s)| s.as_str()).collect();
            text += &format!(" + R[({}):({})]", e.join(","), s.join(","));
        }
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }
}

/// [`Registers::read`]'s layout of every dim, and the registers a thread holds.
pub fn registers(b: &mut Bytes, dims: &[u64], warps: u64) -> (Layout, u64) {
    let r = Registers::read(b, dims, warps);
    (r.layout(dims, &[]), r.regs)
}

/// Every index of `dims`, row-major.
pub fn indices(dims: &[u64]) -> Vec<Vec<u64>> {
    let mut out = Vec::new();
    let mut index = vec![0u64; dims.len()];
    'all: loop {
        out.push(index.clone());
        for i in (0..dims.len()).rev() {
            index[i] += 1;
            if index[i] < dims[i] {
                continue 'all;
            }
            index[i] = 0;
        }
        return out;
    }
}

/// With `AXE_FUZZ_TRACE` set, prints `line()` to stderr: which kernels were checked with which
/// variants, and which were refused or declined and why (run a corpus with `-runs=0` to see what a
/// target reaches).
pub fn trace(line: impl FnOnce() -> String) {
    if std::env::var_os("AXE_FUZZ_TRACE").is_some() {
        eprintln!("{}", line());
    }
}

/// Lowers `kernel` for each of `targets` that takes it, emits each GPU program as CUDA C and each
/// Trainium program as NKI text (either must succeed), runs each CPU and GPU program on the
/// interpreter with `globals` (it must run), and checks that global buffer `out` then holds `want`
/// (elements of `w` bytes). `what` describes the kernel in any panic.
pub fn check(
    kernel: &Kernel,
    targets: &[Target],
    globals: &[Vec<u8>],
    (out, want, w): (usize, &[u8], usize),
    what: &str,
) {
    for &target in targets {
        let p = match lower(kernel, target) {
            Ok(p) => p,
            Err(e) => {
                trace(|| format!("declined {target:?} {what}: {e}"));
                continue;
            }
        };
        let variants: Vec<&str> = p.decisions.iter().map(|d| d.variant.as_str()).collect();
        match target {
            Target::Sm80 | Target::Sm90a => {
                emit_cuda(&p).unwrap_or_else(|e| panic!("{what} ({target:?}): CUDA: {e}"));
            }
            Target::Trn1 => {
                emit_nki(&p).unwrap_or_else(|e| panic!("{what} ({target:?}): NKI: {e}"));
                continue;
            }
            Target::Cpu => {}
        }
        let limits = RunLimits {
            max_steps: 20_000_000,
            max_bytes: 1 << 30,
        };
        let got = run(&p, globals.to_vec(), limits)
            .unwrap_or_else(|e| panic!("{what} ({target:?}, {variants:?}): {e}"));
        let got = &got[out];
        if got[..] != *want {
            let at = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0) / w;
            panic!(
                "{what} ({target:?}, {variants:?}): element {at} of the destination is {:?}, not {:?}",
                &got[at * w..at * w + w],
                &want[at * w..at * w + w]
            );
        }
        trace(|| format!("checked {target:?} {variants:?} {what}"));
    }
}

/// The element types the kernel targets pick from (by one byte).
pub const TYPES: [DType; 8] = [
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::S8,
    DType::F64,
    DType::S16,
    DType::U8,
    DType::S32,
];

/// A builder for a launch of `grid` CTAs of `threads` threads (at most 2 of 128).
pub fn builder(grid: u32, threads: u32) -> KernelBuilder {
    KernelBuilder::new(
        "fz",
        Launch {
            grid,
            cluster: 1,
            threads,
        },
    )
    .expect("a launch of at most 2 CTAs of 128 threads")
}

/// The kernel `k` describes, if its calls (`built`) and the kernel itself were accepted (a refusal
/// traced with `what`).
pub fn finish<T>(k: KernelBuilder, built: Result<T>, what: &str) -> Option<Kernel> {
    match built.and_then(|_| k.build()) {
        Ok(kernel) => Some(kernel),
        Err(e) => {
            trace(|| format!("refused {what}: {e}"));
            None
        }
    }
}
