//! Write XLA FFI custom-call kernels in Rust that run inside cyxla-host's
//! WebAssembly sandbox.
//!
//! A guest is a `no_std` `cdylib` built for `wasm32-unknown-unknown`. Each
//! [`target!`] declares one custom-call target (the name in
//! `jax.ffi.ffi_call("name", ...)`) and the handler that serves it. The SDK
//! provides everything else the [guest ABI](abi) asks for: the
//! `cyxla.targets` records, the `cyxla_abi_version` / `cyxla_api` /
//! `cyxla_alloc` exports, the guest's `XLA_FFI_Api` table wired to the host
//! imports, a global allocator (dlmalloc) and a panic handler.
//!
//! ```text
//!  CallFrame<'a> ──┬─ arg::<T>(i) / any_arg(i) ─► Buffer<'a, T> / AnyBuffer<'a>      (inputs)
//!                  ├─ ret::<T>(i) / any_ret(i) ─► ResultBuffer<'a, T> / AnyResultBuffer<'a>
//!                  └─ attrs() / attr::<T>(name) ─► Attrs<'a> ─► Attr<'a>: Scalar | Array | String | Dictionary
//!  handler: fn(&CallFrame) -> Result<(), Error>      Error { code: ErrorCode, message }
//! ```
//!
//! # Example
//!
//! `Cargo.toml` of a guest crate:
//!
//! ```toml
//! [package]
//! name = "my_kernel"
//! edition = "2024"
//!
//! [lib]
//! crate-type = ["cdylib"]
//!
//! [dependencies]
//! cyxla-guest-sdk = { path = "../guest-sdk" }
//!
//! [profile.release]
//! opt-level = 3
//! lto = true
//! panic = "abort"
//!
//! [profile.dev]
//! panic = "abort"
//! ```
//!
//! `src/lib.rs`:
//!
//! ```
//! #![cfg_attr(target_arch = "wasm32", no_std)]
//! use cyxla_guest_sdk::math::sqrt_f32;
//! use cyxla_guest_sdk::{CallFrame, Error, Result, target};
//!
//! /// y = x / sqrt(mean(x²) + eps) over the last axis (attribute `eps`: f32).
//! pub fn rms_norm(frame: &CallFrame<'_>) -> Result<()> {
//!     frame.expect_arity(1, 1)?;
//!     let eps: f32 = frame.attr("eps")?;
//!     let x = frame.arg::<f32>(0)?;
//!     let mut y = frame.ret::<f32>(0)?;
//!     let n = x.last_dim().ok_or_else(|| Error::invalid_argument("input must be an array"))?;
//!     if y.dims() != x.dims() {
//!         return Err(Error::invalid_argument("output shape differs from input shape"));
//!     }
//!     for (x, y) in x.chunks_exact(n.max(1)).zip(y.chunks_exact_mut(n.max(1))) {
//!         let mean = x.iter().map(|v| v * v).sum::<f32>() / n as f32;
//!         let scale = 1.0 / sqrt_f32(mean + eps);
//!         y.iter_mut().zip(x).for_each(|(y, x)| *y = x * scale);
//!     }
//!     Ok(())
//! }
//!
//! target!("my_rms_norm", my_rms_norm, rms_norm);
//! ```
//!
//! Build and drop the module into the host's guests folder:
//!
//! ```text
//! cargo build --target wasm32-unknown-unknown --release
//! cp target/wasm32-unknown-unknown/release/my_kernel.wasm <guests folder>/
//! cyxla-host check <guests folder>/my_kernel.wasm
//! ```
//!
//! and call it from JAX as any FFI target, under the launcher, which runs
//! the script with JAX on platform `cyxla`:
//!
//! ```text
//! cyxla-host --guests <guests folder> --allow my_rms_norm -- python my_script.py
//! ```
//!
//! where `my_script.py` calls
//!
//! ```text
//! y = jax.ffi.ffi_call("my_rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, eps=np.float32(1e-5))
//! ```
//!
//! A target that only reads its operands and writes its results can be a
//! [`kernel!`] instead: a function whose parameters are the call's buffers
//! in order (`fn(Buffer<'_, f32>, ResultBuffer<'_, f32>, Attrs<'_>) ->
//! Result<()>`, up to eight). Its export checks the call against that
//! signature, with the messages the [`CallFrame`] accessors give, and then
//! reads each buffer where the host wrote it, without decoding the frame:
//! a kernel's call costs less than a `CallFrame` handler's. A result that
//! shares its memory with an operand (an in-place update) is refused; such
//! a target takes a `CallFrame`.
//!
//! `cyxla-host new my_kernel --rust` writes a project like the example's,
//! ready to build (guest-sdk/README.md, "From nothing to a running guest",
//! is the guide).
//!
//! `#![cfg_attr(target_arch = "wasm32", no_std)]` keeps the guest `no_std`
//! on wasm32 while native builds (unit tests, clippy) link `std`. `core` has
//! no `f32::sqrt`, `exp`, `ln`, ...: use [`math`] (`sqrt` is one wasm
//! instruction with `simd128`, the others come from `libm`). For
//! SIMD add `-C target-feature=+simd128` to the wasm32 rustflags in
//! `.cargo/config.toml`, as `guests/.cargo/config.toml` does.
//!
//! # Panics and errors
//!
//! Return [`Error`]s: they reach the JAX user with their [`ErrorCode`] and
//! message, and the instance keeps serving calls. Every accessor of the SDK
//! returns a `Result` instead of panicking. A panic cannot become an error
//! (wasm32 has no unwinding): the SDK's panic handler stores the message,
//! readable through the optional `cyxla_last_panic` export, and traps; the
//! host then fails the call naming the trap and the message and discards the
//! instance.
//!
//! # Features
//!
//! * `allocator` (default): on wasm32, dlmalloc as the global allocator.
//! * `panic-handler` (default): on wasm32, the recording, trapping panic
//!   handler. A guest that links `std` (no `no_std`) must turn it off:
//!   depend on the SDK with `default-features = false, features =
//!   ["allocator"]`. Otherwise rustc fails with `error[E0152]: duplicate
//!   lang item in crate
//!   cyxla_guest_sdk_panic_handler_a_guest_with_std_needs_the_sdk_with_default_features_false_features_allocator`:
//!   the handler's crate is named to say so.
//! * `testing`: the `testing` module, to run handlers natively on frames
//!   built in a buffer (see the bundled guests' unit tests).
//!
//! On other targets the crate still compiles (the host uses [`abi`]); the
//! wasm32-only parts are left out and [`target!`] only type-checks handlers.
#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]
#![doc(test(attr(deny(warnings))))]

