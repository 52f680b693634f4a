//! [`GuestHandler`]: the [`plugin_glue::Handler`] that runs one target in
//! its guest's sandbox.
//!
//! The guest behind a handler can change while the handler stays registered
//! with XLA (hot reload, [`crate::Sandbox::reload`]): a handler holds what
//! serves it now behind an atomic pointer ([`ServingSlot`]), and each call
//! takes that pointer once, so a call finishes on the version it started
//! with.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockWriteGuard};

use plugin_glue::frame::{CallFrame, LazyFrame};
use plugin_glue::{ErrorCode, Handler, HandlerError};

use crate::call::HostCall;
use crate::failed_call::{self, FailedCall, Sink};
use crate::guest::Guest;
use crate::layout::CallView;
use crate::pool::Pool;
use crate::state::CallInfo;
use crate::stats::{CallMeasure, Ending, TargetStats};
use crate::{audit, deadline, stats};

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
    serving: ServingSlot,
    /// The target's counters, kept across reloads.
    stats: Arc<TargetStats>,
}

/// What serves a target: replaced by reloads while calls run, and read by
/// every call without a locked instruction (the `arc_swap` it replaces took
/// two: docs/performance.md, "Instructions per call").
///
/// The slot owns one count of the current `Arc<Serving>`, as a raw
/// pointer. A call marks the pointer it takes in its thread's entry of
/// [`MARKS`] (a hazard pointer), then looks at the slot again: if the slot
/// still holds it, it is not freed before the call clears its mark. A
/// replacement moves the slot's count of the old one to `retired`, then
/// frees each retired one that no mark holds, after a
/// [`deadline::heavy_barrier`] (`membarrier`, as the deadlines' handshake
/// uses it): a mark stored before the barrier is seen by the scan after
/// it, and a call that marks after the barrier sees the replacement when
/// it looks again (its [`deadline::light_barrier`] orders the mark before
/// that look), so it marks that instead. The last call that held a
/// retired one frees it when it ends. A thread without an index
/// ([`stats::thread_index`]) and a call within another call on the same
/// thread count a reference instead, under a read lock that replacements
/// wait for (a read lock, so that the threads past the index's count do
/// not wait for each other). Where `membarrier` is refused, replaced
/// servings are freed only with the slot.
struct ServingSlot {
    current: AtomicPtr<Serving>,
    /// Servings replaced and maybe still in use. Written to replace the
    /// current one and to free retired ones; read to count a reference to
    /// the current one.
    retired: RwLock<Vec<Arc<Serving>>>,
}

/// A thread's mark: the serving its call uses, or null. One cache line
/// each, as every call writes its own.
#[repr(align(64))]
struct Mark(AtomicPtr<Serving>);

/// The marks, by [`stats::thread_index`].
static MARKS: [Mark; stats::SHARDS] =
    [const { Mark(AtomicPtr::new(ptr::null_mut())) }; stats::SHARDS];

impl ServingSlot {
    fn new(serving: Serving) -> ServingSlot {
        ServingSlot {
            current: AtomicPtr::new(Arc::into_raw(Arc::new(serving)).cast_mut()),
            retired: RwLock::new(Vec::new()),
        }
    }

    fn lock(&self) -> RwLockWriteGuard<'_, Vec<Arc<Serving>>> {
        // A panic while the lock was held left the list valid.
        self.retired.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The serving now, held until the guard drops.
    #[inline]
    fn hold(&self) -> Held<'_> {
        if let Some(index) = stats::thread_index() {
            let mark = &MARKS[index].0;
            // Null unless a call on this thread is using a serving already
            // (a call within a call): that one keeps its mark.
            if mark.load(Ordering::Relaxed).is_null() {
                let mut serving = self.current.load(Ordering::Acquire);
                loop {
                    mark.store(serving, Ordering::Relaxed);
                    deadline::light_barrier();
                    let now = self.current.load(Ordering::Acquire);
                    if now == serving {
                        break;
                    }
                    serving = now;
                }
                // SAFETY: the slot held `serving` (from `Arc::into_raw`, the
                // slot's count) after this thread's mark of it, ordered
                // before that look against a replacement's heavy barrier:
                // the replacement's scan sees the mark, and no one frees it
                // until the mark is cleared (`Held::drop`).
                let serving = unsafe { &*serving };
                return Held::Marked {
                    serving,
                    mark,
                    slot: self,
                };
            }
        }
        self.hold_counted()
    }

    /// [`ServingSlot::hold`] by a count of its own.
    #[cold]
    #[inline(never)]
    fn hold_counted(&self) -> Held<'_> {
        let _not_replacing = self.retired.read().unwrap_or_else(PoisonError::into_inner);
        let serving = self.current.load(Ordering::Acquire);
        // SAFETY: `serving` came from `Arc::into_raw` and the slot owns that
        // count; the read lock keeps it from being replaced (and so from
        // being retired and freed) while the count goes up.
        Held::Counted(unsafe {
            Arc::increment_strong_count(serving);
            Arc::from_raw(serving)
        })
    }

    /// Serves from `serving` from the next call on; calls running finish
    /// on what they hold.
    fn replace(&self, serving: Serving) {
        let mut retired = self.lock();
        let new = Arc::into_raw(Arc::new(serving)).cast_mut();
        let old = self.current.swap(new, Ordering::AcqRel);
        // SAFETY: the slot's count of `old` (from `Arc::into_raw`), which
        // the swap took out of the slot: the list owns it now.
        retired.push(unsafe { Arc::from_raw(old) });
        free_unmarked(&mut retired);
    }

    /// Frees what was retired and is no longer marked, after a call that
    /// held a retired serving ended.
    #[cold]
    #[inline(never)]
    fn free_retired(&self) {
        free_unmarked(&mut self.lock());
    }
}

