//! The computations of a module as XLA's parser sees them: each defined once, one `ENTRY`, each call
//! naming a computation defined before its caller (XLA reads computations in order, so a later one, or
//! the caller itself, "does not exist"), each computation wrapped by one `async-start` at most.

use foldhash::{HashSet, HashSetExt};

use super::scan::module_error;
use super::validate::{at, bare};
use super::Computation;
use crate::error::Result;

/// Each computation is wrapped by one `async-start` at most (XLA gives the wrapped computation its
/// caller): `wrapped` holds the `calls=` values of the async-starts in module order (gathered by
/// [`super::validate::Checker`]); the error is at the second one naming a computation.
pub(crate) fn async_wrapped_once(text: &str, wrapped: &[&str]) -> Result<()> {
    let mut seen: HashSet<&str> = HashSet::with_capacity(wrapped.len());
    for v in wrapped {
        let name = bare(
            v.trim()
                .trim_start_matches('{')
                .trim_end_matches('}')
                .trim(),
        );
        if !seen.insert(name) {
            return Err(module_error(
                text,
                at(text, v),
                format!("computation {name} is already wrapped by another async-start"),
            ));
        }
    }
    Ok(())
}

/// What a call finds under the name it gives (see [`callee`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Callee {
    /// A computation defined before the caller: the call is valid.
    Defined,
    /// A computation defined after the caller (XLA: "computation does not exist").
    Later,
    /// The calling computation itself.
    Itself,
    /// No computation of that name.
    Missing,
}

/// What a call from computation `caller` to `name` (both bare) finds, XLA reading computations in
/// order: [`Callee::Defined`] exactly when `name` is in `before` (the computations defined before the
/// caller) — so no call graph read this way has a cycle, and each callee comes before its callers.
pub(crate) fn callee(
    name: &str,
    caller: &str,
    before: &HashSet<&str>,
    all: &HashSet<&str>,
) -> Callee {
    if before.contains(name) {
        Callee::Defined
    } else if name == caller {
        Callee::Itself
    } else if all.contains(name) {
        Callee::Later
    } else {
        Callee::Missing
    }
}

/// The error message of a call to `name` (bare) that finds `found`, none for a valid call.
pub(crate) fn callee_error(name: &str, found: Callee) -> Option<String> {
    match found {
        Callee::Defined => None,
        Callee::Missing => Some(format!("computation {name} does not exist")),
        Callee::Later => Some(format!(
            "computation {name} is defined after this use: XLA reads computations in order, so a \
             callee must be defined before its callers"
        )),
        Callee::Itself => Some(format!(
            "computation {name} calls itself: XLA reads computations in order and refuses \
             recursive calls (a callee must be defined before its callers)"
        )),
    }
}

/// The computations' names (without `%`), or the error at the first one defined twice.
pub(crate) fn computation_names<'s>(
    text: &str,
    computations: &[Computation<'s>],
) -> Result<HashSet<&'s str>> {
    let mut names: HashSet<&str> = HashSet::with_capacity(computations.len());
    let mut entry = false;
    for c in computations {
        if c.is_entry && std::mem::replace(&mut entry, true) {
            return Err(module_error(
                text,
                at(text, c.name),
                format!(
                    "computation {} is a second ENTRY: a module has only one",
                    bare(c.name)
                ),
            ));
        }
        if !names.insert(bare(c.name)) {
            return Err(module_error(
                text,
                at(text, c.name),
                format!("computation {} is defined twice", bare(c.name)),
            ));
        }
    }
    Ok(names)
}
