//! Issue 36: the unwritten-results check (`--limit unwritten=warn|error`)
//! names the result elements a guest never wrote; a guest that writes
//! every element passes; results aliased with an operand are not checked;
//! off (the default), nothing is reported.

use crate::common;

use common::*;
use cyxla_sandbox::Limits;
use cyxla_sandbox::limits::Unwritten;
use plugin_glue::ErrorCode;

/// `skip_last`: out[i] = in[i] for every i but the last; `nothing`:
/// returns at once, writing nothing.
const FUNCS: &str = r#"
  (func (export "skip_last") (param $f i32) (result i32)
    (call $scale_first (local.get $f) (f32.const 1)
      (i32.sub (call $n (local.get $f)) (i32.const 1)))
    (i32.const 0))
  (func (export "nothing") (param i32) (result i32) (i32.const 0))
"#;

fn checked(mode: Unwritten) -> (tempfile::TempDir, cyxla_sandbox::Sandbox) {
    let funcs = format!("{HANDLERS}{FUNCS}");
    let wasm = wasm(&guest_wat(
        &funcs,
        &[
            ("double", "double"),
            ("skip_last", "skip_last"),
            ("nothing", "nothing"),
        ],
    ));
    let mut limits = test_limits();
    limits.unwritten = mode;
    sandbox_with(&[("g.wasm", wasm)], limits)
}

#[test]
fn issue36_error_mode_names_the_element_a_guest_never_wrote() {
    let (_dir, sandbox) = checked(Unwritten::Error);
    let skip = handler(&sandbox, "skip_last");
    let error = expect_error(&skip, &vector_call(&[1.0, 2.0, 3.0, 4.0]));
    assert_code(&error, ErrorCode::Internal);
    assert_message_contains(
        &error,
        "result 0: 1 of 4 elements never written (first at 3)",
    );

    // Every element unwritten: the count and the first indices.
    let nothing = handler(&sandbox, "nothing");
    let error = expect_error(&nothing, &vector_call(&[0.0; 10]));
    assert_message_contains(
        &error,
        "result 0: 10 of 10 elements never written (first at 0, 1, 2, 3, …)",
    );

    // A guest that writes everything passes, and its results are right.
    run_double(&handler(&sandbox, "double"));
}

#[test]
fn issue36_aliased_results_are_not_checked() {
    let (_dir, sandbox) = checked(Unwritten::Error);
    // In place: the result is the operand's buffer; a guest that leaves it
    // as it is has written the operand's values, not nothing.
    let call = cyxla_sandbox::HostCall::new()
        .arg(cyxla_sandbox::HostBuffer::f32(&[3], &[1.0, 2.0, 3.0]))
        .ret_alias(0);
    handler(&sandbox, "nothing")
        .call_host(&call)
        .expect("an aliased result is not checked");
    assert_eq!(call.result(0).to_f32(), [1.0, 2.0, 3.0]);
}

#[test]
fn issue36_warn_mode_logs_and_off_mode_says_nothing() {
    let (_dir, sandbox) = checked(Unwritten::Warn);
    let skip = handler(&sandbox, "skip_last");
    let call = vector_call(&[1.0, 2.0, 3.0, 4.0]);
    let logs = captured_logs(|| skip.call_host(&call).expect("warn: the call succeeds"));
    assert!(
        logs.contains("result 0: 1 of 4 elements never written (first at 3)"),
        "{logs}"
    );
    assert_eq!(&call.result(0).to_f32()[..3], [1.0, 2.0, 3.0]);

    let (_dir, sandbox) = checked(Unwritten::Off);
    let skip = handler(&sandbox, "skip_last");
    let call = vector_call(&[1.0, 2.0, 3.0, 4.0]);
    let logs = captured_logs(|| skip.call_host(&call).expect("off: the call succeeds"));
    assert!(!logs.contains("never written"), "{logs}");
}

#[test]
fn issue36_unwritten_is_a_limit_setting() {
    let mut limits = Limits::default();
    assert_eq!(limits.unwritten, Unwritten::Off);
    limits.set("unwritten", "warn").unwrap();
    assert_eq!(limits.unwritten, Unwritten::Warn);
    limits.set("unwritten", "error").unwrap();
    assert_eq!(limits.unwritten, Unwritten::Error);
    let e = limits.set("unwritten", "loud").unwrap_err().to_string();
    assert!(e.contains("unwritten") && e.contains("loud"), "{e}");
}
