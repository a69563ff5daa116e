//! A device mesh: named axes, their sizes, and the device id at each mesh position.

use crate::error::{Result, ShardError};

/// The most devices a mesh may hold (bounds every per-device computation).
pub const MAX_DEVICES: u64 = 1 << 20;

/// A device mesh: axes with names and sizes, and device ids in row-major order over the mesh positions.
///
/// A mesh made by splitting another's axis (HLO text or Shardy sub-axes read onto `x=4` give axes `x_0=2,
/// x_1=2`) knows which axis each piece splits ([`Mesh::split_of`]), so that Shardy text names the pieces
/// as sub-axes of `x` while axes a user named `x_0`, `x_1` keep their names. Equality compares the axes
/// (names and sizes) and the devices, not where the axes came from.
#[derive(Clone, Debug)]
pub struct Mesh {
    names: Vec<String>,
    sizes: Vec<u64>,
    devices: Vec<u64>,
    /// Per axis, the axis it is a piece of where a split made it; empty where no axis is a piece.
    split_of: Vec<Option<String>>,
}

impl PartialEq for Mesh {
    fn eq(&self, other: &Mesh) -> bool {
        self.names == other.names && self.sizes == other.sizes && self.devices == other.devices
    }
}

impl Eq for Mesh {}

impl Mesh {
    /// A mesh with the default device order `0..N-1`, row-major over the positions.
    pub fn new(axes: &[(&str, u64)]) -> Result<Mesh> {
        let n = count(axes.iter().map(|a| a.1))?;
        Mesh::with_devices(axes, (0..n).collect())
    }

    /// A mesh with unnamed axes (named `d0`, `d1`, ...) and the default device order.
    pub fn from_sizes(sizes: &[u64]) -> Result<Mesh> {
        let names: Vec<String> = (0..sizes.len()).map(|i| format!("d{i}")).collect();
        let axes: Vec<(&str, u64)> = names
            .iter()
            .map(String::as_str)
            .zip(sizes.iter().copied())
            .collect();
        Mesh::new(&axes)
    }

    /// A mesh from its text form: `x=2,y=4` (named axes), `2,4` (axes `d0`, `d1`) or `8`, with the device
    /// ids at the mesh positions (row-major) when given, else `0..N-1`. A Shardy mesh is read too:
    /// `<["x"=2, "y"=4]>`, with `device_ids=[...]` or not, `#sdy.mesh<...>` or a whole
    /// `sdy.mesh @mesh = <...>` line (see [`crate::notation::sdy::parse_sdy_mesh`]); `devices`, when
    /// given, replace its ids.
    pub fn from_spec(spec: &str, devices: Option<Vec<u64>>) -> Result<Mesh> {
        let t = spec.trim_start();
        if t.starts_with('<')
            || t.starts_with("#sdy")
            || t.starts_with("sdy.")
            || t.starts_with("mesh<")
        {
            let m = crate::notation::sdy::parse_sdy_mesh(spec)?;
            return match devices {
                None => Ok(m),
                Some(d) => {
                    let axes: Vec<(&str, u64)> = m
                        .names
                        .iter()
                        .map(String::as_str)
                        .zip(m.sizes.iter().copied())
                        .collect();
                    Mesh::with_devices(&axes, d)
                }
            };
        }
        let mut axes: Vec<(String, u64)> = Vec::new();
        for (i, part) in spec.split(',').enumerate() {
            let part = part.trim();
            let (name, size) = match part.split_once('=') {
                Some((n, s)) => (n.trim().to_string(), s.trim()),
                None => (format!("d{i}"), part),
            };
            let size = size.parse::<u64>().map_err(|e| {
                let why = match e.kind() {
                    std::num::IntErrorKind::PosOverflow => {
                        format!(
                            "size {} does not fit in 64 bits (a mesh has at most {MAX_DEVICES} devices)",
                            brief(size)
                        )
                    }
                    _ => "expected NAME=SIZE or SIZE".to_string(),
                };
                ShardError::Mesh(format!("axis {:?} of {:?}: {why}", brief(part), brief(spec)))
            })?;
            axes.push((name, size));
        }
        let refs: Vec<(&str, u64)> = axes.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        match devices {
            None => Mesh::new(&refs),
            Some(d) => Mesh::with_devices(&refs, d),
        }
    }

