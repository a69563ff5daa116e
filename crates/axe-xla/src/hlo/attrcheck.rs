//! The values of the attributes every instruction may carry, read as XLA's parser reads them:
//! `metadata={op_name="..." source_line=3 ...}` (known keys, each once, each of its kind),
//! `frontend_attributes={key="value", ...}` and `statistics={visualizing_index=1, stat=0.5, ...}`.
//! Each check answers the offset in the value where it stopped and why.

/// A failed check: the offset in the value and what was wrong.
pub(crate) type Bad = (usize, String);

/// The attributes any instruction may carry, whatever its opcode.
pub(crate) fn is_common(name: &str) -> bool {
    matches!(
        name,
        "metadata"
            | "sharding"
            | "backend_config"
            | "frontend_attributes"
            | "statistics"
            | "control-predecessors"
            | "parameter_replication"
            | "origin"
            | "original_value"
    )
}

/// The kinds of metadata values.
#[derive(Clone, Copy)]
enum Kind {
    Str,
    Int32,
    IntList,
    Bool,
}

/// The metadata key `rest` starts with, followed by '=': its length, its index (for the seen-once
/// check) and kind. Dispatched on the first byte, then compared at fixed sizes, most frequent first (this
/// runs on every instruction of a dump).
fn key(rest: &[u8]) -> Option<(usize, u32, Kind)> {
    let at = |lit: &[u8]| rest.get(lit.len()) == Some(&b'=') && rest.starts_with(lit);
    let (lit, k, kind): (&[u8], u32, Kind) = match rest.first()? {
        b'o' if is7(rest, b"op_name") => (b"op_name", 1, Kind::Str),
        b'o' if is7(rest, b"op_type") => (b"op_type", 0, Kind::Str),
        b's' if at(b"source_line") => (b"source_line", 3, Kind::Int32),
        b's' if at(b"source_file") => (b"source_file", 2, Kind::Str),
        b's' if at(b"stack_frame_id") => (b"stack_frame_id", 11, Kind::Int32),
        b's' if at(b"source_end_line") => (b"source_end_line", 4, Kind::Int32),
        b's' if at(b"source_column") => (b"source_column", 5, Kind::Int32),
        b's' if at(b"source_end_column") => (b"source_end_column", 6, Kind::Int32),
        b's' if at(b"scheduling_name") => (b"scheduling_name", 10, Kind::Str),
        b'p' if at(b"profile_type") => (b"profile_type", 7, Kind::IntList),
        b'p' if at(b"preserve_layout") => (b"preserve_layout", 9, Kind::Bool),
        b'd' if at(b"deduplicated_name") => (b"deduplicated_name", 8, Kind::Str),
        _ => return None,
    };
    Some((lit.len(), k, kind))
}

