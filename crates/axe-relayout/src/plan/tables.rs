//! What a plan asks of offset tables (one dimension's slots, index by index): constant steps, runs,
//! groups of rows side by side, the range of slots a layout reaches.

use crate::tensor::TensorLayout;

pub(super) fn stride(t: &[i64]) -> i64 {
    if t.len() < 2 {
        i64::MAX
    } else {
        (t[1] - t[0]).abs()
    }
}

/// `k` when `packed` (a dimension's destination table) advances by 1 for groups of `k` (2 ≤ k ≤ 64), and
/// the other dimension advances by `k` in `step_k` and by 1 in `step_1` (so k elements interleave).
pub(super) fn pack_factor(packed: &[i64], step_k: &[i64], step_1: &[i64]) -> Option<usize> {
    let k = period(packed);
    (stride(packed) == 1
        && (2..=64).contains(&k)
        && step_k.len() >= 2
        && step_k[1] - step_k[0] == k as i64
        && step_1[1] - step_1[0] == 1)
        .then_some(k)
}

/// For the `g`-th group of `k` indices (of `n`) that a kernel moves as k side-by-side rows: the rows'
/// spacing in `strided` when the group is whole, `unit` advances by one within it, `strided` by that
/// constant (non-negative) spacing, and there is one destination copy.
pub(crate) fn group_step(
    g: usize,
    k: usize,
    n: usize,
    unit: &[i64],
    strided: &[i64],
    copies: usize,
) -> Option<i64> {
    let x0 = g * k;
    if x0 + k > n || copies != 1 {
        return None;
    }
    let row = if k > 1 {
        strided[x0 + 1] - strided[x0]
    } else {
        0
    };
    (row >= 0
        && (x0..x0 + k).all(|x| {
            unit[x] - unit[x0] == (x - x0) as i64
                && strided[x] - strided[x0] == (x - x0) as i64 * row
        }))
    .then_some(row)
}

/// Maximal runs where `a` advances by `sa` and `b` by `sb` per index.
pub(crate) fn runs_where(a: &[i64], b: &[i64], sa: i64, sb: i64) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut start = 0;
    for x in 1..=a.len() {
        if x == a.len() || a[x] - a[x - 1] != sa || b[x] - b[x - 1] != sb {
            runs.push((start, x - start));
            start = x;
        }
    }
    runs
}

/// The constant step of a table, if it has one.
pub(crate) fn affine(t: &[i64]) -> Option<i64> {
    let step = if t.len() < 2 { 0 } else { t[1] - t[0] };
    t.windows(2).all(|p| p[1] - p[0] == step).then_some(step)
}

/// How many leading entries of a table advance by the same step (the size of a contiguous group).
pub(super) fn period(t: &[i64]) -> usize {
    if t.len() < 2 {
        return 1;
    }
    let step = t[1] - t[0];
    (1..t.len())
        .find(|&i| t[i] - t[i - 1] != step)
        .unwrap_or(t.len())
        .min(1 << 12)
}

/// The lowest and highest slot any element's copy lands in, as checked sums (`None` past 64 bits).
pub(crate) fn offset_range(l: &TensorLayout) -> Option<(i64, i64)> {
    let sum = |pick: fn(&[i64]) -> i64| {
        l.tables
            .iter()
            .map(|t| pick(t))
            .chain([pick(&l.replicas)])
            .try_fold(0i64, |acc, v| acc.checked_add(v))
    };
    Some((
        sum(|t| t.iter().copied().min().unwrap_or(0))?,
        sum(|t| t.iter().copied().max().unwrap_or(0))?,
    ))
}
