//! Hostile guests (issue 6): every attack fails its own call and nothing
//! else. Each guest is inline WAT on the skeleton of `common` (guest ABI v1
//! by hand).
//!
//! Each hostile handler attacks only when its first input element is
//! negative and otherwise doubles its input, so that every test can check,
//! with [`contained`]: the exact error (code, target, guest, what
//! happened), that the operand buffer is unchanged, and that the next call
//! of the same target and a call of another target succeed (in the same
//! process: the test itself is that process).
//!
//! Deep recursion, `unreachable`, out-of-bounds accesses, memory growth
//! past the limit, a forged error handle returned to the host and foreign
//! imports are in `sandbox.rs`; a looping start function and compile bombs
//! in `limits.rs`.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use cyxla_guest_abi as abi;
use cyxla_sandbox::limits::Interrupt;
use cyxla_sandbox::{AllowList, Error, HostBuffer, HostCall, Limits, Sandbox};
use plugin_glue::{DType, ErrorCode};

/// Extra imports of the hostile guest.
const IMPORTS: &str = r#"
  (import "cyxla" "error_get_message" (func $error_get_message (param i32)))
  (import "cyxla" "error_destroy" (func $error_destroy (param i32)))
  (import "cyxla" "type_register" (func $type_register (param i32) (result i32)))
"#;

