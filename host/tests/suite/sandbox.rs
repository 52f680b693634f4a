//! The sandbox without XLA: hand-written WAT guests that implement guest
//! ABI v1 (or break it on purpose), loaded through the public API and run
//! with host-owned calls.
//!
//! Each sandbox promise has a guest that breaks it here: a trap, an
//! infinite loop, deep recursion, memory growth past the limit, an
//! out-of-bounds access, a forged error handle, a bad pointer passed to a
//! host function, and modules with foreign imports or wrong exports.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::*;
use cyxla_sandbox::{
    AllowList, Engine, Error, Guest, GuestHandler, Guests, HostAttr, HostBuffer, HostCall, Sandbox,
    Scalar,
};
use plugin_glue::{DType, ErrorCode, HandlerError};

// ---------------------------------------------------------------------------
// Calls
// ---------------------------------------------------------------------------

/// The error `h` ends the call `[1.0]` with, which must have code `code`.
#[track_caller]
fn expect_code(h: &GuestHandler, code: ErrorCode) -> HandlerError {
    let error = expect_error(h, &vector_call(&[1.0]));
    assert_eq!(error.code, code);
    error
}

#[test]
fn a_guest_doubles_a_vector() {
    let (_dir, sandbox) = sandbox_with(&[("k.wasm", full_guest("a_"))], test_limits());
    let h = handler(&sandbox, "a_double");
    run_double(&h);
    // Results are copied from the regions the host allocated, and the
    // instance is reused.
    run_double(&h);
    assert_eq!(h.live_instances(), 1);
}

#[test]
fn attributes_reach_the_guest() {
    let (_dir, sandbox) = sandbox_with(&[("k.wasm", full_guest("b_"))], test_limits());
    let h = handler(&sandbox, "b_scale_attr");
    let call = vector_call(&[1.0, 2.0]).attr("scale", HostAttr::Scalar(Scalar::F32(3.5)));
    h.call_host(&call).unwrap();
    assert_eq!(call.result(0).to_f32(), [3.5, 7.0]);
}

#[test]
fn large_inputs_grow_the_scratch_region() {
    let (_dir, sandbox) = sandbox_with(&[("k.wasm", full_guest("c_"))], test_limits());
    let h = handler(&sandbox, "c_double");
    let values: Vec<f32> = (0..200_000).map(|i| i as f32).collect();
    let call = vector_call(&values);
    h.call_host(&call).unwrap();
    let out = call.result(0).to_f32();
    assert_eq!(out.len(), values.len());
    assert!(out.iter().zip(&values).all(|(o, v)| *o == 2.0 * v));
}

#[test]
fn a_guest_error_keeps_its_code_and_names_target_and_guest() {
    let (_dir, sandbox) = sandbox_with(&[("k.wasm", full_guest("d_"))], test_limits());
    let h = handler(&sandbox, "d_fail");
    let error = expect_code(&h, ErrorCode::InvalidArgument);
    assert_eq!(
        error.message,
        "target `d_fail` (guest k.wasm): bad input from guest"
    );
    // A guest error does not cost the instance.
    assert_eq!(h.live_instances(), 1);
}

#[test]
fn a_trap_names_the_trap_and_the_next_call_works() {
    let (_dir, sandbox) = sandbox_with(&[("k.wasm", full_guest("e_"))], test_limits());
    let trap = handler(&sandbox, "e_trap");
    let error = expect_code(&trap, ErrorCode::Internal);
    assert_message(&error, |m| {
        m.starts_with(
            "target `e_trap` (guest k.wasm): trapped: wasm `unreachable` instruction executed",
        )
    });
    assert_eq!(
        trap.live_instances(),
        0,
        "the trapped instance is discarded"
    );
    run_double(&handler(&sandbox, "e_double"));
}

#[test]
fn an_infinite_loop_hits_the_deadline() {
    let (_dir, sandbox) = sandbox_with(&[("k.wasm", full_guest("f_"))], test_limits());
    let (error, took) = deadline_error(&sandbox, "f_spin", "k.wasm", "300ms");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_code(&error, ErrorCode::DeadlineExceeded);
    run_double(&handler(&sandbox, "f_double"));
}

#[test]
fn deep_recursion_exhausts_the_stack() {
    let (_dir, sandbox) = sandbox_with(&[("k.wasm", full_guest("g_"))], test_limits());
    let error = expect_code(
        &handler(&sandbox, "g_recurse"),
        ErrorCode::ResourceExhausted,
    );
    assert_message_contains(&error, "call stack exhausted");
    run_double(&handler(&sandbox, "g_double"));
}

