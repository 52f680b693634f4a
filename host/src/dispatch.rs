//! [`GuestHandler`]: the [`plugin_glue::Handler`] that runs one target in
//! its guest's sandbox.
//!
//! The guest behind a handler can change while the handler stays registered
//! with XLA (hot reload, [`crate::Sandbox::reload`]): a handler holds what
//! serves it now behind an atomic pointer, and each call takes that pointer
//! once, so a call finishes on the version it started with.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use arc_swap::ArcSwap;
use plugin_glue::frame::CallFrame;
use plugin_glue::{ErrorCode, Handler, HandlerError};

use crate::audit;
use crate::call::HostCall;
use crate::failed_call::{self, FailedCall, Sink};
use crate::guest::Guest;
use crate::layout::CallView;
use crate::pool::Pool;
use crate::state::CallInfo;
use crate::stats::{CallMeasure, Ending, TargetStats};

/// Runs one custom-call target in its guest.
///
/// Errors reach XLA as `target `t` (guest x.wasm): <what happened>`, with
/// the guest's own error code, DEADLINE_EXCEEDED for a deadline,
/// RESOURCE_EXHAUSTED for a limit and INTERNAL for a trap.
///
/// Clones share one slot: swapping the guest behind one clone swaps it for
/// all (the one registered with XLA included).
///
/// # Thread safety
///
/// `Send + Sync`: concurrent calls take separate instances from the guest's
/// pool (shared by every target of that guest).
#[derive(Clone)]
pub struct GuestHandler {
    slot: Arc<ServedTarget>,
}

struct ServedTarget {
    target: String,
    serving: ArcSwap<Serving>,
    /// The target's counters, kept across reloads.
    stats: Arc<TargetStats>,
}

/// What serves a target now.
pub(crate) enum Serving {
    /// A guest, through its pool.
    Guest {
        pool: Arc<Pool>,
        /// The target's index among the guest's targets.
        index: usize,
        /// `target `t` (guest x.wasm): `, for errors.
        prefix: String,
    },
    /// Nothing any more, and why (e.g. the module was removed).
    Gone(String),
}

impl Serving {
    fn guest(pool: Arc<Pool>, target: &str) -> Option<Serving> {
        let index = pool.guest().target_index(target)?;
        let prefix = format!("target `{target}` (guest {}): ", pool.guest().file_name());
        Some(Serving::Guest {
            pool,
            index,
            prefix,
        })
    }
}

impl GuestHandler {
    /// A handler for `target` (which the pool's guest declares).
    pub(crate) fn new(pool: Arc<Pool>, target: &str) -> Option<GuestHandler> {
        let serving = Serving::guest(pool, target)?;
        Some(GuestHandler {
            slot: Arc::new(ServedTarget {
                target: target.to_owned(),
                serving: ArcSwap::from_pointee(serving),
                stats: TargetStats::register(target),
            }),
        })
    }

    /// Serves the target from `pool` from the next call on. Returns false
    /// (and changes nothing) if the pool's guest does not declare it.
    pub(crate) fn serve(&self, pool: Arc<Pool>) -> bool {
        match Serving::guest(pool, &self.slot.target) {
            Some(serving) => {
                self.slot.serving.store(Arc::new(serving));
                true
            }
            None => false,
        }
    }

    /// Stops serving the target: from the next call on, calls fail with
    /// `why` (calls already running finish).
    pub(crate) fn retire(&self, why: String) {
        self.slot.serving.store(Arc::new(Serving::Gone(why)));
    }

    /// The target name.
    pub fn target(&self) -> &str {
        &self.slot.target
    }

    /// The guest serving it now, if any.
    pub fn guest(&self) -> Option<Arc<Guest>> {
        match &**self.slot.serving.load() {
            Serving::Guest { pool, .. } => Some(Arc::clone(pool.guest())),
            Serving::Gone(_) => None,
        }
    }

    /// The target's statistics so far (through this handler's slot).
    pub fn stats(&self) -> crate::stats::Snapshot {
        self.slot.stats.snapshot(&self.slot.target)
    }

    /// Instances of the serving guest alive now (idle or busy).
    pub fn live_instances(&self) -> usize {
        match &**self.slot.serving.load() {
            Serving::Guest { pool, .. } => pool.live(),
            Serving::Gone(_) => 0,
        }
    }

