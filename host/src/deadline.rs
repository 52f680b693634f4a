//! Wall-time deadlines for guest calls.
//!
//! **Poll pages**: the engine is built with `epoch_interruption(true)`,
//! which, through the patched Cranelift integration
//! (`vendor/wasmtime-internal-cranelift`), compiles into every function
//! entry and loop header one load of a byte from the store's *poll page*
//! (its address is kept in the store's epoch-deadline field: the engine's
//! epoch never moves). Each store gets its page from [`Ticker::poll`]. One
//! timer thread per [`crate::Engine`] counts ticks of
//! [`crate::Limits::tick`]; when a call's deadline tick comes, it protects
//! that call's page (`mprotect`, no access), and the guest's next check
//! faults, at an instruction whose trap metadata says `Trap::Interrupt`:
//! the same path as any out-of-bounds access, so a guest past its deadline
//! traps with [`wasmtime::Trap::Interrupt`]. (wasmtime's runtime,
//! `vendor/wasmtime`, is patched to accept that fault outside any linear
//! memory; both `CYXLA-PATCH.md` files say why that is sound.) The call's
//! end unprotects the page of a call that was stopped. A check is one load:
//! no compare, no branch, no call, one register held (measurements:
//! docs/performance.md, "Deadlines"). A store whose page was never set
//! traps at its first check (a load from address 0): deadlines fail
//! closed. (The benches' `Interrupt::Unchecked`, behind the `bench`
//! feature, compiles no checks and arms nothing.)
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
//! Checks do not stop host code, nor a bulk memory instruction
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
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicU64, Ordering};
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
/// Host functions check this: guest checks do not stop host code. One atomic
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
    /// The mechanism an engine gets: `Auto` becomes `Poll`.
    pub(crate) fn resolve(self) -> Interrupt {
        match self {
            Interrupt::Auto => Interrupt::Poll,
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

/// The deadline mechanism of one engine (and its timer thread, for poll
/// pages).
pub(crate) struct Ticker {
    shared: Arc<Shared>,
    /// The timer thread (poll pages only; null otherwise). Replaced, never
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
    /// Set when the engine goes away.
    stop: AtomicBool,
    /// The timer thread is parked (or about to park): `enter` must wake it.
    parked: AtomicBool,
    /// Ticks applied so far, for the calls' deadlines (guest code's, by
    /// their poll pages, and host code's, [`overdue`]).
    ticks: AtomicU64,
    /// `ticks` when a call last checked the fault handlers (`u64::MAX`:
    /// never): a call checks them at most once a tick.
    faults_checked: AtomicU64,
    /// The poll pages of this engine's stores, for the timer to protect.
    pages: Pages,
}

/// [`PollPage::state`] of a page no call has armed.
const IDLE: u64 = 0;
/// [`PollPage::trip`]: the page is readable, the timer is not at it.
const CLEAR: u8 = 0;
/// [`PollPage::trip`]: the timer is deciding whether to protect the page.
const TRIPPING: u8 = 1;
/// [`PollPage::trip`]: the page is protected (the guest's next check traps).
const TRIPPED: u8 = 2;

/// One store's poll page and the deadline armed on it.
///
/// Calls arm and disarm it without a locked instruction: `state` is
/// written by the calls of its store alone, `trip` moves away from
/// [`CLEAR`] by the timer alone. The two sides meet like Dekker's
/// algorithm: a call stores `state` then loads `trip` (and the timer's
/// `parked`); the timer stores `trip` (or `parked`) then loads `state`.
/// Each side needs its store ordered before its load. The timer, which
/// does this once per stopped call or parking, pays for both with
/// [`heavy_barrier`] (`membarrier`, which puts a full barrier into every
/// running thread of the process); a call then only keeps the compiler
/// from reordering ([`light_barrier`]).
struct PollPage {
    /// One page, mapped readable; no access while tripped.
    page: ptr::NonNull<libc::c_void>,
    /// [`IDLE`], or the tick the running call's deadline falls on (1 to
    /// `u64::MAX`).
    state: AtomicU64,
    /// [`CLEAR`], [`TRIPPING`] or [`TRIPPED`]. The timer sets `TRIPPING`
    /// and then `TRIPPED` or `CLEAR`; a call that ends and finds it
    /// `TRIPPED` lifts the protection and sets `CLEAR`.
    trip: AtomicU8,
}

// SAFETY: `page` is a mapping this slot owns; it is only read by guest code
// (through the store's epoch-deadline field) and protected or unprotected
// with `mprotect`, which is thread-safe; `state` is atomic.
unsafe impl Send for PollPage {}
// SAFETY: as for `Send`: no method hands out the page's memory.
unsafe impl Sync for PollPage {}

impl PollPage {
    fn new() -> std::io::Result<PollPage> {
        // SAFETY: a fresh anonymous private mapping at an address the
        // kernel picks; nothing else is touched.
        let page = unsafe {
            libc::mmap(
                ptr::null_mut(),
                page_size(),
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if page == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(PollPage {
            page: ptr::NonNull::new(page)
                .ok_or_else(|| std::io::Error::other("mmap returned null"))?,
            state: AtomicU64::new(IDLE),
            trip: AtomicU8::new(CLEAR),
        })
    }

    /// Protects (`readable == false`) or unprotects the page.
    fn protect(&self, readable: bool) {
        let prot = if readable {
            libc::PROT_READ
        } else {
            libc::PROT_NONE
        };
        // SAFETY: the page is this slot's own mapping, alive while the
        // slot is; changing its protection touches nothing else (guest code
        // only ever reads it, and a read of a protected page is the trap
        // the check exists for).
        let failed = unsafe { libc::mprotect(self.page.as_ptr(), page_size(), prot) } != 0;
        if failed {
            // Only for a page of its own: the kernel has no reason to
            // refuse (no mapping to split). Say so rather than lose it.
            let e = std::io::Error::last_os_error();
            if readable {
                tracing::error!(
                    "cannot unprotect a guest's poll page ({e}): its next call traps as past its deadline"
                );
            } else {
                tracing::error!(
                    "cannot protect a guest's poll page ({e}): the guest runs past its deadline until it calls the host"
                );
            }
        }
    }

    /// The deadline tick of the call armed on it, unless none is or the
    /// timer has stopped it.
    fn armed_at(&self) -> Option<u64> {
        let state = self.state.load(Ordering::Relaxed);
        (state != IDLE && self.trip.load(Ordering::Relaxed) == CLEAR).then_some(state)
    }

    /// Whether a call is armed on it and not stopped.
    fn armed(&self) -> bool {
        self.armed_at().is_some()
    }

    /// The calls of its store: the call that armed it ends, and its state
    /// goes back to `before` (the outer call's on the same store, or
    /// [`IDLE`]). Lifts the protection if the timer stopped the call.
    fn disarm(&self, before: u64) {
        self.state.store(before, Ordering::Relaxed);
        light_barrier();
        if self.trip.load(Ordering::Acquire) != CLEAR {
            self.lift();
        }
    }

    #[cold]
    #[inline(never)]
    fn lift(&self) {
        // The timer is at it: wait for its decision (a `mprotect` at most).
        let mut trip = self.trip.load(Ordering::Acquire);
        while trip == TRIPPING {
            std::hint::spin_loop();
            trip = self.trip.load(Ordering::Acquire);
        }
        if trip == TRIPPED {
            self.protect(true);
        }
        self.trip.store(CLEAR, Ordering::Release);
    }
}

/// Orders a call's store to a slot before its next load, against the
/// timer's [`heavy_barrier`]: only the compiler's reordering, unless
/// `membarrier` is missing ([`STRONG_FENCES`]). (The dispatcher's marks
/// pair with it the same way: `dispatch.rs`.)
#[inline]
pub(crate) fn light_barrier() {
    if STRONG_FENCES.load(Ordering::Relaxed) {
        std::sync::atomic::fence(Ordering::SeqCst);
    } else {
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
    }
}

/// Set when `membarrier` cannot serve [`heavy_barrier`]: calls then fence
/// for themselves.
static STRONG_FENCES: AtomicBool = AtomicBool::new(false);

const MEMBARRIER_CMD_GLOBAL: libc::c_long = 1;
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

fn membarrier(cmd: libc::c_long) -> bool {
    // SAFETY: `membarrier` takes two integers and touches no memory of
    // ours.
    unsafe {
        libc::syscall(
            libc::SYS_membarrier,
            cmd,
            0 as libc::c_long,
            0 as libc::c_long,
        ) == 0
    }
}

/// Registers this process for expedited `membarrier` (once per process,
/// and again in a forked child): without it, calls fence for themselves.
fn register_membarrier() {
    if !membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) {
        STRONG_FENCES.store(true, Ordering::SeqCst);
        tracing::debug!(
            "membarrier is not available ({}): each guest call fences for its deadline",
            std::io::Error::last_os_error()
        );
    }
}

/// The timer's side of the slots' Dekker handshake: after it returns
/// true, every thread of the process has passed a full memory barrier
/// since it was called, so a call's store before that point is seen here,
/// and a call's load after it sees the timer's stores before the call.
/// False when no `membarrier` command served: calls fence for themselves
/// from then on ([`STRONG_FENCES`]), but one that passed its
/// [`light_barrier`] before may not have.
pub(crate) fn heavy_barrier() -> bool {
    std::sync::atomic::fence(Ordering::SeqCst);
    if STRONG_FENCES.load(Ordering::SeqCst) {
        return false;
    }
    if membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) {
        return true;
    }
    // Not registered (a forked child that did not register yet): register
    // and try again; else the slow global command; else calls fence from
    // now on (a call racing this very barrier may be stopped a tick late).
    if membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED)
        && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)
    {
        return true;
    }
    if membarrier(MEMBARRIER_CMD_GLOBAL) {
        return true;
    }
    STRONG_FENCES.store(true, Ordering::SeqCst);
    tracing::error!(
        "membarrier failed ({}): guest calls fence for their deadlines from now on",
        std::io::Error::last_os_error()
    );
    false
}

