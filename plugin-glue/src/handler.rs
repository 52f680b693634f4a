//! What a handler is: the Rust side of one registered custom-call target.
//!
//! The dispatcher ([`crate::registry`]) answers the metadata probe itself and
//! hands a [`Handler`] only EXECUTE calls, through a checked view of the frame
//! ([`crate::frame::CallFrame`]). A handler's `Err` becomes an `XLA_FFI_Error`
//! with the same code and message; a panic becomes an INTERNAL error.

use std::fmt;

use crate::frame::CallFrame;

pub use cyxla_xla_types::ErrorCode;

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
