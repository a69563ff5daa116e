//! What a reshard's copies build on one rank, counted by the code that builds it: the pieces each box
//! is copied in and the offset-table entries of their layouts.

use axe_shard::{Mesh, Plan};

use crate::boxes::Runs;
use crate::check::localize;
use crate::exec_error::{ExecError, ExecResult};
use crate::placement::{buffers, DeviceBuffer, Placement};
use crate::stretch::Pieces;

/// The work a rank's copies are cut into.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CopyCost {
    /// Copies of pieces (`axe-relayout` calls, or contiguous runs between row-major shards).
    pub pieces: u64,
    /// Offset-table entries the pieces' layouts hold, both sides together, summed over the pieces.
    pub entries: u64,
    /// Offset-table entries of the largest piece (both sides): at most this many are held at once.
    pub largest: u64,
}

impl CopyCost {
    fn add(&mut self, pieces: u64, entries: u64, largest: u64) {
        self.pieces = self.pieces.saturating_add(pieces);
        self.entries = self.entries.saturating_add(entries);
        self.largest = self.largest.max(largest);
    }
}

/// What device `device`'s copies of `plan` build: for every piece it packs to send, unpacks on
/// receipt or copies from its own source, the pieces (runs where both sides are row-major) and their
/// offset-table entries, as [`crate::reshard`] cuts them.
///
/// Law: the entries grow with the number of pieces and the square roots of the boxes' long
/// dimensions, not with their elements: a box of `n` indices along a long dimension costs
/// `O(√n + q)` entries per piece, `q` the tile period the two layouts share there.
pub fn copy_cost(
    mesh: &Mesh,
    plan: &Plan,
    src: &Placement,
    dst: &Placement,
    device: u64,
) -> ExecResult<CopyCost> {
    let find = |p: &Placement| -> ExecResult<_> {
        p.sharding
            .regions(mesh)?
            .into_iter()
            .find(|r| r.device == device)
            .ok_or_else(|| ExecError::Input(format!("device {device} is not in the mesh")))
    };
    let (sb, db) = buffers(src, dst, &find(src)?, &find(dst)?)?;
    let mut cost = CopyCost::default();
    let mut message = |b: &DeviceBuffer, region: &[std::ops::Range<u64>]| -> ExecResult<()> {
        let local = localize(region, &b.region)?;
        if b.rows {
            let runs = Runs::of(&b.region.padded_shape, &local)
                .ok_or_else(|| ExecError::Plan("a box leaves its shard".into()))?;
            cost.add(runs.count(), 0, 0);
        } else {
            let (m, whole) = b.message(&local)?;
            let p = Pieces::new(&b.layout, &local, &m, &whole)?;
            cost.add(p.count(), p.entries(), p.largest());
        }
        Ok(())
    };
    for t in plan.transfers.iter().filter(|t| t.from == device) {
        message(&sb, &t.region)?;
    }
    for t in plan.transfers.iter().filter(|t| t.to == device) {
        message(&db, &t.region)?;
    }
    for l in plan.locals.iter().filter(|l| l.device == device) {
        let (from, to) = (
            localize(&l.region, &sb.region)?,
            localize(&l.region, &db.region)?,
        );
        if sb.rows && db.rows {
            let runs = Runs::pair(&sb.region.padded_shape, &from, &db.region.padded_shape, &to)
                .ok_or_else(|| ExecError::Plan("a box leaves its shard".into()))?;
            cost.add(runs.count(), 0, 0);
        } else {
            let p = Pieces::new(&sb.layout, &from, &db.layout, &to)?;
            cost.add(p.count(), p.entries(), p.largest());
        }
    }
    Ok(cost)
}
