//! Which array leaves of an instruction's result are values of their own, as XLA's
//! `HloDataflowAnalysis` defines values (`InitializeInstructionValueSets`): the cost report counts
//! each value once, where it is defined, and forwards every other leaf to the value it names.
//!
//! * No leaf is a value of its own for `tuple`, `get-tuple-element`, `bitcast`, `opt-barrier`,
//!   `add-dependency`, `domain` (their operands' values), `call` (its callee's root), `while` and
//!   `conditional` (phis of the loop's or the branches' values, counted where those are defined), the
//!   async `*-done` ops (`copy-done` returns `copy-start{0}`, `all-gather-done` `all-gather-start{1}`,
//!   `collective-permute-done` `collective-permute-start{1}`, `all-reduce-done` its operand,
//!   `async-done` `async-start{1}`, `recv-done{0}` `recv{0}`), the async `*-update` ops, and `copy` of a
//!   tuple (only its index table is new).
//! * Some leaves are: `copy-start` defines `{0}` (the destination) and `{2}` (its context), `{1}` being
//!   its operand; `all-gather-start` defines what is under `{1}` (the gathered results), `{0}` being its
//!   operands; `collective-permute-start` and `send` define every element but `{0}` (their operand);
//!   `async-start` defines its contexts (`{2}` on), its operands being `{0}` and its destination `{1}`
//!   the root of the computation it wraps (counted there), and an async start written as sugar
//!   (`reduce-scatter-start(...)`, no `calls=`) defines its destination too, since no computation in
//!   the text holds it.
//! * Every other instruction defines all its leaves.

/// Which top-level tuple elements of a result hold values of their own ([`Defines::Elements`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Elements {
    /// `{1}`, `{2}`, ...: all but the first.
    NotFirst,
    /// `{1}` only.
    Second,
    /// `{0}`, `{2}`, `{3}`, ...: all but the second.
    NotSecond,
    /// `{2}`, `{3}`, ...: past the second.
    PastSecond,
}

impl Elements {
    /// Whether an array leaf under top-level element `front` (`None`: the result is an array, not a
    /// tuple) is a value of its own. Law: an array result is always its own value; a tuple's leaf
    /// under element `i` is when the variant names `i`.
    pub(crate) fn picks(self, front: Option<usize>) -> bool {
        match front {
            None => true,
            Some(i) => match self {
                Elements::NotFirst => i != 0,
                Elements::Second => i == 1,
                Elements::NotSecond => i != 1,
                Elements::PastSecond => i > 1,
            },
        }
    }
}

/// What an instruction's result adds to the values of a module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Defines {
    /// Every array leaf is a new value.
    All,
    /// No array leaf: each is a value defined elsewhere.
    Nothing,
    /// The array leaves under the top-level elements picked.
    Elements(Elements),
}

/// What an instruction of `opcode` defines (see the module doc); `tuple` says whether its result is
/// a tuple, `calls` whether it names a computation with `calls=` (asked only of async starts).
///
/// Law: `Defines::Nothing` exactly for the opcodes whose every array leaf XLA's dataflow analysis
/// forwards from another value, `Defines::Elements` for those that forward some, `Defines::All` for
/// the rest; so the values of a module with these instructions add up to those of the same module
/// with each forwarded leaf replaced by the value it forwards (tested in `tests/hlo_values.rs`).
pub(crate) fn defines(opcode: &str, tuple: bool, calls: impl FnOnce() -> bool) -> Defines {
    match opcode {
        "tuple" | "get-tuple-element" | "bitcast" | "opt-barrier" | "add-dependency" | "domain"
        | "call" | "while" | "conditional" => Defines::Nothing,
        "copy" if tuple => Defines::Nothing,
        "copy-start" => Defines::Elements(Elements::NotSecond),
        "all-gather-start" => Defines::Elements(Elements::Second),
        "collective-permute-start" | "send" => Defines::Elements(Elements::NotFirst),
        "all-reduce-start" => Defines::All,
        op if op.ends_with("-done") && op != "send-done" => Defines::Nothing,
        op if op.ends_with("-update") => Defines::Nothing,
        op if op.ends_with("-start") => Defines::Elements(if calls() {
            Elements::PastSecond
        } else {
            Elements::NotFirst
        }),
        _ => Defines::All,
    }
}

/// The top-level element of each array leaf of `shape`, in [`crate::shape::Shape::arrays`] order
/// (`None` for an array shape).
pub(crate) fn fronts(shape: &crate::shape::Shape) -> Vec<Option<usize>> {
    shape
        .arrays()
        .into_iter()
        .map(|(path, _)| path.first().copied())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarding_opcodes_define_nothing() {
        for op in [
            "tuple",
            "get-tuple-element",
            "bitcast",
            "opt-barrier",
            "add-dependency",
            "domain",
            "call",
            "while",
            "conditional",
            "copy-done",
            "all-gather-done",
            "all-reduce-done",
            "collective-permute-done",
            "async-done",
            "async-update",
            "recv-done",
            "reduce-scatter-done",
        ] {
            assert_eq!(defines(op, true, || false), Defines::Nothing, "{op}");
        }
        assert_eq!(defines("copy", true, || false), Defines::Nothing);
        assert_eq!(defines("copy", false, || false), Defines::All);
        assert_eq!(defines("all-reduce-start", false, || false), Defines::All);
        assert_eq!(defines("recv", true, || false), Defines::All);
        assert_eq!(
            defines("dynamic-update-slice", false, || false),
            Defines::All
        );
        assert_eq!(
            defines("rng-get-and-update-state", false, || false),
            Defines::All
        );
        let picked = |op: &str, calls: bool| -> Vec<bool> {
            let Defines::Elements(e) = defines(op, true, || calls) else {
                panic!("{op}")
            };
            (0..4).map(|i| e.picks(Some(i))).collect()
        };
        assert_eq!(picked("copy-start", false), [true, false, true, true]);
        assert_eq!(
            picked("all-gather-start", false),
            [false, true, false, false]
        );
        assert_eq!(
            picked("collective-permute-start", false),
            [false, true, true, true]
        );
        assert_eq!(picked("send", false), [false, true, true, true]);
        assert_eq!(picked("async-start", true), [false, false, true, true]);
        assert_eq!(
            picked("reduce-scatter-start", false),
            [false, true, true, true]
        );
        assert!(Elements::Second.picks(None));
    }
}
