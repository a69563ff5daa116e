//! The sharding notations, each read into and written from the one model.

pub mod alpa;
pub mod any;
pub mod dtensor;
mod fit;
pub mod hlo;
pub mod iota;
pub mod jax;
