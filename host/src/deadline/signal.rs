//! Deadlines without checks in guest code (x86_64 Linux).
//!
//! Epoch interruption compiles a check into every loop header; even with
//! cyxla's patch of the check that costs time in tight loops (measurements:
//! docs/performance.md, "Deadlines").
//! This module compiles guests with no checks at all and stops a guest
//! past its deadline from outside, the way SpiderMonkey interrupts running
//! JIT code:
//!
//! 1. Each thread that runs guest code has a [`Slot`]: the generation of the
//!    call it runs (0 when idle), its deadline, and the address ranges of the
//!    guest's compiled function bodies.
//! 2. One watchdog thread per process wakes at the earliest deadline of an
//!    armed slot, or every 10 ms (it parks after a second without calls),
//!    and sends the thread of a slot past its deadline a real-time signal
//!    (`pthread_kill`), again every 100 µs until the call ends.
//! 3. The signal handler looks at the interrupted program counter. Inside a
//!    function body of the guest being timed (never in a trampoline, a host
//!    function or wasmtime itself), it moves the program counter to a `ud2`
//!    instruction in a helper wasm module compiled by the same wasmtime, and
//!    records that it did. Anywhere else it does nothing, and the next signal
//!    tries again.
//! 4. The `ud2` raises SIGILL; wasmtime's own trap handler finds trap
//!    metadata for that address (a wasm `unreachable`) and unwinds to the
//!    host as for any trap. The host sees that the slot fired and reports a
//!    deadline instead of `unreachable`.
//!
//! 5. Anywhere else, if the thread is in a builtin that guest code called
//!    (`memory.fill`, `memory.copy` and the like run in wasmtime's Rust code,
//!    where a guest can spend seconds per instruction), the handler instead
//!    makes the builtin's trampoline return to that `ud2` (see
//!    [`hijack_builtin_return`]): the guest traps as it would at the
//!    instruction after the call, once the builtin has finished.
//! 6. Never while host code of ours runs: the store's call hook, which wraps
//!    every host function and every builtin that can fail (`memory.grow`,
//!    `table.grow`, ...), calls [`host_code_entered`] and
//!    [`host_code_left`]. Between them the handler rewrites nothing, and
//!    [`host_code_entered`] puts back a return address rewritten just
//!    before. Host code stops at the same hook's deadline check instead. Our
//!    code may unwind the stack: the deadline check's own error captures a
//!    Rust backtrace under `RUST_BACKTRACE=1`, and unwinding through a
//!    rewritten return address died of SIGSEGV (`tests/signal_builtins.rs`).
//!    Builtins without the hook (`memory.fill`, `memory.copy`) run no code
//!    of ours: nothing unwinds there. Guest code that host code calls (a
//!    host function calling the guest's `cyxla_alloc`) is guest code again:
//!    the hook on calling and returning from wasm counts it out and back
//!    in ([`host_code_left`], [`host_code_resumed`]).
//!
//! Every wasm function body is a place where wasmtime can already trap (any
//! load or store can), and an instance that trapped is discarded, so
//! abandoning guest code at any instruction of a body is sound. [`install`]
//! runs a self-test (a loop with no memory access, interrupted) and the
//! engine falls back to epoch interruption if anything here is not
//! available.

use std::cell::Cell;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// Address ranges of a module's compiled wasm function bodies, sorted.
#[derive(Debug, Default)]
pub(crate) struct CodeRanges {
    ranges: Vec<(usize, usize)>,
    /// The module's whole text (bodies and trampolines).
    text: (usize, usize),
}

impl CodeRanges {
    /// The function bodies of `module`.
    pub(crate) fn of(module: &wasmtime::Module) -> CodeRanges {
        let base = module.text().as_ptr() as usize;
        let mut ranges: Vec<(usize, usize)> = module
            .functions()
            .map(|f| (base + f.offset, base + f.offset + f.len))
            .collect();
        ranges.sort_unstable();
        let text = (base, base + module.text().len());
        CodeRanges { ranges, text }
    }

    /// The module's whole text: start and end addresses.
    pub(crate) fn text(&self) -> (usize, usize) {
        self.text
    }