/// The hostile handlers. Frame offsets (wasm32): `args.args` +44,
/// `rets.size` +56, `rets.rets` +68; buffer `struct_size` +0, `data` +12,
/// `rank` +16, `dims` +24.
const HOSTILE: &str = r#"
  (table $t 1 funcref)
  ;; Attack when x[0] < 0.
  (func $attack (param $f i32) (result i32)
    (f32.lt (f32.load (call $in (local.get $f))) (f32.const 0)))
  (func $ok (param $f i32) (result i32)
    (call $scale (local.get $f) (f32.const 2))
    (i32.const 0))

  ;; 1 / 0.
  (func (export "div0") (param $f i32) (result i32)
    (local $zero i32)
    (if (call $attack (local.get $f))
      (then (drop (i32.div_s (i32.const 1) (local.get $zero)))))
    (call $ok (local.get $f)))

  ;; Allocates 1 MiB after 1 MiB with the guest's own allocator until it
  ;; fails, then traps.
  (func (export "alloc_bomb") (param $f i32) (result i32)
    (if (call $attack (local.get $f))
      (then
        (loop $more
          (br_if $more (call $alloc (i32.const 1048576) (i32.const 8))))
        (unreachable)))
    (call $ok (local.get $f)))

  ;; Grows its table by a million elements; traps if refused.
  (func (export "table_bomb") (param $f i32) (result i32)
    (if (call $attack (local.get $f))
      (then
        (if (i32.eq (table.grow $t (ref.null func) (i32.const 1000000)) (i32.const -1))
          (then (unreachable)))))
    (call $ok (local.get $f)))

  ;; Doubles its input correctly, then rewrites the frame before returning:
  ;; the result's data pointer to the input, its dims[0] to 10^6, its rank
  ;; to 7 and its struct_size to 0; rets.size to 1000 and rets.rets to
  ;; 0xfffffff0; the frame's struct_size to 0. It also overwrites its copy
  ;; of the input and 4 KiB past its result with 0xff.
  (func (export "rewrite") (param $f i32) (result i32)
    (local $ret i32) (local $arg i32) (local $bytes i32)
    (drop (call $ok (local.get $f)))
    (local.set $ret (i32.load (i32.load offset=68 (local.get $f))))
    (local.set $arg (i32.load (i32.load offset=44 (local.get $f))))
    (local.set $bytes (i32.shl (call $n (local.get $f)) (i32.const 2)))
    (memory.fill (i32.load offset=12 (local.get $arg)) (i32.const 0xff) (local.get $bytes))
    (memory.fill (i32.add (i32.load offset=12 (local.get $ret)) (local.get $bytes))
                 (i32.const 0xff) (i32.const 4096))
    (i32.store offset=12 (local.get $ret) (i32.load offset=12 (local.get $arg)))
    (i64.store (i32.load offset=24 (local.get $ret)) (i64.const 1000000))
    (i64.store offset=16 (local.get $ret) (i64.const 7))
    (i32.store (local.get $ret) (i32.const 0))
    (i64.store offset=56 (local.get $f) (i64.const 1000))
    (i32.store offset=68 (local.get $f) (i32.const -16))
    (i32.store (local.get $f) (i32.const 0))
    (i32.const 0))

  ;; Writes nothing into its result but points the result's data pointer at
  ;; 64 bytes of its own filled with 0x42.
  (func (export "redirect") (param $f i32) (result i32)
    (memory.fill (i32.const 4096) (i32.const 0x42) (i32.const 64))
    (i32.store offset=12 (i32.load (i32.load offset=68 (local.get $f))) (i32.const 4096))
    (i32.const 0))

  ;; XLA_FFI_Error_Create with the message pointer at 0xfffffff0.
  (func (export "message_out_of_range") (param $f i32) (result i32)
    (if (call $attack (local.get $f))
      (then
        (return (call $error (i32.const -16) (i32.const 3)))))
    (call $ok (local.get $f)))

  ;; XLA_FFI_Error_Create with a message that runs to the end of memory
  ;; without a NUL.
  (func (export "message_without_nul") (param $f i32) (result i32)
    (local $end i32)
    (if (call $attack (local.get $f))
      (then
        (local.set $end (i32.shl (memory.size) (i32.const 16)))
        (memory.fill (i32.sub (local.get $end) (i32.const 64)) (i32.const 0x41) (i32.const 64))
        (return (call $error (i32.sub (local.get $end) (i32.const 64)) (i32.const 3)))))
    (call $ok (local.get $f)))

  ;; XLA_FFI_Error_Create with struct_size 4.
  (func (export "short_struct") (param $f i32) (result i32)
    (if (call $attack (local.get $f))
      (then
        (i32.store (i32.const 2048) (i32.const 4))
        (i32.store (i32.const 2056) (i32.const 2100))
        (return (call $error_create (i32.const 2048)))))
    (call $ok (local.get $f)))

  ;; XLA_FFI_Type_Register with a name of 0xffffffff bytes: an error that
  ;; the handler returns.
  (func (export "huge_length") (param $f i32) (result i32)
    (if (call $attack (local.get $f))
      (then
        (i32.store (i32.const 2048) (i32.const 20))
        (i32.store (i32.const 2056) (i32.const 2200))
        (i32.store (i32.const 2060) (i32.const -1))
        (i32.store (i32.const 2064) (i32.const 2240))
        (return (call $type_register (i32.const 2048)))))
    (call $ok (local.get $f)))

  ;; XLA_FFI_Type_Register with struct_size 8: an error that the handler
  ;; returns.
  (func (export "short_register") (param $f i32) (result i32)
    (if (call $attack (local.get $f))
      (then
        (i32.store (i32.const 2048) (i32.const 8))
        (return (call $type_register (i32.const 2048)))))
    (call $ok (local.get $f)))

  ;; XLA_FFI_Type_Register with a 4000-byte name at 0xffffff00.
  (func (export "name_out_of_range") (param $f i32) (result i32)
    (if (call $attack (local.get $f))
      (then
        (i32.store (i32.const 2048) (i32.const 20))
        (i32.store (i32.const 2056) (i32.const -256))
        (i32.store (i32.const 2060) (i32.const 4000))
        (i32.store (i32.const 2064) (i32.const 2240))
        (return (call $type_register (i32.const 2048)))))
    (call $ok (local.get $f)))

  ;; XLA_FFI_Error_Destroy and XLA_FFI_Error_GetMessage on handle 0x1234,
  ;; which the host never issued: both args structs at 2048, of
  ;; struct_size `size`, with the handle at +8.
  (func $forged_args (param $size i32) (result i32)
    (i32.store (i32.const 2048) (local.get $size))
    (i32.store (i32.const 2056) (i32.const 0x1234))
    (i32.const 2048))
  (func (export "destroy_forged") (param $f i32) (result i32)
    (if (call $attack (local.get $f))
      (then (call $error_destroy (call $forged_args (i32.const 12)))))
    (call $ok (local.get $f)))
  (func (export "get_message_forged") (param $f i32) (result i32)
    (if (call $attack (local.get $f))
      (then (call $error_get_message (call $forged_args (i32.const 16)))))
    (call $ok (local.get $f)))

  ;; Counts the bytes equal to 0x5a in [frame + 4096, frame + 32768) (the
  ;; scratch region the host reuses for every call) into its s32 result.
  (func (export "peek") (param $f i32) (result i32)
    (local $p i32) (local $end i32) (local $count i32)
    (local.set $p (i32.add (local.get $f) (i32.const 4096)))
    (local.set $end (i32.add (local.get $f) (i32.const 32768)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x5a))
          (then (local.set $count (i32.add (local.get $count) (i32.const 1)))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $next)))
    (i32.store (call $out (local.get $f)) (local.get $count))
    (i32.const 0))
  ;; Keeps the first 16 bytes of its operand in a static buffer at 100000.
  (func (export "stash") (param $f i32) (result i32)
    (memory.copy (i32.const 100000) (call $in (local.get $f)) (i32.const 16))
    (call $ok (local.get $f)))
  ;; Returns the static buffer in its 16-byte result.
  (func (export "leak") (param $f i32) (result i32)
    (memory.copy (call $out (local.get $f)) (i32.const 100000) (i32.const 16))
    (i32.const 0))

  ;; Grows memory to exactly 64 pages (4 MiB, the test limit), then by one
  ;; page more; writes both memory.grow results into its s32[2] result.
  (func (export "grow_to_limit") (param $f i32) (result i32)
    (local $first i32) (local $second i32)
    (local.set $first (memory.grow (i32.sub (i32.const 64) (memory.size))))
    (local.set $second (memory.grow (i32.const 1)))
    (i32.store (call $out (local.get $f)) (local.get $first))
    (i32.store offset=4 (call $out (local.get $f)) (local.get $second))
    (i32.const 0))

  ;; Calls XLA_FFI_DeviceOrdinal_Get forever: mostly host code runs.
  (func (export "host_call_loop") (param $f i32) (result i32)
    (i32.store (i32.const 2048) (i32.const 16))
    (loop $l
      (drop (call $device_ordinal_get (i32.const 2048)))
      (br $l))
    (i32.const 0))
