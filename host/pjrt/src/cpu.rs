//! Serving the allowed guests on JAX's own `cpu` platform (jaxlib's CPU
//! client) instead of platform `cyxla`.
//!
//! jaxlib's CPU client takes typed XLA FFI handlers by target name
//! (`jax.ffi.register_ffi_target(name, capsule, platform="cpu")`). The
//! Python package calls [`cyxla_serve_cpu`] (through ctypes), which builds
//! the same sandboxes as platform `cyxla` from the same configuration
//! (`CYXLA_*`, `CYXLA_CONFIG`, the tenant policy) and returns each allowed
//! target with its trampoline's address; the package registers them with
//! jaxlib.
//!
//! - Not served: the native LAPACK targets (jaxlib has its own).
//! - Refused: a configuration that forbids native code from client code
//!   (`allow_native = false`). On `cpu` client code registers native
//!   handlers with jaxlib directly, where no policy of ours applies.
//! - Hot reload: a changed guest serves the next call (trampolines route by
//!   slot; the slot's handler is pointed at the new version). New targets
//!   are exported on reload and registered by the next
//!   `jax_plugins.cyxla.serve_on_cpu()`.

use std::fmt::Write as _;
use std::panic::catch_unwind;
use std::sync::OnceLock;

use cyxla_setup::config::{Config, cpu_refusal};
use cyxla_setup::process::{self, ExportedHost};

/// The cpu host, built on the first call.
static CPU: OnceLock<Result<ExportedHost, String>> = OnceLock::new();

fn start() -> Result<ExportedHost, String> {
    crate::state::init_logging();
    let config = Config::from_env().map_err(|e| format!("cyxla: bad configuration: {e}"))?;
    if !config.allow_native {
        return Err(format!("cyxla: {}", cpu_refusal()));
    }
    // SAFETY: the trusted natives are the operator's (CYXLA_NATIVE / the
    // configuration file): their statement that each is an XLA FFI handler.
    let host = unsafe { process::start_exported(&config.setup) }
        .map_err(|e| format!("cyxla: {}", cyxla_sandbox::report(e.as_ref())))?;
    crate::state::serving(&config, &host.sandboxes, "cyxla serves on platform cpu");
    Ok(host)
}

/// What [`cyxla_serve_cpu`] answers: status and text.
fn answer() -> (i32, String) {
    match CPU.get_or_init(start) {
        Err(message) => (1, message.clone()),
        Ok(host) => {
            let mut text = String::new();
            for (target, handler) in host.targets() {
                let _ = writeln!(text, "{target}\t{}", handler as usize);
            }
            (0, text)
        }
    }
}

/// `int cyxla_serve_cpu(char *out, size_t capacity, size_t *needed)`:
/// builds the cpu host once (configuration from the environment), then
/// writes into `out` one line `TARGET\tADDRESS` (decimal) per exported
/// target, or the reason it cannot serve; NUL-terminated, truncated to
/// `capacity`. `*needed` is the size the whole text needs (with its NUL).
///
/// Returns 0 (served: the lines), 1 (refused or misconfigured: the
/// message), 2 (internal error: the message).
///
/// # Safety
///
/// `out` must be NULL or point to `capacity` writable bytes; `needed` must
/// be NULL or point to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cyxla_serve_cpu(out: *mut u8, capacity: usize, needed: *mut usize) -> i32 {
    let (status, text) = catch_unwind(answer)
        .unwrap_or_else(|_| (2, "cyxla: panic while serving on cpu".to_owned()));
    let bytes = text.as_bytes();
    if !needed.is_null() {
        // SAFETY: non-NULL and writable (caller's contract).
        unsafe { needed.write(bytes.len() + 1) };
    }
    if !out.is_null() && capacity > 0 {
        let n = bytes.len().min(capacity - 1);
        // SAFETY: `out` has `capacity` writable bytes (caller's contract);
        // `n + 1 <= capacity`, and our text does not overlap it.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, n);
            out.add(n).write(0);
        }
    }
    status
}