/// `rest` starts with the 7-byte `lit` and '=' (one 8-byte comparison).
#[inline]
fn is7(rest: &[u8], lit: &[u8; 7]) -> bool {
    rest.get(..8)
        .is_some_and(|r| r[..7] == lit[..] && r[7] == b'=')
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    #[inline]
    fn blanks(&mut self) {
        while self
            .b
            .get(self.i)
            .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn bad<T>(&self, why: impl Into<String>) -> Result<T, Bad> {
        Err((self.i.min(self.b.len()), why.into()))
    }

    fn expect(&mut self, c: u8, why: &str) -> Result<(), Bad> {
        self.blanks();
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            self.bad(why)
        }
    }

    /// `name=`: XLA's attribute name token (a letter or `_`, then letters, digits, `_`, `.`, `-`).
    fn name(&mut self) -> Result<&'a [u8], Bad> {
        self.blanks();
        let start = self.i;
        if !self
            .peek()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        {
            return self.bad("expected an attribute name=");
        }
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
        {
            self.i += 1;
        }
        let end = self.i;
        if self.peek() != Some(b'=') {
            return self.bad("expected '=' after the attribute name");
        }
        self.i += 1;
        let b: &'a [u8] = self.b;
        Ok(&b[start..end])
    }

    /// A quoted string with backslash escapes.
    #[inline]
    fn string(&mut self) -> Result<(), Bad> {
        if self.peek() != Some(b'"') {
            self.blanks();
        }
        if self.peek() != Some(b'"') {
            return self.bad("expected a string");
        }
        self.i += 1;
        while let Some(k) = super::scan::quote_or_escape(self.b, self.i) {
            self.i = k + 1;
            if self.b[self.i - 1] == b'"' {
                return Ok(());
            }
            self.i += 1;
        }
        self.i = self.b.len();
        self.bad("unterminated string")
    }

    /// An integer; its value, where it fits an `i64`.
    #[inline]
    fn int(&mut self) -> Result<Option<i64>, Bad> {
        self.blanks();
        let start = self.i;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.i += 1;
        }
        let digits = self.i;
        let mut v: Option<i64> = Some(0);
        while let Some(d) = self.peek().filter(u8::is_ascii_digit) {
            v = v
                .and_then(|v| v.checked_mul(10))
                .and_then(|v| v.checked_add(i64::from(d - b'0')));
            self.i += 1;
        }
        if self.i == digits {
            self.i = start;
            return self.bad("expected an integer");
        }
        Ok(if negative { v.map(|v| -v) } else { v })
    }

    /// A number: an integer or a decimal (`0.5`, `-1e-3`, `inf`, `nan`).
    fn number(&mut self) -> Result<(), Bad> {
        self.blanks();
        let start = self.i;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'+' | b'.'))
        {
            self.i += 1;
        }
        let ok = std::str::from_utf8(&self.b[start..self.i])
            .ok()
            .is_some_and(|s| s.parse::<f64>().is_ok());
        if ok {
            Ok(())
        } else {
            self.i = start;
            self.bad("expected a number")
        }
    }
}

/// `metadata={...}`: keys XLA knows, each at most once, each value of its kind (a string, an `int32`, a
/// `{...}` list of integers, `true`/`false`), separated by blanks or commas; nothing after it.
pub(crate) fn metadata(value: &str) -> Result<(), Bad> {
    let end = metadata_len(value)?;
    if value[end..].trim().is_empty() {
        Ok(())
    } else {
        Err((end, "junk after the metadata".into()))
    }
}

/// The length of the metadata `{...}` that `text` starts with, checked as [`metadata`] checks it.
pub(crate) fn metadata_len(value: &str) -> Result<usize, Bad> {
    match plain_metadata_len(value.as_bytes()) {
        Some(len) => Ok(len),
        None => metadata_len_slowly(value),
    }
}

/// The length of the metadata `{...}` that `b` starts with, where it is written as XLA prints it and
/// checks: `{`, then known keys each once, each `=` and a string or an integer of at most nine digits,
/// one space between them, then `}`. `None` for anything else (not necessarily wrong: the general
/// reading decides). Where it answers, [`metadata_len_slowly`] answers the same length.
fn plain_metadata_len(b: &[u8]) -> Option<usize> {
    if b.first() != Some(&b'{') {
        return None;
    }
    let mut i = 1;
    let mut seen = 0u16;
    loop {
        if b.get(i) == Some(&b'}') {
            return Some(i + 1);
        }
        let (e, k, kind) = plain_key(b, i)?;
        if seen & (1 << k) != 0 {
            return None;
        }
        seen |= 1 << k;
        i += e + 1;
        match kind {
            Kind::Str => {
                if b.get(i) != Some(&b'"') {
                    return None;
                }
                let mut j = i + 1;
                loop {
                    let q = super::scan::quote_or_escape(b, j)?;
                    if b[q] == b'"' {
                        i = q + 1;
                        break;
                    }
                    j = q + 2;
                }
            }
            Kind::Int32 => {
                let from = i + usize::from(b.get(i) == Some(&b'-'));
                let mut end = from;
                while end < b.len() && b[end].is_ascii_digit() {
                    end += 1;
                }
                // Nine digits at most: always an int32.
                if end == from || end - from > 9 {
                    return None;
                }
                i = end;
            }
            Kind::IntList | Kind::Bool => return None,
        }
        match b.get(i) {
            Some(b' ') => i += 1,
            Some(b'}') => return Some(i + 1),
            _ => return None,
        }
    }
}