"#;

const HOSTILE_EXPORTS: [&str; 19] = [
    "double",
    "spin",
    "div0",
    "alloc_bomb",
    "table_bomb",
    "rewrite",
    "redirect",
    "message_out_of_range",
    "message_without_nul",
    "short_struct",
    "huge_length",
    "short_register",
    "name_out_of_range",
    "destroy_forged",
    "get_message_forged",
    "peek",
    "stash",
    "leak",
    "grow_to_limit",
];

fn hostile_guest() -> Vec<u8> {
    let mut exports = HOSTILE_EXPORTS.to_vec();
    exports.push("host_call_loop");
    let wat = prefixed_guest_wat(&format!("{HANDLERS} {HOSTILE}"), "x_", &exports);
    wasm(&wat.replacen("(module", &format!("(module {IMPORTS}"), 1))
}

fn hostile_sandbox(limits: Limits) -> (tempfile::TempDir, Sandbox) {
    sandbox_with(&[("hostile.wasm", hostile_guest())], limits)
}

/// Attacks through `x_<export>`, then checks containment (see the module
/// docs). `what` is the exact start of the message after the target and
/// guest; `also` must appear in it too.
fn contained(sandbox: &Sandbox, export: &str, code: ErrorCode, what: &str, also: &str) {
    let target = format!("x_{export}");
    let h = handler(sandbox, &target);
    let call = vector_call(&[-1.0, 2.0, 3.0]);
    let before = call.operand(0).bytes();
    let error = expect_error(&h, &call);
    let prefix = format!("target `{target}` (guest hostile.wasm): {what}");
    assert!(
        error.message.starts_with(&prefix) && error.message.contains(also),
        "expected `{prefix}…{also}…`, got `{}`",
        error.message
    );
    assert_eq!(error.code, code, "{}", error.message);
    assert_eq!(
        call.operand(0).bytes(),
        before,
        "the operand buffer changed"
    );
    run_double(&h);
    run_double(&handler(sandbox, "x_double"));
}

#[test]
fn integer_divide_by_zero() {
    let (_dir, sandbox) = hostile_sandbox(test_limits());
    contained(
        &sandbox,
        "div0",
        ErrorCode::Internal,
        "trapped: integer divide by zero",
        "",
    );
}

#[test]
fn an_allocator_bomb_hits_the_memory_limit() {
    let (_dir, sandbox) = hostile_sandbox(test_limits());
    contained(
        &sandbox,
        "alloc_bomb",
        ErrorCode::ResourceExhausted,
        "trapped: wasm `unreachable` instruction executed after its memory was refused growth to ",
        "(limit 4 MiB)",
    );
}

