//! The hostile suite, anchored on influxdata's datafusion-udf-wasm "evil"
//! guests (`guests/evil`, run by `host/tests/integration_tests/evil`): every
//! category of theirs that applies to a custom call, where cyxla tests it,
//! and why the others do not apply, is in
//! docs/operating.md, "Hostile guests, anchored". This file holds the cases
//! no other test covered:
//!
//! - their `spin` payloads loop in every function the host calls, not only
//!   in the UDF itself: here, a loop in each export the host calls besides
//!   a handler (`_initialize`, `cyxla_abi_version`, `cyxla_api`,
//!   `cyxla_alloc` when instantiating and when a call needs more room,
//!   `cyxla_last_panic` after a trap);
//! - `runtime::nullptr`: a write through a null pointer, which in wasm does
//!   not trap but writes the guest's own memory at address 0;
//! - `runtime::fillstderr`: megabytes written to stderr (stdout is in
//!   `hostile.rs`);
//! - `runtime::thread`: threads (wasi-threads, shared memory, atomics);
//! - `complex::udf_long_name`, `complex::udfs_duplicate_names`: a target
//!   name over the limit, a target declared twice with different exports.
//!
//! Each guest is inline WAT on the skeleton of `common` (guest ABI v1 by
//! hand); every case checks that other guests or the next call still work.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use cyxla_guest_abi as abi;
use cyxla_sandbox::{AllowList, Limits, Sandbox};
use plugin_glue::ErrorCode;

/// `common`'s guest serving `targets`, with `edits` applied to its WAT
/// (each `(from, to)` replaces the first `from`, which must be there).
fn edited_guest(funcs: &str, targets: &[(&str, &str)], edits: &[(&str, &str)]) -> Vec<u8> {
    let mut wat = guest_wat(&format!("{HANDLERS} {funcs}"), targets);
    for (from, to) in edits {
        assert!(wat.contains(from), "the skeleton has no `{from}`");
        wat = wat.replacen(from, to, 1);
    }
    wasm(&wat)
}

/// The first line of the skeleton allocator's body: a loop inserted after
/// it runs before the allocator does anything.
const ALLOC_LOCALS: &str = "(local $p i32) (local $end i32) (local $have i32)";

/// A folder of `bad.wasm` (`bytes`) and `good.wasm` (serving `good_double`),
/// loaded with `limits`, and how long loading took.
fn with_good_guest(bytes: Vec<u8>, limits: Limits) -> (tempfile::TempDir, Sandbox, Duration) {
    with_good_guest_and_side_file(bytes, None, limits)
}

/// [`with_good_guest`], with `bad.limits.toml` holding `side` if given.
fn with_good_guest_and_side_file(
    bytes: Vec<u8>,
    side: Option<&str>,
    limits: Limits,
) -> (tempfile::TempDir, Sandbox, Duration) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "bad.wasm", &bytes);
    if let Some(side) = side {
        write(dir.path(), "bad.limits.toml", side.as_bytes());
    }
    write_guest(dir.path(), "good.wasm", &[("good_double", "double")]);
    let started = Instant::now();
    let sandbox = Sandbox::new(dir.path(), AllowList::all(), limits).unwrap();
    (dir, sandbox, started.elapsed())
}

/// The reason `bad.wasm` was rejected at load, after checking that
/// `good.wasm` serves.
fn rejection(sandbox: &Sandbox) -> String {
    run_double(&handler(sandbox, "good_double"));
    let [rejected] = sandbox.guests().rejected() else {
        panic!("one rejection: {:?}", sandbox.guests().rejected());
    };
    rejected.error.to_string()
}