/// Protects the pages of the calls among `due` that are still running
/// (the timer, at a tick whose due slots are `due`).
fn trip(due: &[Arc<PollPage>], now: u64) {
    for slot in due {
        slot.trip.store(TRIPPING, Ordering::Relaxed);
    }
    heavy_barrier();
    for slot in due {
        let state = slot.state.load(Ordering::Relaxed);
        // Still a call due (the one seen, or an outer one on the same
        // store): stop it. Else it ended (and waits for this decision).
        if state != IDLE && state <= now {
            slot.protect(false);
            slot.trip.store(TRIPPED, Ordering::Release);
        } else {
            slot.trip.store(CLEAR, Ordering::Release);
        }
    }
}

impl Drop for PollPage {
    fn drop(&mut self) {
        // SAFETY: the mapping is this slot's, made in `PollPage::new`; no store
        // uses it any more (its `Poll` is gone, and the registry drops a
        // slot only then).
        unsafe { libc::munmap(self.page.as_ptr(), page_size()) };
    }
}

/// The system's page size.
fn page_size() -> usize {
    static SIZE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *SIZE.get_or_init(|| {
        // SAFETY: `sysconf` reads a constant of the system.
        let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(size)
            .ok()
            .filter(|&s| s > 0)
            .unwrap_or(4096)
    })
}

