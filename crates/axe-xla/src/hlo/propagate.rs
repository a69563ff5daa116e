//! The sharding of an entry result that carries none, as XLA's sharding propagation gives it for the
//! simple cases.
//!
//! Before partitioning, a module need not say how its result is sharded (JAX leaves it to XLA when no
//! `out_shardings` are given). The rule here follows the values the result is made of, backwards: an
//! instruction's own `sharding=` wins; a `tuple` has its operands' shardings, a `get-tuple-element` its
//! element of its operand's, a `while`, `copy`, `opt-barrier`, `add-dependency` or `domain` its
//! (first) operand's; a `transpose` its operand's with the tile grid permuted as the dimensions are
//! ([`transposed`]); a `dot` the tiling of its operands' batch and non-contracting dims, where XLA's
//! two propagations agree on it ([`super::propagate_dot`]); an elementwise instruction takes the
//! sharding of its operands of its dimensions, merged where two or more are tiled compatibly (each
//! device holding the intersection of its tiles, as XLA merges them), else the one cut into the most
//! tiles (XLA prefers the more specific sharding); a `call` its callee's root's, the callee's
//! parameters taking the call's operands' shardings (JAX writes `a // 3`, `jnp.where`, ... as calls).
//! Anything else (a reduce, a broadcast, a dot whose operands' tilings conflict, ...) is not
//! inferred: the caller counts it whole on every device.

use std::cell::Cell;

use foldhash::{HashMap, HashMapExt};

use super::names::NameTable;

use super::propagate_dot::{dot_sharding, merged_elementwise, DotDims};
use super::sharding::{parse_sharding, Sharding};
use super::{Computation, Instruction};

/// How deep the walk goes before giving up (each step is one instruction back).
const DEPTH: usize = 256;

/// How many instructions the walks into callees may index and visit in all, before giving up: a
/// callee is walked again at every call of it (a chain of computations each calling the next twice
/// would otherwise cost 2^depth).
const CALL_STEPS: usize = 1 << 20;

fn elementwise(op: &str) -> bool {
    matches!(
        op,
        "abs"
            | "add"
            | "and"
            | "atan2"
            | "cbrt"
            | "ceil"
            | "clamp"
            | "compare"
            | "complex"
            | "convert"
            | "bitcast-convert"
            | "copy"
            | "cosine"
            | "divide"
            | "erf"
            | "exponential"
            | "exponential-minus-one"
            | "floor"
            | "imag"
            | "is-finite"
            | "log"
            | "log-plus-one"
            | "logistic"
            | "maximum"
            | "minimum"
            | "multiply"
            | "negate"
            | "not"
            | "or"
            | "popcnt"
            | "power"
            | "real"
            | "reduce-precision"
            | "remainder"
            | "round-nearest-afz"
            | "round-nearest-even"
            | "rsqrt"
            | "select"
            | "shift-left"
            | "shift-right-arithmetic"
            | "shift-right-logical"
            | "sign"
            | "sine"
            | "sqrt"
            | "subtract"
            | "tan"
            | "tanh"
            | "xor"
    )
}

/// The number of tiles a sharding cuts an array into (replicating grid dims aside).
fn tiles(s: &Sharding) -> i64 {
    match s {
        Sharding::Tiled {
            tile_assignment,
            last_tile_dim_replicate,
            last_tile_dims,
            ..
        } => {
            let dims = tile_assignment.dims();
            let skip = usize::from(*last_tile_dim_replicate) + last_tile_dims.len();
            dims[..dims.len().saturating_sub(skip)]
                .iter()
                .product::<i64>()
        }
        _ => 1,
    }
}

/// The permutation a `dimensions={1,0}` value names, if it is one.
fn permutation(value: &str) -> Option<Vec<usize>> {
    let inner = value.trim().strip_prefix('{')?.strip_suffix('}')?.trim();
    let perm: Vec<usize> = if inner.is_empty() {
        Vec::new()
    } else {
        inner
            .split(',')
            .map(|x| x.trim().parse().ok())
            .collect::<Option<_>>()?
    };
    let mut seen = vec![false; perm.len()];
    for &p in &perm {
        if std::mem::replace(seen.get_mut(p)?, true) {
            return None;
        }
    }
    Some(perm)
}

