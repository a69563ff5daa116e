//! Where a sharded array lives: its sharding, each device's memory layout and its element type; and the
//! layouts of pieces of a device's buffer.

use std::ops::Range;

use axe_relayout::TensorLayout;
use axe_shard::{DeviceRegion, Mesh, Sharding};
use axe_xla::{ArrayShape, Dim, PrimitiveType};

use crate::exec_error::{dims_text, region_text, ExecError, ExecResult};
use crate::factor::{own_factors, split_box, split_shape, Grains};

/// A shard's layout keeps one offset per index of each dimension; their count may pass the shard's
/// element count by at most this much (so an empty shard with one enormous dimension is refused rather
/// than tabled).
pub const MAX_TABLE: u64 = 1 << 20;

/// How every device lays out its shard in memory, over its padded local shape.
#[derive(Clone, Debug, PartialEq)]
pub enum MemoryLayout {
    /// Row-major (XLA's default layout).
    RowMajor,
    /// An XLA layout, applied to each device's padded local shape (`{1,0:T(8,128)}`).
    Xla(axe_xla::Layout),
    /// An Axe layout on the memory axis `m`; its shape must be each holding device's padded local shape.
    Axe(axe_layout::Layout),
}

impl MemoryLayout {
    /// Reads a layout: XLA layout text (`{1,0:T(8,128)}`, for arrays of `rank` dims) when it starts with
    /// `{`, `row-major` for [`MemoryLayout::RowMajor`], an Axe layout otherwise.
    pub fn parse(text: &str, rank: usize) -> ExecResult<MemoryLayout> {
        let t = text.trim();
        if t == "row-major" {
            Ok(MemoryLayout::RowMajor)
        } else if t.starts_with('{') {
            axe_xla::parse_layout(t, rank)
                .map(MemoryLayout::Xla)
                .map_err(|e| ExecError::Input(format!("XLA layout {t:?}: {e}")))
        } else {
            axe_layout::parse(t)
                .map(MemoryLayout::Axe)
                .map_err(|e| ExecError::Input(format!("Axe layout {t:?}: {e}")))
        }
    }
}

/// A sharded array as the devices hold it: the sharding, each device's memory layout, the element type.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// Which device holds which region.
    pub sharding: Sharding,
    /// How each device lays out its padded local shard.
    pub layout: MemoryLayout,
    /// The element type (any whole number of bytes moves; reductions need a numeric type).
    pub dtype: PrimitiveType,
}

/// One device's shard: its region of the global array and its buffer's layout.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceBuffer {
    /// What the device holds.
    pub region: DeviceRegion,
    /// Per dimension of the padded local shape, the factors it is indexed by, row-major, outermost
    /// first (`[P]` for a dimension kept whole): a long dimension whose boxes all start and end on
    /// multiples of a grain is indexed as factors, so its offset tables cost their sum, not `P`.
    pub split: Vec<Vec<u64>>,
    /// Where each element of the padded local shape lies in its buffer, over the factors of
    /// [`DeviceBuffer::split`] (their concatenation is `layout.dims`): use [`DeviceBuffer::offset`] and
    /// [`DeviceBuffer::sub`] to address it by local indices.
    pub layout: TensorLayout,
    /// Whether the device holds any part of the array: false for the devices a maximal sharding leaves
    /// empty (whose region cannot say so for a scalar, whose region is `[]` either way) and for empty
    /// regions. A device holding nothing has a buffer of [`DeviceBuffer::bytes`] bytes, zero unless the
    /// XLA rule pads its empty shard.
    pub holds: bool,
    /// Whether the buffer is row-major over the padded local shape: boxes of it are then addressed by
    /// its strides and copied as contiguous runs, whatever their bounds, and its long dimensions are
    /// indexed as factors of their own extents where the plan's bounds give none (so
    /// [`DeviceBuffer::sub`] may refuse a box off those factors; the runs never need it).
    pub rows: bool,
}

impl DeviceBuffer {
    /// Bytes the device's buffer needs.
    pub fn bytes(&self) -> ExecResult<usize> {
        usize::try_from(self.layout.bytes())
            .map_err(|_| ExecError::Input("a device buffer does not fit in memory".into()))
    }

