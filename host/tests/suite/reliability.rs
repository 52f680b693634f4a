//! Reliability (issue 16): each class of hostile guest found in the second
//! round, with variations (sizes, host calls, kinds of thread). Times are
//! checked with generous bounds: a 1 s deadline must end before 3 s.

use crate::common;

use std::time::{Duration, Instant};

use crate::hostile::assert_quick_then_serves;
use common::*;
use cyxla_sandbox::{AllowList, HostCall, Limits, Sandbox};
use plugin_glue::ErrorCode;

/// Imports the hostile guests below use.
const IMPORTS: &str = r#"
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock_time_get (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sched_yield" (func $sched_yield (result i32)))
  (import "cyxla" "type_register" (func $type_register (param i32) (result i32)))
  (import "cyxla" "error_destroy" (func $error_destroy (param i32)))
"#;

/// A guest: `IMPORTS`, the common handlers, `funcs`, and `targets`.
fn guest(funcs: &str, targets: &[(&str, &str)]) -> Vec<u8> {
    let wat = guest_wat(&format!("{HANDLERS} {funcs}"), targets);
    wasm(&wat.replacen("(module", &format!("(module {IMPORTS}"), 1))
}

/// Runs `f` on a new thread with a native stack of `bytes`.
fn on_thread<T: Send>(bytes: usize, f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(bytes)
            .spawn_scoped(scope, f)
            .unwrap()
            .join()
            .unwrap()
    })
}

// ---------------------------------------------------------------------------
// 1. Native stack: every thread that runs guest code has room for the
//    largest wasm stack the limits allow, or the call is refused
// ---------------------------------------------------------------------------

/// `$deep(n)` recurses `n` frames deep.
const DEEP: &str = r#"
  (func $deep (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (i32.add (call $deep (i32.sub (local.get $n) (i32.const 1))) (local.get $n)))))
"#;

/// Frames of `$deep` that need more than 1 MiB of wasm stack and less than
/// 4 MiB (checked by `a_deep_start_function_fits_4_mib_not_1_mib`).
const DEPTH: u32 = 50_000;

fn limits_with_stack(stack: &str) -> Limits {
    let mut limits = test_limits();
    limits.set("stack", stack).unwrap();
    limits.instantiate_timeout = Duration::from_secs(10);
    limits.call_timeout = Duration::from_secs(10);
    limits
}

#[test]
fn endless_recursion_in_a_start_function_is_a_rejection_in_the_loader_pool() {
    let wat = format!("{DEEP} (func $down (drop (call $recurse (i32.const 0)))) (start $down)");
    for stack in ["2MiB", "3MiB", "4MiB"] {
        let (_dir, sandbox) = sandbox_with(
            &[
                ("deep.wasm", guest(&wat, &[("d_double", "double")])),
                ("ok.wasm", guest("", &[("ok_double", "double")])),
            ],
            limits_with_stack(stack),
        );
        let [rejected] = sandbox.guests().rejected() else {
            panic!("{:?}", sandbox.guests().rejected());
        };
        let message = rejected.error.to_string();
        assert!(
            message
                .contains("instantiation trapped: call stack exhausted (the wasm stack limit is"),
            "{stack}: {message}"
        );
        on_thread(16 << 20, || run_double(&handler(&sandbox, "ok_double")));
    }
}

#[test]
fn a_deep_start_function_fits_4_mib_not_1_mib() {
    let wat = format!("{DEEP} (func $down (drop (call $deep (i32.const {DEPTH})))) (start $down)");
    let bytes = guest(&wat, &[("d_double", "double")]);
    let (_dir, small) = sandbox_with(&[("deep.wasm", bytes.clone())], limits_with_stack("1MiB"));
    assert_eq!(
        small.guests().rejected().len(),
        1,
        "{DEPTH} frames fit 1 MiB"
    );
    let (_dir, big) = sandbox_with(&[("deep.wasm", bytes)], limits_with_stack("4MiB"));
    assert!(
        big.guests().rejected().is_empty(),
        "{:?}",
        big.guests().rejected()
    );
}

