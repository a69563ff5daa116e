//! Times each of `axe_cute::bench_cases()` (ns per call, median of 5 runs of ~20 ms) and prints
//! `name<TAB>ns<TAB>input` (only the case named by `AXE_CUTE_BENCH_ONLY`, when set); `scripts/cute-differential --bench` sets the same calls in pycute beside it.

use std::time::Instant;

fn main() -> Result<(), axe_cute::CuteError> {
    let only = std::env::var("AXE_CUTE_BENCH_ONLY").ok();
    for case in axe_cute::bench_cases()? {
        if only.as_deref().is_some_and(|o| o != case.name) {
            continue;
        }
        let mut sink = 0u64;
        let mut n = 1u64;
        loop {
            let t = Instant::now();
            for _ in 0..n {
                sink = sink.wrapping_add((case.run)()?);
            }
            if t.elapsed().as_millis() >= 20 {
                break;
            }
            n *= 2;
        }
        let mut runs = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            for _ in 0..n {
                sink = sink.wrapping_add((case.run)()?);
            }
            runs.push(t.elapsed().as_nanos() as f64 / n as f64);
        }
        runs.sort_by(f64::total_cmp);
        println!(
            "{}\t{:.0}\t{}\t{}",
            case.name,
            runs[2],
            case.input,
            sink % 2
        );
    }
    Ok(())
}
