//! Python exceptions: every error of the libraries becomes a `ValueError` subclass, never a crash.
//!
//! `axe.AxeError(ValueError)` is the base; `axe.ParseError` (text that does not parse) carries `.offset`
//! (a byte offset into `.text`, the text read); the others name the library that refused: `LayoutError`,
//! `XlaError`, `RelayoutError`, `ShardingError`, `CuteError`, `TritonError`, `KernelError`.

use pyo3::prelude::*;
use pyo3::{create_exception, exceptions::PyValueError};

create_exception!(
    axe,
    AxeError,
    PyValueError,
    "Every error axe raises: a ValueError subclass."
);
create_exception!(
    axe,
    ParseError,
    AxeError,
    "Text that does not parse. `.offset` is the byte offset of the fault in `.text`; the message shows it with a caret."
);
create_exception!(
    axe,
    LayoutError,
    AxeError,
    "An Axe layout operation has no answer for these inputs."
);
create_exception!(
    axe,
    XlaError,
    AxeError,
    "An XLA shape or HLO module is invalid or unsupported."
);
create_exception!(
    axe,
    RelayoutError,
    AxeError,
    "A relayout's arrays or layouts do not fit together."
);
create_exception!(
    axe,
    ShardingError,
    AxeError,
    "A mesh or sharding is invalid or cannot be expressed."
);
create_exception!(
    axe,
    CuteError,
    AxeError,
    "A CuTe layout or operator has no valid answer."
);
create_exception!(
    axe,
    KernelError,
    AxeError,
    "A kernel cannot be built, lowered, emitted or run for these parameters."
);
create_exception!(
    axe,
    TritonError,
    AxeError,
    "A Triton linear layout or Gluon layout has no valid answer."
);

/// The CLI options that are Python arguments of the same name.
const PYTHON_ARGS: [&str; 5] = ["shape", "mesh", "tv", "layout", "notation"];

/// `message` in Python's terms: the CLI's options the libraries name (`--shape 32,16`, `--mesh x=2,y=4`,
/// `--tv`) become the Python arguments (`shape=[32, 16]`, `mesh="x=2,y=4"`, `tv=`).
pub fn pythonize(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("--") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_lowercase() || c == '-'))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        let starts_word = out
            .chars()
            .last()
            .is_none_or(|c| c.is_whitespace() || c == '(' || c == ',');
        if !starts_word || !PYTHON_ARGS.contains(&name) {
            out.push_str("--");
            rest = after;
            continue;
        }
        let arg = name.replace('-', "_");
        let tail = &after[name_len..];
        // `--NAME VALUE`: the value, when it follows, in Python's spelling.
        let value = tail.strip_prefix(' ').map(|t| {
            let n = t
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, ',' | '=' | '_')))
                .unwrap_or(t.len());
            &t[..n]
        });
        match value {
            Some(v) if !v.is_empty() && v.contains('=') => {
                out.push_str(&format!("{arg}={v:?}"));
                rest = &tail[1 + v.len()..];
            }
            Some(v)
                if !v.is_empty()
                    && v.split(',')
                        .all(|d| d.parse::<u64>().is_ok() || d == "M" || d == "N") =>
            {
                out.push_str(&format!(
                    "{arg}=[{}]",
                    v.split(',').collect::<Vec<_>>().join(", ")
                ));
                rest = &tail[1 + v.len()..];
            }
            _ => {
                out.push_str(&format!("{arg}="));
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A `ParseError` with its `offset` and `text`.
pub fn parse_error(message: String, text: &str, offset: usize) -> PyErr {
    Python::attach(|py| {
        // The first line only: the lines below it show the text read, with a caret.
        let message = match message.split_once('\n') {
            Some((first, below)) => format!("{}\n{below}", pythonize(first)),
            None => pythonize(&message),
        };
        let e = ParseError::new_err(message);
        let v = e.value(py);
        // Setting attributes on a fresh exception instance cannot fail short of memory exhaustion; if it
        // does, the exception still carries its message.
        let _ = v.setattr("offset", offset);
        let _ = v.setattr("text", text);
        e
    })
}

fn layout_parse(p: &axe_layout::ParseError, shown: String) -> PyErr {
    parse_error(shown, &p.input, p.offset)
}

/// Errors of `axe-layout`.
pub fn layout(e: axe_layout::LayoutError) -> PyErr {
    match &e {
        axe_layout::LayoutError::Parse(p) => layout_parse(p, e.to_string()),
        _ => LayoutError::new_err(pythonize(&e.to_string())),
    }
}

/// Errors of `axe-xla`.
pub fn xla(e: axe_xla::XlaError) -> PyErr {
    match &e {
        axe_xla::XlaError::Parse(p) => layout_parse(p, e.to_string()),
        _ => XlaError::new_err(pythonize(&e.to_string())),
    }
}

/// Errors of `axe-relayout`.
pub fn relayout(e: axe_relayout::RelayoutError) -> PyErr {
    RelayoutError::new_err(pythonize(&e.to_string()))
}

/// Errors of `axe-shard`.
pub fn shard(e: axe_shard::ShardError) -> PyErr {
    match &e {
        axe_shard::ShardError::Parse { text, offset, .. } => {
            parse_error(e.to_string(), text, *offset)
        }
        _ => ShardingError::new_err(pythonize(&e.to_string())),
    }
}

/// Errors of `axe-cute`.
pub fn cute(e: axe_cute::CuteError) -> PyErr {
    match &e {
        axe_cute::CuteError::Parse(p) => layout_parse(p, e.to_string()),
        _ => CuteError::new_err(pythonize(&e.to_string())),
    }
}

/// Errors of `axe-kernel`.
pub fn kernel(e: axe_kernel::KernelError) -> PyErr {
    KernelError::new_err(pythonize(&e.to_string()))
}

/// Errors of `axe-triton`.
pub fn triton(e: axe_triton::TritonError) -> PyErr {
    match &e {
        axe_triton::TritonError::Parse(p) => layout_parse(p, e.to_string()),
        _ => TritonError::new_err(pythonize(&e.to_string())),
    }
}

/// Registers the exception classes on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("AxeError", py.get_type::<AxeError>())?;
    m.add("ParseError", py.get_type::<ParseError>())?;
    m.add("LayoutError", py.get_type::<LayoutError>())?;
    m.add("XlaError", py.get_type::<XlaError>())?;
    m.add("RelayoutError", py.get_type::<RelayoutError>())?;
    m.add("ShardingError", py.get_type::<ShardingError>())?;
    m.add("CuteError", py.get_type::<CuteError>())?;
    m.add("TritonError", py.get_type::<TritonError>())?;
    m.add("KernelError", py.get_type::<KernelError>())?;
    Ok(())
}