    /// The slot of the element at local index `local` (first copy), as [`TensorLayout::offset`] over
    /// the padded local shape.
    pub fn offset(&self, local: &[u64]) -> i64 {
        let mut at = self.layout.replicas.first().copied().unwrap_or(0);
        let mut k = 0;
        for (&x, f) in local.iter().zip(&self.split) {
            // The digits of x over the factors, innermost first; the outermost takes the rest.
            let mut rest = x;
            for (j, &e) in f.iter().enumerate().rev() {
                let digit = if j == 0 { rest } else { rest % e.max(1) };
                rest /= e.max(1);
                at += self.layout.tables[k + j][digit as usize];
            }
            k += f.len();
        }
        at
    }

    /// The layout of the box `local` (local indices) of this buffer: [`sub_box`] over the factors.
    /// Every box of a reshard starts and ends on its grains; one that does not is a plan error.
    pub fn sub(&self, local: &[Range<u64>]) -> ExecResult<TensorLayout> {
        let split = split_box(&self.split, local).ok_or_else(|| {
            ExecError::Plan(format!(
                "the local box {} leaves the buffer's shape {} or is off its factors",
                region_text(local),
                dims_text(&self.region.padded_shape)
            ))
        })?;
        sub_box(&self.layout, &split)
    }

    /// The local shape over the factors (for [`zero_padding`]).
    pub fn local_dims(&self) -> ExecResult<Vec<u64>> {
        split_shape(&self.split, &self.region.local_shape).ok_or_else(|| {
            ExecError::Plan(format!(
                "the local shape {} is off the buffer's factors",
                dims_text(&self.region.local_shape)
            ))
        })
    }
}

impl Placement {
    /// A placement; the element type must be a whole number of bytes wide.
    pub fn new(sharding: Sharding, layout: MemoryLayout, dtype: PrimitiveType) -> ExecResult<Self> {
        let bits = dtype.bits();
        if bits == 0 || !bits.is_multiple_of(8) {
            return Err(ExecError::Input(format!(
                "{} elements are not a whole number of bytes (resharding moves whole bytes)",
                dtype.name()
            )));
        }
        Ok(Placement {
            sharding,
            layout,
            dtype,
        })
    }

    /// Bytes per element.
    pub fn elem_bytes(&self) -> u64 {
        u64::from(self.dtype.bits() / 8)
    }

    /// The shard of every device of `mesh`, in mesh-position order.
    pub fn buffers(&self, mesh: &Mesh) -> ExecResult<Vec<DeviceBuffer>> {
        let regions = self.sharding.regions(mesh)?;
        let grains = self.grains(&regions);
        let rows = self.layout == MemoryLayout::RowMajor;
        regions
            .into_iter()
            .map(|r| self.buffer_of(r, &grains, rows))
            .collect()
    }

    /// The shard of device id `device` of `mesh`.
    pub fn buffer(&self, mesh: &Mesh, device: u64) -> ExecResult<DeviceBuffer> {
        let regions = self.sharding.regions(mesh)?;
        let grains = self.grains(&regions);
        let region = regions
            .into_iter()
            .find(|r| r.device == device)
            .ok_or_else(|| ExecError::Input(format!("device {device} is not in the mesh")))?;
        self.buffer_of(region, &grains, self.layout == MemoryLayout::RowMajor)
    }

    /// The grains of this sharding's own regions (see [`crate::factor`]).
    fn grains(&self, regions: &[DeviceRegion]) -> Grains {
        let mut g = Grains::of(self.sharding.dims());
        for r in regions {
            g.bounds(&r.region);
            g.shape(&r.local_shape);
            g.shape(&r.padded_shape);
        }
        g
    }

