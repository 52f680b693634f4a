//! The process-wide memory budget: the linear memory of every instance of
//! every guest together. A test binary of its own: the budget counts the
//! whole process.

mod common;

use common::{
    assert_code, assert_message_contains, expect_error, full_guest, handler, run_double,
    sandbox_with, test_limits, vector_call,
};
use plugin_glue::ErrorCode;

#[test]
fn growth_past_the_budget_is_refused_and_memory_comes_back_with_its_instance() {
    let mut limits = test_limits();
    limits.memory = 64 << 20;
    limits.memory_budget = 4 << 20;
    let (_dir, sandbox) = sandbox_with(&[("b.wasm", full_guest("b_"))], limits.clone());
    let grow = handler(&sandbox, "b_grow");
    // memory.grow of 100 pages (6.25 MiB): under `memory`, over the budget.
    let refused = expect_error(&grow, &vector_call(&[1.0]));
    assert_code(&refused, ErrorCode::ResourceExhausted);
    assert_message_contains(&refused, "memory_budget of 4 MiB");
    // The next call works, and so do others while the first sandbox lives.
    run_double(&handler(&sandbox, "b_double"));
    let (_dir2, other) = sandbox_with(&[("c.wasm", full_guest("c_"))], limits.clone());
    run_double(&handler(&other, "c_double"));
    // With room in the budget, the same growth succeeds.
    limits.memory_budget = 64 << 20;
    let (_dir3, roomy) = sandbox_with(&[("d.wasm", full_guest("d_"))], limits);
    handler(&roomy, "d_grow")
        .call_host(&vector_call(&[1.0]))
        .expect("grows within the budget");
    // Instances dropped with their sandboxes give their memory back: a
    // budget just above one instance's memory admits a new one.
    drop((sandbox, other, roomy));
    let mut tight = test_limits();
    tight.memory_budget = 2 << 20;
    let (_dir4, last) = sandbox_with(&[("e.wasm", full_guest("e_"))], tight);
    run_double(&handler(&last, "e_double"));
}
