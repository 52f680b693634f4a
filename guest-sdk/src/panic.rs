//! Panics in a guest (wasm32 only). A no_std wasm32 guest cannot unwind, so
//! a panic cannot become an error of the call: the panic handler stores the
//! message in a static buffer and traps (`unreachable`). The host sees the
//! trap, reads the message through the optional `cyxla_last_panic` export
//! and names it in the call's error; it discards the trapped instance.
//!
//! The SDK's own accessors never panic: they return [`Error`](crate::Error)s.

use core::cell::UnsafeCell;
use core::fmt::Write;

/// Capacity of the stored message, including its NUL terminator.
const CAPACITY: usize = 1024;

struct Slot {
    bytes: UnsafeCell<[u8; CAPACITY]>,
}

// SAFETY: wasm32 guests built by this SDK are single-threaded (no shared
// memory; the `atomics` target feature is not supported), so the slot is
// never accessed concurrently.
unsafe impl Sync for Slot {}

static LAST_PANIC: Slot = Slot {
    bytes: UnsafeCell::new([0; CAPACITY]),
};

/// Writes into the slot, truncating, always leaving a final NUL.
struct SlotWriter<'s> {
    buf: &'s mut [u8; CAPACITY],
    len: usize,
}

impl Write for SlotWriter<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for &b in s.as_bytes() {
            if self.len + 1 >= CAPACITY {
                break;
            }
            // A NUL inside the message would cut it short; replace it.
            self.buf[self.len] = if b == 0 { b' ' } else { b };
            self.len += 1;
        }
        self.buf[self.len] = 0;
        Ok(())
    }
}

/// Stores `args` as the last panic message.
pub(crate) fn record(args: core::fmt::Arguments<'_>) {
    // SAFETY: single-threaded (see `Slot`), and no reference into the slot
    // outlives this function.
    let buf = unsafe { &mut *LAST_PANIC.bytes.get() };
    let mut w = SlotWriter { buf, len: 0 };
    let _ = w.write_fmt(args);
    w.buf[w.len] = 0;
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
