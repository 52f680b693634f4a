//! A sampling profiler beside deadlines: a 50 µs `ITIMER_PROF` whose
//! `SIGPROF` handler walks the interrupted stack with the system unwinder
//! (`_Unwind_Backtrace`, as profilers do), while a guest loops on
//! `memory.fill` under 1 ms deadlines, 2000 times. Every call ends with
//! DEADLINE_EXCEEDED, the process lives, and the handler walked hundreds
//! of stacks (the kernel fires the timer at most once per scheduler tick,
//! 1-4 ms, whatever the period asked for). Poll-page deadlines leave every frame as the
//! compiler made it; the removed signal mechanism rewrote a builtin's
//! return address, which such a walk could meet. A test binary of its own:
//! the timer is process-wide.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use common::*;
use plugin_glue::ErrorCode;

const CALLS: u64 = 2000;

/// Stacks the handler walked, and frames it saw in all.
static WALKS: AtomicU64 = AtomicU64::new(0);
static FRAMES: AtomicU64 = AtomicU64::new(0);

#[repr(C)]
struct UnwindContext {
    _private: [u8; 0],
}

type Trace = extern "C" fn(*mut UnwindContext, *mut libc::c_void) -> libc::c_int;

unsafe extern "C" {
    /// libgcc's unwinder (linked into every Rust program on Linux).
    fn _Unwind_Backtrace(trace: Trace, arg: *mut libc::c_void) -> libc::c_int;
}

/// `_URC_NO_REASON`: go on to the next frame.
const NO_REASON: libc::c_int = 0;
/// `_URC_END_OF_STACK`-like stop: enough frames.
const STOP: libc::c_int = 5;

extern "C" fn count_frame(_ctx: *mut UnwindContext, arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the counter `on_sigprof` passed, on its stack.
    let n = unsafe { &mut *arg.cast::<u64>() };
    *n += 1;
    if *n >= 128 { STOP } else { NO_REASON }
}

extern "C" fn on_sigprof(_signal: libc::c_int) {
    let mut frames: u64 = 0;
    // SAFETY: `count_frame` matches the callback type and only touches the
    // counter passed to it, which outlives the walk.
    unsafe { _Unwind_Backtrace(count_frame, (&raw mut frames).cast()) };
    WALKS.fetch_add(1, Ordering::Relaxed);
    FRAMES.fetch_add(frames, Ordering::Relaxed);
}

/// Sets `ITIMER_PROF` to `period` (zero: off).
fn profile_every(period: Duration) {
    let interval = libc::timeval {
        tv_sec: 0,
        tv_usec: libc::suseconds_t::try_from(period.as_micros()).unwrap(),
    };
    let timer = libc::itimerval {
        it_interval: interval,
        it_value: interval,
    };
    // SAFETY: a valid itimerval; no old value is asked for.
    let set = unsafe { libc::setitimer(libc::ITIMER_PROF, &timer, std::ptr::null_mut()) };
    assert_eq!(set, 0, "setitimer");
}

#[test]
fn a_sampling_profiler_walks_stacks_while_deadlines_stop_memory_fill_loops() {
    // The handler's walk takes the unwinder's lock, so it must not
    // interrupt a walk of the thread's own: with `RUST_BACKTRACE` set, every
    // deadline's wasmtime error captures a backtrace, and a signal landing
    // in that capture deadlocks the thread. (Profilers that sample this way
    // carry the same hazard; cyxla captures no backtrace of its own.)
    // SAFETY: no other thread reads or writes the environment: this binary
    // holds this one test, and it starts no thread before this line.
    unsafe { std::env::set_var("RUST_LIB_BACKTRACE", "0") };
    // SAFETY: a zeroed sigaction is "no flags, empty mask"; the handler is
    // an `extern "C" fn(c_int)`, and it only walks the stack and adds to
    // atomics (SA_RESTART: interrupted system calls go on).
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigprof as *const () as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        assert_eq!(
            libc::sigaction(libc::SIGPROF, &action, std::ptr::null_mut()),
            0
        );
    }
    let mut limits = test_limits();
    limits.call_timeout = Duration::from_millis(1);
    limits.tick = Duration::from_micros(200);
    limits.memory = 2 << 20;
    let fill = r#"
  (func (export "fill_loop") (param i32) (result i32)
    (loop $l (memory.fill (i32.const 65536) (i32.const 7) (i32.const 65536)) (br $l))
    (i32.const 0))
"#;
    let wat = guest_wat(
        &format!("{HANDLERS} {fill}"),
        &[("p_fill", "fill_loop"), ("p_double", "double")],
    );
    let (_dir, sandbox) = sandbox_with(&[("p.wasm", wasm(&wat))], limits);
    let looping = handler(&sandbox, "p_fill");
    profile_every(Duration::from_micros(50));
    for i in 0..CALLS {
        let error = expect_error(&looping, &vector_call(&[1.0]));
        assert_eq!(
            error.code,
            ErrorCode::DeadlineExceeded,
            "call {i}: {}",
            error.message
        );
    }
    profile_every(Duration::ZERO);
    run_double(&handler(&sandbox, "p_double"));
    let (walks, frames) = (
        WALKS.load(Ordering::Relaxed),
        FRAMES.load(Ordering::Relaxed),
    );
    eprintln!("{CALLS} calls; {walks} stacks walked, {frames} frames");
    assert!(walks >= 100, "only {walks} samples in {CALLS} calls");
    let stats = looping.stats();
    assert_eq!((stats.calls, stats.deadlines), (CALLS, CALLS), "{stats:?}");
}