/// [`key`] of the text at `b[i..]`, the four keys every dump writes compared as 8-byte words first.
#[inline]
fn plain_key(b: &[u8], i: usize) -> Option<(usize, u32, Kind)> {
    const OP_NAME: u64 = u64::from_le_bytes(*b"op_name=");
    const OP_TYPE: u64 = u64::from_le_bytes(*b"op_type=");
    const SOURCE_F: u64 = u64::from_le_bytes(*b"source_f");
    const SOURCE_L: u64 = u64::from_le_bytes(*b"source_l");
    let rest = b.get(i..)?;
    let word = rest
        .get(..8)
        .and_then(|w| <[u8; 8]>::try_from(w).ok())
        .map(u64::from_le_bytes);
    let tail = rest.get(8..12);
    match word {
        Some(OP_NAME) => Some((7, 1, Kind::Str)),
        Some(OP_TYPE) => Some((7, 0, Kind::Str)),
        Some(SOURCE_F) if tail == Some(b"ile=") => Some((11, 2, Kind::Str)),
        Some(SOURCE_L) if tail == Some(b"ine=") => Some((11, 3, Kind::Int32)),
        _ => key(rest),
    }
}

/// [`metadata_len`], however the metadata is written.
fn metadata_len_slowly(value: &str) -> Result<usize, Bad> {
    let mut c = Cursor {
        b: value.as_bytes(),
        i: 0,
    };
    c.expect(b'{', "metadata is {key=value ...}")?;
    let mut seen = 0u16;
    loop {
        c.blanks();
        if c.peek() == Some(b',') {
            c.i += 1;
            c.blanks();
        }
        if c.peek() == Some(b'}') {
            c.i += 1;
            break;
        }
        let at = c.i;
        // A known key followed by '='; anything else is read as a name for the error.
        let rest: &[u8] = c.b.get(c.i..).unwrap_or_default();
        let Some((e, k, kind)) = self::key(rest) else {
            let name = c.name()?;
            return Err((
                at,
                format!("metadata has no key {}", String::from_utf8_lossy(name)),
            ));
        };
        let name = &rest[..e];
        c.i += e + 1;
        let key = || String::from_utf8_lossy(name);
        if seen & (1 << k) != 0 {
            return Err((at, format!("metadata key {} is given twice", key())));
        }
        seen |= 1 << k;
        match kind {
            Kind::Str => c
                .string()
                .map_err(|(i, _)| (i, format!("metadata {} takes a string", key())))?,
            Kind::Int32 => {
                let v = c
                    .int()
                    .map_err(|(i, _)| (i, format!("metadata {} takes an integer", key())))?;
                if v.and_then(|v| i32::try_from(v).ok()).is_none() {
                    return Err((at, format!("metadata {} is out of range for int32", key())));
                }
            }
            Kind::IntList => {
                c.expect(b'{', "profile_type is a list {1, 2}")?;
                c.blanks();
                if c.peek() != Some(b'}') {
                    loop {
                        c.int()?;
                        c.blanks();
                        if c.peek() != Some(b',') {
                            break;
                        }
                        c.i += 1;
                    }
                }
                c.expect(b'}', "profile_type is a list {1, 2}")?;
            }
            Kind::Bool => {
                c.blanks();
                let rest = &c.b[c.i..];
                if rest.starts_with(b"true") {
                    c.i += 4;
                } else if rest.starts_with(b"false") {
                    c.i += 5;
                } else {
                    return c.bad(format!("metadata {} takes true or false", key()));
                }
            }
        }
    }
    Ok(c.i)
}

