//! Errors of the sharding model and its notations.

/// What went wrong reading, building or converting a mesh or a sharding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// The mesh itself is invalid.
    #[error("bad mesh: {0}")]
    Mesh(String),
    /// The sharding does not fit the mesh or the array.
    #[error("bad sharding: {0}")]
    Sharding(String),
    /// Text in a notation could not be read; `offset` is a byte offset into `text`. Shown with a window
    /// of the text around the offset (at most 80 characters, `…` marking cuts) and a caret under it, so a
    /// huge line is never echoed whole.
    #[error("{msg} at offset {offset}:\n  {}", caret(text, *offset))]
    Parse {
        /// What was wrong.
        msg: String,
        /// The text read.
        text: String,
        /// Where, in bytes.
        offset: usize,
    },
    /// The notation cannot express this sharding.
    #[error("not expressible in {notation}: {why}")]
    Inexpressible {
        /// The target notation.
        notation: &'static str,
        /// Why not.
        why: String,
    },
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, ShardError>;

/// The window of `text` around byte `offset` and, on the next line, a caret under it (see
/// [`axe_layout::caret_window`]); of a multi-line text, the line holding the offset. The caret is padded
/// by [`axe_layout::caret_pad`] (a tab under a tab), so it sits under its character however wide a
/// terminal draws tabs.
fn caret(text: &str, offset: usize) -> String {
    let mut at = offset.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let start = text[..at].rfind('\n').map_or(0, |p| p + 1);
    let end = text[at..].find('\n').map_or(text.len(), |p| at + p);
    let (shown, col) = axe_layout::caret_window(&text[start..end], at - start);
    format!("{shown}\n  {}^", axe_layout::caret_pad(&shown, col))
}

/// `[4,6]`: dims, sizes or device ids as the shape notation writes them (no Rust `Debug` text in
/// messages).
pub(crate) fn list_text(d: &[u64]) -> String {
    let parts: Vec<String> = d.iter().map(u64::to_string).collect();
    format!("[{}]", parts.join(","))
}

/// `'x', 'y'`: mesh axis names as a list in a message.
pub(crate) fn names_text<S: AsRef<str>>(names: &[S]) -> String {
    let parts: Vec<String> = names.iter().map(|n| format!("'{}'", n.as_ref())).collect();
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A caret under text with tabs keeps the tabs, so it lands under its character.
    #[test]
    fn caret_keeps_tabs() {
        let e = ShardError::Parse {
            msg: "bad".into(),
            text: "P(\t'x',\t!)".into(),
            offset: 8,
        };
        let shown = e.to_string();
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines[1], "  P(\t'x',\t!)");
        assert_eq!(lines[2], "    \t    \t^");
    }
}
