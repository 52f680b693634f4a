//! What a process needs to serve guests, shared by the `cyxla-host` binary
//! (crate `cyxla-host`) and the cyxla PJRT plugin library (`host/pjrt`),
//! around the sandbox library ([`cyxla_sandbox`]):
//!
//! - [`config`] and [`tenants`]: host options (flags, `CYXLA_*`, the config
//!   file) and the operator's tenant policy, from which `load` resolves a
//!   process's configuration (`Config::from_env`); every setting is a row of
//!   one table (`config`'s, made by [`settings`]);
//! - [`process`]: what a process serves with: the PJRT plugin, native
//!   handler libraries and guests folders it sets up ([`process::Setup`]),
//!   and what it holds once they are registered ([`process::Host`]);
//! - [`record`]: failed guest calls, recorded for `cyxla-host replay`;
//! - [`npy`]: `.npy` files (`cyxla-host run`'s inputs and outputs, records'
//!   operands).
#![deny(missing_docs)]

#[macro_use]
pub mod settings;
pub mod config;
mod load;
pub mod npy;
pub mod process;
pub mod record;
pub mod tenants;