/// The poll pages of one engine's stores: the timer walks them every tick,
/// and parks when none has been armed for [`IDLE_TICKS_BEFORE_PARKING`]
/// ticks.
/// Behind a [`ForkLock`], as a forked child may find it held by its
/// parent's timer thread.
struct Pages {
    lock: ForkLock,
    list: std::cell::UnsafeCell<Vec<Arc<PollPage>>>,
}

// SAFETY: `list` is only reached under `lock` (`Pages::with`).
unsafe impl Sync for Pages {}

impl Pages {
    fn with<R>(&self, f: impl FnOnce(&mut Vec<Arc<PollPage>>) -> R) -> R {
        self.lock.with(|| {
            // SAFETY: the lock is held: no other reference to the list.
            f(unsafe { &mut *self.list.get() })
        })
    }

    /// Whether a call has armed a page and not yet been stopped: the timer
    /// must tick. (After a [`heavy_barrier`], against `Ticker::enter`'s
    /// arming, for parking.)
    fn any_armed(&self) -> bool {
        self.with(|list| list.iter().any(|slot| slot.armed()))
    }
}

/// A store's poll page ([`Ticker::poll`]): keep it as long as the store and
/// pass it to every [`Ticker::enter`] of that store.
pub(crate) struct Poll {
    /// `None` for an engine without checks (the benches' `Unchecked`).
    slot: Option<Arc<PollPage>>,
}

