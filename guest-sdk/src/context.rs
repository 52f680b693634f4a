//! The call's execution context through the host imports: the device
//! ordinal and the run id (`XLA_FFI_DeviceOrdinal_Get`, `XLA_FFI_RunId_Get`).

use crate::abi;
use crate::error::Result;
#[cfg(target_arch = "wasm32")]
use crate::{args, error::Error, memory::Memory, sys};

/// Defines each getter: `$import` through its host import (`sys::$sys` on
/// an `args::$args` struct), answering the struct's `$field`.
macro_rules! context_getters {
    ($(
        $(#[$doc:meta])*
        $name:ident -> $ty:ty = $import:ident: $sys:ident, $args:ident, $field:ident;
    )*) => {$(
        $(#[$doc])*
        pub(crate) fn $name(ctx: u32) -> Result<$ty> {
            #[cfg(target_arch = "wasm32")]
            {
                let mut a = args::$args::new(ctx, 0);
                // SAFETY: `a` is a live, correctly laid out args struct; the
                // host writes only inside it.
                let handle = unsafe { sys::$sys(&mut a) };
                check(handle, abi::$import).map(|()| a.$field)
            }
            #[cfg(not(target_arch = "wasm32"))]
            {
                outside_wasm32(ctx, abi::$import)
            }
        }
    )*};
}

context_getters! {
    /// `XLA_FFI_DeviceOrdinal_Get` through the host import.
    device_ordinal -> i32 = IMPORT_DEVICE_ORDINAL_GET:
        device_ordinal_get, DeviceOrdinalGet, device_ordinal;
    /// `XLA_FFI_RunId_Get` through the host import.
    run_id -> i64 = IMPORT_RUN_ID_GET: run_id_get, RunIdGet, run_id;
}

/// The error of a context call outside a wasm32 guest, where there is no
/// host to ask. Takes the call's `ctx` so that it is used on every target.
#[cfg(not(target_arch = "wasm32"))]
fn outside_wasm32<T>(ctx: u32, import: &str) -> Result<T> {
    let _ = ctx;
    Err(crate::Error::unimplemented(alloc::format!(
        "{import} is only available in a wasm32 guest"
    )))
}

/// Turns an error handle from a host import into an [`Error`] with the
/// handle's code (`XLA_FFI_Error_GetDetails`) and destroys the handle. 0 is
/// success.
#[cfg(target_arch = "wasm32")]
fn check(handle: u32, import: &str) -> Result<()> {
    if handle == 0 {
        return Ok(());
    }
    let mut get = args::ErrorGetDetails::new(handle, 0, crate::ErrorCode::Internal.to_c());
    // SAFETY: `get` is a live args struct; the host writes `message` and
    // `errc`.
    unsafe { sys::error_get_message(&mut get) };
    let text = Memory::linear()
        .c_str(get.message, 4096)
        .map(|b| alloc::string::String::from_utf8_lossy(b).into_owned())
        .unwrap_or_else(|e| e.message);
    let mut destroy = args::ErrorDestroy::new(handle);
    // SAFETY: `destroy` is a live args struct naming a handle the host issued.
    unsafe { sys::error_destroy(&mut destroy) };
    Err(Error::new(
        crate::ErrorCode::from_c(get.errc),
        alloc::format!("host import {import} failed: {text}"),
    ))
}
