//! sharding
