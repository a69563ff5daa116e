//! # axe-reshard: resharding executed
//!
//! A [`Communicator`] moves bytes between ranks; each rank is one device of the mesh (rank `r` hosts device
//! id `r`) and owns only its own shard. Backends: threads in one process (tests, `axe shard run --backend
//! threads`) and MPI (feature `mpi`, under `mpirun`).

mod comm;
mod error;

pub use comm::Communicator;
pub use error::{CommError, Result};