#[test]
fn instantiation_on_a_small_calling_thread_moves_to_a_thread_with_room() {
    // The start function needs more than 1 MiB of native stack; the first
    // call instantiates on the calling thread, which has 1 MiB.
    let wat = format!("{DEEP} (func $down (drop (call $deep (i32.const {DEPTH})))) (start $down)");
    let (_dir, sandbox) = sandbox_with(
        &[("deep.wasm", guest(&wat, &[("d_double", "double")]))],
        limits_with_stack("4MiB"),
    );
    let h = handler(&sandbox, "d_double");
    let error = on_thread(1 << 20, || expect_error(&h, &vector_call(&[1.0])));
    // Instantiated elsewhere; the call itself is refused, not crashed.
    assert_code(&error, ErrorCode::ResourceExhausted);
    assert_message_contains(
        &error,
        "native stack left, less than the wasm stack limit (4 MiB, `stack`)",
    );
    assert_eq!(h.live_instances(), 1, "the instance was made");
    on_thread(16 << 20, || run_double(&h));
}

#[test]
fn a_call_on_a_thread_without_room_is_refused_and_one_with_room_traps_cleanly() {
    for stack in ["2MiB", "4MiB"] {
        let (_dir, sandbox) = sandbox_with(
            &[(
                "r.wasm",
                guest("", &[("r_recurse", "recurse"), ("r_double", "double")]),
            )],
            limits_with_stack(stack),
        );
        let (recurse, double) = (
            handler(&sandbox, "r_recurse"),
            handler(&sandbox, "r_double"),
        );
        // Rust's default thread stack (rayon's too): 2 MiB.
        let error = on_thread(2 << 20, || expect_error(&recurse, &vector_call(&[1.0])));
        assert_code(&error, ErrorCode::ResourceExhausted);
        assert_message_contains(&error, "`stack`");
        let error = on_thread(16 << 20, move || {
            expect_error(&recurse, &vector_call(&[1.0]))
        });
        assert_code(&error, ErrorCode::ResourceExhausted);
        assert!(
            error.message.contains(&format!(
                "trapped: call stack exhausted (the wasm stack limit is {} MiB)",
                &stack[..1]
            )),
            "{}",
            error.message
        );
        on_thread(16 << 20, || run_double(&double));
    }
}

// ---------------------------------------------------------------------------
// 2. No sleeping: poll_oneoff clock subscriptions fire at once
// ---------------------------------------------------------------------------

/// `sleep(subs, n, flags)`: `n` clock subscriptions of 60 s (absolute if
/// `flags` is 1) at guest address 4096 (8-aligned), events at 4608; writes
/// into its s32[4] result poll_oneoff's errno, the events it reported, the
/// type and userdata of the last event.
const SLEEPERS: &str = r#"
  (func $sleep (param $f i32) (param $n i32) (param $flags i32)
    (local $i i32) (local $out i32)
    (memory.fill (i32.const 4096) (i32.const 0) (i32.const 1024))
    (loop $sub
      (i64.store (i32.add (i32.const 4096) (i32.mul (local.get $i) (i32.const 48)))
                 (i64.extend_i32_u (i32.add (local.get $i) (i32.const 7))))
      (i64.store offset=24 (i32.add (i32.const 4096) (i32.mul (local.get $i) (i32.const 48)))
                 (i64.const 60000000000))
      (i32.store16 offset=40 (i32.add (i32.const 4096) (i32.mul (local.get $i) (i32.const 48)))
                 (local.get $flags))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $sub (i32.lt_u (local.get $i) (local.get $n))))
    (local.set $out (call $out (local.get $f)))
    (i32.store (local.get $out)
      (call $poll_oneoff (i32.const 4096) (i32.const 4608) (local.get $n) (i32.const 4900)))
    (i32.store offset=4 (local.get $out) (i32.load (i32.const 4900)))
    (i32.store offset=8 (local.get $out)
      (i32.load8_u offset=10 (i32.add (i32.const 4608) (i32.mul (i32.sub (local.get $n) (i32.const 1)) (i32.const 32)))))
    (i32.store offset=12 (local.get $out)
      (i32.load (i32.add (i32.const 4608) (i32.mul (i32.sub (local.get $n) (i32.const 1)) (i32.const 32))))))
  (func (export "sleep_relative") (param $f i32) (result i32)
    (call $sleep (local.get $f) (i32.const 1) (i32.const 0)) (i32.const 0))
  (func (export "sleep_absolute") (param $f i32) (result i32)
    (call $sleep (local.get $f) (i32.const 1) (i32.const 1)) (i32.const 0))
  (func (export "sleep_two") (param $f i32) (result i32)
    (call $sleep (local.get $f) (i32.const 2) (i32.const 0)) (i32.const 0))
  (func (export "sleep_forever") (param $f i32) (result i32)
    (loop $l (call $sleep (local.get $f) (i32.const 2) (i32.const 1)) (br $l))
    (i32.const 0))