#[test]
fn a_huge_table_is_refused() {
    let (_dir, sandbox) = hostile_sandbox(test_limits());
    contained(
        &sandbox,
        "table_bomb",
        ErrorCode::Internal,
        "trapped: wasm `unreachable` instruction executed after a table was refused growth to 1000001 elements (limit 100000)",
        "",
    );
    // A module whose table starts over the limit is not loaded.
    let wat = guest_wat(
        &format!("{HANDLERS} (table 1000000 funcref)"),
        &[("t", "double")],
    );
    let error = load_error(&wasm(&wat));
    assert!(
        error.contains("bad.wasm cannot be instantiated: instantiation failed: ")
            && error
                .contains("after a table was refused growth to 1000000 elements (limit 100000)"),
        "{error}"
    );
}

#[test]
fn memory_grows_to_the_limit_and_not_past_it() {
    let (_dir, sandbox) = hostile_sandbox(test_limits());
    let h = handler(&sandbox, "x_grow_to_limit");
    let call = HostCall::new().ret(HostBuffer::zeros(DType::S32, &[2]));
    h.call_host(&call).unwrap();
    let words = i32_words(call.result(0));
    assert!(
        words[0] > 0,
        "growth to exactly the limit succeeds: {words:?}"
    );
    assert_eq!(words[1], -1, "one page more is refused: {words:?}");
    // The refusal was the guest's to handle: the call succeeded, the
    // instance lives on, and the next calls work.
    assert_eq!(h.live_instances(), 1);
    run_double(&handler(&sandbox, "x_double"));
}

#[test]
fn a_rewritten_frame_changes_nothing_the_host_copies() {
    let (_dir, sandbox) = hostile_sandbox(test_limits());
    let h = handler(&sandbox, "x_rewrite");
    for _ in 0..3 {
        let call = vector_call(&[1.0, -2.0, 3.5, 4.0]);
        h.call_host(&call).unwrap();
        assert_eq!(call.result(0).to_f32(), [2.0, -4.0, 7.0, 8.0]);
        assert_eq!(call.operand(0).to_f32(), [1.0, -2.0, 3.5, 4.0]);
    }
    assert_eq!(h.live_instances(), 1, "the same instance served every call");
    run_double(&handler(&sandbox, "x_double"));

    // A result pointer redirected to guest bytes: the host still copies its
    // own region, never the 0x42 bytes the pointer now names. That region
    // holds what this guest wrote there in earlier calls (results are not
    // cleared between calls, as XLA's are not)...
    let call = vector_call(&[1.0, 2.0, 3.0, 4.0]);
    handler(&sandbox, "x_redirect").call_host(&call).unwrap();
    let bytes = call.result(0).bytes();
    assert!(
        !bytes.contains(&0x42),
        "redirected bytes copied out: {bytes:x?}"
    );
    // ...and zeros in an instance that never served a call.
    let (_dir, sandbox) = hostile_sandbox(test_limits());
    let call = vector_call(&[1.0, 2.0, 3.0, 4.0]);
    handler(&sandbox, "x_redirect").call_host(&call).unwrap();
    assert_eq!(call.result(0).to_f32(), [0.0; 4]);
}

#[test]
fn a_message_pointer_out_of_range_is_a_guest_fault() {
    let (_dir, sandbox) = hostile_sandbox(test_limits());
    contained(
        &sandbox,
        "message_out_of_range",
        ErrorCode::Internal,
        "made an invalid host call: `XLA_FFI_Error_Create`: the message at guest address 0xfffffff0 (1 bytes) is outside guest memory",
        "",
    );
}

#[test]
fn a_message_without_nul_is_a_guest_fault() {
    let (_dir, sandbox) = hostile_sandbox(test_limits());
    contained(
        &sandbox,
        "message_without_nul",
        ErrorCode::Internal,
        "made an invalid host call: `XLA_FFI_Error_Create`: the message at guest address 0x",
        "runs to the end of guest memory without a NUL",
    );
}

#[test]
fn a_short_argument_struct_is_a_guest_fault() {
    let (_dir, sandbox) = hostile_sandbox(test_limits());
    contained(
        &sandbox,
        "short_struct",
        ErrorCode::Internal,
        "made an invalid host call: `XLA_FFI_Error_Create`: XLA_FFI_Error_Create_Args has struct_size 4, expected at least 16",
        "",
    );
}

