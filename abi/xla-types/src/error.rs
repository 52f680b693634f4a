//! An XLA error: [`Error`], its [`ErrorCode`] (numbered as
//! `XLA_FFI_Error_Code`) and its message. One type on both sides of the
//! sandbox: what a guest's handler returns (the guest SDK's `Error`) and
//! what a native handler returns and XLA receives (plugin-glue's
//! `HandlerError`).

use alloc::string::String;
use core::fmt;

c_enum! {
    /// `XLA_FFI_Error_Code` values (abseil numbering).
    pub mod error_code: "XLA_FFI_Error_Code";
    raw_only OK = 0;

    /// `XLA_FFI_Error_Code` without `OK`: the code of an XLA error (abseil
    /// numbering, the same numbers PJRT reports to the client).
    pub enum ErrorCode;
    /// Every code, in numeric order.
    const ALL;
    /// The abseil name, e.g. `INVALID_ARGUMENT`.
    fn name;
    {
        Cancelled = CANCELLED = 1;
        Unknown = UNKNOWN = 2;
        /// Bad operands or attributes.
        InvalidArgument = INVALID_ARGUMENT = 3;
        DeadlineExceeded = DEADLINE_EXCEEDED = 4;
        NotFound = NOT_FOUND = 5;
        AlreadyExists = ALREADY_EXISTS = 6;
        PermissionDenied = PERMISSION_DENIED = 7;
        ResourceExhausted = RESOURCE_EXHAUSTED = 8;
        FailedPrecondition = FAILED_PRECONDITION = 9;
        Aborted = ABORTED = 10;
        OutOfRange = OUT_OF_RANGE = 11;
        Unimplemented = UNIMPLEMENTED = 12;
        Internal = INTERNAL = 13;
        Unavailable = UNAVAILABLE = 14;
        DataLoss = DATA_LOSS = 15;
        Unauthenticated = UNAUTHENTICATED = 16;
    }
}

impl ErrorCode {
    /// The code of a C `XLA_FFI_Error_Code` or `PJRT_Error_Code` (an
    /// `int`); numbers outside 1..=16 map to `UNKNOWN`, which is what XLA
    /// itself does with them.
    pub fn from_c(code: i32) -> ErrorCode {
        u32::try_from(code)
            .ok()
            .and_then(ErrorCode::from_raw)
            .unwrap_or(ErrorCode::Unknown)
    }

    /// The value as a C `XLA_FFI_Error_Code` (an `int`).
    pub fn to_c(self) -> i32 {
        self as i32
    }
}

/// An XLA error: what a handler returns and the client sees, an
/// `XLA_FFI_Error`'s code and message.
///
/// # Examples
///
/// ```
/// use cyxla_xla_types::{Error, ErrorCode};
/// let e = Error::invalid_argument("input must be an array");
/// assert_eq!(e.code, ErrorCode::InvalidArgument);
/// assert_eq!(e.to_string(), "INVALID_ARGUMENT: input must be an array");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The XLA error code.
    pub code: ErrorCode,
    /// The message (UTF-8; a NUL byte ends it when it crosses into C).
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

    /// `INVALID_ARGUMENT`: operands or attributes are not what the handler
    /// accepts.
    pub fn invalid_argument(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::InvalidArgument, message)
    }

    /// `INTERNAL`: a bug in the handler or a malformed call frame.
    pub fn internal(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::Internal, message)
    }

    /// `UNIMPLEMENTED`: a case the handler does not handle (e.g. a dtype).
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

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl core::error::Error for Error {}

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
    fn c_codes_map_unknown_numbers_to_unknown() {
        for raw in 1..=16 {
            assert_eq!(ErrorCode::from_c(raw).to_c(), raw);
        }
        assert_eq!(ErrorCode::from_c(0), ErrorCode::Unknown);
        assert_eq!(ErrorCode::from_c(-3), ErrorCode::Unknown);
        assert_eq!(ErrorCode::from_c(17), ErrorCode::Unknown);
    }

    #[test]
    fn context_prefixes() {
        let e = Error::invalid_argument("bad").context("argument 0");
        assert_eq!(e.message, "argument 0: bad");
        assert_eq!(e.code, ErrorCode::InvalidArgument);
    }
}
