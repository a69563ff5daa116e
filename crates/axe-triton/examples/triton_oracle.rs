//! Answers layout questions one per line, for the differential test against Triton
//! (`scripts/triton-differential`). Each request is tab-separated: `OP`, then its arguments; each answer is
//! one line, the JSON bases form of the result or `error: ...`.
//!
//! * `map L` → `{"map": [...], "injective": b, "surjective": b}`
//! * `compose A B`, `invert_and_compose A B`, `invert A`, `pseudoinvert A` → the resulting layout
//! * `gluon TEXT SHAPE` (shape comma-separated) → the linear layout Triton computes
//! * `same A B` → `same` when both texts read as the same Gluon layout, else `different`

use axe_triton::{gluon::parse_gluon, parse_linear, LinearLayout, Result};
use std::io::{BufRead, Write};

fn answer(line: &str) -> Result<String> {
    let parts: Vec<&str> = line.split('\t').collect();
    let arg =
        |i: usize| -> Result<LinearLayout> { parse_linear(parts.get(i).copied().unwrap_or("")) };
    match parts[0] {
        "map" => {
            let l = arg(1)?;
            let map: Vec<String> = l.map()?.iter().map(|v| format!("{v:?}")).collect();
            Ok(format!(
                "{{\"map\": [{}], \"injective\": {}, \"surjective\": {}}}",
                map.join(", "),
                l.is_injective(),
                l.is_surjective()
            ))
        }
        "compose" => Ok(arg(1)?.compose(&arg(2)?)?.to_json()),
        "invert_and_compose" => Ok(arg(1)?.invert_and_compose(&arg(2)?)?.to_json()),
        "invert" => Ok(arg(1)?.invert()?.to_json()),
        "pseudoinvert" => Ok(arg(1)?.pseudoinvert()?.to_json()),
        "gluon" => {
            let g = parse_gluon(parts.get(1).copied().unwrap_or(""))?;
            let shape: Vec<u64> = parts
                .get(2)
                .copied()
                .unwrap_or("")
                .split(',')
                .filter_map(|s| s.trim().parse().ok())
                .collect();
            Ok(g.to_linear(&shape)?.to_json())
        }
        // Whether two texts read as the same Gluon layout (a Gluon form and Triton's attribute for it).
        "same" => {
            let a = parse_gluon(parts.get(1).copied().unwrap_or(""))?;
            let b = parse_gluon(parts.get(2).copied().unwrap_or(""))?;
            Ok(if a == b { "same" } else { "different" }.to_string())
        }
        other => Ok(format!("error: unknown op {other}")),
    }
}

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines().map_while(std::io::Result::ok) {
        let reply = answer(&line)
            .unwrap_or_else(|e| format!("error: {}", e.to_string().replace('\n', " ")));
        let _ = writeln!(out, "{reply}");
        let _ = out.flush();
    }
}