"#;

#[test]
fn sleeping_returns_at_once_relative_absolute_or_two_clocks() {
    for (interrupt, mut limits) in limits_per_mechanism() {
        limits.call_timeout = Duration::from_secs(1);
        let (_dir, sandbox) = sandbox_with(
            &[(
                "s.wasm",
                guest(
                    SLEEPERS,
                    &[
                        ("s_relative", "sleep_relative"),
                        ("s_absolute", "sleep_absolute"),
                        ("s_two", "sleep_two"),
                        ("s_forever", "sleep_forever"),
                        ("s_double", "double"),
                    ],
                ),
            )],
            limits,
        );
        for (target, events, userdata) in
            [("s_relative", 1, 7), ("s_absolute", 1, 7), ("s_two", 2, 8)]
        {
            let call = HostCall::new().ret(cyxla_sandbox::HostBuffer::zeros(
                plugin_glue::DType::S32,
                &[4],
            ));
            let started = Instant::now();
            handler(&sandbox, target).call_host(&call).unwrap();
            let took = started.elapsed();
            // errno 0, every subscription reported, a clock event (type 0).
            assert_eq!(
                i32_words(call.result(0)),
                [0, events, 0, userdata],
                "{interrupt:?} {target}"
            );
            assert!(
                took < Duration::from_millis(500),
                "{interrupt:?} {target}: slept {took:?}"
            );
        }
        let (error, took) = timed_error(&handler(&sandbox, "s_forever"), &vector_call(&[1.0]));
        assert_code(&error, ErrorCode::DeadlineExceeded);
        assert_quick_then_serves(
            took,
            Duration::from_secs(3),
            format_args!("{interrupt:?}"),
            &sandbox,
            "s_double",
        );
    }
}

// ---------------------------------------------------------------------------
// 3. Instantiation deadlines hold when the start function or `_initialize`
//    loops on host calls
// ---------------------------------------------------------------------------

/// Loop bodies, one host call each.
const HOST_CALLS: [(&str, &str); 7] = [
    (
        "random_get",
        "(drop (call $random_get (i32.const 4096) (i32.const 16)))",
    ),
    (
        "args_sizes_get",
        "(drop (call $args_sizes_get (i32.const 4096) (i32.const 4100)))",
    ),
    (
        "clock_time_get",
        "(drop (call $clock_time_get (i32.const 1) (i64.const 0) (i32.const 4096)))",
    ),
    (
        "fd_write",
        "(i32.store (i32.const 4104) (i32.const 2100)) (i32.store (i32.const 4108) (i32.const 1))
         (drop (call $fd_write (i32.const 1) (i32.const 4104) (i32.const 1) (i32.const 4112)))",
    ),
    (
        "poll_oneoff",
        "(i64.store (i32.const 4224) (i64.const 60000000000))
         (drop (call $poll_oneoff (i32.const 4200) (i32.const 4400) (i32.const 1) (i32.const 4500)))",
    ),
    ("sched_yield", "(drop (call $sched_yield))"),
    (
        "type_register",
        "(i32.store (i32.const 2048) (i32.const 20)) (i32.store (i32.const 2056) (i32.const 2100))
         (i32.store (i32.const 2060) (i32.const 3)) (i32.store (i32.const 2064) (i32.const 2240))
         (drop (call $type_register (i32.const 2048)))",
    ),
];

