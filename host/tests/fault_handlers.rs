//! Issue 33, item 1: a guest's trap stays a failed call whatever fault
//! handlers (SIGILL, SIGSEGV, SIGFPE) the process installs, before or after
//! cyxla's, and a fault outside guests still reaches them.
//!
//! Each case runs in a child process (this binary again, one ignored test),
//! since signal dispositions are process-wide and a failure kills the
//! process. A test binary of its own.

mod common;

use std::process::Command;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{
    assert_code, assert_message_contains, expect_error, full_guest, handler, run_double,
    sandbox_with, test_limits, vector_call,
};
use cyxla_sandbox::Sandbox;
use plugin_glue::ErrorCode;

const SIGNALS: [libc::c_int; 3] = [libc::SIGSEGV, libc::SIGILL, libc::SIGFPE];
const CHILD: &str = "CYXLA_FAULT_HANDLER_CHILD";
/// A foreign handler that ends the process (rather than re-raising) exits
/// with this code.
const FOREIGN_EXIT: i32 = 42;

/// The dispositions the foreign handler replaced, per signal.
static PREVIOUS: [AtomicUsize; 3] = [const { AtomicUsize::new(0) }; 3];
static PREVIOUS_ACTIONS: std::sync::Mutex<Vec<(libc::c_int, libc::sigaction)>> =
    std::sync::Mutex::new(Vec::new());
static FOREIGN_CALLS: AtomicUsize = AtomicUsize::new(0);

fn say(text: &str) {
    // SAFETY: write(2) of a valid buffer; async-signal-safe.
    unsafe { libc::write(2, text.as_ptr().cast(), text.len()) };
}

/// As Python's `faulthandler`: report, put back the handler it replaced,
/// raise the signal again (delivered at once: SA_NODEFER).
extern "C" fn reraising(signal: libc::c_int) {
    FOREIGN_CALLS.fetch_add(1, Ordering::SeqCst);
    say("foreign handler: fault\n");
    let i = SIGNALS.iter().position(|&s| s == signal).unwrap_or(0);
    let previous = PREVIOUS[i].load(Ordering::SeqCst) as *const libc::sigaction;
    // SAFETY: `previous` points at a leaked sigaction saved at install.
    unsafe {
        libc::sigaction(signal, previous, ptr::null_mut());
        libc::raise(signal);
    }
}

/// The bluntest: back to the default action, raise again.
extern "C" fn resetting(signal: libc::c_int) {
    FOREIGN_CALLS.fetch_add(1, Ordering::SeqCst);
    say("foreign handler: fault\n");
    // SAFETY: setting the default disposition, then raising.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

/// A crash reporter that ends the process itself.
extern "C" fn exiting(_signal: libc::c_int) {
    say("foreign handler: exiting\n");
    // SAFETY: _exit is async-signal-safe.
    unsafe { libc::_exit(FOREIGN_EXIT) };
}

fn install_foreign(handler: extern "C" fn(libc::c_int)) {
    for (i, &signal) in SIGNALS.iter().enumerate() {
        // SAFETY: a zeroed sigaction with a plain handler and SA_NODEFER
        // (faulthandler's flags); the old disposition goes to a leaked box.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as usize;
            action.sa_flags = libc::SA_NODEFER;
            libc::sigemptyset(&mut action.sa_mask);
            let old: &'static mut libc::sigaction = Box::leak(Box::new(std::mem::zeroed()));
            assert_eq!(libc::sigaction(signal, &action, &mut *old), 0);
            PREVIOUS_ACTIONS.lock().unwrap().push((signal, *old));
            PREVIOUS[i].store(ptr::from_mut(old) as usize, Ordering::SeqCst);
        }
    }
}

/// Puts back what [`install_foreign`] replaced (a foreign handler removed).
fn remove_foreign() {
    for (signal, old) in PREVIOUS_ACTIONS.lock().unwrap().drain(..) {
        // SAFETY: restoring a disposition the kernel reported.
        unsafe { libc::sigaction(signal, &old, ptr::null_mut()) };
    }
}

fn sandbox() -> (tempfile::TempDir, Sandbox) {
    sandbox_with(&[("full.wasm", full_guest("f_"))], test_limits())
}

/// Traps by SIGILL (`unreachable`) and SIGSEGV (a load past memory), then
/// a call that works.
fn traps_fail_their_calls(sandbox: &Sandbox) {
    let call = vector_call(&[1.0]);
    let error = expect_error(&handler(sandbox, "f_trap"), &call);
    assert_message_contains(&error, "unreachable");
    let error = expect_error(&handler(sandbox, "f_oob"), &call);
    assert_message_contains(&error, "out of bounds");
    run_double(&handler(sandbox, "f_double"));
}

