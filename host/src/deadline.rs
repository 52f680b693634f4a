//! Wall-time deadlines for guest calls.
//!
//! **Epoch interruption**: the engine is built with
//! `epoch_interruption(true)`, which compiles a check into every function
//! entry and loop header; each store gets a deadline in ticks before a
//! call, and one timer thread per [`crate::Engine`] bumps the epoch every
//! [`crate::Limits::tick`]. A guest past its deadline traps with
//! [`wasmtime::Trap::Interrupt`]. The checks trap in place (a patched
//! Cranelift integration, `vendor/wasmtime-internal-cranelift`; its
//! `CYXLA-PATCH.md` says why that is sound); stock wasmtime's checks
//! call out, which made the register allocator spill around every loop
//! header. Even so they cost time in tight loops (measurements:
//! docs/performance.md, "Deadlines"). (The benches' `Interrupt::Unchecked`,
//! behind the `bench` feature, compiles no checks and arms nothing.)
//!
//! A forked child has none of its parent's threads. A `pthread_atfork`
//! child handler counts forks ([`forks`]); the first guest call in a child
//! starts the timer thread again, so deadlines hold there too. Each call
//! compares one counter for that. If the thread cannot start, the call
//! runs without a deadline and says so in the log; the next call tries
//! again.
//!
//! The timer threads park after [`IDLE_TICKS_BEFORE_PARKING`] ticks
//! without guest code, so an idle process does not wake up every tick, and
//! a busy one does not wake a thread for every call. Everything outside this module only calls
//! [`Ticker::enter`] around guest code.
//!
//! Epochs do not stop host code, nor a bulk memory instruction
//! (`memory.fill`, `memory.copy`, ...: wasmtime's own code) before it ends.
//! So [`Ticker::enter`] also records the deadline of the guest code running
//! on this thread, and host code asks [`overdue`]: the functions of module
//! `cyxla` on entry, and host functions that can work long (`random_get`,
//! `poll_oneoff`, output streams) as they go, so that a guest asking one
//! host call for a lot of work stops within its deadline plus one bounded
//! step. A guest looping in host calls or bulk memory instructions stops at
//! the check of its next loop header or function entry. Engines set no call
//! hook: entering and leaving guest code through one costs time on every
//! call (docs/performance.md, "Deadlines").

pub(crate) use crate::limits::Interrupt;

use std::cell::Cell;
use std::ptr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Where a module's compiled code lies, for the fault handler
/// ([`crate::faults`]): a fault there is a guest's.
#[derive(Debug, Default)]
pub(crate) struct CodeRanges {
    /// The module's whole text (bodies and trampolines): start and end.
    text: (usize, usize),
}

impl CodeRanges {
    /// The code of `module`.
    pub(crate) fn of(module: &wasmtime::Module) -> CodeRanges {
        let base = module.text().as_ptr() as usize;
        CodeRanges {
            text: (base, base + module.text().len()),
        }
    }

    /// The module's whole text: start and end addresses.
    pub(crate) fn text(&self) -> (usize, usize) {
        self.text
    }
}

thread_local! {
    /// The deadline of the guest code running on this thread (the earliest,
    /// if calls nest), for host code to check.
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Whether the guest code running on this thread is past its deadline.
/// Host functions check this: epochs do not stop host code.
pub(crate) fn overdue() -> bool {
    DEADLINE
        .with(Cell::get)
        .is_some_and(|at| Instant::now() >= at)
}

/// The trap a host function returns when the guest that called it is past
/// its deadline (reported as DEADLINE_EXCEEDED).
pub(crate) fn check() -> wasmtime::Result<()> {
    if overdue() {
        return Err(wasmtime::Trap::Interrupt.into());
    }
    Ok(())
}

impl Interrupt {
    /// The mechanism an engine gets: `Auto` becomes `Epoch`.
    pub(crate) fn resolve(self) -> Interrupt {
        match self {
            Interrupt::Auto => Interrupt::Epoch,
            other => other,
        }
    }
}

/// Forks of this process that this process is a child of (counted by a
/// `pthread_atfork` child handler, [`count_forks`]): threads started in an
/// earlier generation exist only in the parent.
static FORKS: AtomicU64 = AtomicU64::new(0);

/// The fork generation of this process (see [`FORKS`]).
#[inline]
pub(crate) fn forks() -> u64 {
    FORKS.load(Ordering::Acquire)
}

/// Starts counting forks (once per process): the deadline threads restart
/// in a forked child, which has none of its parent's threads.
pub(crate) fn count_forks() {
    extern "C" fn forked() {
        FORKS.fetch_add(1, Ordering::AcqRel);
    }
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: `forked` only increments an atomic (async-signal-safe, as
        // a handler running in the child of a multithreaded fork must be).
        let failed = unsafe { libc::pthread_atfork(None, None, Some(forked)) };
        if failed != 0 {
            tracing::warn!(
                "pthread_atfork failed ({failed}): in a forked child, guests would run without deadlines"
            );
        }
    });
}

