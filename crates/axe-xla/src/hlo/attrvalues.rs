//! The values of some per-opcode attributes, read as XLA's parser reads them (checked against jaxlib
//! 0.10.2): `channel_id=` (an integer), `padding=` of a `pad` (`lo_hi[_interior]` per dimension, joined by
//! `x`), `window=` (`{size=2x2 stride=1x1 pad=0_0x1_1 lhs_dilate=.. rhs_dilate=.. rhs_reversal=..}`) and
//! `dim_labels=` (`b01f_01io->b01f`). XLA's parser checks no dimension count against the operands here
//! (shape inference does that later), so neither does this. Each check answers the offset in the value
//! where it stopped and why.

use super::attrcheck::Bad;

/// Checks the value of attribute `name` if it is one of those this module reads (see the module doc).
pub(crate) fn check(name: &str, value: &str) -> Result<(), Bad> {
    match name {
        "channel_id" => channel_id(value),
        "padding" => padding(value),
        "window" => window(value),
        "dim_labels" => dim_labels(value),
        _ => Ok(()),
    }
}

/// `-?[0-9]+`, the integers XLA's lexer reads (no `+`, no hex, no fraction).
fn is_int(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())
}

/// `[0-9]+`.
fn is_count(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())
}

/// `channel_id=`: an integer. Law: `Ok` exactly for `-?[0-9]+` (surrounding blanks aside).
pub(crate) fn channel_id(value: &str) -> Result<(), Bad> {
    if is_int(value.trim()) {
        Ok(())
    } else {
        Err((
            0,
            format!("channel_id takes an integer, found `{}`", value.trim()),
        ))
    }
}

/// `padding=` of a `pad`: per dimension `low_high` or `low_high_interior`, dimensions joined by `x`
/// (`1_1x0_0_1`); low and high may be negative, interior not. Law: `Ok` exactly for
/// `P ('x' P)*` with `P := INT '_' INT ('_' [0-9]+)?` (surrounding blanks aside).
pub(crate) fn padding(value: &str) -> Result<(), Bad> {
    let v = value.trim();
    let ok = v.split('x').all(|dim| {
        let parts: Vec<&str> = dim.split('_').collect();
        matches!(parts.len(), 2 | 3)
            && is_int(parts[0])
            && is_int(parts[1])
            && parts.get(2).is_none_or(|i| is_count(i))
    });
    if ok {
        Ok(())
    } else {
        Err((
            0,
            format!("`{v}` is not a padding config: low_high or low_high_interior per dimension, joined by 'x' (0_0_0x3_3_1)"),
        ))
    }
}

/// The keys of a `window={...}`.
const WINDOW_KEYS: [&str; 6] = [
    "size",
    "stride",
    "pad",
    "lhs_dilate",
    "rhs_dilate",
    "rhs_reversal",
];

