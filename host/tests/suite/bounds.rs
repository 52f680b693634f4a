//! Linear-memory bounds under the engine's code generation (issue 17, P3).
//!
//! The engine reserves 4 GiB plus a 32 MiB guard for every linear memory
//! so that Cranelift emits no bounds checks: an access past the memory's
//! current size lands on an inaccessible page and traps by signal. These
//! tests pin what that must still guarantee, at the edges where a wrong
//! reservation, guard or limit would show: the memory limit is reached
//! exactly and not passed, every access that ends one byte past the end
//! traps (any width, scalar or SIMD, plain or bulk), and so do accesses at
//! the top of the 32-bit index space and with static offsets inside and
//! past the guard. Each trap fails its own call only; the next call works.
//! Run under both deadline mechanisms, which compile guests differently.

use crate::common;

use common::*;
use cyxla_sandbox::limits::Interrupt;
use cyxla_sandbox::{HostBuffer, HostCall, Limits, Sandbox};
use plugin_glue::{DType, ErrorCode};

/// Pages of the memory limit: not a power of two, so that the limit, not a
/// rounded reservation, is what stops growth.
const LIMIT_PAGES: u32 = 67;

/// Handlers that grow memory to the limit and then touch its edge. `$end`
/// is the byte size of memory after growing.
fn handlers() -> String {
    let edge = |name: &str, body: &str| {
        format!(
            r#"(func (export "{name}") (param $f i32) (result i32)
                 (local $end i32)
                 (local.set $end (call $to_limit))
                 {body}
                 (i32.const 0))"#
        )
    };
    let mut funcs = format!(
        r#"
  ;; Grows memory to exactly LIMIT_PAGES pages; returns its size in bytes.
  (func $to_limit (result i32)
    (if (i32.lt_u (memory.size) (i32.const {LIMIT_PAGES}))
      (then
        (if (i32.eq (memory.grow (i32.sub (i32.const {LIMIT_PAGES}) (memory.size))) (i32.const -1))
          (then (unreachable)))))
    (i32.shl (memory.size) (i32.const 16)))
"#
    );
    // In bounds: the last bytes of memory, every width, then one page more
    // (refused). Result: [memory.size, memory.grow(1), the stored word].
    funcs.push_str(&edge(
        "edge_ok",
        r#"(i32.store8 (i32.sub (local.get $end) (i32.const 1)) (i32.const 7))
           (i64.store (i32.sub (local.get $end) (i32.const 16)) (i64.const -1))
           (v128.store (i32.sub (local.get $end) (i32.const 32)) (v128.const i32x4 1 2 3 4))
           (memory.fill (i32.sub (local.get $end) (i32.const 64)) (i32.const 9) (i32.const 16))
           (memory.copy (i32.sub (local.get $end) (i32.const 48)) (i32.sub (local.get $end) (i32.const 64)) (i32.const 16))
           (i32.store (i32.sub (local.get $end) (i32.const 4)) (i32.const 0x01020304))
           (i32.store (call $out (local.get $f)) (memory.size))
           (i32.store offset=4 (call $out (local.get $f)) (memory.grow (i32.const 1)))
           (i32.store offset=8 (call $out (local.get $f))
             (i32.load (i32.sub (local.get $end) (i32.const 4))))"#,
    ));
    for (name, body) in ATTACKS {
        funcs.push_str(&edge(name, body));
    }
    funcs
}

