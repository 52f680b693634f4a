//! Wall-time deadlines for guest calls.
//!
//! The mechanism is epoch interruption: the engine is built with
//! `epoch_interruption(true)`, each store gets a deadline in ticks before a
//! call, and one timer thread per [`crate::Engine`] bumps the epoch every
//! [`crate::Limits::tick`]. A guest that runs past its deadline traps with
//! [`wasmtime::Trap::Interrupt`].
//!
//! The timer thread parks while no guest code runs, so an idle process does
//! not wake up every tick. Everything outside this file only calls
//! [`Ticker::enter`] around guest code and [`arm`] before it, so the
//! mechanism can change (fuel, a signal-based timer) without touching the
//! callers. Epoch checks cost about 2x on tight loops (measured); a later
//! issue optimises this.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// The timer thread of one engine.
pub(crate) struct Ticker {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    /// Guest calls running now.
    active: AtomicUsize,
    /// Set when the engine goes away.
    stop: AtomicBool,
}

impl Ticker {
    /// Starts the timer thread for `engine`, ticking every `tick`.
    ///
    /// # Errors
    ///
    /// When the OS cannot start a thread.
    pub(crate) fn start(engine: &wasmtime::Engine, tick: Duration) -> std::io::Result<Ticker> {
        let shared = Arc::new(Shared {
            active: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        });
        let weak = engine.weak();
        let tick = tick.max(Duration::from_micros(100));
        let thread_shared = Arc::clone(&shared);
        let thread = thread::Builder::new()
            .name("cyxla-epoch".into())
            .spawn(move || {
                loop {
                    if thread_shared.stop.load(Ordering::Acquire) {
                        return;
                    }
                    if thread_shared.active.load(Ordering::Acquire) == 0 {
                        // Woken by `enter` (or by drop); a stale unpark token
                        // only costs one extra round.
                        thread::park();
                        continue;
                    }
                    thread::sleep(tick);
                    match weak.upgrade() {
                        Some(engine) => engine.increment_epoch(),
                        None => return,
                    }
                }
            })?;
        Ok(Ticker {
            shared,
            thread: Some(thread),
        })
    }

    /// Marks guest code as running until the guard is dropped, waking the
    /// timer thread if it was idle.
    pub(crate) fn enter(&self) -> Active<'_> {
        if self.shared.active.fetch_add(1, Ordering::AcqRel) == 0
            && let Some(thread) = &self.thread
        {
            thread.thread().unpark();
        }
        Active { ticker: self }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            // The thread exits within one tick; nothing to report if it
            // panicked (it cannot: it only sleeps and bumps a counter).
            let _ = thread.join();
        }
    }
}

/// Guest code is running (see [`Ticker::enter`]).
pub(crate) struct Active<'a> {
    ticker: &'a Ticker,
}

impl Drop for Active<'_> {
    fn drop(&mut self) {
        self.ticker.shared.active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Sets the deadline of the next guest code run in `store` to `ticks` timer
/// ticks from now.
pub(crate) fn arm<T>(store: &mut wasmtime::Store<T>, ticks: u64) {
    store.set_epoch_deadline(ticks);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_only_while_active() {
        let mut config = wasmtime::Config::new();
        config.epoch_interruption(true);
        let engine = wasmtime::Engine::new(&config).unwrap();
        let ticker = Ticker::start(&engine, Duration::from_millis(1)).unwrap();
        let module =
            wasmtime::Module::new(&engine, "(module (func (export \"f\") (loop br 0)))").unwrap();
        let mut store = wasmtime::Store::new(&engine, ());
        let instance = wasmtime::Instance::new(&mut store, &module, &[]).unwrap();
        let f = instance.get_typed_func::<(), ()>(&mut store, "f").unwrap();
        arm(&mut store, 5);
        let error = {
            let _active = ticker.enter();
            f.call(&mut store, ()).unwrap_err()
        };
        assert_eq!(
            error.downcast_ref::<wasmtime::Trap>(),
            Some(&wasmtime::Trap::Interrupt)
        );
        drop(ticker);
    }
}