/// `window={...}`: `key=value` pairs separated by blanks, each key one of `size`, `stride`, `pad`,
/// `lhs_dilate`, `rhs_dilate`, `rhs_reversal` and given once; `pad` is `lo_hi` per dimension, the others
/// integers per dimension, dimensions joined by `x`; every list as long as `size`'s (so no list without
/// `size`). Law: `Ok` exactly for such a value; the error's offset is at the pair (or the brace) at fault.
pub(crate) fn window(value: &str) -> Result<(), Bad> {
    let start = value.len() - value.trim_start().len();
    let v = value.trim();
    let Some(inner) = v.strip_prefix('{').and_then(|s| s.strip_suffix('}')) else {
        return Err((
            start,
            "window takes {size=... stride=... pad=...}".to_string(),
        ));
    };
    let base = start + 1;
    let mut seen: [Option<(usize, usize)>; 6] = [None; 6];
    let mut at = 0;
    for pair in inner.split([' ', '\t', '\n', '\r']) {
        let off = base + at;
        at += pair.len() + 1;
        if pair.is_empty() {
            continue;
        }
        let Some((key, val)) = pair.split_once('=') else {
            return Err((off, format!("window takes key=value pairs, found `{pair}`")));
        };
        let Some(k) = WINDOW_KEYS.iter().position(|w| *w == key) else {
            return Err((
                off,
                format!(
                    "window has no key {key}: its keys are {}",
                    WINDOW_KEYS.join(", ")
                ),
            ));
        };
        if seen[k].is_some() {
            return Err((off, format!("window gives {key}= twice")));
        }
        let dims: Vec<&str> = val.split('x').collect();
        let ok = dims.iter().all(|d| {
            if key == "pad" {
                d.split_once('_')
                    .is_some_and(|(lo, hi)| is_int(lo) && is_int(hi))
            } else {
                is_int(d)
            }
        });
        if !ok {
            let want = if key == "pad" {
                "low_high per dimension, joined by 'x' (0_0x1_1)"
            } else {
                "an integer per dimension, joined by 'x' (2x2)"
            };
            return Err((off + key.len() + 1, format!("window {key}= takes {want}")));
        }
        seen[k] = Some((off, dims.len()));
    }
    let size = seen[0].map(|(_, n)| n);
    for (k, s) in seen.iter().enumerate().skip(1) {
        if let Some((off, n)) = *s {
            if size != Some(n) {
                return Err((
                    off,
                    format!(
                        "window {}= has {n} dimension(s), size= {}",
                        WINDOW_KEYS[k],
                        size.map_or("is missing".to_string(), |m| format!("has {m}"))
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// `dim_labels=` of a convolution: `LHS_RHS->OUT`, the input's labels (`b`, `f` and spatial digits), the
/// kernel's (`i`, `o` and digits) and the output's (`b`, `f` and digits), each at least two, none twice
/// in a part, as many digits in the three. Law: `Ok` exactly for such a value (`?` taken as a label
/// XLA's lexer allows).
pub(crate) fn dim_labels(value: &str) -> Result<(), Bad> {
    let v = value.trim();
    let pattern = || {
        (
            0,
            format!("`{v}` is not a dim labels pattern such as b01f_01io->b01f"),
        )
    };
    let (lhs, rest) = v.split_once('_').ok_or_else(pattern)?;
    let (rhs, out) = rest.split_once("->").ok_or_else(pattern)?;
    let fits = |part: &str, letters: &[u8]| {
        part.len() >= 2
            && part
                .bytes()
                .all(|c| c.is_ascii_digit() || c == b'?' || letters.contains(&c))
    };
    if !(fits(lhs, b"bf") && fits(rhs, b"io") && fits(out, b"bf")) {
        return Err(pattern());
    }
    for (what, part) in [("input", lhs), ("kernel", rhs), ("output", out)] {
        let b = part.as_bytes();
        if (1..b.len()).any(|i| b[i] != b'?' && b[..i].contains(&b[i])) {
            return Err((
                0,
                format!("the {what} labels {part} name a dimension twice"),
            ));
        }
    }
    let spatial = |p: &str| p.bytes().filter(u8::is_ascii_digit).count();
    let (l, r, o) = (spatial(lhs), spatial(rhs), spatial(out));
    if l != r || r != o {
        return Err((
            0,
            format!("dim labels {v}: input, kernel and output have {l}, {r} and {o} spatial dimensions; they must have as many"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values jaxlib 0.10.2's parser accepts and refuses.
    #[test]
    fn values_as_jaxlib_reads_them() {
        for ok in ["1", "0", "-1", "9223372036854775808"] {
            assert!(channel_id(ok).is_ok(), "{ok}");
        }
        for bad in ["abc", "1.5", "+1", "0x1", "{1}", "\"1\""] {
            assert!(channel_id(bad).is_err(), "{bad}");
        }
        for ok in ["1_1", "1_1_1", "1_1x0_0", "-1_1", " 1_1", "1_1x0_0_1"] {
            assert!(padding(ok).is_ok(), "{ok}");
        }
        for bad in ["1_1_1_1", "1", "a_b", "1__1", "{1_1}", "0_0_-1"] {
            assert!(padding(bad).is_err(), "{bad}");
        }
        for ok in [
            "{size=2 stride=2}",
            "{size=2}",
            "{}",
            "{size=2 stride=2 pad=0_0 lhs_dilate=1 rhs_dilate=1 rhs_reversal=0}",
            "{size=2x2}",
            "{size=-2}",
            "{ size=2 }",
            "{size=2 pad=-1_1}",
            "{size=3x3 stride=2x2 pad=0_1x0_1}",
        ] {
            assert!(window(ok).is_ok(), "{ok}");
        }
        for (bad, at) in [
            ("{size=2 strid=2}", 8),
            ("{stride=2}", 1),
            ("{size=2,stride=2}", 6),
            ("{size=a}", 6),
            ("{size=2 size=2}", 8),
            ("{size=2 pad=0}", 12),
            ("{size=2 pad=0_0_0}", 12),
            ("size=2", 0),
            ("{size=2x2 stride=2}", 10),
        ] {
            assert_eq!(window(bad).map_err(|e| e.0), Err(at), "{bad}");
        }
        for ok in [
            "b01f_01io->b01f",
            "bf01_oi01->bf01",
            "b01f_01oi->b01f",
            "b0f_0io->b0f",
            "bf_io->bf",
            "b10f_10io->b10f",
            "b01f_01io->f01b",
            "b012f_012io->b012f",
            "b02f_01io->b01f",
        ] {
            assert!(dim_labels(ok).is_ok(), "{ok}");
        }
        for bad in [
            "b01q_01io->b01f",
            "b01f_01io->b0f",
            "b01f_01io->b01f1",
            "b01f_01io",
            "b01f-01io->b01f",
            "b01f_01io->b012f",
            "bb01_01io->b01f",
            "b01f_01ii->b01f",
            "B01f_01io->b01f",
            "b01f_01io-> b01f",
            "\"b01f_01io->b01f\"",
        ] {
            assert!(dim_labels(bad).is_err(), "{bad}");
        }
    }
}
