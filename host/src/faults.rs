//! Fault signals: guest traps stay guest traps whatever other handlers the
//! process installs (x86_64 and aarch64 Linux).
//!
//! Wasmtime turns a guest's fault (`unreachable` is a `ud2` on x86_64, a
//! `udf` on aarch64: SIGILL; an access past a linear memory or a poll-page
//! check past its deadline: SIGSEGV; a division by zero: SIGFPE on x86_64,
//! where `div` faults, a `udf` after an explicit check on aarch64) into a
//! trap with a process-wide handler for those signals, installed when the
//! first engine is made. A handler installed later for the same
//! signals (Python's `faulthandler.enable()`, absl's failure signal
//! handler, a profiler, a crash reporter) runs first. Most of them report
//! the fault, put back the handler they replaced and raise the signal
//! again; the raised signal no longer comes from guest code, wasmtime
//! passes it on to the default action and the process dies of a guest's
//! trap.
//!
//! So cyxla keeps a handler of its own in front of all of them (a *front*
//! handler). For a fault at a program counter in guest code, on a thread
//! running a guest call ([`enter_guest`]), it calls wasmtime's handler
//! directly; for any other fault it calls the handler it stands in front
//! of, which chains
//! on as it always did (wasmtime's chains to the handlers installed before
//! it). A foreign handler installed later is found by [`check`], which
//! puts a front handler back in front of it, chaining to it:
//!
//! - at the start of a guest call, at most once per tick of its engine's
//!   deadline timer (one comparison of the tick counter per call, no clock
//!   read; the check itself is three `sigaction` queries), and at the
//!   first call after the timer slept;
//! - on every tick of an engine's deadline timer, at most once per
//!   [`CHECK_EVERY`];
//! - when a guest's instance pool is made.
//!
//! **The window.** A foreign handler installed while guest calls run is
//! put behind a front handler within one timer tick; one installed while
//! the process runs no guest is, before the next guest code runs, unless
//! that code starts within the same tick. A guest that faults inside that
//! window meets the foreign handler first: one that chains to the handler
//! it replaced with the original context still ends as a failed call; one
//! that re-raises ends the process, as without cyxla.
//!
//! **Removal.** Each front handler is one of [`LEVELS`] functions, and
//! level `k + 1` is put in front of a foreign handler installed over level
//! `k`. A foreign handler that is removed puts back the handler it
//! replaced, the level below it, which chains to what that foreign handler
//! itself chained to: from then on the removed handler is never called,
//! with no window. Past [`LEVELS`] foreign installations the check gives
//! up (with an error in the log) and the newest foreign handler stays in
//! front.
//!
//! Disabling signal-based traps (`Config::signals_based_traps(false)`)
//! would avoid signals altogether, but it makes every memory access check
//! its bounds and requires turning off Cranelift's Spectre mitigations
//! for heap and table accesses: a slower and weaker sandbox.

use std::time::Instant;

#[cfg(all(
    any(target_arch = "x86_64", target_arch = "aarch64"),
    target_os = "linux"
))]
pub(crate) use imp::{check, enter_guest, install, leave_guest, poll};

/// Elsewhere: wasmtime's own handling, unchanged.
#[cfg(not(all(
    any(target_arch = "x86_64", target_arch = "aarch64"),
    target_os = "linux"
)))]
mod imp_elsewhere {
    use std::time::Instant;

    pub(crate) fn install() {}
    pub(crate) fn check() {}
    #[inline]
    pub(crate) fn poll(_now: Instant) {}
    #[inline]
    pub(crate) fn enter_guest(_text: (usize, usize)) -> (usize, usize) {
        (0, 0)
    }
    #[inline]
    pub(crate) fn leave_guest(_outer: (usize, usize)) {}
}
#[cfg(not(all(
    any(target_arch = "x86_64", target_arch = "aarch64"),
    target_os = "linux"
)))]
pub(crate) use imp_elsewhere::{check, enter_guest, install, leave_guest, poll};

/// How often (at most) a guest call starts with a [`check`].
pub(crate) const CHECK_EVERY: std::time::Duration = std::time::Duration::from_millis(1);

/// Front handler levels: how many foreign handlers installed after
/// cyxla's are put behind a front handler.
pub(crate) const LEVELS: usize = 8;

