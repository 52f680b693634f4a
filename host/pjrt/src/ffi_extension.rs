//! The FFI extension as clients see it: the real one, with
//! `register_handler` replaced so that policy decides what client code may
//! register (`jax.ffi.register_ffi_target(..., platform="cpu")` reaches it
//! through the Python package).
//!
//! A registration for the host platform:
//! - of a target cyxla already serves (LAPACK, a guest, a trusted native):
//!   succeeds and changes nothing: cyxla's handler stays (XLA, too, keeps
//!   the first registration of a name);
//! - otherwise, if the configuration forbids native code from clients: fails
//!   with PERMISSION_DENIED naming the target and the setting; the client's
//!   handler is not registered, and calls of the target fail with the same
//!   message (a registration made before the backend started is only
//!   logged by the Python package, so the call is where the user sees it);
//! - otherwise: registered as a foreign handler through cyxla's registry.
//!
//! Registrations for other platforms go to the real extension unchanged.

use std::ffi::c_void;
use std::sync::{Arc, OnceLock};

use cyxla_setup::config::{ALLOW_NATIVE_ENV, CONFIG_ENV};
use plugin_glue::ffi::pjrt::{
    PJRT_Error, PJRT_Extension_Base, PJRT_Extension_Base_STRUCT_SIZE, PJRT_Extension_Type_FFI,
    PJRT_FFI_Extension_STRUCT_SIZE, PJRT_FFI_Register_Handler_Args,
    PJRT_FFI_Register_Handler_Args_STRUCT_SIZE, PJRT_FFI_Register_Handler_Fn,
};
use plugin_glue::ffi::xla_ffi::XLA_FFI_Handler;
use plugin_glue::frame::CallFrame;
use plugin_glue::{ErrorCode, Handler, HandlerError, registry};

use crate::errors::guard;
use crate::errors::{self, INVALID_ARGUMENT, PERMISSION_DENIED};
use crate::state;

/// The longest extension chain followed.
const MAX_EXTENSIONS: usize = 64;

/// Byte offset of `register_handler` in `PJRT_FFI_Extension`.
const REGISTER_HANDLER_OFFSET: usize = 40;

/// The real extension's `register_handler`.
static REAL_REGISTER: OnceLock<Option<PJRT_FFI_Register_Handler_Fn>> = OnceLock::new();

/// A chain for our table: the nodes up to the FFI extension are copies (so
/// that the copy of the FFI extension can be linked in), its copy has our
/// `register_handler`, and the nodes after it are the real ones. A chain
/// without an FFI extension is returned as it is.
pub fn wrap_chain(start: *const c_void) -> *const c_void {
    let mut nodes: Vec<*const PJRT_Extension_Base> = Vec::new();
    let mut current = start.cast::<PJRT_Extension_Base>();
    let mut ffi = None;
    while !current.is_null() && nodes.len() < MAX_EXTENSIONS {
        // SAFETY: reached from the plugin's `extension_start` through `next`
        // links; every extension starts with a `PJRT_Extension_Base`
        // (header contract) and lives in the never-unloaded plugin.
        let base = unsafe { &*current };
        nodes.push(current);
        if base.type_ == PJRT_Extension_Type_FFI
            && base.struct_size >= PJRT_FFI_Extension_STRUCT_SIZE
        {
            ffi = Some(nodes.len() - 1);
            break;
        }
        if base.struct_size < PJRT_Extension_Base_STRUCT_SIZE {
            break;
        }
        current = base.next;
    }
    let Some(ffi) = ffi else {
        let _ = REAL_REGISTER.set(None);
        return start;
    };
    // Copy the nodes up to the FFI extension, back to front, each linked to
    // the copy after it (the FFI copy to the real node after it).
    let mut next: *mut PJRT_Extension_Base = {
        // SAFETY: as above.
        unsafe { (*nodes[ffi]).next }
    };
    for (i, &node) in nodes.iter().enumerate().take(ffi + 1).rev() {
        // SAFETY: as above; `struct_size` bytes of the extension are readable.
        let size = unsafe { (*node).struct_size };
        let mut words = vec![0u64; size.div_ceil(8)];
        // SAFETY: `size` bytes from the real node into a buffer of at least
        // `size` bytes; they do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(node.cast::<u8>(), words.as_mut_ptr().cast::<u8>(), size);
        }
        let copy = Vec::leak(words).as_mut_ptr().cast::<PJRT_Extension_Base>();
        // SAFETY: `copy` holds a whole extension (at least its base, checked
        // in the walk), 8-byte aligned; leaked, so it lives forever.
        unsafe { (*copy).next = next };
        if i == ffi {
            let slot = copy
                .cast::<u8>()
                .wrapping_add(REGISTER_HANDLER_OFFSET)
                .cast::<usize>();
            // SAFETY: the FFI extension is at least 48 bytes (checked in the
            // walk): `register_handler` is the pointer at offset 40, in bounds
            // and aligned in our copy.
            let real = unsafe { slot.read() };
            let real = (real != 0).then(|| {
                // SAFETY: a non-NULL `register_handler` of the FFI extension
                // has this signature (pjrt_c_api_ffi_extension.h, v3 layout:
                // docs/abi.md, "PJRT_FFI_Extension").
                unsafe { std::mem::transmute::<usize, PJRT_FFI_Register_Handler_Fn>(real) }
            });
            let _ = REAL_REGISTER.set(real);
            // SAFETY: as above; our function has the same signature.
            unsafe { slot.write(register_handler as *const () as usize) };
        }
        next = copy;
    }
    next.cast_const().cast()
}

