//! The relayouts of a cost report, held compactly: one 64-byte record per relayout borrowing the
//! module's text, and each printed shape once.

use super::stats::Relayout;

/// What [`Relayout::kind`] says, as one byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    Layout,
    MemorySpace,
    Transpose,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Layout => "layout",
            Kind::MemorySpace => "memory space",
            Kind::Transpose => "transpose",
        }
    }
}

/// One relayout: the instruction's name and opcode, the operand's name, the computation and the two
/// shapes as positions in the lists of [`Relayouts`].
#[derive(Clone, Copy, Debug)]
struct Record<'a> {
    instruction: &'a str,
    opcode: &'a str,
    operand: &'a str,
    computation: u32,
    from: u32,
    to: u32,
    kind: Kind,
}

/// Every relayout of a module, in module order ([`Relayouts::iter`] gives each as a [`Relayout`]).
///
/// A module may hold hundreds of thousands: each takes 64 bytes, the names it gives borrowed from the
/// module's text, the computation and the two shapes as 32-bit positions in lists of their own (each
/// computation name and each printed shape held once). Two lists are equal when they give the same
/// relayouts in the same order.
#[derive(Clone, Default)]
pub struct Relayouts<'a> {
    records: Vec<Record<'a>>,
    computations: Vec<&'a str>,
    /// Per shape: its text as printed and the physical bytes of a result of it.
    shapes: Vec<(Box<str>, i64)>,
}

impl<'a> Relayouts<'a> {
    /// How many there are.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The relayouts in module order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Relayout<'_>> + '_ {
        self.records.iter().map(|r| self.expand(r))
    }

    /// The `i`-th relayout, if there are that many.
    pub fn get(&self, i: usize) -> Option<Relayout<'_>> {
        self.records.get(i).map(|r| self.expand(r))
    }

    fn expand<'r>(&'r self, r: &Record<'a>) -> Relayout<'r> {
        // Positions were checked when the record was added.
        let (from, _) = &self.shapes[r.from as usize];
        let (to, bytes) = &self.shapes[r.to as usize];
        Relayout {
            computation: self.computations[r.computation as usize],
            instruction: r.instruction,
            opcode: r.opcode,
            operand: r.operand,
            from,
            to,
            bytes: *bytes,
            kind: r.kind.name(),
        }
    }

    /// Makes room for `n` more relayouts at once (a list grown one at a time may hold twice its
    /// relayouts' bytes, and three times while it grows).
    pub(crate) fn reserve_exact(&mut self, n: usize) {
        self.records.reserve_exact(n);
    }

    /// Starts the relayouts of computation `name` (call before [`Relayouts::push`]ing any of them).
    pub(crate) fn computation(&mut self, name: &'a str) {
        self.computations.push(name);
    }

    /// Adds a shape (its printed text and the physical bytes of a result of it); its position, for
    /// [`Relayouts::push`].
    pub(crate) fn shape(&mut self, printed: String, bytes: i64) -> crate::error::Result<u32> {
        let at = u32::try_from(self.shapes.len())
            .map_err(|_| crate::error::overflow("more than 2^32 shapes in relayouts"))?;
        self.shapes.push((printed.into_boxed_str(), bytes));
        Ok(at)
    }

    /// Adds a relayout of the computation started last, between shapes `from` and `to` (positions
    /// [`Relayouts::shape`] gave).
    pub(crate) fn push(
        &mut self,
        instruction: &'a str,
        opcode: &'a str,
        operand: &'a str,
        from: u32,
        to: u32,
        kind: Kind,
    ) -> crate::error::Result<()> {
        let computation = self
            .computations
            .len()
            .checked_sub(1)
            .and_then(|c| u32::try_from(c).ok())
            .ok_or_else(|| crate::error::overflow("a relayout outside a computation"))?;
        let known = |s: u32| (s as usize) < self.shapes.len();
        if !known(from) || !known(to) {
            return Err(crate::error::overflow("a relayout naming an unknown shape"));
        }
        self.records.push(Record {
            instruction,
            opcode,
            operand,
            computation,
            from,
            to,
            kind,
        });
        Ok(())
    }
}

impl<'r, 'a> IntoIterator for &'r Relayouts<'a> {
    type Item = Relayout<'r>;
    type IntoIter = Box<dyn ExactSizeIterator<Item = Relayout<'r>> + 'r>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl PartialEq for Relayouts<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl std::fmt::Debug for Relayouts<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_relayout_takes_64_bytes() {
        assert_eq!(std::mem::size_of::<Record<'_>>(), 64);
    }

    #[test]
    fn records_give_back_what_was_pushed() {
        let mut r = Relayouts::default();
        assert!(r.push("%a", "copy", "b", 0, 0, Kind::Layout).is_err());
        r.computation("%c");
        let s = r.shape("f32[2]{0}".into(), 8).unwrap();
        let t = r.shape("f32[2]{0:S(1)}".into(), 16).unwrap();
        assert!(r.push("%a", "copy", "b", s, 7, Kind::Layout).is_err());
        r.push("%a", "copy", "b", s, t, Kind::MemorySpace).unwrap();
        r.push("%t", "transpose", "a", t, s, Kind::Transpose)
            .unwrap();
        let all: Vec<Relayout<'_>> = r.iter().collect();
        assert_eq!(all.len(), 2);
        assert_eq!(
            (
                all[0].computation,
                all[0].instruction,
                all[0].opcode,
                all[0].operand
            ),
            ("%c", "%a", "copy", "b")
        );
        assert_eq!(
            (all[0].from, all[0].to, all[0].bytes, all[0].kind),
            ("f32[2]{0}", "f32[2]{0:S(1)}", 16, "memory space")
        );
        assert_eq!((all[1].bytes, all[1].kind), (8, "transpose"));
        assert_eq!(r.get(1), Some(all[1].clone()));
        assert_eq!(r.get(2), None);
        let names = [Kind::Layout, Kind::MemorySpace, Kind::Transpose].map(Kind::name);
        assert_eq!(names, ["layout", "memory space", "transpose"]);
    }
}
