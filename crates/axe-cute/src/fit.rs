//! Fitting a layout to a function given by its values, and checking a law by enumeration. These make
//! every operator's answer checkable, and give an answer where CuTe's closed forms do not apply.

use crate::error::{CuteError, Result};
use crate::layout::Layout;

/// The most points an operator enumerates to check or fit a result; beyond it only the closed forms
/// (with their proofs) are used and anything else is [`CuteError::TooLarge`].
pub const MAX_CHECK: i64 = 1 << 20;

/// Work budget of one fit (steps of the backtracking search).
const FIT_BUDGET: u64 = 1 << 26;

/// A flat layout `(n1,n2,..):(d1,d2,..)` (extents ≥ 2, colexicographic) with `L(i) = values[i]` for
/// every `i`, or `None` when there is none. The search is complete: any such layout has a first mode
/// `(n1, values[1])` with `n1 | n` inside the run where `values[i] = i·values[1]`, and the rest is a
/// layout of `j ↦ values[j·n1]`; every such `n1` is tried.
pub(crate) fn fit(values: &[i64]) -> Result<Option<Vec<(i64, i64)>>> {
    let mut budget = FIT_BUDGET;
    fit_rec(values, &mut budget)
}

fn fit_rec(values: &[i64], budget: &mut u64) -> Result<Option<Vec<(i64, i64)>>> {
    let n = values.len();
    if n == 0 || values[0] != 0 {
        return Ok(None);
    }
    if n == 1 {
        return Ok(Some(Vec::new()));
    }
    let d1 = values[1];
    let mut run = 1usize;
    while run < n && i64::try_from(run).ok().and_then(|r| r.checked_mul(d1)) == Some(values[run]) {
        run += 1;
    }
    for n1 in (2..=run).rev() {
        if !n.is_multiple_of(n1) {
            continue;
        }
        let steps = u64::try_from(n).unwrap_or(u64::MAX);
        *budget = budget.checked_sub(steps).ok_or_else(|| {
            CuteError::TooLarge("fitting a layout took more steps than allowed".into())
        })?;
        let rest: Vec<i64> = values.iter().step_by(n1).copied().collect();
        let ok = (0..n).all(|x| {
            let (i, j) = (x % n1, x / n1);
            i64::try_from(i)
                .ok()
                .and_then(|i| i.checked_mul(d1))
                .and_then(|v| v.checked_add(rest[j]))
                == Some(values[x])
        });
        if !ok {
            continue;
        }
        if let Some(mut tail) = fit_rec(&rest, budget)? {
            let n1 = i64::try_from(n1).map_err(|_| CuteError::TooLarge("fit".into()))?;
            tail.insert(0, (n1, d1));
            return Ok(Some(tail));
        }
    }
    Ok(None)
}

/// The first flat index where `l` and `f` differ, checking every index of `l` (which must be at most
/// [`MAX_CHECK`] points).
pub(crate) fn first_mismatch(l: &Layout, f: impl Fn(i64) -> Result<i64>) -> Result<Option<i64>> {
    let values = l.values(MAX_CHECK)?;
    for (i, v) in values.into_iter().enumerate() {
        let i = i64::try_from(i).map_err(|_| CuteError::TooLarge("index".into()))?;
        if f(i)? != v {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// A short rendering of the first values of a function, for error messages.
pub(crate) fn preview(values: &[i64]) -> String {
    let shown: Vec<String> = values.iter().take(12).map(i64::to_string).collect();
    let more = if values.len() > 12 { ",…" } else { "" };
    format!("[{}{more}]", shown.join(","))
}