#[test]
fn a_huge_length_is_refused() {
    let (_dir, sandbox) = hostile_sandbox(test_limits());
    contained(
        &sandbox,
        "huge_length",
        ErrorCode::InvalidArgument,
        "`XLA_FFI_Type_Register`: type name of 4294967295 bytes, longer than 4096",
        "",
    );
    // Named once, whether the struct is refused by an error the guest
    // returns or by a fault (`a_short_argument_struct_is_a_guest_fault`).
    contained(
        &sandbox,
        "short_register",
        ErrorCode::InvalidArgument,
        "`XLA_FFI_Type_Register`: XLA_FFI_Type_Register_Args has struct_size 8, expected at least",
        "",
    );
    contained(
        &sandbox,
        "name_out_of_range",
        ErrorCode::Internal,
        "made an invalid host call: `XLA_FFI_Type_Register`: the type name at guest address 0xffffff00 (4000 bytes) is outside guest memory",
        "",
    );
}

#[test]
fn forged_error_handles_are_guest_faults() {
    let (_dir, sandbox) = hostile_sandbox(test_limits());
    contained(
        &sandbox,
        "destroy_forged",
        ErrorCode::Internal,
        "made an invalid host call: `XLA_FFI_Error_Destroy`: 0x1234 is not a live error handle",
        "",
    );
    contained(
        &sandbox,
        "get_message_forged",
        ErrorCode::Internal,
        "made an invalid host call: `XLA_FFI_Error_GetDetails`: 0x1234 is not a live error handle",
        "",
    );
}

#[test]
fn every_unsupported_api_function_answers_unimplemented() {
    let unsupported: Vec<&abi::Import> = abi::IMPORT_TABLE
        .iter()
        .filter(|i| {
            [
                "handler_register",
                "stream_get",
                "device_memory_allocate",
                "device_memory_free",
                "thread_pool_schedule",
                "thread_pool_num_threads",
                "future_create",
                "future_set_available",
                "future_set_error",
            ]
            .contains(&i.name)
        })
        .collect();
    assert_eq!(unsupported.len(), 9);
    // One handler per import: call it with a zeroed argument struct whose
    // struct_size is right, return its error.
    let mut imports = String::new();
    let mut funcs = String::new();
    let mut targets = Vec::new();
    for imp in &unsupported {
        let name = imp.name;
        if name != "stream_get" {
            imports.push_str(&format!(
                "(import \"cyxla\" \"{name}\" (func ${name} (param i32) (result i32)))\n"
            ));
        }
        funcs.push_str(&format!(
            "(func (export \"call_{name}\") (param i32) (result i32)
               (memory.fill (i32.const 2048) (i32.const 0) (i32.const 64))
               (i32.store (i32.const 2048) (i32.const {}))
               (call ${name} (i32.const 2048)))\n",
            imp.args_struct_size
        ));
        targets.push((format!("u_{name}"), format!("call_{name}")));
    }
    targets.push(("u_double".into(), "double".into()));
    let targets: Vec<(&str, &str)> = targets
        .iter()
        .map(|(t, e)| (t.as_str(), e.as_str()))
        .collect();
    let wat = guest_wat(&format!("{HANDLERS} {funcs}"), &targets);
    let bytes = wasm(&wat.replacen("(module", &format!("(module {imports}"), 1));
    let (_dir, sandbox) = sandbox_with(&[("u.wasm", bytes)], test_limits());
    for imp in &unsupported {
        let target = format!("u_{}", imp.name);
        let h = handler(&sandbox, &target);
        let error = expect_error(&h, &vector_call(&[1.0]));
        assert_code(&error, ErrorCode::Unimplemented);
        assert_eq!(
            error.message,
            format!(
                "target `{target}` (guest u.wasm): `{}` is not supported in the cyxla sandbox",
                imp.c_name
            )
        );
        assert_eq!(h.live_instances(), 1, "an API error keeps the instance");
    }
    run_double(&handler(&sandbox, "u_double"));
}

// ---------------------------------------------------------------------------
// Deadlines
// ---------------------------------------------------------------------------

/// The shortest of three tries of `target`, which must exceed its deadline.
fn time_to_deadline(sandbox: &Sandbox, target: &str) -> Duration {
    let h = handler(sandbox, target);
    (0..3)
        .map(|_| {
            let (error, took) = timed_error(&h, &vector_call(&[1.0]));
            assert_code(&error, ErrorCode::DeadlineExceeded);
            assert_deadline_message(&error, target, "hostile.wasm", "300ms");
            run_double(&handler(sandbox, "x_double"));
            took
        })
        .min()
        .unwrap()
}

#[test]
fn loops_stop_within_50ms_of_the_deadline() {
    for (interrupt, limits) in limits_per_mechanism() {
        let (_dir, sandbox) = hostile_sandbox(limits);
        assert_eq!(sandbox.guests().engine().interrupt(), interrupt);
        for target in ["x_spin", "x_host_call_loop"] {
            let took = time_to_deadline(&sandbox, target);
            assert!(
                took >= Duration::from_millis(300) && took < Duration::from_millis(350),
                "{interrupt:?} {target}: {took:?}"
            );
        }
    }
}

