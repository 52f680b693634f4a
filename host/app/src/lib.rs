//! The `cyxla-host` program around the sandbox library ([`cyxla_sandbox`]) and
//! what it shares with the cyxla PJRT plugin library ([`cyxla_setup`]):
//!
//! - [`cli`]: the subcommands, as library functions tests can call;
//! - [`config`], [`tenants`], [`settings`], [`process`], [`record`], [`npy`]: re-exported
//!   from [`cyxla_setup`].
#![deny(missing_docs)]

pub mod cli;
pub use cyxla_setup::{config, npy, process, record, settings, tenants};
