//! The values of the entry computation without `sharding=` counted, per device, by the sharding axe
//! infers for them (see [`super::propagate`]), once the walk counted them whole.
//!
//! Before partitioning (a module lowered from JAX, `lower().as_text(dialect="hlo")`), few
//! intermediates carry `sharding=`; counted whole on every device, they make the per-device sum
//! several times what a device holds. Each one whose sharding the rules for the entry's result
//! infer (elementwise, transpose, dot, tuples, calls: where XLA's two propagations agree) is taken
//! back from every device and its shards added where that sharding puts them; the others stay whole.
//! The entry's parameters are not touched (one without `sharding=` is replicated: whole anyway). Of
//! the other computations, only those one `call` runs and nothing else names are followed (JAX's
//! `jax.nn.relu`, `jnp.where`, ... lowered as calls), their parameters taking the call's operands'
//! shardings; a computation called twice, a loop's body or a branch stays whole (its parameters are
//! whatever each caller passes). One walk over each computation, each instruction looked at once.

use std::cell::Cell;

use foldhash::{HashMap, HashMapExt};

use super::names::NameTable;
use super::per_device::Tally;
use super::propagate::{each_sharding, CALL_STEPS};
use super::sharding::Sharding;
use super::stats_shapes::Shapes;
use super::stats_values::{defines, Defines};
use super::{Computation, Module};
use crate::error::{Result, XlaError};
use crate::shape::Shape;

/// The attributes naming computations an instruction calls, of any kind.
const CALLS: [&str; 7] = [
    "to_apply",
    "calls",
    "body",
    "condition",
    "true_computation",
    "false_computation",
    "branch_computations",
];

/// Counts again by its inferred sharding each value the walk added to `tally` whole: of the entry
/// (`module`'s computation `entry`) and of each computation that one `call` of the entry, or of such a
/// computation, runs and that nothing else names (its parameters take that call's operands'
/// shardings); held, without `sharding=`, every leaf its own, not a parameter. `names` holds the
/// entry's instructions by name (every one), or is made here.
pub(super) fn reshard_entry<'a>(
    module: &Module<'a>,
    entry: usize,
    shapes: &mut Shapes<'a>,
    tally: &mut Tally<'a>,
    names: Option<&NameTable>,
) -> Result<()> {
    let flags = super::calls::materialized(module);
    if !flags.get(entry).copied().unwrap_or(false) {
        return Ok(());
    }
    // How many times each computation is named, by bare name (the last of a name wins).
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(module.computations.len());
    for (i, c) in module.computations.iter().enumerate() {
        index.insert(bare(c.name), i);
    }
    let mut named = vec![0usize; module.computations.len()];
    for c in &module.computations {
        for inst in c.instructions.iter().filter(|i| i.attributes().has_calls()) {
            for a in &inst.attributes() {
                if CALLS.contains(&a.name) {
                    for n in a.value.trim_matches(|c| c == '{' || c == '}').split(',') {
                        if let Some(&i) = index.get(bare(n.trim())) {
                            named[i] = named[i].saturating_add(1);
                        }
                    }
                }
            }
        }
    }
    let budget = Cell::new(CALL_STEPS);
    // The computations to walk, with their parameters' shardings (`None`: the entry's).
    let mut queue: Vec<(usize, Option<Vec<Option<Sharding>>>)> = vec![(entry, None)];
    while let Some((ci, params)) = queue.pop() {
        let comp = &module.computations[ci];
        let given = if ci == entry { names } else { None };
        each_sharding(
            comp,
            given,
            &module.computations,
            params,
            &budget,
            |k, s, calls| {
                let inst = &comp.instructions[k];
                if let Some(operands) = calls {
                    let callee = inst.attribute("to_apply").map(|t| bare(t.trim()));
                    if let Some(&c) = callee.and_then(|t| index.get(t)) {
                        if named[c] == 1 && flags[c] && c != entry {
                            queue.push((c, Some(operands)));
                        }
                    }
                }
                let Some(s) = s else {
                    return Ok(());
                };
                if inst.shape_text().is_empty()
                    || inst.opcode() == "parameter"
                    || inst.attribute("sharding").is_some()
                {
                    return Ok(());
                }
                (|| {
                    let id = shapes.id(inst.shape_text())?;
                    let tuple = matches!(shapes.infos[id].shape, Shape::Tuple(_));
                    let def = defines(inst.opcode(), tuple, || inst.attribute("calls").is_some());
                    if def != Defines::All {
                        return Ok(());
                    }
                    let whole = shapes.whole(id)?;
                    tally.reshard_inferred(&shapes.infos[id].shape, whole, s)?;
                    Ok(())
                })()
                .map_err(|e: XlaError| located(comp, inst.name(), e))
            },
        )?;
    }
    Ok(())
}

fn bare(name: &str) -> &str {
    name.strip_prefix('%').unwrap_or(name)
}

fn located(comp: &Computation<'_>, name: &str, e: XlaError) -> XlaError {
    XlaError::Unsupported(format!("in {} instruction {name}: {e}", comp.name))
}
