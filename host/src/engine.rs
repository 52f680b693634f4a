//! The wasm engine: one `wasmtime::Engine`, one `Linker` and one deadline
//! timer, built once and shared by every guest (cheap to clone).
//!
//! # Code generation
//!
//! [`Engine::new`] takes the fastest configuration measured that keeps the
//! sandbox's promises (measurements: docs/performance.md, "Code generation"):
//!
//! * Cranelift at `OptLevel::Speed`, NaN canonicalisation off: it buys
//!   bit-identical NaN payloads across hosts, which the sandbox does not
//!   promise.
//! * A 4 GiB reservation and a 32 MiB guard per linear memory, with
//!   signal-based traps: generated code needs no bounds checks (an access
//!   past the current size hits an inaccessible page and traps by signal;
//!   the memory limit is enforced at `memory.grow`). A smaller reservation
//!   (also as pooling-allocator slots) or no guard would bring checks back.
//!   A memory never moves (`memory_may_move(false)`; a wasm32 memory fits
//!   the reservation anyway), so an instance keeps its base for the
//!   copies of every call (`crate::instance`).
//! * Poll pages are the deadline mechanism (`crate::deadline`): a check is
//!   one load from a page the host protects at the deadline
//!   (`vendor/wasmtime-internal-cranelift` and `vendor/wasmtime`, their
//!   `CYXLA-PATCH.md`), and the
//!   code generator keeps vector addressing cheap on AMD Zen
//!   (`vendor/cranelift-codegen`, its `CYXLA-PATCH.md`).
//!
//! What remains of the gap to native code is in the guest build, not in the
//! engine: LLVM does not interleave vectorized loops for wasm32, and
//! Cranelift computes a 32-bit address per access. So the SDK builds guests
//! with `-mllvm -force-vector-interleave=4` (`guests/cpp/build.sh`) and runs
//! `wasm-opt -O3 --low-memory-unused` (guest-sdk/README.md). Accesses at the
//! edge of memory, straddling it, past a refused growth, at the top of the
//! index space and with static offsets inside and past the guard trap:
//! `host/tests/suite/bounds.rs`.

use std::sync::{Arc, Mutex};

use wasmtime::{Config, Linker, OptLevel, ProfilingStrategy};

use crate::cache::ModuleCache;
use crate::deadline::{Interrupt, Ticker};
use crate::error::{Error, Result, WasmError};
use crate::imports;
use crate::limits::Limits;
use crate::state::HostState;

/// Environment variable that makes the engine write a perf map
/// (`/tmp/perf-<pid>.map`) naming the compiled guest functions, so that
/// `perf record` / `perf report` show where guest code spends its time.
/// Any value but empty or `0` turns it on.
pub const PERF_MAP_ENV: &str = "CYXLA_PERF_MAP";

/// Virtual address space reserved for each linear memory: all of wasm32's
/// 4 GiB, so that a 32-bit index can never reach past the reservation and
/// Cranelift emits no bounds check for it (see the module documentation). The memory
/// limit is enforced at `memory.grow` by the store's limiter; pages past the
/// current size stay inaccessible, so an access there traps.
const MEMORY_RESERVATION: u64 = 1 << 32;

/// Inaccessible bytes after (and before) the reservation: a static offset
/// of up to this much (`i32.load offset=N`, and any access width) needs no
/// check; larger offsets get an explicit check from Cranelift.
const MEMORY_GUARD: u64 = 32 << 20;

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
    /// The threads that compile and check guests ([`Limits::compile_threads`]),
    /// made at the first compilation and shared with the variants.
    compile_pool: Arc<std::sync::OnceLock<Option<rayon::ThreadPool>>>,
}

/// wasmtime's configuration for `limits` with deadlines of `mode`: the
/// module documentation says why each code-generation setting is chosen.
pub(crate) fn wasm_config(limits: &Limits, mode: Interrupt) -> Config {
    let mut config = Config::new();
    config
        // Code generation: the module documentation says why these are
        // chosen (measurements: docs/performance.md, "Code generation").
        .cranelift_opt_level(OptLevel::Speed)
        .cranelift_nan_canonicalization(false)
        .memory_reservation(MEMORY_RESERVATION)
        .memory_guard_size(MEMORY_GUARD)
        // A memory's base never moves (a wasm32 memory fits the 4 GiB
        // reservation anyway): each instance keeps it, and a call's copies
        // address the scratch region from it (`crate::instance`).
        .memory_may_move(false)
        .guard_before_linear_memory(true)
        .signals_based_traps(true)
        .epoch_interruption(mode == Interrupt::Poll)
        .max_wasm_stack(limits.stack)
        // wasmtime requires room for the wasm stack on async stacks too
        // (unused here: every call is synchronous).
        .async_stack_size(limits.stack.max(1 << 20) + (1 << 20))
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
    // Traps name each frame's source file and line when the guest
    // carries DWARF line tables (`instance::frame_lines`); a guest
    // without them costs nothing more to compile (docs/performance.md,
    // "Source lines in traps").
    config.wasm_backtrace_details(wasmtime::WasmBacktraceDetails::Enable);
    if perf_map_requested() {
        config.profiler(ProfilingStrategy::PerfMap);
    }
    config
}

