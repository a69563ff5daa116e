//! `axe bench hlo`: reading an HLO module, timed as a user runs it (`axe hlo stats FILE` and `axe hlo fmt
//! FILE`, whole processes, end to end) and in process (reading with every check, the cost report), against
//! memcpy of the same bytes in the same run; and, where a Python with jaxlib is at hand, XLA's own parser
//! (`hlo_module_from_text`) on the same file in the same run.

use std::fmt::Write as _;
use std::hint::black_box;
use std::io::Write as _;
use std::time::Instant;

use serde_json::json;

use crate::bench::median;

fn proc_status_bytes(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The largest peak memory (bytes) of the children waited for so far, if the system says.
fn children_peak() -> Option<u64> {
    let usage =
        nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).ok()?;
    // Linux reports kilobytes.
    u64::try_from(usage.max_rss()).ok().map(|kb| kb * 1024)
}

/// Seconds of each of `runs` runs of this executable with `args`, its output sent to a file (as a
/// redirect would), and the largest peak memory of any child so far; an error when a run fails.
fn end_to_end(args: &[&str], runs: usize) -> Result<(Vec<f64>, Option<u64>), String> {
    let exe = std::env::current_exe().map_err(|e| format!("finding this executable: {e}"))?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let out = tempfile::tempfile().map_err(|e| format!("a file for the output: {e}"))?;
        let mut err = tempfile::tempfile().map_err(|e| format!("a file for the errors: {e}"))?;
        let err_to = err
            .try_clone()
            .map_err(|e| format!("a file for the errors: {e}"))?;
        let t = Instant::now();
        let status = std::process::Command::new(&exe)
            .args(args)
            .stdout(out)
            .stderr(err_to)
            .status()
            .map_err(|e| format!("running {}: {e}", exe.display()))?;
        times.push(t.elapsed().as_secs_f64());
        if !status.success() {
            // What the run said (its first lines), so the reason is not lost.
            let mut said = String::new();
            let _ = std::io::Seek::rewind(&mut err);
            let _ =
                std::io::Read::read_to_string(&mut std::io::Read::take(&mut err, 4096), &mut said);
            let said: Vec<&str> = said.lines().take(3).collect();
            return Err(format!(
                "axe {} failed ({status}){}",
                args.join(" "),
                if said.is_empty() {
                    String::new()
                } else {
                    format!(": {}", said.join("\n"))
                }
            ));
        }
    }
    Ok((times, children_peak()))
}

