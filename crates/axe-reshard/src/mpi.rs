//! The MPI backend: one process per rank under `mpirun`, over the system's MPI (Open MPI on Debian).
//!
//! Rank `r` of `MPI_COMM_WORLD` hosts device id `r`. An exchange posts every send and receive at once
//! (non-blocking, then one wait for all); messages longer than MPI's `int` count are sent in pieces of
//! 1 GiB, which MPI's non-overtaking rule keeps in order. Collectives are MPI's own.
//!
//! Every operation is watched: if it has not finished within the timeout ([`MpiComm::with_timeout`], or
//! `AXE_MPI_TIMEOUT` seconds, default 60), this rank prints what it was waiting for and exits with
//! status 1, and `mpirun` ends the job — a rank that dies mid-reshard never leaves the others hanging.
//! (MPI cannot cancel a collective that a dead peer will never join, so ending the process is the only
//! bounded answer; `mpirun` also ends the job by itself when a rank is killed or exits early.)

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use mpi::environment::Universe;
use mpi::topology::Communicator as _;
use mpi::traits::*;

use crate::comm::Communicator;
use crate::error::{CommError, Result};

/// The largest piece of one message MPI is handed at once (its counts are `int`).
const PIECE: usize = 1 << 30;

/// The watchdog's shared state: what the rank is waiting for, until when.
type Armed = Arc<(Mutex<Option<(Instant, String)>>, Condvar)>;

/// One MPI rank's communicator over `MPI_COMM_WORLD`. Create one per process, first thing; MPI is
/// finalized when it is dropped.
pub struct MpiComm {
    universe: Universe,
    rank: usize,
    size: usize,
    timeout: Duration,
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

    /// Initializes MPI with the given timeout per operation.
    pub fn with_timeout(timeout: Duration) -> Result<MpiComm> {
        let universe = mpi::initialize().ok_or_else(|| CommError::Backend {
            backend: "mpi",
            why: "MPI is already initialized in this process".into(),
        })?;
        let world = universe.world();
        let (rank, size) = (world.rank(), world.size());
        let rank = usize::try_from(rank).map_err(|_| backend(format!("rank {rank}")))?;
        let size = usize::try_from(size).map_err(|_| backend(format!("size {size}")))?;
        let armed: Armed = Arc::new((Mutex::new(None), Condvar::new()));
        watchdog(Arc::clone(&armed), rank);
        Ok(MpiComm {
            universe,
            rank,
            size,
            timeout,
            armed,
        })
    }

    /// The time any one operation may take before this rank ends the run.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Runs `f` with the watchdog armed for `what`.
    fn watched<T>(&self, what: &str, f: impl FnOnce() -> T) -> T {
        let (lock, cv) = &*self.armed;
        if let Ok(mut g) = lock.lock() {
            *g = Some((Instant::now() + self.timeout, what.to_string()));
        }
        cv.notify_all();
        let out = f();
        if let Ok(mut g) = lock.lock() {
            *g = None;
        }
        out
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

/// A thread that ends the process when an armed operation passes its deadline.
fn watchdog(armed: Armed, rank: usize) {
    std::thread::spawn(move || {
        let (lock, cv) = &*armed;
        let Ok(mut g) = lock.lock() else { return };
        loop {
            let wait = match &*g {
                None => Duration::from_secs(3600),
                Some((deadline, what)) => match deadline.checked_duration_since(Instant::now()) {
                    Some(left) => left,
                    None => {
                        eprintln!(
                            "error: rank {rank}: no answer from the other ranks while waiting for \
                             {what} (a rank died or stalled); ending the run"
                        );
                        std::process::exit(1);
                    }
                },
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

    fn exchange(&self, sends: &[(usize, &[u8])], recvs: &mut [(usize, &mut [u8])]) -> Result<()> {
        let world = self.universe.world();
        let mut to = Vec::with_capacity(sends.len());
        for (peer, _) in sends {
            to.push(self.check_peer(*peer, "a send")?);
        }
        let mut from = Vec::with_capacity(recvs.len());
        for (peer, _) in recvs.iter() {
            from.push(self.check_peer(*peer, "a receive")?);
        }
        let count: usize = sends
            .iter()
            .map(|(_, b)| b.len().div_ceil(PIECE).max(1))
            .chain(recvs.iter().map(|(_, b)| b.len().div_ceil(PIECE).max(1)))
            .sum();
        self.watched("an exchange of messages", || {
            mpi::request::multiple_scope(count, |scope, coll| {
                for ((_, buf), &peer) in sends.iter().zip(&to) {
                    let p = world.process_at_rank(peer);
                    for r in pieces(buf.len()) {
                        coll.add(p.immediate_send(scope, &buf[r]));
                    }
                }
                for ((_, buf), &peer) in recvs.iter_mut().zip(&from) {
                    let p = world.process_at_rank(peer);
                    let len = buf.len();
                    let mut rest: &mut [u8] = buf;
                    for r in pieces(len) {
                        let (piece, tail) = std::mem::take(&mut rest).split_at_mut(r.len());
                        rest = tail;
                        coll.add(p.immediate_receive_into(scope, piece));
                    }
                }
                let mut done = Vec::with_capacity(count);
                coll.wait_all(&mut done);
                // A message longer than its receive buffer is an MPI error (fatal by default); a
                // shorter one shows in its status.
                for (i, status, data) in &done {
                    let got = usize::try_from(status.count(u8::equivalent_datatype())).unwrap_or(0);
                    if *i >= sends_pieces(sends) && got != data.len() {
                        return Err(CommError::Usage(format!(
                            "a message of {got} bytes arrived for a receive of {} bytes",
                            data.len()
                        )));
                    }
                }
                Ok(())
            })
        })
    }

    fn barrier(&self) -> Result<()> {
        let world = self.universe.world();
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
        let world = self.universe.world();
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
        let world = self.universe.world();
        self.watched("an all-to-all", || world.all_to_all_into(send, recv));
        Ok(())
    }
}

/// How many requests the sends of an exchange post (their indices come first in the collection).
fn sends_pieces(sends: &[(usize, &[u8])]) -> usize {
    sends
        .iter()
        .map(|(_, b)| b.len().div_ceil(PIECE).max(1))
        .sum()
}
