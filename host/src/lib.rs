//! cyxla-host: runs XLA FFI custom-call handlers inside WebAssembly sandboxes.
#![deny(missing_docs)]
