//! What a process needs to serve guests, shared by the `cyxla-host` binary
//! (crate `cyxla-host`) and the cyxla PJRT plugin library (`host/pjrt`),
//! around the sandbox library ([`cyxla_sandbox`]):
//!
//! - [`config`] and [`tenants`]: host options (flags, `CYXLA_*`, the config
//!   file) and the operator's tenant policy, from which `load` resolves a
//!   process's configuration (`Config::from_env`);
//! - [`setup`]: the PJRT plugin, native handler libraries and guests
//!   folders a process sets up;
//! - [`record`]: failed guest calls, recorded for `cyxla-host replay`;
//! - [`npy`]: `.npy` files (`cyxla-host run`'s inputs and outputs, records'
//!   operands).
#![deny(missing_docs)]

pub mod config;
mod load;
pub mod npy;
pub mod record;
pub mod setup;
pub mod tenants;
