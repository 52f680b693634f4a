//! Native stack room for guest code.
//!
//! Wasm code runs on the native stack of the thread that calls it, and
//! wasmtime's `max_wasm_stack` only bounds how deep guest code may go below
//! the point where it was entered; host functions the guest calls run
//! further down. A thread whose stack is smaller than that would overflow
//! its guard page, and Rust aborts the whole process on a native stack
//! overflow. So before guest code runs, the host checks that the thread has
//! [`needed`] bytes of stack left:
//!
//! - threads cyxla starts to run guest code (the loader pool, instantiation
//!   helpers) get [`THREAD_STACK`], room for the largest wasm stack the
//!   limits allow ([`MAX_STACK_BYTES`]);
//! - instantiation on a thread with too little room (a caller's thread)
//!   moves to a helper thread with that stack;
//! - a call on a thread with too little room (XLA's threads, a client's) is
//!   refused with RESOURCE_EXHAUSTED naming the `stack` limit.

use crate::limits::MAX_STACK_BYTES;

/// Stack that host code (wasmtime's entry and trap handling, WASI and
/// `cyxla` host functions) may use below guest code.
pub(crate) const HOST_MARGIN: usize = 256 << 10;

/// The stack of the threads cyxla starts to run guest code: the largest
/// wasm stack the limits allow, the host margin, and as much again for the
/// host code above the guest (compilation, loading): 8.5 MiB.
pub(crate) const THREAD_STACK: usize = 2 * MAX_STACK_BYTES as usize + HOST_MARGIN;

/// Native stack a thread needs left to run guest code with a wasm stack
/// limit of `stack_bytes`.
pub(crate) fn needed(stack_bytes: usize) -> usize {
    stack_bytes.saturating_add(HOST_MARGIN)
}

/// Bytes of native stack left below the caller's frame on this thread, if
/// the platform can tell.
#[inline(never)]
pub(crate) fn remaining() -> Option<usize> {
    let marker = 0u8;
    let sp = std::hint::black_box(std::ptr::from_ref(&marker)) as usize;
    let low = lowest()?;
    Some(sp.saturating_sub(low))
}

/// Whether this thread has [`needed`]`(stack_bytes)` left (true where the
/// platform cannot tell).
pub(crate) fn has_room(stack_bytes: usize) -> bool {
    remaining().is_none_or(|left| left >= needed(stack_bytes))
}

#[cfg(target_os = "linux")]
fn lowest() -> Option<usize> {
    use std::cell::Cell;
    thread_local! {
        /// The lowest usable address of this thread's stack (0: not yet
        /// known, `usize::MAX`: cannot be known).
        static LOWEST: Cell<usize> = const { Cell::new(0) };
    }
    let cached = LOWEST.with(Cell::get);
    if cached == usize::MAX {
        return None;
    }
    if cached != 0 {
        return Some(cached);
    }
    /// The first look on a thread, out of line: the look of every call
    /// after it is a leaf that saves no registers.
    #[cold]
    #[inline(never)]
    fn first() -> Option<usize> {
        let found = query_lowest();
        LOWEST.with(|l| l.set(found.unwrap_or(usize::MAX)));
        found
    }
    first()
}

/// The lowest address of this thread's stack, from glibc (for the main
/// thread, the stack rlimit below its top).
#[cfg(target_os = "linux")]
fn query_lowest() -> Option<usize> {
    let stack = query()?;
    // The guard (if glibc counts it in the stack) is not usable.
    Some(stack.addr.saturating_add(stack.guard))
}

/// This thread's stack as glibc describes it.
#[cfg(target_os = "linux")]
struct Stack {
    /// The lowest address (the guard, if any, included).
    addr: usize,
    /// The guard size, or 0 if glibc cannot tell.
    guard: usize,
}

/// This thread's stack from `pthread_getattr_np`, if glibc can tell.
#[cfg(target_os = "linux")]
fn query() -> Option<Stack> {
    // SAFETY: `attr` is initialised by pthread_getattr_np before it is read
    // and destroyed once; `addr`, `size` and `guard` are written by
    // pthread_attr_getstack and pthread_attr_getguardsize on success only,
    // and read only then.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        let mut guard: libc::size_t = 0;
        let guard_ok = libc::pthread_attr_getguardsize(&attr, &mut guard) == 0;
        libc::pthread_attr_destroy(&mut attr);
        if !ok || addr.is_null() || size == 0 {
            return None;
        }
        Some(Stack {
            addr: addr as usize,
            guard: if guard_ok { guard } else { 0 },
        })
    }
}

#[cfg(not(target_os = "linux"))]
fn lowest() -> Option<usize> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_know_their_stack() {
        let small = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(remaining)
            .unwrap()
            .join()
            .unwrap();
        if cfg!(target_os = "linux") {
            // glibc may hand out a larger cached stack than asked for.
            let left = small.unwrap();
            assert!(left > 512 << 10 && left < 64 << 20, "{left}");
            let big = std::thread::Builder::new()
                .stack_size(THREAD_STACK)
                .spawn(|| has_room(MAX_STACK_BYTES as usize))
                .unwrap()
                .join()
                .unwrap();
            assert!(big);
        }
    }
}
