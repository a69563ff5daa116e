//! The lexical side of TTGIR attribute text: alias definitions (`#mma = #ttg.nvidia_mma<{...}>`), the
//! attributes themselves (`#ttg.blocked<{...}>`, `#triton_gpu.slice<{...}>`), alias uses (`#mma`), and the
//! `{key = value, ...}` dictionaries inside the angle brackets. Every error points at a byte of the user's
//! text; bracket nesting is bounded.

use crate::error::{Result, TritonError};
use crate::syntax::{error_at, Reader, Spanned, Value, MAX_DEPTH};

/// One attribute `#dialect.kind<...>`: where it starts, its kind, and its angle brackets.
#[derive(Debug, Clone, Copy)]
pub(super) struct Attr<'a> {
    /// Offset of the `#`.
    pub at: usize,
    /// The kind after the dialect (`blocked`, `nvidia_mma`, ...).
    pub kind: &'a str,
    /// Offset of the kind.
    pub kind_at: usize,
    /// Offset of the `<`.
    pub open: usize,
    /// Offset of the matching `>`.
    pub close: usize,
}

/// A layout named in the text: written out, or an alias of one.
#[derive(Debug, Clone, Copy)]
pub(super) enum Target<'a> {
    /// `#ttg.kind<...>`.
    Attr(Attr<'a>),
    /// `#name` (offset of the `#`).
    Alias(&'a str, usize),
}

/// A parameter's value: a plain value (numbers, lists, `true`) or a layout (`parent = #mma`).
#[derive(Debug, Clone)]
pub(super) enum Param<'a> {
    /// A value of the shared small grammar, offsets into the whole text.
    Plain(Spanned),
    /// A nested attribute or an alias.
    Layout(Target<'a>),
}

/// The whole input: alias definitions in written order, and the layout it names.
pub(super) struct Input<'a> {
    /// `(name, offset of its `#`, attribute)`.
    pub defs: Vec<(&'a str, usize, Attr<'a>)>,
    /// The layout asked for.
    pub target: Target<'a>,
}

pub(super) struct Scan<'a> {
    pub src: &'a str,
    pos: usize,
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$'
}

impl<'a> Scan<'a> {
    pub(super) fn new(src: &'a str) -> Self {
        Scan { src, pos: 0 }
    }

    fn err(&self, at: usize, message: impl Into<String>) -> TritonError {
        error_at(self.src, at, message)
    }

    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    /// Skips whitespace and `//` comments.
    fn ws(&mut self) {
        loop {
            let rest = self.rest();
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if trimmed.starts_with("//") {
                self.pos += trimmed.find('\n').unwrap_or(trimmed.len());
            } else {
                return;
            }
        }
    }

