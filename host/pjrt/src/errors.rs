//! `PJRT_Error`s made by this library, beside the real plugin's.
//!
//! A client frees every error with the table's `PJRT_Error_Destroy` and reads
//! it with `PJRT_Error_Message` / `PJRT_Error_GetCode`; those slots are ours
//! and tell our errors (their addresses are kept in a set) from the real
//! plugin's, which they forward.

use std::collections::HashSet;
use std::ffi::c_char;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, OnceLock, PoisonError};

use plugin_glue::ffi::pjrt::{
    PJRT_Error, PJRT_Error_Code, PJRT_Error_Destroy_Args, PJRT_Error_Destroy_Fn,
    PJRT_Error_ForEachPayload_Args, PJRT_Error_ForEachPayload_Fn, PJRT_Error_GetCode_Args,
    PJRT_Error_GetCode_Fn, PJRT_Error_Message_Args, PJRT_Error_Message_Fn,
};

/// PJRT's `PJRT_Error_Code_INVALID_ARGUMENT`.
pub const INVALID_ARGUMENT: PJRT_Error_Code = 3;
/// PJRT's `PJRT_Error_Code_PERMISSION_DENIED`.
pub const PERMISSION_DENIED: PJRT_Error_Code = 7;
/// PJRT's `PJRT_Error_Code_INTERNAL`.
pub const INTERNAL: PJRT_Error_Code = 13;

/// The real plugin's error functions.
#[derive(Clone, Copy)]
pub struct RealErrorFns {
    /// `PJRT_Error_Destroy`.
    pub destroy: PJRT_Error_Destroy_Fn,
    /// `PJRT_Error_Message`.
    pub message: PJRT_Error_Message_Fn,
    /// `PJRT_Error_GetCode`.
    pub get_code: PJRT_Error_GetCode_Fn,
    /// `PJRT_Error_ForEachPayload`, in tables that have it.
    pub for_each_payload: Option<PJRT_Error_ForEachPayload_Fn>,
}

/// The real plugin's error functions, set when the table is built
/// ([`forward_to`]); unset with the stand-in table.
static REAL: OnceLock<Option<RealErrorFns>> = OnceLock::new();

/// Errors that are not ours go to `real` (the table wrapping the real
/// plugin sets this once, as it is built).
pub fn forward_to(real: Option<RealErrorFns>) {
    let _ = REAL.set(real);
}

/// The real plugin's error functions, if a real plugin was loaded.
fn real_error_fns() -> Option<RealErrorFns> {
    REAL.get().copied().flatten()
}

/// Runs a fallible entry point's body; a panic becomes an INTERNAL error.
pub fn guard(body: impl FnOnce() -> *mut PJRT_Error) -> *mut PJRT_Error {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(error) => error,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            new(INTERNAL, format!("cyxla: internal error: {what}"))
        }
    }
}

/// Runs a `void` entry point's body; a panic is logged and swallowed.
pub fn guard_void(body: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(body)).is_err() {
        tracing::error!("cyxla: internal error (panic) in a PJRT error function");
    }
}

/// One of our errors.
struct OwnError {
    code: PJRT_Error_Code,
    message: String,
}

/// Addresses of our live errors.
static LIVE: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

fn live() -> std::sync::MutexGuard<'static, Option<HashSet<usize>>> {
    // Every update is one insert or remove: a panic cannot leave it torn.
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A new error the client owns, freed by [`destroy`].
pub fn new(code: PJRT_Error_Code, message: impl Into<String>) -> *mut PJRT_Error {
    let message = message.into();
    tracing::debug!(code, "{message}");
    let error = Box::into_raw(Box::new(OwnError { code, message }));
    live()
        .get_or_insert_with(HashSet::new)
        .insert(error as usize);
    error.cast()
}

fn is_own(error: *const PJRT_Error) -> bool {
    live()
        .as_ref()
        .is_some_and(|set| set.contains(&(error as usize)))
}

/// `PJRT_Error_Destroy`: frees our error, or forwards to the real plugin's.
///
/// # Safety
///
/// `args` must be a valid `PJRT_Error_Destroy_Args` naming a live error of
/// this table (PJRT contract).
pub unsafe extern "C" fn destroy(args: *mut PJRT_Error_Destroy_Args) {
    guard_void(|| {
        // SAFETY: caller's contract: `args` is valid.
        let error = unsafe { (*args).error };
        let own = {
            let mut set = live();
            set.as_mut().is_some_and(|s| s.remove(&(error as usize)))
        };
        if own {
            // SAFETY: the address was in the set, so it came from
            // `Box::into_raw` in `new` and is freed exactly once (removed above).
            drop(unsafe { Box::from_raw(error.cast::<OwnError>()) });
        } else if let Some(real) = real_error_fns().map(|f| f.destroy) {
            // SAFETY: not ours, so the real plugin made it; forwarded as given.
            unsafe { real(args) };
        }
    });
}

