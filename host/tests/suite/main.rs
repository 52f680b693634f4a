//! The host's integration tests that may share a process, in one test
//! binary: one link instead of one per file (issue 45, item 5). Run one
//! file's tests with `cargo test -p cyxla-sandbox --test suite sandbox::`.
//!
//! The tests that need a process of their own stay binaries of their own,
//! in `tests/*.rs`: those that time a guest with nothing beside it, measure
//! the process's memory or threads, count its allocations (a global
//! allocator), install process-wide signal handlers or timers, fork, or set
//! the process-wide memory budget.

#[path = "../common/mod.rs"]
mod common;

mod bounds;
mod bundled;
mod cache_trust;
mod float_mode;
mod fuzz_smoke;
mod hostile;
mod hostile_anchor;
mod limits;
mod plugins;
mod reliability;
mod sandbox;
mod stats;
mod unwritten;
