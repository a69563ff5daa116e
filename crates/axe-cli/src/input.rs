//! Command-line values: shapes, regions, multi-indices, and inputs given as arguments or `-` for stdin.

use std::io::BufRead;
use std::ops::Range;

/// A shape argument (`8,16`).
#[derive(Clone, Debug)]
pub struct Shape(pub Vec<u64>);

impl std::str::FromStr for Shape {
    type Err = String;
    fn from_str(s: &str) -> Result<Shape, String> {
        shape(s).map(Shape)
    }
}

/// A region argument (`2:6,0:8`).
#[derive(Clone, Debug)]
pub struct Region(pub Vec<Range<u64>>);

impl std::str::FromStr for Region {
    type Err = String;
    fn from_str(s: &str) -> Result<Region, String> {
        region(s).map(Region)
    }
}

/// `8,16` → `[8, 16]` (also `[8, 16]`, `(8,16)` and `8x16`).
pub fn shape(s: &str) -> Result<Vec<u64>, String> {
    let t = s
        .trim()
        .trim_start_matches(['[', '('])
        .trim_end_matches([']', ')']);
    if t.trim().is_empty() {
        return Ok(Vec::new());
    }
    t.split([',', 'x'])
        .map(|p| {
            p.trim()
                .parse::<u64>()
                .map_err(|_| format!("{p:?} in {s:?} is not a non-negative integer"))
        })
        .collect()
}

/// `2:6,0:8` → `[2..6, 0..8]`; a bare `3` means `3:4`.
pub fn region(s: &str) -> Result<Vec<Range<u64>>, String> {
    s.split(',')
        .map(|p| {
            let num = |x: &str| {
                x.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("{x:?} in region {s:?} is not an integer"))
            };
            match p.split_once(':') {
                Some((a, b)) => Ok(num(a)?..num(b)?),
                None => {
                    let a = num(p)?;
                    Ok(a..a + 1)
                }
            }
        })
        .collect()
}

/// The inputs: each argument, with `-` replaced by the non-empty lines of stdin.
pub fn expand(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for a in args {
        if a == "-" {
            out.extend(stdin_lines());
        } else {
            out.push(a.clone());
        }
    }
    out
}

fn stdin_lines() -> Vec<String> {
    std::io::stdin()
        .lock()
        .lines()
        .map_while(Result::ok)
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// Pairs for two-input verbs: `A B` as given; `-` in one place takes each stdin line there; `- -` takes
/// `A ; B` per stdin line.
pub fn pairs(a: &str, b: &str) -> Vec<Result<(String, String), String>> {
    match (a == "-", b == "-") {
        (false, false) => vec![Ok((a.to_string(), b.to_string()))],
        (true, false) => stdin_lines()
            .into_iter()
            .map(|l| Ok((l, b.to_string())))
            .collect(),
        (false, true) => stdin_lines()
            .into_iter()
            .map(|l| Ok((a.to_string(), l)))
            .collect(),
        (true, true) => stdin_lines()
            .into_iter()
            .map(|l| match l.split_once(';') {
                Some((x, y)) => Ok((x.trim().to_string(), y.trim().to_string())),
                None => Err(format!(
                    "expected two layouts separated by ';' on the line {l:?}"
                )),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_regions() {
        assert_eq!(shape("8,16").unwrap(), vec![8, 16]);
        assert_eq!(shape("[3, 5]").unwrap(), vec![3, 5]);
        assert_eq!(shape("4x4").unwrap(), vec![4, 4]);
        assert!(shape("8,-1").is_err());
        assert_eq!(region("2:6,0:8").unwrap(), vec![2..6, 0..8]);
        assert_eq!(region("3").unwrap(), vec![3..4]);
        assert!(region("a:b").is_err());
    }
}
