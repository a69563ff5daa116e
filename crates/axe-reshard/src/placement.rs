//! Where a sharded array lives: its sharding, each device's memory layout and its element type; and the
//! layouts of pieces of a device's buffer.

use std::ops::Range;

use axe_relayout::TensorLayout;
use axe_shard::{DeviceRegion, Mesh, Sharding};
use axe_xla::{ArrayShape, Dim, PrimitiveType};

use crate::exec_error::{dims_text, region_text, ExecError, ExecResult};
use crate::radix::ShardLayout;

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
    /// The element type (any type with bits moves, a sub-byte one unpacked, one element a byte;
    /// reductions need a numeric type).
    pub dtype: PrimitiveType,
}

/// One device's shard: its region of the global array and its buffer's layout.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceBuffer {
    /// What the device holds.
    pub region: DeviceRegion,
    /// Where each element of the padded local shape lies in its buffer: per dimension a mixed radix
    /// (a few words each, whatever the extents), see [`ShardLayout`].
    pub layout: ShardLayout,
    /// Whether the device holds any part of the array: false for the devices a maximal sharding leaves
    /// empty (whose region cannot say so for a scalar, whose region is `[]` either way) and for empty
    /// regions. A device holding nothing has a buffer of [`DeviceBuffer::bytes`] bytes, zero unless the
    /// XLA rule pads its empty shard.
    pub holds: bool,
    /// Whether the buffer is row-major over the padded local shape and so is the other side of every
    /// copy: boxes of it are then addressed by its strides and copied as contiguous runs, whatever
    /// their bounds. Other boxes are copied in pieces with `axe-relayout` (see [`ShardLayout`]).
    pub rows: bool,
}

impl DeviceBuffer {
    /// Bytes the device's buffer needs.
    pub fn bytes(&self) -> ExecResult<usize> {
        usize::try_from(self.layout.bytes())
            .map_err(|_| ExecError::Input("a device buffer does not fit in memory".into()))
    }

    /// The slot of the element at local index `local` (first copy).
    pub fn offset(&self, local: &[u64]) -> i64 {
        self.layout.offset(local)
    }
}

impl Placement {
    /// A placement; the element type must have bits (not `token` or `opaque`). A sub-byte type (`s4`,
    /// `u2`, `pred`'s one bit, ...) is held unpacked, one element in the low bits of a byte of its own
    /// (XLA's default layout), so its bytes move as `s8`'s do; layouts packing it into `E(n)` bits are
    /// refused when the shards are laid out (see [`Placement::buffers`]).
    pub fn new(sharding: Sharding, layout: MemoryLayout, dtype: PrimitiveType) -> ExecResult<Self> {
        if dtype.bits() == 0 {
            return Err(ExecError::Input(format!(
                "{} has no elements to move",
                dtype.name()
            )));
        }
        Ok(Placement {
            sharding,
            layout,
            dtype,
        })
    }

    /// Bytes per element as held: `ceil(bits / 8)` (a sub-byte element takes a whole byte, unpacked).
    pub fn elem_bytes(&self) -> u64 {
        u64::from(self.dtype.byte_width())
    }

    /// The shard of every device of `mesh`, in mesh-position order.
    pub fn buffers(&self, mesh: &Mesh) -> ExecResult<Vec<DeviceBuffer>> {
        let rows = self.layout == MemoryLayout::RowMajor;
        self.sharding
            .regions(mesh)?
            .into_iter()
            .map(|r| self.buffer_of(r, rows))
            .collect()
    }

    /// The shard of device id `device` of `mesh`.
    pub fn buffer(&self, mesh: &Mesh, device: u64) -> ExecResult<DeviceBuffer> {
        let region = self
            .sharding
            .regions(mesh)?
            .into_iter()
            .find(|r| r.device == device)
            .ok_or_else(|| ExecError::Input(format!("device {device} is not in the mesh")))?;
        self.buffer_of(region, self.layout == MemoryLayout::RowMajor)
    }

    /// The shard of `region`; `rows` (honoured for a row-major layout only) marks it copied as runs
    /// (see [`DeviceBuffer::rows`]).
    pub(crate) fn buffer_of(&self, region: DeviceRegion, rows: bool) -> ExecResult<DeviceBuffer> {
        let rows = rows && self.layout == MemoryLayout::RowMajor;
        let shape = &region.padded_shape;
        let bits = self.dtype.byte_width() * 8;
        let gone = self
            .sharding
            .maximal_device()
            .is_some_and(|d| d != region.device);
        let holds = !gone && !region.local_shape.contains(&0);
        // A shard must fit in memory.
        let bytes = shape
            .iter()
            .try_fold(u64::from(bits / 8), |a, &d| a.checked_mul(d))
            .filter(|&b| b <= isize::MAX as u64);
        if bytes.is_none() {
            return Err(ExecError::Input(format!(
                "device {}'s shard {} of {} is too large for one device",
                region.device,
                dims_text(shape),
                self.dtype.name()
            )));
        }
        let empty = shape.contains(&0);
        let layout = match &self.layout {
            _ if gone => {
                // No buffer at all (for a scalar, a row-major layout of its one element, emptied).
                let mut l = ShardLayout::row_major(shape, bits)?;
                l.slots = 0;
                l
            }
            _ if empty => ShardLayout::row_major(shape, bits)?,
            MemoryLayout::RowMajor => ShardLayout::row_major(shape, bits)?,
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
                ShardLayout::of_xla(&a)?
            }
            MemoryLayout::Axe(l) => ShardLayout::of_axe(l, shape, bits).map_err(|e| match e {
                ExecError::Input(m) => {
                    ExecError::Input(format!("device {}'s layout: {m}", region.device))
                }
                e => e,
            })?,
        };
        if layout.bits != bits && self.dtype.bits() < 8 {
            return Err(ExecError::Input(format!(
                "device {}'s layout packs {} elements into {} bits (E({})): packed sub-byte shards are \
                 not resharded (a shard boundary may fall inside a byte); {} moves unpacked, one element \
                 a byte (row-major, or an XLA layout without E(n))",
                region.device,
                self.dtype.name(),
                layout.bits,
                layout.bits,
                self.dtype.name()
            )));
        }
        if layout.bits != bits {
            return Err(ExecError::Input(format!(
                "device {}'s layout packs {} elements into {} bits (E(n)); shards move whole bytes",
                region.device,
                self.dtype.name(),
                layout.bits
            )));
        }
        Ok(DeviceBuffer {
            region,
            layout,
            holds,
            rows,
        })
    }
}

/// This device's source and destination shards: copied as runs where both layouts are row-major,
/// else in pieces (see `crate::stretch`).
pub(crate) fn buffers(
    src: &Placement,
    dst: &Placement,
    mine_src: &DeviceRegion,
    mine_dst: &DeviceRegion,
) -> ExecResult<(DeviceBuffer, DeviceBuffer)> {
    let rows = src.layout == MemoryLayout::RowMajor && dst.layout == MemoryLayout::RowMajor;
    Ok((
        src.buffer_of(mine_src.clone(), rows)?,
        dst.buffer_of(mine_dst.clone(), rows)?,
    ))
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
