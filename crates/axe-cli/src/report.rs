//! One result per input: JSON objects (one per line) with `--json`, readable text otherwise; and the one
//! path every answer takes to stdout.
//!
//! Answers are written as they are made and flushed, so a batch read from stdin is answered line by line.
//! A closed pipe (`axe ... | head -1`) ends the process quietly, as Unix tools do; any other failure to
//! write stdout (a full disk, `> /dev/full`) is an error on stderr and exit status 1.

use std::io::Write;

use clap::Args;
use serde_json::{json, Value};

/// The `--json` flag every command takes.
#[derive(Args)]
pub struct Common {
    /// One JSON object per input on stdout (errors as {"error": ...}).
    #[arg(long, global = true)]
    pub json: bool,
}

/// The key under which a report's object carries members already written as JSON text: an array of
/// `[key, text]` pairs, spliced into the object as it is printed. Huge members (a million devices) cost
/// their text alone, not a `Value` per element.
const RAW: &str = "\u{0}raw";

/// Adds member `key` to `obj` as JSON text `text` (see [`RAW`]).
pub fn raw_member(obj: &mut serde_json::Map<String, Value>, key: &str, text: String) {
    let entry = obj
        .entry(RAW.to_string())
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(a) = entry {
        a.push(json!([key, text]));
    }
}

/// `v` as one line of JSON, raw members spliced in.
fn json_line(mut v: Value) -> String {
    let raws = match &mut v {
        Value::Object(m) => m.remove(RAW),
        _ => None,
    };
    let mut s = v.to_string();
    if let (Some(Value::Array(raws)), true) = (raws, s.ends_with('}')) {
        s.pop();
        for r in raws {
            if let (Some(k), Some(Value::String(text))) = (r.get(0), r.get(1)) {
                if !s.ends_with('{') {
                    s.push(',');
                }
                s.push_str(&k.to_string());
                s.push(':');
                s.push_str(text);
            }
        }
        s.push('}');
    }
    s
}

/// What a verb produced for one input.
pub struct Report {
    /// The machine-readable object.
    pub json: Value,
    /// The human-readable text.
    pub text: String,
}

/// One answer: the result, and the input it answers when answers are labelled (several inputs).
pub struct Answer {
    /// The input, when the answer names it.
    pub input: Option<String>,
    /// The report, or the error.
    pub result: Result<Report, String>,
    /// Whether the text opens with a heading of its own that names the input (the shape `explain`
    /// explains, the shape `xla tpu-layout` gives), so that it takes no `==> input <==` line.
    pub headed: bool,
}

impl Answer {
    /// An answer whose text opens with a heading naming its input (see [`Answer::headed`]).
    pub fn headed(input: Option<String>, result: Result<Report, String>) -> Answer {
        Answer {
            input,
            result,
            headed: true,
        }
    }
}

impl From<Result<Report, String>> for Answer {
    fn from(result: Result<Report, String>) -> Answer {
        Answer {
            input: None,
            result,
            headed: false,
        }
    }
}

impl From<(Option<String>, Result<Report, String>)> for Answer {
    fn from((input, result): (Option<String>, Result<Report, String>)) -> Answer {
        Answer {
            input,
            result,
            headed: false,
        }
    }
}

/// Writes `text` to stdout and flushes it. A closed pipe exits quietly (status 141, as a process killed by
/// SIGPIPE reports); another failure prints an error and exits with status 1.
pub fn write_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
        eprintln!("error: writing to stdout: {e}");
        std::process::exit(1);
    }
}

/// Runs `write` on a buffered stdout and flushes it, with the errors of [`write_stdout`].
pub fn stream_stdout(write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>) {
    let stdout = std::io::stdout().lock();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout);
    if let Err(e) = write(&mut out).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
        eprintln!("error: writing to stdout: {e}");
        std::process::exit(1);
    }
}

/// `print!` through [`write_stdout`].
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::report::write_stdout(&format!($($arg)*)) };
}

/// `println!` through [`write_stdout`].
#[macro_export]
macro_rules! outln {
    () => { $crate::report::write_stdout("\n") };
    ($($arg:tt)*) => { $crate::report::write_stdout(&format!("{}\n", format!($($arg)*))) };
}

/// The most characters of an input an answer repeats as its label.
const LABEL_CHARS: usize = 120;

/// `s`, or its first [`LABEL_CHARS`] characters and `…` (a label never repeats a huge input).
fn shorten(s: &str) -> String {
    match s.char_indices().nth(LABEL_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Prints each result as it comes; errors go to stdout as `{"error": ...}` in JSON mode, to stderr
/// otherwise. A labelled answer names its input (`"input"` in JSON; in text a `==> input <==` line, or a
/// blank line before an answer with a heading of its own, and `error: input: ...`).
/// Returns whether every input succeeded.
pub fn emit<A: Into<Answer>>(results: impl IntoIterator<Item = A>, json_mode: bool) -> bool {
    let mut ok = true;
    for (i, a) in results.into_iter().enumerate() {
        let Answer {
            input,
            result,
            headed,
        } = a.into();
        let input = input.map(|s| shorten(&s));
        if let (false, Some(input), Ok(rep)) = (json_mode, &input, &result) {
            // Every answer, even one that happens to repeat its input, so answers never run
            // together; one with a heading of its own, if longer than that line, is set apart by a
            // blank line.
            if !headed {
                write_stdout(&format!(
                    "{}==> {input} <==\n",
                    if i > 0 { "\n" } else { "" }
                ));
            } else if i > 0 && rep.text.trim_end().contains('\n') {
                write_stdout("\n");
            }
        }
        match result {
            Ok(rep) if json_mode => {
                let mut v = rep.json;
                if let (Some(input), Value::Object(m)) = (input, &mut v) {
                    m.entry("input").or_insert_with(|| json!(input));
                }
                let mut line = json_line(v);
                line.push('\n');
                write_stdout(&line);
            }
            Ok(rep) => write_stdout(&format!("{}\n", rep.text.trim_end())),
            Err(e) => {
                ok = false;
                if json_mode {
                    let mut v = json!({ "error": e });
                    if let (Some(input), Value::Object(m)) = (input, &mut v) {
                        m.insert("input".to_string(), json!(input));
                    }
                    write_stdout(&format!("{v}\n"));
                } else if let Some(input) = input {
                    eprintln!("error: {input}: {e}");
                } else {
                    eprintln!("error: {e}");
                }
            }
        }
    }
    ok
}
