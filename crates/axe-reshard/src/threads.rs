//! The threads backend: every rank is a thread of this process, owning only its own buffers.
//!
//! Each ordered pair of ranks has one channel; a message carries the number and the name of the
//! operation it belongs to, so ranks that disagree on the sequence of operations get an error rather than each
//! other's bytes. Every wait ends by a deadline ([`ThreadComm::timeout`]); a rank that returns or panics
//! drops its channels, and its peers see [`CommError::PeerGone`] at once.

use std::borrow::Cow;
use std::cell::Cell;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use crate::comm::Communicator;
use crate::error::{CommError, Result};

/// How long an operation waits for its peers by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The most ranks a thread group may have (each pair of ranks holds a channel).
pub const MAX_THREAD_RANKS: usize = 256;

/// One message: the sequence number and the name of the operation that sent it, and its bytes.
struct Msg {
    op: u64,
    what: &'static str,
    data: Vec<u8>,
}

/// One rank of a group of threads. Created together with its peers by [`ThreadComm::group`]; moved into
/// the thread that runs the rank.
pub struct ThreadComm {
    rank: usize,
    size: usize,
    /// `to[r]` sends to rank `r` (`None` for this rank).
    to: Vec<Option<Sender<Msg>>>,
    /// `from[r]` receives from rank `r` (`None` for this rank).
    from: Vec<Option<Receiver<Msg>>>,
    timeout: Duration,
    /// Added to the timeout while set ([`Communicator::set_grace`]).
    grace: Cell<Duration>,
    /// The operations this rank has started (messages are tagged with it).
    ops: Cell<u64>,
}

impl std::fmt::Debug for ThreadComm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadComm")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl ThreadComm {
    /// `n` connected ranks (rank `r` at index `r`), each waiting at most `timeout` per operation.
    /// `n` must be in `1..=MAX_THREAD_RANKS`.
    pub fn group(n: usize, timeout: Duration) -> Result<Vec<ThreadComm>> {
        if n == 0 || n > MAX_THREAD_RANKS {
            return Err(CommError::Usage(format!(
                "a thread group has 1 to {MAX_THREAD_RANKS} ranks, not {n}"
            )));
        }
        let mut to: Vec<Vec<Option<Sender<Msg>>>> = (0..n).map(|_| Vec::new()).collect();
        let mut from: Vec<Vec<Option<Receiver<Msg>>>> = (0..n).map(|_| Vec::new()).collect();
        for (a, row) in to.iter_mut().enumerate() {
            for (b, col) in from.iter_mut().enumerate() {
                if a == b {
                    row.push(None);
                    col.push(None);
                } else {
                    let (s, r) = channel();
                    row.push(Some(s));
                    col.push(Some(r));
                }
            }
        }
        // `from[b]` was filled in sender order: `from[b][a]` receives from rank `a`.
        Ok(to
            .into_iter()
            .zip(from)
            .enumerate()
            .map(|(rank, (to, from))| ThreadComm {
                rank,
                size: n,
                to,
                from,
                timeout,
                grace: Cell::new(Duration::ZERO),
                ops: Cell::new(0),
            })
            .collect())
    }

    /// The longest an operation waits for its peers.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Starts an operation: its sequence number and its deadline.
    fn start(&self) -> (u64, Instant) {
        let op = self.ops.get();
        self.ops.set(op.wrapping_add(1));
        (op, Instant::now() + self.timeout + self.grace.get())
    }

    fn check_peer(&self, r: usize, what: &str) -> Result<()> {
        if r >= self.size {
            return Err(CommError::Usage(format!(
                "{what} rank {r} of a group of {}",
                self.size
            )));
        }
        if r == self.rank {
            return Err(CommError::Usage(format!(
                "rank {r} {what} itself (copy locally instead)"
            )));
        }
        Ok(())
    }

    fn send(&self, to: usize, op: u64, what: &'static str, data: Vec<u8>) -> Result<()> {
        let s = self.to.get(to).and_then(Option::as_ref).ok_or_else(|| {
            CommError::Usage(format!("rank {} has no channel to rank {to}", self.rank))
        })?;
        s.send(Msg { op, what, data })
            .map_err(|_| CommError::PeerGone {
                rank: to,
                why: "it stopped before receiving".into(),
            })
    }

    /// Receives the next message from `from`, which must belong to operation `op`, by `deadline`.
    fn recv(&self, from: usize, op: u64, deadline: Instant, what: &'static str) -> Result<Vec<u8>> {
        let r = self
            .from
            .get(from)
            .and_then(Option::as_ref)
            .ok_or_else(|| {
                CommError::Usage(format!(
                    "rank {} has no channel from rank {from}",
                    self.rank
                ))
            })?;
        let wait = deadline.saturating_duration_since(Instant::now());
        match r.recv_timeout(wait) {
            Ok(m) if m.op == op && m.what == what => Ok(m.data),
            Ok(m) => Err(CommError::Usage(format!(
                "rank {} in operation {op} ({what}) got a message of operation {} ({}) from rank \
                 {from}: the ranks called different sequences of operations",
                self.rank, m.op, m.what
            ))),
            Err(RecvTimeoutError::Timeout) => Err(CommError::Timeout {
                seconds: (self.timeout + self.grace.get()).as_secs(),
                what: format!("rank {from} in {what}"),
            }),
            Err(RecvTimeoutError::Disconnected) => Err(CommError::PeerGone {
                rank: from,
                why: format!("it stopped before sending its part of {what}"),
            }),
        }
    }

    /// Sends `block(r)` to every other rank `r` and receives each rank's message into `put(r, bytes)`.
    fn all_pairs(
        &self,
        what: &'static str,
        block: impl Fn(usize) -> Vec<u8>,
        mut put: impl FnMut(usize, Vec<u8>) -> Result<()>,
    ) -> Result<()> {
        let (op, deadline) = self.start();
        for r in (0..self.size).filter(|&r| r != self.rank) {
            self.send(r, op, what, block(r))?;
        }
        for r in (0..self.size).filter(|&r| r != self.rank) {
            let data = self.recv(r, op, deadline, what)?;
            put(r, data)?;
        }
        Ok(())
    }
}

