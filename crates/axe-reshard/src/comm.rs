//! The communicator: point-to-point exchanges and the collectives reshard plans use.

use std::borrow::Cow;

use crate::error::Result;

/// A message that lies in a buffer as `count` runs of `run` bytes, `pitch` bytes apart from the start
/// of one run to the next (rows of a box in a row-major shard): sent as the runs in order.
#[derive(Clone, Copy, Debug)]
pub struct Strided<'a> {
    buf: &'a [u8],
    count: usize,
    run: usize,
    pitch: usize,
}

impl<'a> Strided<'a> {
    /// The runs of `buf` from its first byte; `None` unless every run lies inside `buf` and runs do not
    /// overlap (`run <= pitch`, or a single run).
    pub fn new(buf: &'a [u8], count: usize, run: usize, pitch: usize) -> Option<Strided<'a>> {
        let span = count.checked_sub(1)?.checked_mul(pitch)?.checked_add(run)?;
        (span <= buf.len() && (run <= pitch || count == 1)).then_some(Strided {
            buf,
            count,
            run,
            pitch,
        })
    }

    /// The number of runs.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Bytes per run.
    pub fn run(&self) -> usize {
        self.run
    }

    /// Bytes from the start of one run to the next.
    pub fn pitch(&self) -> usize {
        self.pitch
    }

    /// The buffer the runs lie in (from the first run's first byte).
    pub fn buf(&self) -> &'a [u8] {
        self.buf
    }

    /// The message's length: `count · run`.
    pub fn len(&self) -> usize {
        self.count * self.run
    }

    /// Whether the message is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The message as one contiguous buffer (the runs in order).
    pub fn packed(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        for i in 0..self.count {
            let at = i * self.pitch;
            out.extend_from_slice(&self.buf[at..at + self.run]);
        }
        out
    }
}

/// A message to send: bytes (borrowed, or given up by the caller) or strided runs of a buffer.
#[derive(Clone, Debug)]
pub enum Message<'a> {
    /// Contiguous bytes.
    Bytes(Cow<'a, [u8]>),
    /// Runs of a buffer, sent in order without being packed by the caller.
    Strided(Strided<'a>),
}

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

    /// Lets the operations that follow wait `extra` longer than the timeout, for a peer that may still
    /// be doing its own work before it arrives (filling or checking a large shard: time that is neither
    /// a dead rank nor a stalled one); `Duration::ZERO` ends the grace.
    fn set_grace(&self, extra: std::time::Duration);

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

    /// Whether [`Communicator::exchange_messages`] sends strided messages without packing them first (as
    /// MPI does with a derived datatype); otherwise an executor packs them itself.
    fn sends_strided(&self) -> bool {
        false
    }

    /// [`Communicator::exchange_cow`] where a message may also be strided runs of a buffer. The default
    /// packs each strided message and calls `exchange_cow`.
    fn exchange_messages(
        &self,
        sends: Vec<(usize, Message<'_>)>,
        recvs: &mut [(usize, &mut [u8])],
    ) -> Result<()> {
        let sends = sends
            .into_iter()
            .map(|(to, m)| match m {
                Message::Bytes(b) => (to, b),
                Message::Strided(s) => (to, Cow::Owned(s.packed())),
            })
            .collect();
        self.exchange_cow(sends, recvs)
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
