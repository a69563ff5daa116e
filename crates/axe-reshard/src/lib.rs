//! # axe-reshard: resharding executed
//!
//! A [`Communicator`] moves bytes between ranks; each rank is one device of the mesh (rank `r` hosts device
//! id `r`) and owns only its own shard. Backends: threads in one process ([`ThreadComm`], used by tests and
//! `axe shard run --backend threads`) and MPI (feature `mpi`, under `mpirun`).
//!
//! [`reshard`] executes a plan of `axe_shard::plan` on one rank: it packs each piece it sends from its
//! source buffer into a contiguous row-major message with `axe-relayout`, posts one exchange, unpacks what
//! it receives straight into its destination layout (or combines it, for pending `Partial` reductions),
//! and copies what it keeps. [`verify_run`] checks a reshard element by element against a known pattern;
//! [`bench_reshard`] times reshards against the communicator's own collectives.

mod bench;
mod check;
mod comm;
mod error;
mod exec;
mod exec_error;
mod placement;
mod reduce;
mod threads;
mod verify;

pub use bench::{bench_reshard, bench_threads, default_planner, BenchCase, Planner};
pub use comm::Communicator;
pub use error::{CommError, Result};
pub use exec::{reshard, Moved};
pub use exec_error::{ExecError, ExecResult};
pub use placement::{
    row_major, sub_box, zero_padding, DeviceBuffer, MemoryLayout, Placement, MAX_TABLE,
};
pub use reduce::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
pub use threads::{run_threads, ThreadComm, DEFAULT_TIMEOUT, MAX_THREAD_RANKS};
pub use verify::{check_destination, fill_source, verify_run, verify_threads, Verified};