#[test]
fn a_start_function_or_initialize_looping_on_host_calls_is_rejected_in_time() {
    for interrupt in interrupt_mechanisms() {
        let dir = tempfile::tempdir().unwrap();
        for (name, body) in HOST_CALLS {
            let start = format!("(func $s (loop $l {body} (br $l))) (start $s)");
            write(
                dir.path(),
                &format!("start_{name}.wasm"),
                &guest(&start, &[(&format!("s_{name}"), "double")]),
            );
            let init = format!("(func (export \"_initialize\") (loop $l {body} (br $l)))");
            write(
                dir.path(),
                &format!("init_{name}.wasm"),
                &guest(&init, &[(&format!("i_{name}"), "double")]),
            );
        }
        write(
            dir.path(),
            "ok.wasm",
            &guest("", &[("ok_double", "double")]),
        );
        let mut limits = test_limits();
        limits.interrupt = interrupt;
        limits.instantiate_timeout = Duration::from_secs(1);
        let started = Instant::now();
        let sandbox = Sandbox::new(dir.path(), AllowList::all(), limits).unwrap();
        let took = started.elapsed();
        let rejected = sandbox.guests().rejected();
        assert_eq!(rejected.len(), 2 * HOST_CALLS.len(), "{rejected:?}");
        for r in rejected {
            let message = r.error.to_string();
            assert!(
                message.contains("exceeded its deadline (1s)"),
                "{interrupt:?}: {message}"
            );
        }
        // 14 modules of 1 s each on at least one loader thread.
        assert!(
            took < Duration::from_secs(3 * 2 * HOST_CALLS.len() as u64),
            "{interrupt:?}: {took:?}"
        );
        run_double(&handler(&sandbox, "ok_double"));
    }
}

// ---------------------------------------------------------------------------
// 4. Deadlines cover time spent in host code
// ---------------------------------------------------------------------------

/// Handlers that spend their time in host code or wasmtime builtins,
/// forever: WASI calls over large buffers (memory grown to 264 MiB first),
/// bulk memory, `memory.grow`, 60 s sleeps, cyxla calls.
const HOST_WORK: &str = r#"
  (func $big
    (if (i32.lt_u (memory.size) (i32.const 4224))
      (then (drop (memory.grow (i32.sub (i32.const 4224) (memory.size)))))))
  (func (export "random_64m") (param i32) (result i32)
    (call $big)
    (loop $l (drop (call $random_get (i32.const 65536) (i32.const 67108864))) (br $l))
    (i32.const 0))
  (func (export "write_4m") (param i32) (result i32)
    (call $big)
    (i32.store (i32.const 4104) (i32.const 65536)) (i32.store (i32.const 4108) (i32.const 4194304))
    (loop $l (drop (call $fd_write (i32.const 1) (i32.const 4104) (i32.const 1) (i32.const 4112))) (br $l))
    (i32.const 0))
  (func (export "fill_256m") (param i32) (result i32)
    (call $big)
    (loop $l (memory.fill (i32.const 65536) (i32.const 7) (i32.const 268435456)) (br $l))
    (i32.const 0))
  (func (export "copy_128m") (param i32) (result i32)
    (call $big)
    (loop $l (memory.copy (i32.const 65536) (i32.const 134283264) (i32.const 134217728)) (br $l))
    (i32.const 0))
  (func (export "poll_4k") (param i32) (result i32)
    (call $big)
    (loop $l (drop (call $poll_oneoff (i32.const 65536) (i32.const 1048576) (i32.const 4096) (i32.const 4500))) (br $l))
    (i32.const 0))
  (func (export "grow_loop") (param i32) (result i32)
    (loop $l (drop (memory.grow (i32.const 1))) (br $l))
    (i32.const 0))
  (func (export "sleep_60s_loop") (param i32) (result i32)
    (i64.store (i32.const 4224) (i64.const 60000000000))
    (loop $l
      (drop (call $poll_oneoff (i32.const 4200) (i32.const 4400) (i32.const 1) (i32.const 4500)))
      (br $l))
    (i32.const 0))
  (func (export "error_create_loop") (param i32) (result i32)
    ;; XLA_FFI_Error_Destroy_Args at 2080: struct_size 12, no extension,
    ;; the error.
    (i32.store (i32.const 2080) (i32.const 12))
    (i32.store (i32.const 2084) (i32.const 0))
    (loop $l
      (i32.store (i32.const 2088) (call $error (i32.const 2100) (i32.const 3)))
      (call $error_destroy (i32.const 2080))
      (br $l))
    (i32.const 0))
  (func (export "type_register_loop") (param i32) (result i32)
    (i32.store (i32.const 2048) (i32.const 20)) (i32.store (i32.const 2056) (i32.const 2100))
    (i32.store (i32.const 2060) (i32.const 3)) (i32.store (i32.const 2064) (i32.const 2240))
    (loop $l (drop (call $type_register (i32.const 2048))) (br $l))
    (i32.const 0))
