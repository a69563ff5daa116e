//! `axe bench cute`: ns per call of each CuTe layout operator (`axe_cute::bench_cases()`) against
//! pycute, the pure-Python CuTe algebra of `nvidia-cutlass`, timed on the same inputs in the same run,
//! with whether both give the same answer.

use std::collections::HashMap;
use std::hint::black_box;
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{json, Value};

/// pycute's side: reads the cases as JSON on stdin, answers ns per call and its results as JSON.
const PEER_SCRIPT: &str = include_str!("bench_cute_pycute.py");

/// The speed-up the CuTe work aims at, in pycute's time over axe's.
const GOAL_RATIO: f64 = 50.0;

/// One timed batch lasts at least this long; each round takes the median of [`BATCHES`] batches.
const BATCH: Duration = Duration::from_millis(10);
const BATCHES: usize = 5;

/// How long one run of pycute's side may take before it is stopped.
const PEER_TIMEOUT: Duration = Duration::from_secs(600);

/// How to get pycute where it is missing.
const INSTALL_HINT: &str = "for the comparison install pycute as scripts/cute-differential does \
(python3 -m venv /tmp/axe-cutevenv && /tmp/axe-cutevenv/bin/pip install --no-deps nvidia-cutlass==4.2.0.0), \
or pass --pycute PYTHON (or set AXE_PYCUTE_PYTHON) naming an interpreter that imports pycute";

/// What `axe bench cute` measures.
#[derive(Args)]
pub struct CuteBench {
    /// One JSON object: {"rounds", "pycute": {...}, "cases": [...], "geomean_ratio", ...}.
    #[arg(long)]
    json: bool,
    /// Measure every case this many times over, one round after another (axe, then pycute), and
    /// report the medians with the lowest and highest ratio; 1 to 1000.
    #[arg(long, default_value_t = 3, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    rounds: usize,
    /// The Python interpreter that imports pycute (default: $AXE_PYCUTE_PYTHON, else
    /// ${AXE_CUTE_VENV:-/tmp/axe-cutevenv}/bin/python as scripts/cute-differential makes it, else
    /// python3). Without pycute, axe's figures are printed alone.
    #[arg(long, value_name = "PYTHON")]
    pycute: Option<String>,
    /// Only the cases whose name contains this (one that no case's name contains is an error listing
    /// the cases).
    #[arg(long)]
    only: Option<String>,
}

/// The interpreter to run pycute with, and where that choice came from.
fn interpreter(flag: Option<String>) -> (String, &'static str) {
    if let Some(p) = flag {
        return (p, "--pycute");
    }
    if let Some(p) = std::env::var("AXE_PYCUTE_PYTHON")
        .ok()
        .filter(|p| !p.is_empty())
    {
        return (p, "AXE_PYCUTE_PYTHON");
    }
    let venv = std::env::var("AXE_CUTE_VENV")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "/tmp/axe-cutevenv".to_string());
    let p = std::path::Path::new(&venv).join("bin").join("python");
    if p.exists() {
        return (
            p.to_string_lossy().into_owned(),
            "the venv of scripts/cute-differential",
        );
    }
    ("python3".to_string(), "PATH")
}

/// pycute's answer on one case.
enum Peer {
    Timed {
        ns: f64,
        result: String,
    },
    /// pycute raises on the input.
    Refuses(String),
    /// pycute has no such operation.
    Missing(String),
}

/// One run of pycute's side.
struct PeerRun {
    python_version: String,
    cutlass_version: Option<String>,
    cases: HashMap<String, Peer>,
}

/// Reads a pipe to its end on a thread of its own (so that a child never blocks on a full pipe).
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut v);
        }
        v
    })
}

/// Waits for `child` until `deadline`; kills it past that.
fn wait_until(child: &mut Child, deadline: Instant) -> Result<std::process::ExitStatus, String> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "stopped after {} s without an answer",
                    PEER_TIMEOUT.as_secs()
                ));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Runs pycute's side once on `cases`.
