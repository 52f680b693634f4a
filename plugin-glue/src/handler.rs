//! What a handler is: the Rust side of one registered custom-call target.
//!
//! The dispatcher ([`crate::registry`]) answers the metadata probe itself and
//! hands a [`Handler`] only EXECUTE calls, through a checked view of the frame
//! ([`crate::frame::CallFrame`]). A handler's `Err` becomes an `XLA_FFI_Error`
//! with the same code and message; a panic becomes an INTERNAL error.

use std::fmt;

use crate::frame::CallFrame;

/// XLA FFI error codes (abseil numbering; `PJRT_Error_Code` uses the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
#[non_exhaustive]
#[expect(
    missing_docs,
    reason = "each variant is the absl::StatusCode of the same name"
)]
pub enum ErrorCode {
    Cancelled = 1,
    Unknown = 2,
    InvalidArgument = 3,
    DeadlineExceeded = 4,
    NotFound = 5,
    AlreadyExists = 6,
    PermissionDenied = 7,
    ResourceExhausted = 8,
    FailedPrecondition = 9,
    Aborted = 10,
    OutOfRange = 11,
    Unimplemented = 12,
    Internal = 13,
    Unavailable = 14,
    DataLoss = 15,
    Unauthenticated = 16,
}

impl ErrorCode {
    /// The code with this number; numbers outside 1..=16 map to `Unknown`,
    /// which is what XLA itself does with them.
    pub fn from_raw(code: i32) -> ErrorCode {
        use ErrorCode::*;
        match code {
            1 => Cancelled,
            3 => InvalidArgument,
            4 => DeadlineExceeded,
            5 => NotFound,
            6 => AlreadyExists,
            7 => PermissionDenied,
            8 => ResourceExhausted,
            9 => FailedPrecondition,
            10 => Aborted,
            11 => OutOfRange,
            12 => Unimplemented,
            13 => Internal,
            14 => Unavailable,
            15 => DataLoss,
            16 => Unauthenticated,
            _ => Unknown,
        }
    }

    /// The raw number.
    pub fn to_raw(self) -> i32 {
        self as i32
    }

    /// abseil's spelling, as XLA prints it (`INVALID_ARGUMENT`).
    pub fn name(self) -> &'static str {
        use ErrorCode::*;
        match self {
            Cancelled => "CANCELLED",
            Unknown => "UNKNOWN",
            InvalidArgument => "INVALID_ARGUMENT",
            DeadlineExceeded => "DEADLINE_EXCEEDED",
            NotFound => "NOT_FOUND",
            AlreadyExists => "ALREADY_EXISTS",
            PermissionDenied => "PERMISSION_DENIED",
            ResourceExhausted => "RESOURCE_EXHAUSTED",
            FailedPrecondition => "FAILED_PRECONDITION",
            Aborted => "ABORTED",
            OutOfRange => "OUT_OF_RANGE",
            Unimplemented => "UNIMPLEMENTED",
            Internal => "INTERNAL",
            Unavailable => "UNAVAILABLE",
            DataLoss => "DATA_LOSS",
            Unauthenticated => "UNAUTHENTICATED",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error a handler returns: it reaches the PJRT client verbatim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandlerError {
    /// XLA error code the client sees.
    pub code: ErrorCode,
    /// Message the client sees, unchanged.
    pub message: String,
}

impl HandlerError {
    /// An error with this code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> HandlerError {
        HandlerError {
            code,
            message: message.into(),
        }
    }

    /// `INVALID_ARGUMENT` with this message.
    pub fn invalid_argument(message: impl Into<String>) -> HandlerError {
        HandlerError::new(ErrorCode::InvalidArgument, message)
    }

    /// `INTERNAL` with this message.
    pub fn internal(message: impl Into<String>) -> HandlerError {
        HandlerError::new(ErrorCode::Internal, message)
    }

    /// `UNIMPLEMENTED` with this message.
    pub fn unimplemented(message: impl Into<String>) -> HandlerError {
        HandlerError::new(ErrorCode::Unimplemented, message)
    }
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for HandlerError {}

/// One custom-call target's implementation, called on XLA's threads.
///
/// # Thread safety
///
/// XLA enters the same handler concurrently from several threads (several
/// devices, several callers, and asynchronous dispatch inside one
/// execution), so implementations must be `Send + Sync` and reentrant.
pub trait Handler: Send + Sync + 'static {
    /// Runs the EXECUTE stage of one call.
    ///
    /// # Errors
    ///
    /// The returned error reaches the client with its code and message.
    fn execute(&self, frame: &CallFrame<'_>) -> Result<(), HandlerError>;
}
