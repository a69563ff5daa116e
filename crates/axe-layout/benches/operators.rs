#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Criterion benches: one call of each operator on layouts of 4–8 iters (target: under 1 µs each).

use criterion::{criterion_group, criterion_main, Criterion};

fn operators(c: &mut Criterion) {
    let cases = axe_layout::bench_cases::bench_cases().expect("bench inputs are valid layouts");
    let mut group = c.benchmark_group("layout");
    for case in &cases {
        group.bench_function(case.name, |b| b.iter(|| std::hint::black_box((case.run)())));
    }
    group.finish();
}

criterion_group!(benches, operators);
criterion_main!(benches);
