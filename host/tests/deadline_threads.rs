//! Deadlines under many threads and thread churn: 8 threads at a time, each
//! round on new threads, call a looping guest with deadlines of 0 to 200 µs
//! picked at random per call. Every call ends with DEADLINE_EXCEEDED (the
//! guests' counts are exact), the process lives, and its virtual memory
//! does not grow with the calls or the threads after the first round. A
//! test binary of its own: it measures this process's memory.

mod common;

use std::time::Duration;

use common::*;
use cyxla_sandbox::GuestHandler;
use plugin_glue::ErrorCode;

const THREADS: usize = 8;
const ROUNDS: usize = 6;
const CALLS_PER_THREAD: usize = 25;
/// Deadlines (µs), one guest each: a call picks one at random.
const DEADLINES_US: [u64; 5] = [0, 50, 100, 150, 200];

/// This process's virtual memory (`VmSize`), in bytes.
fn virtual_bytes() -> u64 {
    let value = proc_status("VmSize");
    let kib: u64 = value
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("unreadable VmSize: {value}"));
    kib << 10
}

/// A small deterministic generator (xorshift), one per thread.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn eight_threads_with_random_short_deadlines_and_thread_churn() {
    let sandboxes: Vec<_> = DEADLINES_US
        .iter()
        .map(|&us| {
            let mut limits = test_limits();
            limits.call_timeout = Duration::from_micros(us);
            limits.tick = Duration::from_micros(100);
            limits.instances = THREADS;
            sandbox_with(&[("full.wasm", full_guest("f_"))], limits)
        })
        .collect();
    let spins: Vec<GuestHandler> = sandboxes
        .iter()
        .map(|(_, sandbox)| handler(sandbox, "f_spin"))
        .collect();
    let mut after_first_round = 0;
    for round in 0..ROUNDS {
        // New threads every round: thread-local deadline state is made and
        // dropped with them.
        on_threads(THREADS, |t| {
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ ((round * THREADS + t) as u64 + 1));
            for i in 0..CALLS_PER_THREAD {
                let pick = (rng.next() % DEADLINES_US.len() as u64) as usize;
                let error = expect_error(&spins[pick], &vector_call(&[1.0]));
                assert_eq!(
                    error.code,
                    ErrorCode::DeadlineExceeded,
                    "round {round} thread {t} call {i} ({} µs): {}",
                    DEADLINES_US[pick],
                    error.message
                );
            }
        });
        if round == 0 {
            after_first_round = virtual_bytes();
        }
    }
    let grew = virtual_bytes().saturating_sub(after_first_round);
    eprintln!(
        "virtual memory grew {} MiB after the first round",
        grew >> 20
    );
    // Each instance reserves about 4 GiB of address space; the pools hold
    // at most THREADS per guest, all made in the first round or reused.
    // Growth past that would be a leak per call or per thread.
    assert!(
        grew < 1 << 30,
        "virtual memory grew {} MiB after the first round",
        grew >> 20
    );
    let total: u64 = spins.iter().map(|h| h.stats().deadlines).sum();
    let calls: u64 = spins.iter().map(|h| h.stats().calls).sum();
    let expected = (ROUNDS * THREADS * CALLS_PER_THREAD) as u64;
    assert_eq!((calls, total), (expected, expected));
    // The process still serves calls.
    let (_dir, sandbox) = sandbox_with(&[("full.wasm", full_guest("f_"))], test_limits());
    run_double(&handler(&sandbox, "f_double"));
}
