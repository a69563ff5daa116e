fn main() {
    let shapes = axe_xla::bench_cases::bench_shapes(20000);
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(200);
    let mode = std::env::args().nth(2).unwrap_or_default();
    if mode == "c" { for s in &shapes { let p = axe_xla::parse_shape(s).unwrap().to_string(); if &p != s { println!("MISMATCH {s} {p}"); break; } } }
    let t = std::time::Instant::now();
    let mut ok = 0u64;
    for _ in 0..rounds {
        for s in &shapes {
            let r = axe_xla::parse_shape(std::hint::black_box(s));
            if mode == "v" {
                if let Ok(sh) = &r { if axe_xla::validate(sh).is_ok() { ok += 1; } }
            } else if r.is_ok() { ok += 1; }
        }
    }
    let ns = t.elapsed().as_nanos() as f64 / (rounds * shapes.len()) as f64;
    println!("{ok} {ns:.1} ns/shape {:.2} M/s", 1e3 / ns);
}
#[allow(dead_code)]
fn check() {}