/// `frontend_attributes={key="value", ...}`: names, each with a string or a `{...}` dict.
pub(crate) fn frontend_attributes(value: &str) -> Result<(), Bad> {
    let mut c = Cursor {
        b: value.as_bytes(),
        i: 0,
    };
    c.expect(b'{', "frontend_attributes is {key=\"value\", ...}")?;
    c.blanks();
    if c.peek() != Some(b'}') {
        loop {
            c.name()?;
            c.blanks();
            match c.peek() {
                Some(b'"') => c.string()?,
                Some(b'{') => {
                    // A dict: balanced braces, strings skipped.
                    let mut depth = 0usize;
                    loop {
                        match c.peek() {
                            None => return c.bad("unclosed '{'"),
                            Some(b'"') => c.string()?,
                            Some(b'{') => {
                                depth += 1;
                                c.i += 1;
                            }
                            Some(b'}') => {
                                depth -= 1;
                                c.i += 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            Some(_) => c.i += 1,
                        }
                    }
                }
                _ => return c.bad("a frontend attribute's value is a string"),
            }
            c.blanks();
            if c.peek() != Some(b',') {
                break;
            }
            c.i += 1;
        }
    }
    c.expect(b'}', "expected ',' or '}' in frontend_attributes")?;
    c.blanks();
    if c.i < c.b.len() {
        return c.bad("junk after frontend_attributes");
    }
    Ok(())
}

/// `statistics={visualizing_index=N, name=number, ...}`: the index an integer, each statistic a number.
pub(crate) fn statistics(value: &str) -> Result<(), Bad> {
    let mut c = Cursor {
        b: value.as_bytes(),
        i: 0,
    };
    c.expect(b'{', "statistics is {visualizing_index=N, name=value, ...}")?;
    c.blanks();
    if c.peek() != Some(b'}') {
        c.name()?;
        c.int()
            .map_err(|(i, _)| (i, "the statistic to visualize is an integer".to_string()))?;
        loop {
            c.blanks();
            if c.peek() != Some(b',') {
                break;
            }
            c.i += 1;
            c.name()?;
            c.number()?;
        }
    }
    c.expect(b'}', "expected ',' or '}' in statistics")?;
    c.blanks();
    if c.i < c.b.len() {
        return c.bad("junk after statistics");
    }
    Ok(())
}

/// `control-predecessors={a, b}`: the names, in a braced list.
pub(crate) fn names(value: &str) -> Result<Vec<(usize, &str)>, Bad> {
    let v = value.trim_end();
    let Some(inner) = v.strip_prefix('{').and_then(|s| s.strip_suffix('}')) else {
        return Err((0, "control-predecessors is a list {a, b}".into()));
    };
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let mut at = 1;
    for piece in inner.split(',') {
        let name = piece.trim();
        let lead = piece.len() - piece.trim_start().len();
        if name.is_empty() {
            return Err((at + lead, "expected an instruction name".into()));
        }
        out.push((at + lead, name));
        at += piece.len() + 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn metadata_keys_and_kinds() {
        assert!(metadata("{}").is_ok());
        assert!(metadata(r#"{op_type="Add" op_name="jit(f)/add" source_file="a \"b\".py" source_line=3 stack_frame_id=2}"#).is_ok());
        assert!(metadata(
            r#"{op_name="x", source_line=1, profile_type={1, 2}, preserve_layout=true}"#
        )
        .is_ok());
        let (at, why) = metadata("{op_name=3}").unwrap_err();
        assert_eq!((at, why.as_str()), (9, "metadata op_name takes a string"));
        let (at, why) = metadata(r#"{op_name="a" colour="x"}"#).unwrap_err();
        assert_eq!((at, why.as_str()), (13, "metadata has no key colour"));
        assert!(metadata(r#"{op_name="a" op_name="b"}"#)
            .unwrap_err()
            .1
            .contains("twice"));
        assert!(metadata("{source_line=4294967296}")
            .unwrap_err()
            .1
            .contains("int32"));
        assert!(metadata("{source_line=x}")
            .unwrap_err()
            .1
            .contains("integer"));
        assert!(metadata("{preserve_layout=maybe}").is_err());
        assert!(metadata(r#"{op_name="a}"#).is_err());
        assert!(metadata(r#"{op_name="a"} x"#).is_err());
    }

    /// Texts that look like metadata, written plainly or nearly so.
    fn metadata_like() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            Just("op_name"),
            Just("op_type"),
            Just("source_file"),
            Just("source_line"),
            Just("stack_frame_id"),
            Just("preserve_layout"),
            Just("colour"),
        ];
        let value = prop_oneof![
            "\"[a-z/\\\\\"(). ]{0,12}\"",
            "-?[0-9]{1,11}",
            "[a-z0-9]{0,3}",
            Just("true".to_string()),
            Just("{1, 2}".to_string()),
        ];
        let sep = prop_oneof![
            Just(" "),
            Just(" "),
            Just(", "),
            Just("  "),
            Just(""),
            Just("\n")
        ];
        proptest::collection::vec((key, value, sep), 0..5).prop_map(|kvs| {
            let mut s = String::from("{");
            for (k, v, sep) in kvs {
                s.push_str(&format!("{k}={v}{sep}"));
            }
            if s.ends_with(' ') && s.len() % 3 == 0 {
                s.pop();
            }
            s.push_str("} x");
            s
        })
    }

    proptest! {
        /// The plain reading answers only where the general one finds the same length.
        #[test]
        fn plain_metadata_reads_as_the_general_reading(text in metadata_like()) {
            if let Some(len) = plain_metadata_len(text.as_bytes()) {
                prop_assert_eq!(metadata_len_slowly(&text), Ok(len));
            }
            prop_assert_eq!(metadata_len(&text), metadata_len_slowly(&text));
        }
    }

    proptest! {
        /// The word comparisons find the keys, lengths, indices and kinds `key` finds.
        #[test]
        fn plain_key_is_key(text in "(op_name|op_type|source_file|source_line|source_l|source_fil|stack_frame_id|op_|x)(=|==|_| |)[a-z\"0-9]{0,4}") {
            let of = |k: Option<(usize, u32, Kind)>| k.map(|(e, k, kind)| (e, k, kind as u8));
            prop_assert_eq!(of(plain_key(text.as_bytes(), 0)), of(key(text.as_bytes())));
        }
    }

    #[test]
    fn plain_metadata_takes_the_printed_form() {
        let text = r#"{op_name="jit(f)/a\"b" source_file="m.py" source_line=-123456789} x"#;
        assert_eq!(plain_metadata_len(text.as_bytes()), Some(text.len() - 2));
        for other in [
            r#"{op_name="a"  source_line=1}"#,
            "{source_line=1234567890}",
            "{op_name=\"a\", source_line=1}",
            "{preserve_layout=true}",
            "{op_name=\"a\" op_name=\"b\"}",
        ] {
            assert_eq!(plain_metadata_len(other.as_bytes()), None, "{other}");
        }
    }

    #[test]
    fn frontend_attributes_and_statistics() {
        assert!(frontend_attributes("{}").is_ok());
        assert!(frontend_attributes(r#"{_xla_compute_type="host", k="v, w"}"#).is_ok());
        assert!(frontend_attributes(r#"{k={"a": {"b": "}"}}}"#).is_ok());
        assert!(frontend_attributes("3").is_err());
        assert!(frontend_attributes("{k=3}").is_err());
        assert!(frontend_attributes(r#"{k="v" j="w"}"#).is_err());
        assert!(statistics("{}").is_ok());
        assert!(statistics("{visualizing_index=1,stat-a=0.5,stat-b=3}").is_ok());
        assert!(statistics("{visualizing_index=x}").is_err());
        assert!(statistics("{visualizing_index=1,s=nope}").is_err());
        assert_eq!(names("{a, %b}").unwrap(), vec![(1, "a"), (4, "%b")]);
        assert!(names("{}").unwrap().is_empty());
        assert!(names("nope").is_err());
        assert!(names("{a,,b}").is_err());
    }
}