#[test]
fn poll_pages_are_the_default() {
    let engine = cyxla_sandbox::Engine::new(&Limits::default()).unwrap();
    assert_eq!(engine.interrupt(), Interrupt::Poll);
}

// ---------------------------------------------------------------------------
// WASI: nothing granted
// ---------------------------------------------------------------------------

const WASI_IMPORTS: &str = r#"
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $environ_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_accept" (func $sock_accept (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $fd_prestat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
"#;

const WASI_HANDLERS: &str = r#"
  (data (i32.const 3400) "/etc/passwd")
  ;; Writes into its s32[7] result: the number of environment variables, of
  ;; arguments, sock_accept(3)'s errno, sock_accept(0)'s errno, the bytes
  ;; read from stdin (-1 if fd_read failed), fd_prestat_get(3)'s errno and
  ;; path_open(3, "/etc/passwd")'s errno.
  (func (export "probe") (param $f i32) (result i32)
    (local $out i32)
    (local.set $out (call $out (local.get $f)))
    (memory.fill (i32.const 3000) (i32.const 0) (i32.const 64))
    (drop (call $environ_sizes_get (i32.const 3000) (i32.const 3004)))
    (i32.store (local.get $out) (i32.load (i32.const 3000)))
    (drop (call $args_sizes_get (i32.const 3008) (i32.const 3012)))
    (i32.store offset=4 (local.get $out) (i32.load (i32.const 3008)))
    (i32.store offset=8 (local.get $out) (call $sock_accept (i32.const 3) (i32.const 0) (i32.const 3016)))
    (i32.store offset=12 (local.get $out) (call $sock_accept (i32.const 0) (i32.const 0) (i32.const 3016)))
    (i32.store (i32.const 3020) (i32.const 3100))
    (i32.store (i32.const 3024) (i32.const 64))
    (i32.store offset=16 (local.get $out)
      (if (result i32) (call $fd_read (i32.const 0) (i32.const 3020) (i32.const 1) (i32.const 3028))
        (then (i32.const -1))
        (else (i32.load (i32.const 3028)))))
    (i32.store offset=20 (local.get $out) (call $fd_prestat_get (i32.const 3) (i32.const 3032)))
    (i32.store offset=24 (local.get $out)
      (call $path_open (i32.const 3) (i32.const 0) (i32.const 3400) (i32.const 11)
                       (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 3500)))
    (i32.const 0))
  ;; Writes one byte to stdout, forever: mostly WASI code runs.
  (func (export "chatter") (param $f i32) (result i32)
    (i32.store (i32.const 3600) (i32.const 3400))
    (i32.store (i32.const 3604) (i32.const 1))
    (loop $l
      (drop (call $fd_write (i32.const 1) (i32.const 3600) (i32.const 1) (i32.const 3608)))
      (br $l))
    (i32.const 0))
  ;; Sleeps 60 s on the monotonic clock with poll_oneoff (subscription
  ;; and events 8-aligned, as WASI requires); traps unless poll_oneoff
  ;; succeeded with one event.
  (func (export "sleep") (param $f i32) (result i32)
    (memory.fill (i32.const 3704) (i32.const 0) (i32.const 48))
    (i32.store (i32.const 3720) (i32.const 1))
    (i64.store (i32.const 3728) (i64.const 60000000000))
    (if (call $poll_oneoff (i32.const 3704) (i32.const 3800) (i32.const 1) (i32.const 3840))
      (then (unreachable)))
    (if (i32.ne (i32.load (i32.const 3840)) (i32.const 1)) (then (unreachable)))
    (call $scale (local.get $f) (f32.const 2))
    (i32.const 0))
"#;

/// Fails unless a call that had to end quickly (stopped at its deadline,
/// or a sleep that returns at once) took less than `bound`, `context`
/// naming the case; then the sandbox still serves: its doubling target
/// `double` answers the next call.
#[track_caller]
pub(crate) fn assert_quick_then_serves(
    took: Duration,
    bound: Duration,
    context: std::fmt::Arguments<'_>,
    sandbox: &Sandbox,
    double: &str,
) {
    assert!(took < bound, "{context}: took {took:?}, over {bound:?}");
    run_double(&handler(sandbox, double));
}