/// Runs the ignored test `name` in a child process; its exit status.
///
/// The child is this binary again, run by `CYXLA_TEST_RUNNER` (a command
/// and its arguments, split at spaces) when that is set: an emulated
/// binary (scripts/aarch64.sh runs this one under qemu-aarch64 on x86-64,
/// without binfmt) cannot start itself.
fn in_child(name: &str) -> std::process::Output {
    let me = std::env::current_exe().unwrap();
    let runner = std::env::var("CYXLA_TEST_RUNNER").unwrap_or_default();
    let mut runner = runner.split_whitespace();
    let mut command = match runner.next() {
        Some(program) => {
            let mut command = Command::new(program);
            command.args(runner).arg(&me);
            command
        }
        None => Command::new(&me),
    };
    let out = command
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    eprintln!(
        "child {name}: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// `$test`, which runs the ignored test `$child` in a child process and
/// checks its output `$out` with `$check` (by default: it succeeded);
/// `$child` runs `$body` there (and nothing elsewhere).
macro_rules! child_case {
    ($(#[$doc:meta])* $test:ident, $child:ident $body:block) => {
        child_case! {
            $(#[$doc])*
            $test, $child, |out| {
                assert!(out.status.success());
            }
            $body
        }
    };
    ($(#[$doc:meta])* $test:ident, $child:ident, |$out:ident| $check:block $body:block) => {
        $(#[$doc])*
        #[test]
        fn $test() {
            let $out = in_child(stringify!($child));
            $check
        }

        #[test]
        #[ignore = concat!("run by ", stringify!($test))]
        fn $child() {
            if !is_child() {
                return;
            }
            $body
        }
    };
}

/// Faults outside guest code, on purpose: a write to address 0.
fn fault_outside_guests() -> ! {
    // SAFETY: none: this faults on purpose.
    unsafe { ptr::null_mut::<u8>().write_volatile(1) };
    unreachable!("the write to address 0 did not fault");
}

/// Time for a foreign installation to be seen: a few ticks of the deadline
/// timer (see `faults`).
fn settle() {
    std::thread::sleep(Duration::from_millis(50));
}

child_case! {
    a_trap_is_a_failed_call_under_a_reraising_handler_installed_after, child_reraising_after {
        let (_dir, sandbox) = sandbox();
        traps_fail_their_calls(&sandbox);
        install_foreign(reraising);
        settle();
        traps_fail_their_calls(&sandbox);
        traps_fail_their_calls(&sandbox);
        assert_eq!(FOREIGN_CALLS.load(Ordering::SeqCst), 0);
    }
}

child_case! {
    a_trap_is_a_failed_call_under_a_resetting_handler_installed_after, child_resetting_after {
        let (_dir, sandbox) = sandbox();
        run_double(&handler(&sandbox, "f_double"));
        install_foreign(resetting);
        settle();
        traps_fail_their_calls(&sandbox);
        assert_eq!(FOREIGN_CALLS.load(Ordering::SeqCst), 0);
    }
}

child_case! {
    a_trap_is_a_failed_call_under_a_handler_installed_before, child_reraising_before {
        install_foreign(reraising);
        let (_dir, sandbox) = sandbox();
        traps_fail_their_calls(&sandbox);
        assert_eq!(FOREIGN_CALLS.load(Ordering::SeqCst), 0);
    }
}

child_case! {
    /// Two foreign handlers after cyxla's, and a deadline.
    deadlines_and_traps_hold_under_two_handlers_installed_after, child_two_after {
        for mode in common::interrupt_mechanisms() {
            let mut limits = test_limits();
            limits.interrupt = mode;
            let (_dir, sandbox) = sandbox_with(&[("full.wasm", full_guest("f_"))], limits);
            traps_fail_their_calls(&sandbox);
            install_foreign(resetting);
            settle();
            traps_fail_their_calls(&sandbox);
            install_foreign(reraising);
            settle();
            traps_fail_their_calls(&sandbox);
            let error = expect_error(&handler(&sandbox, "f_spin"), &vector_call(&[1.0]));
            assert_code(&error, ErrorCode::DeadlineExceeded);
            run_double(&handler(&sandbox, "f_double"));
        }
        assert_eq!(FOREIGN_CALLS.load(Ordering::SeqCst), 0);
    }
}

child_case! {
    /// A fault outside guest code still reaches a handler installed after
    /// cyxla's, in a process that runs guests.
    a_fault_outside_guests_reaches_the_handler_installed_after, child_host_fault_after, |out| {
        assert_eq!(out.status.code(), Some(FOREIGN_EXIT));
    }
    {
        let (_dir, sandbox) = sandbox();
        traps_fail_their_calls(&sandbox);
        install_foreign(exiting);
        settle();
        traps_fail_their_calls(&sandbox);
        // the foreign handler exits
        fault_outside_guests();
    }
}

child_case! {
    /// A foreign handler that is removed (it puts back the handler it
    /// replaced, cyxla's) is not called again: a fault outside guests takes
    /// the default action, and traps still fail their calls.
    a_removed_handler_is_not_called_again, child_removed, |out| {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(libc::SIGSEGV));
        assert!(String::from_utf8_lossy(&out.stderr).contains("traps held after removal"));
    }
    {
        let (_dir, sandbox) = sandbox();
        run_double(&handler(&sandbox, "f_double"));
        install_foreign(exiting);
        settle();
        traps_fail_their_calls(&sandbox);
        remove_foreign();
        traps_fail_their_calls(&sandbox);
        settle();
        traps_fail_their_calls(&sandbox);
        say("traps held after removal\n");
        // the default action ends the process
        fault_outside_guests();
    }
}
