//! plugin-glue: the native side of cyxla-host.
//!
//! It speaks the two C ABIs of a PJRT plugin and knows nothing of wasm or
//! of LAPACK (whose handlers are the crate `cyxla-lapack`, beside it):
//!
//! ```text
//! Plugin (libloading, GetPjrtApi, extension chain)
//!   ├── Client ─ Executable ─ Buffer        a small PJRT client
//!   └── Registry ─ trampolines ─ dispatcher  targets registered through
//!          └── Handler (trait)               the PJRT FFI extension
//!                ├── native LAPACK handlers (cyxla-lapack, on OpenBLAS)
//!                ├── foreign handlers (a symbol from a shared library)
//!                └── whatever host plugs in (wasm guests)
//! ```
#![deny(missing_docs)]
#![doc(test(attr(deny(warnings))))]

pub mod dtype;
pub mod error;
pub mod ffi;
pub mod frame;
pub mod handler;
pub mod plugin;
pub mod registry;
pub mod trampoline;

pub use dtype::DType;
pub use error::{Error, ErrorCode, HandlerError, Result};
pub use handler::Handler;