fn run_peer(python: &str, cases: &[&axe_cute::BenchCase]) -> Result<PeerRun, String> {
    let request = json!({
        "cases": cases.iter().map(|c| json!({"name": c.name, "args": c.args})).collect::<Vec<_>>(),
        "batch_ms": BATCH.as_millis() as u64,
        "batches": BATCHES,
    });
    let mut child = Command::new(python)
        .arg("-c")
        .arg(PEER_SCRIPT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{python} could not be started: {e}"))?;
    let (out, err) = (drain(child.stdout.take()), drain(child.stderr.take()));
    if let Some(mut stdin) = child.stdin.take() {
        // A child that exits early closes the pipe; its exit status tells why.
        let _ = stdin.write_all(request.to_string().as_bytes());
    }
    let status = wait_until(&mut child, Instant::now() + PEER_TIMEOUT);
    let out = out.join().unwrap_or_default();
    let err = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
    let status = status.map_err(|e| format!("{python}: {e}"))?;
    if !status.success() {
        if err.contains("No module named 'pycute'") {
            return Err(format!("{python} cannot import pycute"));
        }
        let last = err.lines().last().unwrap_or("no message").trim();
        return Err(format!("{python} failed ({status}): {last}"));
    }
    let v: Value = serde_json::from_slice(&out)
        .map_err(|e| format!("{python} answered something other than JSON: {e}"))?;
    let text = |v: &Value| v.as_str().map(str::to_string);
    let mut peer = PeerRun {
        python_version: text(&v["python"]).unwrap_or_default(),
        cutlass_version: text(&v["version"]),
        cases: HashMap::new(),
    };
    if let Some(map) = v["cases"].as_object() {
        for (name, c) in map {
            let p = match (c["ns"].as_f64(), text(&c["result"])) {
                (Some(ns), Some(result)) if ns > 0.0 => Peer::Timed { ns, result },
                _ => match (text(&c["error"]), text(&c["missing"])) {
                    (Some(e), _) => Peer::Refuses(e),
                    (None, Some(m)) => Peer::Missing(m),
                    (None, None) => Peer::Missing(format!("an answer not understood: {c}")),
                },
            };
            peer.cases.insert(name.clone(), p);
        }
    }
    Ok(peer)
}

/// Calls per batch: enough for one batch to last [`BATCH`].
fn calibrate(f: &dyn Fn() -> u64) -> u64 {
    let mut n: u64 = 1;
    loop {
        let t = Instant::now();
        for _ in 0..n {
            black_box(f());
        }
        if t.elapsed() >= BATCH || n >= 1 << 30 {
            return n;
        }
        n *= 2;
    }
}

/// ns per call: the median of [`BATCHES`] batches of `n` calls.
fn sample(f: &dyn Fn() -> u64, n: u64) -> f64 {
    let samples = (0..BATCHES)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                black_box(f());
            }
            t.elapsed().as_nanos() as f64 / n.max(1) as f64
        })
        .collect();
    crate::bench::median(samples)
}

/// A printed result with pycute's spacing and 1-tuples (`(4, (2,)):(1, (4,))`) as axe prints them.
fn normalise(s: &str) -> String {
    let t: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    t.replace(",)", ")")
}

/// Whether two printed layouts are the same map: values at every index and sizes of the top-level modes.
fn same_map(a: &str, b: &str) -> bool {
    let (Ok(a), Ok(b)) = (
        normalise(a).parse::<axe_cute::Layout>(),
        normalise(b).parse::<axe_cute::Layout>(),
    ) else {
        return false;
    };
    let sizes = |l: &axe_cute::Layout| {
        l.modes()
            .map(|m| m.iter().map(axe_cute::Layout::size).collect::<Vec<_>>())
            .ok()
    };
    let limit = axe_cute::MAX_CHECK;
    matches!((a.values(limit), b.values(limit)), (Ok(x), Ok(y)) if x == y) && sizes(&a) == sizes(&b)
}

/// How axe's answer on one case compares with pycute's.
#[derive(Clone, Copy, PartialEq)]
enum Agree {
    /// The same printed form (after [`normalise`]).
    Same,
    /// Printed differently, the same map.
    SameMap,
    /// Different maps.
    Differs,
    /// pycute raises on the input.
    PeerRefuses,
    /// pycute has no such operation.
    NoPeer,
    /// pycute did not run.
    NotRun,
}

impl Agree {
    fn key(self) -> &'static str {
        match self {
            Agree::Same => "same",
            Agree::SameMap => "same_map",
            Agree::Differs => "differs",
            Agree::PeerRefuses => "pycute_refuses",
            Agree::NoPeer => "no_pycute_call",
            Agree::NotRun => "pycute_absent",
        }
    }

    fn shown(self) -> &'static str {
        match self {
            Agree::Same => "same",
            Agree::SameMap => "same map",
            Agree::Differs => "DIFFERS",
            Agree::PeerRefuses => "pycute refuses",
            Agree::NoPeer | Agree::NotRun => "-",
        }
    }
}