/// Accesses that must trap, by export name: each runs after growing memory
/// to the limit, with `$end` its size in bytes.
const ATTACKS: [(&str, &str); 15] = [
    // One byte past the end, after growth past the limit was refused.
    (
        "past_refused_growth",
        r#"(drop (memory.grow (i32.const 1)))
           (drop (i32.load8_u (local.get $end)))"#,
    ),
    // Accesses that start inside and end one byte past the end.
    (
        "straddle_i32",
        "(drop (i32.load (i32.sub (local.get $end) (i32.const 3))))",
    ),
    (
        "straddle_i64",
        "(i64.store (i32.sub (local.get $end) (i32.const 7)) (i64.const 1))",
    ),
    (
        "straddle_v128",
        "(drop (v128.load (i32.sub (local.get $end) (i32.const 15))))",
    ),
    (
        "straddle_offset",
        "(drop (i32.load offset=1 (i32.sub (local.get $end) (i32.const 4))))",
    ),
    (
        "straddle_fill",
        "(memory.fill (i32.sub (local.get $end) (i32.const 8)) (i32.const 0) (i32.const 9))",
    ),
    (
        "straddle_copy",
        "(memory.copy (i32.sub (local.get $end) (i32.const 8)) (i32.const 0) (i32.const 9))",
    ),
    // The top of the 32-bit index space: into the guard.
    ("top_i64", "(drop (i64.load (i32.const -1)))"),
    ("top_v128", "(drop (v128.load (i32.const -8)))"),
    // A v128 load that an f32x4 operation uses: the code generator
    // sinks it into that operation through the `i8x16` -> `f32x4`
    // bitcast (vendor/cranelift-codegen/CYXLA-PATCH.md); the trap must
    // come with it.
    (
        "straddle_v128_sunk",
        "(v128.store (i32.const 0) (f32x4.mul (v128.const f32x4 1 2 3 4) \
           (v128.load (i32.sub (local.get $end) (i32.const 15)))))",
    ),
    (
        "top_v128_sunk",
        "(v128.store (i32.const 0) (f32x4.add (v128.const f32x4 1 2 3 4) \
           (v128.load (i32.const -8))))",
    ),
    // Static offsets: inside the guard, at its end, and past it (where
    // Cranelift must emit a check).
    (
        "offset_in_guard",
        "(drop (i32.load offset=16777216 (i32.const -4)))",
    ),
    (
        "offset_at_guard_end",
        "(drop (i32.load offset=33554428 (i32.const -1)))",
    ),
    (
        "offset_past_guard",
        "(drop (i64.load offset=4294967295 (i32.const -1)))",
    ),
    (
        "offset_past_limit_from_zero",
        "(drop (i32.load offset=4390912 (i32.const 0)))",
    ),
];

fn bounds_sandbox(interrupt: Interrupt) -> (tempfile::TempDir, Sandbox) {
    let mut exports = vec!["double", "edge_ok"];
    exports.extend(ATTACKS.map(|(name, _)| name));
    let targets: Vec<(String, &str)> = exports.iter().map(|e| (format!("b_{e}"), *e)).collect();
    let targets: Vec<(&str, &str)> = targets.iter().map(|(t, e)| (t.as_str(), *e)).collect();
    let wat = guest_wat(&format!("{HANDLERS} {}", handlers()), &targets);
    let mut limits: Limits = test_limits();
    limits.memory = u64::from(LIMIT_PAGES) << 16;
    limits.interrupt = interrupt;
    let (dir, sandbox) = sandbox_with(&[("bounds.wasm", wasm(&wat))], limits);
    assert_eq!(sandbox.guests().engine().interrupt(), interrupt);
    (dir, sandbox)
}

#[test]
fn memory_reaches_its_limit_exactly_and_its_last_bytes_are_usable() {
    for interrupt in interrupt_mechanisms() {
        let (_dir, sandbox) = bounds_sandbox(interrupt);
        let h = handler(&sandbox, "b_edge_ok");
        for _ in 0..2 {
            let call = HostCall::new().ret(HostBuffer::zeros(DType::S32, &[3]));
            h.call_host(&call)
                .unwrap_or_else(|e| panic!("{interrupt:?}: {}", e.message));
            assert_eq!(
                i32_words(call.result(0)),
                [LIMIT_PAGES as i32, -1, 0x0102_0304],
                "{interrupt:?}: [pages, growth past the limit, last word]"
            );
        }
    }
}

#[test]
fn every_access_past_the_end_of_memory_traps() {
    for interrupt in interrupt_mechanisms() {
        let (_dir, sandbox) = bounds_sandbox(interrupt);
        for (attack, _) in ATTACKS {
            let target = format!("b_{attack}");
            let h = handler(&sandbox, &target);
            let call = HostCall::new().ret(HostBuffer::zeros(DType::S32, &[3]));
            let error = expect_error(&h, &call);
            let expected = format!(
                "target `{target}` (guest bounds.wasm): trapped: out of bounds memory access"
            );
            assert!(
                error.message.starts_with(&expected),
                "{interrupt:?}: expected `{expected}…`, got `{}`",
                error.message
            );
            // After a refused growth the host names the limit the guest
            // ran into.
            let code = if attack == "past_refused_growth" {
                assert_message_contains(
                    &error,
                    "after its memory was refused growth to 4352 KiB (limit 4288 KiB)",
                );
                ErrorCode::ResourceExhausted
            } else {
                ErrorCode::Internal
            };
            assert_eq!(error.code, code, "{}", error.message);
            // The trap failed that call only.
            run_double(&handler(&sandbox, "b_double"));
        }
    }
}