"#;

/// `HOST_WORK`'s handlers, and `spin` (a plain loop, no host code).
const HOST_WORK_TARGETS: [&str; 10] = [
    "spin",
    "random_64m",
    "write_4m",
    "fill_256m",
    "copy_128m",
    "poll_4k",
    "type_register_loop",
    "grow_loop",
    "sleep_60s_loop",
    "error_create_loop",
];

#[test]
fn a_1s_deadline_ends_every_class_of_host_work_before_3s() {
    for (interrupt, mut limits) in limits_per_mechanism() {
        limits.call_timeout = Duration::from_secs(1);
        limits.memory = 300 << 20;
        let targets: Vec<(String, &str)> = HOST_WORK_TARGETS
            .iter()
            .map(|e| (format!("h_{e}"), *e))
            .chain([("h_double".to_owned(), "double")])
            .collect();
        let targets: Vec<(&str, &str)> = targets.iter().map(|(t, e)| (t.as_str(), *e)).collect();
        let (_dir, sandbox) = sandbox_with(&[("h.wasm", guest(HOST_WORK, &targets))], limits);
        for export in HOST_WORK_TARGETS {
            let target = format!("h_{export}");
            let (error, took) = deadline_error(&sandbox, &target, "h.wasm", "1s");
            eprintln!(
                "{interrupt:?} {export}: stopped after {took:?} (overshoot {:?})",
                took.saturating_sub(Duration::from_secs(1))
            );
            // A guest that ran out of time after a refused growth is told
            // both, with the memory limit as the code.
            let code = if export == "grow_loop" {
                ErrorCode::ResourceExhausted
            } else {
                ErrorCode::DeadlineExceeded
            };
            assert_eq!(error.code, code, "{target}: {}", error.message);
            assert_quick_then_serves(
                took,
                Duration::from_secs(3),
                format_args!("{interrupt:?} {export}"),
                &sandbox,
                "h_double",
            );
        }
    }
}

// ---------------------------------------------------------------------------
// 5. Loading is linear in the number of targets, which has a limit
// ---------------------------------------------------------------------------

#[test]
fn targets_per_module_have_a_limit_and_load_in_linear_time() {
    let error = load_error(&many_targets(1001));
    assert!(
        error.contains("it declares 1001 targets, over the limit of 1000 (targets)"),
        "{error}"
    );
    let mut limits = test_limits();
    limits.set("targets", "100000").unwrap();
    limits.instantiate_timeout = Duration::from_secs(60);
    let engine = cyxla_sandbox::Engine::new(&limits).unwrap();
    let mut took = Vec::new();
    for n in [25_000, 100_000] {
        let bytes = many_targets(n);
        let started = Instant::now();
        let guest =
            cyxla_sandbox::Guest::from_bytes(&engine, std::path::Path::new("many.wasm"), &bytes)
                .unwrap();
        took.push(started.elapsed());
        assert_eq!(guest.targets().len(), n);
        assert_eq!(guest.target_index(&format!("t{}", n - 1)), Some(n - 1));
    }
    eprintln!(
        "load of 25 000 targets: {:?}, of 100 000: {:?}",
        took[0], took[1]
    );
    // Four times the targets: linear is 4x, quadratic 16x; allow 8x.
    assert!(
        took[1] < took[0] * 8 + Duration::from_millis(200),
        "{took:?}"
    );
}

