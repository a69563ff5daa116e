//! MLIR text (StableHLO, MHLO, Shardy: what JAX's `lower(...).as_text()` gives by default) handed to the
//! HLO reader: recognised by how it starts, so that the reader's error says what the text is and how to
//! get HLO text instead. Only a text that fails to read is looked at; a module that reads is never
//! second-guessed.

use crate::error::XlaError;

/// How to get HLO text from JAX, for the error of a reader given MLIR.
const HOW: &str = concat!(
    "axe reads HLO text: from JAX write `jax.jit(f).lower(x).as_text(dialect=\"hlo\")` ",
    "(before XLA's passes) or `.compile().as_text()` (after), or run with ",
    "`XLA_FLAGS=--xla_dump_to=DIR` and read its *.txt files"
);

/// The reader's error `e` for `text`, told that the text is MLIR where [`mlir_kind`] finds it is: the
/// same place (`line:col`, line and caret), its message led by what the text is and how to get HLO
/// text, the reader's own message kept after it. Any other error, or text that is not MLIR, is `e`
/// unchanged.
///
/// Law: `explained(text, e) == e` unless `mlir_kind(text)` is `Some`; where it is, a
/// [`XlaError::Module`] keeps its line, column, line shown and caret, and its message is the hint
/// followed by the old message.
pub(crate) fn explained(text: &str, e: XlaError) -> XlaError {
    let Some(kind) = mlir_kind(text) else {
        return e;
    };
    match e {
        XlaError::Module {
            line,
            column,
            message,
            source_line,
            caret_column,
        } => XlaError::Module {
            line,
            column,
            message: format!("this is {kind}, not HLO text; {HOW} (read as HLO: {message})"),
            source_line,
            caret_column,
        },
        other => other,
    }
}

/// What MLIR `text` is — `MLIR (StableHLO)`, `MLIR (MHLO)`, or plain `MLIR` when neither dialect's ops
/// show — when its first line (blank lines and `//` comments passed over) is one that HLO text never
/// starts with:
///
/// * an attribute alias `#name = ...` (`#loc1 = loc("a")` in front of JAX's `debug_info=True` text) or
///   an op in MLIR's generic form (`"builtin.module"() ({`);
/// * `module @name`, `module attributes {`, or a bare `module {` followed somewhere by `func.func`;
/// * a symbol defined by a dialect op: a dotted op name, maybe `public` / `private` / `nested`, then
///   `@` (`func.func public @main(`, `sdy.mesh @mesh = ...`);
/// * an op's result: `%name = ` (or `%name:2 = `) then a dotted op name or a generic op
///   (`%0 = stablehlo.sine %arg0 : tensor<4x8xf32>`), where HLO has a shape.
///
/// Law: `None` for every text whose first line starts as HLO does (`HloModule`, `ENTRY`, a computation
/// name then `(` or `{`, an instruction `name = shape opcode(...)`; tested on the HLO corpus); for the
/// MLIR starts above, `Some`, naming StableHLO exactly when `stablehlo.` appears in the first MiB.
pub(crate) fn mlir_kind(text: &str) -> Option<&'static str> {
    let line = first_line(text)?;
    let mlir = if line.starts_with('#') || line.starts_with('"') {
        true
    } else if let Some(rest) = word(line, "module") {
        rest.starts_with('@')
            || word(rest, "attributes").is_some()
            || (rest.starts_with('{') && head(text).contains("func.func"))
    } else if let Some(rest) = line.strip_prefix('%') {
        let name_end = rest
            .find(|c: char| c.is_whitespace() || c == '=')
            .unwrap_or(rest.len());
        rest[name_end..]
            .trim_start()
            .strip_prefix('=')
            .map(str::trim_start)
            .is_some_and(|op| op.starts_with('"') || dotted(op).is_some())
    } else if let Some(rest) = dotted(line) {
        let rest = ["public", "private", "nested"]
            .iter()
            .find_map(|v| word(rest, v))
            .unwrap_or(rest);
        rest.starts_with('@')
    } else {
        false
    };
    mlir.then(|| dialect_of(head(text)))
}

/// The first MiB of `text` (on a character boundary): where the dialect is looked for.
fn head(text: &str) -> &str {
    let mut end = text.len().min(1 << 20);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `MLIR (StableHLO)` when `stablehlo.` appears in `head`, else `MLIR (MHLO)` when an `mhlo.` op does
/// (`= mhlo.`), else `MLIR`: StableHLO modules carry `mhlo.` attributes (`mhlo.num_partitions`) too.
fn dialect_of(head: &str) -> &'static str {
    if head.contains("stablehlo.") {
        "MLIR (StableHLO)"
    } else if head.contains("= mhlo.") || head.contains("\"mhlo.") {
        "MLIR (MHLO)"
    } else {
        "MLIR"
    }
}