/// A lock taken once per fork generation at most, around restarting a
/// deadline thread in a forked child: 0 when free, else the generation
/// (plus one) of its holder. A holder of an earlier generation exists only
/// in the parent, so the lock is free here.
pub(crate) struct ForkLock(AtomicU64);

impl ForkLock {
    pub(crate) const fn new() -> ForkLock {
        ForkLock(AtomicU64::new(0))
    }

    /// Runs `f` holding the lock.
    pub(crate) fn with<R>(&self, f: impl FnOnce() -> R) -> R {
        let mine = forks() + 1;
        loop {
            let held = self.0.load(Ordering::Acquire);
            if held == mine {
                thread::yield_now();
                continue;
            }
            if self
                .0
                .compare_exchange(held, mine, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                break;
            }
        }
        let result = f();
        self.0.store(0, Ordering::Release);
        result
    }
}

/// The deadline mechanism of one engine (and its timer thread, for
/// epochs).
pub(crate) struct Ticker {
    shared: Arc<Shared>,
    /// The timer thread (epochs only; null otherwise). Replaced, never
    /// freed while the ticker lives, when a forked child restarts it: the
    /// one before stays leaked (it belongs to the parent).
    timer: AtomicPtr<Timer>,
    /// The fork generation of the timer thread in `timer`.
    timer_forks: AtomicU64,
    restart: ForkLock,
    engine: wasmtime::EngineWeak,
    tick: Duration,
    mode: Interrupt,
}

/// A timer thread.
struct Timer {
    thread: thread::Thread,
    join: Option<JoinHandle<()>>,
    /// The fork generation it runs in.
    forks: u64,
}
struct Shared {
    /// Guest calls running now.
    active: AtomicUsize,
    /// Set when the engine goes away.
    stop: AtomicBool,
    /// The timer thread is parked (or about to park): `enter` must wake it.
    parked: AtomicBool,
    /// When the next tick is due, in nanoseconds since `origin` (`u64::MAX`
    /// while parked): ticks due but not yet applied are added to a new
    /// deadline, so that a late timer thread cannot cut a call short.
    next_tick: AtomicU64,
    origin: std::time::Instant,
    tick_nanos: u64,
}

impl Shared {
    fn nanos(&self, at: std::time::Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.origin).as_nanos()).unwrap_or(u64::MAX - 1)
    }

    /// Ticks that are due but that the timer thread has not applied yet.
    fn pending_ticks(&self, now: std::time::Instant) -> u64 {
        let next = self.next_tick.load(Ordering::Acquire);
        let now = self.nanos(now);
        if next == u64::MAX || now < next {
            0
        } else {
            (now - next) / self.tick_nanos.max(1) + 1
        }
    }
}

/// Idle ticks before a timer thread parks. While calls keep coming it keeps
/// ticking, so a call does not pay for waking it (a futex wake-up, and on a
/// busy machine a scheduling delay: measured ~0.4 ms per call).
pub(crate) const IDLE_TICKS_BEFORE_PARKING: u32 = 100;

