//! The default deadline mechanism, interrupted at a great many points: a
//! guest whose loop calls a wasm function (prologues and epilogues), WASI
//! and cyxla host functions, memory.grow, bulk memory and table operations
//! is stopped by a short deadline thousands of times, at whatever
//! instruction the timer finds it. Each time the process lives, the call
//! returns DEADLINE_EXCEEDED, and the next call is correct; nothing
//! accumulates (instances, memory). A test binary of its own: it measures
//! this process's memory.

mod common;

use std::time::{Duration, Instant};

use common::{
    HANDLERS, expect_error, guest_wat, handler, run_double, sandbox_with, test_limits, vector_call,
    wasm,
};
use cyxla_sandbox::limits::Interrupt;
use plugin_glue::ErrorCode;

/// Host functions the loop calls, beside the prelude's cyxla imports.
const IMPORTS: &str = r#"
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sched_yield" (func $sched_yield (result i32)))
"#;

const MIX: &str = r#"
  (table $tt 4 funcref)
  (func $callee (param i32) (result i32)
    (i32.add (local.get 0) (i32.const 1)))
  (func (export "mix") (param $f i32) (result i32)
    (local $i i32)
    ;; XLA_FFI_DeviceOrdinal_Get_Args at 4096 (wasm32): struct_size 16,
    ;; extension_start 0, ctx = the frame's (frame + 12).
    (i32.store (i32.const 4096) (i32.const 16))
    (i32.store (i32.const 4100) (i32.const 0))
    (i32.store (i32.const 4104) (i32.load (i32.add (local.get $f) (i32.const 12))))
    (loop $l
      (local.set $i (call $callee (local.get $i)))
      (drop (call $random_get (i32.const 2048) (i32.const 64)))
      (drop (call $sched_yield))
      (drop (call $device_ordinal_get (i32.const 4096)))
      (drop (memory.grow (i32.const 0)))
      (memory.fill (i32.const 2048) (local.get $i) (i32.const 1024))
      (memory.copy (i32.const 3072) (i32.const 2048) (i32.const 1024))
      (drop (table.grow $tt (ref.null func) (i32.const 0)))
      (drop (table.size $tt))
      (br $l))
    (i32.const 0))
"#;

fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn hammer(interrupt: Interrupt, calls: usize) {
    let mut limits = test_limits();
    limits.interrupt = interrupt;
    limits.call_timeout = Duration::from_millis(2);
    limits.tick = Duration::from_micros(500);
    let wat = guest_wat(
        &format!("{HANDLERS} {MIX}"),
        &[("m_mix", "mix"), ("m_double", "double")],
    );
    let wat = wat.replacen("(module", &format!("(module {IMPORTS}"), 1);
    let (_dir, sandbox) = sandbox_with(&[("m.wasm", wasm(&wat))], limits.clone());
    let interrupt = sandbox.guests().engine().interrupt();
    let mix = handler(&sandbox, "m_mix");
    let double = handler(&sandbox, "m_double");
    let call = vector_call(&[1.0]);
    let started = Instant::now();
    let mut rss_after_warmup = 0;
    for i in 0..calls {
        let error = expect_error(&mix, &call);
        assert_eq!(
            error.code,
            ErrorCode::DeadlineExceeded,
            "{interrupt:?} call {i}: {}",
            error.message
        );
        if i % 50 == 0 {
            run_double(&double);
            assert!(
                mix.live_instances() <= limits.instances,
                "{interrupt:?} call {i}"
            );
        }
        if i == calls / 10 {
            rss_after_warmup = resident_bytes();
        }
    }
    run_double(&double);
    let grew = resident_bytes().saturating_sub(rss_after_warmup);
    eprintln!(
        "{interrupt:?}: {calls} interrupted calls in {:?}; resident memory grew {} KiB after the first tenth",
        started.elapsed(),
        grew >> 10
    );
    assert!(
        grew < 64 << 20,
        "{interrupt:?}: resident memory grew {grew} bytes"
    );
    let stats = mix.stats();
    assert_eq!(
        (stats.calls, stats.deadlines),
        (calls as u64, calls as u64),
        "{stats:?}"
    );
}

#[test]
fn a_thousand_interrupts_at_random_points_of_calls_host_calls_and_builtins() {
    hammer(Interrupt::Poll, 1_000);
}
