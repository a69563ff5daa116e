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

/// An element index argument (`2,3`, also `[2, 3]`, `(2,3)`): one integer per dimension, negative ones
/// kept so the command can say they are out of bounds.
#[derive(Clone, Debug)]
pub struct Index(pub Vec<i64>);

impl std::str::FromStr for Index {
    type Err = String;
    /// Law: `"i,j,..."` (bracketed or not, spaces allowed) → `[i, j, ...]`; blank → `[]` (a scalar).
    fn from_str(s: &str) -> Result<Index, String> {
        let t = s
            .trim()
            .trim_start_matches(['[', '('])
            .trim_end_matches([']', ')']);
        if t.trim().is_empty() {
            return Ok(Index(Vec::new()));
        }
        t.split(',')
            .map(|p| {
                p.trim()
                    .parse::<i64>()
                    .map_err(|_| format!("{p:?} in {s:?} is not an integer"))
            })
            .collect::<Result<_, _>>()
            .map(Index)
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

/// `8,16` → `[8, 16]` (also `[8, 16]`, `(8,16)`, `8x16`, and an XLA array shape such as
/// `bf16[8,16]{1,0}`, whose dimensions are taken).
pub fn shape(s: &str) -> Result<Vec<u64>, String> {
    let xla = s
        .trim()
        .find('[')
        .is_some_and(|i| i > 0 && s.trim()[..i].chars().all(|c| c.is_ascii_alphanumeric()));
    if xla {
        let parsed = axe_xla::parse_shape(s.trim()).map_err(|e| format!("{s:?}: {e}"))?;
        let a = parsed
            .as_array()
            .ok_or_else(|| format!("{s:?} is not an array shape"))?;
        return a
            .dims
            .iter()
            .map(|d| {
                d.bound()
                    .and_then(|b| u64::try_from(b).ok())
                    .ok_or_else(|| format!("{s:?} has a dynamic dimension; give its size"))
            })
            .collect();
    }
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
                    let end = a
                        .checked_add(1)
                        .ok_or_else(|| format!("{a} in region {s:?} is too large"))?;
                    Ok(a..end)
                }
            }
        })
        .collect()
}

/// One input: its text, or why it could not be read (a stdin line that is not UTF-8, a failed read).
pub type Item = Result<String, String>;

/// The inputs, streamed: each argument in turn, with `-` replaced by the lines of stdin as they arrive
/// (blank lines and `# ` comments skipped; `#ttg...` lines are layouts). Nothing is held back: a batch of millions of lines is answered
/// line by line in bounded memory.
pub fn expand(args: &[String]) -> impl Iterator<Item = Item> + '_ {
    args.iter().flat_map(|a| -> Box<dyn Iterator<Item = Item>> {
        if a == "-" {
            Box::new(StdinLines::new())
        } else {
            Box::new(std::iter::once(Ok(a.clone())))
        }
    })
}

/// Whether answers should name their input: several arguments, or a batch from stdin.
pub fn several(args: &[String]) -> bool {
    args.len() > 1 || args.iter().any(|a| a == "-")
}

/// The non-empty, non-comment lines of stdin, read one at a time. A line that is not UTF-8 is an error
/// naming its line number (the lines after it are still read); a failed read (stdin is a directory, say)
/// is an error and ends the stream.
pub struct StdinLines {
    stdin: std::io::StdinLock<'static>,
    line: u64,
    done: bool,
    buf: Vec<u8>,
}

impl StdinLines {
    /// Starts reading stdin.
    pub fn new() -> StdinLines {
        StdinLines {
            stdin: std::io::stdin().lock(),
            line: 0,
            done: false,
            buf: Vec::new(),
        }
    }
}

impl Iterator for StdinLines {
    type Item = Item;

    fn next(&mut self) -> Option<Item> {
        while !self.done {
            self.buf.clear();
            match self.stdin.read_until(b'\n', &mut self.buf) {
                Ok(0) => self.done = true,
                Ok(_) => {
                    self.line += 1;
                    let Ok(text) = std::str::from_utf8(&self.buf) else {
                        return Some(Err(format!("stdin line {} is not UTF-8 text", self.line)));
                    };
                    let t = text.trim();
                    if !t.is_empty() && !is_comment(t) {
                        return Some(Ok(t.to_string()));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(format!("reading stdin: {e}")));
                }
            }
        }
        None
    }
}

/// A comment line: `#` alone or followed by a space (`# note`). `#ttg.linear<...>`, `#blocked = ...`
/// and other `#` words are layouts (TTGIR attributes), not comments.
fn is_comment(line: &str) -> bool {
    line.strip_prefix('#')
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
}

/// Pairs for two-input verbs, streamed: `A B` as given; `-` in one place takes each stdin line there;
/// `- -` takes `A ; B` per stdin line.
pub fn pairs<'a>(
    a: &'a str,
    b: &'a str,
) -> Box<dyn Iterator<Item = Result<(String, String), String>> + 'a> {
    match (a == "-", b == "-") {
        (false, false) => Box::new(std::iter::once(Ok((a.to_string(), b.to_string())))),
        (true, false) => Box::new(StdinLines::new().map(move |l| Ok((l?, b.to_string())))),
        (false, true) => Box::new(StdinLines::new().map(move |l| Ok((a.to_string(), l?)))),
        (true, true) => Box::new(StdinLines::new().map(|l| {
            let l = l?;
            match l.split_once(';') {
                Some((x, y)) => Ok((x.trim().to_string(), y.trim().to_string())),
                None => Err(format!(
                    "expected two inputs separated by ';' (A ; B) on the line {l:?}"
                )),
            }
        })),
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
        assert!(region("18446744073709551615").is_err());
    }
}