/// The sharding of `transpose(x), dimensions=perm` where `x` has sharding `s`, as XLA's propagation
/// gives it (`hlo_sharding_util::TransposeSharding`): result dimension `i` is operand dimension
/// `perm[i]`, so the tile grid's dimension `i` is the operand grid's `perm[i]` and the devices move with
/// their tiles; trailing replicating grid dims stay last. A sharding without a tile grid (replicated,
/// maximal, manual, ...) is the operand's.
///
/// Law: the device holding result tile `(t_0, ..., t_{r-1}, e...)` holds operand tile `t'` with
/// `t'[perm[i]] = t_i` (the same elements); `None` for a tuple sharding or a grid whose rank is not
/// `perm`'s (plus its trailing dims), or a tile assignment that does not check.
pub(crate) fn transposed(s: &Sharding, perm: &[usize]) -> Option<Sharding> {
    let Sharding::Tiled {
        tile_assignment,
        last_tile_dim_replicate,
        last_tile_dims,
        metadata,
    } = s
    else {
        return (!matches!(s, Sharding::Tuple(_))).then(|| s.clone());
    };
    let rank = perm.len();
    let devices = s.tile_devices(rank).ok()?;
    let grid = tile_assignment.dims();
    // The result grid: permuted dims, then the trailing ones.
    let order: Vec<usize> = perm.iter().copied().chain(rank..grid.len()).collect();
    let dims: Vec<i64> = order.iter().map(|&k| grid[k]).collect();
    // Row-major strides of the operand grid.
    let mut stride = vec![1usize; grid.len()];
    for k in (0..grid.len().saturating_sub(1)).rev() {
        stride[k] = stride[k + 1] * usize::try_from(grid[k + 1]).ok()?;
    }
    let mut out = Vec::with_capacity(devices.len());
    let mut idx = vec![0i64; dims.len()];
    for _ in 0..devices.len() {
        let at: usize = idx
            .iter()
            .zip(&order)
            .map(|(&i, &k)| i as usize * stride[k])
            .sum();
        out.push(*devices.get(at)?);
        for k in (0..idx.len()).rev() {
            idx[k] += 1;
            if idx[k] < dims[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Some(Sharding::Tiled {
        tile_assignment: super::sharding::TileAssignment::Explicit { dims, devices: out },
        last_tile_dim_replicate: *last_tile_dim_replicate,
        last_tile_dims: last_tile_dims.clone(),
        metadata: metadata.clone(),
    })
}

/// The dims part of a shape text (`f32[4,8]{1,0}` → `[4,8]`), to compare dimensions.
fn dims_of(shape: &str) -> &str {
    let s = shape.find('[').map_or("", |i| &shape[i..]);
    s.find(']').map_or(s, |j| &s[..=j])
}

/// The dimensions of an instruction's array result (a bounded dynamic dim at its bound); `None` for
/// a tuple, an unbounded dim or a shape that does not parse.
fn static_dims(inst: &Instruction<'_>) -> Option<Vec<i64>> {
    let shape = inst.shape().ok()??;
    shape.as_array()?.dims.iter().map(|d| d.bound()).collect()
}

/// The walk over one computation, remembering each instruction's answer.
struct Walk<'c, 'a> {
    instructions: &'c [Instruction<'a>],
    by_name: &'c NameTable,
    memo: HashMap<&'a str, Option<Sharding>>,
    /// The module's computations, where a `call` finds its callee (empty: calls are not followed).
    computations: &'c [Computation<'a>],
    /// In a callee, the shardings of the call's operands (its parameters'); `None` in the entry.
    params: Option<Vec<Option<Sharding>>>,
    /// What is left of [`CALL_STEPS`] to all the walks into callees.
    budget: &'c Cell<usize>,
}

impl<'c, 'a> Walk<'c, 'a> {
    fn of(&mut self, inst: &'c Instruction<'a>, depth: usize) -> Option<Sharding> {
        if let Some(known) = self.memo.get(inst.bare_name()) {
            return known.clone();
        }
        let found = self.find(inst, depth);
        self.memo.insert(inst.bare_name(), found.clone());
        found
    }

    fn operand(&mut self, name: &str, depth: usize) -> Option<(&'c Instruction<'a>, Sharding)> {
        let inst = &self.instructions[self.by_name.get(self.instructions, name)?];
        self.of(inst, depth + 1).map(|s| (inst, s))
    }

    /// A `call`'s sharding: its callee's root's, the callee's parameters taking the call's operands'
    /// shardings (as XLA propagates through a call, or inlines it first).
    fn call(&mut self, inst: &Instruction<'a>, names: &[&str], depth: usize) -> Option<Sharding> {
        let target = inst.attribute("to_apply")?.trim();
        let target = target.strip_prefix('%').unwrap_or(target);
        let computations = self.computations;
        let callee = computations
            .iter()
            .find(|c| c.name.strip_prefix('%').unwrap_or(c.name) == target)?;
        let params = names
            .iter()
            .map(|n| self.operand(n, depth).map(|x| x.1))
            .collect();
        let root = callee
            .instructions
            .iter()
            .find(|i| i.is_root())
            .or(callee.instructions.last())?;
        let left = self.budget.get().checked_sub(callee.instructions.len())?;
        self.budget.set(left);
        let table = NameTable::of(&callee.instructions, |_| true).ok()?;
        let mut walk = Walk {
            instructions: &callee.instructions,
            by_name: &table,
            memo: HashMap::new(),
            computations,
            params: Some(params),
            budget: self.budget,
        };
        walk.of(root, depth + 1)
    }

    fn find(&mut self, inst: &'c Instruction<'a>, depth: usize) -> Option<Sharding> {
        if self.params.is_some() {
            self.budget.set(self.budget.get().checked_sub(1)?);
        }
        if let Some(text) = inst.attribute("sharding") {
            return parse_sharding(text).ok();
        }
        if depth >= DEPTH {
            return None;
        }
        let names: Vec<&str> = inst.operand_names().collect();
        match inst.opcode() {
            "parameter" => match &self.params {
                None => Some(Sharding::Replicated { metadata: None }),
                Some(list) => {
                    let n: usize = inst.operands_text().trim().parse().ok()?;
                    list.get(n)?.clone()
                }
            },
            "call" => self.call(inst, &names, depth),
            "tuple" => {
                let mut list = Vec::with_capacity(names.len());
                for n in names {
                    list.push(
                        self.operand(n, depth)
                            .map_or(Sharding::Replicated { metadata: None }, |x| x.1),
                    );
                }
                Some(Sharding::Tuple(list))
            }
            "get-tuple-element" => {
                let index: usize = inst.attribute("index")?.trim().parse().ok()?;
                match self.operand(names.first()?, depth)?.1 {
                    Sharding::Tuple(list) => list.get(index).cloned(),
                    other => Some(other),
                }
            }
            "while" | "copy" | "opt-barrier" | "add-dependency" | "domain" => {
                self.operand(names.first()?, depth).map(|x| x.1)
            }
            "transpose" => {
                let perm = permutation(inst.attribute("dimensions")?)?;
                let (_, s) = self.operand(names.first()?, depth)?;
                transposed(&s, &perm)
            }
            "dot" => {
                let [l, r] = names[..] else {
                    return None;
                };
                let dims = DotDims::of(inst)?;
                let (li, ls) = self.operand(l, depth)?;
                let (ri, rs) = self.operand(r, depth)?;
                let (ld, rd, od) = (static_dims(li)?, static_dims(ri)?, static_dims(inst)?);
                dot_sharding(&dims, (&ls, &ld), (&rs, &rd), &od)
            }
            op if elementwise(op) => {
                let dims = dims_of(inst.shape_text());
                let mut fitting: Vec<Sharding> = Vec::new();
                for n in names {
                    if let Some((i, s)) = self.operand(n, depth) {
                        if dims_of(i.shape_text()) == dims {
                            fitting.push(s);
                        }
                    }
                }
                if let Some(m) = static_dims(inst).and_then(|d| merged_elementwise(&fitting, &d)) {
                    return Some(m);
                }
                let mut best: Option<Sharding> = None;
                for s in fitting {
                    if best.as_ref().is_none_or(|b| tiles(&s) > tiles(b)) {
                        best = Some(s);
                    }
                }
                best
            }
            _ => None,
        }
    }
}

/// The sharding of `comp`'s root as XLA's propagation would give it (see the module doc); `None` when
/// it is not inferred. A computation of 2^32 - 1 instructions or more is not indexed (the cost report
/// refuses it before asking).
#[cfg(test)]
pub(crate) fn root_sharding(comp: &Computation<'_>) -> Option<Sharding> {
    root_sharding_in(comp, None, &[])
}

/// [`root_sharding`], with `comp`'s instructions by name given (every one of them) or not, and the
/// module's computations, where a `call` finds its callee (empty: calls are not followed).
pub(crate) fn root_sharding_in<'a>(
    comp: &Computation<'a>,
    names: Option<&NameTable>,
    computations: &[Computation<'a>],
) -> Option<Sharding> {
    let root = comp
        .instructions
        .iter()
        .find(|i| i.is_root())
        .or(comp.instructions.last())?;
    let op = root.opcode();
    let followed = matches!(
        op,
        "parameter"
            | "tuple"
            | "get-tuple-element"
            | "while"
            | "copy"
            | "opt-barrier"
            | "add-dependency"
            | "domain"
            | "transpose"
            | "dot"
            | "call"
    ) || elementwise(op);
    if root.attribute("sharding").is_none() && !followed {
        return None; // nothing to follow: no index of the computation needed
    }
    let built;
    let by_name = match names {
        Some(t) => t,
        None => {
            // The last of a name wins, as when collecting into a map.
            built = NameTable::of(&comp.instructions, |_| true).ok()?;
            &built
        }
    };
    let mut walk = Walk {
        instructions: &comp.instructions,
        by_name,
        memo: HashMap::new(),
        computations,
        params: None,
        budget: &Cell::new(CALL_STEPS),
    };
    walk.of(root, 0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::hlo::parse_module;

    fn root(body: &str) -> Option<String> {
        let m = parse_module(body).unwrap();
        root_sharding(m.entry().unwrap()).map(|s| s.to_string())
    }

    #[test]
    fn follows_elementwise_tuples_and_loops() {
        let m = "ENTRY e {\n  a = f32[8,4]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}\n  b = f32[8,4]{1,0} parameter(1), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}\n  c = f32[8,4]{1,0} add(b, a)\n  t = f32[8,4]{1,0} tanh(c)\n  ROOT r = (f32[8,4]{1,0}, f32[8,4]{1,0}) tuple(t, b)\n}\n";
        assert_eq!(
            root(m).as_deref(),
            Some("{{devices=[4,1]<=[4]}, {devices=[2,1,2]<=[4] last_tile_dim_replicate}}")
        );
        // A reduce is not followed: nothing inferred.
        let r = "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\nENTRY e {\n  a = f32[8]{0} parameter(0), sharding={devices=[4]<=[4]}\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=add\n}\n";
        assert_eq!(root(r), None);
        // A parameter without a sharding is replicated; a get-tuple-element picks its element.
        let g = "ENTRY e {\n  a = f32[8]{0} parameter(0)\n  b = f32[8]{0} parameter(1), sharding={devices=[2]<=[2]}\n  t = (f32[8]{0}, f32[8]{0}) tuple(a, b)\n  ROOT g = f32[8]{0} get-tuple-element(t), index=1\n}\n";
        assert_eq!(root(g).as_deref(), Some("{devices=[2]<=[2]}"));
    }

    #[test]
    fn follows_transposes() {
        // JAX's `x.T` on a 2×4 grid (hlo/real/s5.before.hlo): the grid is 4×2, each device keeping its
        // tile (device 1 held rows 0-5, columns 5-9: now rows 5-9, columns 0-5).
        let m = "ENTRY e {\n  x = bf16[12,20]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}\n  ROOT t = bf16[20,12]{0,1} transpose(x), dimensions={1,0}\n}\n";
        assert_eq!(root(m).as_deref(), Some("{devices=[4,2]0,4,1,5,2,6,3,7}"));
        // Trailing replicating dims stay last; replicated stays replicated. (jaxlib 0.10.2, GSPMD, gives
        // `{devices=[4,2]<=[2,4]T(1,0)}` and `{devices=[3,1,2,2]<=[2,3,2]T(1,0,2) last_tile_dim_replicate}`
        // for these two: the same devices.)
        let r = "ENTRY e {\n  x = f32[4,6,8]{2,1,0} parameter(0), sharding={devices=[1,2,3,2]<=[12] last_tile_dim_replicate}\n  n = f32[4,6,8]{2,1,0} negate(x)\n  ROOT t = f32[8,4,6]{2,1,0} transpose(n), dimensions={2,0,1}\n}\n";
        assert_eq!(
            root(r).as_deref(),
            Some("{devices=[3,1,2,2]0,1,6,7,2,3,8,9,4,5,10,11 last_tile_dim_replicate}")
        );
        let p = "ENTRY e {\n  x = f32[4,6]{1,0} parameter(0)\n  ROOT t = f32[6,4]{1,0} transpose(x), dimensions={1,0}\n}\n";
        assert_eq!(root(p).as_deref(), Some("{replicated}"));
    }

    #[test]
    fn follows_calls_into_their_callees() {
        // The callee's parameter 1 is the call's second operand; calls nest.
        let m = "HloModule m\n\ninner {\n  q = f32[8]{0} parameter(0)\n  ROOT n = f32[8]{0} negate(q)\n}\n\nouter {\n  x = f32[8]{0} parameter(0)\n  y = f32[8]{0} parameter(1)\n  ROOT c = f32[8]{0} call(y), to_apply=inner\n}\n\nENTRY e {\n  a = f32[8]{0} parameter(0), sharding={devices=[4]<=[4]}\n  b = f32[8]{0} parameter(1), sharding={devices=[2,2]<=[4] last_tile_dim_replicate}\n  ROOT c = f32[8]{0} call(a, b), to_apply=outer\n}\n";
        let m = parse_module(m).unwrap();
        let got = root_sharding_in(m.entry().unwrap(), None, &m.computations);
        assert_eq!(
            got.map(|s| s.to_string()).as_deref(),
            Some("{devices=[2,2]<=[4] last_tile_dim_replicate}")
        );
        // Without the module's computations, a call is not followed.
        assert_eq!(root_sharding(m.entry().unwrap()), None);
        // A parameter whose operand's sharding is not known is not either.
        let r = "HloModule m\n\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\nid {\n  p = f32[] parameter(0)\n  ROOT c = f32[] copy(p)\n}\n\nENTRY e {\n  a = f32[8]{0} parameter(0), sharding={devices=[4]<=[4]}\n  z = f32[] constant(0)\n  s = f32[] reduce(a, z), dimensions={0}, to_apply=add\n  ROOT c = f32[] call(s), to_apply=id\n}\n";
        let r = parse_module(r).unwrap();
        assert_eq!(
            root_sharding_in(r.entry().unwrap(), None, &r.computations),
            None
        );
    }

    #[test]
    fn calls_that_double_at_every_level_give_up() {
        // c_k adds two calls of c_{k-1}: 2^60 walks without the budget.
        let mut m = String::from("HloModule m\n\nc0 {\n  p = f32[8]{0} parameter(0)\n  ROOT n = f32[8]{0} negate(p)\n}\n");
        for k in 1..60 {
            m += &format!("\nc{k} {{\n  p = f32[8]{{0}} parameter(0)\n  a = f32[8]{{0}} call(p), to_apply=c{}\n  b = f32[8]{{0}} call(p), to_apply=c{}\n  ROOT s = f32[8]{{0}} add(a, b)\n}}\n", k - 1, k - 1);
        }
        m += "\nENTRY e {\n  a = f32[8]{0} parameter(0), sharding={devices=[4]<=[4]}\n  ROOT c = f32[8]{0} call(a), to_apply=c59\n}\n";
        let m = parse_module(&m).unwrap();
        // Without the budget this walks 2^59 callees; with it, it ends, and what it found on the way
        // is the operand's sharding (each level's two calls agree).
        let got = root_sharding_in(m.entry().unwrap(), None, &m.computations);
        assert!(got.is_none_or(|s| s.to_string() == "{devices=[4]<=[4]}"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Law of [`transposed`]: each device holds the same operand elements before and after (its
        /// tile index permuted), and transposing back by the inverse permutation gives the devices back.
        #[test]
        fn transposed_moves_devices_with_their_tiles(
            grid in proptest::collection::vec(1i64..4, 1..4),
            seed in proptest::prelude::any::<u64>(),
            replicate in proptest::prelude::any::<bool>(),
        ) {
            let rank = grid.len();
            let mut perm: Vec<usize> = (0..rank).collect();
            let mut state = seed | 1;
            for i in (1..rank).rev() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                perm.swap(i, (state % (i as u64 + 1)) as usize);
            }
            let mut dims = grid.clone();
            if replicate {
                dims.push(2);
            }
            let n: i64 = dims.iter().product();
            let s = Sharding::Tiled {
                tile_assignment: crate::hlo::sharding::TileAssignment::Iota {
                    dims: dims.clone(),
                    reshape: vec![n],
                    transpose: None,
                },
                last_tile_dim_replicate: replicate,
                last_tile_dims: Vec::new(),
                metadata: None,
            };
            let t = transposed(&s, &perm).unwrap();
            // Operand array of dims `grid` tiled one element a tile: device d's region before, and
            // its region in the transposed array after, name the same elements.
            let before = s.shards(&grid).unwrap();
            let tdims: Vec<i64> = perm.iter().map(|&p| grid[p]).collect();
            let after = t.shards(&tdims).unwrap();
            for b in &before {
                let moved: Vec<_> = perm.iter().map(|&p| b.region[p].clone()).collect();
                proptest::prop_assert!(
                    after.iter().any(|a| a.device == b.device && a.region == moved),
                    "device {:?}", b.device
                );
            }
            let mut inverse = vec![0; rank];
            for (i, &p) in perm.iter().enumerate() {
                inverse[p] = i;
            }
            let back = transposed(&t, &inverse).unwrap();
            proptest::prop_assert_eq!(back.tile_devices(rank).unwrap(), s.tile_devices(rank).unwrap());
        }
    }
}