    /// A mesh whose device at each position (row-major) is given: ids must be distinct.
    pub fn with_devices(axes: &[(&str, u64)], devices: Vec<u64>) -> Result<Mesh> {
        let n = count(axes.iter().map(|a| a.1))?;
        for (i, (name, size)) in axes.iter().enumerate() {
            if *size == 0 {
                return Err(ShardError::Mesh(format!(
                    "axis {name:?} has size 0 (sizes must be at least 1)"
                )));
            }
            if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                return Err(ShardError::Mesh(format!(
                    "axis name {name:?} must be letters, digits or '_'"
                )));
            }
            if axes[..i].iter().any(|(m, _)| m == name) {
                return Err(ShardError::Mesh(format!("axis {name:?} is named twice")));
            }
        }
        if devices.len() as u64 != n {
            return Err(ShardError::Mesh(format!(
                "{} device ids given for a mesh of {n} positions",
                devices.len()
            )));
        }
        // XLA's device ids are int64: an id past it could not be written in an HloSharding and read back.
        if let Some(d) = devices.iter().find(|&&d| i64::try_from(d).is_err()) {
            return Err(ShardError::Mesh(format!(
                "device id {d} is past {}: XLA's device ids are signed 64-bit integers",
                i64::MAX
            )));
        }
        let mut sorted = devices.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(ShardError::Mesh(format!(
                "device id {} appears twice",
                w[0]
            )));
        }
        Ok(Mesh {
            names: axes.iter().map(|a| a.0.to_string()).collect(),
            sizes: axes.iter().map(|a| a.1).collect(),
            devices,
            split_of: Vec::new(),
        })
    }

    /// The axis that axis `a` is a piece of, where a split of that axis made `a` (`x` for the `x_0` and
    /// `x_1` that reading `{devices=[2,2]<=[4]}` onto `x=4` makes); `None` for an axis as named (one a
    /// user named `x_0` included).
    pub fn split_of(&self, a: usize) -> Option<&str> {
        self.split_of.get(a).and_then(Option::as_deref)
    }

    /// The same mesh with `split_of[a]` the axis axis `a` is a piece of (see [`Mesh::split_of`]; what
    /// [`Mesh::split_of`] gives per axis, carried to a copy made from names and sizes); a list of another
    /// length, or one naming no split, records none. Law: the mesh stays equal to `self`.
    pub fn with_split_of(mut self, split_of: Vec<Option<String>>) -> Mesh {
        let any = split_of.iter().any(Option::is_some);
        self.split_of = if any && split_of.len() == self.rank() {
            split_of
        } else {
            Vec::new()
        };
        self
    }

    /// A mesh whose axes `axes` with device ids `devices` include pieces of split axes: `split_of[a]` is
    /// the axis axis `a` is a piece of ([`Mesh::split_of`]). Errors as [`Mesh::with_devices`] does, and
    /// where a piece takes the name of another axis (splitting `x` into `x_0`, `x_1` on a mesh with an
    /// axis of its own named `x_0`), naming the clash.
    pub(crate) fn with_pieces(
        axes: &[(String, u64)],
        devices: Vec<u64>,
        split_of: Vec<Option<String>>,
    ) -> Result<Mesh> {
        for (i, (name, _)) in axes.iter().enumerate() {
            let twin = axes[..i].iter().position(|(n, _)| n == name);
            if let Some(j) = twin {
                let of = |k: usize| split_of.get(k).cloned().flatten();
                if let Some(of) = of(i).or_else(|| of(j)) {
                    return Err(ShardError::Mesh(format!(
                        "splitting mesh axis {of:?} makes a piece named {name:?}, the name of another \
                         mesh axis: rename that axis (the pieces of a split axis x are named x_0, x_1, ...)"
                    )));
                }
            }
        }
        let refs: Vec<(&str, u64)> = axes.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        Ok(Mesh::with_devices(&refs, devices)?.with_split_of(split_of))
    }

    /// Per axis, the axis it is a piece of ([`Mesh::split_of`]), as [`Mesh::with_split_of`] takes it.
    pub(crate) fn split_list(&self) -> Vec<Option<String>> {
        (0..self.rank())
            .map(|a| self.split_of(a).map(str::to_string))
            .collect()
    }

    /// The axis names.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The axis sizes.
    pub fn sizes(&self) -> &[u64] {
        &self.sizes
    }

    /// The device ids, row-major over the mesh positions.
    pub fn devices(&self) -> &[u64] {
        &self.devices
    }

    /// The number of devices.
    pub fn len(&self) -> usize {
        self.devices.len()
    }

    /// Never true: a mesh has at least one device.
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }

    /// The number of axes.
    pub fn rank(&self) -> usize {
        self.sizes.len()
    }

    /// The index of the axis named `name`.
    pub fn axis(&self, name: &str) -> Result<usize> {
        self.names.iter().position(|n| n == name).ok_or_else(|| {
            ShardError::Sharding(format!(
                "unknown mesh axis {name:?} (the mesh has {})",
                self.names
                    .iter()
                    .map(|n| format!("{n:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
    }

    /// Whether the device ids are the default `0..N-1`.
    pub fn is_default_order(&self) -> bool {
        self.devices.iter().enumerate().all(|(i, &d)| d == i as u64)
    }

    /// The mesh coordinates of position `pos` (row-major).
    pub fn coords(&self, mut pos: usize) -> Vec<u64> {
        let mut c = vec![0; self.sizes.len()];
        for i in (0..self.sizes.len()).rev() {
            c[i] = pos as u64 % self.sizes[i];
            pos /= self.sizes[i] as usize;
        }
        c
    }
}

/// The product of sizes, checked, at most [`MAX_DEVICES`].
pub(crate) fn count(sizes: impl IntoIterator<Item = u64>) -> Result<u64> {
    let mut n: u64 = 1;
    for s in sizes {
        n = n
            .checked_mul(s)
            .filter(|&n| n <= MAX_DEVICES)
            .ok_or_else(|| ShardError::Mesh(format!("more than {MAX_DEVICES} devices")))?;
    }
    Ok(n)
}

/// `s` as an error quotes it: whole up to 60 characters, else its first 60 and `…`.
fn brief(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}
