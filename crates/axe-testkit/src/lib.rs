//! Helpers for the fuzz-style tests of the axe crates.

/// Applies edit operations to `s`: for each `(op, at, c)`, insert `c` (op % 3 == 0), delete (1) or replace
/// (2) the character at `at` (taken modulo the length). Used to turn valid inputs into nearly valid ones.
pub fn mutate(s: &str, ops: &[(u8, usize, char)]) -> String {
    let mut chars: Vec<char> = s.chars().collect();
    for &(op, at, c) in ops {
        let at = if chars.is_empty() {
            0
        } else {
            at % (chars.len() + 1)
        };
        match op % 3 {
            0 => chars.insert(at, c),
            1 if at < chars.len() => {
                chars.remove(at);
            }
            _ if at < chars.len() => chars[at] = c,
            _ => {}
        }
    }
    chars.into_iter().collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn edits() {
        assert_eq!(
            super::mutate("abc", &[(0, 0, 'x'), (1, 1, ' '), (2, 1, 'y')]),
            "xyc"
        );
        assert_eq!(super::mutate("", &[(1, 5, 'x'), (2, 0, 'y')]), "");
    }
}