    /// Runs the target on a host-owned call (no XLA involved); results are
    /// written into `call`'s result buffers.
    ///
    /// # Errors
    ///
    /// As from XLA: the guest's error, a trap, a deadline or a limit, named.
    pub fn call_host(&self, call: &HostCall) -> Result<(), HandlerError> {
        self.run(call, CallInfo::Host)
    }

    fn run<C: CallView>(&self, call: &C, info: CallInfo) -> Result<(), HandlerError> {
        // One load per call: the call keeps this version to its end.
        let serving = self.slot.serving.load();
        let (pool, index, prefix) = match &**serving {
            Serving::Guest {
                pool,
                index,
                prefix,
            } => (pool, *index, prefix.as_str()),
            Serving::Gone(why) => {
                self.slot
                    .stats
                    .record(Ending::Other, &CallMeasure::default());
                let error = HandlerError::new(
                    ErrorCode::Unavailable,
                    format!("target `{}`: {why}", self.slot.target),
                );
                audit::failed_call(&self.slot.target, None, Ending::Other, &error.message);
                return Err(error);
            }
        };
        let stats = &self.slot.stats;
        let prefixed =
            |e: HandlerError| HandlerError::new(e.code, format!("{prefix}{}", e.message));
        let guest = pool.guest().file_name();
        let span = tracing::debug_span!(
            "custom_call",
            target = %self.slot.target,
            guest,
            stage = "execute"
        );
        let _entered = span.enter();
        let mut lease = match pool.take() {
            Ok(lease) => lease,
            Err(e) => {
                let ending = Ending::of_failure(e.code, false, false);
                stats.record(ending, &CallMeasure::default());
                let error = prefixed(e);
                audit::failed_call(
                    &self.slot.target,
                    Some(pool.guest()),
                    ending,
                    &error.message,
                );
                return Err(error);
            }
        };
        if lease.fresh() {
            stats.instances_created(1);
        }
        let outcome = lease
            .instance()
            .call(index, call, info, guest, &self.slot.target);
        let ending = match &outcome {
            Ok(()) => Ending::Ok,
            Err(failure) => failure.ending(),
        };
        stats.record(ending, &lease.instance().measure);
        match outcome {
            Ok(()) => Ok(()),
            Err(failure) => {
                if failure.discard {
                    lease.discard();
                }
                if let Some(sink) = failed_call::sink() {
                    self.record(&sink, call, pool.guest(), &failure.error);
                }
                let error = prefixed(failure.error);
                audit::failed_call(
                    &self.slot.target,
                    Some(pool.guest()),
                    ending,
                    &error.message,
                );
                tracing::debug!(code = %error.code, "{}", error.message);
                Err(error)
            }
        }
    }
}

impl GuestHandler {
    /// Sends the failed `call` to `sink` (a panic in the sink is logged:
    /// the call's own error stands).
    fn record<C: CallView>(&self, sink: &Sink, call: &C, guest: &Guest, error: &HandlerError) {
        let Some(failed_call::Captured {
            operands,
            attrs,
            results,
        }) = failed_call::capture(call)
        else {
            tracing::warn!(target = %self.slot.target, "the failed call could not be read back: not recorded");
            return;
        };
        let failed = FailedCall {
            target: self.slot.target.clone(),
            guest: guest.path().to_owned(),
            guest_sha256: guest.sha256_hex(),
            operands,
            attrs,
            results,
            memory_bytes: guest.limits().memory,
            call_timeout: guest.limits().call_timeout,
            error: error.clone(),
        };
        if catch_unwind(AssertUnwindSafe(|| sink(&failed))).is_err() {
            tracing::error!(target = %self.slot.target, "recording a failed call panicked");
        }
    }
}

impl Handler for GuestHandler {
    fn execute(&self, frame: &CallFrame<'_>) -> Result<(), HandlerError> {
        self.run(frame, CallInfo::Xla(frame.context()))
    }
}

impl std::fmt::Debug for GuestHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuestHandler")
            .field("target", &self.slot.target)
            .field("guest", &self.guest().map(|g| g.path().to_owned()))
            .finish_non_exhaustive()
    }
}
