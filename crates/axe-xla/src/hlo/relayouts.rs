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
/// shapes as positions in the lists of [`Relayouts`] (or, in a record made apart by
/// [`Relayouts::record`], the shapes' ids until [`Relayouts::remap`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Record<'a> {
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
/// computation name and each printed shape held once). The records stay in the lists they were made
/// in (one per chunk of a module walked in parallel), one after the other, never copied into one.
/// Two lists are equal when they give the same relayouts in the same order.
#[derive(Clone, Default)]
pub struct Relayouts<'a> {
    /// The records in order, in parts.
    parts: Vec<Vec<Record<'a>>>,
    /// How many records the parts before each hold.
    starts: Vec<usize>,
    computations: Vec<&'a str>,
    /// Per shape: its text as printed and the physical bytes of a result of it.
    shapes: Vec<(Box<str>, i64)>,
}

impl<'a> Relayouts<'a> {
    /// How many there are.
    pub fn len(&self) -> usize {
        self.starts
            .last()
            .map_or(0, |s| s + self.parts.last().map_or(0, Vec::len))
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The relayouts in module order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Relayout<'_>> + '_ {
        let len = self.len();
        Exact {
            inner: self.parts.iter().flatten().map(|r| self.expand(r)),
            left: len,
        }
    }

    /// The `i`-th relayout, if there are that many.
    pub fn get(&self, i: usize) -> Option<Relayout<'_>> {
        // The last part starting at or before `i`.
        let p = self.starts.partition_point(|&s| s <= i).checked_sub(1)?;
        self.parts[p]
            .get(i - self.starts[p])
            .map(|r| self.expand(r))
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
        self.last().reserve_exact(n);
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
        let record = Self::record(
            computation,
            (instruction, opcode, operand),
            (from, to),
            kind,
        );
        self.last().push(record);
        Ok(())
    }

    /// A relayout made apart from any list (by one chunk of a walk in parallel), of the computation at
    /// position `computation` among those the list will hold, between the shapes of ids `from` and
    /// `to`: for [`Relayouts::remap`], then [`Relayouts::append`].
    pub(crate) fn record(
        computation: u32,
        (instruction, opcode, operand): (&'a str, &'a str, &'a str),
        (from, to): (u32, u32),
        kind: Kind,
    ) -> Record<'a> {
        Record {
            instruction,
            opcode,
            operand,
            computation,
            from,
            to,
            kind,
        }
    }

    /// Turns the shape ids of `records` into positions in a list's shapes: id `i` becomes `at[i]`
    /// (an id past `at`, a position no list holds).
    pub(crate) fn remap(records: &mut [Record<'a>], at: &[u32]) {
        let to = |id: u32| at.get(id as usize).copied().unwrap_or(u32::MAX);
        for r in records {
            (r.from, r.to) = (to(r.from), to(r.to));
        }
    }

    /// Adds `records` (made by [`Relayouts::record`], shapes remapped to this list's positions) after
    /// those held, as a part of their own; an error for one naming a computation or shape the list
    /// does not hold.
    pub(crate) fn append(&mut self, records: Vec<Record<'a>>) -> crate::error::Result<()> {
        let (computations, shapes) = (self.computations.len(), self.shapes.len());
        let known = |r: &Record<'_>| {
            (r.computation as usize) < computations
                && (r.from as usize) < shapes
                && (r.to as usize) < shapes
        };
        if !records.iter().all(known) {
            return Err(crate::error::overflow(
                "a relayout naming an unknown computation or shape",
            ));
        }
        if !records.is_empty() {
            self.starts.push(self.len());
            self.parts.push(records);
        }
        Ok(())
    }

    /// The part [`Relayouts::push`] adds to (a new one for a list without parts).
    fn last(&mut self) -> &mut Vec<Record<'a>> {
        if self.parts.is_empty() {
            self.starts.push(0);
            self.parts.push(Vec::new());
        }
        let at = self.parts.len() - 1;
        &mut self.parts[at]
    }
}

/// An iterator that knows how many items it has left.
struct Exact<I> {
    inner: I,
    left: usize,
}

impl<I: Iterator> Iterator for Exact<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        let item = self.inner.next()?;
        self.left = self.left.saturating_sub(1);
        Some(item)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<I: Iterator> ExactSizeIterator for Exact<I> {}

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

    /// Records appended as parts (as chunks of a walk in parallel make them, shapes as ids remapped to
    /// positions) give the list that pushing them one at a time gives: the same length, the same
    /// relayouts in order, each found by position; empty parts and a bad record refused.
    #[test]
    fn parts_give_the_list_pushed_one_at_a_time() {
        let names = ["%a", "%b", "%c", "%d", "%e", "%f", "%g"];
        let mut one = Relayouts::default();
        let mut parts = Relayouts::default();
        for r in [&mut one, &mut parts] {
            r.computation("%c0");
            r.computation("%c1");
            r.shape("f32[2]{0}".into(), 8).unwrap();
            r.shape("f32[2]{0:S(1)}".into(), 16).unwrap();
        }
        // Shape ids 5 and 9 are positions 1 and 0.
        let at = [
            u32::MAX,
            u32::MAX,
            u32::MAX,
            u32::MAX,
            u32::MAX,
            1,
            u32::MAX,
            u32::MAX,
            u32::MAX,
            0,
        ];
        let cuts: [&[usize]; 4] = [&[0, 1, 2], &[], &[3], &[4, 5, 6]];
        for cut in cuts {
            let mut records: Vec<Record<'_>> = cut
                .iter()
                .map(|&i| {
                    let (from, to) = if i % 2 == 0 { (5, 9) } else { (9, 5) };
                    Relayouts::record(
                        u32::from(i > 3),
                        (names[i], "copy", "x"),
                        (from, to),
                        Kind::Layout,
                    )
                })
                .collect();
            Relayouts::remap(&mut records, &at);
            parts.append(records).unwrap();
        }
        for (i, name) in names.iter().enumerate() {
            if i == 4 {
                one.computation("%c1");
            }
            let (from, to) = if i % 2 == 0 { (1, 0) } else { (0, 1) };
            one.push(name, "copy", "x", from, to, Kind::Layout).unwrap();
        }
        // `one` took a third computation name; the relayouts are what is compared.
        assert_eq!(parts.len(), 7);
        assert_eq!(parts.iter().len(), 7);
        let (a, b): (Vec<_>, Vec<_>) = (one.iter().collect(), parts.iter().collect());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!((x.instruction, x.from, x.to), (y.instruction, y.from, y.to));
        }
        assert_eq!(b[4].computation, "%c1");
        assert_eq!(b[3].computation, "%c0");
        for (i, name) in names.iter().enumerate() {
            assert_eq!(parts.get(i).unwrap().instruction, *name);
        }
        assert_eq!(parts.get(7), None);
        let bad = vec![Relayouts::record(
            0,
            ("%z", "copy", "x"),
            (5, 7),
            Kind::Layout,
        )];
        let mut bad_remapped = bad.clone();
        Relayouts::remap(&mut bad_remapped, &at);
        assert!(parts.append(bad_remapped).is_err());
        assert!(parts
            .append(vec![Relayouts::record(
                2,
                ("%z", "copy", "x"),
                (0, 1),
                Kind::Layout
            )])
            .is_err());
        assert_eq!(parts.len(), 7);
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
