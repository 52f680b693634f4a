//! [`GuestHandler`]: the [`plugin_glue::Handler`] that runs one target in
//! its guest's sandbox.

use std::sync::Arc;

use plugin_glue::frame::CallFrame;
use plugin_glue::{Handler, HandlerError};

use crate::call::HostCall;
use crate::guest::Guest;
use crate::layout::CallView;
use crate::pool::Pool;
use crate::state::CallInfo;

/// Runs one custom-call target in its guest.
///
/// Errors reach XLA as `target `t` (guest x.wasm): <what happened>`, with
/// the guest's own error code, DEADLINE_EXCEEDED for a deadline,
/// RESOURCE_EXHAUSTED for a limit and INTERNAL for a trap.
///
/// # Thread safety
///
/// `Send + Sync`: concurrent calls take separate instances from the guest's
/// pool (shared by every target of that guest).
pub struct GuestHandler {
    target: String,
    index: usize,
    pool: Arc<Pool>,
    prefix: String,
}

impl GuestHandler {
    /// A handler for `target` (which the pool's guest declares).
    pub(crate) fn new(pool: Arc<Pool>, target: &str) -> Option<GuestHandler> {
        let index = pool.guest().target_index(target)?;
        let prefix = format!("target `{target}` (guest {}): ", pool.guest().file_name());
        Some(GuestHandler {
            target: target.to_owned(),
            index,
            pool,
            prefix,
        })
    }

    /// The target name.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The guest serving it.
    pub fn guest(&self) -> &Arc<Guest> {
        self.pool.guest()
    }

    /// Instances of the guest alive now (idle or busy).
    pub fn live_instances(&self) -> usize {
        self.pool.live()
    }

    /// Runs the target on a host-owned call (no XLA involved); results are
    /// written into `call`'s result buffers.
    ///
    /// # Errors
    ///
    /// As from XLA: the guest's error, a trap, a deadline or a limit, named.
    pub fn call_host(&self, call: &HostCall) -> Result<(), HandlerError> {
        let info = CallInfo {
            device_ordinal: Ok(0),
            run_id: Ok(0),
        };
        self.run(call, info)
    }

    fn run<C: CallView>(&self, call: &C, info: CallInfo) -> Result<(), HandlerError> {
        let guest = self.pool.guest().file_name();
        let span =
            tracing::debug_span!("custom_call", target = %self.target, guest, stage = "execute");
        let _entered = span.enter();
        let mut lease = self.pool.take().map_err(|e| self.prefixed(e))?;
        match lease
            .instance()
            .call(self.index, call, info, guest, &self.target)
        {
            Ok(()) => Ok(()),
            Err(failure) => {
                if failure.discard {
                    lease.discard();
                }
                let error = self.prefixed(failure.error);
                tracing::debug!(code = %error.code, "{}", error.message);
                Err(error)
            }
        }
    }

    fn prefixed(&self, error: HandlerError) -> HandlerError {
        HandlerError::new(error.code, format!("{}{}", self.prefix, error.message))
    }
}

impl Handler for GuestHandler {
    fn execute(&self, frame: &CallFrame<'_>) -> Result<(), HandlerError> {
        let info = CallInfo {
            device_ordinal: frame.device_ordinal(),
            run_id: frame.run_id(),
        };
        self.run(frame, info)
    }
}

impl std::fmt::Debug for GuestHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuestHandler")
            .field("target", &self.target)
            .field("guest", &self.pool.guest().path())
            .finish_non_exhaustive()
    }
}