/// `register_handler` of our FFI extension.
///
/// # Safety
///
/// `args` must be a valid `PJRT_FFI_Register_Handler_Args` (PJRT contract);
/// its handler must be an `XLA_FFI_Handler` that stays valid for the life
/// of the process (the contract of registering a handler with XLA).
unsafe extern "C" fn register_handler(
    args: *mut PJRT_FFI_Register_Handler_Args,
) -> *mut PJRT_Error {
    guard(|| {
        if args.is_null() {
            return errors::new(INVALID_ARGUMENT, "PJRT_FFI_Register_Handler: NULL args");
        }
        // SAFETY: non-NULL and valid (caller's contract).
        let a = unsafe { &*args };
        if a.struct_size < PJRT_FFI_Register_Handler_Args_STRUCT_SIZE {
            return errors::new(
                INVALID_ARGUMENT,
                format!(
                    "Unexpected PJRT_FFI_Register_Handler_Args size: expected {}, got {}",
                    PJRT_FFI_Register_Handler_Args_STRUCT_SIZE, a.struct_size
                ),
            );
        }
        // SAFETY: the strings are `*_size` bytes at their pointers (caller's
        // contract); NULL with size 0 is accepted.
        let (target, platform) = unsafe {
            (
                bytes(a.target_name.cast(), a.target_name_size),
                bytes(a.platform_name.cast(), a.platform_name_size),
            )
        };
        let platform = String::from_utf8_lossy(platform);
        if !is_host(&platform) {
            return match REAL_REGISTER.get().copied().flatten() {
                // SAFETY: the real extension's function, with the client's
                // own valid arguments.
                Some(real) => unsafe { real(args) },
                None => errors::new(
                    INVALID_ARGUMENT,
                    "cyxla: the XLA plugin has no FFI extension",
                ),
            };
        }
        let Ok(target) = std::str::from_utf8(target) else {
            return errors::new(INVALID_ARGUMENT, "FFI target name is not UTF-8");
        };
        if a.handler.is_null() {
            return errors::new(INVALID_ARGUMENT, "FFI handler cannot be null");
        }
        let state = state::get();
        let host = match state.ready() {
            Ok(host) => host,
            Err(message) => return errors::new(INVALID_ARGUMENT, message),
        };
        if let Some(existing) = registry::lookup(&host.plugin, target) {
            if existing.origin == "refused" {
                return errors::new(
                    PERMISSION_DENIED,
                    format!("cyxla: registration of native handler `{target}` refused again"),
                );
            }
            tracing::debug!(
                "client registration of `{target}` kept cyxla's handler ({})",
                existing.origin
            );
            return std::ptr::null_mut();
        }
        let allow_native = state.config.as_ref().is_ok_and(|c| c.allow_native);
        if !allow_native {
            let message = format!(
                "cyxla: registration of native handler `{target}` refused: this host does not \
                 let client code register native handlers ({ALLOW_NATIVE_ENV}=0, \
                 `cyxla-host --deny-native`, or allow_native = false in {CONFIG_ENV}); serve \
                 `{target}` from a sandboxed guest instead"
            );
            // The client's code is not registered; in its place, a handler
            // that fails every call with the same message, so that a program
            // compiled later says why `target` does not run.
            let refused = Arc::new(Refused(message.clone()));
            if let Err(e) =
                registry::register_with_origin(&host.plugin, target, refused, "refused".to_owned())
            {
                tracing::warn!("cannot register the refusal of `{target}`: {e}");
            }
            return errors::new(PERMISSION_DENIED, message);
        }
        // SAFETY: non-NULL, and an `XLA_FFI_Handler` by the caller's
        // contract; function pointers and data pointers have one size here.
        let handler = unsafe { std::mem::transmute::<*mut c_void, XLA_FFI_Handler>(a.handler) };
        match registry::register_foreign(&host.plugin, target, handler, "client code".to_owned()) {
            Ok(()) => {
                tracing::info!("registered native handler `{target}` from client code");
                std::ptr::null_mut()
            }
            Err(e) => errors::new(
                INVALID_ARGUMENT,
                format!("cyxla: cannot register native handler `{target}`: {e}"),
            ),
        }
    })
}

/// Stands in for a native handler that policy refused: every call fails
/// with the refusal.
struct Refused(String);

impl Handler for Refused {
    fn execute(&self, _frame: &CallFrame<'_>) -> Result<(), HandlerError> {
        Err(HandlerError::new(
            ErrorCode::PermissionDenied,
            self.0.clone(),
        ))
    }
}

/// XLA's host platform, named as the FFI extension accepts it
/// (case-insensitive `host` or `cpu`: docs/abi.md, "Platform name").
fn is_host(platform: &str) -> bool {
    platform.eq_ignore_ascii_case("host") || platform.eq_ignore_ascii_case("cpu")
}

/// # Safety
///
/// If `len > 0`, `ptr` must point to `len` readable bytes valid for `'a`.
unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if ptr.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: caller's contract.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}
