//! Bounded searches for a left inverse that no closed form builds, over each size `N` from `cosize(L)` to
//! `2·cosize(L)` and each ordered factorization of `N`. For an injective `L` the strides are the solution
//! of the linear system `Σ_k digit_k(L(i))·d_k = i` (one equation per index of `L`), solved exactly over
//! the integers; for a non-injective `L` (a generalised inverse) they are chosen mode by mode.

use crate::coalesce::coalesce_modes;
use crate::error::Result;
use crate::layout::Layout;

/// Inputs up to this size are searched.
pub(crate) const SEARCH_SIZE: i64 = 64;
/// Total elimination steps one search may take.
const BUDGET: u64 = 1 << 24;

/// The first `(N, factorization)` whose system has an integer solution (free unknowns set to 0),
/// checked on every index; `None` when none is found within the bounds.
pub(crate) fn search_left_inverse(values: &[i64], cosize: i64) -> Result<Option<Layout>> {
    let mut budget = BUDGET;
    for n in cosize..=cosize.saturating_mul(2) {
        let mut facts = Vec::new();
        factorizations(n, &mut Vec::new(), &mut facts, &mut budget);
        for f in facts {
            if let Some(d) = solve(values, &f, &mut budget) {
                let modes: Vec<(i64, i64)> = f.iter().copied().zip(d).collect();
                if check(values, &modes) {
                    return Ok(Some(Layout::from_modes(&coalesce_modes(modes))?));
                }
            }
            if budget == 0 {
                return Ok(None);
            }
        }
    }
    Ok(None)
}

fn factorizations(n: i64, cur: &mut Vec<i64>, out: &mut Vec<Vec<i64>>, budget: &mut u64) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    if n == 1 {
        out.push(cur.clone());
        return;
    }
    for f in 2..=n {
        if n % f == 0 {
            cur.push(f);
            factorizations(n / f, cur, out, budget);
            cur.pop();
        }
    }
}

/// Digits of `x` in the colexicographic radix `f` (the last digit unbounded).
fn digits(mut x: i64, f: &[i64]) -> Vec<i64> {
    let mut out = Vec::with_capacity(f.len());
    for (k, &e) in f.iter().enumerate() {
        if k + 1 == f.len() {
            out.push(x);
        } else {
            out.push(x % e);
            x /= e;
        }
    }
    out
}