impl Ticker {
    /// Starts the deadline mechanism `mode` (already resolved) for
    /// `engine`: for epochs, a timer thread ticking every `tick`.
    ///
    /// # Errors
    ///
    /// When the OS cannot start a thread.
    pub(crate) fn start(
        engine: &wasmtime::Engine,
        tick: Duration,
        mode: Interrupt,
    ) -> std::io::Result<Ticker> {
        let shared = Arc::new(Shared {
            active: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            parked: AtomicBool::new(false),
            next_tick: AtomicU64::new(u64::MAX),
            origin: std::time::Instant::now(),
            tick_nanos: u64::try_from(tick.max(Duration::from_micros(100)).as_nanos())
                .unwrap_or(u64::MAX),
        });
        let tick = tick.max(Duration::from_micros(100));
        let mut ticker = Ticker {
            shared,
            timer: AtomicPtr::new(ptr::null_mut()),
            timer_forks: AtomicU64::new(forks()),
            restart: ForkLock::new(),
            engine: engine.weak(),
            tick,
            mode,
        };
        if mode == Interrupt::Epoch {
            count_forks();
            let timer = ticker.spawn_timer()?;
            *ticker.timer.get_mut() = Box::into_raw(Box::new(timer));
        }
        Ok(ticker)
    }

    /// Starts a timer thread for this ticker.
    fn spawn_timer(&self) -> std::io::Result<Timer> {
        let weak = self.engine.clone();
        let tick = self.tick;
        let thread_shared = Arc::clone(&self.shared);
        let join = thread::Builder::new()
            .name("cyxla-epoch".into())
            .spawn(move || {
                let shared = thread_shared;
                let mut idle = 0u32;
                // Ticks follow the wall clock: a late wake-up (a loaded
                // machine) catches up on the ticks it missed, so deadlines
                // do not drift by the scheduling latency of every tick.
                let mut next = std::time::Instant::now() + tick;
                shared
                    .next_tick
                    .store(shared.nanos(next), Ordering::Release);
                loop {
                    if shared.stop.load(Ordering::Acquire) {
                        return;
                    }
                    if shared.active.load(Ordering::SeqCst) == 0 {
                        idle += 1;
                        if idle > IDLE_TICKS_BEFORE_PARKING {
                            // `enter` increments `active`, then reads
                            // `parked`: either it sees the flag and unparks
                            // us, or we see its call here and stay awake.
                            shared.parked.store(true, Ordering::SeqCst);
                            shared.next_tick.store(u64::MAX, Ordering::Release);
                            if shared.active.load(Ordering::SeqCst) == 0 {
                                // A stale unpark token only costs a round.
                                thread::park();
                            }
                            shared.parked.store(false, Ordering::SeqCst);
                            idle = 0;
                            next = std::time::Instant::now() + tick;
                            shared
                                .next_tick
                                .store(shared.nanos(next), Ordering::Release);
                            continue;
                        }
                    } else {
                        idle = 0;
                    }
                    thread::sleep(next.saturating_duration_since(std::time::Instant::now()));
                    let Some(engine) = weak.upgrade() else {
                        return;
                    };
                    let now = std::time::Instant::now();
                    // A fault handler installed while calls run goes
                    // behind cyxla's within a tick (see `crate::faults`).
                    crate::faults::poll(now);
                    while next <= now {
                        engine.increment_epoch();
                        next += tick;
                    }
                    shared
                        .next_tick
                        .store(shared.nanos(next), Ordering::Release);
                }
            })?;
        Ok(Timer {
            thread: join.thread().clone(),
            join: Some(join),
            forks: forks(),
        })
    }

    /// In a forked child (the parent's timer thread does not exist here):
    /// starts a timer thread of its own. If the thread cannot start, the
    /// call runs without an epoch deadline (logged), and the next call
    /// tries again.
    #[cold]
    #[inline(never)]
    fn restart_after_fork(&self) {
        self.restart.with(|| {
            let now = forks();
            if self.timer_forks.load(Ordering::Acquire) == now {
                return;
            }
            // Calls running in the parent's other threads at the fork never
            // end here; this thread counts its own from now on.
            self.shared.active.store(0, Ordering::SeqCst);
            self.shared.parked.store(false, Ordering::SeqCst);
            self.shared.next_tick.store(u64::MAX, Ordering::Release);
            match self.spawn_timer() {
                Ok(timer) => {
                    // The parent's timer stays allocated (leaked): its
                    // thread is not here to be joined.
                    self.timer
                        .store(Box::into_raw(Box::new(timer)), Ordering::Release);
                    self.timer_forks.store(now, Ordering::Release);
                    tracing::debug!("deadline timer thread restarted in a forked child");
                }
                Err(e) => tracing::error!(
                    "cannot start the deadline timer thread in this forked child ({e}): this call runs without a deadline"
                ),
            }
        });
    }

