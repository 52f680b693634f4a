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
use std::time::Duration;

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

/// The deadline of guest code, for host code: when the tick counter of the
/// engine's ticker reaches `at`.
#[derive(Clone, Copy)]
struct Deadline {
    /// [`Shared::ticks`] of the ticker that armed it (valid while its
    /// [`Active`] lives: the ticker is borrowed for that long).
    ticks: *const AtomicU64,
    at: u64,
}

thread_local! {
    /// The deadline of the guest code running on this thread (the earliest,
    /// if calls of one engine nest), for host code to check.
    static DEADLINE: Cell<Option<Deadline>> = const { Cell::new(None) };
}

/// Whether the guest code running on this thread is past its deadline.
/// Host functions check this: epochs do not stop host code. One atomic
/// load: no clock is read.
pub(crate) fn overdue() -> bool {
    DEADLINE.with(Cell::get).is_some_and(|d| {
        // SAFETY: the deadline is this thread's and set only while the
        // `Active` guard that armed it lives, which borrows the ticker whose
        // counter this is (`Ticker::enter`; the guard restores the outer
        // deadline when it drops).
        unsafe { &*d.ticks }.load(Ordering::Acquire) >= d.at
    })
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
    /// Ticks applied so far: the engine's epoch as this ticker advanced it,
    /// for host code's deadline checks ([`overdue`]).
    ticks: AtomicU64,
    /// `ticks` when a call last checked the fault handlers (`u64::MAX`:
    /// never): a call checks them at most once a tick.
    faults_checked: AtomicU64,
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
            ticks: AtomicU64::new(0),
            faults_checked: AtomicU64::new(u64::MAX),
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
                // Ticks follow a grid of period `tick` on the wall clock
                // (a wake-up a little late does not delay the ticks after
                // it), one tick per wake-up: a wake-up late by a whole tick
                // or more (a loaded machine) skips the ticks it missed and
                // starts the grid again, so that no burst of ticks cuts a
                // deadline short (see `enter`).
                let mut next = std::time::Instant::now() + tick;
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
                            if shared.active.load(Ordering::SeqCst) == 0 {
                                // A stale unpark token only costs a round.
                                thread::park();
                            }
                            shared.parked.store(false, Ordering::SeqCst);
                            idle = 0;
                            next = std::time::Instant::now() + tick;
                            continue;
                        }
                    } else {
                        idle = 0;
                    }
                    thread::sleep(next.saturating_duration_since(std::time::Instant::now()));
                    let Some(engine) = weak.upgrade() else {
                        return;
                    };
                    // A fault handler installed while calls run goes
                    // behind cyxla's within a tick (see `crate::faults`).
                    let now = std::time::Instant::now();
                    crate::faults::poll(now);
                    engine.increment_epoch();
                    shared.ticks.fetch_add(1, Ordering::AcqRel);
                    next += tick;
                    if next <= now {
                        next = now + tick;
                    }
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

    /// Arms a deadline of `ticks` timer ticks for the guest code in `code`
    /// that runs in `store` until the guard is dropped.
    ///
    /// No clock is read. The deadline is the `ticks`-th tick of this
    /// ticker's timer from now, for the guest's epoch checks and for host
    /// code ([`overdue`]) alike. The timer applies one tick per wake-up on a
    /// grid of period `tick`, and skips the grid points a late wake-up
    /// missed by a whole tick. So the guest gets at least `ticks - 2` whole
    /// ticks: the first tick may come at once, and the second less than a
    /// tick later when the first was a late one
    /// ([`crate::Limits::deadline_ticks`] counts two more). A timer thread
    /// that runs late lengthens a deadline, never shortens it.
    pub(crate) fn enter<'a, T>(
        &'a self,
        store: &mut wasmtime::Store<T>,
        ticks: u64,
        code: &'a CodeRanges,
    ) -> Active<'a> {
        let checked = self.mode.checked();
        if checked {
            store.set_epoch_deadline(ticks);
        }
        let outer_text = crate::faults::enter_guest(code.text());
        let outer = DEADLINE.with(Cell::get);
        if checked {
            let counter = &self.shared.ticks;
            let now = counter.load(Ordering::Acquire);
            let mine = Deadline {
                ticks: counter,
                at: now.saturating_add(ticks),
            };
            // Calls of another engine count another timer's ticks: the
            // innermost call's deadline holds (the outer guest's own
            // epoch checks still stop it when it runs again).
            let earliest = match outer {
                Some(o) if ptr::eq(o.ticks, counter) && o.at < mine.at => o,
                _ => mine,
            };
            DEADLINE.with(|d| d.set(Some(earliest)));
            // A fault handler installed since the last tick goes behind
            // cyxla's before guest code runs (the timer checks every tick
            // too; see `crate::faults`).
            // A load on every call, a store once a tick: calls on other
            // threads share this line.
            let checked_at = &self.shared.faults_checked;
            if checked_at.load(Ordering::Relaxed) != now {
                checked_at.store(now, Ordering::Relaxed);
                crate::faults::check();
            }
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
            // No tick came while the timer was parked: check now.
            crate::faults::check();
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
    outer: Option<Deadline>,
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

    /// A guest function that loops forever, on an engine with a ticker.
    struct Looping {
        ticker: Ticker,
        store: wasmtime::Store<()>,
        f: wasmtime::TypedFunc<(), ()>,
        code: CodeRanges,
    }

    fn looping(tick: Duration) -> Looping {
        let mut config = wasmtime::Config::new();
        config.epoch_interruption(true);
        let engine = wasmtime::Engine::new(&config).unwrap();
        let ticker = Ticker::start(&engine, tick, Interrupt::Epoch).unwrap();
        let module =
            wasmtime::Module::new(&engine, "(module (func (export \"f\") (loop br 0)))").unwrap();
        let mut store = wasmtime::Store::new(&engine, ());
        let instance = wasmtime::Instance::new(&mut store, &module, &[]).unwrap();
        let f = instance.get_typed_func::<(), ()>(&mut store, "f").unwrap();
        let code = CodeRanges::of(&module);
        Looping {
            ticker,
            store,
            f,
            code,
        }
    }

    #[test]
    fn ticks_only_while_active() {
        let Looping {
            ticker,
            mut store,
            f,
            code,
        } = looping(Duration::from_millis(1));
        let error = {
            let _active = ticker.enter(&mut store, 5, &code);
            f.call(&mut store, ()).unwrap_err()
        };
        assert_eq!(
            error.downcast_ref::<wasmtime::Trap>(),
            Some(&wasmtime::Trap::Interrupt)
        );
        drop(ticker);
    }

    /// A deadline of `n` ticks gives guest code and host code at least
    /// `n - 2` whole ticks, wherever in a tick it is armed, and however the
    /// timer thread is scheduled (late ticks only lengthen it).
    #[test]
    fn a_deadline_is_never_cut_short() {
        const TICK: Duration = Duration::from_millis(2);
        const N: u64 = 6;
        let Looping {
            ticker,
            mut store,
            f,
            code,
        } = looping(TICK);
        let least = TICK * u32::try_from(N - 2).unwrap();
        for round in 0..40u32 {
            // Arm at different points of a tick.
            std::thread::sleep(TICK * (round % 4) / 4);
            let started = std::time::Instant::now();
            let error = {
                let _active = ticker.enter(&mut store, N, &code);
                f.call(&mut store, ()).unwrap_err()
            };
            let guest = started.elapsed();
            assert_eq!(
                error.downcast_ref::<wasmtime::Trap>(),
                Some(&wasmtime::Trap::Interrupt)
            );
            assert!(
                guest >= least,
                "round {round}: the guest was stopped after {guest:?}, before {least:?}"
            );

            // Host code: overdue only from the same tick on.
            let started = std::time::Instant::now();
            let _active = ticker.enter(&mut store, N, &code);
            while !overdue() {
                assert!(
                    started.elapsed() < Duration::from_secs(60),
                    "round {round}: never overdue"
                );
                std::thread::yield_now();
            }
            let host = started.elapsed();
            assert!(
                host >= least,
                "round {round}: host code was overdue after {host:?}, before {least:?}"
            );
        }
        assert!(!overdue(), "the deadline outlived its guard");
    }
}
