//! The communicator: point-to-point exchanges and the collectives reshard plans use.

use std::borrow::Cow;

use crate::error::Result;

/// One rank's view of a group of `size()` ranks that exchange bytes.
///
/// Messages between one pair of ranks within one [`Communicator::exchange`] are matched in the order they
/// are listed. Every operation either completes or returns an error within a bounded time: a rank that dies
/// makes its peers fail with [`crate::CommError::PeerGone`] or [`crate::CommError::Timeout`], never hang.
pub trait Communicator {
    /// This rank, in `0..size()`.
    fn rank(&self) -> usize;

    /// The number of ranks.
    fn size(&self) -> usize;

    /// Posts every send and every receive at once and waits for all of them. `sends[i] = (to, bytes)`;
    /// `recvs[j] = (from, buffer)` receives exactly `buffer.len()` bytes from `from` (a message of another
    /// length is an error). Sends to or receives from this rank itself are an error (copy locally instead).
    fn exchange(&self, sends: &[(usize, &[u8])], recvs: &mut [(usize, &mut [u8])]) -> Result<()>;

    /// [`Communicator::exchange`] where some messages are buffers the caller gives up: a backend that
    /// copies what it sends (as threads do) may take those without copying. The default borrows every
    /// message and calls `exchange`.
    fn exchange_cow(
        &self,
        sends: Vec<(usize, Cow<'_, [u8]>)>,
        recvs: &mut [(usize, &mut [u8])],
    ) -> Result<()> {
        let borrowed: Vec<(usize, &[u8])> = sends.iter().map(|(r, m)| (*r, m.as_ref())).collect();
        self.exchange(&borrowed, recvs)
    }

    /// Whether [`Communicator::exchange_cow`] takes the buffers it is given (rather than copying them):
    /// an executor then hands them over; otherwise it keeps them and reuses them for the next exchange.
    fn takes_messages(&self) -> bool {
        false
    }

    /// Waits until every rank has reached the barrier.
    fn barrier(&self) -> Result<()>;

    /// Every rank contributes `send` (the same length on every rank); `recv` (`size()` times as long)
    /// receives rank `r`'s block at `r * send.len()`.
    fn all_gather(&self, send: &[u8], recv: &mut [u8]) -> Result<()>;

    /// `send` and `recv` hold `size()` equal blocks; block `r` of `send` goes to rank `r`, and block `r` of
    /// `recv` comes from rank `r`.
    fn all_to_all(&self, send: &[u8], recv: &mut [u8]) -> Result<()>;
}
