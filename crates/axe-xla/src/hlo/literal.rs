//! Literals of `constant(...)`: each number in its element type's range, and as many elements per
//! nesting level as the shape's dims (what XLA's parser checks). A literal XLA printed elided, `{...}`
//! (large constants), is read as XLA reads it: `...` may end the first nesting level, after at most
//! as many elements as the first dim.

use super::scan::module_error;
use crate::error::Result;
use crate::shape::{Dim, Shape};
use crate::PrimitiveType;

/// The range of an integer type, or the largest finite magnitude of a narrow float type.
enum Range {
    Int(i128, i128),
    Float(f64),
    Unchecked,
}

fn range(t: PrimitiveType) -> Range {
    let name = t.name();
    let bits = i128::from(t.bits());
    if t.is_integer() && bits > 0 && bits <= 64 {
        if name.starts_with('u') {
            Range::Int(0, (1i128 << bits) - 1)
        } else {
            Range::Int(-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        }
    } else {
        match name {
            "f16" => Range::Float(65504.0),
            "bf16" => Range::Float(3.389_531_389_251_535_5e38),
            "f32" => Range::Float(f64::from(f32::MAX)),
            _ => Range::Unchecked,
        }
    }
}

/// Checks the literal `lit` (a slice of the module `text`) against `shape`.
pub(crate) fn check(text: &str, lit: &str, shape: &Shape) -> Result<()> {
    let base = (lit.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    let err = |off: usize, msg: String| module_error(text, base + off, msg);
    if let Shape::Tuple(_) = shape {
        // XLA prints a large tuple constant as `{...}` but reads tuple literals only in parentheses.
        let t = lit.trim_start();
        if !t.is_empty() && !t.starts_with('(') {
            return Err(err(
                lit.len() - t.len(),
                "a tuple literal is written in parentheses: `(...)`".into(),
            ));
        }
    }
    let Some(a) = shape.as_array() else {
        return Ok(());
    };
    let range = range(a.element_type);
    // Numbers in range.
    let b = lit.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let starts = c.is_ascii_digit()
            || ((c == b'-' || c == b'+') && b.get(i + 1).is_some_and(u8::is_ascii_digit));
        let after_word =
            i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'.');
        if !starts || after_word {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < b.len()
            && (b[i].is_ascii_alphanumeric()
                || matches!(b[i], b'.' | b'+' | b'-') && matches!(b[i - 1], b'e' | b'E')
                || b[i] == b'.')
        {
            i += 1;
        }
        let tok = &lit[start..i];
        match range {
            Range::Int(lo, hi) => {
                if let Ok(v) = tok.parse::<i128>() {
                    if v < lo || v > hi {
                        return Err(err(
                            start,
                            format!(
                                "value {tok} is out of range for {} [{lo}, {hi}]",
                                a.element_type.name()
                            ),
                        ));
                    }
                }
            }
            Range::Float(max) => {
                if let Ok(v) = tok.parse::<f64>() {
                    if v.is_finite() && v.abs() > max {
                        return Err(err(
                            start,
                            format!(
                                "value {tok} is out of range for {} [-{max}, {max}]",
                                a.element_type.name()
                            ),
                        ));
                    }
                }
            }
            Range::Unchecked => {}
        }
    }
    // Elements per level.
    let t = lit.trim_start();
    if !t.starts_with('{') || a.dims.is_empty() || a.element_type.is_complex() {
        return Ok(());
    }
    let dims: Vec<Option<i64>> = a
        .dims
        .iter()
        .map(|d| match d {
            Dim::Static(n) => Some(*n),
            _ => None,
        })
        .collect();
    let mut pos = lit.len() - t.len();
    level(lit, &mut pos, 0, &dims).map_err(|(off, msg)| err(off, msg))
}

/// Reads `{ ... }` at `pos` as nesting level `d`, checking its element count.
fn level(
    lit: &str,
    pos: &mut usize,
    d: usize,
    dims: &[Option<i64>],
) -> std::result::Result<(), (usize, String)> {
    let b = lit.as_bytes();
    let open = *pos;
    *pos += 1;
    let mut count: i64 = 0;
    let mut in_item = false;
    while *pos < b.len() {
        match b[*pos] {
            b'{' => {
                if d + 1 >= dims.len() {
                    return Err((
                        *pos,
                        format!(
                            "the literal nests deeper than the shape's {} dims",
                            dims.len()
                        ),
                    ));
                }
                level(lit, pos, d + 1, dims)?;
                in_item = true;
                continue;
            }
            b'}' => {
                if in_item {
                    count += 1;
                }
                *pos += 1;
                if let Some(want) = dims.get(d).copied().flatten() {
                    if count != want {
                        return Err((open, format!("expected {want} elements at this level of the literal, found {count}")));
                    }
                }
                return Ok(());
            }
            b',' => {
                count += 1;
                in_item = false;
            }
            b'.' if lit[*pos..].starts_with("...") => {
                // An elided literal (`{...}`, what XLA prints for large constants): only at the first
                // nesting level, and last there.
                if d != 0 {
                    return Err((
                        *pos,
                        format!(
                            "`...` (an elided literal) stands at the literal's first nesting level, not at level {}",
                            d + 1
                        ),
                    ));
                }
                let at = *pos;
                *pos += 3;
                while b.get(*pos).is_some_and(u8::is_ascii_whitespace) {
                    *pos += 1;
                }
                if b.get(*pos) != Some(&b'}') {
                    return Err((at, "`...` (an elided literal) must end its literal".into()));
                }
                *pos += 1;
                if let Some(want) = dims.first().copied().flatten() {
                    if count > want {
                        return Err((
                            open,
                            format!("expected at most {want} elements before `...`, found {count}"),
                        ));
                    }
                }
                return Ok(());
            }
            b'(' => {
                // A complex or tuple element: skip to its close.
                let mut depth = 0;
                while *pos < b.len() {
                    match b[*pos] {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    *pos += 1;
                }
                in_item = true;
            }
            c if !c.is_ascii_whitespace() => in_item = true,
            _ => {}
        }
        *pos += 1;
    }
    Err((open, "this '{' of the literal is never closed".into()))
}