    /// Whether `pc` lies in the module's text but in none of its bodies (a
    /// trampoline). Async-signal-safe.
    fn in_trampoline(&self, pc: usize) -> bool {
        pc >= self.text.0 && pc < self.text.1 && !self.contains(pc)
    }

    /// Whether `pc` lies in one of the bodies. Async-signal-safe: reads
    /// only.
    fn contains(&self, pc: usize) -> bool {
        let i = self.ranges.partition_point(|&(start, _)| start <= pc);
        i > 0 && pc < self.ranges[i - 1].1
    }
}

/// The timing state of one thread.
struct Slot {
    thread: libc::pthread_t,
    /// Generation of the call running now; 0 when idle.
    generation: AtomicU64,
    /// Deadline, in nanoseconds since [`start`].
    deadline: AtomicU64,
    /// The running guest's function bodies (valid while `generation != 0`).
    ranges: AtomicPtr<CodeRanges>,
    /// The generation the watchdog wants interrupted.
    kill: AtomicU64,
    /// The generation the signal handler interrupted.
    fired: AtomicU64,
    /// Set by the watchdog while it signals this thread.
    sending: AtomicBool,
    /// The thread has exited.
    dead: AtomicBool,
    /// Last generation handed out (owner thread only).
    last: AtomicU64,
    /// How many host calls (host functions, builtins with the call hook)
    /// of the running call have been entered and not left: while nonzero,
    /// the handler rewrites no return address. Owner thread and its signal
    /// handler only.
    in_host: AtomicUsize,
    /// The stack word holding the return address the handler rewrote for
    /// this call (0: none), and the address it held.
    rewritten: AtomicUsize,
    rewritten_from: AtomicUsize,
    /// The bounds (lowest, highest address) of the thread's stack; (0, 0)
    /// if unknown.
    stack: (usize, usize),
    /// The fork generation of the watchdog whose list holds this slot
    /// ([`super::forks`]; `u64::MAX`: none yet).
    watched: AtomicU64,
}

/// Removes the slot from the watchdog's list when its thread exits.
struct Owner(Arc<Slot>);

impl Drop for Owner {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(ptr::null()));
        self.0.dead.store(true, Ordering::Release);
    }
}

thread_local! {
    /// This thread's slot, for the signal handler (a plain pointer in
    /// const-initialised TLS without a destructor: async-signal-safe).
    static CURRENT: Cell<*const Slot> = const { Cell::new(ptr::null()) };
    /// Keeps the slot alive for the thread's lifetime.
    static OWNER: Owner = Owner(new_slot());
}

fn start() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now)
}

fn nanos_since_start(at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(start()).as_nanos()).unwrap_or(u64::MAX)
}

struct Watchdog {
    slots: Mutex<Vec<Arc<Slot>>>,
    armed: AtomicUsize,
    /// The watchdog is parked (or about to park): `arm` must wake it.
    parked: AtomicBool,
    thread: thread::Thread,
    /// The fork generation it runs in ([`super::forks`]).
    forks: u64,
}

/// What [`install`] set up.
struct Installed {
    /// Address of a `ud2` with wasm trap metadata (`unreachable`).
    trap_pc: usize,
    signal: libc::c_int,
    /// The watchdog of this process (leaked, never freed). A forked child
    /// starts one of its own (see [`arm`]): its parent's is not there.
    watchdog: AtomicPtr<Watchdog>,
    restart: super::ForkLock,
    // Keeps the helper module's code mapped.
    _helper: wasmtime::Module,
}

static INSTALLED: OnceLock<Result<Installed, String>> = OnceLock::new();

fn installed() -> Option<&'static Installed> {
    INSTALLED.get().and_then(|r| r.as_ref().ok())
}

