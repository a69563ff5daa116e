//! # axe-reshard: resharding executed
//!
//! A [`Communicator`] moves bytes between ranks; each rank is one device of the mesh (rank `r` hosts device
//! id `r`) and owns only its own shard. Backends: threads in one process ([`ThreadComm`], used by tests and
//! `axe shard run --backend threads`) and MPI (feature `mpi`, under `mpirun`).
//!
//! A [`Placement`] says how the devices hold an array: its sharding, each device's memory layout over its
//! padded local shape ([`MemoryLayout`]: row-major, any XLA layout such as `{1,0:T(8,128)}`, or an Axe
//! layout) and the element type.
//!
//! [`reshard`] executes a plan of `axe_shard::plan` on one rank. The plan is checked whole first (the same
//! verdict on every rank); then the rank packs each piece it sends from its source buffer into a
//! contiguous row-major message with `axe-relayout` (a piece already contiguous there is sent from the
//! buffer itself), posts one [`Communicator::exchange_cow`], unpacks what it receives straight into its
//! destination layout (a piece contiguous there is received in place), and copies what it keeps. A
//! change of per-device layout (tiled to row-major) costs no extra pass. Between row-major shards every
//! copy goes as contiguous runs (an offset and a length each); any other pair of layouts copies in
//! pieces whose offset tables are built for the piece alone, a long dimension walked along its tiles
//! and factored near its square root ([`copy_cost`] counts them), so an odd-length dimension, an
//! uneven last shard or a tiled layout costs no per-element table. Pending `Partial` values are
//! combined with their op (`sum`, `avg`, `max`, `min`, `product`) per element type: f32 and f64 in place,
//! bf16 and f16 summed in f32 and rounded once to nearest-even, integers in 64 bits, wrapping. Axes
//! newly partial in `sum` or `product` leave the identity on the devices off coordinate 0. The padding of
//! every destination buffer is zeroed.
//!
//! [`verify_run`] (and [`verify_threads`]) fill every source shard with a known pattern, execute a plan
//! and check every destination element and padding byte; [`bench_reshard`] (and [`bench_threads`]) time
//! reshards against the communicator's own `all_to_all`, `all_gather` and `exchange` of the same bytes.
//!
//! The paper's fully sharded 64×128 on a 2×2 mesh, tiled `T(8,128)` on each device, gathered onto every
//! device row-major, one thread per device:
//!
//! ```
//! use axe_reshard::{verify_threads, MemoryLayout, Placement, DEFAULT_TIMEOUT};
//! use axe_shard::{notation::jax::parse_jax, plan, CostModel, Mesh};
//! use axe_xla::PrimitiveType;
//! let mesh = Mesh::new(&[("x", 2), ("y", 2)])?;
//! let src = parse_jax("P('x', 'y')", &mesh, &[64, 128])?;
//! let dst = parse_jax("P()", &mesh, &[64, 128])?;
//! let p = plan(&mesh, &src, &dst, 4, &CostModel::default())?;
//! let tiled = MemoryLayout::parse("{1,0:T(8,128)}", 2)?;
//! let src = Placement::new(src, tiled, PrimitiveType::F32)?;
//! let dst = Placement::new(dst, MemoryLayout::RowMajor, PrimitiveType::F32)?;
//! let v = verify_threads(&mesh, &p, &src, &dst, DEFAULT_TIMEOUT)?;
//! assert_eq!(v.bytes, 4 * 3 * (32 * 64 * 4)); // each device receives the three shards it lacks
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod agree;
mod bench;
mod boxes;
mod check;
mod comm;
mod cost;
mod elements;
mod error;
mod exec;
mod exec_error;
#[cfg(feature = "mpi")]
mod mpi;
mod placement;
mod radix;
mod reduce;
mod staged;
mod stretch;
mod threads;
mod verify;
mod verify_nested;

pub use agree::{agree, run_inputs, InputHash, AGREE_BYTES, MAX_INPUTS};
pub use bench::{bench_reshard, bench_threads, default_planner, BenchCase, Planner};
pub use comm::{Communicator, Message, Strided};
pub use cost::{copy_cost, CopyCost};
pub use error::{CommError, Result};
pub use exec::{reshard, Moved};
pub use exec_error::{ExecError, ExecResult};
#[cfg(feature = "mpi")]
pub use mpi::MpiComm;
pub use placement::{row_major, sub_box, zero_padding, DeviceBuffer, MemoryLayout, Placement};
pub use radix::{Radix, ShardLayout};
pub use reduce::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
pub use staged::{
    run_stages_of, staged_inputs, verify_staged_run, verify_staged_threads, RunStage,
};
pub use threads::{run_threads, ThreadComm, DEFAULT_TIMEOUT, MAX_THREAD_RANKS};
pub use verify::{check_destination, fill_source, verify_run, verify_threads, Verified};
