//! Signal deadlines that pass while a guest is inside a wasmtime builtin
//! (`memory.fill`, `memory.copy`, `memory.grow`), with Rust backtraces on.
//!
//! The deadline check around every builtin creates a `wasmtime::Error`,
//! which captures a Rust backtrace when `RUST_BACKTRACE` is set: the unwinder
//! then walks the builtin's frames and the guest's. Nothing may have touched
//! them (an earlier version rewrote the builtin's return address from the
//! signal handler, and this walk died of SIGSEGV). This file holds one test
//! so that it can set `RUST_BACKTRACE` before anything reads it.

mod common;

use std::time::{Duration, Instant};

use common::*;
use cyxla_host::limits::Interrupt;
use plugin_glue::ErrorCode;

const BUILTIN_LOOPS: &str = r#"
  (func $big
    (if (i32.lt_u (memory.size) (i32.const 1088))
      (then (drop (memory.grow (i32.sub (i32.const 1088) (memory.size)))))))
  (func (export "fill_64m") (param i32) (result i32)
    (call $big)
    (loop $l (memory.fill (i32.const 65536) (i32.const 7) (i32.const 67108864)) (br $l))
    (i32.const 0))
  (func (export "copy_32m") (param i32) (result i32)
    (call $big)
    (loop $l (memory.copy (i32.const 65536) (i32.const 33619968) (i32.const 33554432)) (br $l))
    (i32.const 0))
  (func (export "grow_loop") (param i32) (result i32)
    (loop $l (drop (memory.grow (i32.const 1))) (br $l))
    (i32.const 0))
"#;

#[test]
fn deadlines_inside_builtins_leave_their_frames_unwindable() {
    // SAFETY: the only test of this binary sets the variable before any
    // other thread runs or anything reads the environment.
    unsafe { std::env::set_var("RUST_BACKTRACE", "1") };
    let mut limits = test_limits();
    limits.interrupt = Interrupt::Signal;
    limits.call_timeout = Duration::from_millis(30);
    limits.memory_bytes = 128 << 20;
    let engine = cyxla_host::Engine::new(&limits).unwrap();
    assert_eq!(
        engine.interrupt(),
        Interrupt::Signal,
        "deadlines by signal are not available on this machine"
    );
    let targets = [
        ("b_fill", "fill_64m"),
        ("b_copy", "copy_32m"),
        ("b_grow", "grow_loop"),
        ("b_double", "double"),
    ];
    let wat = guest_wat(&format!("{HANDLERS} {BUILTIN_LOOPS}"), &targets);
    let (_dir, sandbox) = sandbox_with(&[("b.wasm", wasm(&wat))], limits);
    // The machine busy, as CI's is: the watchdog's signal then lands late
    // in a builtin's run rather than at its start (no load: the crash this
    // test guards against showed 0 times in 20 runs; two spinning threads
    // on two cores: every run).
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spinners: Vec<_> = (0..2)
        .map(|_| {
            let stop = std::sync::Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    let started = Instant::now();
    let mut calls = 0;
    for round in 0..40 {
        for target in ["b_fill", "b_copy", "b_grow"] {
            let (error, took) = timed_error(&handler(&sandbox, target), &vector_call(&[1.0]));
            // The grow loop reaches the memory limit in about 2 000 grows:
            // stopped after that, the call reports the refused growth
            // (RESOURCE_EXHAUSTED); on a machine slow enough that the 30 ms
            // deadline comes first, the deadline. Either is right here:
            // this test is about the frames the signal leaves behind.
            let expected: &[ErrorCode] = if target == "b_grow" {
                &[ErrorCode::ResourceExhausted, ErrorCode::DeadlineExceeded]
            } else {
                &[ErrorCode::DeadlineExceeded]
            };
            assert!(
                expected.contains(&error.code),
                "round {round} {target}: expected one of {expected:?}, got {:?}: {}",
                error.code,
                error.message
            );
            assert!(
                error.message.contains("exceeded its deadline"),
                "round {round} {target}: {}",
                error.message
            );
            assert!(
                took < Duration::from_secs(3),
                "round {round} {target}: {took:?}"
            );
            calls += 1;
        }
        run_double(&handler(&sandbox, "b_double"));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for spinner in spinners {
        spinner.join().unwrap();
    }
    eprintln!(
        "{calls} calls stopped inside builtins in {:?}",
        started.elapsed()
    );

    // Guest code that host code calls is guest code again: the guest's
    // `cyxla_alloc`, which `XLA_FFI_Error_GetMessage` calls for its copy of
    // the message, loops on `memory.fill` here. Inside that host function
    // the handler rewrites nothing, but inside the guest code it calls it
    // must, or the loop would run far past the deadline.
    let nested = guest_wat(&format!("{HANDLERS} {BUILTIN_LOOPS} {NESTED}"), &[
        ("n_fill", "fill_in_alloc"),
        ("n_double", "double"),
    ])
    .replacen("(module", &format!("(module {GET_MESSAGE}"), 1)
    .replacen(
        "(local $p i32) (local $end i32) (local $have i32)",
        "(local $p i32) (local $end i32) (local $have i32)
         (if (global.get $evil)
           (then (loop $l (memory.fill (i32.const 65536) (i32.const 7) (i32.const 268435456)) (br $l))))",
        1,
    );
    let mut limits = test_limits();
    limits.interrupt = Interrupt::Signal;
    limits.call_timeout = Duration::from_millis(30);
    limits.memory_bytes = 300 << 20;
    let (_dir2, nested_sandbox) = sandbox_with(&[("n.wasm", wasm(&nested))], limits);
    for round in 0..20 {
        let (error, took) = timed_error(&handler(&nested_sandbox, "n_fill"), &vector_call(&[1.0]));
        assert_eq!(
            error.code,
            ErrorCode::DeadlineExceeded,
            "round {round}: {}",
            error.message
        );
        assert!(took < Duration::from_secs(3), "round {round}: {took:?}");
        run_double(&handler(&nested_sandbox, "n_double"));
    }
}

/// `XLA_FFI_Error_GetMessage`, for [`NESTED`].
const GET_MESSAGE: &str = r#"
  (import "cyxla" "error_get_message" (func $error_get_message (param i32)))
"#;

/// `fill_in_alloc`: creates an error and asks for its message with the flag
/// `$evil` set, which makes `cyxla_alloc` (called by the host for the
/// message's copy) loop on `memory.fill`.
const NESTED: &str = r#"
  (global $evil (mut i32) (i32.const 0))
  (func (export "fill_in_alloc") (param i32) (result i32)
    (if (i32.lt_u (memory.size) (i32.const 4224))
      (then (drop (memory.grow (i32.sub (i32.const 4224) (memory.size))))))
    (i32.store (i32.const 2048) (i32.const 16))
    (i32.store (i32.const 2052) (i32.const 0))
    (i32.store (i32.const 2056) (i32.const 2100))
    (i32.store (i32.const 2060) (i32.const 3))
    (i32.store (i32.const 2080) (i32.const 16))
    (i32.store (i32.const 2084) (i32.const 0))
    (i32.store (i32.const 2088) (call $error_create (i32.const 2048)))
    (i32.store (i32.const 2092) (i32.const 0))
    (global.set $evil (i32.const 1))
    (call $error_get_message (i32.const 2080))
    (i32.const 0))
"#;