impl Installed {
    /// The watchdog of this fork generation: in a forked child, the first
    /// call starts one (the parent's thread does not exist here).
    fn watchdog(&self) -> Option<&'static Watchdog> {
        // SAFETY: the pointer comes from `Box::leak`: never freed.
        let watchdog = unsafe { &*self.watchdog.load(Ordering::Acquire) };
        if watchdog.forks == super::forks() {
            return Some(watchdog);
        }
        self.restart_watchdog()
    }

    #[cold]
    #[inline(never)]
    fn restart_watchdog(&self) -> Option<&'static Watchdog> {
        self.restart.with(|| {
            // SAFETY: as in `watchdog`.
            let watchdog = unsafe { &*self.watchdog.load(Ordering::Acquire) };
            if watchdog.forks == super::forks() {
                return Some(watchdog);
            }
            match start_watchdog(self.signal) {
                Ok(fresh) => {
                    self.watchdog
                        .store(ptr::from_ref(fresh).cast_mut(), Ordering::Release);
                    tracing::debug!("deadline watchdog restarted in a forked child");
                    Some(fresh)
                }
                Err(e) => {
                    tracing::error!("{e} in this forked child: this call runs without a deadline");
                    None
                }
            }
        })
    }
}

/// Puts `slot` in the list of `watchdog`, once per fork generation.
fn watch_slot(watchdog: &Watchdog, slot: &Arc<Slot>) {
    if slot.watched.load(Ordering::Acquire) == watchdog.forks {
        return;
    }
    // A signal being sent from the parent's watchdog at the fork is not
    // being sent here.
    slot.sending.store(false, Ordering::SeqCst);
    let mut slots = match watchdog.slots.lock() {
        Ok(s) => s,
        Err(poisoned) => poisoned.into_inner(),
    };
    slots.retain(|s| !s.dead.load(Ordering::Acquire));
    slots.push(Arc::clone(slot));
    slot.watched.store(watchdog.forks, Ordering::Release);
}

/// Starts a watchdog thread sending `signal`.
fn start_watchdog(signal: libc::c_int) -> Result<&'static Watchdog, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    thread::Builder::new()
        .name("cyxla-watchdog".into())
        .spawn(move || {
            let watchdog: &'static Watchdog = Box::leak(Box::new(Watchdog {
                slots: Mutex::new(Vec::new()),
                armed: AtomicUsize::new(0),
                parked: AtomicBool::new(false),
                thread: thread::current(),
                forks: super::forks(),
            }));
            let _ = tx.send(watchdog);
            watch(watchdog, signal);
        })
        .map_err(|e| format!("cannot start the watchdog thread: {e}"))?;
    rx.recv()
        .map_err(|_| "the watchdog thread did not start".to_owned())
}

fn new_slot() -> Arc<Slot> {
    let slot = Arc::new(Slot {
        // SAFETY: pthread_self has no preconditions.
        thread: unsafe { libc::pthread_self() },
        generation: AtomicU64::new(0),
        deadline: AtomicU64::new(u64::MAX),
        ranges: AtomicPtr::new(ptr::null_mut()),
        kill: AtomicU64::new(0),
        fired: AtomicU64::new(0),
        sending: AtomicBool::new(false),
        dead: AtomicBool::new(false),
        last: AtomicU64::new(0),
        in_host: AtomicUsize::new(0),
        rewritten: AtomicUsize::new(0),
        rewritten_from: AtomicUsize::new(0),
        stack: crate::stack::bounds().unwrap_or((0, 0)),
        watched: AtomicU64::new(u64::MAX),
    });
    CURRENT.with(|c| c.set(Arc::as_ptr(&slot)));
    if let Some(watchdog) = installed().and_then(Installed::watchdog) {
        watch_slot(watchdog, &slot);
    }
    slot
}

/// Installs the signal handler, finds the trap address, starts the
/// watchdog and runs the self-test, once per process.
///
/// # Errors
///
/// Why signal interruption is not available here (the caller falls back to
/// epoch interruption).
pub(crate) fn install() -> Result<(), String> {
    INSTALLED
        .get_or_init(install_once)
        .as_ref()
        .map(|_| ())
        .map_err(Clone::clone)?;
    self_test()
}