    fn ident(&mut self) -> &'a str {
        let rest = self.rest();
        let n = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        self.pos += n;
        &rest[..n]
    }

    /// Reads the input: alias definitions, then at most one layout (an attribute or an alias).
    pub(super) fn input(&mut self) -> Result<Input<'a>> {
        let mut defs: Vec<(&'a str, usize, Attr<'a>)> = Vec::new();
        let mut target = None;
        loop {
            self.ws();
            if self.pos >= self.src.len() {
                break;
            }
            let at = self.pos;
            if target.is_some() {
                return Err(self.err(
                    at,
                    "unexpected text after the layout (give alias definitions first, then one layout)",
                ));
            }
            if !self.rest().starts_with('#') {
                return Err(self.err(
                    at,
                    "expected `#`: a layout attribute (`#ttg.blocked<{...}>`), an alias definition \
                     (`#mma = #ttg.nvidia_mma<{...}>`) or an alias (`#mma`)",
                ));
            }
            self.pos += 1;
            let name = self.ident();
            if name.is_empty() {
                return Err(self.err(self.pos, "expected a name after `#`"));
            }
            self.ws();
            if self.rest().starts_with('<') {
                target = Some(Target::Attr(self.attr_after(at, name)?));
            } else if self.rest().starts_with('=') {
                self.pos += 1;
                self.ws();
                let attr = self.attr()?;
                if defs.iter().any(|(n, _, _)| *n == name) {
                    return Err(self.err(at, format!("alias `#{name}` is defined twice")));
                }
                defs.push((name, at, attr));
            } else {
                target = Some(Target::Alias(name, at));
            }
        }
        let target = match target {
            Some(t) => t,
            None => match defs[..] {
                [] => return Err(self.err(0, "expected a TTGIR layout attribute, found nothing")),
                [(_, _, attr)] => Target::Attr(attr),
                _ => {
                    let names: Vec<String> = defs.iter().map(|(n, _, _)| format!("#{n}")).collect();
                    return Err(self.err(
                        self.src.len(),
                        format!(
                            "the text defines {} aliases ({}) but names no layout: end it with one of them",
                            defs.len(),
                            names.join(", ")
                        ),
                    ));
                }
            },
        };
        Ok(Input { defs, target })
    }

    /// Reads `#dialect.kind<...>` at the current position.
    fn attr(&mut self) -> Result<Attr<'a>> {
        let at = self.pos;
        if !self.rest().starts_with('#') {
            return Err(self.err(
                at,
                "expected a layout attribute such as `#ttg.blocked<{...}>`",
            ));
        }
        self.pos += 1;
        let name = self.ident();
        self.ws();
        if !self.rest().starts_with('<') {
            return Err(self.err(
                self.pos,
                format!("expected `<` after `#{name}` (an alias cannot name another alias here)"),
            ));
        }
        self.attr_after(at, name)
    }

    /// The attribute whose `#` is at `at` and whose name `name` has been read; the `<` is next.
    fn attr_after(&mut self, at: usize, name: &'a str) -> Result<Attr<'a>> {
        let Some((dialect, kind)) = name.split_once('.') else {
            return Err(self.err(
                at,
                format!("`#{name}<` is not a TTGIR layout: expected `#ttg.<kind><...>`"),
            ));
        };
        if dialect != "ttg" && dialect != "triton_gpu" {
            return Err(self.err(
                at + 1,
                format!("unknown dialect `{dialect}`: TTGIR layouts are `#ttg.` (or the older `#triton_gpu.`)"),
            ));
        }
        let open = self.pos;
        let close = self.matching(open)?;
        self.pos = close + 1;
        Ok(Attr {
            at,
            kind,
            kind_at: at + 1 + dialect.len() + 1,
            open,
            close,
        })
    }

    /// The offset of the `>` closing the `<` at `open`, with `{}`, `[]` and `()` balanced inside.
    fn matching(&self, open: usize) -> Result<usize> {
        let mut stack: Vec<(char, usize)> = Vec::new();
        let mut chars = self.src[open..].char_indices();
        while let Some((i, c)) = chars.next() {
            let at = open + i;
            match c {
                '<' | '{' | '[' | '(' => {
                    if stack.len() >= MAX_DEPTH {
                        return Err(self.err(at, format!("nested deeper than {MAX_DEPTH} levels")));
                    }
                    stack.push((c, at));
                }
                '>' | '}' | ']' | ')' => {
                    let want = match stack.pop() {
                        Some(('<', _)) => '>',
                        Some(('{', _)) => '}',
                        Some(('[', _)) => ']',
                        Some((_, _)) => ')',
                        None => c,
                    };
                    if c != want {
                        return Err(self.err(at, format!("expected `{want}`, found `{c}`")));
                    }
                    if stack.is_empty() {
                        return Ok(at);
                    }
                }
                '"' => loop {
                    match chars.next() {
                        Some((_, '"')) => break,
                        Some(_) => {}
                        None => return Err(self.err(at, "unterminated string")),
                    }
                },
                _ => {}
            }
        }
        let (c, at) = stack.last().copied().unwrap_or(('<', open));
        Err(self.err(at, format!("this `{c}` is never closed")))
    }

    /// The `{key = value, ...}` dictionary in the brackets of `attr` from offset `from`, keys with their
    /// offsets.
    pub(super) fn dict(
        &mut self,
        attr: &Attr<'a>,
        from: usize,
    ) -> Result<Vec<(&'a str, usize, Param<'a>)>> {
        self.pos = from;
        self.ws();
        if !self.rest().starts_with('{') {
            return Err(self.err(self.pos, "expected `{` opening the parameters"));
        }
        self.pos += 1;
        let mut entries: Vec<(&'a str, usize, Param<'a>)> = Vec::new();
        self.ws();
        if self.rest().starts_with('}') {
            self.pos += 1;
        } else {
            loop {
                self.ws();
                let key_at = self.pos;
                let key = self.ident();
                if key.is_empty() {
                    return Err(self.err(key_at, "expected a parameter name"));
                }
                if entries.iter().any(|(k, _, _)| *k == key) {
                    return Err(self.err(key_at, format!("parameter `{key}` given twice")));
                }
                self.ws();
                if !self.rest().starts_with('=') {
                    return Err(self.err(self.pos, format!("expected `=` after `{key}`")));
                }
                self.pos += 1;
                self.ws();
                let value = self.param(attr.close)?;
                entries.push((key, key_at, value));
                self.ws();
                if self.rest().starts_with('}') {
                    self.pos += 1;
                    break;
                }
                if !self.rest().starts_with(',') {
                    return Err(self.err(self.pos, "expected `,` or `}`"));
                }
                self.pos += 1;
            }
        }
        self.ws();
        if self.pos != attr.close {
            return Err(self.err(self.pos, "expected `>` after the parameters"));
        }
        Ok(entries)
    }

    /// One parameter value, ending before `end`.
    fn param(&mut self, end: usize) -> Result<Param<'a>> {
        let at = self.pos;
        if self.rest().starts_with('#') {
            self.pos += 1;
            let name = self.ident();
            if name.is_empty() {
                return Err(self.err(self.pos, "expected a name after `#`"));
            }
            self.ws();
            if self.rest().starts_with('<') {
                return Ok(Param::Layout(Target::Attr(self.attr_after(at, name)?)));
            }
            return Ok(Param::Layout(Target::Alias(name, at)));
        }
        let mut r = Reader::new(&self.src[at..end]);
        let v = r.value(1).map_err(|e| self.rebase(e, at))?;
        self.pos = at + r.pos();
        Ok(Param::Plain(shift(v, at)))
    }

    /// A parse error of the text starting at `base`, as an error of the whole text.
    fn rebase(&self, e: TritonError, base: usize) -> TritonError {
        match e {
            TritonError::Parse(mut p) => {
                p.offset += base;
                p.input = self.src.to_string();
                TritonError::Parse(p)
            }
            other => other,
        }
    }
}

/// `v` with every offset moved by `by`.
fn shift(v: Spanned, by: usize) -> Spanned {
    let value = match v.value {
        Value::List(items) => Value::List(items.into_iter().map(|i| shift(i, by)).collect()),
        Value::Map(entries) => Value::Map(
            entries
                .into_iter()
                .map(|(k, i)| (k, shift(i, by)))
                .collect(),
        ),
        Value::Call(name, args) => Value::Call(
            name,
            args.into_iter().map(|(k, i)| (k, shift(i, by))).collect(),
        ),
        other => other,
    };
    Spanned {
        at: v.at + by,
        value,
    }
}
