//! Whether a module's shapes are global or already per device.
//!
//! A module that XLA's SPMD partitioner has run over (JAX's `.compile().as_text()`, the
//! `*after_optimizations*` dumps) keeps the `sharding=` attributes of its values, but every shape in it is
//! already the shard one device holds: dividing it again would under-count each device. A module before
//! the partitioner (JAX's `.lower(...).as_text()`, the `*before_optimizations*` dumps) has global shapes.
//! XLA's text records no flag for this; what the partitioner leaves behind tells:
//!
//! * the partitioner replaces the sharding custom calls (`custom_call_target="Sharding"`,
//!   `"SPMDFullToShardShape"`, `"SPMDShardToFullShape"` and Shardy's `xla.sdy.*` calls) by the ops that
//!   carry them out: a module holding any of them has global shapes;
//! * otherwise, a module of `num_partitions` > 1 that is scheduled (`is_scheduled=true`: scheduling comes
//!   after partitioning), or that holds `partition-id` or a cross-device collective (`all-reduce`,
//!   `all-gather`, `reduce-scatter`, `all-to-all`, `collective-permute`, `collective-broadcast`, or the
//!   async form of one), has per-device shapes;
//! * anything else has global shapes.
//!
//! The user may say which reading applies ([`ShapeReading`]), and the report says which one it used.

use super::Module;

/// How the shapes of a sharded module are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ShapeReading {
    #[default]
    /// Shapes are the whole arrays; a tiled value's shard is cut from them per device.
    Global,
    /// Shapes are what each device holds (after the SPMD partitioner); nothing is divided.
    PerDevice,
}

impl ShapeReading {
    /// The name used on the command line and in reports: `global` or `per-device`.
    pub fn name(self) -> &'static str {
        match self {
            ShapeReading::Global => "global",
            ShapeReading::PerDevice => "per-device",
        }
    }
}

impl std::str::FromStr for ShapeReading {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "global" => Ok(ShapeReading::Global),
            "per-device" => Ok(ShapeReading::PerDevice),
            _ => Err(format!("`{s}`: expected `global` or `per-device`")),
        }
    }
}

/// The reading used for a module, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeDecision {
    /// The reading.
    pub reading: ShapeReading,
    /// Why: `given` when the user said so, else what in the module decided it.
    pub reason: String,
}

/// Sharding custom calls the SPMD partitioner removes.
fn is_sharding_call(target: &str) -> bool {
    let t = target.trim_matches('"');
    matches!(
        t,
        "Sharding" | "SPMDFullToShardShape" | "SPMDShardToFullShape"
    ) || t.starts_with("xla.sdy.")
}

/// Whether `opcode` moves data between partitions (or asks for the partition's id).
fn is_partition_op(opcode: &str) -> bool {
    let base = opcode
        .strip_suffix("-start")
        .or_else(|| opcode.strip_suffix("-done"))
        .unwrap_or(opcode);
    matches!(
        base,
        "partition-id"
            | "all-reduce"
            | "all-gather"
            | "reduce-scatter"
            | "all-to-all"
            | "ragged-all-to-all"
            | "collective-permute"
            | "collective-broadcast"
    )
}

/// What the partitioner leaves behind, gathered one instruction at a time ([`Signs::see`]) so that a
/// caller walking the module anyway pays no second pass.
#[derive(Clone, Debug, Default)]
pub struct Signs<'a> {
    sharding_call: Option<&'a str>,
    partition_op: Option<&'a str>,
}

impl<'a> Signs<'a> {
    /// Notes what `inst` tells.
    pub fn see(&mut self, inst: &super::Instruction<'a>) {
        let op = inst.opcode();
        if op == "custom-call" {
            if self.sharding_call.is_none() {
                if let Some(t) = inst.attribute("custom_call_target") {
                    if is_sharding_call(t) {
                        self.sharding_call = Some(t);
                    }
                }
            }
        } else if self.partition_op.is_none()
            && matches!(op.as_bytes().first(), Some(b'a' | b'c' | b'p' | b'r'))
            && is_partition_op(op)
        {
            self.partition_op = Some(op);
        }
    }