/// The time [`poll`] measures from.
fn origin() -> Instant {
    static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

#[cfg(all(
    any(target_arch = "x86_64", target_arch = "aarch64"),
    target_os = "linux"
))]
mod imp {
    use super::{CHECK_EVERY, LEVELS, origin};
    use std::cell::Cell;
    use std::ptr;
    use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
    use std::time::Instant;

    /// The signals wasmtime's trap handler takes on x86_64 Linux (its
    /// `foreach_handler`): a division by zero faults with SIGFPE there.
    #[cfg(target_arch = "x86_64")]
    const SIGNALS: [libc::c_int; 3] = [libc::SIGSEGV, libc::SIGILL, libc::SIGFPE];
    /// The signals wasmtime's trap handler takes on aarch64 Linux (its
    /// `foreach_handler`): `sdiv`/`udiv` do not fault, Cranelift checks the
    /// divisor and traps with `udf` (SIGILL), so wasmtime leaves SIGFPE alone
    /// and so does cyxla.
    #[cfg(target_arch = "aarch64")]
    const SIGNALS: [libc::c_int; 2] = [libc::SIGSEGV, libc::SIGILL];
    /// How many signals are handled.
    const N: usize = SIGNALS.len();

    fn index(signal: libc::c_int) -> Option<usize> {
        SIGNALS.iter().position(|&s| s == signal)
    }

    /// A disposition: handler address and flags (the mask does not matter
    /// to a handler called directly).
    struct Action {
        handler: AtomicUsize,
        flags: AtomicI32,
    }

    impl Action {
        const fn new() -> Action {
            Action {
                handler: AtomicUsize::new(libc::SIG_DFL),
                flags: AtomicI32::new(0),
            }
        }

        fn set(&self, action: &libc::sigaction) {
            self.flags.store(action.sa_flags, Ordering::Release);
            self.handler.store(action.sa_sigaction, Ordering::Release);
        }
    }