#[test]
fn a_loop_in_any_export_the_host_calls_when_instantiating_is_rejected_in_time() {
    const FOREVER: &str = "(loop $forever (br $forever))";
    let cases: [(&str, Vec<u8>); 4] = [
        (
            "_initialize",
            edited_guest(
                &format!("(func (export \"_initialize\") {FOREVER})"),
                &[("t", "double")],
                &[],
            ),
        ),
        (
            "cyxla_abi_version",
            edited_guest(
                "",
                &[("t", "double")],
                &[(
                    "(func (export \"cyxla_abi_version\") (result i32) (i32.const 1))",
                    &format!(
                        "(func (export \"cyxla_abi_version\") (result i32) {FOREVER} (i32.const 1))"
                    ),
                )],
            ),
        ),
        (
            "cyxla_api",
            edited_guest(
                "",
                &[("t", "double")],
                &[(
                    "(func (export \"cyxla_api\") (result i32) (i32.const 1024))",
                    &format!(
                        "(func (export \"cyxla_api\") (result i32) {FOREVER} (i32.const 1024))"
                    ),
                )],
            ),
        ),
        (
            "cyxla_alloc",
            edited_guest(
                "",
                &[("t", "double")],
                &[(ALLOC_LOCALS, &format!("{ALLOC_LOCALS} {FOREVER}"))],
            ),
        ),
    ];
    // The bad guest's instantiation deadline in its side file: emulated,
    // test_limits gives instantiation more time than 300 ms.
    let side = "instantiate_timeout = \"300ms\"\n";
    // Loading compiles and instantiates both guests, which emulation
    // slows down many times over: the bound there only catches a hang.
    let bound = Duration::from_secs(if emulated() { 30 } else { 2 });
    for interrupt in interrupt_mechanisms() {
        for (export, bytes) in &cases {
            let mut limits = test_limits();
            limits.interrupt = interrupt;
            let (_dir, sandbox, took) =
                with_good_guest_and_side_file(bytes.clone(), Some(side), limits);
            let message = rejection(&sandbox);
            assert!(
                message.contains("bad.wasm cannot be instantiated: ")
                    && message.contains(&format!("`{export}"))
                    && message.contains("exceeded its deadline (300ms)"),
                "{interrupt:?} {export}: {message}"
            );
            assert!(took < bound, "{interrupt:?} {export}: {took:?}");
        }
    }
}

#[test]
fn a_loop_in_the_allocator_when_a_call_needs_more_room_meets_the_call_deadline() {
    // The allocator loops when asked for more than 1 MiB: instantiation
    // (64 KiB) passes, a call of 2 MiB of operands needs more.
    let bytes = edited_guest(
        "",
        &[("a_double", "double")],
        &[(
            ALLOC_LOCALS,
            &format!(
                "{ALLOC_LOCALS} (if (i32.gt_u (local.get $size) (i32.const 1048576)) \
                 (then (loop $forever (br $forever))))"
            ),
        )],
    );
    for (interrupt, mut limits) in limits_per_mechanism() {
        limits.memory = 64 << 20;
        let (_dir, sandbox, _) = with_good_guest(bytes.clone(), limits);
        let h = handler(&sandbox, "a_double");
        run_double(&h);
        let big = vector_call(&vec![1.0; 512 << 10]);
        let (error, took) = timed_error(&h, &big);
        assert_code(&error, ErrorCode::DeadlineExceeded);
        assert_message_contains(&error, "exceeded its deadline (300ms)");
        // Ends at its deadline, not before; the upper bound only catches a
        // hang (how late a deadline fires is benchmarked, not tested: the
        // tests share a busy machine).
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_millis(1300),
            "{interrupt:?}: {took:?}"
        );
        // The looping instance is gone; a call that fits works.
        run_double(&h);
        run_double(&handler(&sandbox, "good_double"));
    }
}

#[test]
fn a_loop_in_the_panic_message_export_after_a_trap_leaves_the_trap_error() {
    let bytes = edited_guest(
        "(func (export \"cyxla_last_panic\") (result i32) (loop $forever (br $forever)) (i32.const 0))",
        &[("p_trap", "trap"), ("p_double", "double")],
        &[],
    );
    for (interrupt, limits) in limits_per_mechanism() {
        let (_dir, sandbox, _) = with_good_guest(bytes.clone(), limits);
        let h = handler(&sandbox, "p_trap");
        let (error, took) = timed_error(&h, &vector_call(&[1.0]));
        assert_code(&error, ErrorCode::Internal);
        assert_message_contains(&error, "trapped: wasm `unreachable` instruction executed");
        // Two ticks (5 ms each) for the message, not the call's 300 ms.
        assert!(took < Duration::from_millis(150), "{interrupt:?}: {took:?}");
        run_double(&handler(&sandbox, "p_double"));
        run_double(&handler(&sandbox, "good_double"));
    }
}