/// Copies a received message into its buffer, which must be exactly as long.
fn deliver(from: usize, data: &[u8], buf: &mut [u8], what: &str) -> Result<()> {
    if data.len() != buf.len() {
        return Err(CommError::Usage(format!(
            "{what}: rank {from} sent {} bytes where {} were expected",
            data.len(),
            buf.len()
        )));
    }
    buf.copy_from_slice(data);
    Ok(())
}

impl Communicator for ThreadComm {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn set_grace(&self, extra: Duration) {
        self.grace.set(extra);
    }

    fn exchange(&self, sends: &[(usize, &[u8])], recvs: &mut [(usize, &mut [u8])]) -> Result<()> {
        let sends = sends.iter().map(|&(r, m)| (r, Cow::Borrowed(m))).collect();
        self.exchange_cow(sends, recvs)
    }

    fn takes_messages(&self) -> bool {
        true
    }

    fn exchange_cow(
        &self,
        sends: Vec<(usize, Cow<'_, [u8]>)>,
        recvs: &mut [(usize, &mut [u8])],
    ) -> Result<()> {
        for (to, _) in &sends {
            self.check_peer(*to, "sends to")?;
        }
        for (from, _) in recvs.iter() {
            self.check_peer(*from, "receives from")?;
        }
        let (op, deadline) = self.start();
        for (to, bytes) in sends {
            self.send(to, op, "an exchange", bytes.into_owned())?;
        }
        for (from, buf) in recvs.iter_mut() {
            let data = self.recv(*from, op, deadline, "an exchange")?;
            deliver(*from, &data, buf, "exchange")?;
        }
        Ok(())
    }

    fn barrier(&self) -> Result<()> {
        self.all_pairs("a barrier", |_| Vec::new(), |_, _| Ok(()))
    }

    fn all_gather(&self, send: &[u8], recv: &mut [u8]) -> Result<()> {
        let n = send.len();
        let total = n.checked_mul(self.size).filter(|&t| t == recv.len());
        if total.is_none() {
            return Err(CommError::Usage(format!(
                "all_gather: {} ranks of {n} bytes do not fill a buffer of {}",
                self.size,
                recv.len()
            )));
        }
        recv[self.rank * n..(self.rank + 1) * n].copy_from_slice(send);
        self.all_pairs(
            "an all_gather",
            |_| send.to_vec(),
            |r, data| deliver(r, &data, &mut recv[r * n..(r + 1) * n], "all_gather"),
        )
    }

    fn all_to_all(&self, send: &[u8], recv: &mut [u8]) -> Result<()> {
        if send.len() != recv.len() || !send.len().is_multiple_of(self.size) {
            return Err(CommError::Usage(format!(
                "all_to_all: buffers of {} and {} bytes do not split into {} equal blocks",
                send.len(),
                recv.len(),
                self.size
            )));
        }
        let n = send.len() / self.size;
        let me = self.rank;
        recv[me * n..(me + 1) * n].copy_from_slice(&send[me * n..(me + 1) * n]);
        self.all_pairs(
            "an all_to_all",
            |r| send[r * n..(r + 1) * n].to_vec(),
            |r, data| deliver(r, &data, &mut recv[r * n..(r + 1) * n], "all_to_all"),
        )
    }
}

/// Runs `f` on `n` ranks, each in its own thread with its own [`ThreadComm`] (waits bounded by
/// `timeout`), and returns each rank's result in rank order. A rank that panics yields
/// [`CommError::Backend`] naming the panic; its peers see [`CommError::PeerGone`] when they next wait on
/// it.
pub fn run_threads<T, E, F>(n: usize, timeout: Duration, f: F) -> Vec<std::result::Result<T, E>>
where
    T: Send,
    E: From<CommError> + Send,
    F: Fn(ThreadComm) -> std::result::Result<T, E> + Sync,
{
    let comms = match ThreadComm::group(n, timeout) {
        Ok(c) => c,
        Err(e) => return vec![Err(E::from(e))],
    };
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = comms
            .into_iter()
            .map(|c| {
                let rank = c.rank;
                (
                    rank,
                    std::thread::Builder::new()
                        .name(format!("rank-{rank}"))
                        .spawn_scoped(s, move || f(c)),
                )
            })
            .collect();
        handles
            .into_iter()
            .map(|(rank, h)| match h {
                Err(e) => Err(E::from(CommError::Backend {
                    backend: "threads",
                    why: format!("rank {rank} could not start its thread: {e}"),
                })),
                Ok(h) => h.join().unwrap_or_else(|p| {
                    let msg = p
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "no message".into());
                    Err(E::from(CommError::Backend {
                        backend: "threads",
                        why: format!("rank {rank} panicked: {msg}"),
                    }))
                }),
            })
            .collect()
    })
}
