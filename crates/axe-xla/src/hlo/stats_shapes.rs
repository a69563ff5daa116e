//! The distinct shape texts of a module, each parsed and sized once, for the cost report.

use foldhash::HashMap;

use super::moves::{relayout_kind, transpose_kind};
use super::relayouts::{Kind, Relayouts};
use super::stats::Totals;
use super::stats_values::Defines;
use crate::error::Result;
use crate::primitive::PrimitiveType;
use crate::shape::{Dims, Shape};
use crate::size::sizes;

/// A distinct shape text, parsed and sized once.
pub(crate) struct Info {
    pub(crate) shape: Shape,
    /// Per array leaf with a size (unbounded dynamic arrays have none): its position among
    /// [`Shape::arrays`], its memory space and its sizes.
    pub(crate) leaves: Vec<(usize, i64, Totals)>,
    /// The positions among [`Shape::arrays`] of the arrays with an unbounded dimension (`?`): they have
    /// no size, and the report skips them.
    pub(crate) unbounded: Vec<usize>,
    /// Whether some leaf has padding.
    pub(crate) padded: bool,
    /// Per array of [`Shape::arrays`]: the top-level tuple element it is under (`None` for an array
    /// shape), for [`super::stats_values::Elements::picks`].
    pub(crate) fronts: Vec<Option<usize>>,
}

impl Info {
    /// Whether array `k` of [`Shape::arrays`] holds a value of its own in a result that `defines` so
    /// (see [`super::stats_values`]). Law: always for `Defines::All`, never for `Defines::Nothing`,
    /// for the arrays under the picked top-level elements otherwise.
    pub(crate) fn defines_leaf(&self, defines: Defines, k: usize) -> bool {
        match defines {
            Defines::All => true,
            Defines::Nothing => false,
            Defines::Elements(e) => e.picks(self.fronts.get(k).copied().flatten()),
        }
    }

    /// The sizes of the leaves that hold values of their own (see [`Info::defines_leaf`]), in order.
    pub(crate) fn defined_leaves(
        &self,
        defines: Defines,
    ) -> impl Iterator<Item = &(usize, i64, Totals)> + '_ {
        self.leaves
            .iter()
            .filter(move |(k, _, _)| self.defines_leaf(defines, *k))
    }

    /// The physical bytes of [`Info::defined_leaves`]: what a device holds of them unsharded (an
    /// error past 2^63).
    pub(crate) fn defined_bytes(&self, defines: Defines) -> Result<i64> {
        self.defined_leaves(defines).try_fold(0i64, |b, (_, _, t)| {
            b.checked_add(t.physical_bytes)
                .ok_or_else(|| crate::error::overflow("adding up bytes per device"))
        })
    }
}

pub(crate) fn info_of(text: &str) -> Result<Info> {
    let shape = crate::text::parse_shape(text)?;
    let mut leaves = Vec::new();
    let mut unbounded = Vec::new();
    for (k, (_, a)) in shape.arrays().into_iter().enumerate() {
        if a.dims.iter().any(|d| d.bound().is_none()) {
            unbounded.push(k); // unbounded dynamic: no size
            continue;
        }
        let z = sizes(a)?;
        leaves.push((
            k,
            a.layout.memory_space,
            Totals {
                arrays: 1,
                logical_bytes: z.logical_bytes,
                xla_bytes: z.xla_array_size_bytes,
                physical_bytes: z.physical_bytes,
            },
        ));
    }
    let padded = leaves.iter().any(|l| l.2.padding_bytes() > 0);
    let fronts = super::stats_values::fronts(&shape);
    Ok(Info {
        shape,
        leaves,
        unbounded,
        padded,
        fronts,
    })
}