/// Drops the servings of `retired` that no thread marks (see
/// [`ServingSlot`]); all of them stay if the barrier could not be made.
fn free_unmarked(retired: &mut Vec<Arc<Serving>>) {
    if retired.is_empty() || !deadline::heavy_barrier() {
        return;
    }
    retired.retain(|serving| {
        let serving = Arc::as_ptr(serving).cast_mut();
        MARKS
            .iter()
            .any(|mark| mark.0.load(Ordering::Acquire) == serving)
    });
}

impl Drop for ServingSlot {
    fn drop(&mut self) {
        let current = *self.current.get_mut();
        // SAFETY: the slot's count (from `Arc::into_raw`); `&mut self`:
        // no call holds it by a mark (a mark borrows the slot).
        drop(unsafe { Arc::from_raw(current) });
    }
}

/// The serving a call uses, from its start to its end.
enum Held<'s> {
    /// Kept alive by this thread's mark, cleared on drop.
    Marked {
        serving: &'s Serving,
        mark: &'static AtomicPtr<Serving>,
        slot: &'s ServingSlot,
    },
    /// Kept alive by a count of its own.
    Counted(Arc<Serving>),
}

impl std::ops::Deref for Held<'_> {
    type Target = Serving;

    fn deref(&self) -> &Serving {
        match self {
            Held::Marked { serving, .. } => serving,
            Held::Counted(serving) => serving,
        }
    }
}

