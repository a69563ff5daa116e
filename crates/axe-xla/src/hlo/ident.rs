//! The names HLO text gives modules, computations and instructions, as XLA's lexer reads them.
//!
//! ```text
//! name := '%'? [A-Za-z_] [A-Za-z0-9_.-]*
//! ```
//!
//! Without the `%`, a keyword of the text (`true`, `ROOT`, `maximal`, ...) or an element type (`f32`,
//! `token`) is read as that word, never as a name; an instruction is never named after an element type,
//! even with the `%` (XLA: "illegal instruction name").

/// What a name names (the checks differ a little).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Named {
    Module,
    Computation,
    Instruction,
}

impl Named {
    fn what(self) -> &'static str {
        match self {
            Named::Module => "a module name",
            Named::Computation => "a computation name",
            Named::Instruction => "an instruction name",
        }
    }
}

/// The words XLA's lexer reads as keywords wherever they stand (checked against jaxlib 0.10.2: each is
/// refused as a module, computation and instruction name). [`is_keyword`] holds them as a table by
/// length and first byte; the tests hold the two equal.
#[cfg(test)]
const KEYWORDS: &[&str] = &[
    "true",
    "false",
    "inf",
    "nan",
    "HloModule",
    "ENTRY",
    "ROOT",
    "maximal",
    "replicated",
    "manual",
    "unknown",
    "unreduced",
    "shard_as",
    "shard_like",
    "last_tile_dim_replicate",
];

/// The bytes of a name after its first: letters, digits, `_`, `.`, `-` (the bytes of opcodes).
const REST: [bool; 256] = super::scan::OPCODE_BYTES;

/// Whether `bare` is a keyword of the text (`KEYWORDS`); most names are ruled out by their length and first byte
/// alone (this runs on every instruction of a dump).
#[inline]
fn is_keyword(bare: &str) -> bool {
    let b = bare.as_bytes();
    // Each (length, first byte) names one keyword at most.
    let candidate = match (b.len(), b.first()) {
        (4, Some(b't')) => "true",
        (5, Some(b'f')) => "false",
        (3, Some(b'i')) => "inf",
        (3, Some(b'n')) => "nan",
        (9, Some(b'H')) => "HloModule",
        (5, Some(b'E')) => "ENTRY",
        (4, Some(b'R')) => "ROOT",
        (7, Some(b'm')) => "maximal",
        (10, Some(b'r')) => "replicated",
        (6, Some(b'm')) => "manual",
        (7, Some(b'u')) => "unknown",
        (9, Some(b'u')) => "unreduced",
        (8, Some(b's')) => "shard_as",
        (10, Some(b's')) => "shard_like",
        (23, Some(b'l')) => "last_tile_dim_replicate",
        _ => return false,
    };
    bare == candidate
}

/// Whether `b` holds a `%` or a `$`, looked for eight bytes at a time (a short name, or the last bytes
/// of a long one, in one word: padded, or overlapping the word before).
#[inline]
fn has_sigil(b: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let hit = |w: [u8; 8]| {
        let w = u64::from_le_bytes(w);
        let p = w ^ (ONES * u64::from(b'%'));
        let d = w ^ (ONES * u64::from(b'$'));
        // A zero byte of `p` or `d` sets its high bit here (flags above it may be borrows: any is one).
        ((p.wrapping_sub(ONES) & !p) | (d.wrapping_sub(ONES) & !d)) & HIGHS != 0
    };
    let word = |at: usize| <[u8; 8]>::try_from(&b[at..at + 8]).unwrap_or_default();
    if b.len() < 8 {
        let mut w = [b'a'; 8];
        w[..b.len()].copy_from_slice(b);
        return hit(w);
    }
    let mut at = 0;
    while at + 8 < b.len() {
        if hit(word(at)) {
            return true;
        }
        at += 8;
    }
    hit(word(b.len() - 8))
}

/// [`check`] of a name the reader scanned (`Reader::name`: every byte a letter, a digit or one of
/// `_ . - % $`), where only a `%` or `$` after the first byte, the first byte, or the word can be
/// wrong: the same answer as [`check`], sooner.
#[inline]
pub(crate) fn check_scanned(name: &str, named: Named) -> Result<(), (usize, String)> {
    let b = name.as_bytes();
    let (start, first) = match b {
        [b'%', c, ..] => (1, *c),
        [c, ..] => (0, *c),
        [] => return check(name, named),
    };
    let bare = &name[start..];
    if !(first.is_ascii_alphabetic() || first == b'_')
        || has_sigil(&b[start + 1..])
        || (start == 0 && is_keyword(bare))
        || ((start == 0 || named == Named::Instruction)
            && crate::PrimitiveType::from_name(bare).is_some())
    {
        return check(name, named);
    }
    Ok(())
}

