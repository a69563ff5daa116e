//! A device's elements in its shard's buffer: visiting them ([`each_element`]), the bytes of each
//! copy ([`slots`]), and checking a destination against the values they must hold ([`check_shard`]).

use axe_shard::Sharding;

use crate::exec_error::{ExecError, ExecResult};
use crate::placement::{filled, DeviceBuffer};
use crate::verify::{hex, Elem};
use axe_shard::DeviceRegion;

/// Visits every element of `region`: its global linear index and global index, and its local index.
pub(crate) fn each_element(
    dims: &[u64],
    region: Option<&DeviceRegion>,
    mut f: impl FnMut(u64, &[u64], &[u64]) -> ExecResult<()>,
) -> ExecResult<()> {
    let Some(region) = region else {
        return Ok(());
    };
    let shape = &region.local_shape;
    if shape.contains(&0) {
        return Ok(());
    }
    let mut local = vec![0u64; shape.len()];
    let mut global = vec![0u64; shape.len()];
    loop {
        let mut lin = 0u64;
        for (d, (&l, r)) in local.iter().zip(&region.region).enumerate() {
            global[d] = r.start + l;
            lin = lin * dims[d] + global[d];
        }
        f(lin, &global, &local)?;
        let mut k = shape.len();
        loop {
            if k == 0 {
                return Ok(());
            }
            k -= 1;
            local[k] += 1;
            if local[k] < shape[k] {
                break;
            }
            local[k] = 0;
        }
    }
}

/// Byte offsets of every copy of the element at `local` in a buffer laid out as `b`.
pub(crate) fn slots<'a>(
    b: &'a DeviceBuffer,
    local: &[u64],
    w: usize,
) -> impl Iterator<Item = usize> + 'a {
    let base = b.offset(local) - b.layout.replicas[0];
    b.layout
        .replicas
        .iter()
        .map(move |r| ((base + r) as usize) * w)
}

/// Checks device `device`'s destination `buf` (its shard `b` of an array sharded as `s`, elements `w`
/// bytes wide): `buf` holds at least the shard's bytes, every copy of every element it holds equals
/// `want(i)`, `i` the element's row-major index in the global array, and every other byte of the
/// shard's is zero. A buffer too short is the first error; then the first element that differs (its
/// global index, the bytes found and wanted); then the first nonzero byte that is no element's.
pub(crate) fn check_shard(
    buf: &[u8],
    b: &DeviceBuffer,
    s: &Sharding,
    w: usize,
    device: u64,
    mut want: impl FnMut(u64) -> Elem,
) -> ExecResult<()> {
    let need = b.bytes()?;
    if buf.len() < need {
        return Err(ExecError::Input(format!(
            "device {device}'s destination has {} bytes, its shard needs {need}",
            buf.len()
        )));
    }
    // One bit per byte of the buffer: whether an element's copy lies there.
    let mut is_element = filled(need.div_ceil(8), 0)?;
    let dims = s.dims().to_vec();
    let region = if b.holds { Some(&b.region) } else { None };
    each_element(&dims, region, |i, global, local| {
        let want = want(i);
        for s in slots(b, local, w) {
            let got = &buf[s..s + w];
            if got != want.as_slice() {
                return Err(ExecError::Mismatch {
                    device,
                    index: global.to_vec(),
                    got: hex(got),
                    expected: hex(want.as_slice()),
                });
            }
            for p in s..s + w {
                is_element[p / 8] |= 1 << (p % 8);
            }
        }
        Ok(())
    })?;
    if let Some(p) = (0..need).find(|&p| is_element[p / 8] & (1 << (p % 8)) == 0 && buf[p] != 0) {
        return Err(ExecError::Mismatch {
            device,
            index: vec![],
            got: format!("{:02x} (byte {p})", buf[p]),
            expected: "00".into(),
        });
    }
    Ok(())
}