impl Engine {
    /// Builds the engine: Cranelift at `speed`, deadlines by
    /// [`Limits::interrupt`] (poll-page checks compiled in only for `poll`), the wasm stack capped at [`Limits::stack`], parallel
    /// compilation, 32-bit memories only, no shared memories (threads), no
    /// GC, function references, exceptions, stack switching, tail calls,
    /// multiple memories, custom page sizes or wide arithmetic, and a perf map of guest code when [`PERF_MAP_ENV`] asks for one.
    ///
    /// Each linear memory reserves 4 GiB + 32 MiB guard of *virtual* address
    /// space so that generated code needs no bounds checks; the 128 TiB of a
    /// 64-bit address space hold tens of thousands of instances. Only touched
    /// pages use memory. The module documentation says why each
    /// code-generation setting is chosen; docs/performance.md, "Code generation",
    /// what each costs.
    ///
    /// # Errors
    ///
    /// [`Error::Engine`] if wasmtime rejects the configuration or the timer
    /// thread cannot start.
    pub fn new(limits: &Limits) -> Result<Engine> {
        let mode = limits.interrupt.resolve();
        let config = wasm_config(limits, mode);
        let wasm = wasmtime::Engine::new(&config).map_err(|e| Error::Engine {
            message: WasmError::new(e),
        })?;
        // Wasmtime's trap handler exists now: put cyxla's in front of it.
        crate::faults::install();
        let linker = imports::linker(&wasm).map_err(|e| Error::Engine {
            message: WasmError::new(e),
        })?;
        let ticker = Ticker::start(&wasm, limits.tick, mode).map_err(|e| {
            let text = format!("cannot start the deadline timer thread: {e}");
            Error::Engine {
                message: WasmError::described(wasmtime::Error::new(e), text),
            }
        })?;
        Ok(Engine {
            inner: Arc::new(Inner {
                linker,
                wasm,
                ticker,
                limits: limits.clone(),
                variants: Mutex::new(Vec::new()),
                cache: std::sync::OnceLock::new(),
                compile_pool: Arc::new(std::sync::OnceLock::new()),
            }),
        })
    }

