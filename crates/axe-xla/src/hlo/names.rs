//! The instructions of one computation by name, in 8 bytes a slot: an open-addressing table of
//! positions and their names' 32-bit hashes (worked out by the reader), a name compared with the
//! instruction's own text only when the hashes agree.

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use super::Instruction;
use crate::error::{overflow, Result};

/// An empty slot.
const EMPTY: u64 = u64::MAX;

/// The positions of some instructions of a computation, by bare name (without `%`).
///
/// Law: [`NameTable::get`]`(name)` is the position of the last instruction added whose bare name is
/// `name`, as a map from name to position filled in the same order gives. The table holds a power of two
/// slots of 8 bytes (a position in the low half, the name's 32-bit hash in the other), at
/// least one and a quarter times as many as the instructions it has room for (a look for a name held
/// then reads about three slots on average, within one or two cache lines).
#[derive(Debug)]
pub(crate) struct NameTable {
    /// Atomic so that threads may fill one table at once ([`NameTable::of_parallel`]); a relaxed load
    /// or store is a plain one.
    slots: Vec<AtomicU64>,
    /// How many instructions the list holds.
    room: usize,
    /// How many names [`NameTable::add_new`] or [`NameTable::of_parallel`] added.
    filled: usize,
}

impl Default for NameTable {
    /// A table with room for no instruction.
    fn default() -> Self {
        NameTable {
            slots: (0..16).map(|_| AtomicU64::new(EMPTY)).collect(),
            room: 0,
            filled: 0,
        }
    }
}

/// The 32-bit hash of a bare name that tables of names go by: the reader works it out for each
/// instruction as it reads the name ([`Instruction::name_hash`]), so that filling a table reads no text.
pub(crate) fn hash(name: &str) -> u32 {
    let mut h = foldhash::fast::FixedState::with_seed(0x5eed).build_hasher();
    h.write(name.as_bytes());
    let h = h.finish();
    (h ^ h >> 32) as u32
}

/// The fewest instructions of a computation whose table its check keeps for the cost report ([`kept`]).
#[cfg(not(test))]
const KEPT_FROM: usize = 4096;
/// In tests, the table of every computation with an instruction, so that the report's use of them is
/// checked on small modules.
#[cfg(test)]
const KEPT_FROM: usize = 1;

/// `table`, when its computation has at least [`KEPT_FROM`] instructions: the cost report uses it
/// rather than make its own. Smaller tables are made again in cache where needed, quickly, and the many
/// small computations of a module would only add to the memory held while it is reported on.
pub(crate) fn kept(table: NameTable) -> Option<NameTable> {
    (table.room >= KEPT_FROM).then_some(table)
}

impl NameTable {
    /// An empty table with room for the `n` instructions of a computation; an error for a computation of
    /// 2^32 - 1 instructions or more.
    pub(crate) fn with_room(n: usize) -> Result<NameTable> {
        if u32::try_from(n).map_or(true, |n| n == u32::MAX) {
            return Err(overflow("a computation of 2^32 - 1 instructions or more"));
        }
        let slots = n
            .checked_add(n.div_ceil(4))
            .and_then(usize::checked_next_power_of_two)
            .ok_or_else(|| overflow("the name table of a computation"))?
            .max(16);
        Ok(NameTable {
            slots: (0..slots).map(|_| AtomicU64::new(EMPTY)).collect(),
            room: n,
            filled: 0,
        })
    }