/// Checks `name` (as written, with its `%` if any) as XLA's lexer reads the name of a `named`.
///
/// Contract: `Ok` exactly when `name` matches the grammar of the module doc and, without `%`, is neither a
/// keyword nor an element type name, and, for an instruction, the part after `%` is not an element type
/// name. Otherwise the byte offset within `name` of the first wrong character (0, the name's start, for
/// a wrong first character or word, as XLA reports it) and why.
pub(crate) fn check(name: &str, named: Named) -> Result<(), (usize, String)> {
    let (bare, start) = match name.strip_prefix('%') {
        Some(rest) => (rest, 1),
        None => (name, 0),
    };
    let b = bare.as_bytes();
    let first_ok = b
        .first()
        .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_');
    if !first_ok {
        let found = match bare.chars().next() {
            Some(c) => format!("{c:?}"),
            None => "nothing".to_string(),
        };
        // At the name's start, `%` and all, where XLA's lexer reports it.
        return Err((
            0,
            format!(
                "expected {}: a letter or '_', then letters, digits, '_', '.' or '-'; found {found}",
                named.what()
            ),
        ));
    }
    if let Some(k) = b.iter().position(|&c| !REST[usize::from(c)]) {
        let c = bare[k..].chars().next().unwrap_or_default();
        return Err((
            start + k,
            format!(
                "{c:?} cannot be part of {} (letters, digits, '_', '.' and '-' only)",
                named.what()
            ),
        ));
    }
    if start == 0 && is_keyword(bare) {
        return Err((
            0,
            format!("expected {}, found the keyword {bare:?}", named.what()),
        ));
    }
    if (start == 0 || named == Named::Instruction)
        && crate::PrimitiveType::from_name(bare).is_some()
    {
        return Err((
            0,
            format!("expected {}, found the element type {bare:?}", named.what()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{check, check_scanned, Named};
    use proptest::prelude::*;

    #[test]
    fn names_as_jaxlib_reads_them() {
        // Accepted and refused by jaxlib 0.10.2 (`hlo_module_from_text`), as instruction names.
        for ok in [
            "p", "_p", "p.1", "p-1", "P1", "%p", "%_p", "%ROOT", "%true", "constant", "kLoop",
        ] {
            assert_eq!(check(ok, Named::Instruction), Ok(()), "{ok}");
        }
        for (bad, at) in [
            ("1p", 0),
            ("-p", 0),
            (".p", 0),
            ("p$", 1),
            ("$p", 0),
            ("p%", 1),
            ("%%p", 0),
            ("%1p", 0),
            ("ROOT", 0),
            ("true", 0),
            ("f32", 0),
            ("%f32", 0),
            ("p:q", 1),
            ("é", 0),
            ("m\0", 1),
        ] {
            assert_eq!(
                check(bad, Named::Instruction).map_err(|e| e.0),
                Err(at),
                "{bad}"
            );
        }
        // Every keyword, whatever its length and first byte, and not after `%`.
        for k in super::KEYWORDS {
            assert!(
                check(k, Named::Module).unwrap_err().1.contains("keyword"),
                "{k}"
            );
            assert_eq!(check(&format!("%{k}"), Named::Module), Ok(()), "{k}");
        }
        // An element type after `%` names a computation or a module.
        assert_eq!(check("%f32", Named::Computation), Ok(()));
        assert!(check("f32", Named::Module).is_err());
        assert!(check("\"m\"", Named::Module)
            .unwrap_err()
            .1
            .contains("'\"'"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Law: a name is accepted exactly when it matches `%?[A-Za-z_][A-Za-z0-9_.-]*` and is no
        /// keyword or element type, and the offset of a refusal is the first byte outside the grammar
        /// (the name's start when its first character is wrong).
        #[test]
        fn grammar(pct in any::<bool>(), name in "[A-Za-z_0-9.$-][A-Za-z0-9_.$%-]{0,14}") {
            let written = if pct { format!("%{name}") } else { name.clone() };
            let start = usize::from(pct);
            let b = name.as_bytes();
            let bad_first = !(b[0].is_ascii_alphabetic() || b[0] == b'_');
            let bad_rest = b.iter().skip(1).position(|&c| !(c.is_ascii_alphanumeric() || b"_.-".contains(&c)));
            let word = crate::PrimitiveType::from_name(&name).is_some()
                || super::KEYWORDS.contains(&name.as_str());
            let got = check(&written, Named::Computation).map_err(|e| e.0);
            // The reader's shortcut answers the same for what the reader scans.
            prop_assert_eq!(check_scanned(&written, Named::Computation), check(&written, Named::Computation));
            prop_assert_eq!(check_scanned(&written, Named::Instruction), check(&written, Named::Instruction));
            if bad_first {
                prop_assert_eq!(got, Err(0));
            } else if let Some(k) = bad_rest {
                prop_assert_eq!(got, Err(start + 1 + k));
            } else if word && !pct {
                prop_assert_eq!(got, Err(0));
            } else {
                prop_assert_eq!(got, Ok(()));
            }
        }
    }
}
