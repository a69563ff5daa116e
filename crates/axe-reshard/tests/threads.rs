//! The threads backend: its operations against their laws, and peers that die or stall.

#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::time::{Duration, Instant};

use axe_reshard::{run_threads, CommError, Communicator, ThreadComm};
use proptest::prelude::*;

const T: Duration = Duration::from_secs(20);

/// The byte rank `from` sends rank `to` at position `i`.
fn byte(from: usize, to: usize, i: usize) -> u8 {
    (from * 31 + to * 7 + i * 13) as u8
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn collectives_deliver_each_block_to_its_rank(n in 1usize..7, len in 0usize..40) {
        let out = run_threads(n, T, |c: ThreadComm| -> Result<(), CommError> {
            let r = c.rank();
            // all_to_all: block k of rank r's send goes to rank k.
            let send: Vec<u8> = (0..n).flat_map(|k| (0..len).map(move |i| byte(r, k, i))).collect();
            let mut recv = vec![0u8; n * len];
            c.all_to_all(&send, &mut recv)?;
            for k in 0..n {
                for i in 0..len {
                    assert_eq!(recv[k * len + i], byte(k, r, i));
                }
            }
            // all_gather: block k is rank k's contribution.
            let mine: Vec<u8> = (0..len).map(|i| byte(r, r, i)).collect();
            let mut all = vec![0u8; n * len];
            c.all_gather(&mine, &mut all)?;
            for k in 0..n {
                assert_eq!(&all[k * len..(k + 1) * len], (0..len).map(|i| byte(k, k, i)).collect::<Vec<_>>().as_slice());
            }
            c.barrier()?;
            // exchange: two messages to each other rank, of different lengths, matched in order.
            let msgs: Vec<(usize, Vec<u8>)> = (0..n).filter(|&k| k != r)
                .flat_map(|k| [(k, (0..len).map(|i| byte(r, k, i)).collect()), (k, vec![r as u8; k + 1])])
                .collect();
            let sends: Vec<(usize, &[u8])> = msgs.iter().map(|(k, m)| (*k, m.as_slice())).collect();
            let mut bufs: Vec<(usize, Vec<u8>)> = (0..n).filter(|&k| k != r)
                .flat_map(|k| [(k, vec![0u8; len]), (k, vec![0u8; r + 1])])
                .collect();
            let mut recvs: Vec<(usize, &mut [u8])> = bufs.iter_mut().map(|(k, b)| (*k, b.as_mut_slice())).collect();
            c.exchange(&sends, &mut recvs)?;
            for pair in bufs.chunks(2) {
                let k = pair[0].0;
                assert_eq!(pair[0].1, (0..len).map(|i| byte(k, r, i)).collect::<Vec<_>>());
                assert_eq!(pair[1].1, vec![k as u8; r + 1]);
            }
            Ok(())
        });
        prop_assert_eq!(out.len(), n);
        for r in out {
            prop_assert_eq!(r, Ok(()));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A rank that dies (panics or returns) after any number of operations ends every peer's next
    /// operation with `PeerGone`, at once rather than at the timeout.
    #[test]
    fn a_rank_dying_anywhere_never_hangs_its_peers(n in 2usize..6, victim in 0usize..6, after in 0usize..4, panics in any::<bool>()) {
        let victim = victim % n;
        let start = Instant::now();
        let out = run_threads(n, Duration::from_secs(30), |c: ThreadComm| -> Result<usize, CommError> {
            let mut done = 0;
            for op in 0..4 {
                if c.rank() == victim && op == after {
                    if panics {
                        panic!("rank {victim} dies");
                    }
                    return Ok(done);
                }
                match op % 3 {
                    0 => c.barrier()?,
                    1 => {
                        let mut all = vec![0u8; 3 * n];
                        c.all_gather(&[1, 2, 3], &mut all)?;
                    }
                    _ => {
                        let mut r = vec![0u8; 2 * n];
                        c.all_to_all(&vec![7u8; 2 * n], &mut r)?;
                    }
                }
                done += 1;
            }
            Ok(done)
        });
        prop_assert!(start.elapsed() < Duration::from_secs(10));
        for (r, o) in out.iter().enumerate() {
            if r == victim {
                continue;
            }
            prop_assert!(
                // The victim, or a peer that already stopped because of it.
                matches!(o, Err(CommError::PeerGone { .. })),
                "rank {} of {}: {:?}", r, n, o
            );
        }
    }
}

#[test]
fn a_rank_that_panics_ends_the_others_with_peer_gone() {
    let start = Instant::now();
    let out = run_threads(
        4,
        Duration::from_secs(60),
        |c: ThreadComm| -> Result<(), CommError> {
            if c.rank() == 2 {
                panic!("rank 2 dies");
            }
            let mut recv = vec![0u8; 4 * 8];
            c.all_to_all(&[1u8; 32], &mut recv)
        },
    );
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "no waiting for the timeout"
    );
    match &out[2] {
        Err(CommError::Backend { why, .. }) => {
            assert!(why.contains("rank 2 panicked: rank 2 dies"), "{why}")
        }
        other => panic!("rank 2: {other:?}"),
    }
    // Every other rank ends with a peer gone: rank 2, or a rank that stopped on seeing rank 2 gone
    // (which of the two it notices first is the threads' race); at least one names rank 2.
    for r in [0, 1, 3] {
        assert!(
            matches!(&out[r], Err(CommError::PeerGone { .. })),
            "rank {r}: {:?}",
            out[r]
        );
    }
    assert!(
        out.iter()
            .any(|o| matches!(o, Err(CommError::PeerGone { rank: 2, .. }))),
        "{out:?}"
    );
}

#[test]
fn a_rank_that_returns_early_ends_the_others_with_peer_gone() {
    let out = run_threads(
        3,
        Duration::from_secs(60),
        |c: ThreadComm| -> Result<(), CommError> {
            c.barrier()?;
            if c.rank() == 0 {
                return Ok(()); // leaves before the second barrier
            }
            c.barrier()
        },
    );
    assert_eq!(out[0], Ok(()));
    // Each of the others ends with PeerGone: naming rank 0, or the other one, if that one saw rank 0
    // gone first and ended before this one sent to it (a race the test cannot order). At least one
    // of them names rank 0.
    let gone = |r: usize| match &out[r] {
        Err(CommError::PeerGone { rank, .. }) => Some(*rank),
        _ => None,
    };
    for (r, other) in [(1, 2), (2, 1)] {
        assert!(
            gone(r) == Some(0) || (gone(r) == Some(other) && gone(other) == Some(0)),
            "{:?}",
            out
        );
    }
}

#[test]
fn a_rank_that_stalls_ends_the_others_with_a_timeout() {
    let start = Instant::now();
    let out = run_threads(
        2,
        Duration::from_millis(200),
        |c: ThreadComm| -> Result<(), CommError> {
            if c.rank() == 1 {
                std::thread::sleep(Duration::from_millis(1500)); // holds its channels, sends nothing
                return Ok(());
            }
            c.barrier()
        },
    );
    assert!(start.elapsed() < Duration::from_secs(10));
    assert!(
        matches!(&out[0], Err(CommError::Timeout { .. })),
        "{:?}",
        out[0]
    );
    assert_eq!(out[1], Ok(()));
}

#[test]
fn a_grace_covers_a_peers_own_work_and_then_ends() {
    // Rank 1 works alone for 600 ms before the barrier; rank 0 waits with a 200 ms timeout. With a
    // grace of 2 s it waits the work out; the next operation, after the grace, times out as before.
    let out = run_threads(
        2,
        Duration::from_millis(200),
        |c: ThreadComm| -> Result<(), CommError> {
            if c.rank() == 1 {
                std::thread::sleep(Duration::from_millis(600));
                c.barrier()?;
                std::thread::sleep(Duration::from_millis(1500));
                return Ok(());
            }
            c.set_grace(Duration::from_secs(2));
            c.barrier()?;
            c.set_grace(Duration::ZERO);
            c.barrier()
        },
    );
    assert!(
        matches!(&out[0], Err(CommError::Timeout { seconds: 0, .. })),
        "{:?}",
        out[0]
    );
    assert_eq!(out[1], Ok(()));
}

#[test]
fn ranks_calling_different_operations_get_an_error_not_each_others_bytes() {
    let out = run_threads(2, T, |c: ThreadComm| -> Result<(), CommError> {
        if c.rank() == 0 {
            c.barrier()?;
        }
        let mut recv = [0u8; 2];
        c.all_gather(&[c.rank() as u8], &mut recv)
    });
    assert!(
        out.iter()
            .any(|r| matches!(r, Err(CommError::Usage(m)) if m.contains("different sequences"))),
        "{out:?}"
    );
}

#[test]
fn bad_arguments_are_usage_errors() {
    let comms = ThreadComm::group(2, T).unwrap();
    let c = &comms[0];
    assert!(
        matches!(
            c.exchange(&[(0, &[1u8][..])], &mut []),
            Err(CommError::Usage(_))
        ),
        "send to itself"
    );
    assert!(
        matches!(
            c.exchange(&[(5, &[1u8][..])], &mut []),
            Err(CommError::Usage(_))
        ),
        "rank out of range"
    );
    assert!(matches!(
        c.all_gather(&[1, 2], &mut [0u8; 3]),
        Err(CommError::Usage(_))
    ));
    assert!(matches!(
        c.all_to_all(&[1, 2, 3], &mut [0u8; 3]),
        Err(CommError::Usage(_))
    ));
    assert!(matches!(ThreadComm::group(0, T), Err(CommError::Usage(_))));
    // A message of the wrong length is an error at the receiver.
    let out = run_threads(2, T, |c: ThreadComm| -> Result<(), CommError> {
        if c.rank() == 0 {
            c.exchange(&[(1, &[1u8, 2, 3][..])], &mut [])
        } else {
            let mut b = [0u8; 2];
            c.exchange(&[], &mut [(0, &mut b[..])])
        }
    });
    assert_eq!(out[0], Ok(()));
    assert!(
        matches!(&out[1], Err(CommError::Usage(m)) if m.contains("sent 3 bytes where 2")),
        "{:?}",
        out[1]
    );
}

#[test]
fn one_rank_is_a_group() {
    let out = run_threads(1, T, |c: ThreadComm| -> Result<Vec<u8>, CommError> {
        let mut r = vec![0u8; 3];
        c.all_to_all(&[7, 8, 9], &mut r)?;
        c.barrier()?;
        Ok(r)
    });
    assert_eq!(out, vec![Ok(vec![7, 8, 9])]);
}
