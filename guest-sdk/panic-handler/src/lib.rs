//! The panic handler of `no_std` cyxla guests, on by default through the
//! `panic-handler` feature of `cyxla-guest-sdk`: it records the message
//! (export `cyxla_last_panic`, in the SDK) and traps.
//!
//! It is a crate of its own for one reason: its name. A guest crate that
//! links `std` has `std`'s panic handler too, and rustc then fails with
//! `error[E0152]: duplicate lang item in crate
//! cyxla_guest_sdk_panic_handler_a_guest_with_std_needs_the_sdk_with_default_features_false_features_allocator`,
//! which says what to do: depend on the SDK with
//! `cyxla-guest-sdk = { ..., default-features = false, features = ["allocator"] }`.
#![no_std]

#[cfg(target_arch = "wasm32")]
unsafe extern "Rust" {
    /// Defined by `cyxla-guest-sdk` (always linked with this crate): stores
    /// the panic message for `cyxla_last_panic`.
    fn __cyxla_guest_sdk_record_panic(info: &core::panic::PanicInfo<'_>);
}

#[cfg(target_arch = "wasm32")]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: the SDK defines this function with this signature (it is the
    // only crate that depends on this one); it only formats `info` into a
    // static buffer of a single-threaded guest.
    unsafe { __cyxla_guest_sdk_record_panic(info) };
    core::arch::wasm32::unreachable()
}