fn agreement(axe: &str, peer: Option<&Peer>) -> Agree {
    match peer {
        None => Agree::NotRun,
        Some(Peer::Missing(_)) => Agree::NoPeer,
        Some(Peer::Refuses(_)) => Agree::PeerRefuses,
        Some(Peer::Timed { result, .. }) if normalise(result) == normalise(axe) => Agree::Same,
        Some(Peer::Timed { result, .. }) if same_map(result, axe) => Agree::SameMap,
        Some(Peer::Timed { .. }) => Agree::Differs,
    }
}

/// One case's figures over the rounds.
struct Row<'a> {
    case: &'a axe_cute::BenchCase,
    result: String,
    calls: u64,
    axe: Vec<f64>,
    peer: Vec<f64>,
    ratios: Vec<f64>,
}

pub fn run(b: CuteBench) -> bool {
    let CuteBench {
        json: json_mode,
        rounds,
        pycute,
        only,
    } = b;
    let all = match axe_cute::bench_cases() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return false;
        }
    };
    let cases = match crate::only::select(all.iter().collect(), |c| c.name, only.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return false;
        }
    };
    let mut rows = Vec::new();
    for case in &cases {
        let result = match ((case.run)(), (case.result)()) {
            (Ok(_), Ok(r)) => r,
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("error: {} failed: {e}", case.name);
                return false;
            }
        };
        let f = || (case.run)().unwrap_or(0);
        rows.push(Row {
            case,
            result,
            calls: calibrate(&f),
            axe: Vec::new(),
            peer: Vec::new(),
            ratios: Vec::new(),
        });
    }
    let (python, source) = interpreter(pycute);
    let mut peer: Result<PeerRun, String> = Err(String::new());
    for round in 0..rounds.max(1) {
        for row in &mut rows {
            let f = || (row.case.run)().unwrap_or(0);
            row.axe.push(sample(&f, row.calls));
        }
        if round > 0 && peer.is_err() {
            continue; // pycute is missing: axe's figures alone
        }
        peer = run_peer(&python, &cases);
        if let Ok(p) = &peer {
            for row in &mut rows {
                if let (Some(Peer::Timed { ns, .. }), Some(&axe)) =
                    (p.cases.get(row.case.name), row.axe.last())
                {
                    row.peer.push(*ns);
                    row.ratios.push(ns / axe);
                }
            }
        }
    }
    let peer = peer.map_err(|e| format!("pycute not available: {e} ({python}, from {source})"));
    report(json_mode, rounds, &rows, &peer, &python, source)
}

