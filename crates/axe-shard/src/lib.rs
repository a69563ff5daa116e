//! Device meshes and shardings of arrays over them.
//!
//! A [`Mesh`] names its axes, their sizes and the device id at each mesh position. A [`Sharding`] of an
//! array on a mesh says, per tensor dim, which mesh axes it is split over (major to minor), and what the
//! other mesh axes do (replicate, manual, or a pending reduction). The notations are read into and written
//! from this one model: XLA `HloSharding` text ([`notation::hlo`]), JAX `PartitionSpec` ([`notation::jax`]), DTensor placements ([`notation::dtensor`]) and
//! Alpa's `S0R` strings ([`notation::alpa`]).
//! [`Sharding::regions`] says who holds what. [`axe`] writes a sharding as an Axe layout over device
//! axes and memory and reads such layouts back; [`parse_any`] and [`print()`] are one entry point for every
//! notation. [`plan()`] lists the transfers that reshard an array from one sharding to another, with the
//! minimum bytes moved, the collective it amounts to and an alpha-beta estimate.

pub mod axe;
mod bench;
mod error;
mod mesh;
mod model;
pub mod notation;
mod plan;
mod plan_name;
mod planner;
mod regions;
mod stages;

pub use bench::{bench_plans, BenchPlan};
pub use error::{Result, ShardError};
pub use mesh::{Mesh, MAX_DEVICES};
pub use model::{AxisUse, DimHint, ReduceOp, Sharding, Uneven};
pub use notation::any::{parse_any, parse_any_local, parse_pair, print, print_local, Notation};
pub use plan::{
    identity_fills, plan, plan_size, Collective, CostModel, Fill, Local, Plan, Transfer,
};
pub use planner::MAX_PIECES;
pub use regions::{split_range, DevicePlace, DeviceRegion, RegionView};
pub use stages::{plan_stages, stage_shardings, Stage};
