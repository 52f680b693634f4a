//! Deadlines do not depend on signals reaching the calling thread: a thread
//! that blocks every signal it may block (all but the synchronous fault
//! signals, which wasmtime's traps need) still has its looping guest stopped
//! within the deadline plus 50 ms, and no signal is queued for it (`SigQ` in
//! `/proc/self/status` stays flat). Runtimes that block real-time signals on
//! their threads do exactly this; the removed signal mechanism ended such a
//! call seconds late. A test binary of its own: nothing runs beside the
//! timing.

mod common;

use std::time::Duration;

use common::*;
use plugin_glue::ErrorCode;

/// The queued-signal count of this process's user (`SigQ: queued/limit`).
fn queued_signals() -> u64 {
    let value = proc_status("SigQ");
    value
        .split('/')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("unreadable SigQ: {value}"))
}

/// Blocks every signal on this thread but the fault signals, and returns
/// the mask it had.
fn block_asynchronous_signals() -> libc::sigset_t {
    // SAFETY: both sets are initialised by sigfillset/sigemptyset before
    // use; pthread_sigmask only changes this thread's mask and writes the
    // old one into `old`.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        for fault in [
            libc::SIGSEGV,
            libc::SIGILL,
            libc::SIGBUS,
            libc::SIGFPE,
            libc::SIGTRAP,
        ] {
            libc::sigdelset(&mut set, fault);
        }
        assert_eq!(
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old),
            0,
            "pthread_sigmask"
        );
        old
    }
}

/// Whether `signal` is blocked on this thread now.
fn blocked(signal: libc::c_int) -> bool {
    // SAFETY: `now` is written by pthread_sigmask (a null new set only
    // reads the mask) before sigismember reads it.
    unsafe {
        let mut now: libc::sigset_t = std::mem::zeroed();
        assert_eq!(
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut now),
            0
        );
        libc::sigismember(&now, signal) == 1
    }
}

#[test]
fn a_thread_blocking_every_asynchronous_signal_meets_its_deadline() {
    let mut limits = test_limits();
    limits.call_timeout = Duration::from_millis(300);
    let deadline = limits.call_timeout;
    let (_dir, sandbox) = sandbox_with(&[("full.wasm", full_guest("f_"))], limits);
    // Once on this thread with nothing blocked, so that the engine's own
    // threads (the deadline timer) are started with the test's usual mask.
    run_double(&handler(&sandbox, "f_double"));
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let _old = block_asynchronous_signals();
                assert!(blocked(libc::SIGRTMIN()) && blocked(libc::SIGRTMAX()));
                assert!(blocked(libc::SIGALRM) && blocked(libc::SIGPROF));
                let before = queued_signals();
                let spin = handler(&sandbox, "f_spin");
                for i in 0..5 {
                    let (error, took) = timed_error(&spin, &vector_call(&[1.0]));
                    assert_code(&error, ErrorCode::DeadlineExceeded);
                    eprintln!("call {i}: DEADLINE_EXCEEDED after {took:?}");
                    assert!(
                        took >= deadline && took < deadline + Duration::from_millis(50),
                        "call {i}: {took:?} for a {deadline:?} deadline"
                    );
                }
                run_double(&handler(&sandbox, "f_double"));
                let after = queued_signals();
                assert!(
                    after <= before,
                    "signals queued for this user grew from {before} to {after}"
                );
            })
            .join()
            .expect("the blocking thread");
    });
}
