//! Panics in a guest (wasm32 only). A no_std wasm32 guest cannot unwind, so
//! a panic cannot become an error of the call: the panic handler stores the
//! message in a static buffer and traps (`unreachable`). The host sees the
//! trap, reads the message through the optional `cyxla_last_panic` export
//! and names it in the call's error; it discards the trapped instance.
//!
//! The SDK's own accessors never panic: they return [`Error`](crate::Error)s.

use core::cell::UnsafeCell;
use core::fmt::Write;
use core::sync::atomic::{AtomicBool, Ordering};

/// Capacity of the stored message, including its NUL terminator.
const CAPACITY: usize = 1024;

struct PanicMessage {
    bytes: UnsafeCell<[u8; CAPACITY]>,
    /// Set while a message is being written: a panic inside a `Display` of
    /// the message enters [`record`] again, and must not write over it.
    recording: AtomicBool,
}

// SAFETY: wasm32 guests built by this SDK are single-threaded (no shared
// memory; the `atomics` target feature is not supported), so the slot is
// never accessed concurrently.
unsafe impl Sync for PanicMessage {}

static LAST_PANIC: PanicMessage = PanicMessage {
    bytes: UnsafeCell::new([0; CAPACITY]),
    recording: AtomicBool::new(false),
};

/// Writes into the slot through a raw pointer, truncating, always leaving a
/// final NUL. It holds no reference into the slot, so a nested [`record`]
/// (which writes nothing) aliases nothing.
struct PanicMessageWriter {
    buf: *mut u8,
    len: usize,
}

impl PanicMessageWriter {
    fn put(&mut self, i: usize, b: u8) {
        if i < CAPACITY {
            // SAFETY: `buf` points to the slot's CAPACITY bytes and `i` is
            // inside them; no reference into the slot is live (see `record`).
            unsafe { self.buf.add(i).write(b) };
        }
    }
}

impl Write for PanicMessageWriter {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for &b in s.as_bytes() {
            if self.len + 1 >= CAPACITY {
                break;
            }
            // A NUL inside the message would cut it short; replace it.
            self.put(self.len, if b == 0 { b' ' } else { b });
            self.len += 1;
        }
        self.put(self.len, 0);
        Ok(())
    }
}

/// Stores `args` as the last panic message. Re-entered (a `Display` in
/// `args` panicked, and the panic handler records that panic) it writes
/// nothing: the slot keeps what the first panic wrote so far, terminated.
pub(crate) fn record(args: core::fmt::Arguments<'_>) {
    if LAST_PANIC.recording.swap(true, Ordering::Relaxed) {
        return;
    }
    let mut w = PanicMessageWriter {
        buf: LAST_PANIC.bytes.get().cast::<u8>(),
        len: 0,
    };
    w.put(0, 0);
    let _ = w.write_fmt(args);
    LAST_PANIC.recording.store(false, Ordering::Relaxed);
}

/// Stores `message` as the last panic message.
pub(crate) fn record_message(message: &str) {
    record(format_args!("{message}"));
}

/// Optional export: guest address of the NUL-terminated last panic message,
/// or 0 if the guest has not panicked.
#[unsafe(no_mangle)]
pub extern "C" fn cyxla_last_panic() -> u32 {
    // SAFETY: single-threaded; reads one byte, no reference is kept.
    let first = unsafe { (*LAST_PANIC.bytes.get())[0] };
    if first == 0 {
        0
    } else {
        LAST_PANIC.bytes.get().expose_provenance() as u32
    }
}

/// Called by the panic handler (crate `cyxla-guest-sdk-panic-handler`,
/// feature `panic-handler`): records the message. The handler then traps.
#[cfg(feature = "panic-handler")]
#[unsafe(no_mangle)]
pub fn __cyxla_guest_sdk_record_panic(info: &core::panic::PanicInfo<'_>) {
    match info.location() {
        Some(l) => record(format_args!(
            "panicked at {}:{}:{}: {}",
            l.file(),
            l.line(),
            l.column(),
            info.message()
        )),
        None => record(format_args!("panicked: {}", info.message())),
    }
}

#[cfg(test)]
mod tests {
    use core::fmt;

    use super::*;

    /// The stored message (test-only: the tests of this module are the only
    /// code of the test binary that touches the slot).
    fn last() -> &'static str {
        // SAFETY: no writer is live; the slot always holds a NUL.
        let bytes = unsafe { &*LAST_PANIC.bytes.get() };
        let len = bytes.iter().position(|&b| b == 0).unwrap();
        core::str::from_utf8(&bytes[..len]).unwrap()
    }

    /// A `Display` that does what a panic inside it does on wasm32: the
    /// panic handler records again while the outer message is written.
    struct Reenters;

    impl fmt::Display for Reenters {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("first")?;
            record(format_args!("the second panic"));
            f.write_str(" part")
        }
    }

    // One test: the slot is a static shared by the test threads.
    #[test]
    fn records_truncates_and_survives_reentry() {
        record_message("a\0b");
        assert_eq!(last(), "a b");
        let long = "x".repeat(2 * CAPACITY);
        record(format_args!("{long}"));
        assert_eq!(last().len(), CAPACITY - 1);
        record(format_args!("outer: {Reenters}"));
        assert_eq!(last(), "outer: first part");
        record(format_args!("next"));
        assert_eq!(last(), "next");
    }
}
