//! One result per input: JSON objects (one per line) with `--json`, readable text otherwise.

use clap::Args;
use serde_json::{json, Value};

/// The `--json` flag every command takes.
#[derive(Args)]
pub struct Common {
    /// One JSON object per input on stdout (errors as {"error": ...}).
    #[arg(long, global = true)]
    pub json: bool,
}

/// What a verb produced for one input.
pub struct Report {
    /// The machine-readable object.
    pub json: Value,
    /// The human-readable text.
    pub text: String,
}

/// Prints each result; errors go to stdout as `{"error": ...}` in JSON mode, to stderr otherwise.
/// Returns whether every input succeeded.
pub fn emit(results: impl IntoIterator<Item = Result<Report, String>>, json_mode: bool) -> bool {
    let mut ok = true;
    for r in results {
        match r {
            Ok(rep) if json_mode => println!("{}", rep.json),
            Ok(rep) => println!("{}", rep.text.trim_end()),
            Err(e) => {
                ok = false;
                if json_mode {
                    println!("{}", json!({ "error": e }));
                } else {
                    eprintln!("error: {e}");
                }
            }
        }
    }
    ok
}