impl Drop for Held<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Held::Marked {
            serving,
            mark,
            slot,
        } = self
        {
            mark.store(ptr::null_mut(), Ordering::Release);
            // Replaced while this call used it: free it if no other call
            // still does.
            if !ptr::eq(slot.current.load(Ordering::Relaxed), *serving) {
                slot.free_retired();
            }
        }
    }
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
                serving: ServingSlot::new(serving),
                stats: TargetStats::register(target),
            }),
        })
    }

    /// Serves the target from `pool` from the next call on. Returns false
    /// (and changes nothing) if the pool's guest does not declare it.
    pub(crate) fn serve(&self, pool: Arc<Pool>) -> bool {
        match Serving::guest(pool, &self.slot.target) {
            Some(serving) => {
                self.slot.serving.replace(serving);
                true
            }
            None => false,
        }
    }

    /// Stops serving the target: from the next call on, calls fail with
    /// `why` (calls already running finish).
    pub(crate) fn retire(&self, why: String) {
        self.slot.serving.replace(Serving::Gone(why));
    }

    /// The target name.
    pub fn target(&self) -> &str {
        &self.slot.target
    }

    /// The guest serving it now, if any.
    pub fn guest(&self) -> Option<Arc<Guest>> {
        match &*self.slot.serving.hold() {
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
        match &*self.slot.serving.hold() {
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
        let serving = self.slot.serving.hold();
        let (pool, index, prefix) = match &*serving {
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

    /// XLA's calls: each buffer checked once, as the layout reads it
    /// (`CallView for LazyFrame` in `layout.rs`).
    fn execute_lazy(&self, frame: &LazyFrame<'_>) -> Result<(), HandlerError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn gone(why: &str) -> Serving {
        Serving::Gone(why.to_owned())
    }

    /// What `held` serves: the reason it names (every serving here is
    /// `Gone`).
    fn why(held: &Held<'_>) -> String {
        match &**held {
            Serving::Gone(why) => why.clone(),
            Serving::Guest { .. } => unreachable!("the tests serve no guest"),
        }
    }

    fn retired(slot: &ServingSlot) -> usize {
        slot.lock().len()
    }

    /// Held by the tests that need this thread's mark, and by the one that
    /// takes every thread index (the indices are the process's: a test
    /// thread finds none while that one runs).
    static INDICES: Mutex<()> = Mutex::new(());

    fn indices() -> std::sync::MutexGuard<'static, ()> {
        INDICES.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[test]
    fn a_replaced_serving_lives_until_the_call_that_holds_it_ends() {
        let _indices = indices();
        let slot = &ServingSlot::new(gone("v1"));
        std::thread::scope(|scope| {
            let (held_tx, held_rx) = std::sync::mpsc::channel();
            let (replaced_tx, replaced_rx) = std::sync::mpsc::channel::<()>();
            let caller = scope.spawn(move || {
                let held = slot.hold();
                assert!(
                    matches!(held, Held::Marked { .. }),
                    "a thread with an index marks"
                );
                held_tx.send(()).unwrap();
                replaced_rx.recv().unwrap();
                // Replaced meanwhile: still the version the call took.
                let seen = why(&held);
                drop(held);
                seen
            });
            held_rx.recv().unwrap();
            slot.replace(gone("v2"));
            assert_eq!(retired(slot), 1, "v1 is marked by the running call: kept");
            assert_eq!(why(&slot.hold()), "v2");
            replaced_tx.send(()).unwrap();
            assert_eq!(caller.join().unwrap(), "v1");
        });
        assert_eq!(
            retired(slot),
            0,
            "the call that held v1 frees it when it ends (membarrier must be available)"
        );
        slot.replace(gone("v3"));
        assert_eq!(retired(slot), 0, "nothing holds v2: freed at once");
    }

    #[test]
    fn a_call_within_a_call_counts_a_reference() {
        let _indices = indices();
        let slot = ServingSlot::new(gone("v1"));
        let outer = slot.hold();
        let inner = slot.hold();
        assert!(matches!(outer, Held::Marked { .. }));
        assert!(
            matches!(inner, Held::Counted(_)),
            "the thread's mark is taken"
        );
        slot.replace(gone("v2"));
        assert_eq!((why(&outer), why(&inner)), ("v1".into(), "v1".into()));
        drop(inner);
        assert_eq!(retired(&slot), 1, "still marked by the outer call");
        drop(outer);
        assert_eq!(retired(&slot), 0);
        assert_eq!(why(&slot.hold()), "v2");
    }

    #[test]
    fn threads_past_the_marks_count_references() {
        let _indices = indices();
        const THREADS: usize = stats::SHARDS + 8;
        let slot = &ServingSlot::new(gone("v1"));
        let all_hold = &std::sync::Barrier::new(THREADS + 1);
        let replaced = &std::sync::Barrier::new(THREADS + 1);
        let counted = std::thread::scope(|scope| {
            let callers: Vec<_> = (0..THREADS)
                .map(|_| {
                    scope.spawn(move || {
                        let held = slot.hold();
                        let counted = matches!(held, Held::Counted(_));
                        all_hold.wait();
                        replaced.wait();
                        assert_eq!(why(&held), "v1");
                        counted
                    })
                })
                .collect();
            all_hold.wait();
            slot.replace(gone("v2"));
            replaced.wait();
            callers
                .into_iter()
                .map(|caller| caller.join().unwrap())
                .filter(|&counted| counted)
                .count()
        });
        assert!(counted >= 8, "{counted} of {THREADS} threads counted");
        slot.free_retired();
        assert_eq!(retired(slot), 0);
        assert_eq!(why(&slot.hold()), "v2");
    }

    #[test]
    fn calls_on_many_threads_see_whole_servings_while_they_are_replaced() {
        const REPLACEMENTS: usize = 2_000;
        const CALLERS: usize = 4;
        let slot = &ServingSlot::new(gone("v0"));
        let started = &std::sync::Barrier::new(CALLERS + 1);
        std::thread::scope(|scope| {
            let callers: Vec<_> = (0..CALLERS)
                .map(|_| {
                    scope.spawn(move || {
                        started.wait();
                        // Until the last version comes into view, however
                        // the threads are scheduled.
                        let mut last = 0;
                        while last < REPLACEMENTS {
                            let held = slot.hold();
                            let version: usize = why(&held)[1..].parse().unwrap();
                            // Never older than a version this thread saw.
                            assert!(version >= last, "v{version} after v{last}");
                            last = version;
                        }
                    })
                })
                .collect();
            started.wait();
            for version in 1..=REPLACEMENTS {
                slot.replace(gone(&format!("v{version}")));
            }
            for caller in callers {
                caller.join().unwrap();
            }
        });
        slot.free_retired();
        assert_eq!(
            retired(slot),
            0,
            "every replaced serving is freed once no call holds it"
        );
        assert_eq!(why(&slot.hold()), format!("v{REPLACEMENTS}"));
    }
}
