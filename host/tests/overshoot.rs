//! How far past a 1 s deadline a guest runs, measured and bounded, per
//! deadline mechanism: `loop {}` (stopped within a tick), and guests that
//! spend their time in huge bulk memory instructions (`memory.fill`,
//! `memory.copy` over the whole of a 256 MiB, 1 GiB or 4 GiB memory, each
//! call on a fresh instance, so that every page is touched for the first
//! time). The engine's series runs a bulk instruction in 1 MiB chunks with
//! a deadline check between them
//! (`vendor/wasmtime-internal-cranelift/CYXLA-PATCH.md`, "Bulk memory in
//! chunks"), so these stop within the same bound as loops: at most 50 ms
//! past the deadline (the median of three calls; any call within 250 ms,
//! for a machine whose other work delays the timer thread).
//!
//! One test, so that nothing else in this binary runs beside the
//! measurements. Run with `--nocapture` to see the figures.

mod common;

use std::time::Duration;

use common::*;
use plugin_glue::ErrorCode;

const DEADLINE: Duration = Duration::from_secs(1);
const TRIES: usize = 3;

/// A guest that grows its memory to `bytes` plus one page and then fills
/// `bytes` (or copies half of them) from address 65536 forever;
/// and `spin`.
fn bulk_guest(bytes: u64) -> String {
    let pages = bytes / 65536 + 1;
    let half = bytes / 2;
    let big = grow_to(pages);
    let funcs = format!(
        r#"
{big}
  (func $fill (memory.fill (i32.const 65536) (i32.const 7) (i32.const {bytes})))
  (func $copy (memory.copy (i32.const 65536) (i32.const {src}) (i32.const {half})))
  (func (export "fill_loop") (param i32) (result i32)
    (call $big) (loop $l (call $fill) (br $l)) (i32.const 0))
  (func (export "copy_loop") (param i32) (result i32)
    (call $big) (loop $l (call $copy) (br $l)) (i32.const 0))
  (func (export "spin") (param i32) (result i32) (loop $l (br $l)) (i32.const 0))
"#,
        // As i32 constants, which the instructions read as unsigned: 4 GiB
        // less 64 KiB is -65536.
        bytes = bytes as i64 as i32,
        src = (65536 + half) as i64 as i32,
        half = half as i64 as i32,
    );
    guest_wat(
        &funcs,
        &[
            ("fill_loop", "fill_loop"),
            ("copy_loop", "copy_loop"),
            ("spin", "spin"),
        ],
    )
}

/// Median and maximum of `d`.
fn median_max(mut d: Vec<Duration>) -> (Duration, Duration) {
    d.sort();
    (d[d.len() / 2], d[d.len() - 1])
}

/// Nanoseconds `target`'s calls have spent in guest code so far (the
/// statistics' time in the guest: from the call's entry into the guest to
/// wasmtime's return, trap included).
fn guest_ns(target: &str) -> u64 {
    cyxla_sandbox::stats::snapshot()
        .iter()
        .filter(|s| s.target == target)
        .map(|s| s.guest_ns)
        .sum()
}

/// Overshoots past [`DEADLINE`] of `TRIES` calls of `target`, each a
/// deadline error: how long the guest ran past it (until wasmtime
/// returned the trap), and how long the call took past it (the instance
/// set up before and dropped after included).
fn overshoots(sandbox: &cyxla_sandbox::Sandbox, target: &str) -> (Vec<Duration>, Vec<Duration>) {
    (0..TRIES)
        .map(|_| {
            let before = guest_ns(target);
            let (error, took) = timed_error(&handler(sandbox, target), &vector_call(&[1.0]));
            let ran = Duration::from_nanos(guest_ns(target) - before);
            assert_eq!(
                error.code,
                ErrorCode::DeadlineExceeded,
                "{target}: {}",
                error.message
            );
            assert!(
                error.message.contains("exceeded its deadline (1s)"),
                "{target}: {}",
                error.message
            );
            (ran.saturating_sub(DEADLINE), took.saturating_sub(DEADLINE))
        })
        .unzip()
}

#[test]
fn a_guest_stops_within_50ms_of_a_1s_deadline_in_loops_and_bulk_memory() {
    cyxla_sandbox::stats::enable_timing();
    for mechanism in interrupt_mechanisms() {
        // `loop {}`, default tick (10 ms).
        let mut limits = cyxla_sandbox::Limits::default();
        limits.interrupt = mechanism;
        limits.call_timeout = DEADLINE;
        let (_dir, sandbox) = sandbox_with(&[("b.wasm", wasm(&bulk_guest(1 << 20)))], limits);
        let (ran, took) = overshoots(&sandbox, "spin");
        let ((median, max), (_, call_max)) = (median_max(ran), median_max(took));
        eprintln!(
            "{mechanism:?} loop {{}}: ran past the deadline median {median:?}, max {max:?}; the call, max {call_max:?}"
        );
        assert!(
            max < Duration::from_millis(250),
            "{mechanism:?} loop {{}}: overshoot {max:?}"
        );
        drop(sandbox);

        // The largest: a 4 GiB memory, every page of it filled (copied:
        // half of it) by one instruction.
        for bytes in [256u64 << 20, 1 << 30, (4 << 30) - (64 << 10)] {
            let mut limits = cyxla_sandbox::Limits::default();
            limits.interrupt = mechanism;
            limits.call_timeout = DEADLINE;
            limits.memory = bytes + (64 << 10);
            limits.instances = 1;
            // Every call on a fresh instance: each one touches its memory
            // for the first time.
            limits.fresh_instances = true;
            let (_dir, sandbox) = sandbox_with(&[("b.wasm", wasm(&bulk_guest(bytes)))], limits);
            for (op, looping) in [("memory.fill", "fill_loop"), ("memory.copy", "copy_loop")] {
                let (ran, took) = overshoots(&sandbox, looping);
                let ((median, max), (call_median, call_max)) = (median_max(ran), median_max(took));
                eprintln!(
                    "{mechanism:?} {op} of {} MiB in a {} MiB memory: ran past the deadline median {median:?}, max {max:?}; the call (its fresh instance dropped after the trap) median {call_median:?}, max {call_max:?}",
                    if op == "memory.fill" {
                        bytes
                    } else {
                        bytes / 2
                    } >> 20,
                    (bytes + (64 << 10)) >> 20
                );
                assert!(
                    median <= Duration::from_millis(50) && max < Duration::from_millis(250),
                    "{mechanism:?} {op} of {bytes} bytes: ran past the deadline median {median:?}, max {max:?} \
                     (bound: 50 ms median, 250 ms each)"
                );
                // Dropping an instance whose memory is all touched frees
                // every page (about 40 ms a GiB here): bounded only
                // generously, to catch a call that does not end.
                assert!(
                    call_max < Duration::from_secs(5),
                    "{mechanism:?} {op} of {bytes} bytes: the call took {call_max:?} past its deadline"
                );
            }
        }
    }
}
