//! Errors a handler returns: an XLA error code and a message.

use core::fmt;

pub use cyxla_xla_types::ErrorCode;

/// A handler's failure: what the JAX user sees as the XLA error of the call
/// (the host adds the target and the guest file to the message).
///
/// Returning `Err(error)` from a handler hands `code` and `message` to the
/// host through the `error_create` import (`XLA_FFI_Error_Create`). The
/// host's native side reports errors with the same type
/// (`cyxla_xla_types::Error`, plugin-glue's `HandlerError`).
///
/// # Examples
///
/// ```
/// use cyxla_guest_sdk::{Error, ErrorCode};
/// let e = Error::invalid_argument("input must be an array");
/// assert_eq!(e.code, ErrorCode::InvalidArgument);
/// assert_eq!(e.to_string(), "INVALID_ARGUMENT: input must be an array");
/// ```
pub use cyxla_xla_types::Error;

/// Builds an error from `format_args!` out of line: the frame decoding runs
/// on every call, and formatting code inlined into it costs even when no
/// error occurs.
#[cold]
#[inline(never)]
pub(crate) fn cold(code: ErrorCode, message: fmt::Arguments<'_>) -> Error {
    Error::new(code, alloc::fmt::format(message))
}

/// `Result` with [`Error`] as the default error type.
pub type Result<T, E = Error> = core::result::Result<T, E>;