fn check(values: &[i64], modes: &[(i64, i64)]) -> bool {
    let n: i64 = modes.iter().map(|m| m.0).product();
    values.iter().enumerate().all(|(i, &x)| {
        x < n
            && digits(x, &modes.iter().map(|m| m.0).collect::<Vec<_>>())
                .iter()
                .zip(modes)
                .try_fold(0i64, |acc, (c, m)| acc.checked_add(c.checked_mul(m.1)?))
                == i64::try_from(i).ok()
    })
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Integer Gaussian elimination of `[digits(L(i)) | i]`; `None` when inconsistent, overflowing, or the
/// back-substitution (free unknowns 0) is not integral.
fn solve(values: &[i64], f: &[i64], budget: &mut u64) -> Option<Vec<i64>> {
    let m = f.len();
    let mut rows: Vec<Vec<i128>> = Vec::with_capacity(values.len());
    for (i, &x) in values.iter().enumerate() {
        if x >= f.iter().product::<i64>() {
            return None;
        }
        let mut r: Vec<i128> = digits(x, f).into_iter().map(i128::from).collect();
        r.push(i128::try_from(i).ok()?);
        rows.push(r);
    }
    let mut pivots = Vec::new();
    let mut top = 0;
    for col in 0..m {
        let Some(p) = (top..rows.len()).find(|&r| rows[r][col] != 0) else {
            continue;
        };
        rows.swap(top, p);
        let pivot = rows[top].clone();
        for (r, row) in rows.iter_mut().enumerate() {
            if r == top || row[col] == 0 {
                continue;
            }
            *budget = budget.saturating_sub(m as u64 + 1);
            let (a, b) = (pivot[col], row[col]);
            for (v, &pv) in row.iter_mut().zip(&pivot) {
                *v = v.checked_mul(a)?.checked_sub(pv.checked_mul(b)?)?;
            }
            let g = row.iter().fold(0i128, |g, &v| gcd(g, v));
            if g > 1 {
                row.iter_mut().for_each(|v| *v /= g);
            }
        }
        pivots.push((top, col));
        top += 1;
    }
    if rows[top..].iter().any(|r| r[m] != 0) {
        return None;
    }
    let mut d = vec![0i64; m];
    for &(r, col) in &pivots {
        let (a, rhs) = (rows[r][col], rows[r][m]);
        if rhs % a != 0 {
            return None;
        }
        d[col] = i64::try_from(rhs / a).ok()?;
    }
    Some(d)
}

/// A bounded search for a generalised inverse of a non-injective `L` (`L(R(L(i))) = L(i)`, `R(L(i))` an
/// index of `L`) that no closed form builds: for each size `N` from `cosize(L)` to `2·cosize(L)` and each
/// ordered factorization `(n_0, …, n_{m−1})` of `N`, the strides are chosen mode by mode. With
/// `P_k = n_0·…·n_{k−1}`, the values of `L` below `P_{k+1}` have digits only in modes `0..=k`, so once
/// `d_0..d_k` are chosen `L(R(v)) = v` is decided for them; `d_k` is a preimage of `P_k` when `P_k` is
/// a value of `L` (so few candidates), else any stride in `(−size(L), size(L))`. The first `R` found is
/// returned (the caller checks the law again); `None` when the bounds or the step budget run out.
pub(crate) fn search_generalised_inverse(values: &[i64], cosize: i64) -> Result<Option<Layout>> {
    let mut pre: std::collections::HashMap<i64, Vec<i64>> = std::collections::HashMap::new();
    for (i, &v) in values.iter().enumerate() {
        let i = i64::try_from(i).unwrap_or(i64::MAX);
        pre.entry(v).or_default().push(i);
    }
    let size = i64::try_from(values.len()).unwrap_or(i64::MAX);
    let mut distinct: Vec<i64> = pre.keys().copied().collect();
    distinct.sort_unstable();
    let mut budget = BUDGET;
    for n in cosize..=cosize.saturating_mul(2) {
        let mut facts = Vec::new();
        factorizations(n, &mut Vec::new(), &mut facts, &mut budget);
        for f in facts {
            let mut search = Generalised {
                values,
                distinct: &distinct,
                pre: &pre,
                size,
                f: &f,
                d: Vec::with_capacity(f.len()),
                budget: &mut budget,
            };
            if search.dfs(0, 1) {
                let modes: Vec<(i64, i64)> = f.iter().copied().zip(search.d).collect();
                return Ok(Some(Layout::from_modes(&coalesce_modes(modes))?));
            }
            if budget == 0 {
                return Ok(None);
            }
        }
    }
    Ok(None)
}

struct Generalised<'a> {
    values: &'a [i64],
    distinct: &'a [i64],
    pre: &'a std::collections::HashMap<i64, Vec<i64>>,
    size: i64,
    f: &'a [i64],
    d: Vec<i64>,
    budget: &'a mut u64,
}

impl Generalised<'_> {
    /// Chooses `d_k` (`p` = `P_k`); true when all modes are chosen and every value checks.
    fn dfs(&mut self, k: usize, p: i64) -> bool {
        if k == self.f.len() {
            return true;
        }
        let last = k + 1 == self.f.len();
        let next = if last {
            i64::MAX
        } else {
            p.saturating_mul(self.f[k])
        };
        let candidates: Vec<i64> = match self.pre.get(&p) {
            Some(v) => v.clone(),
            None => (0..self.size).chain(1 - self.size..0).collect(),
        };
        for c in candidates {
            if *self.budget == 0 {
                return false;
            }
            self.d.push(c);
            if self.level_holds(p, next) && self.dfs(k + 1, next) {
                return true;
            }
            self.d.pop();
        }
        false
    }

    /// `L(R(v)) = v` for the values `v ∈ [p, next)` (digits in the chosen modes only).
    fn level_holds(&mut self, p: i64, next: i64) -> bool {
        let lo = self.distinct.partition_point(|&v| v < p);
        let hi = self.distinct.partition_point(|&v| v < next);
        let radix = &self.f[..self.d.len()];
        for &v in &self.distinct[lo..hi] {
            *self.budget = self.budget.saturating_sub(1 + self.d.len() as u64);
            let r = digits(v, radix)
                .iter()
                .zip(&self.d)
                .try_fold(0i64, |acc, (c, d)| acc.checked_add(c.checked_mul(*d)?));
            match r.and_then(|j| usize::try_from(j).ok()) {
                Some(j) if (j as i64) < self.size && self.values[j] == v => {}
                _ => return false,
            }
        }
        true
    }
}
