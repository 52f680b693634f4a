//! Per-target statistics, counted exactly after a known sequence of calls,
//! errors, traps, deadlines and limits.

use crate::common;

use common::{
    assert_code, expect_error, full_guest, handler, run_double, sandbox_with, test_limits,
    vector_call,
};
use plugin_glue::ErrorCode;

#[test]
fn counts_are_exact_after_a_known_sequence() {
    cyxla_sandbox::stats::enable_timing();
    let (_dir, sandbox) = sandbox_with(&[("s.wasm", full_guest("st_"))], test_limits());
    let [double, fail, trap, spin, grow, oob] = [
        "st_double",
        "st_fail",
        "st_trap",
        "st_spin",
        "st_grow",
        "st_oob",
    ]
    .map(|t| handler(&sandbox, t));

    for _ in 0..3 {
        run_double(&double); // three f32 in, three out
    }
    for _ in 0..2 {
        expect_error(&fail, &vector_call(&[1.0]));
    }
    let trapped = expect_error(&trap, &vector_call(&[1.0]));
    assert_code(&trapped, ErrorCode::Internal);
    let late = expect_error(&spin, &vector_call(&[1.0]));
    assert_code(&late, ErrorCode::DeadlineExceeded);
    run_double(&double);
    let refused = expect_error(&grow, &vector_call(&[1.0]));
    assert_code(&refused, ErrorCode::ResourceExhausted);

    let d = double.stats();
    assert_eq!(
        (d.calls, d.guest_errors, d.traps, d.deadlines, d.limits),
        (4, 0, 0, 0, 0)
    );
    assert_eq!((d.bytes_in, d.bytes_out), (48, 48));
    // The first call made the instance; the one after the deadline made the
    // next (a trapped or interrupted instance is discarded).
    assert_eq!(d.instances, 2);
    assert!(d.guest_ns > 0 && d.copy_ns > 0, "{d:?}");
    // The guest fails with INVALID_ARGUMENT: its input, as it says.
    let f = fail.stats();
    assert_eq!(
        (
            f.calls,
            f.bad_inputs,
            f.guest_errors,
            f.traps,
            f.instances,
            f.bytes_out
        ),
        (2, 2, 0, 0, 0, 0)
    );
    assert_eq!(f.bytes_in, 8);
    let t = trap.stats();
    assert_eq!(
        (t.calls, t.traps, t.guest_errors, t.instances),
        (1, 1, 0, 0)
    );
    let s = spin.stats();
    assert_eq!((s.calls, s.deadlines, s.traps, s.instances), (1, 1, 0, 1));
    let g = grow.stats();
    assert_eq!((g.calls, g.limits, g.traps, g.instances), (1, 1, 0, 0));
    // Untouched: nothing counted.
    assert_eq!(oob.stats().calls, 0);

    let all = cyxla_sandbox::stats::snapshot();
    let row = all
        .iter()
        .find(|r| r.target == "st_double")
        .expect("st_double is listed");
    assert_eq!(row.calls, 4);
    let table = cyxla_sandbox::stats::table(&all);
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("st_fail") && l.contains(" 2 ")),
        "{table}"
    );
    let json: serde_json::Value = serde_json::from_str(&cyxla_sandbox::stats::json(&all)).unwrap();
    assert!(
        json["targets"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["target"] == "st_trap" && t["traps"] == 1)
    );
}

/// Counts from many threads at once are exact: more threads than the
/// counters have per-thread shards (the rest share one), all alive
/// together, on a pool of fewer instances than threads (calls wait for
/// one to come back, and never get more than the limit).
#[test]
fn counts_from_many_threads_are_exact() {
    const THREADS: usize = 40;
    const CALLS: usize = 25;
    let limits = test_limits();
    let most = limits.instances;
    let (_dir, sandbox) = sandbox_with(&[("m.wasm", full_guest("mt_"))], limits);
    let double = handler(&sandbox, "mt_double");
    let all_started = std::sync::Barrier::new(THREADS);
    common::on_threads(THREADS, |_| {
        // Every thread is alive (and holds its shard) before any counts.
        all_started.wait();
        for _ in 0..CALLS {
            run_double(&double);
            assert!(double.live_instances() <= most);
        }
    });
    let d = double.stats();
    let calls = (THREADS * CALLS) as u64;
    assert_eq!(
        (d.calls, d.guest_errors, d.traps, d.other_errors, d.limits),
        (calls, 0, 0, 0, 0)
    );
    assert_eq!((d.bytes_in, d.bytes_out), (12 * calls, 12 * calls));
    assert!(
        (1..=most as u64).contains(&d.instances),
        "{} instances made for at most {most} at once",
        d.instances
    );
}