    /// The shard of `region`, its long dimensions indexed as the factors `grains` allow where the
    /// layout follows them (else whole). With `rows` (a row-major layout only), a shard copied as runs
    /// (see [`DeviceBuffer::rows`]): a dimension the grains leave whole is indexed by factors of its own
    /// padded extent instead, so its tables stay short.
    pub(crate) fn buffer_of(
        &self,
        region: DeviceRegion,
        grains: &Grains,
        rows: bool,
    ) -> ExecResult<DeviceBuffer> {
        let rows = rows && self.layout == MemoryLayout::RowMajor;
        let shape = &region.padded_shape;
        let bits = self.dtype.bits();
        let gone = self
            .sharding
            .maximal_device()
            .is_some_and(|d| d != region.device);
        let holds = !gone && !region.local_shape.contains(&0);
        // Bounds before any table is built: a shard must fit in memory, and so must its dims' tables.
        let bytes = shape
            .iter()
            .try_fold(u64::from(bits / 8), |a, &d| a.checked_mul(d))
            .filter(|&b| b <= isize::MAX as u64);
        let elements = shape.iter().fold(1u64, |a, &d| a.saturating_mul(d));
        let entries = shape.iter().fold(0u64, |a, &d| a.saturating_add(d));
        if bytes.is_none() || entries > elements.saturating_add(MAX_TABLE) {
            return Err(ExecError::Input(format!(
                "device {}'s shard {} of {} is too large for one device",
                region.device,
                dims_text(shape),
                self.dtype.name()
            )));
        }
        let empty = shape.contains(&0);
        let mut split: Vec<Vec<u64>> = shape
            .iter()
            .enumerate()
            .map(|(i, &p)| grains.factors(i, p))
            .collect();
        if split_shape(&split, &region.local_shape).is_none() {
            split = shape.iter().map(|&p| vec![p]).collect();
        }
        if rows {
            for (f, &p) in split.iter_mut().zip(shape) {
                if f.len() == 1 {
                    *f = own_factors(p);
                }
            }
        }
        let whole: Vec<Vec<u64>> = shape.iter().map(|&p| vec![p]).collect();
        let fine = split.concat();
        let layout = match &self.layout {
            _ if gone => {
                // No buffer at all (for a scalar, a row-major layout of its one element, emptied).
                let mut l = row_major(&fine, bits)?;
                l.slots = 0;
                l.padded_slots = 0;
                l
            }
            _ if empty => row_major(&fine, bits)?,
            MemoryLayout::RowMajor if rows => {
                // Copied as runs and zeroed by its strides: no padded tables needed.
                let mut l = row_major(&fine, bits)?;
                l.padded = None;
                l
            }
            MemoryLayout::RowMajor => row_major(&fine, bits)?,
            MemoryLayout::Xla(l) => {
                let a = ArrayShape {
                    element_type: self.dtype,
                    dims: dims_of(shape)?.into(),
                    layout: l.clone(),
                };
                axe_xla::validate_array(&a).map_err(|e| {
                    ExecError::Input(format!(
                        "the layout does not fit device {}: {e}",
                        region.device
                    ))
                })?;
                // Split only dimensions the layout does not pad, and only where its tiles follow the
                // factors; else whole.
                let unpadded = axe_xla::to_axe(&a).ok().is_some_and(|f| {
                    split
                        .iter()
                        .zip(f.padded_shape.iter().zip(shape))
                        .all(|(s, (p, d))| s.len() == 1 || p == d)
                });
                match split != whole && unpadded {
                    true => TensorLayout::from_xla_split(&a, Some(&split)).ok(),
                    false => None,
                }
                .map_or_else(
                    || {
                        split.clone_from(&whole);
                        TensorLayout::from_xla(&a)
                    },
                    Ok,
                )?
            }
            MemoryLayout::Axe(l) => match split != whole {
                true => TensorLayout::from_axe(l, &fine, bits).ok(),
                false => None,
            }
            .map_or_else(
                || {
                    split.clone_from(&whole);
                    TensorLayout::from_axe(l, shape, bits)
                },
                Ok,
            )?,
        };
        if layout.bits != bits {
            return Err(ExecError::Input(format!(
                "device {}'s layout packs {} elements into {} bits (E(n)); shards move whole bytes",
                region.device,
                self.dtype.name(),
                layout.bits
            )));
        }
        if !layout.injective {
            return Err(ExecError::Input(format!(
                "device {}'s layout puts several elements in one slot",
                region.device
            )));
        }
        Ok(DeviceBuffer {
            region,
            split,
            layout,
            holds,
            rows,
        })
    }
}

fn dims_of(shape: &[u64]) -> ExecResult<Vec<Dim>> {
    shape
        .iter()
        .map(|&d| {
            i64::try_from(d)
                .map(Dim::Static)
                .map_err(|_| ExecError::Input(format!("dimension {d} is too large")))
        })
        .collect()
}