    #[expect(
        clippy::declare_interior_mutable_const,
        reason = "only used to initialise the arrays below"
    )]
    const NO_ACTION: Action = Action::new();
    #[expect(
        clippy::declare_interior_mutable_const,
        reason = "only used to initialise the arrays below"
    )]
    const NO_LEVELS: [Action; LEVELS] = [NO_ACTION; LEVELS];

    /// Wasmtime's trap handler, per signal.
    static WASMTIME: [Action; N] = [NO_ACTION; N];
    /// What front handler level `k` chains to, per signal.
    static CHAIN: [[Action; LEVELS]; N] = [NO_LEVELS; N];
    /// The level in front, per signal, as the last check saw it.
    static LEVEL: [AtomicUsize; N] = [const { AtomicUsize::new(0) }; N];
    /// Set once the front handlers are installed.
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    /// A check is running (reset in a forked child: the thread that ran
    /// it is gone).
    static CHECKING: AtomicBool = AtomicBool::new(false);
    /// When the next check is due, in nanoseconds since [`origin`].
    static NEXT_CHECK: AtomicU64 = AtomicU64::new(0);
    static GAVE_UP: AtomicBool = AtomicBool::new(false);

    thread_local! {
        /// The text (start, end) of the module whose guest call runs on
        /// this thread; (0, 0) outside guest calls. Const-initialised,
        /// without destructor: readable from a signal handler.
        static GUEST_TEXT: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
    }

    type Front = extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);

    const FRONTS: [Front; LEVELS] = [
        front::<0>, front::<1>, front::<2>, front::<3>, front::<4>, front::<5>, front::<6>,
        front::<7>,
    ];

    fn front_level(handler: usize) -> Option<usize> {
        FRONTS.iter().position(|&f| f as usize == handler)
    }

    /// Guest code of the module `text` runs on this thread until
    /// [`leave_guest`] with the value returned (the enclosing call's).
    #[inline]
    pub(crate) fn enter_guest(text: (usize, usize)) -> (usize, usize) {
        GUEST_TEXT.with(|t| t.replace(text))
    }

    /// The guest call [`enter_guest`] started is over.
    #[inline]
    pub(crate) fn leave_guest(outer: (usize, usize)) {
        GUEST_TEXT.with(|t| t.set(outer));
    }

    /// Checks the handlers if the last check was [`CHECK_EVERY`] ago.
    #[inline]
    pub(crate) fn poll(now: Instant) {
        let nanos =
            u64::try_from(now.saturating_duration_since(origin()).as_nanos()).unwrap_or(u64::MAX);
        if nanos >= NEXT_CHECK.load(Ordering::Relaxed) {
            due(nanos);
        }
    }

    #[cold]
    #[inline(never)]
    fn due(nanos: u64) {
        let every = u64::try_from(CHECK_EVERY.as_nanos()).unwrap_or(u64::MAX);
        NEXT_CHECK.store(nanos.saturating_add(every), Ordering::Relaxed);
        check();
    }

    /// Installs the front handlers in front of wasmtime's, once per
    /// process; call after a wasmtime engine with signal-based traps
    /// exists.
    pub(crate) fn install() {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            for (i, &signal) in SIGNALS.iter().enumerate() {
                let Some(current) = query(signal) else {
                    continue;
                };
                // Wasmtime's handler, installed by the engine just made.
                WASMTIME[i].set(&current);
                CHAIN[i][0].set(&current);
                if let Err(e) = put_front(signal, 0) {
                    tracing::warn!(signal, "cannot install cyxla's fault handler: {e}");
                }
            }
            INSTALLED.store(true, Ordering::Release);
            // SAFETY: `forked` only stores to atomics (async-signal-safe).
            unsafe { libc::pthread_atfork(None, None, Some(forked)) };
        });
    }

    extern "C" fn forked() {
        CHECKING.store(false, Ordering::Relaxed);
    }

    /// Puts a front handler in front of any foreign handler installed
    /// since the last check (see the module documentation).
    pub(crate) fn check() {
        if !INSTALLED.load(Ordering::Acquire)
            || CHECKING
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        for (i, &signal) in SIGNALS.iter().enumerate() {
            let Some(current) = query(signal) else {
                continue;
            };
            if let Some(level) = front_level(current.sa_sigaction) {
                // Ours (foreign handlers above `level`, if any, were
                // removed).
                LEVEL[i].store(level, Ordering::Relaxed);
                continue;
            }
            let level = LEVEL[i].load(Ordering::Relaxed) + 1;
            if level >= LEVELS {
                if !GAVE_UP.swap(true, Ordering::Relaxed) {
                    tracing::error!(
                        signal,
                        "{LEVELS} fault handlers were installed after cyxla's: the newest stays in front, and a guest trap it re-raises ends the process"
                    );
                }
                continue;
            }
            CHAIN[i][level].set(&current);
            match put_front(signal, level) {
                Ok(replaced) if replaced.sa_sigaction != current.sa_sigaction => {
                    // Installed between the query and ours: chain to it.
                    CHAIN[i][level].set(&replaced);
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(signal, "cannot put cyxla's fault handler back: {e}");
                    continue;
                }
            }
            LEVEL[i].store(level, Ordering::Relaxed);
            tracing::debug!(
                signal,
                level,
                "a fault handler was installed after cyxla's: cyxla's is in front of it again"
            );
        }
        CHECKING.store(false, Ordering::Release);
    }

    fn query(signal: libc::c_int) -> Option<libc::sigaction> {
        // SAFETY: querying (not changing) a disposition into a zeroed,
        // writable sigaction.
        unsafe {
            let mut current: libc::sigaction = std::mem::zeroed();
            (libc::sigaction(signal, ptr::null(), &mut current) == 0).then_some(current)
        }
    }

    /// Installs front handler `level` for `signal`; the disposition it
    /// replaced.
    fn put_front(signal: libc::c_int, level: usize) -> std::io::Result<libc::sigaction> {
        // SAFETY: a zeroed sigaction is "no flags, empty mask"; the handler
        // has the SA_SIGINFO signature and is async-signal-safe (`front`).
        // The flags are wasmtime's: SA_ONSTACK for faults on an exhausted
        // stack, SA_NODEFER so that a fault in a handler reaches the next.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = FRONTS[level] as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            let mut replaced: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, &action, &mut replaced) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(replaced)
        }
    }

    /// Whether the fault in `context` is at guest code of a guest call
    /// running on this thread. Async-signal-safe: a const TLS read and
    /// atomic loads.
    fn guest_fault(context: *mut libc::c_void) -> bool {
        if context.is_null() {
            return false;
        }
        // SAFETY: the kernel passes the interrupted thread's `ucontext_t`
        // as the third argument of an SA_SIGINFO handler, and `context` is
        // that argument (checked non-null above).
        let pc = unsafe { fault_pc(context.cast::<libc::ucontext_t>()) };
        let (start, end) = GUEST_TEXT.with(Cell::get);
        start != 0 && (start..end).contains(&pc)
    }

    /// The program counter at the fault: the faulting instruction's
    /// address (x86_64 reports SIGSEGV, SIGILL and SIGFPE at the
    /// instruction, not after it), where wasmtime looks for the trap too.
    ///
    /// # Safety
    ///
    /// `context` must point at the `ucontext_t` the kernel passed to the
    /// running SA_SIGINFO handler.
    #[cfg(target_arch = "x86_64")]
    unsafe fn fault_pc(context: *const libc::ucontext_t) -> usize {
        // SAFETY: the caller passes the kernel's `ucontext_t`; RIP is one
        // of its general registers (x86_64 `mcontext_t`).
        (unsafe { (*context).uc_mcontext.gregs })[libc::REG_RIP as usize] as usize
    }

    /// The program counter at the fault: the faulting instruction's
    /// address (aarch64 reports synchronous exceptions at the instruction:
    /// a `udf`, a load or store), where wasmtime looks for the trap too.
    ///
    /// # Safety
    ///
    /// `context` must point at the `ucontext_t` the kernel passed to the
    /// running SA_SIGINFO handler.
    #[cfg(target_arch = "aarch64")]
    unsafe fn fault_pc(context: *const libc::ucontext_t) -> usize {
        // SAFETY: the caller passes the kernel's `ucontext_t`; aarch64's
        // `mcontext_t` (`struct sigcontext`) holds the pc as a field.
        (unsafe { (*context).uc_mcontext.pc }) as usize
    }

    /// Front handler `K`: a guest's fault goes to wasmtime, anything else
    /// to what level `K` stands in front of. Async-signal-safe: no
    /// allocation, no lock, nothing that can panic.
    extern "C" fn front<const K: usize>(
        signal: libc::c_int,
        info: *mut libc::siginfo_t,
        context: *mut libc::c_void,
    ) {
        let Some(i) = index(signal) else {
            return;
        };
        let action = if guest_fault(context) {
            &WASMTIME[i]
        } else {
            &CHAIN[i][K.min(LEVELS - 1)]
        };
        // SAFETY: `action` holds a disposition the kernel reported for
        // `signal`; the arguments are the ones this handler received.
        unsafe { pass_on(action, signal, info, context) }
    }

    /// Calls `action` as the kernel would for `signal`. For the default or
    /// ignoring disposition, sets it and returns: a fault then happens
    /// again and takes that action (as wasmtime does).
    ///
    /// # Safety
    ///
    /// `action` must be a disposition the kernel reported; `info` and
    /// `context` the arguments of the running handler.
    unsafe fn pass_on(
        action: &Action,
        signal: libc::c_int,
        info: *mut libc::siginfo_t,
        context: *mut libc::c_void,
    ) {
        let handler = action.handler.load(Ordering::Acquire);
        let flags = action.flags.load(Ordering::Acquire);
        if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
            // SAFETY: a zeroed sigaction with the default or ignoring
            // disposition; sigaction is async-signal-safe.
            unsafe {
                let mut plain: libc::sigaction = std::mem::zeroed();
                plain.sa_sigaction = handler;
                libc::sigemptyset(&mut plain.sa_mask);
                libc::sigaction(signal, &plain, ptr::null_mut());
            }
        } else if flags & libc::SA_SIGINFO != 0 {
            // SAFETY: the kernel reported this address as an SA_SIGINFO
            // handler: a function of this signature.
            let f = unsafe { std::mem::transmute::<usize, Front>(handler) };
            f(signal, info, context);
        } else {
            // SAFETY: the kernel reported this address as a plain handler.
            let f = unsafe { std::mem::transmute::<usize, extern "C" fn(libc::c_int)>(handler) };
            f(signal);
        }
    }
}