fn install_once() -> Result<Installed, String> {
    let mut config = wasmtime::Config::new();
    config.epoch_interruption(false);
    let engine = wasmtime::Engine::new(&config).map_err(|e| format!("{e:#}"))?;
    let helper = wasmtime::Module::new(&engine, "(module (func (export \"t\") unreachable))")
        .map_err(|e| format!("{e:#}"))?;
    let trap_pc = find_ud2(&helper).ok_or("no `ud2` in the compiled helper module")?;
    // Guest calls trap there on their deadline: a guest's fault for the
    // fault handler.
    let text = helper.text().as_ptr() as usize;
    crate::faults::also_guest_code((text, text + helper.text().len()));
    let signal = free_signal().ok_or("no free real-time signal")?;
    // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value;
    // the handler is an `extern "C"` function of the signature SA_SIGINFO
    // requires, and it is async-signal-safe (see `on_signal`).
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(signal, &action, ptr::null_mut()) != 0 {
            return Err(format!(
                "sigaction({signal}) failed: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    super::count_forks();
    let watchdog = start_watchdog(signal)?;
    tracing::debug!(signal, "guest deadlines by signal");
    Ok(Installed {
        trap_pc,
        signal,
        watchdog: AtomicPtr::new(ptr::from_ref(watchdog).cast_mut()),
        restart: super::ForkLock::new(),
        _helper: helper,
    })
}

/// The address of the first `ud2` (0F 0B) in the helper's only function.
fn find_ud2(module: &wasmtime::Module) -> Option<usize> {
    let function = module.functions().next()?;
    let text = module.text();
    let body = text.get(function.offset..function.offset + function.len)?;
    let at = body.windows(2).position(|w| w == [0x0f, 0x0b])?;
    Some(text.as_ptr() as usize + function.offset + at)
}

/// A real-time signal nobody in the process handles yet.
fn free_signal() -> Option<libc::c_int> {
    (libc::SIGRTMIN() + 4..=libc::SIGRTMAX()).find(|&signal| {
        // SAFETY: querying (not changing) a signal's disposition into a
        // zeroed, writable sigaction.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(signal, ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_DFL
        }
    })
}

/// Whether `on_signal` is still the handler of `signal` (another library
/// could have replaced it since [`install`]).
fn still_installed(signal: libc::c_int) -> bool {
    // SAFETY: querying (not changing) a disposition into a zeroed sigaction.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, ptr::null(), &mut current) == 0
            && current.sa_sigaction == on_signal as *const () as usize
    }
}

/// The signal handler. Async-signal-safe: it reads this thread's slot
/// through a const TLS pointer, does a binary search over an immutable
/// vector and atomic loads and stores, and writes the saved program counter.
extern "C" fn on_signal(
    _signal: libc::c_int,
    _info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    let slot = CURRENT.with(Cell::get);
    if slot.is_null() || context.is_null() {
        return;
    }
    // SAFETY: `CURRENT` points at this thread's slot, kept alive by `OWNER`
    // (and cleared before the slot is released).
    let slot = unsafe { &*slot };
    let generation = slot.generation.load(Ordering::Acquire);
    if generation == 0 || slot.kill.load(Ordering::Acquire) != generation {
        return;
    }
    let ranges = slot.ranges.load(Ordering::Acquire);
    let Some(installed) = installed() else {
        return;
    };
    if ranges.is_null() {
        return;
    }
    // SAFETY: the kernel passes the interrupted thread's `ucontext_t` as
    // the third argument of an SA_SIGINFO handler.
    let gregs = unsafe { &mut (*context.cast::<libc::ucontext_t>()).uc_mcontext.gregs };
    let pc = gregs[libc::REG_RIP as usize] as usize;
    // SAFETY: `ranges` belongs to the guest of the armed call, which keeps
    // it alive until the call is disarmed (after the guest code returned).
    let ranges = unsafe { &*ranges };
    if ranges.contains(pc) {
        gregs[libc::REG_RIP as usize] = installed.trap_pc as libc::greg_t;
        slot.fired.store(generation, Ordering::Release);
        return;
    }
    if slot.fired.load(Ordering::Acquire) == generation || slot.in_host.load(Ordering::Relaxed) != 0
    {
        return;
    }
    let sp = gregs[libc::REG_RSP as usize] as usize;
    // SAFETY: `sp` is this thread's interrupted stack pointer and
    // `slot.stack` the bounds of this thread's stack (see
    // `hijack_builtin_return`).
    let rewritten = unsafe { hijack_builtin_return(sp, slot.stack, ranges, installed.trap_pc) };
    if let Some((at, from)) = rewritten {
        slot.rewritten_from.store(from, Ordering::Relaxed);
        slot.rewritten.store(at, Ordering::Relaxed);
        slot.fired.store(generation, Ordering::Release);
    }
}

/// Runs `f` on this thread's slot, if a deadline was ever armed on this
/// thread (threads that never ran guest code have none).
fn with_slot(f: impl FnOnce(&Slot)) {
    let slot = CURRENT.with(Cell::get);
    if slot.is_null() {
        return;
    }
    // SAFETY: `CURRENT` points at this thread's slot, kept alive by `OWNER`
    // for the thread's life; the borrow ends when `f` returns.
    f(unsafe { &*slot });
}

/// Host code of ours starts on this thread, inside guest code's call (the
/// store's call hook, [`crate::instance`]): no return address is rewritten
/// until [`host_code_left`], and one rewritten just before (in the window
/// between the builtin's trampoline and this hook) is put back, so that the
/// stack unwinds.
pub(crate) fn host_code_entered() {
    with_slot(|slot| {
        slot.in_host.fetch_add(1, Ordering::Relaxed);
        // The handler runs on this thread: it must see `in_host` before the
        // word is put back, not after.
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
        let at = slot.rewritten.swap(0, Ordering::Relaxed);
        if at != 0 {
            let from = slot.rewritten_from.load(Ordering::Relaxed);
            // SAFETY: the handler rewrote the return address at `at` in the
            // frame of the trampoline of a builtin that guest code of this call
            // called and that has not returned (it is the host call starting
            // now, the only one since the handler ran: once it rewrote a word,
            // it rewrites no other for this call). That frame is live, above
            // this one on this thread's stack.
            unsafe {
                let word = at as *mut usize;
                if *word == installed().map_or(0, |i| i.trap_pc) {
                    *word = from;
                }
            }
        }
    });
}

/// Host code of ours resumes on this thread after guest code it called
/// returned (the store's call hook on returning from wasm): counted as in
/// [`host_code_entered`]. A word the handler rewrote in that guest code
/// belongs to a frame that is gone: it is forgotten, not put back.
pub(crate) fn host_code_resumed() {
    with_slot(|slot| {
        slot.in_host.fetch_add(1, Ordering::Relaxed);
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
        slot.rewritten.store(0, Ordering::Relaxed);
    });
}

/// Host code of ours returns to guest code, or calls guest code, on this
/// thread (see [`host_code_entered`]).
pub(crate) fn host_code_left() {
    with_slot(|slot| {
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
        let depth = slot.in_host.load(Ordering::Relaxed);
        slot.in_host
            .store(depth.saturating_sub(1), Ordering::Relaxed);
    });
}

/// Bytes above the interrupted stack pointer searched for a builtin
/// trampoline's frame (the builtins' own frames are small).
const HIJACK_SCAN: usize = 32 << 10;

/// Finds, above `sp`, the frame of a trampoline into a wasmtime builtin
/// that guest code in `ranges` called, and replaces its return address with
/// `trap_pc`; returns the address of the word it rewrote and the value the
/// word held.
///
/// Guest code calls builtins (`memory.fill`, `memory.copy`, `memory.grow`,
/// ...) with a direct `call rel32` to a trampoline in the module's own text
/// (outside every function body). The trampoline keeps a frame-pointer
/// frame: its saved frame pointer (the guest frame's, above it on the
/// stack) and, just above that, the return address into the function body.
/// A word pair `[fp, ret]` is taken as that frame only if `fp` points
/// further up this thread's stack, `ret` lies in a body of the timed guest,
/// and the five bytes before `ret` are a `call rel32` whose target is a
/// trampoline of the same module: only such a call puts that value on the
/// stack, and the frames above `sp` are live. When the builtin returns
/// normally, the trampoline restores the guest's frame pointer and returns
/// to the `ud2`: the state is the guest's own just after the call, where
/// trapping is sound (the builtin finished; the instance is discarded).
///
/// Nothing is done unless `sp` lies in this thread's stack: a thread
/// interrupted inside a signal handler that runs on an alternate signal
/// stack (wasmtime's trap handler, building the backtrace of a guest that
/// trapped) has its `sp` there, and the 32 KiB above it may be unmapped (a
/// fuzzed guest crashed the process so, once in about 10^4 to 10^5 calls).
///
/// # Safety
///
/// `sp` must be the interrupted stack pointer of the calling thread and
/// `stack` the (lowest, highest) addresses of its stack (or (0, 0):
/// nothing is done); `ranges` must be the code of a module still loaded.
/// Async-signal-safe: reads of this thread's live stack and of guest code,
/// one aligned store.
unsafe fn hijack_builtin_return(
    sp: usize,
    stack: (usize, usize),
    ranges: &CodeRanges,
    trap_pc: usize,
) -> Option<(usize, usize)> {
    let (bottom, top) = stack;
    if top == 0 || sp < bottom || sp >= top || !sp.is_multiple_of(8) {
        return None;
    }
    let end = top.min(sp.saturating_add(HIJACK_SCAN)).saturating_sub(16);
    let mut at = sp;
    while at <= end {
        // SAFETY: `[sp, top)` is this thread's live stack, mapped; `at` is
        // 8-aligned and `at + 16 <= top`.
        let (fp, ret) = unsafe { (*(at as *const usize), *((at + 8) as *const usize)) };
        if fp > at && fp < top && ranges.contains(ret) && ranges.contains(ret.wrapping_sub(5)) && {
            // SAFETY: `ret - 5 .. ret` lies inside a function body of a
            // loaded module (checked just above): mapped code.
            let call = unsafe { std::slice::from_raw_parts((ret - 5) as *const u8, 5) };
            let rel = i32::from_le_bytes([call[1], call[2], call[3], call[4]]);
            call[0] == 0xe8 && ranges.in_trampoline(ret.wrapping_add_signed(rel as isize))
        } {
            // SAFETY: the slot is this thread's live stack (see above).
            unsafe { *((at + 8) as *mut usize) = trap_pc };
            return Some((at + 8, ret));
        }
        at += 8;
    }
    None
}

fn watch(watchdog: &'static Watchdog, signal: libc::c_int) {
    const MAX_SLEEP: Duration = Duration::from_millis(10);
    // A guest that spends most of its time in host functions is hit in its
    // own code by few signals: retry often (only overdue calls pay).
    const RETRY: Duration = Duration::from_micros(100);
    let mut idle = 0u32;
    loop {
        if watchdog.armed.load(Ordering::SeqCst) == 0 {
            idle += 1;
            if idle > super::IDLE_TICKS_BEFORE_PARKING {
                // As in the epoch ticker: either `arm` sees `parked` and
                // unparks, or we see its call and stay awake.
                watchdog.parked.store(true, Ordering::SeqCst);
                if watchdog.armed.load(Ordering::SeqCst) == 0 {
                    thread::park();
                }
                watchdog.parked.store(false, Ordering::SeqCst);
                idle = 0;
            } else {
                thread::park_timeout(MAX_SLEEP);
            }
            continue;
        }
        idle = 0;
        let now = nanos_since_start(Instant::now());
        let mut sleep = MAX_SLEEP;
        {
            let slots = match watchdog.slots.lock() {
                Ok(s) => s,
                Err(poisoned) => poisoned.into_inner(),
            };
            for slot in slots.iter() {
                let generation = slot.generation.load(Ordering::SeqCst);
                if generation == 0 {
                    continue;
                }
                let deadline = slot.deadline.load(Ordering::Acquire);
                if now < deadline {
                    sleep = sleep.min(Duration::from_nanos(deadline - now));
                    continue;
                }
                if slot.kill.swap(generation, Ordering::AcqRel) != generation
                    && !still_installed(signal)
                {
                    tracing::error!(
                        signal,
                        "another handler replaced cyxla's deadline signal handler: guests past their deadline cannot be stopped"
                    );
                }
                // The owner waits for `sending` to clear before it leaves
                // its call, so the thread is alive while it is signalled.
                slot.sending.store(true, Ordering::SeqCst);
                if slot.generation.load(Ordering::SeqCst) == generation {
                    // SAFETY: the slot's thread is inside an armed call and
                    // cannot leave it (see `Armed::drop`) until `sending`
                    // is cleared below, so the pthread_t is live.
                    unsafe { libc::pthread_kill(slot.thread, signal) };
                }
                slot.sending.store(false, Ordering::SeqCst);
                sleep = sleep.min(RETRY);
            }
        }
        thread::park_timeout(sleep);
    }
}

/// A call armed with a deadline on this thread (see [`arm`]).
pub(crate) struct Armed {
    slot: Option<Arc<Slot>>,
    generation: u64,
    /// The watchdog that counts this call as armed.
    watchdog: Option<&'static Watchdog>,
}

/// Arms this thread's slot for a call of guest code in `ranges`, to stop
/// at `deadline` (`None`: never, the timeout overflowed). Nested arming (a
/// host function running guest code inside an armed call) keeps the outer
/// deadline.
pub(crate) fn arm(deadline: Option<Instant>, ranges: &CodeRanges) -> Armed {
    let unarmed = Armed {
        slot: None,
        generation: 0,
        watchdog: None,
    };
    let Some(watchdog) = installed().and_then(Installed::watchdog) else {
        return unarmed;
    };
    let slot = OWNER.with(|owner| Arc::clone(&owner.0));
    if slot.generation.load(Ordering::Relaxed) != 0 {
        return unarmed;
    }
    // In a forked child, this thread's slot goes to the child's watchdog.
    watch_slot(watchdog, &slot);
    // No host call of ours is running here (this is an outermost guest
    // call): forget any count left by calls that ended inside one, on
    // their deadline, under another engine's epochs (they arm nothing, so
    // nothing reset it).
    slot.in_host.store(0, Ordering::Relaxed);
    slot.rewritten.store(0, Ordering::Relaxed);
    let generation = slot.last.load(Ordering::Relaxed) + 1;
    slot.last.store(generation, Ordering::Relaxed);
    let deadline = deadline.map_or(u64::MAX, nanos_since_start);
    slot.deadline.store(deadline, Ordering::Release);
    slot.ranges
        .store(ptr::from_ref(ranges).cast_mut(), Ordering::Release);
    slot.generation.store(generation, Ordering::SeqCst);
    if watchdog.armed.fetch_add(1, Ordering::SeqCst) == 0 && watchdog.parked.load(Ordering::SeqCst)
    {
        watchdog.thread.unpark();
    }
    Armed {
        slot: Some(slot),
        generation,
        watchdog: Some(watchdog),
    }
}

impl Armed {
    /// Whether the signal handler stopped this call's guest code.
    pub(crate) fn interrupted(&self) -> bool {
        self.slot
            .as_ref()
            .is_some_and(|s| s.fired.load(Ordering::Acquire) == self.generation)
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        let Some(slot) = self.slot.take() else {
            return;
        };
        slot.generation.store(0, Ordering::SeqCst);
        while slot.sending.load(Ordering::SeqCst) {
            std::hint::spin_loop();
        }
        slot.in_host.store(0, Ordering::Relaxed);
        slot.rewritten.store(0, Ordering::Relaxed);
        slot.ranges.store(ptr::null_mut(), Ordering::Release);
        if let Some(watchdog) = self.watchdog {
            watchdog.armed.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Interrupts a loop without memory accesses, once per process; the
/// outcome is cached.
fn self_test() -> Result<(), String> {
    static RESULT: OnceLock<Result<(), String>> = OnceLock::new();
    RESULT
        .get_or_init(|| {
            let run = || -> Result<(), String> {
                let mut config = wasmtime::Config::new();
                config.epoch_interruption(false);
                let engine = wasmtime::Engine::new(&config).map_err(|e| format!("{e:#}"))?;
                // About 2^33 iterations (seconds) if the signal never lands.
                let module = wasmtime::Module::new(
                    &engine,
                    r#"(module (func (export "spin") (param $n i64)
                         (loop $l (local.set $n (i64.sub (local.get $n) (i64.const 1)))
                                  (br_if $l (i64.ne (local.get $n) (i64.const 0))))))"#,
                )
                .map_err(|e| format!("{e:#}"))?;
                let ranges = CodeRanges::of(&module);
                let mut store = wasmtime::Store::new(&engine, ());
                let instance = wasmtime::Instance::new(&mut store, &module, &[])
                    .map_err(|e| format!("{e:#}"))?;
                let spin = instance
                    .get_typed_func::<i64, ()>(&mut store, "spin")
                    .map_err(|e| format!("{e:#}"))?;
                let started = Instant::now();
                let armed = arm(Instant::now().checked_add(Duration::from_millis(5)), &ranges);
                let result = spin.call(&mut store, 1 << 33);
                let interrupted = armed.interrupted();
                drop(armed);
                match result {
                    Err(e)
                        if interrupted
                            && e.downcast_ref::<wasmtime::Trap>()
                                == Some(&wasmtime::Trap::UnreachableCodeReached) =>
                    {
                        tracing::debug!(took = ?started.elapsed(), "deadline signal self-test passed");
                        Ok(())
                    }
                    Err(e) => Err(format!("the self-test loop failed otherwise: {e:#}")),
                    Ok(()) => Err("the self-test loop was not interrupted".into()),
                }
            };
            run()
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_contain_their_bodies_only() {
        let ranges = CodeRanges {
            ranges: vec![(10, 20), (30, 31)],
            text: (0, 40),
        };
        assert!(ranges.in_trampoline(25) && !ranges.in_trampoline(15));
        assert!(!ranges.in_trampoline(40));
        assert!(!ranges.contains(9));
        assert!(ranges.contains(10) && ranges.contains(19));
        assert!(!ranges.contains(20) && !ranges.contains(29));
        assert!(ranges.contains(30) && !ranges.contains(31));
        assert!(!CodeRanges::default().contains(0));
    }

    #[test]
    fn a_spinning_loop_is_interrupted() {
        install().unwrap();
    }

    /// A call that ends on its deadline inside a host call leaves that host
    /// call counted (under epochs nothing is armed to forget it): the next
    /// outermost call starts from zero, or the handler would never stop its
    /// builtins.
    #[test]
    fn an_outermost_call_forgets_host_calls_left_counted() {
        install().unwrap();
        let ranges = CodeRanges::default();
        drop(arm(None, &ranges));
        let slot = OWNER.with(|owner| Arc::clone(&owner.0));
        host_code_entered();
        host_code_entered();
        host_code_left();
        assert_eq!(slot.in_host.load(Ordering::Relaxed), 1);
        let armed = arm(None, &ranges);
        assert_eq!(slot.in_host.load(Ordering::Relaxed), 0);
        host_code_entered();
        assert_eq!(slot.in_host.load(Ordering::Relaxed), 1);
        drop(armed);
        assert_eq!(slot.in_host.load(Ordering::Relaxed), 0);
    }

    /// A thread interrupted on another stack (an alternate signal stack,
    /// where wasmtime's trap handler builds a backtrace) is left alone: no
    /// scan above its stack pointer, which here has an inaccessible page
    /// 64 bytes above it (the scan would fault, as it did under fuzzing).
    /// The other stack is a new mapping, below or above this thread's.
    #[test]
    fn no_scan_for_builtin_frames_outside_this_threads_stack() {
        let page = 4096;
        // SAFETY: a new private anonymous mapping; nothing else uses it.
        let base = unsafe {
            libc::mmap(
                ptr::null_mut(),
                2 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED);
        // SAFETY: the second page of the mapping made above.
        let protected =
            unsafe { libc::mprotect(base.cast::<u8>().add(page).cast(), page, libc::PROT_NONE) };
        assert_eq!(protected, 0);
        let stack = crate::stack::bounds().expect("this thread's stack");
        // The mapping lies below or above the stack, wherever mmap put it.
        let sp = base as usize + page - 64;
        assert!(
            sp < stack.0 || sp >= stack.1,
            "the mapping at {sp:#x} is inside this thread's stack {stack:x?}"
        );
        // SAFETY: `stack` is this thread's stack; `sp` is outside it, so
        // nothing is read.
        let hijacked = unsafe { hijack_builtin_return(sp, stack, &CodeRanges::default(), 0) };
        assert!(hijacked.is_none());
        // SAFETY: the mapping made above, no longer used.
        unsafe { libc::munmap(base, 2 * page) };
    }
}