/// The Python interpreter to time XLA's parser with: `$AXE_JAX_PYTHON`, else `.venv/bin/python3` of the
/// current directory, when it imports jaxlib's XLA client.
fn jax_python() -> Option<std::path::PathBuf> {
    let python = std::env::var_os("AXE_JAX_PYTHON")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(".venv/bin/python3"));
    let ok = std::process::Command::new(&python)
        .args(["-c", "from jax._src.lib import xla_client"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(python)
}

/// Times XLA's parser (jaxlib's `hlo_module_from_text`) on `path`: the seconds of each of `rounds`
/// parses in one Python process, or `None` when no Python with jaxlib is at hand or it fails.
fn jax_seconds(path: &str, rounds: usize) -> Option<Vec<f64>> {
    const SCRIPT: &str = r#"
import sys, time
from jax._src.lib import xla_client as xc
h = xc.hlo if hasattr(xc, "hlo") else xc._xla
parse = getattr(xc, "hlo_module_from_text", None) or h.hlo_module_from_text
text = open(sys.argv[1]).read()
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    parse(text)
    print(time.perf_counter() - t)
"#;
    let python = jax_python()?;
    let out = std::process::Command::new(python)
        .args(["-c", SCRIPT, path, &rounds.to_string()])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let times: Vec<f64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    (times.len() == rounds).then_some(times)
}

/// What one run measured.
struct Figures {
    size: usize,
    instructions: usize,
    memcpy: f64,
    parse: f64,
    report: f64,
    /// Bytes the process gained while reading the module and reporting on it, if the system says.
    peak_extra: Option<u64>,
    stats_e2e: Vec<f64>,
    fmt_e2e: Vec<f64>,
    /// The peak memory of the `stats` processes, and of the `stats` and `fmt` processes.
    stats_peak: Option<u64>,
    both_peak: Option<u64>,
    /// Seconds of each parse by XLA's own parser, when jaxlib is at hand.
    jax: Option<Vec<f64>>,
}

fn measure(path: &str, runs: usize) -> Result<Figures, String> {
    // The commands first, while this process is small: a child's peak counts what it held before exec.
    let rounds = runs.max(3);
    let (stats_e2e, stats_peak) = end_to_end(&["hlo", "stats", path], rounds)?;
    let (fmt_e2e, both_peak) = end_to_end(&["hlo", "fmt", path], rounds)?;
    let jax = jax_seconds(path, 3);
    let bytes = crate::file::Bytes::open(path)?;
    let text = bytes.text(path)?;
    let size = text.len();
    // The peak of the first reading and report, above what the process held before (the file is mapped
    // with its pages in); measured before anything else in this process allocates, so that no memory
    // freed earlier is reused.
    let before = proc_status_bytes("VmRSS");
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let m = axe_xla::hlo::parse_module(text).map_err(|e| format!("{path}:{e}"))?;
    let r = axe_xla::hlo::stats::report(&m, 10).map_err(|e| e.to_string())?;
    let peak = proc_status_bytes("VmHWM");
    let instructions = m.instruction_count();
    drop(black_box(r));
    drop(m);
    let peak_extra = match (before, peak) {
        (Some(b), Some(p)) if p >= b => Some(p - b),
        _ => None,
    };
    // memcpy of the same bytes, the reference.
    let mut dst = vec![0u8; size];
    let mut memcpy = f64::INFINITY;
    for _ in 0..runs {
        let t = Instant::now();
        dst.copy_from_slice(black_box(text.as_bytes()));
        black_box(&dst);
        memcpy = memcpy.min(t.elapsed().as_secs_f64());
    }
    drop(dst);
    let mut parse = f64::INFINITY;
    let mut report = f64::INFINITY;
    for _ in 0..runs {
        let t = Instant::now();
        let m = axe_xla::hlo::parse_module(black_box(text)).map_err(|e| format!("{path}:{e}"))?;
        parse = parse.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let r = axe_xla::hlo::stats::report(&m, 10).map_err(|e| e.to_string())?;
        report = report.min(t.elapsed().as_secs_f64());
        black_box((&m, &r));
    }
    Ok(Figures {
        size,
        instructions,
        memcpy,
        parse,
        report,
        peak_extra,
        stats_e2e,
        fmt_e2e,
        stats_peak,
        both_peak,
        jax,
    })
}

fn print(path: &str, f: &Figures, runs: usize, json: bool) {
    let mb = |secs: f64| f.size as f64 / secs / 1e6;
    let (stats, fmt) = (median(f.stats_e2e.clone()), median(f.fmt_e2e.clone()));
    let peak_total = f.peak_extra.map(|e| e + f.size as u64);
    let rounds = f.stats_e2e.len();
    let ratio = |p: Option<u64>| p.map(|p| p as f64 / f.size as f64);
    let jax = f.jax.clone().map(median);
    if json {
        crate::outln!(
            "{}",
            json!({"file": path, "bytes": f.size, "instructions": f.instructions,
                   "stats_end_to_end_seconds": stats, "stats_end_to_end_mb_per_second": mb(stats),
                   "fmt_end_to_end_seconds": fmt, "fmt_end_to_end_mb_per_second": mb(fmt),
                   "end_to_end_rounds": rounds,
                   "stats_peak_bytes": f.stats_peak, "stats_peak_ratio_to_file": ratio(f.stats_peak),
                   "stats_and_fmt_peak_bytes": f.both_peak, "stats_and_fmt_peak_ratio_to_file": ratio(f.both_peak),
                   "seconds": f.parse, "mb_per_second": mb(f.parse),
                   "memcpy_mb_per_second": mb(f.memcpy), "ratio_to_memcpy": f.memcpy / f.parse,
                   "stats_seconds": f.report,
                   "peak_parse_bytes": f.peak_extra, "peak_with_file_bytes": peak_total,
                   "peak_ratio_to_file": peak_total.map(|p| p as f64 / f.size as f64),
                   "jaxlib_seconds": jax, "jaxlib_mb_per_second": jax.map(mb),
                   "stats_ratio_to_jaxlib": jax.map(|j| j / stats),
                   "threads": rayon::current_num_threads()})
        );
        return;
    }
    let mut o = format!(
        "{path}: {:.1} MB, {} instructions, {} threads\n",
        f.size as f64 / 1e6,
        f.instructions,
        rayon::current_num_threads()
    );
    let _ = writeln!(
        o,
        "axe hlo stats  {:>8.1} MB/s  ({:.1} ms end to end, the median of {rounds} processes)",
        mb(stats),
        stats * 1e3
    );
    let _ = writeln!(
        o,
        "axe hlo fmt    {:>8.1} MB/s  ({:.1} ms end to end, the median of {rounds} processes)",
        mb(fmt),
        fmt * 1e3
    );
    match (ratio(f.stats_peak), ratio(f.both_peak)) {
        (Some(s), Some(b)) => {
            let _ = writeln!(
                o,
                "               peak memory of the stats processes {s:.2}x the file, of stats and fmt {b:.2}x"
            );
        }
        _ => o.push_str(
            "               peak memory of the processes: not available on this system\n",
        ),
    }
    match jax {
        Some(j) => {
            let _ = writeln!(
                o,
                "jaxlib         {:>8.1} MB/s  ({:.1} ms, hlo_module_from_text in process, the median of 3)   axe hlo stats / jaxlib {:.1}x",
                mb(j),
                j * 1e3,
                j / stats
            );
        }
        None => o.push_str(
            "jaxlib         not measured (no .venv/bin/python3 or $AXE_JAX_PYTHON with jaxlib)\n",
        ),
    }
    let _ = writeln!(
        o,
        "read + check   {:>8.1} MB/s  ({:.1} ms in process, best of {runs})",
        mb(f.parse),
        f.parse * 1e3
    );
    let _ = writeln!(
        o,
        "cost report    {:>8.1} ms    (in process, best of {runs}: every distinct shape parsed)",
        f.report * 1e3
    );
    let _ = writeln!(
        o,
        "memcpy         {:>8.1} MB/s  (reference, same bytes)   read + check / memcpy {:.4}",
        mb(f.memcpy),
        f.memcpy / f.parse
    );
    match (f.peak_extra, peak_total) {
        (Some(e), Some(p)) => {
            let _ = writeln!(
                o,
                "peak memory: {:.1} MB to read and report, {:.1} MB with the mapped file = {:.2}x the file",
                e as f64 / 1e6,
                p as f64 / 1e6,
                p as f64 / f.size as f64
            );
        }
        _ => o.push_str("peak memory: not available on this system\n"),
    }
    crate::out!("{o}");
}

/// Runs the benchmark on `file`, or on a synthetic module of about `instructions` instructions (in one
/// entry computation with `one_computation`).
pub fn run(
    json: bool,
    instructions: usize,
    file: Option<String>,
    runs: usize,
    one_computation: bool,
) -> bool {
    let runs = runs.max(1);
    // A synthetic module lives in a temporary file, removed however the run ends.
    let synthetic = match file {
        Some(_) => None,
        None => {
            let text = if one_computation {
                axe_xla::hlo::synth::synth_one_computation(instructions, 1)
            } else {
                axe_xla::hlo::synth::synth_module(instructions, 1)
            };
            let made = tempfile::Builder::new()
                .prefix("axe-bench-")
                .suffix(".hlo")
                .tempfile()
                .and_then(|mut f| f.write_all(text.as_bytes()).map(|()| f));
            match made {
                Ok(f) => Some(f),
                Err(e) => {
                    eprintln!("error: writing the synthetic module: {e}");
                    return false;
                }
            }
        }
    };
    let path = match (&file, &synthetic) {
        (Some(f), _) => f.clone(),
        (None, Some(t)) => t.path().to_string_lossy().to_string(),
        (None, None) => return false,
    };
    if let Err(e) = std::fs::File::open(&path) {
        eprintln!("error: {path}: {e}");
        return false;
    }
    match measure(&path, runs) {
        Ok(f) => {
            print(&path, &f, runs, json);
            true
        }
        Err(e) => {
            eprintln!("error: {e}");
            false
        }
    }
}