/// The first line of `text` that is neither blank nor a `//` comment, its leading blanks trimmed.
fn first_line(text: &str) -> Option<&str> {
    text.lines()
        .map(|l| l.trim_start_matches('\u{feff}').trim())
        .find(|l| !l.is_empty() && !l.starts_with("//"))
}

/// What follows `w` at the start of `s` as a whole word (a blank after it, or the end), blanks trimmed.
fn word<'s>(s: &'s str, w: &str) -> Option<&'s str> {
    let rest = s.strip_prefix(w)?;
    (rest.is_empty() || rest.starts_with(char::is_whitespace)).then(|| rest.trim_start())
}

/// What follows a dotted op name (`stablehlo.sine`, `func.func`: identifiers joined by `.`, at least
/// two, each a letter or `_` then letters, digits or `_`) at the start of `s`, when one is there and a
/// blank or the end follows it; blanks trimmed.
fn dotted(s: &str) -> Option<&str> {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(s.len());
    let (name, rest) = s.split_at(end);
    let parts: Vec<&str> = name.split('.').collect();
    let ident = |p: &&str| {
        p.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
    };
    let ok = parts.len() >= 2 && parts.iter().all(ident);
    (ok && (rest.is_empty() || rest.starts_with(char::is_whitespace))).then(|| rest.trim_start())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    #[test]
    fn mlir_starts_are_recognised() {
        let cases = [
            ("module @jit_f attributes {mhlo.num_partitions = 1 : i32} {\n  func.func public @main() {\n    %0 = stablehlo.sine %a : tensor<2xf32>\n", Some("MLIR (StableHLO)")),
            ("#loc1 = loc(\"a\")\nmodule @jit_f {\n", Some("MLIR")),
            ("// a comment\n\n  module attributes {tf.versions = {}} {\n", Some("MLIR")),
            ("module {\n  func.func @main(%a: tensor<2xf32>) {\n    %0 = mhlo.add %a, %a : tensor<2xf32>\n", Some("MLIR (MHLO)")),
            ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n", Some("MLIR")),
            ("func.func public @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n", Some("MLIR")),
            ("sdy.mesh @mesh = <[\"x\"=2]>\n", Some("MLIR")),
            ("%0 = stablehlo.add %a, %b : tensor<2xf32>\n", Some("MLIR (StableHLO)")),
            ("%0:2 = \"stablehlo.while\"(%a, %b) ({\n", Some("MLIR (StableHLO)")),
            ("\"builtin.module\"() ({\n}) : () -> ()\n", Some("MLIR")),
        ];
        for (text, want) in cases {
            assert_eq!(mlir_kind(text), want, "{text}");
        }
    }

    /// HLO text, valid or not, is never taken for MLIR: every start XLA's text has, and the corpus.
    #[test]
    fn hlo_starts_are_not_mlir() {
        let cases = [
            "HloModule m\n\nENTRY e {\n  ROOT p = f32[2]{0} parameter(0)\n}\n",
            "ENTRY e {\n  ROOT p = f32[2]{0} parameter(0)\n}\n",
            "%main (p: f32[2]) -> f32[2] {\n",
            "module {\n  ROOT p = f32[2]{0} parameter(0)\n}\n",
            "module.1 (p: f32[2]) -> f32[2] {\n",
            "%x = f32[2]{0} parameter(0)\n",
            "%x = (f32[2]{0}, s32[]) parameter(0)\n",
            "fused.computation {\n",
            "",
            "  \n// only a comment\n",
        ];
        for text in cases {
            assert_eq!(mlir_kind(text), None, "{text}");
        }
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hlo_corpus");
        let mut seen = 0;
        for group in ["jax", "styles", "invalid"] {
            for entry in std::fs::read_dir(dir.join(group)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "hlo") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    assert_eq!(mlir_kind(&text), None, "{}", path.display());
                    seen += 1;
                }
            }
        }
        assert!(seen > 50, "{seen} corpus modules");
    }

    #[test]
    fn only_module_errors_of_mlir_text_change() {
        let mlir = "module @m {\n}\n";
        let e = crate::hlo::scan::module_error(mlir, 7, "expected '{'");
        let XlaError::Module {
            line,
            column,
            message,
            ..
        } = explained(mlir, e)
        else {
            panic!("not a module error");
        };
        assert_eq!((line, column), (1, 8));
        assert!(message.starts_with("this is MLIR, not HLO text; axe reads HLO text"));
        assert!(
            message.ends_with("(read as HLO: expected '{')"),
            "{message}"
        );
        let hlo = "HloModule m\n";
        let e = crate::hlo::scan::module_error(hlo, 0, "x");
        assert_eq!(explained(hlo, e.clone()), e);
        let other = XlaError::Unsupported("y".into());
        assert_eq!(explained(mlir, other.clone()), other);
    }
}
