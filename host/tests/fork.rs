//! Issue 33, item 2: deadlines hold in a forked child of a process that ran
//! guests (the child has none of its parent's threads: the deadline timer
//! starts again there). A test
//! binary of its own: it forks, and no other test may run beside it.

mod common;

use std::time::{Duration, Instant};

use common::{
    assert_code, expect_error, full_guest, handler, run_double, sandbox_with, test_limits,
    vector_call,
};
use plugin_glue::ErrorCode;

/// Far beyond the 300 ms deadline: only a hang takes this long.
const HANG: Duration = Duration::from_secs(60);

fn say(text: &str) {
    // SAFETY: write(2) of a valid buffer.
    unsafe { libc::write(2, text.as_ptr().cast(), text.len()) };
}

/// Waits for `child` for at most [`HANG`]; its wait status, or `None` (it
/// was killed) if it hung.
fn wait_or_kill(child: libc::pid_t) -> Option<libc::c_int> {
    let started = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: waiting for our own child, status into a local.
        let done = unsafe { libc::waitpid(child, &mut status, libc::WNOHANG) };
        if done == child {
            return Some(status);
        }
        if started.elapsed() > HANG {
            // SAFETY: killing and reaping our own child.
            unsafe {
                libc::kill(child, libc::SIGKILL);
                libc::waitpid(child, &mut status, 0);
            }
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_looping_guest_in_a_forked_child_meets_its_deadline() {
    for mode in common::interrupt_mechanisms() {
        let mut limits = test_limits();
        limits.interrupt = mode;
        let (_dir, sandbox) = sandbox_with(&[("full.wasm", full_guest("f_"))], limits);
        let spin = handler(&sandbox, "f_spin");
        let double = handler(&sandbox, "f_double");
        // The parent has run guests: its deadline threads exist, and are
        // busy or parked.
        run_double(&double);
        let error = expect_error(&spin, &vector_call(&[1.0]));
        assert_code(&error, ErrorCode::DeadlineExceeded);
        for wait in [Duration::ZERO, Duration::from_millis(1500)] {
            // Ticking, then parked (after its idle ticks).
            std::thread::sleep(wait);
            // SAFETY: the child only runs guest calls on this thread and
            // leaves with _exit.
            let child = unsafe { libc::fork() };
            assert!(child >= 0, "fork failed");
            if child == 0 {
                let started = Instant::now();
                let outcome = spin.call_host(&vector_call(&[1.0]));
                let took = started.elapsed();
                let code = match outcome {
                    Err(e) if e.code == ErrorCode::DeadlineExceeded => {
                        run_double(&double);
                        0
                    }
                    Err(e) => {
                        say(&format!("child: {mode:?}: wrong error: {e:?}\n"));
                        1
                    }
                    Ok(()) => 2,
                };
                say(&format!("child: {mode:?}: spin ended after {took:?}\n"));
                // SAFETY: leaves the child without running the parent's
                // destructors or the test harness.
                unsafe { libc::_exit(code) };
            }
            let status = wait_or_kill(child);
            let status = status.unwrap_or_else(|| {
                panic!("{mode:?}: the child's looping guest never met its deadline")
            });
            assert!(
                libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
                "{mode:?}: child ended with status {status:#x}"
            );
        }
        // The parent's deadlines still hold.
        let error = expect_error(&spin, &vector_call(&[1.0]));
        assert_code(&error, ErrorCode::DeadlineExceeded);
    }
}
