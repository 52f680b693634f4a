//! What a handler is: the Rust side of one registered custom-call target.
//!
//! The dispatcher ([`crate::registry`]) answers the metadata probe itself and
//! hands a [`Handler`] only EXECUTE calls, through a checked view of the frame
//! ([`crate::frame::CallFrame`]). A handler's `Err` becomes an `XLA_FFI_Error`
//! with the same code and message; a panic becomes an INTERNAL error.

use crate::frame::{CallFrame, LazyFrame};

// A handler's error types, defined in `error`, also under this module's path.
pub use crate::error::{ErrorCode, HandlerError};

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

    /// Runs the EXECUTE stage of one call from a frame whose buffers are
    /// not checked yet, which is what the dispatcher calls. By default it
    /// checks every buffer, as a [`CallFrame`] is checked, and runs
    /// [`Handler::execute`]; a handler that compares each call's buffers
    /// with shapes it checked at an earlier call
    /// ([`LazyFrame::arg_shaped`]) implements it to check them once.
    ///
    /// # Errors
    ///
    /// As for [`Handler::execute`]; by default also `INVALID_ARGUMENT` for
    /// an invalid buffer ([`LazyFrame::check`]).
    fn execute_lazy(&self, frame: &LazyFrame<'_>) -> Result<(), HandlerError> {
        frame.check(|view| self.execute(view))?
    }
}