extern crate alloc;

// The panic handler lives in a crate of its own, named to say what a guest
// that links `std` must do (see the `panic-handler` feature).
#[cfg(all(target_arch = "wasm32", feature = "panic-handler"))]
extern crate cyxla_guest_sdk_panic_handler_a_guest_with_std_needs_the_sdk_with_default_features_false_features_allocator as _;

pub use cyxla_guest_abi as abi;
mod args;
mod attrs;
mod buffer;
mod context;
mod dtype;
mod error;
mod frame;
mod header;
mod kernel;
mod macros;
pub mod math;
mod memory;
#[cfg(any(target_arch = "wasm32", test))]
mod panic;
mod runtime;
#[cfg(target_arch = "wasm32")]
mod sys;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use attrs::{Array, Attr, Attrs, FromAttr, Scalar};
pub use buffer::{AnyBuffer, AnyResultBuffer, Buffer, ResultBuffer};
pub use dtype::{Complex, DataType, Element};
pub use error::{Error, ErrorCode, Result};
pub use frame::CallFrame;
pub use kernel::{Kernel, Param};
#[doc(hidden)]
pub use macros::__private;
pub use macros::Handler;

#[cfg(test)]
mod tests;

// A guest has one thread: the host refuses shared memories.
#[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
compile_error!(
    "cyxla guests are single-threaded (the host refuses shared memories): build without +atomics"
);

/// The code blocks of `guest-sdk/README.md` (the kernel author's guide):
/// its Rust blocks run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