// ---------------------------------------------------------------------------
// 7. Messages derived from guest bytes are bounded
// ---------------------------------------------------------------------------

#[test]
fn trap_backtraces_with_huge_names_stay_within_the_message_limit() {
    // Four frames named by 100 000-byte names (the name section).
    let name = "n".repeat(100_000);
    let wat = format!(
        "(func ${name}1 (param i32) (result i32) (call ${name}2 (local.get 0)))
         (func ${name}2 (param i32) (result i32) (call ${name}3 (local.get 0)))
         (func ${name}3 (param i32) (result i32) (call ${name}4 (local.get 0)))
         (func ${name}4 (param i32) (result i32) (unreachable))
         (export \"deep_trap\" (func ${name}1))"
    );
    for limit in ["16 KiB", "64 KiB"] {
        let mut limits = test_limits();
        limits.set("error_message", limit).unwrap();
        let max = limits.error_message;
        let (_dir, sandbox) = sandbox_with(
            &[("names.wasm", guest(&wat, &[("n_trap", "deep_trap")]))],
            limits,
        );
        let error = expect_error(&handler(&sandbox, "n_trap"), &vector_call(&[1.0]));
        assert!(
            error
                .message
                .contains("trapped: wasm `unreachable` instruction executed (in nnnn"),
            "{}",
            &error.message[..200]
        );
        // The target/guest prefix comes on top of the guest-derived text.
        assert!(
            error.message.len() < max + 200,
            "{limit}: {} bytes",
            error.message.len()
        );
    }
}

#[test]
fn rejection_reasons_quoting_the_module_are_bounded() {
    let name = "i".repeat(90_000);
    let wat = guest_wat(HANDLERS, &[("e_double", "double")]).replacen(
        "(module",
        &format!("(module (import \"evil\" \"{name}\" (func))"),
        1,
    );
    let message = load_error(&wasm(&wat));
    assert!(
        message.contains("is rejected: it imports `evil`.`iiii"),
        "{}",
        &message[..message.len().min(200)]
    );
    assert!(
        message.contains("bytes cut)"),
        "{}",
        &message[..message.len().min(200)]
    );
    assert!(
        message.len() < test_limits().error_message + 200,
        "{}",
        message.len()
    );
}

// ---------------------------------------------------------------------------
// 8. Wasm proposals the sandbox does not need are off
// ---------------------------------------------------------------------------

#[test]
fn modules_using_a_disabled_proposal_are_rejected_with_the_reason() {
    let cases = [
        (
            "gc",
            "(type $s (struct (field i32))) (func $g (drop (struct.new $s (i32.const 1))))",
        ),
        (
            "function references",
            "(type $t (func)) (func $r (param (ref $t)))",
        ),
        ("exceptions", "(tag $e) (func $x (throw $e))"),
        ("tail calls", "(func $a (return_call $a))"),
        ("multi-memory", "(memory $second 1)"),
        ("stack switching", "(type $f (func)) (type $c (cont $f))"),
    ];
    for (proposal, body) in cases {
        let message = load_error(&guest(body, &[("p_double", "double")]));
        assert!(
            message.contains("is not valid WebAssembly")
                && [
                    "not enabled",
                    "support",
                    "required",
                    "multiple memories",
                    "disabled"
                ]
                .iter()
                .any(|why| message.contains(why)),
            "{proposal}: {message}"
        );
        eprintln!("{proposal}: {message}");
    }
}

/// A guest whose `locals` handler declares `n` i32 locals and reads every
/// one of them in a loop (the shape that makes compilers blow up).
fn many_locals(n: usize) -> Vec<u8> {
    let decls = " i32".repeat(n);
    let reads: String = (0..n).map(|i| format!("(local.get {})\n", i + 1)).collect();
    let adds = "(i32.add)\n".repeat(n);
    let funcs = format!(
        r#"(func (export "locals") (param $f i32) (result i32) (local{decls})
             (loop $l
               (i32.const 0)
               {reads}
               {adds}
               (br_if $l (i32.eqz))
             )
             (i32.const 0))"#
    );
    guest(&funcs, &[("locals", "locals")])
}

