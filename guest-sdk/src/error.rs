//! Errors a handler returns: an XLA error code and a message.

use alloc::string::String;
use core::fmt;

pub use cyxla_xla_types::ErrorCode;

/// A handler's failure: what the JAX user sees as the XLA error of the call
/// (the host adds the target and the guest file to the message).
///
/// Returning `Err(error)` from a handler hands `code` and `message` to the
/// host through the `error_create` import (`XLA_FFI_Error_Create`).
///
/// # Examples
///
/// ```
/// use cyxla_guest_sdk::{Error, ErrorCode};
/// let e = Error::invalid_argument("input must be an array");
/// assert_eq!(e.code, ErrorCode::InvalidArgument);
/// assert_eq!(e.to_string(), "INVALID_ARGUMENT: input must be an array");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The XLA error code.
    pub code: ErrorCode,
    /// The message (UTF-8; a NUL byte ends it when it crosses to the host).
    pub message: String,
}

impl Error {
    /// An error with any code.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
        }
    }

    /// `INVALID_ARGUMENT`: operands or attributes are not what the kernel
    /// accepts.
    pub fn invalid_argument(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::InvalidArgument, message)
    }

    /// `INTERNAL`: a bug in the kernel or a malformed call frame.
    pub fn internal(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::Internal, message)
    }

    /// `UNIMPLEMENTED`: a case the kernel does not handle (e.g. a dtype).
    pub fn unimplemented(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::Unimplemented, message)
    }

    /// `OUT_OF_RANGE`: an index or size outside the accepted range.
    pub fn out_of_range(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::OutOfRange, message)
    }

    /// `FAILED_PRECONDITION`.
    pub fn failed_precondition(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::FailedPrecondition, message)
    }

    /// The same error with `context: ` put before its message.
    pub fn context(mut self, context: impl fmt::Display) -> Error {
        self.message = alloc::format!("{context}: {}", self.message);
        self
    }
}

/// Builds an error from `format_args!` out of line: the frame decoding runs
/// on every call, and formatting code inlined into it costs even when no
/// error occurs.
#[cold]
#[inline(never)]
pub(crate) fn cold(code: ErrorCode, message: fmt::Arguments<'_>) -> Error {
    Error::new(code, alloc::fmt::format(message))
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl core::error::Error for Error {}

/// `Result` with [`Error`] as the default error type.
pub type Result<T, E = Error> = core::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_prefixes() {
        let e = Error::invalid_argument("bad").context("argument 0");
        assert_eq!(e.message, "argument 0: bad");
    }
}
