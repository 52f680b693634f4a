//! Raw C ABI types, one module per C API. Names are the C names.

pub mod pjrt;
pub mod xla_ffi;