/// Idle ticks before a timer thread parks. While calls keep coming it keeps
/// ticking, so a call does not pay for waking it (a futex wake-up, and on a
/// busy machine a scheduling delay: measured ~0.4 ms per call).
pub(crate) const IDLE_TICKS_BEFORE_PARKING: u32 = 100;

impl Ticker {
    /// Starts the deadline mechanism `mode` (already resolved) for
    /// `engine`: for poll pages, a timer thread ticking every `tick`.
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
            stop: AtomicBool::new(false),
            parked: AtomicBool::new(false),
            ticks: AtomicU64::new(0),
            faults_checked: AtomicU64::new(u64::MAX),
            pages: Pages {
                lock: ForkLock::new(),
                list: std::cell::UnsafeCell::new(Vec::new()),
            },
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
        if mode == Interrupt::Poll {
            count_forks();
            static MEMBARRIER: std::sync::Once = std::sync::Once::new();
            MEMBARRIER.call_once(register_membarrier);
            let timer = ticker.spawn_timer()?;
            *ticker.timer.get_mut() = Box::into_raw(Box::new(timer));
        }
        Ok(ticker)
    }

    /// A poll page for a new store of this engine.
    ///
    /// # Errors
    ///
    /// When the page cannot be mapped.
    pub(crate) fn poll(&self) -> std::io::Result<Poll> {
        if !self.mode.checked() {
            return Ok(Poll { slot: None });
        }
        let slot = Arc::new(PollPage::new()?);
        self.shared.pages.with(|list| {
            // Pages whose store is gone go now (the timer also drops
            // them).
            list.retain(|s| Arc::strong_count(s) > 1);
            list.push(Arc::clone(&slot));
        });
        Ok(Poll { slot: Some(slot) })
    }

    /// Starts a timer thread for this ticker.
    fn spawn_timer(&self) -> std::io::Result<Timer> {
        let weak = self.engine.clone();
        let tick = self.tick;
        let thread_shared = Arc::clone(&self.shared);
        let join = thread::Builder::new()
            .name("cyxla-deadline".into())
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
                    if idle > IDLE_TICKS_BEFORE_PARKING {
                        // `enter` arms its page, then reads `parked`, and
                        // we set `parked`, then read the pages, each side
                        // with its barrier (see `PollPage`): either it sees
                        // the flag and unparks us, or we see its page
                        // armed here and stay awake.
                        shared.parked.store(true, Ordering::Relaxed);
                        heavy_barrier();
                        if !shared.pages.any_armed() {
                            // A stale unpark token only costs a round.
                            thread::park();
                        }
                        shared.parked.store(false, Ordering::SeqCst);
                        idle = 0;
                        next = std::time::Instant::now() + tick;
                        continue;
                    }
                    thread::sleep(next.saturating_duration_since(std::time::Instant::now()));
                    if weak.upgrade().is_none() {
                        return;
                    }
                    // A fault handler installed while calls run goes
                    // behind cyxla's within a tick (see `crate::faults`).
                    let now = std::time::Instant::now();
                    crate::faults::poll(now);
                    let tick_now = shared.ticks.fetch_add(1, Ordering::AcqRel) + 1;
                    let (due, armed) = shared.pages.with(|list| {
                        list.retain(|slot| Arc::strong_count(slot) > 1);
                        let due: Vec<Arc<PollPage>> = list
                            .iter()
                            .filter(|s| s.armed_at().is_some_and(|at| at <= tick_now))
                            .cloned()
                            .collect();
                        (due, list.iter().any(|s| s.armed()))
                    });
                    if !due.is_empty() {
                        trip(&due, tick_now);
                    }
                    idle = if armed { 0 } else { idle + 1 };
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
    /// call runs without a deadline for its guest code (logged), and the
    /// next call tries again.
    #[cold]
    #[inline(never)]
    fn restart_after_fork(&self) {
        self.restart.with(|| {
            let now = forks();
            if self.timer_forks.load(Ordering::Acquire) == now {
                return;
            }
            // Calls running in the parent's other threads at the fork never
            // end here: the new timer stops them (their stores are never
            // used again) and then parks.
            register_membarrier();
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
    /// that runs in `store`, whose poll page is `poll`, until the guard is
    /// dropped.
    ///
    /// No clock is read. The deadline is the `ticks`-th tick of this
    /// ticker's timer from now, for the guest's checks (the timer protects
    /// `poll`'s page at that tick) and for host code ([`overdue`]) alike.
    /// The timer applies one tick per wake-up on a grid of period `tick`,
    /// and skips the grid points a late wake-up missed by a whole tick. So
    /// the guest gets at least `ticks - 2` whole ticks: the first tick may
    /// come at once, and the second less than a tick later when the first
    /// was a late one ([`crate::Limits::deadline_ticks`] counts two more).
    /// A timer thread that runs late lengthens a deadline, never shortens
    /// it.
    pub(crate) fn enter<'a, T>(
        &'a self,
        store: &mut wasmtime::Store<T>,
        poll: &'a Poll,
        ticks: u64,
        code: &'a CodeRanges,
    ) -> Active<'a> {
        let outer_text = crate::faults::enter_guest(code.text());
        let outer = DEADLINE.with(Cell::get);
        let mut armed = None;
        if let Some(slot) = &poll.slot {
            // The address guest code checks. The engine's epoch never moves
            // from 0: the field holds the page's address as given.
            store.set_epoch_deadline(slot.page.as_ptr() as u64);
            let counter = &self.shared.ticks;
            let now = counter.load(Ordering::Acquire);
            let mine = Deadline {
                ticks: counter,
                at: now.saturating_add(ticks),
            };
            // Calls of another engine count another timer's ticks: the
            // innermost call's deadline holds (the outer guest's own
            // checks still stop it when it runs again).
            let earliest = match outer {
                Some(o) if ptr::eq(o.ticks, counter) && o.at < mine.at => o,
                _ => mine,
            };
            DEADLINE.with(|d| d.set(Some(earliest)));
            // The page: a call nested in a host function of the same store
            // keeps the earlier deadline (and a page the timer protected
            // for the outer call stays so until the inner call ends).
            // Written by this store's calls alone: no locked instruction
            // (see `PollPage`).
            let before = slot.state.load(Ordering::Relaxed);
            let at = earliest.at.max(1);
            let at = if before == IDLE { at } else { at.min(before) };
            slot.state.store(at, Ordering::Relaxed);
            light_barrier();
            armed = Some((slot.as_ref(), before));
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
        if self.mode == Interrupt::Poll && self.timer_forks.load(Ordering::Relaxed) != forks() {
            self.restart_after_fork();
        }
        if armed.is_some() && self.shared.parked.load(Ordering::Relaxed) {
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
            outer,
            outer_text,
            armed,
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
                // it panicked (it cannot: it only sleeps, counts and
                // protects pages).
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
    /// This thread's deadline before [`Ticker::enter`], restored on drop.
    outer: Option<Deadline>,
    /// The guest code running on this thread before [`Ticker::enter`]
    /// (for the fault handler), restored on drop.
    outer_text: (usize, usize),
    /// The poll page this call armed, and its state before (restored on
    /// drop).
    armed: Option<(&'a PollPage, u64)>,
}

impl Drop for Active<'_> {
    fn drop(&mut self) {
        if let Some((slot, before)) = self.armed {
            slot.disarm(before);
        }
        DEADLINE.with(|d| d.set(self.outer));
        crate::faults::leave_guest(self.outer_text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A guest function that loops forever, on an engine with a ticker.
    struct Looping {
        ticker: Ticker,
        poll: Poll,
        store: wasmtime::Store<()>,
        /// Loops forever.
        f: wasmtime::TypedFunc<(), ()>,
        /// Returns its argument.
        g: wasmtime::TypedFunc<i32, i32>,
        code: CodeRanges,
    }

    fn looping(tick: Duration) -> Looping {
        let mut config = wasmtime::Config::new();
        config.epoch_interruption(true);
        let engine = wasmtime::Engine::new(&config).unwrap();
        let ticker = Ticker::start(&engine, tick, Interrupt::Poll).unwrap();
        let poll = ticker.poll().unwrap();
        let module =
            wasmtime::Module::new(&engine, "(module (func (export \"f\") (loop br 0)) (func (export \"g\") (param i32) (result i32) (local.get 0)))").unwrap();
        let mut store = wasmtime::Store::new(&engine, ());
        let instance = wasmtime::Instance::new(&mut store, &module, &[]).unwrap();
        let f = instance.get_typed_func::<(), ()>(&mut store, "f").unwrap();
        let g = instance
            .get_typed_func::<i32, i32>(&mut store, "g")
            .unwrap();
        let code = CodeRanges::of(&module);
        Looping {
            ticker,
            poll,
            store,
            f,
            g,
            code,
        }
    }

    impl Looping {
        /// Calls the looping `f` under a deadline of `ticks`: it must be
        /// stopped as past its deadline.
        fn stopped(&mut self, ticks: u64, context: &str) {
            let error = {
                let _active = self
                    .ticker
                    .enter(&mut self.store, &self.poll, ticks, &self.code);
                self.f.call(&mut self.store, ()).unwrap_err()
            };
            assert_eq!(
                error.downcast_ref::<wasmtime::Trap>(),
                Some(&wasmtime::Trap::Interrupt),
                "{context}"
            );
        }

        /// Calls `g(x)` under a deadline of `ticks`.
        fn echo(&mut self, x: i32, ticks: u64) -> wasmtime::Result<i32> {
            let _active = self
                .ticker
                .enter(&mut self.store, &self.poll, ticks, &self.code);
            self.g.call(&mut self.store, x)
        }
    }

    #[test]
    fn ticks_only_while_active() {
        let mut looping = looping(Duration::from_millis(1));
        looping.stopped(5, "a loop past its deadline");
        drop(looping.ticker);
    }

    /// A deadline of `n` ticks gives guest code and host code at least
    /// `n - 2` whole ticks, wherever in a tick it is armed, and however the
    /// timer thread is scheduled (late ticks only lengthen it).
    #[test]
    fn a_deadline_is_never_cut_short() {
        const TICK: Duration = Duration::from_millis(2);
        const N: u64 = 6;
        let mut looping = looping(TICK);
        let least = TICK * u32::try_from(N - 2).unwrap();
        for round in 0..40u32 {
            // Arm at different points of a tick.
            std::thread::sleep(TICK * (round % 4) / 4);
            let started = std::time::Instant::now();
            looping.stopped(N, &format!("round {round}"));
            let guest = started.elapsed();
            assert!(
                guest >= least,
                "round {round}: the guest was stopped after {guest:?}, before {least:?}"
            );

            // Host code: overdue only from the same tick on.
            let started = std::time::Instant::now();
            let _active = looping
                .ticker
                .enter(&mut looping.store, &looping.poll, N, &looping.code);
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

    /// A call the timer stopped leaves its store's page readable for the
    /// next call, however the call's end and the timer's protection
    /// interleave: short calls right after each stopped one, and short
    /// calls whose deadline tick comes while they end, never trap.
    #[test]
    fn a_stopped_call_leaves_the_page_readable() {
        let mut looping = looping(Duration::from_micros(100));
        for round in 0..200 {
            looping.stopped(1, &format!("round {round}"));
            for i in 0..20 {
                let got = looping.echo(i, 1 << 40).unwrap();
                assert_eq!(got, i, "round {round}, call {i}");
            }
            // Calls due at the next tick that end before or while it comes:
            // each either returns or is stopped, and the page is readable
            // again after it.
            for i in 0..50 {
                if let Err(error) = looping.echo(i, 1) {
                    assert_eq!(
                        error.downcast_ref::<wasmtime::Trap>(),
                        Some(&wasmtime::Trap::Interrupt),
                        "round {round}, call {i}"
                    );
                }
                let got = looping.echo(i, 1 << 40).unwrap();
                assert_eq!(got, i, "round {round}, call {i}");
            }
        }
    }
}
