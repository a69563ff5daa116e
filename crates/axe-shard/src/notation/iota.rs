//! XLA's iota tile assignments: recognising a device list as `arange(N).reshape(R).transpose(P)` and
//! writing it in XLA's canonical form.
//!
//! Canonical (as XLA's `IotaTileAssignment` keeps it): no reshape dim of size 1, and no two dims adjacent
//! in the transposed order that are also adjacent, in the same order, in the reshape (they merge into one
//! dim of their product); a transpose that is then the identity is dropped, leaving `<=[N]`.

/// The canonical iota text (`<=[N]` or `<=[R]T(P)`) of `devices`, the device ids in row-major order over
/// any tile grid, when the list is a transposed iota; `None` otherwise.
///
/// Law: for the returned `<=[R]T(P)`, `arange(ΠR).reshape(R).transpose(P).flatten() == devices`, and no
/// other canonical `R, P` gives the list.
pub fn iota_text(devices: &[u64]) -> Option<String> {
    let n = devices.len();
    if n == 0 || devices[0] != 0 {
        return None;
    }
    // Minor first: (size, weight) of each transposed dim, runs of steps by one weight merged greedily
    // (a run continues exactly while the next dim would merge with it canonically).
    let mut dims: Vec<(u64, u64)> = Vec::new();
    let mut step: usize = 1;
    while step < n {
        let w = devices[step];
        if w == 0 {
            return None;
        }
        let mut len: usize = 1;
        while len.checked_mul(step).is_some_and(|p| p < n)
            && (len as u64).checked_mul(w) == Some(devices[len * step])
        {
            len += 1;
        }
        if !(n / step).is_multiple_of(len) {
            return None;
        }
        dims.push((len as u64, w));
        step *= len;
    }
    // Every device is the weighted sum of its position's coordinates.
    for (pos, &d) in devices.iter().enumerate() {
        let mut rest = pos as u64;
        let mut want: u64 = 0;
        for &(size, w) in &dims {
            want = want.checked_add((rest % size).checked_mul(w)?)?;
            rest /= size;
        }
        if want != d {
            return None;
        }
    }
    // The weights are an iota's strides: in ascending order, each the product of the sizes below it.
    let mut by_weight: Vec<usize> = (0..dims.len()).collect();
    by_weight.sort_by_key(|&i| dims[i].1);
    let mut expect: u64 = 1;
    for &i in &by_weight {
        if dims[i].1 != expect {
            return None;
        }
        expect = expect.checked_mul(dims[i].0)?;
    }
    if dims.len() <= 1 {
        return Some(format!("<=[{n}]"));
    }
    // Reshape dims major first (largest weight first); the transpose lists, major first, which reshape
    // dim each transposed dim is.
    let reshape_of: Vec<usize> = by_weight.iter().rev().copied().collect();
    let reshape: Vec<String> = reshape_of.iter().map(|&i| dims[i].0.to_string()).collect();
    let perm: Vec<String> = (0..dims.len())
        .rev()
        .map(|t| {
            reshape_of
                .iter()
                .position(|&i| i == t)
                .unwrap_or(0)
                .to_string()
        })
        .collect();
    Some(format!("<=[{}]T({})", reshape.join(","), perm.join(",")))
}

#[cfg(test)]
mod tests {
    use super::iota_text;

    /// `arange(N).reshape(r).transpose(p).flatten()`.
    fn expand(r: &[u64], p: &[usize]) -> Vec<u64> {
        let n: u64 = r.iter().product();
        let mut stride = vec![1u64; r.len()];
        for i in (0..r.len().saturating_sub(1)).rev() {
            stride[i] = stride[i + 1] * r[i + 1];
        }
        let t: Vec<u64> = p.iter().map(|&i| r[i]).collect();
        (0..n)
            .map(|mut pos| {
                let mut v = 0;
                for k in (0..t.len()).rev() {
                    v += (pos % t[k]) * stride[p[k]];
                    pos /= t[k];
                }
                v
            })
            .collect()
    }

    #[test]
    fn canonical_forms_are_xlas() {
        // XLA's own canonicalisations.
        assert_eq!(
            iota_text(&expand(&[2, 2, 2], &[1, 2, 0])).as_deref(),
            Some("<=[2,4]T(1,0)")
        );
        assert_eq!(
            iota_text(&expand(&[2, 4], &[1, 0])).as_deref(),
            Some("<=[2,4]T(1,0)")
        );
        assert_eq!(
            iota_text(&expand(&[3, 4, 5], &[1, 2, 0])).as_deref(),
            Some("<=[3,20]T(1,0)")
        );
        assert_eq!(
            iota_text(&expand(&[3, 4, 5], &[2, 0, 1])).as_deref(),
            Some("<=[12,5]T(1,0)")
        );
        assert_eq!(
            iota_text(&expand(&[3, 4, 5], &[2, 1, 0])).as_deref(),
            Some("<=[3,4,5]T(2,1,0)")
        );
        assert_eq!(
            iota_text(&expand(&[3, 4, 5], &[1, 0, 2])).as_deref(),
            Some("<=[3,4,5]T(1,0,2)")
        );
        assert_eq!(
            iota_text(&expand(&[1, 3, 1, 4, 1, 5], &[4, 3, 2, 5, 1, 0])).as_deref(),
            Some("<=[3,20]T(1,0)")
        );
        assert_eq!(
            iota_text(&expand(&[2, 4], &[0, 1])).as_deref(),
            Some("<=[8]")
        );
        assert_eq!(iota_text(&[0]).as_deref(), Some("<=[1]"));
    }

    #[test]
    fn lists_that_are_no_iota() {
        assert_eq!(iota_text(&[0, 3, 1, 2]), None);
        assert_eq!(iota_text(&[1, 0]), None);
        assert_eq!(iota_text(&[0, 1, 2, 3, 4, 5, 7, 6]), None);
        assert_eq!(iota_text(&[0, 2, 4, 6]), None);
        assert_eq!(iota_text(&[]), None);
    }
}
