//! The sharding notations, each read into and written from the one model.

pub mod alpa;
pub mod any;
pub mod dtensor;
pub mod hlo;
pub mod jax;