/// `PJRT_Error_Message`: our error's message, or the real plugin's.
///
/// # Safety
///
/// As for [`destroy`], with `PJRT_Error_Message_Args`.
pub unsafe extern "C" fn message(args: *mut PJRT_Error_Message_Args) {
    guard_void(|| {
        // SAFETY: caller's contract: `args` is valid.
        let error = unsafe { (*args).error };
        if is_own(error) {
            // SAFETY: ours and live (in the set); the client does not destroy
            // it while reading it, so the message outlives this call.
            let own = unsafe { &*error.cast::<OwnError>() };
            // SAFETY: `args` is valid and writable (caller's contract).
            unsafe {
                (*args).message = own.message.as_ptr().cast::<c_char>();
                (*args).message_size = own.message.len();
            }
        } else if let Some(real) = real_error_fns().map(|f| f.message) {
            // SAFETY: the real plugin's error; forwarded as given.
            unsafe { real(args) };
        }
    });
}

/// `PJRT_Error_ForEachPayload` (slot 132): our errors have no payloads; the
/// real plugin's are forwarded. jaxlib calls it on every error from a table
/// that has the slot.
///
/// # Safety
///
/// As for [`destroy`], with the arguments above.
pub unsafe extern "C" fn for_each_payload(
    args: *mut PJRT_Error_ForEachPayload_Args,
) -> *mut PJRT_Error {
    guard(|| {
        // SAFETY: caller's contract: `args` is valid.
        let error = unsafe { (*args).error };
        if is_own(error) {
            return std::ptr::null_mut();
        }
        match real_error_fns().and_then(|f| f.for_each_payload) {
            // SAFETY: the real plugin's error and function; forwarded as given.
            Some(real) => unsafe { real(args) },
            None => std::ptr::null_mut(),
        }
    })
}

/// `PJRT_Error_GetCode`: our error's code, or the real plugin's.
///
/// # Safety
///
/// As for [`destroy`], with `PJRT_Error_GetCode_Args`.
pub unsafe extern "C" fn get_code(args: *mut PJRT_Error_GetCode_Args) -> *mut PJRT_Error {
    guard(|| {
        // SAFETY: caller's contract: `args` is valid.
        let error = unsafe { (*args).error };
        if is_own(error) {
            // SAFETY: ours and live (in the set).
            let code = unsafe { &*error.cast::<OwnError>() }.code;
            // SAFETY: `args` is valid and writable (caller's contract).
            unsafe { (*args).code = code };
            std::ptr::null_mut()
        } else if let Some(real) = real_error_fns().map(|f| f.get_code) {
            // SAFETY: the real plugin's error; forwarded as given.
            unsafe { real(args) }
        } else {
            new(INTERNAL, "cyxla: unknown PJRT error object")
        }
    })
}

/// The real plugin's `error`, or, when `more` has something to add to its
/// message, one of ours with the same code and the message followed by that
/// (the real error destroyed). Payloads of a replaced error are dropped: the
/// errors amended (compile errors) have none that a client reads.
///
/// # Safety
///
/// `error` must be NULL or a live error of the real plugin that the caller
/// owns; if it is replaced, it is destroyed here.
pub unsafe fn amend(
    error: *mut PJRT_Error,
    more: impl FnOnce(&str) -> Option<String>,
) -> *mut PJRT_Error {
    let Some(real) = real_error_fns() else {
        return error;
    };
    if error.is_null() || is_own(error) {
        return error;
    }
    let mut args = PJRT_Error_Message_Args::new();
    args.error = error;
    // SAFETY: the real plugin's `PJRT_Error_Message` on its live error
    // (caller's contract).
    unsafe { (real.message)(&mut args) };
    let message = if args.message.is_null() {
        String::new()
    } else {
        // SAFETY: the plugin set `message`/`message_size` to bytes that stay
        // valid until the error is destroyed (below, after this copy).
        let bytes =
            unsafe { std::slice::from_raw_parts(args.message.cast::<u8>(), args.message_size) };
        String::from_utf8_lossy(bytes).into_owned()
    };
    let Some(added) = more(&message) else {
        return error;
    };
    let mut code_args = PJRT_Error_GetCode_Args::new();
    code_args.error = error;
    // SAFETY: as above, with `PJRT_Error_GetCode`.
    let nested = unsafe { (real.get_code)(&mut code_args) };
    let code = if nested.is_null() {
        code_args.code
    } else {
        let mut destroy = PJRT_Error_Destroy_Args::new();
        destroy.error = nested;
        // SAFETY: a fresh error of the real plugin, ours to free.
        unsafe { (real.destroy)(&mut destroy) };
        INVALID_ARGUMENT
    };
    let mut destroy = PJRT_Error_Destroy_Args::new();
    destroy.error = error;
    // SAFETY: the caller's error, owned by the caller (contract), freed once;
    // `message` was copied out of it above.
    unsafe { (real.destroy)(&mut destroy) };
    new(code, format!("{message}\n{added}"))
}
