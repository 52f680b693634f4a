//! WASI preview 1 for guests, with nothing granted.
//!
//! No preopened directories, no environment, no arguments, stdin closed, a
//! frozen clock (wall and monotonic time are always 0), no sockets. stdout
//! and stderr go to bounded in-memory pipes ([`LogPipe`]) that the host drains
//! into `tracing` after each call, keeping at most
//! [`crate::Limits::log_bytes`] bytes of each per call.
//!
//! **No sleeping.** A guest has no clock, so it has nothing to wait for:
//! [`poll_oneoff`](crate::imports::poll_oneoff) reports every clock subscription (relative or absolute,
//! however long) as having fired at once, and never blocks. A guest that
//! sleeps in a loop spins until its deadline stops it.
//!
//! **Bounded host calls.** A guest past its deadline is stopped in its own
//! code, however many host calls it makes (see [`crate::deadline`]); the
//! host functions whose work the guest sizes
//! ([`random_get`](crate::imports::random_get),
//! [`poll_oneoff`](crate::imports::poll_oneoff), the output pipes) also
//! check it every [`CHUNK`](crate::imports::CHUNK) bytes or
//! [`EVENTS_PER_CHECK`](crate::imports::EVENTS_PER_CHECK) subscriptions, so one host call
//! cannot outlast the deadline by more than one such step.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError, StreamResult};
use wasmtime_wasi::{HostMonotonicClock, HostWallClock, WasiCtxBuilder};

/// A guest's stdout or stderr: keeps the first `capacity` bytes written since
/// the last [`LogPipe::drain`] and counts the rest.
#[derive(Clone)]
pub(crate) struct LogPipe {
    inner: Arc<LogInner>,
}

struct LogInner {
    /// Anything written since the last drain (checked without the lock).
    dirty: AtomicBool,
    /// Bytes dropped since the last drain.
    dropped: AtomicU64,
    capacity: usize,
    buffer: Mutex<Vec<u8>>,
}

impl LogPipe {
    /// A pipe keeping at most `capacity` bytes between drains.
    pub(crate) fn new(capacity: usize) -> LogPipe {
        LogPipe {
            inner: Arc::new(LogInner {
                dirty: AtomicBool::new(false),
                dropped: AtomicU64::new(0),
                capacity,
                buffer: Mutex::new(Vec::new()),
            }),
        }
    }

    fn push(&self, bytes: &[u8]) {
        let mut buffer = match self.inner.buffer.lock() {
            Ok(buffer) => buffer,
            Err(poisoned) => poisoned.into_inner(),
        };
        let room = self.inner.capacity.saturating_sub(buffer.len());
        let kept = bytes.len().min(room);
        buffer.extend_from_slice(&bytes[..kept]);
        let dropped = u64::try_from(bytes.len() - kept).unwrap_or(u64::MAX);
        if dropped > 0 {
            self.inner.dropped.fetch_add(dropped, Ordering::Relaxed);
        }
        self.inner.dirty.store(true, Ordering::Release);
    }

    /// Hands what was written since the last drain to `f` (text, bytes
    /// dropped), then empties the pipe. Does nothing (and takes no lock) if
    /// nothing was written.
    #[inline]
    pub(crate) fn drain(&self, f: impl FnOnce(&str, u64)) {
        // A plain load first, inlined into the caller: the swap is a locked
        // instruction, and every call drains both pipes, which are nearly
        // always clean.
        if self.inner.dirty.load(Ordering::Acquire) {
            self.drain_dirty(f);
        }
    }

    /// [`LogPipe::drain`] once something was written.
    #[cold]
    #[inline(never)]
    fn drain_dirty(&self, f: impl FnOnce(&str, u64)) {
        if !self.inner.dirty.swap(false, Ordering::AcqRel) {
            return;
        }
        let mut buffer = match self.inner.buffer.lock() {
            Ok(buffer) => buffer,
            Err(poisoned) => poisoned.into_inner(),
        };
        let dropped = self.inner.dropped.swap(0, Ordering::Relaxed);
        let text = String::from_utf8_lossy(&buffer);
        f(text.trim_end_matches('\n'), dropped);
        buffer.clear();
    }
}

impl IsTerminal for LogPipe {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for LogPipe {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for LogPipe {
    async fn ready(&mut self) {}
}

/// A guest past its deadline that keeps writing stops here (interrupts
/// only land in guest code; a guest looping on `fd_write` is mostly in host
/// code).
fn check_deadline() -> StreamResult<()> {
    if crate::deadline::overdue() {
        return Err(StreamError::Trap(wasmtime::Trap::Interrupt.into()));
    }
    Ok(())
}

impl OutputStream for LogPipe {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        check_deadline()?;
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        check_deadline()?;
        // Always accept: what does not fit is counted, not refused, so a
        // chatty guest is never blocked or failed by its logging.
        Ok(64 << 10)
    }
}

impl tokio::io::AsyncWrite for LogPipe {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// A clock that never moves: guests get no time source.
struct FrozenClock;

impl HostWallClock for FrozenClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }

    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl HostMonotonicClock for FrozenClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }

    fn now(&self) -> u64 {
        0
    }
}

/// The WASI context of one instance: nothing granted, output to the pipes.
pub(crate) fn context(stdout: &LogPipe, stderr: &LogPipe) -> WasiP1Ctx {
    WasiCtxBuilder::new()
        .stdout(stdout.clone())
        .stderr(stderr.clone())
        .wall_clock(FrozenClock)
        .monotonic_clock(FrozenClock)
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .build_p1()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipe_keeps_capacity_and_counts_the_rest() {
        let pipe = LogPipe::new(4);
        pipe.push(b"abc");
        pipe.push(b"defg");
        let mut seen = None;
        pipe.drain(|text, dropped| seen = Some((text.to_owned(), dropped)));
        assert_eq!(seen, Some(("abcd".to_owned(), 3)));
        let mut called = false;
        pipe.drain(|_, _| called = true);
        assert!(!called, "an empty pipe is not drained");
        pipe.push(b"\xffok\n");
        pipe.drain(|text, dropped| seen = Some((text.to_owned(), dropped)));
        assert_eq!(seen, Some(("\u{fffd}ok".to_owned(), 0)));
    }
}
