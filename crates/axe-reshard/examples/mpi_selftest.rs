//! Every `Communicator` method of the MPI backend, contents checked byte by byte. Run under
//! `mpirun -n N` (any N ≥ 1): `cargo run --example mpi_selftest --features mpi -p axe-reshard`.

use axe_reshard::{CommError, Communicator, MpiComm};

/// The byte rank `from` sends to rank `to` at position `i` of message `m`.
fn byte(from: usize, to: usize, m: usize, i: usize) -> u8 {
    (from * 31 + to * 17 + m * 7 + i * 13) as u8
}

fn check(ok: bool, what: &str) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(what.to_string())
    }
}

fn run(comm: &MpiComm) -> Result<(), String> {
    let (me, n) = (comm.rank(), comm.size());
    let err = |e: CommError| e.to_string();
    comm.barrier().map_err(err)?;
    // Three messages to every other rank, of lengths 0, 1000 + rank and 70,000, matched in order.
    let lens = |from: usize| [0usize, 1000 + from, 70_000];
    let outgoing: Vec<(usize, Vec<u8>)> = (0..n)
        .filter(|&p| p != me)
        .flat_map(|p| {
            lens(me)
                .into_iter()
                .enumerate()
                .map(move |(m, len)| (p, (0..len).map(|i| byte(me, p, m, i)).collect()))
        })
        .collect();
    let sends: Vec<(usize, &[u8])> = outgoing.iter().map(|(p, v)| (*p, v.as_slice())).collect();
    let mut incoming: Vec<(usize, Vec<u8>)> = (0..n)
        .filter(|&p| p != me)
        .flat_map(|p| lens(p).into_iter().map(move |len| (p, vec![0u8; len])))
        .collect();
    let mut recvs: Vec<(usize, &mut [u8])> = incoming
        .iter_mut()
        .map(|(p, v)| (*p, v.as_mut_slice()))
        .collect();
    comm.exchange(&sends, &mut recvs).map_err(err)?;
    for (k, (p, v)) in incoming.iter().enumerate() {
        let m = k % 3;
        check(
            v.iter().enumerate().all(|(i, &b)| b == byte(*p, me, m, i)),
            &format!("exchange: message {m} from rank {p}"),
        )?;
    }
    // all_gather: rank r contributes 5 bytes r*5..r*5+5.
    let mine: Vec<u8> = (0..5).map(|i| (me * 5 + i) as u8).collect();
    let mut all = vec![0u8; 5 * n];
    comm.all_gather(&mine, &mut all).map_err(err)?;
    check(
        all.iter().enumerate().all(|(i, &b)| b == i as u8),
        "all_gather",
    )?;
    // all_to_all: block r of rank me's send is byte(me, r, 9, i).
    let block = 4096;
    let send: Vec<u8> = (0..n * block)
        .map(|j| byte(me, j / block, 9, j % block))
        .collect();
    let mut recv = vec![0u8; n * block];
    comm.all_to_all(&send, &mut recv).map_err(err)?;
    check(
        recv.iter()
            .enumerate()
            .all(|(j, &b)| b == byte(j / block, me, 9, j % block)),
        "all_to_all",
    )?;
    // Usage errors are errors, not crashes.
    check(
        comm.exchange(&[(me, &[1u8][..])], &mut []).is_err(),
        "a send to oneself is refused",
    )?;
    check(
        comm.exchange(&[(n, &[1u8][..])], &mut []).is_err(),
        "a send to a rank out of range is refused",
    )?;
    check(
        comm.all_gather(&mine, &mut [0u8; 3]).is_err(),
        "an all_gather into a short buffer is refused",
    )?;
    comm.barrier().map_err(err)?;
    Ok(())
}

fn main() -> std::process::ExitCode {
    let comm = match MpiComm::init() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match run(&comm) {
        Ok(()) => {
            if comm.rank() == 0 {
                println!("mpi self-test passed on {} ranks", comm.size());
            }
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: rank {}: {e}", comm.rank());
            std::process::ExitCode::FAILURE
        }
    }
}