    /// The mechanism in use.
    pub(crate) fn mode(&self) -> Interrupt {
        self.mode
    }

    /// Arms a deadline of `timeout` (`ticks` timer ticks, for epochs) for
    /// the guest code in `code` that runs in `store` until the guard is
    /// dropped.
    pub(crate) fn enter<'a, T>(
        &'a self,
        store: &mut wasmtime::Store<T>,
        timeout: Duration,
        ticks: u64,
        code: &'a CodeRanges,
    ) -> Active<'a> {
        // One clock read serves the epoch deadline and the host-call one.
        let now = self.mode.checked().then(Instant::now);
        let at = now.and_then(|now| now.checked_add(timeout));
        if self.mode == Interrupt::Epoch {
            let pending = now.map_or(0, |now| self.shared.pending_ticks(now));
            store.set_epoch_deadline(ticks.saturating_add(pending));
        }
        if let Some(now) = now {
            crate::faults::poll(now);
        }
        let outer_text = crate::faults::enter_guest(code.text());
        let outer = DEADLINE.with(Cell::get);
        if self.mode.checked() {
            let earliest = match (outer, at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            DEADLINE.with(|d| d.set(earliest));
        }
        if self.mode == Interrupt::Epoch && self.timer_forks.load(Ordering::Relaxed) != forks() {
            self.restart_after_fork();
        }
        if self.shared.active.fetch_add(1, Ordering::SeqCst) == 0
            && self.shared.parked.load(Ordering::SeqCst)
        {
            let timer = self.timer.load(Ordering::Acquire);
            if !timer.is_null() {
                // SAFETY: a timer is freed only when the ticker is dropped
                // (`&self` is borrowed here).
                unsafe { (*timer).thread.unpark() };
            }
        }
        Active {
            ticker: self,
            outer,
            outer_text,
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        let timer = std::mem::replace(self.timer.get_mut(), ptr::null_mut());
        if timer.is_null() {
            return;
        }
        // SAFETY: `timer` came from `Box::into_raw` and nothing else frees
        // it; no `enter` can run any more (`&mut self`).
        let mut timer = unsafe { Box::from_raw(timer) };
        timer.thread.unpark();
        if let Some(join) = timer.join.take() {
            if timer.forks == forks() {
                // The thread exits within one tick; nothing to report if
                // it panicked (it cannot: it only sleeps and bumps a
                // counter).
                let _ = join.join();
            } else {
                // A thread of the parent (no restart happened in this
                // child): not here to be joined or detached.
                std::mem::forget(join);
            }
        }
    }
}

/// Guest code is running (see [`Ticker::enter`]).
pub(crate) struct Active<'a> {
    ticker: &'a Ticker,
    /// This thread's deadline before [`Ticker::enter`], restored on drop.
    outer: Option<Instant>,
    /// The guest code running on this thread before [`Ticker::enter`]
    /// (for the fault handler), restored on drop.
    outer_text: (usize, usize),
}

impl Drop for Active<'_> {
    fn drop(&mut self) {
        DEADLINE.with(|d| d.set(self.outer));
        crate::faults::leave_guest(self.outer_text);
        self.ticker.shared.active.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_only_while_active() {
        let mut config = wasmtime::Config::new();
        config.epoch_interruption(true);
        let engine = wasmtime::Engine::new(&config).unwrap();
        let ticker = Ticker::start(&engine, Duration::from_millis(1), Interrupt::Epoch).unwrap();
        let module =
            wasmtime::Module::new(&engine, "(module (func (export \"f\") (loop br 0)))").unwrap();
        let mut store = wasmtime::Store::new(&engine, ());
        let instance = wasmtime::Instance::new(&mut store, &module, &[]).unwrap();
        let f = instance.get_typed_func::<(), ()>(&mut store, "f").unwrap();
        let code = CodeRanges::of(&module);
        let error = {
            let _active = ticker.enter(&mut store, Duration::from_millis(5), 5, &code);
            f.call(&mut store, ()).unwrap_err()
        };
        assert_eq!(
            error.downcast_ref::<wasmtime::Trap>(),
            Some(&wasmtime::Trap::Interrupt)
        );
        drop(ticker);
    }
}
