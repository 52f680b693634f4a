//! The wasm engine: one `wasmtime::Engine`, one `Linker` and one deadline
//! timer, built once and shared by every guest (cheap to clone).

use std::sync::{Arc, Mutex};

use wasmtime::{Config, Linker, OptLevel, ProfilingStrategy};

use crate::cache::ModuleCache;
use crate::deadline::{Interrupt, Ticker};
use crate::error::{Error, Result, wasmtime_message};
use crate::imports;
use crate::limits::Limits;
use crate::state::HostState;

/// Environment variable that makes the engine write a perf map
/// (`/tmp/perf-<pid>.map`) naming the compiled guest functions, so that
/// `perf record` / `perf report` show where guest code spends its time.
/// Any value but empty or `0` turns it on.
pub const PERF_MAP_ENV: &str = "CYXLA_PERF_MAP";

fn perf_map_requested() -> bool {
    std::env::var_os(PERF_MAP_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

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
    /// Engines for guests whose side file sets another wasm stack size
    /// (wasmtime fixes it per engine), by stack size.
    variants: Mutex<Vec<Engine>>,
    /// The compile cache guests are compiled through, once set.
    cache: std::sync::OnceLock<ModuleCache>,
}

impl Engine {
    /// Builds the engine: Cranelift at `speed`, deadlines by
    /// [`Limits::interrupt`] (epoch checks compiled in only for `epoch`), the wasm stack capped at [`Limits::stack_bytes`], parallel
    /// compilation, 32-bit memories only, no shared memories (threads), no
    /// GC, function references, exceptions, stack switching, tail calls,
    /// multiple memories, custom page sizes or wide arithmetic, and a perf map of guest code when [`PERF_MAP_ENV`] asks for one.
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
        let mode = limits.interrupt.resolve();
        let mut config = Config::new();
        config
            .cranelift_opt_level(OptLevel::Speed)
            .epoch_interruption(mode == Interrupt::Epoch)
            .max_wasm_stack(limits.stack_bytes)
            // wasmtime requires room for the wasm stack on async stacks too
            // (unused here: every call is synchronous).
            .async_stack_size(limits.stack_bytes.max(1 << 20) + (1 << 20))
            .parallel_compilation(true)
            // Only the proposals guests need (what clang and rustc emit for
            // wasm32: SIMD, relaxed SIMD, bulk memory, multi-value,
            // reference types); everything that would give a guest memory
            // outside its linear memory (GC heaps, exception and
            // continuation objects), more memories or new control flow is
            // off, and a module using it is rejected at validation.
            .wasm_threads(false)
            .wasm_memory64(false)
            .wasm_gc(false)
            .wasm_function_references(false)
            .wasm_exceptions(false)
            .wasm_stack_switching(false)
            .wasm_tail_call(false)
            .wasm_multi_memory(false)
            .wasm_custom_page_sizes(false)
            .wasm_wide_arithmetic(false)
            .wasm_component_model(false);
        if perf_map_requested() {
            config.profiler(ProfilingStrategy::PerfMap);
        }
        let wasm = wasmtime::Engine::new(&config).map_err(|e| Error::Engine {
            message: wasmtime_message(&e),
        })?;
        let linker = imports::linker(&wasm).map_err(|e| Error::Engine {
            message: wasmtime_message(&e),
        })?;
        let ticker = Ticker::start(&wasm, limits.tick, mode).map_err(|e| Error::Engine {
            message: format!("cannot start the deadline timer thread: {e}"),
        })?;
        Ok(Engine {
            inner: Arc::new(Inner {
                linker,
                wasm,
                ticker,
                limits: limits.clone(),
                variants: Mutex::new(Vec::new()),
                cache: std::sync::OnceLock::new(),
            }),
        })
    }

    /// The limits guests of this engine run under, unless their side file
    /// says otherwise ([`crate::Guest::limits`]).
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// The engine for a guest with `limits`: this one, or (if `limits` sets
    /// another wasm stack size) an engine of that stack size, made once and
    /// shared by every guest that asks for it. The tick stays this engine's.
    ///
    /// # Errors
    ///
    /// As [`Engine::new`].
    pub fn for_limits(&self, limits: &Limits) -> Result<Engine> {
        if limits.stack_bytes == self.inner.limits.stack_bytes {
            return Ok(self.clone());
        }
        let mut variants = match self.inner.variants.lock() {
            Ok(v) => v,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(engine) = variants
            .iter()
            .find(|e| e.inner.limits.stack_bytes == limits.stack_bytes)
        {
            return Ok(engine.clone());
        }
        let mut variant_limits = self.inner.limits.clone();
        variant_limits.stack_bytes = limits.stack_bytes;
        let engine = Engine::new(&variant_limits)?;
        if let Some(cache) = self.inner.cache.get() {
            engine.use_cache(cache.clone());
        }
        variants.push(engine.clone());
        Ok(engine)
    }

    /// Compiles guests through `cache` from now on (this engine and the
    /// variants it makes); a second call changes nothing.
    pub fn use_cache(&self, cache: ModuleCache) {
        let _ = self.inner.cache.set(cache);
    }

    /// The module of `bytes`: from the compile cache when there is one and
    /// it holds a verified entry, else compiled.
    pub(crate) fn compile(&self, bytes: &[u8]) -> wasmtime::Result<wasmtime::Module> {
        match self.inner.cache.get() {
            Some(cache) => cache.module(&self.inner.wasm, bytes),
            None => wasmtime::Module::from_binary(&self.inner.wasm, bytes),
        }
    }

    /// The deadline mechanism guests of this engine run under (`Auto`
    /// resolved).
    pub fn interrupt(&self) -> Interrupt {
        self.inner.ticker.mode()
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
