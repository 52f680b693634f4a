//! The `cyxla-host` program around the sandbox library ([`cyxla_host`]):
//! what a process needs to serve guests, shared by the `cyxla-host` binary
//! and the cyxla PJRT plugin library.
//!
//! - [`cli`]: the subcommands, as library functions tests can call;
//! - [`config`] and [`tenants`]: host options (flags, `CYXLA_*`, the config
//!   file) and the operator's tenant policy;
//! - [`setup`]: the PJRT plugin, native handler libraries and guests
//!   folders a process sets up;
//! - [`npy`]: `.npy` inputs and outputs of `cyxla-host run`.
#![deny(missing_docs)]

pub mod cli;
pub mod config;
pub mod npy;
pub mod record;
pub mod setup;
pub mod tenants;