    /// Runs `f` on this engine's compile threads ([`Limits::compile_threads`]
    /// of them, with native stack for the largest wasm stack: loading runs
    /// trial instantiations there), so that everything `f` compiles,
    /// wasmtime's parallel compilation included, runs on them. On one of
    /// them already, `f` runs in place. If the threads cannot be started,
    /// `f` runs on this thread (and wasmtime's parallel compilation on
    /// rayon's global threads). What `f` logs on the thread it runs on goes
    /// to this thread's subscriber.
    pub(crate) fn on_compile_threads<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        let pool = self.inner.compile_pool.get_or_init(|| {
            let threads = self.inner.limits.compile_threads.max(1);
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("cyxla-compile-{i}"))
                .stack_size(crate::stack::THREAD_STACK)
                .build()
                .map_err(|e| {
                    tracing::warn!("cannot start {threads} compile threads ({e}); compiling on the calling thread");
                })
                .ok()
        });
        match pool {
            Some(pool) if pool.current_thread_index().is_none() => {
                // What `f` logs goes where this thread's logs go (a
                // subscriber set for this thread only, too).
                let logs = tracing::dispatcher::get_default(Clone::clone);
                pool.install(|| tracing::dispatcher::with_default(&logs, f))
            }
            _ => f(),
        }
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
        if limits.stack == self.inner.limits.stack {
            return Ok(self.clone());
        }
        let mut variants = match self.inner.variants.lock() {
            Ok(v) => v,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(engine) = variants
            .iter()
            .find(|e| e.inner.limits.stack == limits.stack)
        {
            return Ok(engine.clone());
        }
        let mut variant_limits = self.inner.limits.clone();
        variant_limits.stack = limits.stack;
        let mut engine = Engine::new(&variant_limits)?;
        if let Some(inner) = Arc::get_mut(&mut engine.inner) {
            inner.compile_pool = Arc::clone(&self.inner.compile_pool);
        }
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
    /// it holds a verified entry, else compiled, on the compile threads
    /// ([`Engine::on_compile_threads`]).
    pub(crate) fn compile(&self, bytes: &[u8]) -> wasmtime::Result<wasmtime::Module> {
        self.on_compile_threads(|| match self.inner.cache.get() {
            Some(cache) => cache.module(&self.inner.wasm, bytes),
            None => {
                crate::stats::count(crate::stats::Event::CacheMiss);
                wasmtime::Module::from_binary(&self.inner.wasm, bytes)
            }
        })
    }

    /// The machine code this engine compiles `wasm` to, as a serialized
    /// module (`wasmtime::Engine::precompile_module`): for the deadline
    /// bench to check that its native copies of a guest loop are still the
    /// code Cranelift emits. Not product API.
    #[cfg(feature = "bench")]
    pub fn precompile(&self, wasm: &[u8]) -> wasmtime::Result<Vec<u8>> {
        self.inner.wasm.precompile_module(wasm)
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use wasmtime::{Instance, Module, Store, Trap, UpdateDeadline};

    use super::*;

    /// Asserts that `error` is the trap `expected`; `context` says where.
    fn assert_trap(error: &wasmtime::Error, expected: Trap, context: impl std::fmt::Display) {
        assert_eq!(
            error.downcast_ref::<Trap>(),
            Some(&expected),
            "{context}: {error:?}"
        );
    }

    /// The host's engine, with the default limits but for how deadlines
    /// interrupt guest code.
    fn engine_with(interrupt: Interrupt) -> Engine {
        Engine::new(&Limits {
            interrupt,
            ..Limits::default()
        })
        .unwrap_or_else(|e| panic!("an engine with {interrupt:?}: {e:#}"))
    }

    /// A trap at an `unreachable` that a branch guards is reported at the
    /// `unreachable`'s offset, not at the `if` or `br_if` before it: the
    /// egraph turns the branch into a conditional trap, and
    /// `vendor/cranelift-codegen`'s patch 04 gives that trap the source
    /// location of the `trap` it replaces. Without the patch the frame's
    /// offset is the branch's, and a guest's trap names the line of its
    /// `if` (`host/app/tests/trap_lines.rs`).
    #[test]
    fn guarded_traps_report_the_unreachable() {
        const GUARDED: &str = r#"(module
          (func (export "if") (param i32) (if (local.get 0) (then unreachable)))
          (func (export "br_if") (param i32)
            (block (br_if 0 (i32.eqz (local.get 0))) unreachable)))"#;
        let wasm = wat::parse_str(GUARDED).expect("valid WAT");
        let mut unreachable_at = Vec::new();
        for payload in wasmparser::Parser::new(0).parse_all(&wasm) {
            if let wasmparser::Payload::CodeSectionEntry(body) = payload.expect("parses") {
                let mut ops = body.get_operators_reader().expect("operators");
                while !ops.eof() {
                    let offset = ops.original_position();
                    if let wasmparser::Operator::Unreachable = ops.read().expect("an operator") {
                        unreachable_at.push(offset);
                    }
                }
            }
        }
        assert_eq!(unreachable_at.len(), 2, "one `unreachable` per function");
        // Unchecked: a raw Store has no poll page, so the poll engine's
        // entry checks would trap before the guard is reached.
        let engine = engine_with(Interrupt::Unchecked);
        let module = Module::new(engine.wasm(), &wasm).expect("compiles");
        let mut store = Store::new(engine.wasm(), ());
        let instance = Instance::new(&mut store, &module, &[]).expect("instantiates");
        for (name, &at) in ["if", "br_if"].into_iter().zip(&unreachable_at) {
            let f = instance
                .get_typed_func::<i32, ()>(&mut store, name)
                .expect(name);
            f.call(&mut store, 0)
                .expect("no trap when the guard is false");
            let error = f.call(&mut store, 1).expect_err("traps");
            assert_trap(&error, Trap::UnreachableCodeReached, name);
            let trace = error
                .downcast_ref::<wasmtime::WasmBacktrace>()
                .expect("a backtrace");
            assert_eq!(
                trace.frames()[0].module_offset(),
                Some(at),
                "{name}: the trap's offset, not the branch's: {trace:?}"
            );
        }
    }

    /// A loop counting to its operand: no stores, no calls.
    const COUNT: &str = r#"(module
      (func (export "count") (param $n i32) (result i32) (local $i i32)
        (loop $l
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
        (local.get $i)))"#;

    /// The patched compiler of `vendor/wasmtime-internal-cranelift` and
    /// runtime of `vendor/wasmtime` are the ones in use: a deadline check
    /// is a load from the store's poll page, at a function's entry and at a
    /// loop header, that traps with `Trap::Interrupt` where it stands once
    /// the page is protected, and never calls the store back.
    ///
    /// Stock wasmtime compares the epoch with the deadline instead: with the
    /// address 0 as deadline it calls the epoch callback, which here would
    /// let the call go on. A check that reused an earlier load would let
    /// the loop run to its end (seconds) and return. A runtime without the
    /// patch aborts this test's process with "Wasmtime caught a segfault
    /// ... not known to any linear memory" at the protected page: put the
    /// patch back (`vendor/wasmtime/CYXLA-PATCH.md`).
    #[test]
    fn poll_checks_trap_in_place() {
        let engine = Engine::new(&Limits::default()).expect("an engine with deadlines");
        assert_eq!(engine.interrupt(), Interrupt::Poll);
        let wasm = wat::parse_str(COUNT).expect("valid WAT");
        let module = Module::new(engine.wasm(), wasm).expect("compiles");
        let code = crate::deadline::CodeRanges::of(&module);
        let mut store = Store::new(engine.wasm(), ());
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        store.epoch_deadline_callback(move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok(UpdateDeadline::Continue(1))
        });
        let instance = Instance::new(&mut store, &module, &[]).expect("instantiates");
        let count = instance
            .get_typed_func::<i32, i32>(&mut store, "count")
            .expect("count");

        // No page set (address 0): the entry check traps. Deadlines fail
        // closed.
        let trap = count.call(&mut store, 1000).expect_err("traps at entry");
        assert_trap(&trap, Trap::Interrupt, "at entry");

        // Before the deadline the checks cost nothing but time.
        let poll = engine.ticker().poll().expect("a poll page");
        {
            let _active = engine.ticker().enter(&mut store, &poll, 1 << 40, &code);
            assert_eq!(count.call(&mut store, 1000).expect("runs"), 1000);
        }

        // The deadline passes while the guest loops: the timer protects
        // the page and a loop header traps.
        {
            let _active = engine.ticker().enter(&mut store, &poll, 3, &code);
            let trap = count
                .call(&mut store, i32::MAX)
                .expect_err("traps in the loop");
            assert_trap(&trap, Trap::Interrupt, "in the loop");
        }
        // The call's end lifted the protection: the next call runs.
        {
            let _active = engine.ticker().enter(&mut store, &poll, 1 << 40, &code);
            assert_eq!(count.call(&mut store, 1000).expect("runs again"), 1000);
        }
        assert_eq!(
            calls.load(Ordering::SeqCst),
            0,
            "the epoch callback was called: the stock compiler is in use, not the patched one \
             of vendor/wasmtime-internal-cranelift (see its CYXLA-PATCH.md)"
        );
    }

    /// A module of `functions` functions, each a loop of `muls` multiplies
    /// by distinct constants (one `i64.mul` and its operands per multiply,
    /// plus eight operators of loop control).
    fn multiply_loops(functions: usize, muls: usize) -> Vec<u8> {
        let mut wat = String::from("(module\n");
        for f in 0..functions {
            let body: String = (0..muls)
                .map(|k| {
                    format!(
                        "(local.set $a (i64.mul (local.get $a) (i64.const {})))",
                        3 + 2 * (k + f)
                    )
                })
                .collect();
            wat.push_str(&format!(
                "(func (export \"f{f}\") (param $n i64) (result i64) (local $a i64)
                   (local.set $a (i64.const 1))
                   (loop $l {body}
                     (local.set $n (i64.sub (local.get $n) (i64.const 1)))
                     (br_if $l (i64.gt_s (local.get $n) (i64.const 0))))
                   (local.get $a))\n"
            ));
        }
        wat.push(')');
        wat::parse_str(&wat).expect("valid WAT")
    }

    fn function_ranges(engine: &Engine, wasm: &[u8]) -> Vec<(usize, usize)> {
        let module = Module::new(engine.wasm(), wasm).expect("compiles");
        module.functions().map(|f| (f.offset, f.len)).collect()
    }

    /// Bulk memory instructions run in 1 MiB chunks under deadline checks
    /// (`vendor/wasmtime-internal-cranelift/CYXLA-PATCH.md`, "Bulk memory
    /// in chunks") and write exactly what one `memmove` or `memset` of the
    /// whole range writes: copies overlapping either way by more than a
    /// chunk, lengths at and around a chunk, fills; a range out of bounds
    /// traps before writing anything. Checked against the bytes Rust's
    /// `copy_within` and `fill` give, with checks (chunked) and without.
    #[test]
    fn bulk_memory_in_chunks_writes_what_one_instruction_writes() {
        const MIB: u32 = 1 << 20;
        const PAGES: u32 = 80; // 5 MiB
        let wasm = wat::parse_str(format!(
            r#"(module (memory (export "m") {PAGES})
                 (func (export "copy") (param i32 i32 i32)
                   (memory.copy (local.get 0) (local.get 1) (local.get 2)))
                 (func (export "fill") (param i32 i32 i32)
                   (memory.fill (local.get 0) (local.get 1) (local.get 2))))"#
        ))
        .expect("valid WAT");
        // (copy or fill, dst, src or value, len)
        let cases: [(bool, u32, u32, u32); 11] = [
            (true, 0x10, 0, 3 * MIB + MIB / 2),
            (true, 0, 0x10, 3 * MIB + MIB / 2),
            (true, MIB + 3, 0, MIB),
            (true, 0, MIB + 3, MIB + 1),
            (true, 2 * MIB + 5, 7, 2 * MIB),
            (true, 9, 2 * MIB + 5, 2 * MIB + 17),
            (true, 3, 3, 4 * MIB),
            (true, 5, 0, 0),
            (false, 7, 0xab, 3 * MIB + 5),
            (false, 0, 0x5c, MIB),
            (false, 11, 0x17, MIB + 1),
        ];
        let pattern: Vec<u8> = (0..PAGES * 65536)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for interrupt in [Interrupt::Poll, Interrupt::Unchecked] {
            let engine = engine_with(interrupt);
            let module = Module::new(engine.wasm(), &wasm).expect("compiles");
            let code = crate::deadline::CodeRanges::of(&module);
            let mut store = Store::new(engine.wasm(), ());
            let poll = engine.ticker().poll().expect("a poll page");
            let _active = engine.ticker().enter(&mut store, &poll, 1 << 40, &code);
            let instance = Instance::new(&mut store, &module, &[]).expect("instantiates");
            let memory = instance.get_memory(&mut store, "m").expect("memory");
            for (copy, dst, src, len) in cases {
                memory.data_mut(&mut store).copy_from_slice(&pattern);
                let mut expected = pattern.clone();
                let (d, s, n) = (dst as usize, src as usize, len as usize);
                let name = if copy {
                    expected.copy_within(s..s + n, d);
                    "copy"
                } else {
                    expected[d..d + n].fill(src as u8);
                    "fill"
                };
                instance
                    .get_typed_func::<(u32, u32, u32), ()>(&mut store, name)
                    .expect("export")
                    .call(&mut store, (dst, src, len))
                    .unwrap_or_else(|e| panic!("{interrupt:?} {name}({dst}, {src}, {len}): {e:?}"));
                let got = memory.data(&store);
                if let Some(at) = (0..got.len()).find(|&i| got[i] != expected[i]) {
                    panic!(
                        "{interrupt:?} {name}({dst:#x}, {src:#x}, {len:#x}): byte {at:#x} is {:#x}, \
                         one memmove/memset gives {:#x}",
                        got[at], expected[at]
                    );
                }
            }
            // Out of bounds by a byte: a trap, and nothing written.
            memory.data_mut(&mut store).copy_from_slice(&pattern);
            for (name, dst, src, len) in [
                ("copy", 0, PAGES * 65536 - 2 * MIB + 1, 2 * MIB),
                ("copy", PAGES * 65536 - 2 * MIB + 1, 0, 2 * MIB),
                ("fill", PAGES * 65536 - 3 * MIB + 1, 1, 3 * MIB),
            ] {
                let trap = instance
                    .get_typed_func::<(u32, u32, u32), ()>(&mut store, name)
                    .expect("export")
                    .call(&mut store, (dst, src, len))
                    .expect_err("out of bounds");
                assert_trap(
                    &trap,
                    Trap::MemoryOutOfBounds,
                    format_args!("{interrupt:?} {name}({dst:#x}, {src:#x}, {len:#x})"),
                );
                assert!(
                    memory.data(&store) == &pattern[..],
                    "{interrupt:?} {name}({dst:#x}, {src:#x}, {len:#x}) out of bounds wrote to memory"
                );
            }
        }
    }

    /// Loop shapes for [`every_cycle_of_compiled_code_passes_a_check`]:
    /// those the series treats each in its own way (short loops unrolled,
    /// with exits in each copy, `local.tee` exits, sums reassociated,
    /// multi-value loops, `br_table` back edges from inside blocks, bulk
    /// memory in chunks) and plain ones (nested, long, with calls).
    const CYCLE_SHAPES: &str = r#"(module
      (memory 1)
      (func $leaf (param i32) (result i32) (i32.add (local.get 0) (i32.const 1)))
      (func (export "sum") (param $n i32) (result i32) (local $s i32)
        (loop $l
          (local.set $s (i32.add (local.get $s) (i32.mul (local.get $n) (local.get $n))))
          (local.set $n (i32.sub (local.get $n) (i32.const 1)))
          (br_if $l (local.get $n)))
        (local.get $s))
      (func (export "exits") (param $n i64) (result i64) (local $s i64)
        (block $out
          (loop $l
            (br_if $out (i64.eqz (local.get $n)))
            (local.set $s (i64.add (i64.mul (local.get $n) (i64.const 3)) (local.get $s)))
            (br_if $out (i64.gt_u (local.get $s) (i64.const 1000000)))
            (local.set $n (i64.sub (local.get $n) (i64.const 1)))
            (br $l)))
        (local.get $s))
      (func (export "tee") (param $n i32) (result i32) (local $i i32)
        (block $out (result i32)
          (loop $l
            (br_if $out (local.tee $i (i32.add (local.get $i) (i32.const 1)))
                        (i32.ge_u (local.get $i) (local.get $n)))
            (br $l))
          (i32.const -1)))
      (func (export "multi") (param $n i32) (result i32 i32)
        (i32.const 0) (i32.const 1)
        (loop $l (param i32 i32) (result i32 i32)
          (local.set $n (i32.sub (local.get $n) (i32.const 1)))
          (i32.add) (i32.const 1)
          (br_if $l (local.get $n))))
      (func (export "table") (param $n i32) (result i32)
        (loop $l
          (block $a
            (block $b
              (br_table $a $b $l (i32.and (local.get $n) (i32.const 3))))
            (local.set $n (i32.sub (local.get $n) (i32.const 2)))
            (br $l))
          (local.set $n (i32.sub (local.get $n) (i32.const 1)))
          (br_if $l (i32.gt_s (local.get $n) (i32.const 0))))
        (local.get $n))
      (func (export "nested") (param $n i32) (result i32) (local $i i32) (local $j i32) (local $s i32)
        (loop $outer
          (local.set $j (i32.const 0))
          (loop $inner
            (local.set $s (i32.add (local.get $s) (i32.xor (local.get $i) (local.get $j))))
            (br_if $inner (i32.lt_u (local.tee $j (i32.add (local.get $j) (i32.const 1))) (local.get $n))))
          (br_if $outer (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 1))) (local.get $n))))
        (local.get $s))
      (func (export "calls") (param $n i32) (result i32)
        (loop $l
          (local.set $n (call $leaf (local.get $n)))
          (br_if $l (i32.lt_s (local.get $n) (i32.const 100))))
        (local.get $n))
      (func (export "branchy") (param $n i32) (result i32) (local $s i32)
        (loop $l
          (if (i32.and (local.get $n) (i32.const 1))
            (then (local.set $s (i32.add (local.get $s) (i32.const 3))))
            (else (local.set $s (i32.sub (local.get $s) (i32.const 1)))))
          (local.set $n (i32.sub (local.get $n) (i32.const 1)))
          (br_if $l (local.get $n)))
        (local.get $s))
      (func (export "bulk") (param $d i32) (param $s i32) (param $n i32)
        (memory.fill (local.get $d) (i32.const 7) (local.get $n))
        (memory.copy (local.get $d) (local.get $s) (local.get $n)))
    )"#;

    /// The optimised CLIF wasmtime writes with `Config::emit_clif` for
    /// `wasm` compiled under `interrupt`: each function's file name and
    /// text, the trampolines included, in no particular order.
    fn optimised_clif(interrupt: Interrupt, wasm: &[u8]) -> Vec<(String, String)> {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut config = wasm_config(&Limits::default(), interrupt);
        config.emit_clif(dir.path());
        let engine = wasmtime::Engine::new(&config).expect("an engine");
        engine.precompile_module(wasm).expect("compiles");
        std::fs::read_dir(dir.path())
            .expect("the CLIF folder")
            .map(|entry| {
                let path = entry.expect("an entry").path();
                let name = path.file_name().expect("a file").to_string_lossy();
                let text = std::fs::read_to_string(&path).expect("CLIF text");
                (name.into_owned(), text)
            })
            .collect()
    }

    /// The blocks of each function compiled for `wasm` (the optimised
    /// CLIF wasmtime writes with `Config::emit_clif`) on a cycle that
    /// passes no deadline check (an `atomic_load`: the poll-page check,
    /// and nothing else where guests have no threads), one line per
    /// function that has such a cycle; and how many functions were read.
    fn cycles_without_checks(interrupt: Interrupt, wasm: &[u8]) -> (Vec<String>, usize) {
        use std::collections::BTreeMap;
        let mut found = Vec::new();
        let mut functions = 0;
        for (name, text) in optimised_clif(interrupt, wasm) {
            functions += 1;
            // Block -> (holds a check, successors).
            let mut blocks: BTreeMap<String, (bool, Vec<String>)> = BTreeMap::new();
            let mut current: Option<String> = None;
            for line in text.lines() {
                // `[@offset] instruction` or `block3(v1: i32):`, indented.
                let line = line.trim_start();
                let line = match line.strip_prefix('@') {
                    Some(rest) => rest
                        .split_once(' ')
                        .map_or("", |(_, inst)| inst.trim_start()),
                    None => line,
                };
                if line.starts_with("block") && line.ends_with(':') {
                    let name: String = line
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric())
                        .collect();
                    blocks.entry(name.clone()).or_default();
                    current = Some(name);
                    continue;
                }
                let Some(block) = &current else { continue };
                let inst = line;
                let entry = blocks.get_mut(block).expect("the current block");
                if inst.contains("atomic_load") {
                    entry.0 = true;
                }
                if inst.starts_with("jump ")
                    || inst.starts_with("brif ")
                    || inst.starts_with("br_table ")
                {
                    for word in inst.split(|c: char| !c.is_ascii_alphanumeric()) {
                        if word.starts_with("block") && word.len() > 5 {
                            entry.1.push(word.to_owned());
                        }
                    }
                }
            }
            // A cycle among the blocks without a check: depth-first search,
            // 1 = on the stack, 2 = done.
            fn visit(
                b: &str,
                blocks: &BTreeMap<String, (bool, Vec<String>)>,
                state: &mut BTreeMap<String, u8>,
            ) -> Option<String> {
                state.insert(b.to_owned(), 1);
                for s in &blocks[b].1 {
                    if blocks.get(s).is_none_or(|(checked, _)| *checked) {
                        continue;
                    }
                    match state.get(s.as_str()) {
                        Some(1) => return Some(format!("{s} -> ... -> {b} -> {s}")),
                        Some(_) => {}
                        None => {
                            if let Some(cycle) = visit(s, blocks, state) {
                                return Some(cycle);
                            }
                        }
                    }
                }
                state.insert(b.to_owned(), 2);
                None
            }
            let mut state = BTreeMap::new();
            for (b, (checked, _)) in &blocks {
                if *checked || state.contains_key(b) {
                    continue;
                }
                if let Some(cycle) = visit(b, &blocks, &mut state) {
                    found.push(format!("{name}: {cycle}"));
                    break;
                }
            }
        }
        (found, functions)
    }

    /// Deadlines hold by construction: in the code the patched translator
    /// and optimiser produce, every cycle of every function's control-flow
    /// graph passes a poll-page check, for loop shapes the series treats
    /// each in its own way and for generated modules. Without checks the
    /// same functions do have cycles (so the search sees loops).
    #[test]
    fn every_cycle_of_compiled_code_passes_a_check() {
        let mut modules = vec![wat::parse_str(CYCLE_SHAPES).expect("valid WAT")];
        #[cfg(feature = "fuzzing")]
        {
            let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
            while modules.len() < 41 {
                let bytes: Vec<u8> = (0..4096)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        (seed >> 24) as u8
                    })
                    .collect();
                let config = wasm_smith::Config {
                    export_everything: true,
                    max_imports: 0,
                    min_funcs: 1,
                    max_funcs: 6,
                    max_instructions: 300,
                    max_memory32_bytes: 1 << 20,
                    ..wasm_smith::Config::default()
                };
                // Compiled only, never run: no fuel.
                modules.extend(crate::fuzz::guest_module_of(config, &bytes, None));
            }
        }
        let mut functions = 0;
        let mut unchecked_cycles = 0;
        for wasm in &modules {
            let (found, n) = cycles_without_checks(Interrupt::Poll, wasm);
            assert!(
                found.is_empty(),
                "cycles that pass no deadline check:\n{}",
                found.join("\n")
            );
            functions += n;
            unchecked_cycles += cycles_without_checks(Interrupt::Unchecked, wasm).0.len();
        }
        let shapes = cycles_without_checks(Interrupt::Unchecked, &modules[0])
            .0
            .len();
        assert!(
            shapes >= 8,
            "without checks only {shapes} functions of the loop shapes have a cycle: \
             the search does not see loops"
        );
        eprintln!(
            "{} modules, {functions} functions (trampolines included): every cycle passes a check ({unchecked_cycles} \
             functions have cycles without checks)",
            modules.len()
        );
    }

    /// The loop-header padding of the code generator's series
    /// (`vendor/cranelift-codegen/CYXLA-PATCH.md`, 3) is x64's alone: a
    /// module with loops compiles for Pulley (whose NOP does not exist:
    /// padding there panicked) and for aarch64 without a single NOP (where
    /// padding would not be counted against branch ranges), with the same
    /// settings as the host's engine (for aarch64 deadline checks and
    /// unrolling included).
    #[test]
    fn loops_are_padded_only_where_the_backend_asks() {
        const AARCH64_NOP: [u8; 4] = 0xd503_201f_u32.to_le_bytes();
        let wasm = multiply_loops(8, 6);
        // Pulley's backend has no 8-bit atomic load, the poll check: its
        // loops are compiled without deadline checks.
        for (target, interrupt) in [
            ("pulley64", Interrupt::Unchecked),
            ("aarch64-unknown-linux-gnu", Interrupt::Poll),
        ] {
            let mut config = wasm_config(&Limits::default(), interrupt);
            config.target(target).expect("a known target");
            let engine = wasmtime::Engine::new(&config)
                .unwrap_or_else(|e| panic!("an engine for {target}: {e:?}"));
            // The engine is dropped after a panic, never used again.
            let compile = std::panic::AssertUnwindSafe(|| engine.precompile_module(&wasm));
            let artifact = std::panic::catch_unwind(compile)
                .unwrap_or_else(|_| panic!("compiling loops for {target} panicked"))
                .unwrap_or_else(|e| panic!("compiling loops for {target}: {e:?}"));
            if target.starts_with("aarch64") {
                let nops = artifact
                    .chunks_exact(4)
                    .filter(|w| *w == AARCH64_NOP)
                    .count();
                assert_eq!(nops, 0, "{nops} NOPs in the aarch64 code of 8 loops");
            }
        }
    }

    /// How many `test r, r` (of one register with itself) directly before
    /// a `je`/`jne` are in x64 machine code: the lowering of a `brif` on a
    /// value that nothing computed flags for. Decoded by their bytes: an
    /// optional REX prefix, `0x85` and a register-direct ModRM whose two
    /// registers are the same, then `0x74`/`0x75` or `0x0f 0x84`/`0x0f 0x85`.
    #[cfg(target_arch = "x86_64")]
    fn tests_before_jumps(code: &[u8]) -> usize {
        let mut found = 0;
        for i in 0..code.len() {
            let (rex, at) = match code[i] {
                rex @ 0x40..=0x4f => (rex, i + 1),
                _ => (0, i),
            };
            let (Some(&0x85), Some(&modrm)) = (code.get(at), code.get(at + 1)) else {
                continue;
            };
            let reg = (modrm >> 3 & 7) | (rex & 4) << 1;
            let rm = (modrm & 7) | (rex & 1) << 3;
            let jumps = matches!(
                &code[(at + 2).min(code.len())..],
                [0x74 | 0x75, ..] | [0x0f, 0x84 | 0x85, ..]
            );
            if modrm >> 6 == 3 && reg == rm && jumps {
                found += 1;
            }
        }
        found
    }

    /// A `brif` on the result of an `add` or `sub` of its own block branches
    /// on the flags of that instruction, computed right before the jump
    /// (`vendor/cranelift-codegen/CYXLA-PATCH.md`, 5): loops counted down
    /// by a `sub` or an `add`, of a constant or of a register, in i32 and
    /// i64, and an `if` on an add, compile without a `test r, r` before
    /// their jumps. In a loop that stores its counter between the `sub` and
    /// the branch the `sub` stays where it is, and its `test` is found: the
    /// search sees them. Without the patch every function has one.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn branches_test_the_flags_of_their_arithmetic() {
        let wasm = wat::parse_str(
            r#"(module (memory 1)
              (func (export "down32") (param $n i32) (param $k i32) (result i32) (local $s i32)
                (loop $l
                  (local.set $s (i32.add (local.get $s) (i32.mul (local.get $n) (local.get $k))))
                  (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
                (i32.add (local.get $s) (local.get $n)))
              (func (export "down64") (param $n i64) (param $k i64) (result i64) (local $s i64)
                (loop $l
                  (local.set $s (i64.xor (i64.rotl (local.get $s) (i64.const 5)) (local.get $k)))
                  (br_if $l (i64.ne (local.tee $n (i64.add (local.get $n) (i64.const -16))) (i64.const 0))))
                (i64.add (local.get $s) (local.get $n)))
              (func (export "step") (param $x i32) (param $step i32) (result i32) (local $t i32)
                (loop $l
                  (local.set $t (i32.xor (local.get $t) (local.get $x)))
                  (br_if $l (local.tee $x (i32.add (local.get $x) (local.get $step)))))
                (local.get $t))
              (func (export "if_add") (param $a i32) (param $b i32) (result i32)
                (if (result i32) (i32.add (local.get $a) (local.get $b))
                  (then (i32.const 7)) (else (i32.const 9))))
              (func (export "stored") (param $n i32) (result i32)
                (loop $l
                  (local.set $n (i32.sub (local.get $n) (i32.const 1)))
                  (i32.store (i32.const 16) (local.get $n))
                  (br_if $l (local.get $n)))
                (i32.load (i32.const 16))))"#,
        )
        .expect("valid WAT");
        for interrupt in [Interrupt::Poll, Interrupt::Unchecked] {
            let engine = engine_with(interrupt);
            let module = Module::new(engine.wasm(), &wasm).expect("compiles");
            let text = module.text();
            let counts: Vec<usize> = module
                .functions()
                .map(|f| tests_before_jumps(&text[f.offset..f.offset + f.len]))
                .collect();
            assert!(
                counts.len() == 5 && counts[..4] == [0; 4] && counts[4] >= 1,
                "{interrupt:?}: `test r, r` before a jump in down32, down64, step, if_add, \
                 stored: {counts:?} (expected none in the first four, one at least in stored)"
            );
        }
    }

    /// An unrolled loop whose back edge is a `br_if` at the end of its body
    /// leaves from the first copy through a cold block, laid out after the
    /// function's other code, so that the first copy runs on into the
    /// second without a taken jump
    /// (`vendor/wasmtime-internal-cranelift/CYXLA-PATCH.md`, "The first
    /// copy's exit"). A loop that exits at its top (`br_if` out, `br` back)
    /// leaves from no copy's end, and nothing is cold there; nor in a loop
    /// left rolled (no checks, no unrolling).
    #[test]
    fn the_first_copys_exit_is_cold() {
        // The cold blocks of the module's functions (the trampolines have
        // their own), with those functions' CLIF for the message.
        let cold_blocks = |interrupt: Interrupt, wasm: &[u8]| -> (usize, String) {
            let clif: Vec<String> = optimised_clif(interrupt, wasm)
                .into_iter()
                .map(|(_, text)| text)
                .filter(|text| text.contains("function <wasm[0]::function["))
                .collect();
            let cold = clif
                .iter()
                .flat_map(|f| f.lines())
                .filter(|line| line.trim_start().starts_with("block") && line.ends_with(" cold:"))
                .count();
            (cold, clif.join("\n"))
        };
        let do_while = multiply_loops(1, 6);
        let exit_at_top = wat::parse_str(
            r#"(module (func (export "f") (param $n i64) (result i64) (local $a i64)
                 (block $out (loop $l
                   (br_if $out (i64.eqz (local.get $n)))
                   (local.set $a (i64.mul (local.get $a) (i64.const 3)))
                   (local.set $n (i64.sub (local.get $n) (i64.const 1)))
                   (br $l)))
                 (local.get $a)))"#,
        )
        .expect("valid WAT");
        for (interrupt, wasm, want, what) in [
            (
                Interrupt::Poll,
                &do_while,
                1,
                "the do-while loop's first copy leaves through one",
            ),
            (
                Interrupt::Poll,
                &exit_at_top,
                0,
                "a loop that exits at its top has no",
            ),
            (
                Interrupt::Unchecked,
                &do_while,
                0,
                "a loop compiled without checks (not unrolled) has no",
            ),
        ] {
            let (cold, clif) = cold_blocks(interrupt, wasm);
            assert_eq!(cold, want, "{what} cold block; the CLIF:\n{clif}");
        }
    }

    /// The loop patches of the code generators are in use
    /// (`vendor/wasmtime-internal-cranelift/CYXLA-PATCH.md`, "Loop
    /// unrolling"; `vendor/cranelift-codegen/CYXLA-PATCH.md`, 3): with
    /// deadline checks an innermost loop's body of at most 64 operators is
    /// compiled twice (its code grows by a second copy: Cranelift folds the
    /// multiplies by constants into one, so by 24 bytes at least), a longer
    /// one once (it grows by the checks alone, less); and every function
    /// with a loop starts on a 64-byte line, with checks or without
    /// (functions are otherwise 32-byte aligned: eight at multiples of 64 by
    /// chance is one in 256).
    #[test]
    fn short_loops_are_unrolled_and_loops_aligned() {
        let checked = engine_with(Limits::default().interrupt);
        let unchecked = engine_with(Interrupt::Unchecked);

        // 6 multiplies: 4 operators each, 32 in all with the loop's control.
        let short = multiply_loops(8, 6);
        // 14 multiplies: 64 operators, unrolled since the series' patch
        // wasmtime-internal-cranelift/06 (the matmul's vectorised loop has 53).
        let medium = multiply_loops(1, 14);
        // 15 multiplies: 68 operators, too long to unroll.
        let long = multiply_loops(1, 15);
        // Loop headers start a 64-byte line on x64 only (cranelift-codegen/03; on
        // aarch64 no padding: loops_are_padded_only_where_the_backend_asks).
        if cfg!(target_arch = "x86_64") {
            for engine in [&checked, &unchecked] {
                for (offset, _) in function_ranges(engine, &short) {
                    assert_eq!(offset % 64, 0, "a function with a loop at {offset:#x}");
                }
            }
        }
        let with = function_ranges(&checked, &short)[0].1;
        let without = function_ranges(&unchecked, &short)[0].1;
        assert!(
            with >= without + 6 * 4,
            "the short loop was not unrolled: {with} bytes with checks, {without} without"
        );
        let with = function_ranges(&checked, &medium)[0].1;
        let without = function_ranges(&unchecked, &medium)[0].1;
        assert!(
            with >= without + 24,
            "the 64-operator loop was not unrolled: {with} bytes with checks, {without} without"
        );
        let with = function_ranges(&checked, &long)[0].1;
        let without = function_ranges(&unchecked, &long)[0].1;
        assert!(
            with < without + 24,
            "the long loop was unrolled: {with} bytes with checks, {without} without"
        );
    }
}
