//! Guests run with wasm's float semantics whatever the calling thread's
//! float mode (`docs/abi.md`, "Floating point").
//!
//! XLA's CPU threads run with MXCSR's flush-to-zero (FTZ) and
//! denormals-are-zero (DAZ) bits set. A guest called from such a thread
//! must still produce and read subnormals as wasm specifies, bit for bit
//! what it gives on a thread in the default mode (replay, tests, other
//! engines), and the thread must have its own mode back after the call,
//! however the call ends. Each guest call is made through the same path as
//! XLA's calls (a `GuestHandler`), on a thread whose MXCSR the test sets.
//! The guest computes from operands in memory (never from constants, which
//! the compiler could fold without the CPU's mode), in the handler, in
//! `_initialize` and in `cyxla_last_panic` (run after a trap).

#![cfg(target_arch = "x86_64")]

use crate::common;

use std::hint::black_box;

use common::*;
use cyxla_sandbox::{AllowList, HostBuffer, HostCall, Sandbox};
use plugin_glue::{DType, ErrorCode};

/// MXCSR's control bits (the low six are sticky status flags).
const CONTROL: u32 = 0xFFC0;
/// The default MXCSR: every exception masked, round to nearest.
const DEFAULT: u32 = 0x1F80;
/// Flush-to-zero (bit 15) and denormals-are-zero (bit 6), as on XLA's
/// threads.
const FTZ_DAZ: u32 = 0x8040;

/// The operands, at these offsets of a 48-byte buffer: f32 `a`, `b`
/// (normal; `a × b` is subnormal), `s` (subnormal), `z` (+0) at 0, 4, 8,
/// 12; f64 `a`, `b`, `s`, `z` at 16, 24, 32, 40.
const A32: f32 = 1e-30;
const B32: f32 = 1e-10;
const S32: f32 = 1e-40;
const A64: f64 = 1e-300;
const B64: f64 = 1e-10;
const S64: f64 = 1e-310;

fn operands() -> Vec<u8> {
    let mut bytes = Vec::with_capacity(48);
    for x in [A32, B32, S32, 0.0] {
        bytes.extend(x.to_le_bytes());
    }
    for x in [A64, B64, S64, 0.0] {
        bytes.extend(x.to_le_bytes());
    }
    bytes
}

/// Where the guest's data segment holds [`operands`], and where
/// `_initialize` leaves its results.
const INIT_OPERANDS: u32 = 4096;
const INIT_RESULTS: u32 = 4160;

/// Handlers (besides [`HANDLERS`]): `subnormals` computes, from its 48-byte
/// operand, `a × b` and `s + z` in f32 then f64 into its 24-byte result;
/// `initialized` copies out what `_initialize` computed the same way from
/// the data segment; `panic` traps, after which `cyxla_last_panic` reports
/// whether the f32 `a × b` it computes is 0.
fn funcs() -> String {
    let data: String = operands().iter().map(|b| format!("\\{b:02x}")).collect();
    format!(
        r#"
  {HANDLERS}
  ;; a*b and s+z, f32 then f64, from the 48 bytes at $in to the 24 at $out.
  (func $compute (param $in i32) (param $out i32)
    (f32.store (local.get $out)
      (f32.mul (f32.load (local.get $in)) (f32.load offset=4 (local.get $in))))
    (f32.store offset=4 (local.get $out)
      (f32.add (f32.load offset=8 (local.get $in)) (f32.load offset=12 (local.get $in))))
    (f64.store offset=8 (local.get $out)
      (f64.mul (f64.load offset=16 (local.get $in)) (f64.load offset=24 (local.get $in))))
    (f64.store offset=16 (local.get $out)
      (f64.add (f64.load offset=32 (local.get $in)) (f64.load offset=40 (local.get $in)))))
  (func (export "subnormals") (param $f i32) (result i32)
    (call $compute (call $in (local.get $f)) (call $out (local.get $f)))
    (i32.const 0))
  (func (export "_initialize")
    (call $compute (i32.const {INIT_OPERANDS}) (i32.const {INIT_RESULTS})))
  (func (export "initialized") (param $f i32) (result i32)
    (memory.copy (call $out (local.get $f)) (i32.const {INIT_RESULTS}) (i32.const 24))
    (i32.const 0))
  ;; Traps as a panicking SDK guest does: message first.
  (global $panicked (mut i32) (i32.const 0))
  (func (export "panic") (param i32) (result i32)
    (global.set $panicked (i32.const 1))
    (unreachable))
  (func (export "cyxla_last_panic") (result i32)
    (if (i32.eqz (global.get $panicked)) (then (return (i32.const 0))))
    (if (result i32)
      (f32.eq (f32.mul (f32.load (i32.const {INIT_OPERANDS}))
                       (f32.load offset=4 (i32.const {INIT_OPERANDS})))
              (f32.const 0))
      (then (i32.const 4240))
      (else (i32.const 4200))))
  (data (i32.const {INIT_OPERANDS}) "{data}")
  (data (i32.const 4200) "subnormal kept\00")
  (data (i32.const 4240) "subnormal flushed\00")
"#
    )
}

/// The 24 result bytes wasm specifies: IEEE arithmetic with subnormals,
/// computed here on the test's thread, which runs in the default mode
/// (checked), and checked to be the subnormals the test is about.
fn expected() -> Vec<u8> {
    assert_eq!(mxcsr() & CONTROL, DEFAULT, "the test thread's own mode");
    let mul32 = black_box(A32) * black_box(B32);
    let add32 = black_box(S32) + black_box(0.0f32);
    let mul64 = black_box(A64) * black_box(B64);
    let add64 = black_box(S64) + black_box(0.0f64);
    assert!(
        mul32.is_subnormal() && add32.is_subnormal(),
        "{mul32:e} {add32:e}"
    );
    assert!(
        mul64.is_subnormal() && add64.is_subnormal(),
        "{mul64:e} {add64:e}"
    );
    assert_eq!(add32.to_bits(), S32.to_bits());
    assert_eq!(add64.to_bits(), S64.to_bits());
    let mut bytes = Vec::with_capacity(24);
    bytes.extend(mul32.to_le_bytes());
    bytes.extend(add32.to_le_bytes());
    bytes.extend(mul64.to_le_bytes());
    bytes.extend(add64.to_le_bytes());
    bytes
}

