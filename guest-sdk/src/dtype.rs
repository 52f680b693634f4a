//! Element types: [`DataType`] (XLA numbering) and the [`Element`] trait that
//! ties a Rust type to one, both the contract's (`cyxla_xla_types`).

pub use cyxla_xla_types::DataType;
pub use cyxla_xla_types::element::{Complex, Element};
