//! Which computations of a module hold values in memory.
//!
//! A module's computations call each other in two ways. Some calls run a computation whose values live in
//! buffers like the entry's: `while` (`body=`, `condition=`), `conditional` (`branch_computations=`,
//! `true_computation=`, `false_computation=`), `call` (`to_apply=`) and asynchronous starts (`calls=`). The
//! others never materialize the callee's values: a `fusion`'s body (`calls=`) is computed in registers
//! or on-chip memory, and the `to_apply=` of a reduce, map, sort, scatter or collective is a scalar
//! function applied per element. [`materialized`] follows the first kind from the entry.

use foldhash::{HashMap, HashMapExt};

use super::{Computation, Instruction, Module};

/// The attributes that name computations run as whole programs, whatever the opcode.
const PROGRAM_CALLS: [&str; 4] = ["body", "condition", "true_computation", "false_computation"];

/// The computations whose instructions hold values in memory: the entry and every computation reachable
/// from it through program calls (see the module doc), as flags in module order. A computation reached
/// only through fusions or per-element functions, or not at all, is `false`.
pub fn materialized(module: &Module<'_>) -> Vec<bool> {
    let mut seen = vec![false; module.computations.len()];
    let Some(entry) = entry_index(module) else {
        return seen;
    };
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(module.computations.len());
    for (i, c) in module.computations.iter().enumerate() {
        // The last of a name wins, as when collecting into a map.
        index.insert(bare(c.name), i);
    }
    seen[entry] = true;
    let mut stack = vec![entry];
    while let Some(c) = stack.pop() {
        for inst in &module.computations[c].instructions {
            program_callees(inst, |callee| {
                if let Some(&i) = index.get(callee) {
                    if !seen[i] {
                        seen[i] = true;
                        stack.push(i);
                    }
                }
            });
        }
    }
    seen
}

/// The entry's position: the computation marked `ENTRY`, else the last.
pub fn entry_index(module: &Module<'_>) -> Option<usize> {
    module
        .computations
        .iter()
        .position(|c: &Computation<'_>| c.is_entry)
        .or_else(|| module.computations.len().checked_sub(1))
}

/// Calls `f` on each computation `inst` runs as a program (bare names), in the order written.
fn program_callees<'a>(inst: &Instruction<'a>, mut f: impl FnMut(&'a str)) {
    // The reader noted whether any attribute names a called computation.
    if !inst.attributes().has_calls() {
        return;
    }
    for a in &inst.attributes() {
        let program = PROGRAM_CALLS.contains(&a.name)
            || a.name == "branch_computations"
            || (a.name == "to_apply" && inst.opcode() == "call")
            || (a.name == "calls" && inst.opcode() != "fusion");
        if program {
            a.value
                .trim_matches(|c| c == '{' || c == '}')
                .split(',')
                .map(|n| bare(n.trim()))
                .filter(|n| !n.is_empty())
                .for_each(&mut f);
        }
    }
}

fn bare(name: &str) -> &str {
    name.strip_prefix('%').unwrap_or(name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::hlo::parse_module;

    #[test]
    fn fusions_and_reducers_are_not_materialized() {
        let text = "HloModule m\n\n\
            %add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n\n\
            %fused (p: f32[8]) -> f32[8] {\n  %p = f32[8]{0} parameter(0)\n  ROOT %n = f32[8]{0} negate(%p)\n}\n\n\
            %body (t: f32[8]) -> f32[8] {\n  %t = f32[8]{0} parameter(0)\n  ROOT %f = f32[8]{0} fusion(%t), kind=kLoop, calls=%fused\n}\n\n\
            %cond (t: f32[8]) -> pred[] {\n  %t = f32[8]{0} parameter(0)\n  %z = f32[] constant(0)\n  %r = f32[] reduce(%t, %z), dimensions={0}, to_apply=%add\n  ROOT %c = pred[] compare(%r, %z), direction=LT\n}\n\n\
            %dead (t: f32[8]) -> f32[8] {\n  ROOT %t = f32[8]{0} parameter(0)\n}\n\n\
            ENTRY %e (x: f32[8]) -> f32[8] {\n  %x = f32[8]{0} parameter(0)\n  ROOT %w = f32[8]{0} while(%x), condition=%cond, body=%body\n}\n";
        let m = parse_module(text).unwrap();
        let names: Vec<&str> = m.computations.iter().map(|c| c.name).collect();
        assert_eq!(names, ["%add", "%fused", "%body", "%cond", "%dead", "%e"]);
        assert_eq!(
            materialized(&m),
            [false, false, true, true, false, true],
            "entry, while body and condition only"
        );
    }
}
