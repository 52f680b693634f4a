//! A guest alternating calls k functions deep with a 32 MiB `memory.copy`,
//! for k = 1..64, under 1 ms deadlines: each call ends with
//! DEADLINE_EXCEEDED, past its deadline by at most two copies (the one
//! running at the deadline, and a tick's and the scheduler's slack within
//! the second; plus 25 ms for the timer thread on a loaded machine),
//! whatever the depth the deadline finds it at. The removed
//! signal mechanism found builtin frames by scanning the stack, where the
//! words of deeper earlier calls lay; poll-page checks look at no stack. A test
//! binary of its own: nothing runs beside the timing.

mod common;

use std::time::{Duration, Instant};

use common::*;
use plugin_glue::ErrorCode;

const COPY: u32 = 32 << 20;

/// `deep(k)` recurses k levels; `copy` copies 32 MiB once; `loop_deep`
/// repeats `deep(k); copy` forever, k the first element of its operand.
fn deep_guest() -> String {
    let pages = (2 * u64::from(COPY) + (64 << 10)) / 65536 + 1;
    let big = grow_to(pages);
    let funcs = format!(
        r#"
{big}
  (func $deep (param $k i32) (result i32)
    (if (result i32) (i32.le_s (local.get $k) (i32.const 0))
      (then (i32.const 0))
      (else (i32.add (call $deep (i32.sub (local.get $k) (i32.const 1))) (i32.const 1)))))
  (func $copy (memory.copy (i32.const 65536) (i32.const {src}) (i32.const {COPY})))
  (func (export "copy_once") (param i32) (result i32) (call $big) (call $copy) (i32.const 0))
  (func (export "loop_deep") (param $f i32) (result i32)
    (local $k i32)
    (local.set $k (i32.trunc_f32_s (f32.load (call $in (local.get $f)))))
    (call $big)
    (loop $l (drop (call $deep (local.get $k))) (call $copy) (br $l))
    (i32.const 0))
"#,
        src = 65536 + COPY,
    );
    guest_wat(
        &funcs,
        &[("copy_once", "copy_once"), ("loop_deep", "loop_deep")],
    )
}

#[test]
fn deep_calls_and_32mib_copies_overrun_1ms_deadlines_by_at_most_two_copies() {
    let mut limits = test_limits();
    limits.call_timeout = Duration::from_millis(1);
    limits.instantiate_timeout = Duration::from_secs(2);
    limits.tick = Duration::from_micros(200);
    limits.memory = 2 * u64::from(COPY) + (256 << 10);
    limits.instances = 1;
    let deadline = limits.call_timeout;
    let (_dir, sandbox) = sandbox_with(&[("d.wasm", wasm(&deep_guest()))], limits.clone());
    // One copy on a fresh instance (its pages touched for the first time),
    // timed under a generous deadline: the longest one copy takes.
    let mut generous = limits;
    generous.call_timeout = Duration::from_secs(2);
    generous.fresh_instances = true;
    let (_dir2, timing) = sandbox_with(&[("d.wasm", wasm(&deep_guest()))], generous);
    let copy = (0..3)
        .map(|_| {
            let started = Instant::now();
            handler(&timing, "copy_once")
                .call_host(&vector_call(&[0.0]))
                .unwrap_or_else(|e| panic!("copy_once: {}", e.message));
            started.elapsed()
        })
        .max()
        .unwrap();
    let looping = handler(&sandbox, "loop_deep");
    let mut worst = Duration::ZERO;
    for k in 1..=64 {
        let (error, took) = timed_error(&looping, &vector_call(&[k as f32]));
        assert_eq!(
            error.code,
            ErrorCode::DeadlineExceeded,
            "k = {k}: {}",
            error.message
        );
        let overrun = took.saturating_sub(deadline);
        worst = worst.max(overrun);
        // Two copies, and 25 ms for the timer thread to be scheduled on a
        // loaded machine (2 cores beside a release build: 110 ms once,
        // with copies of 55 ms).
        assert!(
            overrun < 2 * copy + Duration::from_millis(25),
            "k = {k}: overran its {deadline:?} deadline by {overrun:?}; one copy takes up to {copy:?}"
        );
    }
    eprintln!(
        "one 32 MiB copy on fresh memory: up to {copy:?}; worst overrun of 64 calls: {worst:?}"
    );
    let stats = looping.stats();
    assert_eq!((stats.calls, stats.deadlines), (64, 64), "{stats:?}");
}