#[test]
fn functions_with_too_many_locals_are_refused_before_compiling() {
    let limits = Limits::default();
    assert_eq!(limits.locals, 10_000);
    for n in [10_001, 50_000] {
        let start = Instant::now();
        let err = load_error(&many_locals(n));
        assert!(
            err.contains("locals, over the limit (locals)"),
            "{n}: {err}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{n}: refused before compiling"
        );
    }
    // At the limit it compiles, in bounded time.
    let took = compiles_in_bounded_time("l.wasm", many_locals(10_000), limits);
    eprintln!("a function of 10 000 locals read in a loop compiles in {took:?}");
    // `--limit locals=N` (or a side file) sets another limit.
    let err = load_error_under_limit(("locals", "100"), "l.wasm", &many_locals(101));
    assert!(err.contains("more than 100 locals"), "{err}");
}

/// Loads `bytes` as `file` into a sandbox under `limits`, and fails unless
/// it is accepted within 120 s; returns the time it took.
fn compiles_in_bounded_time(file: &str, bytes: Vec<u8>, limits: Limits) -> Duration {
    let start = Instant::now();
    let (_dir, sandbox) = sandbox_with(&[(file, bytes)], limits);
    assert!(
        sandbox.guests().rejected().is_empty(),
        "{:?}",
        sandbox.guests().rejected()
    );
    let took = start.elapsed();
    assert!(took < Duration::from_secs(120), "{took:?}");
    took
}

/// Why `bytes` (as `file`) fails to load under the default limits with one
/// limit set otherwise, as `--limit name=value` would.
fn load_error_under_limit((name, value): (&str, &str), file: &str, bytes: &[u8]) -> String {
    let mut limits = Limits::default();
    limits.set(name, value).unwrap();
    let engine = cyxla_sandbox::Engine::new(&limits).unwrap();
    cyxla_sandbox::Guest::from_bytes(&engine, std::path::Path::new(file), bytes)
        .unwrap_err()
        .to_string()
}

/// A guest whose `blocks` handler has `n` blocks: in a chain (each ends
/// with a `br_if` out of it: the shape whose compile time grows with the
/// square of `n`), or nested `n` deep.
fn many_blocks(n: usize, nested: bool) -> Vec<u8> {
    let body = if nested {
        format!("{}{}", "(block\n".repeat(n), ")".repeat(n))
    } else {
        "(block (local.set $f (i32.add (local.get $f) (i32.const 1))) (br_if 0 (local.get $f)))\n"
            .repeat(n)
    };
    let funcs =
        format!(r#"(func (export "blocks") (param $f i32) (result i32) {body} (i32.const 0))"#);
    guest(&funcs, &[("blocks", "blocks")])
}

#[test]
fn functions_with_too_many_blocks_are_refused_before_compiling() {
    let limits = Limits::default();
    assert_eq!(limits.blocks, 10_000);
    for (n, nested) in [
        (10_001, false),
        (40_000, false),
        (10_001, true),
        (100_000, true),
    ] {
        let start = Instant::now();
        let err = load_error(&many_blocks(n, nested));
        assert!(
            err.contains("has more than 10000 blocks, loops and ifs, over the limit (blocks)"),
            "{n} {nested}: {err}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{n} {nested}: refused before compiling, in {:?}",
            start.elapsed()
        );
    }
    // At the limit it compiles, in bounded time.
    for nested in [false, true] {
        let took = compiles_in_bounded_time("b.wasm", many_blocks(10_000, nested), limits.clone());
        eprintln!("a function of 10 000 blocks (nested: {nested}) compiles in {took:?}");
    }
    // `--limit blocks=N` (or a side file) sets another limit.
    let err = load_error_under_limit(("blocks", "100"), "b.wasm", &many_blocks(101, false));
    assert!(err.contains("more than 100 blocks"), "{err}");
    assert!(err.contains("b.wasm"), "{err}");
}
