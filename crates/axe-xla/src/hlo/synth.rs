//! Realistic synthetic modules for benchmarks and tests: TPU-tiled shapes, memory spaces, tuples,
//! metadata, shardings, fusions and layout changes.

use std::fmt::Write;

/// A module with about `n` instructions, deterministic for a given `seed`, in the style XLA prints.
pub fn synth_module(n: usize, seed: u64) -> String {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move |m: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % m.max(1)
    };
    const TYPES: [(&str, &str); 3] = [
        ("bf16", "T(8,128)(2,1)"),
        ("f32", "T(8,128)"),
        ("bf16", "T(8,128)(2,1)"),
    ];
    const UNARY: [&str; 3] = ["exponential", "tanh", "rsqrt"];
    const OPS: [&str; 8] = [
        "add",
        "multiply",
        "exponential",
        "subtract",
        "maximum",
        "tanh",
        "divide",
        "rsqrt",
    ];
    let mut out = String::with_capacity(n * 160 + 1024);
    let (ty, tiles) = TYPES[next(TYPES.len() as u64) as usize];
    let dims = [8 * (1 + next(128)), 128 * (1 + next(32))];
    let plain = format!("{ty}[{},{}]", dims[0], dims[1]);
    let shape = |space: &str| format!("{plain}{{1,0:{tiles}{space}}}");
    let _ = write!(
        out,
        "HloModule jit_train_step, entry_computation_layout={{({}, {})->{}}}, allow_spmd_sharding_propagation_to_output={{true}}, num_partitions=4\n\n",
        shape(""),
        shape(""),
        shape("")
    );
    let fusions = (n / 2000).max(1);
    let per = (n / (fusions + 1)).max(4);
    let mut total = 0;
    for f in 0..=fusions {
        let entry = f == fusions;
        if entry {
            let _ = writeln!(
                out,
                "ENTRY %main.{f} (p0.{f}: {plain}, p1.{f}: {plain}) -> {plain} {{"
            );
        } else {
            let _ = writeln!(
                out,
                "%fused_computation.{f} (p0.{f}: {plain}, p1.{f}: {plain}) -> {plain} {{"
            );
        }
        let _ = writeln!(
            out,
            "  %p0.{f} = {} parameter(0), sharding={{devices=[2,2]<=[4]}}",
            shape("")
        );
        let _ = writeln!(out, "  %p1.{f} = {} parameter(1)", shape(""));
        let mut prev = format!("p0.{f}");
        let count = if entry {
            n.saturating_sub(total).max(4)
        } else {
            per
        };
        let mut i = 2;
        while i < count {
            let op = OPS[next(OPS.len() as u64) as usize];
            let space = if next(5) == 0 { "S(1)" } else { "" };
            let line = next(900) + 10;
            let name = format!("{op}.{f}.{i}");
            match next(20) {
                0 => {
                    let _ = writeln!(
                        out,
                        "  %copy.{f}.{i} = {plain}{{0,1:{tiles}}} copy(%{prev}), metadata={{op_type=\"copy\" op_name=\"jit(f)/transpose\" source_file=\"model.py\" source_line={line}}}"
                    );
                    let _ = writeln!(out, "  %{name} = {} copy(%copy.{f}.{i})", shape(space));
                    i += 1;
                }
                1 => {
                    let _ = writeln!(
                        out,
                        "  %tuple.{f}.{i} = ({}, {}) tuple(%{prev}, %p1.{f}), sharding={{{{replicated}}, {{devices=[2,2]<=[4]}}}}",
                        shape(""),
                        shape("")
                    );
                    let _ = writeln!(
                        out,
                        "  %{name} = {} get-tuple-element(%tuple.{f}.{i}), index=0",
                        shape("")
                    );
                }
                _ => {
                    let _ = writeln!(
                        out,
                        "  %{name} = {} {op}({}), metadata={{op_type=\"{op}\" op_name=\"jit(f)/l{}/{op}\" source_file=\"model.py\" source_line={line}}}",
                        shape(space),
                        if UNARY.contains(&op) { format!("%{prev}") } else { format!("%{prev}, %p1.{f}") },
                        next(48)
                    );
                }
            }
            prev = name;
            i += 1;
        }
        if entry {
            let _ = writeln!(out, "  ROOT %result = {} fusion(%{prev}, %p1.{f}), kind=kLoop, calls=%fused_computation.0", shape(""));
        } else {
            let _ = writeln!(
                out,
                "  ROOT %root.{f} = {} add(%{prev}, %p1.{f})",
                shape("")
            );
        }
        out.push_str("}\n\n");
        total += count;
    }
    out
}