#[test]
fn memory_growth_past_the_limit_is_refused() {
    let (_dir, sandbox) = sandbox_with(&[("k.wasm", full_guest("h_"))], test_limits());
    let error = expect_error(&handler(&sandbox, "h_grow"), &vector_call(&[1.0]));
    assert_growth_refused(&error, "4 MiB");
}

#[test]
fn out_of_bounds_access_traps() {
    let (_dir, sandbox) = sandbox_with(&[("k.wasm", full_guest("i_"))], test_limits());
    let error = expect_error(&handler(&sandbox, "i_oob"), &vector_call(&[1.0]));
    assert_message_contains(&error, "trapped: out of bounds memory access");
}

#[test]
fn a_forged_error_handle_is_an_internal_error() {
    let (_dir, sandbox) = sandbox_with(&[("k.wasm", full_guest("j_"))], test_limits());
    let error = expect_code(&handler(&sandbox, "j_forged"), ErrorCode::Internal);
    assert_message_contains(&error, "forged error handle (0x3039)");
}

#[test]
fn a_bad_pointer_to_a_host_function_is_a_guest_fault() {
    let (_dir, sandbox) = sandbox_with(&[("k.wasm", full_guest("k_"))], test_limits());
    let h = handler(&sandbox, "k_bad_pointer");
    let error = expect_error(&h, &vector_call(&[1.0]));
    assert_message_contains(
        &error,
        "made an invalid host call: `XLA_FFI_Error_Create`: the argument struct at guest address 0xfffffff8",
    );
    assert_eq!(h.live_instances(), 0);
}

#[test]
fn unsupported_api_functions_answer_unimplemented() {
    let (_dir, sandbox) = sandbox_with(&[("k.wasm", full_guest("l_"))], test_limits());
    let error = expect_code(&handler(&sandbox, "l_stream"), ErrorCode::Unimplemented);
    assert_message(&error, |m| {
        m.ends_with("`XLA_FFI_Stream_Get` is not supported in the cyxla sandbox")
    });
}

#[test]
fn the_device_ordinal_comes_from_the_native_call() {
    let (_dir, sandbox) = sandbox_with(&[("k.wasm", full_guest("m_"))], test_limits());
    let call = HostCall::new().ret(HostBuffer::new(
        DType::S32,
        &[],
        7i32.to_le_bytes().to_vec(),
    ));
    handler(&sandbox, "m_ordinal").call_host(&call).unwrap();
    assert_eq!(call.result(0).bytes(), 0i32.to_le_bytes());
}

#[test]
fn concurrent_calls_use_at_most_the_instance_limit() {
    let (_dir, sandbox) = sandbox_with(&[("k.wasm", full_guest("n_"))], test_limits());
    let h = handler(&sandbox, "n_double");
    on_threads(6, |t| {
        for i in 0..20 {
            let x = (t * 100 + i) as f32;
            let call = vector_call(&[x, 1.0]);
            h.call_host(&call).unwrap();
            assert_eq!(call.result(0).to_f32(), [2.0 * x, 2.0]);
        }
    });
    assert!(
        (1..=3).contains(&h.live_instances()),
        "{}",
        h.live_instances()
    );
}

// ---------------------------------------------------------------------------
// Aliasing: a result that XLA aliases with an operand
// ---------------------------------------------------------------------------

/// In-place handlers: `set0_f32` writes 42 over element 0 of result 0 and
/// nothing else; `set_rows_f64` writes -1 over the first element of each row
/// of result 0 (f64, rank 2); `same_data` fails unless operand 0 and result 0
/// have the same data pointer (JAX's aliasing example checks this).
const IN_PLACE: &str = r#"
  (func (export "set0_f32") (param $f i32) (result i32)
    (f32.store (call $out (local.get $f)) (f32.const 42))
    (i32.const 0))
  (func (export "set_rows_f64") (param $f i32) (result i32)
    (local $dims i32) (local $rows i32) (local $row_bytes i32) (local $r i32) (local $out i32)
    (local.set $dims (i32.load offset=24 (i32.load (i32.load offset=68 (local.get $f)))))
    (local.set $rows (i32.wrap_i64 (i64.load (local.get $dims))))
    (local.set $row_bytes
      (i32.shl (i32.wrap_i64 (i64.load offset=8 (local.get $dims))) (i32.const 3)))
    (local.set $out (call $out (local.get $f)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
        (f64.store (i32.add (local.get $out) (i32.mul (local.get $r) (local.get $row_bytes)))
          (f64.const -1))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $next)))
    (i32.const 0))
  (func (export "same_data") (param $f i32) (result i32)
    (if (i32.eq (call $in (local.get $f)) (call $out (local.get $f)))
      (then (return (i32.const 0))))
    (call $error (i32.const 2200) (i32.const 3)))
  (data (i32.const 2200) "operand 0 and result 0 have different data pointers\00")
