//! Named axes of the coordinate space.
//!
//! An axis is just a name: `m` (the default memory axis), `lane`, `warp`, `reg`, `gpu`, `P`, `F`, `TLane`, ...
//! Any identifier is valid and nothing has to be registered. Axes order by name, which is the order used
//! wherever coordinates are listed.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Mutex, OnceLock};

use crate::error::{LayoutError, Result};

/// A named axis. Names are interned, so an axis is a plain copyable reference and comparing two axes
/// compares pointers first.
#[derive(Clone, Copy, Eq, PartialOrd, Ord)]
pub struct Axis(&'static str);

impl std::hash::Hash for Axis {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl PartialEq for Axis {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0) || self.0 == other.0
    }
}

/// The interned axis name equal to `name` (each distinct name is stored once for the process).
fn intern(name: &str) -> &'static str {
    thread_local! {
        static RECENT: std::cell::RefCell<Vec<&'static str>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    if let Some(hit) = RECENT.with(|r| r.borrow().iter().copied().find(|n| *n == name)) {
        return hit;
    }
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let interned = match names.get(name) {
        Some(n) => *n,
        None => {
            let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
            names.insert(leaked);
            leaked
        }
    };
    RECENT.with(|r| {
        let mut r = r.borrow_mut();
        if r.len() >= 32 {
            r.remove(0);
        }
        r.push(interned);
    });
    interned
}

/// What kind of resource an axis names, guessed from common names. No operator depends on it; tools that
/// draw or explain layouts use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisKind {
    /// Addresses in some memory (`m`, `P`, `F`, `TLane`, `TCol`, `reg`, ...).
    Memory,
    /// Threads and their groups (`lane`, `laneid`, `warp`, `warpid`, `tid`, `cta`, ...).
    Thread,
    /// Devices of a mesh (`gpu`, `gpuid`, `device`, `dev`, ...).
    Device,
}

impl Axis {
    /// An axis with the given name, which must be an identifier `[A-Za-z_][A-Za-z0-9_]*`.
    ///
    /// ```
    /// # use axe_layout::Axis;
    /// assert_eq!(Axis::new("lane")?.name(), "lane");
    /// assert!(Axis::new("9lives").is_err());
    /// # Ok::<(), axe_layout::LayoutError>(())
    /// ```
    pub fn new(name: &str) -> Result<Axis> {
        if !is_identifier(name) {
            return Err(LayoutError::InvalidAxis(name.to_string()));
        }
        if name == "m" {
            return Ok(Axis::memory());
        }
        Ok(Axis(intern(name)))
    }

    /// The default memory axis `m`.
    pub fn memory() -> Axis {
        Axis("m")
    }

    /// The axis name.
    pub fn name(&self) -> &'static str {
        self.0
    }

    /// Whether this is the default memory axis `m`.
    pub fn is_memory(&self) -> bool {
        self.0 == "m"
    }

    /// The kind of resource this axis most likely names (see [`AxisKind`]).
    pub fn kind(&self) -> AxisKind {
        let n = self.0.to_ascii_lowercase();
        let n = n.trim_end_matches(|c: char| c.is_ascii_digit() || c == '_');
        let device = [
            "gpu", "gpuid", "device", "dev", "devid", "node", "host", "rank", "mesh", "tpu",
        ];
        let thread = [
            "lane",
            "laneid",
            "warp",
            "warpid",
            "thread",
            "tid",
            "tidx",
            "threadidx",
            "cta",
            "ctaid",
            "block",
            "blockidx",
            "wg",
            "warpgroup",
            "wid_in_wg",
            "tid_in_wg",
            "cluster",
            "sm",
            "core",
        ];
        if device
            .iter()
            .any(|d| n == *d || n.starts_with("gpuid") || n.starts_with("device"))
            || ["gpu_", "dev_", "mesh_", "device_"]
                .iter()
                .any(|p| n.starts_with(p))
        {
            AxisKind::Device
        } else if thread.contains(&n) {
            AxisKind::Thread
        } else {
            AxisKind::Memory
        }
    }
}

pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Debug for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "@{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_kinds() {
        assert!(Axis::new("_x1").is_ok());
        assert!(Axis::new("").is_err());
        assert!(Axis::new("a-b").is_err());
        assert!(Axis::new("m").unwrap().is_memory());
        assert_eq!(Axis::new("laneid").unwrap().kind(), AxisKind::Thread);
        assert_eq!(Axis::new("gpuid_x").unwrap().kind(), AxisKind::Device);
        assert_eq!(Axis::new("TCol").unwrap().kind(), AxisKind::Memory);
    }
}
