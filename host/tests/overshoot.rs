//! How far past a 1 s deadline a guest runs, measured and bounded, per
//! deadline mechanism: `loop {}` (stopped within a tick), and guests that
//! spend their time in one huge bulk memory instruction (`memory.fill`,
//! `memory.copy` over the whole of a 256 MiB or 1 GiB memory), which
//! deadline checks, placed between instructions, cannot cut short: such a guest
//! stops after the instruction it is in, so it overshoots by at most one
//! such instruction over at most its `memory` limit.
//!
//! One test, so that nothing else in this binary runs beside the
//! measurements. Run with `--nocapture` to see the figures.

mod common;

use std::time::{Duration, Instant};

use common::*;
use plugin_glue::ErrorCode;

const DEADLINE: Duration = Duration::from_secs(1);
const TRIES: usize = 3;

/// A guest that grows its memory to `bytes` plus one page and then fills
/// (or copies) `bytes` from address 65536, once or forever; and `spin`.
fn bulk_guest(bytes: u64) -> String {
    let pages = bytes / 65536 + 1;
    let half = bytes / 2;
    let big = grow_to(pages);
    let funcs = format!(
        r#"
{big}
  (func $fill (memory.fill (i32.const 65536) (i32.const 7) (i32.const {bytes})))
  (func $copy (memory.copy (i32.const 65536) (i32.const {src}) (i32.const {half})))
  (func (export "fill_once") (param i32) (result i32) (call $big) (call $fill) (i32.const 0))
  (func (export "fill_loop") (param i32) (result i32)
    (call $big) (loop $l (call $fill) (br $l)) (i32.const 0))
  (func (export "copy_once") (param i32) (result i32) (call $big) (call $copy) (i32.const 0))
  (func (export "copy_loop") (param i32) (result i32)
    (call $big) (loop $l (call $copy) (br $l)) (i32.const 0))
  (func (export "spin") (param i32) (result i32) (loop $l (br $l)) (i32.const 0))
"#,
        // As i32 constants: 1 GiB + 64 KiB fits.
        bytes = bytes as i64 as i32,
        src = (65536 + half) as i64 as i32,
        half = half as i64 as i32,
    );
    guest_wat(
        &funcs,
        &[
            ("fill_once", "fill_once"),
            ("fill_loop", "fill_loop"),
            ("copy_once", "copy_once"),
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

/// Overshoots past [`DEADLINE`] of `TRIES` calls of `target`, each a
/// deadline error.
fn overshoots(sandbox: &cyxla_host::Sandbox, target: &str) -> Vec<Duration> {
    (0..TRIES)
        .map(|_| {
            let (error, took) = timed_error(&handler(sandbox, target), &vector_call(&[1.0]));
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
            took.saturating_sub(DEADLINE)
        })
        .collect()
}

/// How long one call of `target` (one bulk instruction, memory grown
/// first) takes on a fresh instance, where the instruction also touches
/// every page for the first time: the longest one instruction takes.
fn one_instruction(sandbox: &cyxla_host::Sandbox, target: &str) -> Duration {
    let mut times = Vec::new();
    for _ in 0..TRIES {
        let started = Instant::now();
        handler(sandbox, target)
            .call_host(&vector_call(&[1.0]))
            .unwrap_or_else(|e| panic!("{target}: {}", e.message));
        times.push(started.elapsed());
    }
    times.into_iter().max().unwrap()
}

#[test]
fn a_guest_stops_within_a_tick_or_one_bulk_instruction_past_a_1s_deadline() {
    for mechanism in interrupt_mechanisms() {
        // `loop {}`, default tick (10 ms).
        let mut limits = cyxla_host::Limits::default();
        limits.interrupt = mechanism;
        limits.call_timeout = DEADLINE;
        let (_dir, sandbox) = sandbox_with(&[("b.wasm", wasm(&bulk_guest(1 << 20)))], limits);
        let (median, max) = median_max(overshoots(&sandbox, "spin"));
        eprintln!("{mechanism:?} loop {{}}: overshoot median {median:?}, max {max:?}");
        assert!(
            max < Duration::from_millis(250),
            "{mechanism:?} loop {{}}: overshoot {max:?}"
        );
        drop(sandbox);

        for bytes in [256u64 << 20, 1 << 30] {
            let mut limits = cyxla_host::Limits::default();
            limits.interrupt = mechanism;
            limits.call_timeout = DEADLINE;
            limits.memory = bytes + (64 << 10);
            limits.instances = 1;
            // Every call on a fresh instance: each one touches its memory
            // for the first time, as the looping calls do.
            limits.fresh_instances = true;
            let (_dir, sandbox) = sandbox_with(&[("b.wasm", wasm(&bulk_guest(bytes)))], limits);
            for (op, once, looping) in [
                ("memory.fill", "fill_once", "fill_loop"),
                ("memory.copy", "copy_once", "copy_loop"),
            ] {
                let one = one_instruction(&sandbox, once);
                let (median, max) = median_max(overshoots(&sandbox, looping));
                eprintln!(
                    "{mechanism:?} {op} of {} MiB: one call of one instruction (fresh memory) takes up to {one:?}; overshoot median {median:?}, max {max:?}",
                    if op == "memory.fill" {
                        bytes
                    } else {
                        bytes / 2
                    } >> 20
                );
                // At most one instruction (the one running at the
                // deadline), plus a tick and scheduling slack.
                assert!(
                    max < one + Duration::from_millis(250),
                    "{mechanism:?} {op} of {bytes} bytes: overshoot {max:?}, one instruction {one:?}"
                );
            }
        }
    }
}