#[test]
fn writes_through_a_null_pointer_stay_in_the_guests_own_memory() {
    // Doubles its input, then writes through a null pointer and fills the
    // first 4 KiB of its memory (its `XLA_FFI_Api` at 1024 included) with
    // 0xff: in wasm, address 0 is the guest's own memory, not a fault.
    let bytes = edited_guest(
        r#"(func (export "null_write") (param $f i32) (result i32)
             (call $scale (local.get $f) (f32.const 2))
             (i32.store (i32.const 0) (i32.const 42))
             (memory.fill (i32.const 0) (i32.const 0xff) (i32.const 4096))
             (i32.const 0))"#,
        &[("n_null_write", "null_write"), ("n_double", "double")],
        &[],
    );
    let (_dir, sandbox, _) = with_good_guest(bytes, test_limits());
    let h = handler(&sandbox, "n_null_write");
    for _ in 0..3 {
        let call = vector_call(&[1.0, -2.5, 3.0]);
        let before = call.operand(0).bytes();
        h.call_host(&call)
            .expect("its own memory is the guest's to write");
        assert_eq!(call.result(0).to_f32(), [2.0, -5.0, 6.0]);
        assert_eq!(call.operand(0).bytes(), before, "the operand is unchanged");
    }
    run_double(&handler(&sandbox, "n_double"));
    run_double(&handler(&sandbox, "good_double"));
}

#[test]
fn megabytes_of_stderr_leave_a_bounded_log() {
    // 64 KiB of guest memory written to stderr 64 times (4 MiB), then the
    // input doubled.
    let bytes = wasm(
        &guest_wat(
            &format!("{HANDLERS} {}", flood_handler("flood_stderr", 2)),
            &[("e_flood", "flood_stderr")],
        )
        .replacen(
            "(module",
            "(module (import \"wasi_snapshot_preview1\" \"fd_write\" \
             (func $fd_write (param i32 i32 i32 i32) (result i32)))",
            1,
        ),
    );
    let (_dir, sandbox, _) = with_good_guest(bytes, flood_limits());
    assert_flood_is_bounded(&handler(&sandbox, "e_flood"));
    run_double(&handler(&sandbox, "good_double"));
}

#[test]
fn threads_are_refused_at_load() {
    let cases: [(&str, Vec<u8>, &[&str]); 3] = [
        (
            "wasi-threads",
            edited_guest(
                "",
                &[("t", "double")],
                &[(
                    "(module",
                    "(module (import \"wasi\" \"thread-spawn\" (func (param i32) (result i32)))",
                )],
            ),
            &["wasi", "thread-spawn"],
        ),
        (
            "shared memory",
            edited_guest(
                "",
                &[("t", "double")],
                &[(
                    "(memory (export \"memory\") 2)",
                    "(memory (export \"memory\") 2 16 shared)",
                )],
            ),
            &["is not valid WebAssembly"],
        ),
        (
            "atomics",
            edited_guest(
                r#"(func (export "atomic") (param i32) (result i32)
                     (i32.atomic.rmw.add (i32.const 2048) (i32.const 1)))"#,
                &[("t", "atomic")],
                &[],
            ),
            &["is not valid WebAssembly"],
        ),
    ];
    for (what, bytes, says) in cases {
        let (_dir, sandbox, _) = with_good_guest(bytes, test_limits());
        let message = rejection(&sandbox);
        assert!(
            message.contains("bad.wasm") && says.iter().all(|s| message.contains(s)),
            "{what}: {message}"
        );
    }
}

#[test]
fn a_target_name_over_the_limit_or_a_target_with_two_exports_is_refused_at_load() {
    let long = "x".repeat(abi::MAX_NAME_LEN + 1);
    let cases: [(&str, Vec<u8>, String); 2] = [
        (
            "a long name",
            edited_guest("", &[(&long, "double")], &[]),
            format!(
                "has an invalid target name (expected 1 to {} bytes",
                abi::MAX_NAME_LEN
            ),
        ),
        (
            "a target twice",
            edited_guest(
                "",
                &[("dup", "double"), ("other", "double"), ("dup", "fail")],
                &[],
            ),
            "lists target `dup` again with a different export".to_owned(),
        ),
    ];
    for (what, bytes, says) in cases {
        let (_dir, sandbox, _) = with_good_guest(bytes, test_limits());
        let message = rejection(&sandbox);
        assert!(
            message.contains("bad.wasm") && message.contains(&says),
            "{what}: {message}"
        );
        assert!(
            message.len() < 1024,
            "{what}: the reason does not quote the name: {} bytes",
            message.len()
        );
    }
    // The same target twice with the same export is one target.
    let bytes = edited_guest("", &[("same", "double"), ("same", "double")], &[]);
    let (_dir, sandbox, _) = with_good_guest(bytes, test_limits());
    assert!(sandbox.guests().rejected().is_empty());
    run_double(&handler(&sandbox, "same"));
}
