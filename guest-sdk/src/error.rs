//! Errors a handler returns: an XLA error code and a message.

use alloc::string::String;
use core::fmt;

use crate::abi::error_code;

/// `XLA_FFI_Error_Code` without `OK`: the code of an [`Error`] (abseil
/// numbering, the same numbers PJRT reports to the client).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
#[non_exhaustive]
pub enum ErrorCode {
    /// `CANCELLED` (1).
    Cancelled = error_code::CANCELLED,
    /// `UNKNOWN` (2).
    Unknown = error_code::UNKNOWN,
    /// `INVALID_ARGUMENT` (3): bad operands or attributes.
    InvalidArgument = error_code::INVALID_ARGUMENT,
    /// `DEADLINE_EXCEEDED` (4).
    DeadlineExceeded = error_code::DEADLINE_EXCEEDED,
    /// `NOT_FOUND` (5).
    NotFound = error_code::NOT_FOUND,
    /// `ALREADY_EXISTS` (6).
    AlreadyExists = error_code::ALREADY_EXISTS,
    /// `PERMISSION_DENIED` (7).
    PermissionDenied = error_code::PERMISSION_DENIED,
    /// `RESOURCE_EXHAUSTED` (8).
    ResourceExhausted = error_code::RESOURCE_EXHAUSTED,
    /// `FAILED_PRECONDITION` (9).
    FailedPrecondition = error_code::FAILED_PRECONDITION,
    /// `ABORTED` (10).
    Aborted = error_code::ABORTED,
    /// `OUT_OF_RANGE` (11).
    OutOfRange = error_code::OUT_OF_RANGE,
    /// `UNIMPLEMENTED` (12).
    Unimplemented = error_code::UNIMPLEMENTED,
    /// `INTERNAL` (13).
    Internal = error_code::INTERNAL,
    /// `UNAVAILABLE` (14).
    Unavailable = error_code::UNAVAILABLE,
    /// `DATA_LOSS` (15).
    DataLoss = error_code::DATA_LOSS,
    /// `UNAUTHENTICATED` (16).
    Unauthenticated = error_code::UNAUTHENTICATED,
}

impl ErrorCode {
    /// The code for an `XLA_FFI_Error_Code` value; `None` for `OK` (0) and
    /// values out of range.
    pub fn from_raw(raw: u32) -> Option<ErrorCode> {
        use ErrorCode::*;
        const ALL: [ErrorCode; 16] = [
            Cancelled,
            Unknown,
            InvalidArgument,
            DeadlineExceeded,
            NotFound,
            AlreadyExists,
            PermissionDenied,
            ResourceExhausted,
            FailedPrecondition,
            Aborted,
            OutOfRange,
            Unimplemented,
            Internal,
            Unavailable,
            DataLoss,
            Unauthenticated,
        ];
        ALL.into_iter().find(|c| c.to_raw() == raw)
    }

    /// The `XLA_FFI_Error_Code` value.
    pub fn to_raw(self) -> u32 {
        self as u32
    }

    /// The abseil name, e.g. `INVALID_ARGUMENT`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::Unknown => "UNKNOWN",
            ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ErrorCode::DeadlineExceeded => "DEADLINE_EXCEEDED",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::AlreadyExists => "ALREADY_EXISTS",
            ErrorCode::PermissionDenied => "PERMISSION_DENIED",
            ErrorCode::ResourceExhausted => "RESOURCE_EXHAUSTED",
            ErrorCode::FailedPrecondition => "FAILED_PRECONDITION",
            ErrorCode::Aborted => "ABORTED",
            ErrorCode::OutOfRange => "OUT_OF_RANGE",
            ErrorCode::Unimplemented => "UNIMPLEMENTED",
            ErrorCode::Internal => "INTERNAL",
            ErrorCode::Unavailable => "UNAVAILABLE",
            ErrorCode::DataLoss => "DATA_LOSS",
            ErrorCode::Unauthenticated => "UNAUTHENTICATED",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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
    fn codes_round_trip() {
        for raw in 1..=16 {
            let code = ErrorCode::from_raw(raw).unwrap();
            assert_eq!(code.to_raw(), raw);
        }
        assert_eq!(ErrorCode::from_raw(0), None);
        assert_eq!(ErrorCode::from_raw(17), None);
        assert_eq!(ErrorCode::InvalidArgument.to_raw(), 3);
        assert_eq!(ErrorCode::Internal.name(), "INTERNAL");
    }

    #[test]
    fn context_prefixes() {
        let e = Error::invalid_argument("bad").context("argument 0");
        assert_eq!(e.message, "argument 0: bad");
    }
}