/// This thread's MXCSR.
fn mxcsr() -> u32 {
    let mut csr = 0u32;
    // SAFETY: `stmxcsr` stores MXCSR into `csr`, a live local.
    unsafe {
        std::arch::asm!(
            "stmxcsr [{csr}]",
            csr = in(reg) &raw mut csr,
            options(nostack, preserves_flags),
        );
    }
    csr
}

/// Sets this thread's MXCSR.
fn set_mxcsr(csr: u32) {
    // SAFETY: `ldmxcsr` loads MXCSR from `csr`, a live local; the values
    // the tests pass have no reserved bit set. Only the test's own thread
    // runs in the mode, which it resets before it ends.
    unsafe {
        std::arch::asm!(
            "ldmxcsr [{csr}]",
            csr = in(reg) &raw const csr,
            options(nostack, preserves_flags, readonly),
        );
    }
}

/// What the calls made on one thread gave.
#[derive(Debug)]
struct Seen {
    /// The result of `subnormals`.
    call: Vec<u8>,
    /// The result of `initialized`.
    init: Vec<u8>,
    /// The message of the trap (with `cyxla_last_panic`'s).
    trap: String,
    /// MXCSR's control bits after the successful calls, after the trap and
    /// after the deadline.
    after_calls: u32,
    after_trap: u32,
    after_deadline: u32,
}

/// On a new thread whose MXCSR is `mode`: loads the guest (its trial
/// instantiation runs `_initialize` on this thread), calls `subnormals`
/// and `initialized` (the first call makes the instance: `_initialize`
/// again), then a trap and a deadline, reading MXCSR after each.
fn calls_on_a_thread_in(mode: u32) -> Seen {
    let wasm = wasm(&guest_wat(
        &funcs(),
        &[
            ("subnormals", "subnormals"),
            ("initialized", "initialized"),
            ("panic", "panic"),
            ("spin", "spin"),
        ],
    ));
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "floats.wasm", &wasm);
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                set_mxcsr(mode);
                let sandbox = Sandbox::new(dir.path(), AllowList::all(), test_limits()).unwrap();
                let run = |target: &str, operand: Vec<u8>| {
                    let n = i64::try_from(operand.len()).unwrap();
                    let call = HostCall::new()
                        .arg(HostBuffer::new(DType::U8, &[n], operand))
                        .ret(HostBuffer::zeros(DType::U8, &[24]));
                    handler(&sandbox, target)
                        .call_host(&call)
                        .map(|()| call.result(0).bytes())
                };
                let call = run("subnormals", operands()).unwrap();
                let init = run("initialized", vec![0; 4]).unwrap();
                let after_calls = mxcsr() & CONTROL;

                let trap = run("panic", vec![0; 4]).unwrap_err();
                let after_trap = mxcsr() & CONTROL;
                assert_code(&trap, ErrorCode::Internal);

                let deadline = run("spin", vec![0; 4]).unwrap_err();
                let after_deadline = mxcsr() & CONTROL;
                assert_code(&deadline, ErrorCode::DeadlineExceeded);

                set_mxcsr(DEFAULT);
                Seen {
                    call,
                    init,
                    trap: trap.message,
                    after_calls,
                    after_trap,
                    after_deadline,
                }
            })
            .join()
            .unwrap()
    })
}

/// Fails unless `seen` has wasm's results and the thread's `mode` back after
/// every call.
#[track_caller]
fn assert_wasm_semantics(seen: &Seen, mode: u32) {
    let expected = expected();
    assert_eq!(
        seen.call, expected,
        "the handler's results (f32 a×b, s+z, f64 a×b, s+z)"
    );
    assert_eq!(seen.init, expected, "what `_initialize` computed");
    assert!(
        seen.trap.contains("the guest panicked: subnormal kept"),
        "{}",
        seen.trap
    );
    assert_eq!(
        seen.after_calls, mode,
        "MXCSR after the calls: {:#x}",
        seen.after_calls
    );
    assert_eq!(
        seen.after_trap, mode,
        "MXCSR after a trap: {:#x}",
        seen.after_trap
    );
    assert_eq!(
        seen.after_deadline, mode,
        "MXCSR after a deadline: {:#x}",
        seen.after_deadline
    );
}

#[test]
fn guest_keeps_subnormals_on_an_ftz_daz_thread() {
    let mode = DEFAULT | FTZ_DAZ;
    let seen = calls_on_a_thread_in(mode);
    assert_wasm_semantics(&seen, mode);
}

#[test]
fn guest_gives_the_same_bits_on_a_default_thread() {
    let default = calls_on_a_thread_in(DEFAULT);
    assert_wasm_semantics(&default, DEFAULT);
    let ftz_daz = calls_on_a_thread_in(DEFAULT | FTZ_DAZ);
    assert_eq!(default.call, ftz_daz.call);
    assert_eq!(default.init, ftz_daz.init);
}

#[test]
fn other_control_bits_are_restored_too() {
    // Round toward zero (bits 13 and 14) with FTZ and DAZ.
    let mode = DEFAULT | FTZ_DAZ | (0b11 << 13);
    let seen = calls_on_a_thread_in(mode);
    assert_wasm_semantics(&seen, mode);
}
