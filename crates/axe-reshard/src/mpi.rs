//! The MPI backend: one process per rank under `mpirun`, over the system's MPI (Open MPI on Debian).
//!
//! Rank `r` of `MPI_COMM_WORLD` hosts device id `r`. An exchange posts every send and receive at once
//! (non-blocking, then one wait for all); messages longer than MPI's `int` count are sent in pieces of
//! 1 GiB, which MPI's non-overtaking rule keeps in order. Collectives are MPI's own.
//!
//! Every operation is watched, start-up (`MPI_Init`) and finalizing included: if it has not finished
//! within the timeout ([`MpiComm::with_timeout`], or `AXE_MPI_TIMEOUT` seconds, default 60), this rank
//! prints what it was waiting for as one line and exits with status 1, and `mpirun` ends the job — a rank that dies mid-reshard never leaves the others hanging.
//! (MPI cannot cancel a collective that a dead peer will never join, so ending the process is the only
//! bounded answer; `mpirun` also ends the job by itself when a rank is killed or exits early.)

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use std::borrow::Cow;

use mpi::datatype::{UserDatatype, View};
use mpi::environment::Universe;
use mpi::topology::Communicator as _;
use mpi::traits::*;

use crate::comm::{Communicator, Message, Strided};
use crate::error::{CommError, Result};

/// The largest piece of one message MPI is handed at once (its counts are `int`).
const PIECE: usize = 1 << 30;

/// The watchdog's shared state: what the rank is waiting for, until when.
type Armed = Arc<(Mutex<Option<(Instant, String)>>, Condvar)>;

/// One MPI rank's communicator over `MPI_COMM_WORLD`. Create one per process, first thing; MPI is
/// finalized when it is dropped.
pub struct MpiComm {
    /// `None` only while being dropped.
    universe: Option<Universe>,
    rank: usize,
    size: usize,
    timeout: Duration,
    /// Added to the timeout while set ([`Communicator::set_grace`]).
    grace: std::cell::Cell<Duration>,
    armed: Armed,
}

impl MpiComm {
    /// Initializes MPI and returns this process's rank, with the timeout from `AXE_MPI_TIMEOUT`
    /// (seconds; default 60).
    pub fn init() -> Result<MpiComm> {
        let secs = match std::env::var("AXE_MPI_TIMEOUT") {
            Ok(v) => v
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|&s| s >= 1)
                .ok_or_else(|| {
                    CommError::Usage(format!(
                        "AXE_MPI_TIMEOUT={v:?}: expected a whole number of seconds, at least 1"
                    ))
                })?,
            Err(_) => 60,
        };
        MpiComm::with_timeout(Duration::from_secs(secs))
    }

    /// Initializes MPI with the given timeout per operation. The watchdog starts first: start-up itself
    /// (`MPI_Init`, which waits for every rank) is watched too, so a rank stopped at launch ends the run
    /// within the timeout rather than holding the others forever.
    pub fn with_timeout(timeout: Duration) -> Result<MpiComm> {
        let armed: Armed = Arc::new((Mutex::new(None), Condvar::new()));
        watchdog(Arc::clone(&armed));
        let label = launch_rank().map_or_else(|| "a rank".to_string(), |r| format!("rank {r}"));
        arm(
            &armed,
            timeout,
            format!(
                "{label}: the other ranks did not start within {} s",
                timeout.as_secs()
            ),
        );
        let universe = mpi::initialize();
        disarm(&armed);
        let universe = universe.ok_or_else(|| CommError::Backend {
            backend: "mpi",
            why: "MPI is already initialized in this process".into(),
        })?;
        let world = universe.world();
        let (rank, size) = (world.rank(), world.size());
        let rank = usize::try_from(rank).map_err(|_| backend(format!("rank {rank}")))?;
        let size = usize::try_from(size).map_err(|_| backend(format!("size {size}")))?;
        Ok(MpiComm {
            universe: Some(universe),
            rank,
            size,
            timeout,
            grace: std::cell::Cell::new(Duration::ZERO),
            armed,
        })
    }

    /// The time any one operation may take before this rank ends the run.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Runs `f` with the watchdog armed for `what`.
    fn watched<T>(&self, what: &str, f: impl FnOnce() -> T) -> T {
        let grace = self.grace.get();
        let allowed = if grace.is_zero() {
            format!("{} s", self.timeout.as_secs())
        } else {
            format!(
                "{} s ({} s of --timeout and {} s for the peers' own work on their shards)",
                (self.timeout + grace).as_secs(),
                self.timeout.as_secs(),
                grace.as_secs()
            )
        };
        arm(
            &self.armed,
            self.timeout + grace,
            format!(
                "rank {}: no answer from the other ranks within {allowed} while waiting for {what} \
                 (a rank died or stalled); ending the run",
                self.rank
            ),
        );
        let out = f();
        disarm(&self.armed);
        out
    }

    fn world(&self) -> Result<mpi::topology::SimpleCommunicator> {
        self.universe
            .as_ref()
            .map(Universe::world)
            .ok_or_else(|| backend("MPI was finalized".into()))
    }

    fn check_peer(&self, peer: usize, what: &str) -> Result<i32> {
        if peer >= self.size {
            return Err(CommError::Usage(format!(
                "{what} names rank {peer} of {}",
                self.size
            )));
        }
        if peer == self.rank {
            return Err(CommError::Usage(format!(
                "{what} names this rank itself ({peer}); copy locally instead"
            )));
        }
        i32::try_from(peer).map_err(|_| CommError::Usage(format!("rank {peer} is out of range")))
    }
}