/// The row-major layout of `shape` with `bits`-bit elements.
pub fn row_major(shape: &[u64], bits: u32) -> ExecResult<TensorLayout> {
    // A buffer that cannot exist is refused before its offset tables are built (reserving address
    // space touches no memory).
    let bytes = shape
        .iter()
        .try_fold(u64::from(bits), |p, &d| p.checked_mul(d))
        .map(|b| b.div_ceil(8))
        .and_then(|b| usize::try_from(b).ok())
        .ok_or_else(|| {
            ExecError::Input(format!(
                "a buffer of shape {} overflows 64 bits",
                dims_text(shape)
            ))
        })?;
    if bytes > 1 << 30 && Vec::<u8>::new().try_reserve_exact(bytes).is_err() {
        return Err(ExecError::Input(format!(
            "a buffer of {bytes} bytes does not fit in memory"
        )));
    }
    let mut tables = vec![Vec::new(); shape.len()];
    let mut stride: i64 = 1;
    for (i, &d) in shape.iter().enumerate().rev() {
        let n = usize::try_from(d)
            .map_err(|_| ExecError::Input(format!("dimension {d} is too large")))?;
        let mut t = Vec::new();
        t.try_reserve_exact(n).map_err(|_| {
            ExecError::Input(format!(
                "the offset table of a dimension of {d} elements does not fit in memory"
            ))
        })?;
        let mut off: i64 = 0;
        for _ in 0..n {
            t.push(off);
            off = off
                .checked_add(stride)
                .ok_or_else(|| ExecError::Input("sizes overflow 64 bits".into()))?;
        }
        tables[i] = t;
        stride = i64::try_from(d)
            .ok()
            .and_then(|d| stride.checked_mul(d))
            .ok_or_else(|| ExecError::Input("sizes overflow 64 bits".into()))?;
    }
    let slots = u64::try_from(stride).unwrap_or(0);
    Ok(TensorLayout {
        dims: shape.to_vec(),
        bits,
        padded: Some(tables.clone()),
        tables,
        replicas: vec![0],
        slots,
        dense: true,
        injective: true,
        padded_slots: slots,
    })
}

/// The layout of the box `region` (in local indices) of a buffer laid out as `full`: the same slots,
/// only the elements of the box.
pub fn sub_box(full: &TensorLayout, region: &[Range<u64>]) -> ExecResult<TensorLayout> {
    if region.len() != full.tables.len() {
        return Err(ExecError::Plan(format!(
            "a region of {} dims in a buffer of {}",
            region.len(),
            full.tables.len()
        )));
    }
    let mut tables = Vec::with_capacity(region.len());
    for (r, t) in region.iter().zip(&full.tables) {
        let (s, e) = (r.start as usize, r.end as usize);
        if r.start > r.end || e > t.len() {
            return Err(ExecError::Plan(format!(
                "the local box {} leaves the buffer's shape {}",
                region_text(region),
                dims_text(&full.dims)
            )));
        }
        tables.push(t[s..e].to_vec());
    }
    Ok(TensorLayout {
        dims: region.iter().map(|r| r.end - r.start).collect(),
        bits: full.bits,
        tables,
        replicas: full.replicas.clone(),
        slots: full.slots,
        dense: false,
        injective: full.injective,
        padded: None,
        padded_slots: 0,
    })
}

/// Zeroes every byte of `buf` (laid out as `full`) that holds no element of the box `0..local` — the
/// layout's own padding and the shard's padding past its local shape. Where the layout's padding has no
/// structure to follow, the whole buffer is zeroed (the elements are written afterwards).
pub fn zero_padding(buf: &mut [u8], full: &TensorLayout, local: &[u64]) -> ExecResult<()> {
    let bytes = usize::try_from(full.bytes())
        .map_err(|_| ExecError::Input("a buffer does not fit in memory".into()))?;
    let have = buf.len();
    let buf = buf.get_mut(..bytes).ok_or_else(|| {
        ExecError::Input(format!("a buffer of {have} bytes for a layout of {bytes}"))
    })?;
    if local == full.dims.as_slice() && full.dense {
        return Ok(());
    }
    let w = (full.bits / 8) as usize;
    let mut box_layout = full.clone();
    box_layout.dims = local.to_vec();
    let structured = full.padded.is_some() && w > 0 && full.replicas.len() == 1;
    if structured
        && box_layout
            .padding_runs(0, 1, |off, len| {
                let (s, n) = (off as usize * w, len as usize * w);
                if let Some(run) = buf.get_mut(s..s + n) {
                    run.fill(0);
                }
            })
            .is_some()
    {
        return Ok(());
    }
    buf.fill(0);
    Ok(())
}

/// A buffer of `n` bytes, each `byte`; an error rather than an abort when memory cannot hold it.
pub(crate) fn filled(n: usize, byte: u8) -> ExecResult<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| ExecError::Input(format!("a buffer of {n} bytes does not fit in memory")))?;
    v.resize(n, byte);
    Ok(v)
}
