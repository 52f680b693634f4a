//! A steady-state sandboxed call allocates nothing on the host: the frame
//! layout, the scratch region, the instance and its exports are reused.
//! Counted with a global allocator, on the calling thread only.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common::*;
use cyxla_sandbox::{HostAttr, Scalar};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every method forwards to `System` unchanged; the thread-local
// counter is a const-initialised `Cell` that never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

#[test]
fn steady_state_calls_do_not_allocate() {
    let (_dir, sandbox) = sandbox_with(&[("k.wasm", full_guest("s_"))], test_limits());
    let h = handler(&sandbox, "s_scale_attr");
    let call = vector_call(&[1.0, 2.0, 3.0, 4.0])
        .attr("scale", HostAttr::Scalar(Scalar::F32(2.0)))
        .attr(
            "z_unused",
            HostAttr::String(b"attributes are encoded every call".to_vec()),
        );
    // Warm up: the first call makes the instance and grows the buffers.
    for _ in 0..3 {
        h.call_host(&call).unwrap();
    }
    let before = allocations();
    for _ in 0..100 {
        h.call_host(&call).unwrap();
    }
    let during = allocations() - before;
    assert_eq!(call.result(0).to_f32(), [2.0, 4.0, 6.0, 8.0]);
    assert_eq!(
        during, 0,
        "{during} host allocations in 100 steady-state calls"
    );
}
