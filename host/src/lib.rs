//! cyxla-host: runs XLA FFI custom-call handlers inside WebAssembly sandboxes.
//!
//! A PJRT plugin (the XLA CPU plugin) calls a registered handler for every
//! `stablehlo.custom_call @target`. For each target an operator allows, this
//! crate registers a [`GuestHandler`] that lays the call frame out in the
//! linear memory of a wasm guest (guest ABI v1: XLA's FFI C API in wasm32,
//! constants in [`cyxla_guest_abi`]), runs the guest's handler export
//! under limits, and copies the results back. A guest that traps, loops,
//! exhausts its memory or breaks the ABI fails its own call with an error
//! naming the target, the guest file and what happened; the next call works.
//!
//! ```text
//! Sandbox ── AllowList (policy: deny by default)
//!   ├── Guests (a folder of *.wasm, checked and compiled in parallel)
//!   │     └── Guest (one module: sha256, targets, InstancePre) ── Engine
//!   │                                     (wasmtime Engine, Linker, deadline timer, Limits)
//!   └── GuestHandler per allowed target ──► plugin_glue::registry::register
//!         └── Pool per guest (bounded) ── Instance (Store, exports, scratch)
//!               └── layout: native CallFrame / HostCall → wasm32 frame
//! ```
//!
//! # Examples
//!
//! Run a guest without XLA (tests and benches do this), then register the
//! allowed targets with a plugin:
//!
//! ```no_run
//! use std::path::Path;
//! use cyxla_sandbox::{AllowList, HostAttr, HostBuffer, HostCall, Limits, Sandbox, Scalar};
//! use plugin_glue::DType;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let sandbox = Sandbox::new(Path::new("guests/out"), AllowList::targets(["scale_any"]), Limits::default())?;
//! let handler = sandbox.handler("scale_any").ok_or("scale_any is not served")?;
//! let call = HostCall::new()
//!     .arg(HostBuffer::f32(&[2], &[1.0, 2.0]))
//!     .ret(HostBuffer::zeros(DType::F32, &[2]))
//!     .attr("factor", HostAttr::Scalar(Scalar::F64(3.0)));
//! handler.call_host(&call)?;
//! assert_eq!(call.result(0).to_f32(), [3.0, 6.0]);
//!
//! // SAFETY: the XLA CPU plugin is a PJRT plugin.
//! let plugin = unsafe { plugin_glue::plugin::Plugin::load(Path::new("pjrt_c_api_cpu_plugin.so")) }?;
//! for registered in sandbox.register_allowed(&plugin)? {
//!     println!("{} is served by {}", registered.target, registered.guest.display());
//! }
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]
#![doc(test(attr(deny(warnings))))]

pub mod audit;
pub mod cache;
mod call;
mod copy;
mod deadline;
mod dispatch;
mod engine;
mod error;
pub mod failed_call;
mod faults;
mod float_mode;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzz;
mod guest;
mod guests;
mod imports;
mod instance;
mod layout;
pub mod limits;
pub mod policy;
mod pool;
mod reload;
mod sandbox;
mod stack;
mod state;
pub mod stats;
pub mod toml_error;
mod wasi;

pub use call::{HostAttr, HostBuffer, HostCall};
/// A scalar attribute's value ([`HostAttr::Scalar`]): the model both sides
/// of the sandbox share.
pub use cyxla_xla_types::attr::Scalar;
pub use dispatch::GuestHandler;
pub use engine::{Engine, PERF_MAP_ENV};
pub use error::{Error, Result, WasmError, report};
pub use guest::{Guest, Idle, Rejected, Target, sha256_hex_of};
pub use guests::{Conflict, Guests};
pub use limits::Limits;
pub use policy::AllowList;
pub use reload::Watcher;
pub use sandbox::{Destination, Registered, Sandbox, pin_holds};
