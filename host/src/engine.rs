//! The wasm engine: one `wasmtime::Engine`, one `Linker` and one deadline
//! timer, built once and shared by every guest (cheap to clone).

use std::sync::Arc;

use wasmtime::{Config, Linker, OptLevel};

use crate::deadline::Ticker;
use crate::error::{Error, Result, wasmtime_message};
use crate::imports;
use crate::limits::Limits;
use crate::state::HostState;

/// The shared wasm engine, with the [`Limits`] it enforces.
///
/// # Thread safety
///
/// `Engine` is `Send + Sync`; clones share the same compiled-code cache,
/// linker and timer thread. The timer thread stops when the last clone (and
/// every guest built with it) is dropped.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    // Field order is drop order: the linker and engine before the ticker
    // that holds only a weak reference to the engine.
    linker: Linker<HostState>,
    wasm: wasmtime::Engine,
    ticker: Ticker,
    limits: Limits,
}

impl Engine {
    /// Builds the engine: Cranelift at `speed`, epoch interruption for
    /// deadlines, the wasm stack capped at [`Limits::stack_bytes`], parallel
    /// compilation, 32-bit memories only, no shared memories (threads).
    ///
    /// Each linear memory reserves 4 GiB + 32 MiB guard of *virtual* address
    /// space (wasmtime's default on 64-bit hosts) so that generated code needs
    /// no bounds checks; the 128 TiB of a 64-bit address space hold tens of
    /// thousands of instances. Only touched pages use memory.
    ///
    /// # Errors
    ///
    /// [`Error::Engine`] if wasmtime rejects the configuration or the timer
    /// thread cannot start.
    pub fn new(limits: &Limits) -> Result<Engine> {
        let mut config = Config::new();
        config
            .cranelift_opt_level(OptLevel::Speed)
            .epoch_interruption(true)
            .max_wasm_stack(limits.stack_bytes)
            .parallel_compilation(true)
            .wasm_threads(false)
            .wasm_memory64(false);
        let wasm = wasmtime::Engine::new(&config).map_err(|e| Error::Engine {
            message: wasmtime_message(&e),
        })?;
        let linker = imports::linker(&wasm).map_err(|e| Error::Engine {
            message: wasmtime_message(&e),
        })?;
        let ticker = Ticker::start(&wasm, limits.tick).map_err(|e| Error::Engine {
            message: format!("cannot start the deadline timer thread: {e}"),
        })?;
        Ok(Engine {
            inner: Arc::new(Inner {
                linker,
                wasm,
                ticker,
                limits: limits.clone(),
            }),
        })
    }

    /// The limits guests of this engine run under.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// The wasmtime engine.
    pub(crate) fn wasm(&self) -> &wasmtime::Engine {
        &self.inner.wasm
    }

    /// The linker with the `cyxla` and WASI imports.
    pub(crate) fn linker(&self) -> &Linker<HostState> {
        &self.inner.linker
    }

    /// The deadline timer.
    pub(crate) fn ticker(&self) -> &Ticker {
        &self.inner.ticker
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("limits", &self.inner.limits)
            .finish_non_exhaustive()
    }
}
