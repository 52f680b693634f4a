//! The cyxla PJRT plugin: a PJRT plugin library (`libcyxla_pjrt.so`,
//! exporting `GetPjrtApi`) that loads the real XLA CPU plugin and serves its
//! API to any PJRT client (JAX as platform `cyxla`, pypjrt, a C++ or Rust
//! client), with the custom-call targets that cyxla-host registers: the
//! native LAPACK targets and the allowed guests, sandboxed.
//!
//! ```text
//! client ──► GetPjrtApi (this library): a copy of the real PJRT_Api table
//!             ├─ PJRT_Client_Create ─► configure once (CYXLA_* / CYXLA_CONFIG):
//!             │     register natives, LAPACK, allowed guests; then the real one
//!             │     (a bad configuration fails here, with its message)
//!             ├─ PJRT_Error_{Destroy,Message,GetCode} ─► ours or the real ones
//!             ├─ FFI extension register_handler ─► policy: client natives
//!             │     allowed or refused; targets cyxla serves keep cyxla's handler
//!             └─ every other slot: the real plugin's, untouched
//! ```
//!
//! Configuration: [`cyxla_setup::config`]. Nothing here aborts the process:
//! every failure becomes a `PJRT_Error` the client reads as usual, and no
//! panic unwinds across `extern "C"`.
#![deny(missing_docs)]

mod api;
mod cpu;
mod errors;
mod ffi_extension;
mod state;
mod stats_writer;

pub use cpu::cyxla_serve_cpu;
use plugin_glue::ffi::pjrt::PJRT_Api;

/// `const PJRT_Api* GetPjrtApi(void)`: the entry point every PJRT plugin
/// exports. Always returns a table: if the configuration or the real plugin
/// is bad, the table's `PJRT_Client_Create` reports why.
#[unsafe(no_mangle)]
pub extern "C" fn GetPjrtApi() -> *const PJRT_Api {
    api::get()
}
