//! Resource limits for guests: every resource a guest can consume has one.
//!
//! The defaults are listed on [`Limits::default`]; every field is public so
//! an operator (or a test) can override any of them.

use std::time::Duration;

/// What one guest may consume.
///
/// Limits apply per instance (memory, tables, stack), per guest (instances)
/// or per call (wall time, captured output).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest linear memory of one instance, in bytes. A `memory.grow` past
    /// it returns -1 to the guest (and a later failure of the call says so).
    pub memory_bytes: u64,
    /// Largest number of elements of any table of one instance.
    pub table_elements: usize,
    /// Most instances of one guest alive at once (calls beyond that wait).
    pub instances_per_guest: usize,
    /// Wall time of one call (including instantiation when a call needs a
    /// new instance). Measured with epoch ticks, so it is exceeded by at most
    /// one [`Limits::tick`].
    pub call_timeout: Duration,
    /// How long a call waits for a busy guest's instance to come back
    /// before it fails with RESOURCE_EXHAUSTED.
    pub instance_wait: Duration,
    /// Largest `.wasm` file accepted, in bytes.
    pub module_bytes: u64,
    /// Most wasm stack one call may use, in bytes (engine-wide: the value of
    /// the first [`crate::Engine`] built from these limits).
    pub stack_bytes: usize,
    /// Bytes of a guest's stdout and stderr kept per call (each); the rest is
    /// dropped and counted.
    pub log_bytes_per_call: usize,
    /// Longest error message a guest can create, in bytes (longer ones are
    /// cut).
    pub error_message_bytes: usize,
    /// Most error handles one instance can hold at once.
    pub error_handles: usize,
    /// Period of the deadline timer.
    pub tick: Duration,
}

/// Default linear memory limit: 256 MiB.
pub const DEFAULT_MEMORY_BYTES: u64 = 256 << 20;

impl Default for Limits {
    /// The defaults:
    ///
    /// | limit | default |
    /// |---|---|
    /// | `memory_bytes` | 256 MiB |
    /// | `table_elements` | 100 000 |
    /// | `instances_per_guest` | 8 |
    /// | `call_timeout` | 10 s |
    /// | `instance_wait` | 10 s |
    /// | `module_bytes` | 64 MiB |
    /// | `stack_bytes` | 512 KiB |
    /// | `log_bytes_per_call` | 64 KiB |
    /// | `error_message_bytes` | 64 KiB |
    /// | `error_handles` | 1024 |
    /// | `tick` | 10 ms |
    fn default() -> Limits {
        Limits {
            memory_bytes: DEFAULT_MEMORY_BYTES,
            table_elements: 100_000,
            instances_per_guest: 8,
            call_timeout: Duration::from_secs(10),
            instance_wait: Duration::from_secs(10),
            module_bytes: 64 << 20,
            stack_bytes: 512 << 10,
            log_bytes_per_call: 64 << 10,
            error_message_bytes: 64 << 10,
            error_handles: 1024,
            tick: Duration::from_millis(10),
        }
    }
}

impl Limits {
    /// Number of deadline ticks for one call: the timeout rounded up to
    /// whole ticks, plus one because the first tick may come at once.
    pub fn deadline_ticks(&self) -> u64 {
        let tick = self.tick.as_nanos().max(1);
        let ticks = self.call_timeout.as_nanos().div_ceil(tick);
        u64::try_from(ticks)
            .unwrap_or(u64::MAX - 1)
            .saturating_add(1)
    }

    /// Human-readable memory limit (`256 MiB`).
    pub fn memory_display(&self) -> String {
        bytes_display(self.memory_bytes)
    }
}

/// `n` bytes as `N MiB`, `N KiB` or `N bytes`, whichever is exact.
pub fn bytes_display(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadline_ticks_round_up() {
        let mut limits = Limits::default();
        assert_eq!(limits.deadline_ticks(), 1001);
        limits.call_timeout = Duration::from_millis(15);
        assert_eq!(limits.deadline_ticks(), 3);
        limits.call_timeout = Duration::from_secs(u64::MAX);
        limits.tick = Duration::from_nanos(1);
        assert_eq!(limits.deadline_ticks(), u64::MAX);
    }

    #[test]
    fn bytes_are_shown_exactly() {
        assert_eq!(bytes_display(256 << 20), "256 MiB");
        assert_eq!(bytes_display(64 << 10), "64 KiB");
        assert_eq!(bytes_display(1000), "1000 bytes");
    }
}