/// How many arrays with an unbounded dimension (`?`) the values held in memory have (the values
/// [`super::stats::Report::materialized`] adds up, where such arrays are skipped: they have no size).
///
/// Law: the number of array leaves with a `?` dimension that hold a value of their own (as the report's
/// walk defines values: [`Info::defines_leaf`]) in the instructions of the materialized computations,
/// the parameters of computations other than the entry left out; 0 for a module without `?`.
pub(crate) fn skipped_unbounded(module: &super::Module<'_>) -> Result<u64> {
    let flags = super::calls::materialized(module);
    let entry = super::calls::entry_index(module);
    let mut count = 0u64;
    for (ci, comp) in module.computations.iter().enumerate() {
        if !flags[ci] {
            continue;
        }
        for inst in &comp.instructions {
            // Rare: most modules hold no `?`, and a shape text without one has no unbounded array.
            if !inst.shape_text().contains('?')
                || (entry != Some(ci) && inst.opcode() == "parameter")
            {
                continue;
            }
            let info = info_of(inst.shape_text())?;
            let def = super::stats_values::defines(
                inst.opcode(),
                matches!(info.shape, Shape::Tuple(_)),
                || inst.attribute("calls").is_some(),
            );
            let n = info
                .unbounded
                .iter()
                .filter(|&&k| info.defines_leaf(def, k))
                .count();
            count = count.saturating_add(n as u64);
        }
    }
    Ok(count)
}

/// Text as a map key, hashed as its bytes alone (a `str` key adds a terminator, hashed separately).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Text<'a>(&'a str);

impl std::hash::Hash for Text<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write(self.0.as_bytes());
    }
}