    /// Adds what `later` saw (instructions after those `self` saw): as if `self` had seen them too.
    pub(crate) fn then(&mut self, later: Signs<'a>) {
        self.sharding_call = self.sharding_call.or(later.sharding_call);
        self.partition_op = self.partition_op.or(later.partition_op);
    }

    /// The decision for `module`, whose instructions were all seen.
    pub fn decide(&self, module: &Module<'_>) -> ShapeDecision {
        let partitions = module
            .attribute("num_partitions")
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap_or(1);
        if let Some(t) = self.sharding_call {
            return ShapeDecision {
                reading: ShapeReading::Global,
                reason: format!(
                    "a sharding custom call ({t}) the SPMD partitioner has not yet replaced"
                ),
            };
        }
        if partitions > 1 {
            if module.attribute("is_scheduled").map(str::trim) == Some("true") {
                return ShapeDecision {
                    reading: ShapeReading::PerDevice,
                    reason: format!(
                        "num_partitions={partitions} and is_scheduled=true (scheduled after the SPMD partitioner)"
                    ),
                };
            }
            if let Some(op) = self.partition_op {
                return ShapeDecision {
                    reading: ShapeReading::PerDevice,
                    reason: format!(
                        "num_partitions={partitions} and a {op} (the SPMD partitioner's)"
                    ),
                };
            }
        }
        ShapeDecision {
            reading: ShapeReading::Global,
            reason: if partitions > 1 {
                format!("num_partitions={partitions}, no sign of the SPMD partitioner")
            } else {
                "no sign of the SPMD partitioner".to_string()
            },
        }
    }
}

/// Decides how `module`'s shapes read (see the module doc).
pub fn decide(module: &Module<'_>) -> ShapeDecision {
    let mut signs = Signs::default();
    for comp in &module.computations {
        for inst in &comp.instructions {
            signs.see(inst);
        }
    }
    signs.decide(module)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::hlo::parse_module;

    fn reading(text: &str) -> ShapeReading {
        decide(&parse_module(text).unwrap()).reading
    }

    #[test]
    fn partitioner_artefacts_decide() {
        let body = "ENTRY e {\n  p = f32[8]{0} parameter(0), sharding={devices=[2]<=[2]}\n  ROOT n = f32[8]{0} negate(p), sharding={devices=[2]<=[2]}\n}\n";
        assert_eq!(
            reading(&format!("HloModule m, num_partitions=2\n\n{body}")),
            ShapeReading::Global
        );
        assert_eq!(
            reading(&format!(
                "HloModule m, is_scheduled=true, num_partitions=2\n\n{body}"
            )),
            ShapeReading::PerDevice
        );
        // Scheduled but one partition: nothing was partitioned.
        assert_eq!(
            reading(&format!("HloModule m, is_scheduled=true\n\n{body}")),
            ShapeReading::Global
        );
        let collective = "HloModule m, num_partitions=2\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  p = f32[4]{0} parameter(0), sharding={devices=[2]<=[2]}\n  ROOT r = f32[4]{0} all-reduce(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add\n}\n";
        assert_eq!(reading(collective), ShapeReading::PerDevice);
        let pid =
            "HloModule m, num_partitions=2\n\nENTRY e {\n  ROOT p = u32[] partition-id()\n}\n";
        assert_eq!(reading(pid), ShapeReading::PerDevice);
        // A shard_map before partitioning: collectives inside, but sharding custom calls too.
        let manual = "HloModule m, num_partitions=2, is_scheduled=true\n\nENTRY e {\n  p = f32[8]{0} parameter(0), sharding={devices=[2]<=[2]}\n  ROOT s = f32[4]{0} custom-call(p), custom_call_target=\"SPMDFullToShardShape\", sharding={manual}\n}\n";
        assert_eq!(reading(manual), ShapeReading::Global);
        assert!(decide(&parse_module(manual).unwrap())
            .reason
            .contains("SPMDFullToShardShape"));
    }

    #[test]
    fn names_round_trip() {
        for r in [ShapeReading::Global, ShapeReading::PerDevice] {
            assert_eq!(r.name().parse::<ShapeReading>().unwrap(), r);
        }
        assert!("local".parse::<ShapeReading>().is_err());
    }
}
