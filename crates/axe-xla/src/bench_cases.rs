//! Shape strings for `axe bench xla`: the kinds TPU dumps are full of, generated deterministically.

/// `n` shape strings in XLA's printed form: arrays of every common type with TPU tilings, memory spaces,
/// dynamic dimensions, scalars and tuples.
pub fn bench_shapes(n: usize) -> Vec<String> {
    const TYPES: [(&str, &str); 6] = [
        ("f32", "T(8,128)"),
        ("bf16", "T(8,128)(2,1)"),
        ("s8", "T(8,128)(4,1)"),
        ("s32", "T(8,128)"),
        ("s4", "T(8,128)(8,1)E(4)"),
        ("pred", "T(8,128)(4,1)"),
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |m: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % m
    };
    (0..n)
        .map(|i| {
            let (ty, tiles) = TYPES[next(TYPES.len() as u64) as usize];
            match i % 10 {
                0 => format!("{ty}[]{{:T(128)}}"),
                1 => format!(
                    "({ty}[{},{}]{{1,0:{tiles}}}, s32[]{{:T(128)}}, f32[{}]{{0:T(1024)}})",
                    8 * (1 + next(64)),
                    128 * (1 + next(32)),
                    1024 * (1 + next(8))
                ),
                _ => {
                    let rank = 2 + next(3) as usize;
                    let dims: Vec<String> =
                        (0..rank).map(|_| (1 + next(4096)).to_string()).collect();
                    let m2m: Vec<String> = (0..rank).rev().map(|d| d.to_string()).collect();
                    let space = if next(4) == 0 { "S(1)" } else { "" };
                    format!(
                        "{ty}[{}]{{{}:{tiles}{space}}}",
                        dims.join(","),
                        m2m.join(",")
                    )
                }
            }
        })
        .collect()
}