fn wasi_sandbox(limits: Limits) -> (tempfile::TempDir, Sandbox) {
    let wat = guest_wat(
        // `flood` writes 64 KiB to stdout 64 times.
        &format!("{HANDLERS} {WASI_HANDLERS} {}", flood_handler("flood", 1)),
        &[
            ("w_probe", "probe"),
            ("w_flood", "flood"),
            ("w_sleep", "sleep"),
            ("w_chatter", "chatter"),
            ("w_double", "double"),
        ],
    );
    let bytes = wasm(&wat.replacen("(module", &format!("(module {WASI_IMPORTS}"), 1));
    sandbox_with(&[("w.wasm", bytes)], limits)
}

#[test]
fn wasi_grants_no_files_environment_arguments_or_sockets() {
    let (_dir, sandbox) = wasi_sandbox(test_limits());
    let call = HostCall::new().ret(HostBuffer::new(DType::S32, &[7], vec![0x55; 28]));
    handler(&sandbox, "w_probe").call_host(&call).unwrap();
    let words = i32_words(call.result(0));
    // WASI errnos: 8 EBADF, 57 ENOTSOCK, 58 ENOTSUP.
    assert_eq!(words[0], 0, "environment variables: {words:?}");
    assert_eq!(words[1], 0, "arguments: {words:?}");
    assert_eq!(
        words[2], 8,
        "sock_accept on fd 3 (no such socket): {words:?}"
    );
    assert!(
        [8, 57, 58].contains(&words[3]),
        "sock_accept on stdin: {words:?}"
    );
    assert!(words[4] <= 0, "stdin gives nothing: {words:?}");
    assert_eq!(words[5], 8, "no preopened directory: {words:?}");
    assert_eq!(words[6], 8, "path_open without a directory: {words:?}");
    run_double(&handler(&sandbox, "w_double"));
}

#[test]
fn a_sleeping_guest_meets_its_deadline() {
    // The guest has no clock: its 60 s sleep ends at once (issue 16).
    let (_dir, sandbox) = wasi_sandbox(test_limits());
    let started = Instant::now();
    let call = vector_call(&[1.0]);
    let result = handler(&sandbox, "w_sleep").call_host(&call);
    let took = started.elapsed();
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(call.result(0).to_f32(), [2.0]);
    assert_quick_then_serves(
        took,
        Duration::from_millis(300),
        format_args!("slept: {result:?}"),
        &sandbox,
        "w_double",
    );
}

#[test]
fn a_guest_looping_in_wasi_calls_meets_its_deadline() {
    for (interrupt, limits) in limits_per_mechanism() {
        let (_dir, sandbox) = wasi_sandbox(limits);
        let (_, took) = deadline_error(&sandbox, "w_chatter", "w.wasm", "300ms");
        // A bound that catches a hang only (see hostile_anchor.rs).
        assert_quick_then_serves(
            took,
            Duration::from_millis(1300),
            format_args!("{interrupt:?}"),
            &sandbox,
            "w_double",
        );
    }
}

#[test]
fn megabytes_of_stdout_leave_a_bounded_log() {
    let (_dir, sandbox) = wasi_sandbox(flood_limits());
    // 4 MiB written per call, the limit kept, the rest counted.
    assert_flood_is_bounded(&handler(&sandbox, "w_flood"));
}

// ---------------------------------------------------------------------------
// Broken modules are rejected at load; the others keep serving
// ---------------------------------------------------------------------------

