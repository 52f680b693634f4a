//! The call's execution context through the host imports: the device
//! ordinal and the run id (`XLA_FFI_DeviceOrdinal_Get`, `XLA_FFI_RunId_Get`).

use crate::abi;
use crate::error::Result;
#[cfg(target_arch = "wasm32")]
use crate::{args, error::Error, memory::Memory, sys};

/// `XLA_FFI_DeviceOrdinal_Get` through the host import.
pub(crate) fn device_ordinal(ctx: u32) -> Result<i32> {
    #[cfg(target_arch = "wasm32")]
    {
        let mut a = args::DeviceOrdinalGet::new(ctx, 0);
        // SAFETY: `a` is a live, correctly laid out args struct; the host
        // writes only inside it.
        let handle = unsafe { sys::device_ordinal_get(&mut a) };
        check(handle, abi::IMPORT_DEVICE_ORDINAL_GET).map(|()| a.device_ordinal)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        outside_wasm32(ctx, abi::IMPORT_DEVICE_ORDINAL_GET)
    }
}

/// `XLA_FFI_RunId_Get` through the host import.
pub(crate) fn run_id(ctx: u32) -> Result<i64> {
    #[cfg(target_arch = "wasm32")]
    {
        let mut a = args::RunIdGet::new(ctx, 0);
        // SAFETY: as in device_ordinal.
        let handle = unsafe { sys::run_id_get(&mut a) };
        check(handle, abi::IMPORT_RUN_ID_GET).map(|()| a.run_id)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        outside_wasm32(ctx, abi::IMPORT_RUN_ID_GET)
    }
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

/// Turns an error handle from a host import into an [`Error`] (and
/// destroys the handle). 0 is success.
#[cfg(target_arch = "wasm32")]
fn check(handle: u32, import: &str) -> Result<()> {
    if handle == 0 {
        return Ok(());
    }
    let mut get = args::ErrorGetMessage::new(handle, 0);
    // SAFETY: `get` is a live args struct; the host writes `message`.
    unsafe { sys::error_get_message(&mut get) };
    let text = Memory::linear()
        .c_str(get.message, 4096)
        .map(|b| alloc::string::String::from_utf8_lossy(b).into_owned())
        .unwrap_or_else(|e| e.message);
    let mut destroy = args::ErrorDestroy::new(handle);
    // SAFETY: `destroy` is a live args struct naming a handle the host issued.
    unsafe { sys::error_destroy(&mut destroy) };
    Err(Error::internal(alloc::format!(
        "host import {import} failed: {text}"
    )))
}
