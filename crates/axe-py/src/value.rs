//! Value semantics shared by the classes: hashing, and the build id a stale extension is told by.

use std::hash::{Hash, Hasher};

/// A hash of `v` for `__hash__` (stable within a process, as Python's own hashes are).
pub fn hash_of<T: Hash + ?Sized>(v: &T) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.hash(&mut h);
    // Python reserves -1 (u64::MAX once cast) for errors; pyo3 maps it, but keep it out anyway.
    h.finish() >> 1
}

use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;

/// An integer argument out of its type's range as an `AxeError` (a `ValueError`) that says the range,
/// rather than Python's `OverflowError`; other extraction errors (a `TypeError`) unchanged.
fn in_range(e: PyErr, range: &str) -> PyErr {
    Python::attach(|py| {
        if e.is_instance_of::<PyOverflowError>(py) {
            crate::errors::AxeError::new_err(format!("an integer out of range: {range} ({e})"))
        } else {
            e
        }
    })
}

macro_rules! checked_ints {
    ($($(#[$doc:meta])* $name:ident($t:ty, $range:literal);)*) => {$(
        $(#[$doc])*
        pub struct $name(pub $t);

        impl<'a, 'py> FromPyObject<'a, 'py> for $name {
            type Error = PyErr;

            fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
                obj.extract::<$t>().map($name).map_err(|e| in_range(e, $range))
            }
        }
    )*};
}

checked_ints! {
    /// A count or index: an `int` from 0 to 2^64-1.
    U64(u64, "each must be from 0 to 2**64-1");
    /// Dims or a multi-index: a sequence of `int`s from 0 to 2^64-1.
    U64s(Vec<u64>, "each must be from 0 to 2**64-1");
    /// A signed integer: an `int` from -2^63 to 2^63-1.
    I64(i64, "must be from -2**63 to 2**63-1");
    /// A signed multi-index: a sequence of `int`s from -2^63 to 2^63-1.
    I64s(Vec<i64>, "each must be from -2**63 to 2**63-1");
    /// A thread count: an `int` from 0 to the platform's largest size.
    Usize(usize, "must be from 0 to the largest size");
    /// Indices: a sequence of `int`s from 0 to the platform's largest size.
    Usizes(Vec<usize>, "each must be from 0 to the largest size");
    /// Regions: `(start, end)` pairs of `int`s from 0 to 2^64-1.
    Ranges(Vec<(u64, u64)>, "each must be from 0 to 2**64-1");
}

/// What `__reduce__` returns: the class and the arguments that rebuild the value.
pub type Reduced<'py, A> = PyResult<(Bound<'py, PyAny>, A)>;