#[test]
fn broken_modules_are_rejected_at_load_while_others_serve() {
    let dir = tempfile::tempdir().unwrap();
    let good = wasm(&guest_wat(HANDLERS, &[("good_double", "double")]));
    write(dir.path(), "good.wasm", &good);
    write(dir.path(), "text.wasm", b"(module) but as text");
    write(dir.path(), "truncated.wasm", &good[..good.len() / 2]);
    let v2 = guest_wat(HANDLERS, &[("v2_double", "double")]).replace(
        "(func (export \"cyxla_abi_version\") (result i32) (i32.const 1))",
        "(func (export \"cyxla_abi_version\") (result i32) (i32.const 2))",
    );
    write(dir.path(), "v2.wasm", &wasm(&v2));
    write_guest(
        dir.path(),
        "twice.wasm",
        &[("twice_t", "double"), ("twice_t", "fail")],
    );
    write_guest(
        dir.path(),
        "dup_a.wasm",
        &[("dup", "double"), ("a_only", "double")],
    );
    write_guest(dir.path(), "dup_b.wasm", &[("dup", "double")]);
    let sandbox = Sandbox::new(dir.path(), AllowList::all(), test_limits()).unwrap();
    let reasons: Vec<(String, String)> = sandbox
        .guests()
        .rejected()
        .iter()
        .map(|r| {
            (
                r.path.file_name().unwrap().to_string_lossy().into_owned(),
                r.error.to_string(),
            )
        })
        .collect();
    let reason = |file: &str| {
        reasons
            .iter()
            .find(|(f, _)| f == file)
            .map(|(_, r)| r.as_str())
            .unwrap_or_else(|| panic!("{file} was not rejected: {reasons:?}"))
    };
    assert!(
        reason("text.wasm").ends_with(
            "text.wasm is not a WebAssembly module: it does not start with the `\\0asm` magic bytes"
        ),
        "{reasons:?}"
    );
    assert!(
        reason("truncated.wasm").contains("truncated.wasm is not valid WebAssembly: "),
        "{reasons:?}"
    );
    assert!(
        reason("v2.wasm").ends_with(
            "v2.wasm is rejected: `cyxla_abi_version()` returned 2; this host speaks guest ABI version 1"
        ),
        "{reasons:?}"
    );
    assert!(
        reason("twice.wasm").contains("twice.wasm is rejected: ")
            && reason("twice.wasm").contains("twice_t"),
        "{reasons:?}"
    );
    assert_eq!(reasons.len(), 4, "{reasons:?}");
    assert!(matches!(
        sandbox.guests().rejected()[0].error,
        Error::NotWasm { .. } | Error::InvalidModule { .. } | Error::Abi { .. }
    ));
    // A target two guests declare is served by neither; their other
    // targets and every good guest keep serving.
    assert!(sandbox.handler("dup").is_none());
    run_double(&handler(&sandbox, "good_double"));
    run_double(&handler(&sandbox, "a_only"));
}

// ---------------------------------------------------------------------------
// Data remanence
// ---------------------------------------------------------------------------

fn peek(sandbox: &Sandbox, operand: Option<HostBuffer>) -> i32 {
    let mut call = HostCall::new();
    if let Some(operand) = operand {
        call = call.arg(operand);
    }
    let call = call.ret(HostBuffer::zeros(DType::S32, &[]));
    handler(sandbox, "x_peek").call_host(&call).unwrap();
    i32::from_le_bytes(call.result(0).bytes().try_into().unwrap())
}

#[test]
fn a_call_sees_no_bytes_of_an_earlier_call_in_the_scratch_region() {
    let (_dir, sandbox) = hostile_sandbox(test_limits());
    // An earlier call brings 16 KiB of 0x5a (the guest sees them: they are
    // its own operand)...
    let secret = HostBuffer::new(DType::U8, &[16384], vec![0x5a; 16384]);
    assert!(peek(&sandbox, Some(secret)) > 12_000);
    // ...and a later, smaller call on the same instance finds none of them.
    assert_eq!(peek(&sandbox, None), 0);
    assert_eq!(handler(&sandbox, "x_peek").live_instances(), 1);
}

fn stash_then_leak(sandbox: &Sandbox) -> Vec<u8> {
    let secret = vector_call(&[1.0, 2.0, 3.0, 4.0]);
    handler(sandbox, "x_stash").call_host(&secret).unwrap();
    let call = HostCall::new().ret(HostBuffer::zeros(DType::U8, &[16]));
    handler(sandbox, "x_leak").call_host(&call).unwrap();
    call.result(0).bytes()
}

#[test]
fn fresh_instances_keep_no_guest_state_between_calls() {
    // By default an instance serves many calls: what the guest keeps in its
    // own memory, it finds again (the scratch region is scrubbed, its heap
    // and statics are not).
    let (_dir, sandbox) = hostile_sandbox(test_limits());
    let secret: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(stash_then_leak(&sandbox), secret);
    // With fresh instances, no call sees anything an earlier call left.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "hostile.wasm", &hostile_guest());
    write(
        dir.path(),
        "hostile.limits.toml",
        b"fresh_instances = true\n",
    );
    let sandbox = Sandbox::new(dir.path(), AllowList::all(), test_limits()).unwrap();
    assert!(
        sandbox
            .guests()
            .serving("x_leak")
            .unwrap()
            .limits()
            .fresh_instances
    );
    assert_eq!(stash_then_leak(&sandbox), vec![0; 16]);
    assert_eq!(handler(&sandbox, "x_leak").live_instances(), 0);
    run_double(&handler(&sandbox, "x_double"));
}
