//! Guests end to end on plugin P106 (fastatomstruct-xla-cpu, XLA FFI 0.3).
//! One test binary per plugin: each is its own process.

mod common;

use std::sync::OnceLock;

use common::e2e;

const PLUGIN: &str = ".venv/lib/python3.11/site-packages/fastatomstruct_xla_cpu/libpjrt_cpu.so";

static HARNESS: OnceLock<e2e::Harness> = OnceLock::new();

fn harness() -> &'static e2e::Harness {
    e2e::harness(&HARNESS, PLUGIN, "p106_")
}

#[test]
fn guests_run_end_to_end() {
    e2e::check_all(harness());
}

#[test]
fn concurrent_executions_share_the_pool() {
    e2e::check_concurrent(harness());
}

#[test]
fn a_bundled_rust_guest_runs_in_xla() {
    e2e::check_bundled_rms_norm(harness());
}