/// The module's distinct shape texts, each parsed once: a text's id is its position in `infos`.
#[derive(Default)]
pub(crate) struct Shapes<'a> {
    ids: HashMap<Text<'a>, usize>,
    pub(crate) infos: Vec<Info>,
    /// Per id: its position among the shapes of the relayouts, once a relayout names it.
    printed: Vec<Option<u32>>,
    /// Per id: the bytes a value without `sharding=` holds on every device, once needed.
    whole: Vec<Option<i64>>,
    /// The last two texts looked up, and their ids, the latest first.
    last: [Option<(&'a str, usize)>; 2],
    /// Per id of an array shape: its group, the arrays of its element type and dimensions.
    group_of: Vec<Option<usize>>,
    /// The groups by element type and dimensions.
    groups: HashMap<(PrimitiveType, Dims), usize>,
    /// Per group: the id of its first array, and whether another array of the group has another layout.
    group: Vec<(usize, bool)>,
    /// The kind of relayout from one id to another (see [`relayout_kind`]), decided once per pair.
    kinds: HashMap<(usize, usize), Option<Kind>>,
    /// The last pair decided.
    last_kind: Option<((usize, usize), Option<Kind>)>,
    /// The kind of a transpose from one id to another by its `dimensions=` text (see
    /// [`transpose_kind`]), decided once per triple.
    transposes: HashMap<(usize, usize, Option<&'a str>), Option<Kind>>,
}

impl<'a> Shapes<'a> {
    /// The id of `text`, parsed and sized the first time it is seen.
    pub(crate) fn id(&mut self, text: &'a str) -> Result<usize> {
        if let Some((last, id)) = self.last[0] {
            if last == text {
                return Ok(id);
            }
        }
        if let Some((last, id)) = self.last[1] {
            if last == text {
                self.last.swap(0, 1);
                return Ok(id);
            }
        }
        let id = match self.ids.get(&Text(text)) {
            Some(&id) => id,
            None => self.add(text)?,
        };
        self.last = [Some((text, id)), self.last[0]];
        Ok(id)
    }

    /// The id of `text` if it was seen.
    pub(crate) fn known(&self, text: &str) -> Option<usize> {
        self.ids.get(&Text(text)).copied()
    }

    fn add(&mut self, text: &'a str) -> Result<usize> {
        let info = info_of(text)?;
        Ok(self.insert(text, info))
    }

    /// The id of `text`, added with `info` (what [`Shapes::id`] would parse from it) when new.
    pub(crate) fn adopt(&mut self, text: &'a str, info: Info) -> usize {
        match self.ids.get(&Text(text)) {
            Some(&id) => id,
            None => self.insert(text, info),
        }
    }

    /// The texts and their parsed shapes, by id (the shapes leave `self`).
    pub(crate) fn take(&mut self) -> Vec<(&'a str, Info)> {
        let mut texts = vec![""; self.infos.len()];
        for (t, &id) in &self.ids {
            texts[id] = t.0;
        }
        texts
            .into_iter()
            .zip(std::mem::take(&mut self.infos))
            .collect()
    }

    fn insert(&mut self, text: &'a str, info: Info) -> usize {
        let id = self.infos.len();
        let group = match &info.shape {
            Shape::Array(a) => Some(match self.groups.entry((a.element_type, a.dims.clone())) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    let g = *e.get();
                    let (first, mixed) = &mut self.group[g];
                    if !*mixed {
                        if let Shape::Array(f) = &self.infos[*first].shape {
                            *mixed = f.layout != a.layout;
                        }
                    }
                    g
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    self.group.push((id, false));
                    *e.insert(self.group.len() - 1)
                }
            }),
            _ => None,
        };
        self.infos.push(info);
        self.group_of.push(group);
        self.printed.push(None);
        self.whole.push(None);
        self.ids.insert(Text(text), id);
        id
    }

    /// Whether some array seen so far has the dimensions and element type of array shape `id` but
    /// another layout: only then can an operand's layout differ from a result's of shape `id`.
    pub(crate) fn relayouts_possible(&self, id: usize) -> bool {
        self.group_of[id].is_some_and(|g| self.group[g].1)
    }

    /// How data moves from shape `src` into array shape `id` (not a transpose), decided once per pair.
    pub(crate) fn kind(&mut self, src: usize, id: usize) -> Option<Kind> {
        if let Some((pair, kind)) = self.last_kind {
            if pair == (src, id) {
                return kind;
            }
        }
        let infos = &self.infos;
        let kind = *self
            .kinds
            .entry((src, id))
            .or_insert_with(|| match &infos[id].shape {
                Shape::Array(result) => relayout_kind(&infos[src].shape, result),
                _ => None,
            });
        self.last_kind = Some(((src, id), kind));
        kind
    }

    /// How data moves from shape `src` into shape `id` through a transpose of `dimensions=` text
    /// `dimensions` ([`transpose_kind`]), decided once per triple.
    pub(crate) fn transpose(
        &mut self,
        src: usize,
        id: usize,
        dimensions: Option<&'a str>,
    ) -> Option<Kind> {
        let infos = &self.infos;
        *self
            .transposes
            .entry((src, id, dimensions))
            .or_insert_with(|| transpose_kind(&infos[src].shape, &infos[id].shape, dimensions))
    }

    /// The position of shape `id` among the shapes of `relayouts`, added the first time.
    pub(crate) fn printed(&mut self, id: usize, relayouts: &mut Relayouts<'a>) -> Result<u32> {
        if let Some(at) = self.printed[id] {
            return Ok(at);
        }
        let info = &self.infos[id];
        let text = match &info.shape {
            Shape::Array(a) => a.to_string(),
            s => s.to_string(),
        };
        let bytes = info.leaves.first().map_or(0, |l| l.2.physical_bytes);
        let at = relayouts.shape(text, bytes)?;
        self.printed[id] = Some(at);
        Ok(at)
    }

    /// Works out [`Shapes::whole`] for every shape, so that [`Shapes::whole_known`] can give it.
    pub(crate) fn fill_whole(&mut self) {
        for (w, info) in self.whole.iter_mut().zip(&self.infos) {
            if w.is_none() {
                *w = super::per_device::whole_bytes(&info.shape).ok();
            }
        }
    }

    /// [`Shapes::whole`] once [`Shapes::fill_whole`] has run (an error where it was one).
    pub(crate) fn whole_known(&self, id: usize) -> Result<i64> {
        self.whole[id].ok_or_else(|| crate::error::overflow("the bytes of a shape"))
    }

    /// The bytes a value of shape `id` without `sharding=` holds on every device.
    pub(crate) fn whole(&mut self, id: usize) -> Result<i64> {
        if let Some(b) = self.whole[id] {
            return Ok(b);
        }
        let b = super::per_device::whole_bytes(&self.infos[id].shape)?;
        self.whole[id] = Some(b);
        Ok(b)
    }
}