fn backend(why: String) -> CommError {
    CommError::Backend {
        backend: "mpi",
        why,
    }
}

impl Drop for MpiComm {
    /// Finalizes MPI, watched like any operation (finalizing waits for the other ranks).
    fn drop(&mut self) {
        if let Some(u) = self.universe.take() {
            arm(
                &self.armed,
                self.timeout,
                format!(
                    "rank {}: the other ranks did not finish within {} s",
                    self.rank,
                    self.timeout.as_secs()
                ),
            );
            drop(u);
            disarm(&self.armed);
        }
    }
}

/// This process's rank as the launcher announces it (before MPI is initialized), if it does.
fn launch_rank() -> Option<u64> {
    ["OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
}

/// Arms the watchdog: unless disarmed within `timeout`, it prints `message` and ends the process.
fn arm(armed: &Armed, timeout: Duration, message: String) {
    let (lock, cv) = &**armed;
    if let Ok(mut g) = lock.lock() {
        *g = Some((Instant::now() + timeout, message));
    }
    cv.notify_all();
}

fn disarm(armed: &Armed) {
    if let Ok(mut g) = armed.0.lock() {
        *g = None;
    }
}

/// A thread that ends the process when an armed operation passes its deadline, after printing its
/// message as one whole line (one write, so lines of ranks sharing a terminal do not interleave).
fn watchdog(armed: Armed) {
    std::thread::spawn(move || {
        let (lock, cv) = &*armed;
        let Ok(mut g) = lock.lock() else { return };
        loop {
            let wait = match &*g {
                None => Duration::from_secs(3600),
                Some((deadline, message)) => {
                    match deadline.checked_duration_since(Instant::now()) {
                        Some(left) => left,
                        None => {
                            use std::io::Write as _;
                            let line = format!("error: {message}\n");
                            let _ = std::io::stderr().lock().write_all(line.as_bytes());
                            std::process::exit(1);
                        }
                    }
                }
            };
            g = match cv.wait_timeout(g, wait) {
                Ok((g, _)) => g,
                Err(_) => return,
            };
        }
    });
}

/// `buf` cut into pieces MPI can count.
fn pieces(len: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    (0..len.div_ceil(PIECE).max(1)).map(move |i| i * PIECE..((i + 1) * PIECE).min(len))
}

impl Communicator for MpiComm {
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
        let sends = sends
            .iter()
            .map(|(r, b)| (*r, Message::Bytes(Cow::Borrowed(*b))))
            .collect();
        self.exchange_messages(sends, recvs)
    }

    fn sends_strided(&self) -> bool {
        true
    }

    /// Strided messages go out as one MPI vector datatype over the runs (MPI reads them in place);
    /// bytes go out in pieces MPI can count.
    fn exchange_messages(
        &self,
        sends: Vec<(usize, Message<'_>)>,
        recvs: &mut [(usize, &mut [u8])],
    ) -> Result<()> {
        let world = self.world()?;
        let mut to = Vec::with_capacity(sends.len());
        for (peer, _) in &sends {
            to.push(self.check_peer(*peer, "a send")?);
        }
        let mut from = Vec::with_capacity(recvs.len());
        for (peer, _) in recvs.iter() {
            from.push(self.check_peer(*peer, "a receive")?);
        }
        // A strided message MPI cannot count (runs past `int`, or past one piece in all) is packed here.
        let types: Vec<Option<UserDatatype>> = sends
            .iter()
            .map(|(_, m)| match m {
                Message::Strided(s) => vector(s),
                Message::Bytes(_) => None,
            })
            .collect();
        let packed: Vec<Option<Vec<u8>>> = sends
            .iter()
            .zip(&types)
            .map(|((_, m), t)| match (m, t) {
                (Message::Strided(s), None) => Some(s.packed()),
                _ => None,
            })
            .collect();
        let views: Vec<Option<View<'_, '_, UserDatatype, [u8]>>> = sends
            .iter()
            .zip(&types)
            .map(|((_, m), t)| match (m, t) {
                (Message::Strided(s), Some(t)) => {
                    let span = (s.count() - 1) * s.pitch() + s.run();
                    // SAFETY: `t` is `count` runs of `run` bytes `pitch` apart (see `vector`), which span
                    // `span` bytes from the first; `Strided::new` checked that they lie inside its buffer,
                    // and the view covers exactly that slice, borrowed for the whole exchange.
                    #[allow(unsafe_code)]
                    let v = unsafe { View::with_count_and_datatype(&s.buf()[..span], 1, t) };
                    Some(v)
                }
                _ => None,
            })
            .collect();
        let bytes: Vec<&[u8]> = sends
            .iter()
            .zip(&packed)
            .map(|((_, m), p)| match (m, p) {
                (_, Some(p)) => p.as_slice(),
                (Message::Bytes(b), None) => b.as_ref(),
                (Message::Strided(_), None) => &[],
            })
            .collect();
        self.watched("an exchange of messages", || {
            mpi::request::scope(|scope| {
                // Every send and receive is posted (in the listed order, which matches messages between
                // a pair) before any is waited for.
                let mut strided = Vec::new();
                let mut plain = Vec::new();
                for ((view, buf), &peer) in views.iter().zip(&bytes).zip(&to) {
                    let p = world.process_at_rank(peer);
                    match view {
                        Some(v) => strided.push(p.immediate_send(scope, v)),
                        None => {
                            for r in pieces(buf.len()) {
                                plain.push(p.immediate_send(scope, &buf[r]));
                            }
                        }
                    }
                }
                let mut receives = Vec::new();
                for ((_, buf), &peer) in recvs.iter_mut().zip(&from) {
                    let p = world.process_at_rank(peer);
                    let len = buf.len();
                    let mut rest: &mut [u8] = buf;
                    for r in pieces(len) {
                        let (piece, tail) = std::mem::take(&mut rest).split_at_mut(r.len());
                        rest = tail;
                        receives.push((r.len(), p.immediate_receive_into(scope, piece)));
                    }
                }
                // A message longer than its receive buffer is an MPI error (fatal by default); a
                // shorter one shows in its status.
                let mut short = None;
                for (want, r) in receives {
                    let got =
                        usize::try_from(r.wait().count(u8::equivalent_datatype())).unwrap_or(0);
                    if got != want {
                        short = Some((got, want));
                    }
                }
                for r in strided {
                    r.wait();
                }
                for r in plain {
                    r.wait();
                }
                match short {
                    Some((got, want)) => Err(CommError::Usage(format!(
                        "a message of {got} bytes arrived for a receive of {want} bytes"
                    ))),
                    None => Ok(()),
                }
            })
        })
    }

    fn barrier(&self) -> Result<()> {
        let world = self.world()?;
        self.watched("a barrier", || world.barrier());
        Ok(())
    }

    fn all_gather(&self, send: &[u8], recv: &mut [u8]) -> Result<()> {
        if send.len().checked_mul(self.size) != Some(recv.len()) {
            return Err(CommError::Usage(format!(
                "all_gather of {} bytes from {} ranks into {} bytes",
                send.len(),
                self.size,
                recv.len()
            )));
        }
        if recv.len() > i32::MAX as usize {
            return Err(CommError::Usage(
                "all_gather of more than 2^31 - 1 bytes in all".into(),
            ));
        }
        let world = self.world()?;
        self.watched("an all-gather", || world.all_gather_into(send, recv));
        Ok(())
    }

    fn all_to_all(&self, send: &[u8], recv: &mut [u8]) -> Result<()> {
        if send.len() != recv.len() || !send.len().is_multiple_of(self.size) {
            return Err(CommError::Usage(format!(
                "all_to_all of {} bytes into {} bytes over {} ranks (equal blocks needed)",
                send.len(),
                recv.len(),
                self.size
            )));
        }
        if send.len() > i32::MAX as usize {
            return Err(CommError::Usage(
                "all_to_all of more than 2^31 - 1 bytes in all".into(),
            ));
        }
        let world = self.world()?;
        self.watched("an all-to-all", || world.all_to_all_into(send, recv));
        Ok(())
    }
}

/// The MPI datatype of a strided message: `count` blocks of `run` bytes, `pitch` bytes apart; `None`
/// where a figure does not fit MPI's `int` or the message is longer than one piece.
fn vector(s: &Strided<'_>) -> Option<UserDatatype> {
    let c = i32::try_from(s.count()).ok()?;
    let r = i32::try_from(s.run()).ok()?;
    let p = i32::try_from(s.pitch()).ok()?;
    (s.len() <= PIECE && s.count() >= 1)
        .then(|| UserDatatype::vector(c, r, p, &u8::equivalent_datatype()))
}
