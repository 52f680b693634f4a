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
            let call_started = Instant::now();
            let error = expect_error(&handler(&sandbox, target), &vector_call(&[1.0]));
            let took = call_started.elapsed();
            let expected = if target == "b_grow" {
                ErrorCode::ResourceExhausted
            } else {
                ErrorCode::DeadlineExceeded
            };
            assert_eq!(
                error.code, expected,
                "round {round} {target}: {}",
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
}