fn report(
    json_mode: bool,
    rounds: usize,
    rows: &[Row],
    peer: &Result<PeerRun, String>,
    python: &str,
    source: &str,
) -> bool {
    let peer_cases = peer.as_ref().ok().map(|p| &p.cases);
    let ratios: Vec<f64> = rows
        .iter()
        .filter(|r| !r.ratios.is_empty())
        .map(|r| crate::bench::median(r.ratios.clone()))
        .collect();
    let geomean = (!ratios.is_empty())
        .then(|| (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp());
    let verdicts: Vec<Agree> = rows
        .iter()
        .map(|r| agreement(&r.result, peer_cases.and_then(|p| p.get(r.case.name))))
        .collect();
    let differ = verdicts.iter().filter(|&&a| a == Agree::Differs).count();
    let peer_result = |r: &Row| match peer_cases.and_then(|p| p.get(r.case.name)) {
        Some(Peer::Timed { result, .. }) => Some(result.clone()),
        _ => None,
    };
    let peer_note = |r: &Row| match peer_cases.and_then(|p| p.get(r.case.name)) {
        Some(Peer::Refuses(e)) => Some(format!("pycute raises {e}")),
        Some(Peer::Missing(m)) => Some(m.clone()),
        _ => None,
    };
    if json_mode {
        let cases: Vec<Value> = rows
            .iter()
            .zip(&verdicts)
            .map(|(r, agree)| {
                let ratio = (!r.ratios.is_empty()).then(|| crate::bench::median(r.ratios.clone()));
                let peer_ns = (!r.peer.is_empty()).then(|| crate::bench::median(r.peer.clone()));
                json!({"case": r.case.name, "input": r.case.input, "axe_ns": crate::bench::median(r.axe.clone()),
                       "axe_ns_rounds": r.axe, "pycute_ns": peer_ns, "pycute_ns_rounds": r.peer,
                       "ratio": ratio, "ratios": r.ratios, "axe_result": r.result,
                       "pycute_result": peer_result(r), "agree": agree.key(), "note": peer_note(r)})
            })
            .collect();
        let pycute = match peer {
            Ok(p) => json!({"available": true, "python": python, "from": source,
                            "python_version": p.python_version, "nvidia_cutlass": p.cutlass_version}),
            Err(e) => json!({"available": false, "python": python, "from": source,
                             "note": format!("{e}; {INSTALL_HINT}")}),
        };
        crate::outln!(
            "{}",
            json!({"rounds": rounds, "batch_ms": BATCH.as_millis() as u64, "batches": BATCHES,
                   "reference": "pycute, the same calls in the same run", "pycute": pycute,
                   "cases": cases, "geomean_ratio": geomean, "ratios_in_geomean": ratios.len(),
                   "goal_ratio": GOAL_RATIO, "goal_met": geomean.map(|g| g >= GOAL_RATIO),
                   "disagreements": differ})
        );
        if let Err(e) = peer {
            eprintln!("note: {e}; {INSTALL_HINT}");
        }
        return true;
    }
    match peer {
        Ok(p) => crate::outln!(
            "pycute: nvidia-cutlass {}, Python {} ({python}); ns per call, the median of {rounds} round(s) of {BATCHES} batches of >= {} ms; ratio = pycute / axe{}",
            p.cutlass_version.as_deref().unwrap_or("?"),
            p.python_version,
            BATCH.as_millis(),
            if rounds > 1 { ", lowest and highest in brackets" } else { "" }
        ),
        Err(e) => crate::outln!(
            "note: {e}; axe's figures alone.\nnote: {INSTALL_HINT}.\nns per call, the median of {rounds} round(s) of {BATCHES} batches of >= {} ms",
            BATCH.as_millis()
        ),
    }
    // The range column only where there are several rounds.
    let column = |s: &str| {
        if rounds > 1 {
            format!(" {s:>13}")
        } else {
            String::new()
        }
    };
    crate::outln!(
        "{:<18} {:>9} {:>10} {:>8}{}  {:<14} input",
        "case",
        "axe ns",
        "pycute ns",
        "ratio",
        column("range"),
        "answers"
    );
    for (r, agree) in rows.iter().zip(&verdicts) {
        let dash = || "-".to_string();
        let peer_ns = (!r.peer.is_empty()).then(|| crate::bench::median(r.peer.clone()));
        let ratio = (!r.ratios.is_empty()).then(|| crate::bench::median(r.ratios.clone()));
        let (lo, hi) = r
            .ratios
            .iter()
            .fold((f64::INFINITY, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
        let range = if ratio.is_some() {
            column(&format!("({lo:.0}–{hi:.0})"))
        } else {
            column("")
        };
        crate::outln!(
            "{:<18} {:>9.0} {:>10} {:>8}{range}  {:<14} {}",
            r.case.name,
            crate::bench::median(r.axe.clone()),
            peer_ns.map_or_else(dash, |n| format!("{n:.0}")),
            ratio.map_or_else(dash, |x| format!("{x:.0}x")),
            agree.shown(),
            r.case.input
        );
    }
    match geomean {
        Some(g) => crate::outln!(
            "geometric mean of the ratios over {} cases: {g:.0}x (goal >= {GOAL_RATIO:.0}x: {})",
            ratios.len(),
            if g >= GOAL_RATIO { "met" } else { "NOT met" }
        ),
        None => crate::outln!("no ratio: pycute timed none of the cases"),
    }
    let notes: Vec<String> = rows
        .iter()
        .zip(&verdicts)
        .filter_map(|(r, agree)| match agree {
            Agree::Differs | Agree::SameMap => Some(format!(
                "{}: axe {}, pycute {}",
                r.case.name,
                r.result,
                peer_result(r).unwrap_or_default()
            )),
            Agree::PeerRefuses | Agree::NoPeer => {
                peer_note(r).map(|n| format!("{}: {n}", r.case.name))
            }
            _ => None,
        })
        .collect();
    for n in notes {
        crate::outln!("  {n}");
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pycute_prints_normalise_to_axes() {
        assert_eq!(
            normalise("(9, (4, 8)):(59, (13, 1))"),
            "(9,(4,8)):(59,(13,1))"
        );
        assert_eq!(normalise("(4,):(1,)"), "(4):(1)");
        assert!(same_map("(2,(2,2)):(1,(2,4))", "(2,4):(1,2)"));
        assert!(!same_map("(4,2):(1,4)", "8:1"));
        assert!(!same_map("(4,2):(1,4)", "(2,4):(1,2)"));
        assert!(!same_map("(4,2):(1,4)", "not a layout"));
    }

    #[test]
    fn median_of_few() {
        assert!(crate::bench::median(vec![]).is_nan());
        assert_eq!(crate::bench::median(vec![3.0]), 3.0);
        assert_eq!(crate::bench::median(vec![4.0, 1.0]), 2.5);
        assert_eq!(crate::bench::median(vec![5.0, 1.0, 3.0]), 3.0);
    }
}