"#;

fn in_place_sandbox(prefix: &str) -> (tempfile::TempDir, Sandbox) {
    let exports = ["set0_f32", "set_rows_f64", "same_data", "double"];
    let wat = prefixed_guest_wat(&format!("{HANDLERS}{IN_PLACE}"), prefix, &exports);
    sandbox_with(&[("k.wasm", wasm(&wat))], test_limits())
}

#[test]
fn an_in_place_update_of_an_aliased_result_keeps_the_operands_values() {
    let (_dir, sandbox) = in_place_sandbox("ip1_");
    let h = handler(&sandbox, "ip1_set0_f32");
    let x = [0.0f32, 2.0, 4.0, 6.0, 8.0, 10.0];
    // input_output_aliases={0: 0}: the guest finds x in y and changes y[0].
    let call = HostCall::new().arg(HostBuffer::f32(&[6], &x)).ret_alias(0);
    h.call_host(&call).unwrap();
    assert_eq!(call.result(0).to_f32(), [42.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
    assert_eq!(call.operand(0).to_f32(), call.result(0).to_f32());
    // Without the alias the result starts zeroed, even in the instance that
    // just held x where a result now lies (the host scrubs what it copied
    // in), and even if XLA's buffer held garbage.
    let call = HostCall::new()
        .arg(HostBuffer::f32(&[6], &x))
        .ret(HostBuffer::new(DType::F32, &[6], vec![0xff; 24]));
    h.call_host(&call).unwrap();
    assert_eq!(call.result(0).to_f32(), [42.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(call.operand(0).to_f32(), x, "the operand is left alone");
    assert_eq!(h.live_instances(), 1);
}

#[test]
fn an_aliased_result_is_copied_out_for_f64_with_a_batch_dim() {
    let (_dir, sandbox) = in_place_sandbox("ip2_");
    let h = handler(&sandbox, "ip2_set_rows_f64");
    let x: Vec<f64> = (0..12).map(|i| f64::from(i) * 0.5 + 1e300).collect();
    let call = HostCall::new()
        .arg(HostBuffer::f64(&[3, 4], &x))
        .ret_alias(0);
    h.call_host(&call).unwrap();
    let mut expected = x.clone();
    for row in expected.chunks_mut(4) {
        row[0] = -1.0;
    }
    assert_eq!(call.result(0).to_f64(), expected);
    // A second operand and an unaliased second result keep their rules.
    let call = HostCall::new()
        .arg(HostBuffer::f64(&[3, 4], &x))
        .arg(HostBuffer::f32(&[2], &[7.0, 8.0]))
        .ret_alias(0)
        .ret(HostBuffer::new(DType::F32, &[2], vec![0xff; 8]));
    h.call_host(&call).unwrap();
    assert_eq!(call.result(0).to_f64(), expected);
    assert_eq!(call.result(1).to_f32(), [0.0, 0.0]);
    assert_eq!(call.operand(1).to_f32(), [7.0, 8.0]);
}

#[test]
fn an_aliased_result_reads_and_writes_one_region() {
    let (_dir, sandbox) = in_place_sandbox("ip3_");
    // `double` reads x[i] and writes y[i]: in place, y = 2x.
    let call = HostCall::new()
        .arg(HostBuffer::f32(&[3], &[1.0, 2.5, -3.0]))
        .ret_alias(0);
    handler(&sandbox, "ip3_double").call_host(&call).unwrap();
    assert_eq!(call.result(0).to_f32(), [2.0, 5.0, -6.0]);
    // The guest sees one data pointer for both, as a native handler does.
    let same = handler(&sandbox, "ip3_same_data");
    let call = HostCall::new()
        .arg(HostBuffer::f32(&[2], &[1.0, 2.0]))
        .ret_alias(0);
    same.call_host(&call).unwrap();
    let error = expect_error(&same, &vector_call(&[1.0, 2.0]));
    assert_eq!(
        error.message,
        "target `ip3_same_data` (guest k.wasm): operand 0 and result 0 have different data pointers"
    );
}

#[test]
fn a_result_partially_overlapping_an_operand_is_refused() {
    let (_dir, sandbox) = in_place_sandbox("ip4_");
    let h = handler(&sandbox, "ip4_set0_f32");
    let call = HostCall::new()
        .arg(HostBuffer::f32(&[6], &[1.0; 6]))
        .ret_overlapping(0, 8, HostBuffer::zeros(DType::F32, &[2]));
    let error = expect_error(&h, &call);
    assert_eq!(error.code, ErrorCode::InvalidArgument);
    assert_eq!(
        error.message,
        "target `ip4_set0_f32` (guest k.wasm): operand 0 (24 bytes) and result 0 (8 bytes) \
         overlap in XLA's memory without being the same buffer; the sandbox only aliases a \
         result with an operand at the same address and of the same size"
    );
    assert_eq!(call.result(0).to_f32(), [0.0, 0.0], "nothing was written");
    assert_eq!(call.operand(0).to_f32(), [1.0; 6]);
    // The same target still runs aliased calls.
    let call = HostCall::new()
        .arg(HostBuffer::f32(&[2], &[1.0, 2.0]))
        .ret_alias(0);
    h.call_host(&call).unwrap();
    assert_eq!(call.result(0).to_f32(), [42.0, 2.0]);
}

// ---------------------------------------------------------------------------
// Loading and validation
// ---------------------------------------------------------------------------

#[test]
fn a_valid_guest_lists_its_targets() {
    let engine = Engine::new(&test_limits()).unwrap();
    let bytes = wasm(&guest_wat(HANDLERS, &[("t1", "double"), ("t2", "fail")]));
    let guest = Guest::from_bytes(&engine, Path::new("ok.wasm"), &bytes).unwrap();
    let targets: Vec<(&str, &str)> = guest
        .targets()
        .iter()
        .map(|t| (t.name.as_str(), t.export.as_str()))
        .collect();
    assert_eq!(targets, [("t1", "double"), ("t2", "fail")]);
    assert_eq!(guest.sha256_hex().len(), 64);
    assert!(!guest.uses_wasi());
}

/// Why a guest of the HANDLERS serving target `t` fails to load once each
/// `(from, to)` edit is made to its text; each `from` occurs exactly once.
fn load_error_with_edits(edits: &[(&str, &str)]) -> String {
    let mut wat = guest_wat(HANDLERS, &[("t", "double")]);
    for (from, to) in edits {
        assert_eq!(wat.matches(from).count(), 1, "{from:?} in the test guest");
        wat = wat.replace(from, to);
    }
    load_error(&wasm(&wat))
}

/// Loading the test guest with `edits` fails with a message that contains
/// `expected`.
fn assert_edits_rejected(edits: &[(&str, &str)], expected: &str) {
    let error = load_error_with_edits(edits);
    assert!(error.contains(expected), "{error}");
}

/// Loading a guest of the HANDLERS and `funcs` serving `targets` fails with
/// a message that contains `expected`.
fn assert_rejected(funcs: &str, targets: &[(&str, &str)], expected: &str) {
    let error = load_error(&wasm(&guest_wat(&format!("{HANDLERS} {funcs}"), targets)));
    assert!(error.contains(expected), "{error}");
}

#[test]
fn a_missing_required_export_is_rejected() {
    assert_edits_rejected(
        &[("(export \"cyxla_alloc\")", "")],
        "it does not export `cyxla_alloc` (a function (i32, i32) -> i32)",
    );
}

#[test]
fn a_mistyped_export_is_rejected() {
    assert_rejected(
        "(func (export \"wide\") (param i64) (result i32) (i32.const 0))",
        &[("t", "wide")],
        "it exports `wide` with type (i64) -> i32, expected (i32) -> i32 (the handler of target `t`)",
    );
}

#[test]
fn a_declared_export_that_does_not_exist_is_rejected() {
    assert_rejected(
        "",
        &[("t", "nope")],
        "declares target `t` with export `nope`, but exports no such function",
    );
}

#[test]
fn a_foreign_import_is_rejected_naming_module_and_name() {
    assert_edits_rejected(
        &[(
            "(module",
            "(module (import \"env\" \"foo\" (func (param i32))) ",
        )],
        "bad.wasm is rejected: it imports `env`.`foo`, which the sandbox does not offer",
    );
}

#[test]
fn an_unknown_or_mistyped_cyxla_import_is_rejected() {
    assert_edits_rejected(
        &[(
            "(module",
            "(module (import \"cyxla\" \"open_file\" (func (param i32) (result i32))) ",
        )],
        "imports `cyxla`.`open_file`, which the sandbox does not offer",
    );

    assert_edits_rejected(
        &[
            (
                "(import \"cyxla\" \"stream_get\" (func $stream_get (param i32) (result i32)))",
                "(import \"cyxla\" \"stream_get\" (func $stream_get (param i32 i32) (result i32)))",
            ),
            (
                "(call $stream_get (i32.const 2048))",
                "(call $stream_get (i32.const 2048) (i32.const 0))",
            ),
        ],
        "imports `cyxla`.`stream_get` with type (i32, i32) -> i32, expected (i32) -> i32",
    );
}

#[test]
fn an_imported_memory_is_rejected() {
    assert_edits_rejected(
        &[(
            "(memory (export \"memory\") 2)",
            "(import \"cyxla\" \"memory\" (memory 2)) (export \"memory\" (memory 0))",
        )],
        "imports a memory `cyxla`.`memory`",
    );
}

#[test]
fn a_wrong_abi_version_is_rejected() {
    assert_edits_rejected(
        &[(
            "(func (export \"cyxla_abi_version\") (result i32) (i32.const 1))",
            "(func (export \"cyxla_abi_version\") (result i32) (i32.const 2))",
        )],
        "`cyxla_abi_version()` returned 2; this host speaks guest ABI version 1",
    );
}

#[test]
fn an_api_table_outside_memory_is_rejected() {
    assert_edits_rejected(
        &[(
            "(func (export \"cyxla_api\") (result i32) (i32.const 1024))",
            "(func (export \"cyxla_api\") (result i32) (i32.const -4))",
        )],
        "`cyxla_api()` returned 0xfffffffc",
    );
}

#[test]
fn a_module_without_targets_is_rejected() {
    let wat = format!("(module {PRELUDE} {HANDLERS})");
    let error = load_error(&wasm(&wat));
    assert!(error.contains("it declares no targets"), "{error}");
    // Issue 15: the message says how to declare one, in both languages.
    assert!(
        error.contains("`CYXLA_TARGET(target, Handler);` (C/C++")
            && error.contains("`target!(\"target\", export, handler);` (Rust"),
        "{error}"
    );
    let bad = guest_wat(HANDLERS, &[]).replace(
        "(@custom \"cyxla.targets\" \"\")",
        "(@custom \"cyxla.targets\" \"cyxla-target v2 t double\\0a\")",
    );
    let error = load_error(&wasm(&bad));
    assert!(error.contains("unsupported version"), "{error}");
}

#[test]
fn a_trapping_start_function_is_rejected() {
    assert_rejected(
        "(func $boom unreachable) (start $boom)",
        &[("t", "double")],
        "cannot be instantiated: instantiation trapped: wasm `unreachable` instruction executed",
    );
}

#[test]
fn non_wasm_files_and_components_are_rejected() {
    assert!(load_error(b"#!/bin/sh\necho hi\n").contains("is not a WebAssembly module"));
    assert!(load_error(b"\0asm\x0d\0\x01\0").contains("component"));
}

#[test]
fn a_folder_keeps_good_guests_and_reports_bad_files() {
    let dir = tempfile::tempdir().unwrap();
    write_guest(dir.path(), "good.wasm", &[("good_t", "double")]);
    write(dir.path(), "notes.wasm", b"these are not wasm");
    write(dir.path(), "readme.txt", b"ignored: not a .wasm");
    let engine = Engine::new(&test_limits()).unwrap();
    let guests = Guests::load_dir(&engine, dir.path()).unwrap();
    assert_eq!(guests.guests().len(), 1);
    assert_eq!(guests.rejected().len(), 1);
    let rejected = &guests.rejected()[0];
    assert!(rejected.path.ends_with("notes.wasm"));
    assert!(
        matches!(rejected.error, Error::NotWasm { .. }),
        "{}",
        rejected.error
    );
    assert_eq!(guests.serving("good_t").unwrap().file_name(), "good.wasm");
}

/// A test guest (the HANDLERS) serving `targets`.
fn test_guest(targets: &[(&str, &str)]) -> Vec<u8> {
    wasm(&guest_wat(HANDLERS, targets))
}

/// A sandbox with the test limits over a temp dir holding `files`,
/// allowing only `targets`.
fn sandbox_allowing(files: &[(&str, Vec<u8>)], targets: &[&str]) -> (tempfile::TempDir, Sandbox) {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        write(dir.path(), name, bytes);
    }
    let allow = AllowList::targets(targets.iter().copied());
    let sandbox = Sandbox::new(dir.path(), allow, test_limits()).unwrap();
    (dir, sandbox)
}

#[test]
fn a_target_declared_twice_is_served_by_neither_guest() {
    let (_dir, sandbox) = sandbox_allowing(
        &[
            (
                "a.wasm",
                test_guest(&[("dup", "double"), ("only_a", "double")]),
            ),
            ("b.wasm", test_guest(&[("dup", "fail")])),
        ],
        &["dup", "only_a"],
    );
    assert!(sandbox.guests().serving("dup").is_none());
    assert!(sandbox.handler("dup").is_none());
    assert!(sandbox.handler("only_a").is_some());
    let conflict = sandbox.guests().conflict("dup").unwrap();
    let message = conflict.to_error().to_string();
    assert!(
        message.contains("a.wasm")
            && message.contains("b.wasm")
            && message.contains("none of them serves it"),
        "{message}"
    );
    assert_eq!(sandbox.unserved(), ["dup"]);
    assert!(
        sandbox
            .hint_for_unregistered("dup")
            .unwrap()
            .contains("keep only one of them")
    );
}

#[test]
fn hints_say_why_a_target_is_not_registered() {
    let broken = guest_wat(HANDLERS, &[("broken_t", "double")]).replace(
        "(func (export \"cyxla_abi_version\") (result i32) (i32.const 1))",
        "(func (export \"cyxla_abi_version\") (result i32) (i32.const 9))",
    );
    // broken.wasm fails its trial instantiation: only a guest with an
    // allowed target gets that far (the others are validated, not compiled).
    let (_dir, sandbox) = sandbox_allowing(
        &[
            (
                "x.wasm",
                test_guest(&[("served", "double"), ("allowed", "double")]),
            ),
            ("broken.wasm", wasm(&broken)),
            ("idle.wasm", test_guest(&[("idle_t", "double")])),
        ],
        &["allowed", "ghost", "broken_t"],
    );
    let idle: Vec<_> = sandbox.guests().idle().iter().collect();
    assert_eq!(idle.len(), 1, "{idle:?}");
    assert!(idle[0].path.ends_with("idle.wasm") && idle[0].targets == ["idle_t"]);
    let hint = sandbox.hint_for_unregistered("idle_t").unwrap();
    assert!(
        hint.starts_with("target `idle_t` is served by ")
            && hint.ends_with("idle.wasm but not allowed: add --allow idle_t"),
        "{hint}"
    );
    let hint = sandbox.hint_for_unregistered("served").unwrap();
    assert!(
        hint.starts_with("target `served` is served by ")
            && hint.ends_with("x.wasm but not allowed: add --allow served"),
        "{hint}"
    );
    assert_eq!(sandbox.hint_for_unregistered("allowed"), None);
    assert!(
        sandbox
            .hint_for_unregistered("ghost")
            .unwrap()
            .contains("is allowed, but no guest in")
    );
    let hint = sandbox.hint_for_unregistered("broken_t").unwrap();
    assert!(hint.contains("broken.wasm, which was rejected"), "{hint}");
    assert_eq!(sandbox.hint_for_unregistered("unknown"), None);
    assert!(
        sandbox.handler("served").is_none(),
        "not allowed, not handed out"
    );
}

// ---------------------------------------------------------------------------
// WASI: nothing granted, output to the log, bounded
// ---------------------------------------------------------------------------

const WASI_IMPORTS: &str = r#"
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get"
    (func $clock_time_get (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
"#;

const WASI_HANDLERS: &str = r#"
  (data (i32.const 3000) "hello from guest\n")
  ;; Writes the realtime clock (ns) into the s64 result.
  (func (export "clock") (param $f i32) (result i32)
    (drop (call $clock_time_get (i32.const 0) (i64.const 1) (i32.const 3304)))
    (i64.store (call $out (local.get $f)) (i64.load (i32.const 3304)))
    (i32.const 0))
  ;; Tries to open "/etc/passwd" relative to fd 3 (the first preopen, if
  ;; any); writes the errno into the s32 result.
  (data (i32.const 3400) "/etc/passwd")
  (func (export "open") (param $f i32) (result i32)
    (i32.store (call $out (local.get $f))
      (call $path_open (i32.const 3) (i32.const 0) (i32.const 3400) (i32.const 11)
                       (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 3500)))
    (i32.const 0))
"#;

fn wasi_sandbox(prefix: &str, limits: cyxla_sandbox::Limits) -> (tempfile::TempDir, Sandbox) {
    let hello = format!("{prefix}hello");
    let clock = format!("{prefix}clock");
    let open = format!("{prefix}open");
    // `hello` writes the 17-byte greeting to stdout `times` times (the first
    // arg's dims[0]).
    let greet = write_loop(1, (3000, 17), 3100, "(call $n (local.get $f))");
    let hello_handler = format!(
        r#"(func (export "hello") (param $f i32) (result i32) (local $i i32) {greet} (i32.const 0))"#
    );
    let wat = guest_wat(
        &format!("{WASI_HANDLERS} {hello_handler}"),
        &[(&hello, "hello"), (&clock, "clock"), (&open, "open")],
    );
    let bytes = wasm(&wat.replacen("(module", &format!("(module {WASI_IMPORTS}"), 1));
    sandbox_with(&[("w.wasm", bytes)], limits)
}

#[test]
fn guest_stdout_goes_to_the_log() {
    let (_dir, sandbox) = wasi_sandbox("o_", test_limits());
    assert!(sandbox.guests().serving("o_hello").unwrap().uses_wasi());
    let h = handler(&sandbox, "o_hello");
    let logs = captured_logs(|| h.call_host(&vector_call(&[0.0])).unwrap());
    assert!(logs.contains("hello from guest"), "{logs}");
    assert!(
        logs.contains("guest=\"w.wasm\"") || logs.contains("guest=w.wasm"),
        "{logs}"
    );
}

#[test]
fn guest_output_is_bounded_per_call() {
    let mut limits = test_limits();
    limits.log_bytes = 40;
    let (_dir, sandbox) = wasi_sandbox("p_", limits);
    let h = handler(&sandbox, "p_hello");
    // 10 greetings of 17 bytes: 40 kept, 130 dropped.
    let logs = captured_logs(|| h.call_host(&vector_call(&[0.0; 10])).unwrap());
    assert!(logs.contains("(130 bytes dropped)"), "{logs}");
    assert_eq!(logs.matches("hello from guest").count(), 2, "{logs}");
}

#[test]
fn guests_have_no_clock_and_no_files() {
    let (_dir, sandbox) = wasi_sandbox("q_", test_limits());
    let call = HostCall::new().ret(HostBuffer::new(
        DType::S64,
        &[],
        7i64.to_le_bytes().to_vec(),
    ));
    handler(&sandbox, "q_clock").call_host(&call).unwrap();
    assert_eq!(
        call.result(0).bytes(),
        0i64.to_le_bytes(),
        "the clock is frozen at 0"
    );
    let call = HostCall::new().ret(HostBuffer::new(
        DType::S32,
        &[],
        0i32.to_le_bytes().to_vec(),
    ));
    handler(&sandbox, "q_open").call_host(&call).unwrap();
    let errno = i32::from_le_bytes(call.result(0).bytes().try_into().unwrap());
    assert_eq!(errno, 8, "EBADF: there is no preopened directory");
}

// ---------------------------------------------------------------------------
// More host functions: types, state, bounded messages, exit
// ---------------------------------------------------------------------------

const STATE_IMPORTS: &str = r#"
  (import "cyxla" "type_register" (func $type_register (param i32) (result i32)))
  (import "cyxla" "state_set" (func $state_set (param i32) (result i32)))
  (import "cyxla" "state_get" (func $state_get (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
"#;

const STATE_HANDLERS: &str = r#"
  (data (i32.const 2200) "foo")
  (data (i32.const 2400) "\ff\feabcdefghijklmnop\00")
  ;; Registers type "foo", sets its state to 0x1234 on the first call, and
  ;; writes [type id, state] into the s32[2] result.
  (func (export "stateful") (param $f i32) (result i32)
    (local $e i32)
    (i32.store (i32.const 2048) (i32.const 20))
    (i32.store (i32.const 2056) (i32.const 2200))
    (i32.store (i32.const 2060) (i32.const 3))
    (i32.store (i32.const 2064) (i32.const 2240))
    (i64.store (i32.const 2240) (i64.const 0))
    (local.set $e (call $type_register (i32.const 2048)))
    (if (local.get $e) (then (return (local.get $e))))
    (i32.store (i32.const 2304) (i32.const 24))
    (i32.store (i32.const 2316) (i32.const 3))
    (i32.store (i32.const 2320) (i32.const 2240))
    (i32.store (i32.const 2324) (i32.const 0x1234))
    ;; ALREADY_EXISTS from the second call on: ignored.
    (drop (call $state_set (i32.const 2304)))
    (i32.store (i32.const 2336) (i32.const 24))
    (i32.store (i32.const 2352) (i32.const 2240))
    (local.set $e (call $state_get (i32.const 2336)))
    (if (local.get $e) (then (return (local.get $e))))
    (i32.store (call $out (local.get $f)) (i32.wrap_i64 (i64.load (i32.const 2240))))
    (i32.store offset=4 (call $out (local.get $f)) (i32.load (i32.const 2356)))
    (i32.const 0))
  ;; An error whose message is not UTF-8 and longer than the test limit.
  (func (export "garbled") (param i32) (result i32)
    (call $error (i32.const 2400) (i32.const 13)))
  (func (export "exit") (param i32) (result i32)
    (call $proc_exit (i32.const 3))
    (i32.const 0))
"#;

fn state_sandbox(prefix: &str, limits: cyxla_sandbox::Limits) -> (tempfile::TempDir, Sandbox) {
    let wat = prefixed_guest_wat(STATE_HANDLERS, prefix, &["stateful", "garbled", "exit"]);
    let bytes = wasm(&wat.replacen("(module", &format!("(module {STATE_IMPORTS}"), 1));
    sandbox_with(&[("s.wasm", bytes)], limits)
}

#[test]
fn types_and_state_persist_per_instance() {
    let (_dir, sandbox) = state_sandbox("r_", test_limits());
    let h = handler(&sandbox, "r_stateful");
    for _ in 0..2 {
        let call = HostCall::new().ret(HostBuffer::zeros(DType::S32, &[2]));
        h.call_host(&call).unwrap();
        assert_eq!(i32_words(call.result(0)), [1, 0x1234]);
    }
}

#[test]
fn error_messages_are_bounded_and_decoded_lossily() {
    let mut limits = test_limits();
    limits.error_message = 8;
    let (_dir, sandbox) = state_sandbox("s_", limits);
    let error = expect_error(&handler(&sandbox, "s_garbled"), &HostCall::new());
    assert_eq!(error.code, ErrorCode::Internal);
    assert_eq!(
        error.message,
        "target `s_garbled` (guest s.wasm): \u{fffd}\u{fffd}abcdef… (message cut at 8 bytes)"
    );
}

#[test]
fn exit_ends_the_call_not_the_process() {
    let (_dir, sandbox) = state_sandbox("t_", test_limits());
    let h = handler(&sandbox, "t_exit");
    let error = expect_error(&h, &HostCall::new());
    assert_message_contains(&error, "called exit(3)");
    assert_eq!(h.live_instances(), 0);
}

#[test]
fn an_initial_memory_over_the_limit_is_rejected() {
    let error = load_error_with_edits(&[(
        "(memory (export \"memory\") 2)",
        "(memory (export \"memory\") 100)",
    )]);
    assert!(
        error.contains("cannot be instantiated") && error.contains("(limit 4 MiB)"),
        "{error}"
    );
}

#[test]
fn a_guest_whose_allocator_misaligns_the_scratch_block_is_rejected() {
    // The layout promises 64-byte aligned data regions: a `cyxla_alloc`
    // that returns a block 8 bytes past the alignment it was asked for is
    // caught when the guest is loaded (its first instance), named, and the
    // guest never serves a call.
    let wat = guest_wat(HANDLERS, &[("m_double", "double")]);
    let honest = "    (local.get $p))\n";
    assert_eq!(wat.matches(honest).count(), 1, "the allocator's return");
    let wat = wat.replace(honest, "    (i32.add (local.get $p) (i32.const 8)))\n");
    let (_dir, sandbox) = sandbox_with(&[("m.wasm", wasm(&wat))], test_limits());
    assert!(sandbox.handler("m_double").is_none());
    let rejected = sandbox.guests().rejected();
    assert_eq!(rejected.len(), 1);
    let text = rejected[0].error.to_string();
    assert!(
        text.contains("cyxla_alloc(65536, 64)` returned 0x2008, not an aligned block"),
        "{text}"
    );
}
