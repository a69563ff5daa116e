//! Iters: the building block of shard and replica lists.

use std::fmt;

use crate::axis::Axis;
use crate::error::{LayoutError, Result};

/// An iter `(e, s@a)`: extent `e ≥ 1`, stride `s` (any sign, zero allowed) on axis `a`.
/// It maps digit `i ∈ [0, e)` to `i·s` on axis `a`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Iter {
    extent: u64,
    stride: i64,
    axis: Axis,
}

impl Iter {
    /// A new iter; extent 0 is an error.
    ///
    /// ```
    /// # use axe_layout::{Axis, Iter};
    /// let it = Iter::new(8, 4, Axis::new("lane")?)?;
    /// assert_eq!(it.to_string(), "8:4@lane");
    /// assert!(Iter::new(0, 1, Axis::memory()).is_err());
    /// # Ok::<(), axe_layout::LayoutError>(())
    /// ```
    pub fn new(extent: u64, stride: i64, axis: Axis) -> Result<Iter> {
        if extent == 0 {
            return Err(LayoutError::ZeroExtent);
        }
        Ok(Iter {
            extent,
            stride,
            axis,
        })
    }

    /// An iter on the memory axis `m`.
    pub fn mem(extent: u64, stride: i64) -> Result<Iter> {
        Iter::new(extent, stride, Axis::memory())
    }

    /// The extent `e`.
    pub fn extent(&self) -> u64 {
        self.extent
    }

    /// The stride `s`.
    pub fn stride(&self) -> i64 {
        self.stride
    }

    /// The axis `a`.
    pub fn axis(&self) -> &Axis {
        &self.axis
    }

    /// `(e−1)·|s|`, the length this iter adds to its axis' span (checked).
    pub(crate) fn reach(&self) -> Option<u64> {
        (self.extent - 1).checked_mul(self.stride.unsigned_abs())
    }

    /// Same extent and axis, another stride.
    pub(crate) fn with_stride(&self, stride: i64) -> Iter {
        Iter {
            extent: self.extent,
            stride,
            axis: self.axis,
        }
    }

    /// Same stride and axis, another (non-zero) extent.
    pub(crate) fn with_extent(&self, extent: u64) -> Iter {
        debug_assert!(extent > 0);
        Iter {
            extent,
            stride: self.stride,
            axis: self.axis,
        }
    }

    /// Same extent and stride, another axis.
    pub(crate) fn with_axis(&self, axis: Axis) -> Iter {
        Iter {
            extent: self.extent,
            stride: self.stride,
            axis,
        }
    }
}

/// Prints as `e:s@a`, leaving out `@m`.
impl fmt::Display for Iter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.extent, self.stride)?;
        if !self.axis.is_memory() {
            write!(f, "@{}", self.axis)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Iter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {}@{})", self.extent, self.stride, self.axis)
    }
}
