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

/// A module whose entry is one computation of about `n` instructions (at least 8), deterministic for a
/// given `seed`: the shape of a large model's entry after fusion. Every instruction has a TPU-tiled
/// layout and `metadata={op_name=... source_file=... source_line=...}`; about one in eight carries a
/// `sharding=`; operands name instructions anywhere before (some far back), so that any cut of the
/// computation has names defined before it.
pub fn synth_one_computation(n: usize, seed: u64) -> String {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move |m: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % m.max(1)
    };
    const OPS: [(&str, bool); 8] = [
        ("add", false),
        ("multiply", false),
        ("exponential", true),
        ("subtract", false),
        ("maximum", false),
        ("tanh", true),
        ("divide", false),
        ("rsqrt", true),
    ];
    const SHARDINGS: [&str; 3] = [
        "{devices=[2,2]<=[4]}",
        "{replicated}",
        "{devices=[1,2,2]<=[4] last_tile_dim_replicate}",
    ];
    let n = n.max(8);
    let (rows, cols) = (8 * (1 + next(64)), 128 * (1 + next(16)));
    let plain = format!("bf16[{rows},{cols}]");
    let tiled = format!("{plain}{{1,0:T(8,128)(2,1)}}");
    let mut out = String::with_capacity(n * 170 + 1024);
    let _ = write!(
        out,
        "HloModule jit_step, is_scheduled=true, entry_computation_layout={{({tiled}, {tiled})->{tiled}}}, num_partitions=4\n\n"
    );
    let _ = writeln!(out, "ENTRY %main (p0: {plain}, p1: {plain}) -> {plain} {{");
    let _ = writeln!(
        out,
        "  %p0 = {tiled} parameter(0), sharding={{devices=[2,2]<=[4]}}, metadata={{op_name=\"params\" source_file=\"model.py\" source_line=1}}"
    );
    let _ = writeln!(
        out,
        "  %p1 = {tiled} parameter(1), metadata={{op_name=\"params\" source_file=\"model.py\" source_line=2}}"
    );
    let mut names: Vec<String> = vec!["p0".into(), "p1".into()];
    for i in 2..n - 1 {
        let (op, unary) = OPS[next(OPS.len() as u64) as usize];
        let last = names.len() - 1;
        let a = &names[last];
        // Mostly a recent instruction, sometimes one far back.
        let back = if next(8) == 0 {
            next(last as u64 + 1)
        } else {
            next(4)
        };
        let b = &names[last - (back as usize).min(last)];
        let name = format!("{op}.{i}");
        let layer = next(96);
        let line = 10 + next(4000);
        let space = if next(6) == 0 { "S(1)" } else { "" };
        let shape = format!("{plain}{{1,0:T(8,128)(2,1){space}}}");
        let operands = if unary {
            format!("%{a}")
        } else {
            format!("%{a}, %{b}")
        };
        let sharding = if next(8) == 0 {
            format!(
                ", sharding={}",
                SHARDINGS[next(SHARDINGS.len() as u64) as usize]
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  %{name} = {shape} {op}({operands}){sharding}, metadata={{op_name=\"jit(step)/layer_{layer}/{op}\" source_file=\"model.py\" source_line={line}}}"
        );
        names.push(name);
    }
    let last = &names[names.len() - 1];
    let _ = writeln!(
        out,
        "  ROOT %result = {tiled} add(%{last}, %p1), metadata={{op_name=\"jit(step)/result\" source_file=\"/src/model/train.py\" source_line=7}}"
    );
    out.push_str("}\n\n");
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The one-computation module reads and checks; its entry holds every instruction, each with a tiled
    /// layout and metadata, some with a sharding, some naming an instruction far back.
    #[test]
    fn one_computation_module() {
        let text = synth_one_computation(5000, 3);
        assert_eq!(text, synth_one_computation(5000, 3));
        let m = crate::hlo::parse_module(&text).unwrap();
        assert_eq!(m.computations.len(), 1);
        let entry = m.entry().unwrap();
        assert!(entry.is_entry);
        assert_eq!(entry.instructions.len(), 5000);
        let mut sharded = 0;
        let mut far = 0;
        let mut seen = std::collections::HashMap::new();
        for (k, inst) in entry.instructions.iter().enumerate() {
            assert!(inst.shape_text().contains(":T(8,128)(2,1)"));
            let meta = inst.attribute("metadata").unwrap();
            assert!(meta.contains("op_name=") && meta.contains("source_line="));
            sharded += usize::from(inst.attribute("sharding").is_some());
            far += usize::from(
                inst.operand_names()
                    .any(|o| seen.get(o).is_some_and(|&at: &usize| at + 100 < k)),
            );
            seen.insert(inst.bare_name(), k);
        }
        assert!((300..1000).contains(&sharded), "{sharded}");
        assert!(far > 100, "{far}");
        crate::hlo::stats::report(&m, 10).unwrap();
    }
}
