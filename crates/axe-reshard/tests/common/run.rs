//! Running a plan on the threads backend, and the brute-force gather that checks it.

use std::time::Duration;

use axe_reshard::{
    check_destination, fill_source, reshard, run_threads, ExecError, Moved, Placement, ThreadComm,
};
use axe_shard::{DeviceRegion, Mesh, Plan};

pub const T: Duration = Duration::from_secs(30);

/// Runs `plan` on every device with the pattern as source; returns each rank's source and destination
/// buffers (after checking the destination against the pattern) and what it moved.
pub fn execute(
    mesh: &Mesh,
    plan: &Plan,
    src: &Placement,
    dst: &Placement,
) -> Vec<(Vec<u8>, Vec<u8>, Moved)> {
    run_threads(mesh.len(), T, |c: ThreadComm| -> Result<_, ExecError> {
        let me = axe_reshard::Communicator::rank(&c) as u64;
        let s = fill_source(mesh, src, me)?;
        let mut d = vec![0xa5u8; dst.buffer(mesh, me)?.bytes()?];
        let moved = reshard(&c, mesh, plan, src, dst, &s, &mut d)?;
        check_destination(mesh, src, dst, me, &d)?;
        Ok((s, d, moved))
    })
    .into_iter()
    .enumerate()
    .map(|(r, x)| x.unwrap_or_else(|e| panic!("rank {r}: {e}")))
    .collect()
}

/// Each element of a device's region: (row-major global linear index, local index).
fn elements(dims: &[u64], r: &DeviceRegion) -> Vec<(u64, Vec<u64>)> {
    let mut out = Vec::new();
    let n: u64 = r.local_shape.iter().product();
    for k in 0..n {
        let mut rest = k;
        let mut local = vec![0u64; r.local_shape.len()];
        for d in (0..local.len()).rev() {
            local[d] = rest % r.local_shape[d];
            rest /= r.local_shape[d];
        }
        let lin = local
            .iter()
            .zip(&r.region)
            .zip(dims)
            .fold(0, |acc, ((l, g), d)| acc * d + g.start + l);
        out.push((lin, local));
    }
    out
}

/// The brute-force gather: the global array read out of the source buffers (every holder agreeing),
/// then each destination device's expected buffer written from it: elements at every copy's slot,
/// zero elsewhere.
pub fn gather_check(
    mesh: &Mesh,
    src: &Placement,
    dst: &Placement,
    bufs: &[(Vec<u8>, Vec<u8>, Moved)],
) {
    let w = src.elem_bytes() as usize;
    let dims = src.sharding.dims();
    let total: u64 = dims.iter().product();
    let mut global: Vec<Option<Vec<u8>>> = vec![None; total as usize];
    for b in src.buffers(mesh).unwrap() {
        let buf = &bufs[b.region.device as usize].0;
        for (lin, local) in elements(dims, &b.region).into_iter().filter(|_| b.holds) {
            for r in &b.layout.replicas {
                let o = (b.offset(&local) - b.layout.replicas[0] + r) as usize * w;
                let v = buf[o..o + w].to_vec();
                match &global[lin as usize] {
                    Some(g) => assert_eq!(g, &v, "holders of element {lin} disagree"),
                    None => global[lin as usize] = Some(v),
                }
            }
        }
    }
    for b in dst.buffers(mesh).unwrap() {
        let mut want = vec![0u8; b.bytes().unwrap()];
        for (lin, local) in elements(dims, &b.region).into_iter().filter(|_| b.holds) {
            let v = global[lin as usize]
                .as_ref()
                .expect("every element is held");
            for r in &b.layout.replicas {
                let o = (b.offset(&local) - b.layout.replicas[0] + r) as usize * w;
                want[o..o + w].copy_from_slice(v);
            }
        }
        assert_eq!(
            bufs[b.region.device as usize].1, want,
            "device {}",
            b.region.device
        );
    }
}