    /// The instructions of `instructions` that `keep` accepts, by bare name (the last of a name
    /// wins); an error for a computation of 2^32 - 1 instructions or more.
    pub(crate) fn of(
        instructions: &[Instruction<'_>],
        keep: impl Fn(&Instruction<'_>) -> bool,
    ) -> Result<NameTable> {
        let mut t = NameTable::with_room(instructions.len())?;
        for (k, inst) in instructions.iter().enumerate() {
            if keep(inst) {
                t.add(instructions, k)?;
            }
        }
        Ok(t)
    }

    /// [`NameTable::of`], filled by several threads at once, `chunk` instructions each; `None` when two
    /// of the instructions kept share a name (then the last must win, which only one thread filling the
    /// table in order knows: see [`NameTable::of`]).
    pub(crate) fn of_parallel(
        instructions: &[Instruction<'_>],
        keep: impl Fn(&Instruction<'_>) -> bool + Sync,
        chunk: usize,
    ) -> Result<Option<NameTable>> {
        let t = NameTable::with_room(instructions.len())?;
        let filled = instructions
            .par_chunks(chunk.max(1))
            .enumerate()
            .map(|(c, part)| {
                let first = c * chunk.max(1);
                let mut kept = 0usize;
                for (k, inst) in part.iter().enumerate() {
                    // Positions fit: the room was checked.
                    if keep(inst) {
                        if !t.insert_new(instructions, (first + k) as u32) {
                            return None;
                        }
                        kept += 1;
                    }
                }
                Some(kept)
            })
            .try_reduce(|| 0, |a, b| Some(a + b));
        Ok(filled.map(|filled| NameTable { filled, ..t }))
    }

    /// Where a look for a name of hash `h` starts: the tag its slots hold (the hash), the mask of a
    /// slot's position (the slots after `at` are `(at + 1) & mask` on, wrapping around) and the first
    /// slot to look at.
    fn probe(&self, h: u32) -> (u64, usize, usize) {
        let mask = self.slots.len() - 1;
        (u64::from(h), mask, h as usize & mask)
    }

    /// Adds instruction `k` of `instructions`, unless one of its name is there already: whether it was
    /// added. Threads may add at once: a slot is taken in one atomic step.
    fn insert_new(&self, instructions: &[Instruction<'_>], k: u32) -> bool {
        let inst = &instructions[k as usize];
        let (tag, mask, mut at) = self.probe(inst.name_hash());
        loop {
            let s = self.slots[at].load(Relaxed);
            if s == EMPTY {
                match self.slots[at].compare_exchange(
                    EMPTY,
                    tag << 32 | u64::from(k),
                    Relaxed,
                    Relaxed,
                ) {
                    Ok(_) => return true,
                    // Another thread took the slot first: look at what it wrote.
                    Err(_) => continue,
                }
            }
            if s >> 32 == tag && instructions[s as u32 as usize].bare_name() == inst.bare_name() {
                return false;
            }
            at = (at + 1) & mask;
        }
    }

    /// Adds instruction `k` of `instructions` (the list the table is for), replacing any other of
    /// its name; an error past the room the table was made with.
    pub(crate) fn add(&mut self, instructions: &[Instruction<'_>], k: usize) -> Result<()> {
        let entry = self.entry(instructions, k)?;
        let (at, _) = self.find(
            instructions,
            instructions[k].name_hash(),
            instructions[k].bare_name(),
        );
        self.slots[at].store(entry, Relaxed);
        Ok(())
    }

    /// Adds instruction `k` of `instructions` (the list the table is for) unless one of its name is
    /// there: whether it was added. An error past the room the table was made with.
    pub(crate) fn add_new(&mut self, instructions: &[Instruction<'_>], k: usize) -> Result<bool> {
        let entry = self.entry(instructions, k)?;
        let (at, held) = self.find(
            instructions,
            instructions[k].name_hash(),
            instructions[k].bare_name(),
        );
        if held.is_some() {
            return Ok(false);
        }
        self.slots[at].store(entry, Relaxed);
        self.filled += 1;
        Ok(true)
    }

    /// How many instructions [`NameTable::add_new`] or [`NameTable::of_parallel`] added.
    pub(crate) fn len(&self) -> usize {
        self.filled
    }

    /// The slot of instruction `k` of `instructions`: its name's hash and its position; an error past
    /// the room the table was made with.
    fn entry(&self, instructions: &[Instruction<'_>], k: usize) -> Result<u64> {
        match u32::try_from(k) {
            Ok(k32) if k < self.room => {
                Ok(u64::from(instructions[k].name_hash()) << 32 | u64::from(k32))
            }
            _ => Err(overflow("an instruction past the room of a name table")),
        }
    }

    /// The slot a name of hash `h` (bare `name`) is in, with the position held there; else the empty
    /// slot where it would go, with `None`.
    fn find(&self, instructions: &[Instruction<'_>], h: u32, name: &str) -> (usize, Option<usize>) {
        let (tag, mask, mut at) = self.probe(h);
        loop {
            let s = self.slots[at].load(Relaxed);
            if s == EMPTY {
                return (at, None);
            }
            let k = s as u32 as usize;
            if s >> 32 == tag && instructions[k].bare_name() == name {
                return (at, Some(k));
            }
            at = (at + 1) & mask;
        }
    }

    /// The position of the last instruction added named `name` (bare), if any.
    pub(crate) fn get(&self, instructions: &[Instruction<'_>], name: &str) -> Option<usize> {
        self.find(instructions, hash(name), name).1
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::hlo::parse_module;
    use proptest::prelude::*;

    proptest! {
        /// Against a map filled in the same order: every name found at its last position, names not
        /// added not found.
        #[test]
        fn finds_what_a_map_finds(picks in proptest::collection::vec((0usize..40, any::<bool>()), 1..120)) {
            // Repeated names are an error for the reader: each instruction is read on its own.
            let texts: Vec<String> = picks
                .iter()
                .map(|(n, kept)| {
                    let op = if *kept { "constant(0)" } else { "parameter(0)" };
                    format!("ENTRY %e {{\n  ROOT %n{n} = f32[] {op}\n}}\n")
                })
                .collect();
            let modules: Vec<_> = texts.iter().map(|t| parse_module(t).unwrap()).collect();
            let list: Vec<Instruction<'_>> =
                modules.iter().map(|m| m.computations[0].instructions[0]).collect();
            let t = NameTable::of(&list, |i| i.opcode() == "constant").unwrap();
            let mut map = std::collections::HashMap::new();
            for (k, i) in list.iter().enumerate() {
                if i.opcode() == "constant" {
                    map.insert(i.bare_name(), k);
                }
            }
            for n in 0..45 {
                let name = format!("n{n}");
                prop_assert_eq!(t.get(&list, &name), map.get(name.as_str()).copied());
            }
            prop_assert!(4 * t.slots.len() >= 5 * list.len() && t.slots.len().is_power_of_two());
            // Added only when new: as a map's first insertion of each name, counted.
            let mut firsts = NameTable::with_room(list.len()).unwrap();
            let mut first = std::collections::HashMap::new();
            for (k, i) in list.iter().enumerate() {
                let new = !first.contains_key(i.bare_name());
                first.entry(i.bare_name()).or_insert(k);
                prop_assert_eq!(firsts.add_new(&list, k).unwrap(), new);
            }
            prop_assert_eq!(firsts.len(), first.len());
            prop_assert!(firsts.add_new(&list, list.len()).is_err());
            for n in 0..45 {
                let name = format!("n{n}");
                prop_assert_eq!(firsts.get(&list, &name), first.get(name.as_str()).copied());
            }
            // Filled by threads, a few instructions each: the same answers, or `None` when a name
            // is kept twice.
            let kept: Vec<&str> = list.iter().filter(|i| i.opcode() == "constant").map(|i| i.bare_name()).collect();
            let twice = (1..kept.len()).any(|j| kept[..j].contains(&kept[j]));
            for chunk in [1, 3, 50] {
                let p = NameTable::of_parallel(&list, |i| i.opcode() == "constant", chunk).unwrap();
                prop_assert_eq!(p.is_none(), twice);
                if let Some(p) = p {
                    prop_assert_eq!(p.len(), kept.len());
                    for n in 0..45 {
                        let name = format!("n{n}");
                        prop_assert_eq!(p.get(&list, &name), map.get(name.as_str()).copied());
                    }
                }
            }
        }
    }
}
