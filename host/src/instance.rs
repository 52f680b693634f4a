//! One ready instance of a guest: its `Store`, the exports the host calls,
//! the API table address, a scratch region in guest memory and the reused
//! call layout. [`Instance::call`] runs one custom call through it.

use std::ptr::NonNull;
use std::time::{Duration, Instant};

use cyxla_guest_abi as abi;
use plugin_glue::{ErrorCode, HandlerError};
use wasmtime::{
    InstancePre, Memory, Store, Trap, TypedFunc, WasmBacktrace, WasmParams, WasmResults,
};

use crate::copy::Copier;
use crate::deadline::{CodeRanges, Poll};
use crate::engine::Engine;
use crate::error::{WasmError, bounded};
use crate::float_mode::WasmFloatMode;
use crate::imports::guest_range;
use crate::layout::{CallLayout, CallView, DATA_ALIGN, Region, Source, same};
use crate::limits::{Limits, UNWRITTEN_POISON, Unwritten, bytes_display};
use crate::stack;
use crate::state::{CallInfo, GuestFault, HostState};
use crate::stats::{self, CallMeasure, Ending};

/// Scratch allocated when an instance is made (grown on demand).
const INITIAL_SCRATCH: u32 = 64 << 10;
/// Most wasm frames named in an error message.
const BACKTRACE_FRAMES: usize = 4;
/// Longest function name (demangled) shown for one frame, in bytes.
const FRAME_NAME_BYTES: usize = 256;

/// What making an instance of a guest takes: its module, compiled and
/// linked, the engine and limits it runs under, and the exports the host
/// calls. A [`crate::Guest`] holds one; instances need nothing else of it.
pub(crate) struct Linked {
    pub(crate) pre: InstancePre<HostState>,
    /// It exports `_initialize` (a WASI reactor), called once per instance.
    pub(crate) has_initialize: bool,
    /// It exports the SDK's last-panic message function.
    pub(crate) has_last_panic: bool,
    pub(crate) engine: Engine,
    /// Where its compiled code lies (for the fault handler).
    pub(crate) code: std::sync::Arc<CodeRanges>,
    pub(crate) limits: Limits,
    /// The handler export of each target, in the guest's target order.
    pub(crate) exports: Vec<String>,
    /// The file name (`rms_norm.wasm`), for messages and logs.
    pub(crate) file_name: String,
}

/// Why an instance could not be made.
#[derive(Debug)]
pub(crate) enum NewError {
    /// The guest breaks the ABI (wrong version, API table outside memory,
    /// a missing or mistyped export, with wasmtime's error behind it).
    Abi(WasmError),
    /// Instantiation or initialisation failed.
    Failed(WasmError),
}

impl NewError {
    /// The message.
    pub(crate) fn message(&self) -> &str {
        match self {
            NewError::Abi(e) => e.message(),
            NewError::Failed(e) => e.message(),
        }
    }
}

/// A failed call: the error (without the target/guest prefix) and whether
/// the instance must be discarded.
#[derive(Debug)]
pub(crate) struct CallFailure {
    pub(crate) error: HandlerError,
    pub(crate) discard: bool,
    /// The guest returned this error itself (not a trap or the host).
    pub(crate) from_guest: bool,
}

impl CallFailure {
    /// A failure that leaves the instance usable.
    fn keep(error: HandlerError) -> CallFailure {
        CallFailure {
            error,
            discard: false,
            from_guest: false,
        }
    }

    /// How the call ended, for the statistics.
    pub(crate) fn ending(&self) -> Ending {
        Ending::of_failure(self.error.code, self.from_guest, self.discard)
    }
}

/// The host's address of a linear memory's byte 0, fixed for the life of
/// the memory: the engine never moves one (`memory_may_move(false)` in
/// [`crate::engine::wasm_config`], and a wasm32 memory's 4 GiB fit its
/// reservation), and a memory never shrinks.
#[derive(Clone, Copy, Debug)]
struct MemoryBase(NonNull<u8>);

// SAFETY: an address; it is read or written through only by
// `scratch_bytes`, with the store that owns the memory borrowed mutably,
// so on the one thread that holds that store.
unsafe impl Send for MemoryBase {}
// SAFETY: as for Send: a shared `MemoryBase` gives no access.
unsafe impl Sync for MemoryBase {}

/// The first `len` bytes of the scratch region `scratch` of `memory`,
/// whose base is `base`; `None` if the region holds fewer.
///
/// A call's copies take the region this way rather than through
/// `Memory::data_mut`, whose look-up of the memory (the store's instance,
/// its offsets, its memory's definition: a chain of dependent loads) took
/// several nanoseconds of each call (docs/performance.md,
/// "Instructions per call").
#[inline]
fn scratch_bytes(
    store: &mut Store<HostState>,
    memory: Memory,
    base: MemoryBase,
    scratch: Region,
    len: usize,
) -> Option<&mut [u8]> {
    debug_assert_eq!(memory.data_ptr(&*store), base.0.as_ptr());
    debug_assert!(
        guest_range(
            memory.data_size(&*store),
            scratch.offset,
            scratch.len as usize
        )
        .is_some()
    );
    let _ = memory;
    if len > scratch.len as usize {
        return None;
    }
    // SAFETY: the scratch region lies inside the memory
    // (`Instance::grow_scratch` checked it against the memory's size when
    // it set it, and the memory never shrinks) and `base` is the memory's
    // byte 0 (`MemoryBase`), so `len` bytes from the region's start are
    // in bounds of one live mapping. The store is borrowed mutably for as
    // long as the slice lives: no guest code runs and no other reference
    // into its memory (each is taken from the store) exists meanwhile.
    Some(unsafe {
        std::slice::from_raw_parts_mut(base.0.as_ptr().add(scratch.offset as usize), len)
    })
}

/// A ready guest instance.
pub(crate) struct Instance {
    store: Store<HostState>,
    memory: Memory,
    /// `memory`'s byte 0 ([`MemoryBase`]).
    memory_base: MemoryBase,
    alloc: TypedFunc<(i32, i32), i32>,
    handlers: Vec<TypedFunc<i32, i32>>,
    last_panic: Option<TypedFunc<(), i32>>,
    api: u32,
    scratch: Region,
    layout: CallLayout,
    engine: Engine,
    limits: Limits,
    /// `limits.deadline_ticks()`, worked out once: it divides 128-bit
    /// numbers.
    call_ticks: u64,
    code: std::sync::Arc<CodeRanges>,
    /// The store's poll page, for its deadlines.
    poll: Poll,
    /// Ranges of the scratch region (offsets from its start; sorted,
    /// disjoint) that hold bytes the host copied in for the last call: its
    /// header and its operands.
    copied: Vec<(u32, u32)>,
    /// [`Instance::copied`] of the call being written (kept to reuse its
    /// allocation).
    copying: Vec<(u32, u32)>,
    /// The layout's [`CallLayout::ranges_version`] that
    /// [`Instance::copied`] holds the ranges of, if it does: while the
    /// layout keeps that version, a call copies into the same ranges.
    copied_version: Option<u64>,
    /// What the last call measured (times only while timing is on).
    pub(crate) measure: CallMeasure,
}

impl Instance {
    /// Instantiates `guest`: runs its start function and `_initialize`
    /// under the instantiation deadline, checks `cyxla_abi_version()` and
    /// `cyxla_api()`, and allocates the first scratch region.
    ///
    /// Runs on this thread if it has the native stack the guest's `stack`
    /// limit needs ([`crate::stack`]), else on a helper thread that has it.
    ///
    /// # Errors
    ///
    /// A message saying what failed.
    pub(crate) fn new(guest: &Linked) -> Result<Instance, NewError> {
        if stack::has_room(guest.limits.stack) {
            return Instance::new_here(guest);
        }
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("cyxla-instantiate".into())
                .stack_size(stack::THREAD_STACK)
                .spawn_scoped(scope, || Instance::new_here(guest))
                .map_err(|e| {
                    NewError::Failed(WasmError::msg(format!(
                        "cannot start a thread to instantiate on: {e}"
                    )))
                })?
                .join()
                .unwrap_or_else(|_| {
                    Err(NewError::Failed(WasmError::msg(
                        "the instantiation thread panicked".into(),
                    )))
                })
        })
    }

    /// [`Instance::new`] on this thread.
    fn new_here(guest: &Linked) -> Result<Instance, NewError> {
        // Guest code runs from here on (the start function, `_initialize`,
        // `cyxla_abi_version`, `cyxla_api`, `cyxla_alloc`): in wasm's float
        // mode, until the instance is made or refused.
        let _float_mode = WasmFloatMode::enter();
        let engine = guest.engine.clone();
        let limits = guest.limits.clone();
        let mut store = Store::new(engine.wasm(), HostState::new(&limits));
        store.limiter(|state| &mut state.limiter);
        let poll = engine.ticker().poll().map_err(|e| {
            NewError::Failed(WasmError::msg(format!(
                "cannot map the store's deadline poll page: {e}"
            )))
        })?;
        let active =
            engine
                .ticker()
                .enter(&mut store, &poll, limits.instantiate_ticks(), &guest.code);
        let failed = |store: &Store<HostState>, step: &str, e: wasmtime::Error| {
            let (_, text) = describe(&e, store.data(), &limits, limits.instantiate_timeout);
            NewError::Failed(WasmError::described(e, format!("{step} {text}")))
        };

        let instance = guest
            .pre
            .instantiate(&mut store)
            .map_err(|e| failed(&store, "instantiation", e))?;
        let memory = instance
            .get_memory(&mut store, abi::EXPORT_MEMORY)
            .ok_or_else(|| {
                NewError::Abi(WasmError::msg(format!(
                    "it exports no memory `{}`",
                    abi::EXPORT_MEMORY
                )))
            })?;
        store.data_mut().memory = Some(memory);
        let typed = |store: &mut Store<HostState>, name: &str| {
            instance
                .get_typed_func::<(), i32>(&mut *store, name)
                .map_err(|e| abi_export(name, e))
        };
        let alloc = instance
            .get_typed_func::<(i32, i32), i32>(&mut store, abi::EXPORT_ALLOC)
            .map_err(|e| abi_export(abi::EXPORT_ALLOC, e))?;
        store.data_mut().alloc = Some(alloc.clone());
        if guest.has_initialize {
            let init = instance
                .get_typed_func::<(), ()>(&mut store, abi::EXPORT_INITIALIZE)
                .map_err(|e| abi_export(abi::EXPORT_INITIALIZE, e))?;
            init.call(&mut store, ())
                .map_err(|e| failed(&store, "`_initialize`", e))?;
        }
        let version = typed(&mut store, abi::EXPORT_ABI_VERSION)?
            .call(&mut store, ())
            .map_err(|e| failed(&store, "`cyxla_abi_version()`", e))?;
        if i64::from(version) != i64::from(abi::ABI_VERSION) {
            return Err(NewError::Abi(WasmError::msg(format!(
                "`{}()` returned {version}; this host speaks guest ABI version {}",
                abi::EXPORT_ABI_VERSION,
                abi::ABI_VERSION
            ))));
        }
        let api = typed(&mut store, abi::EXPORT_API)?
            .call(&mut store, ())
            .map_err(|e| failed(&store, "`cyxla_api()`", e))?
            .cast_unsigned();
        let size = memory.data_size(&store);
        // The table of a guest built with the 0.3 SDK has 18 slots; the
        // host reads none of them, so it asks no more of older guests.
        if api == 0 || guest_range(size, api, abi::api::SIZE_0_3 as usize).is_none() {
            return Err(NewError::Abi(WasmError::msg(format!(
                "`{}()` returned {api:#x}, which is not the address of a {}-byte `XLA_FFI_Api` inside guest memory ({size} bytes)",
                abi::EXPORT_API,
                abi::api::SIZE_0_3
            ))));
        }
        let mut handlers = Vec::with_capacity(guest.exports.len());
        for export in &guest.exports {
            handlers.push(
                instance
                    .get_typed_func::<i32, i32>(&mut store, export)
                    .map_err(|e| abi_export(export, e))?,
            );
        }
        let last_panic = if guest.has_last_panic {
            Some(typed(&mut store, abi::EXPORT_LAST_PANIC)?)
        } else {
            None
        };
        drop(active);
        drain_logs(&store, &guest.file_name, "(initialization)");

        let memory_base =
            MemoryBase(NonNull::new(memory.data_ptr(&store)).ok_or_else(|| {
                NewError::Abi(WasmError::msg("its memory has no address".into()))
            })?);
        let mut instance = Instance {
            store,
            memory,
            memory_base,
            alloc,
            handlers,
            last_panic,
            api,
            scratch: Region { offset: 0, len: 0 },
            layout: CallLayout::default(),
            engine,
            call_ticks: limits.deadline_ticks(),
            limits,
            code: std::sync::Arc::clone(&guest.code),
            poll,
            copied: Vec::new(),
            copying: Vec::new(),
            copied_version: None,
            measure: CallMeasure::default(),
        };
        // Part of making the instance: under the instantiation's deadline,
        // not a call's.
        let deadline = (
            instance.limits.instantiate_timeout,
            instance.limits.instantiate_ticks(),
        );
        instance
            .grow_scratch(INITIAL_SCRATCH, deadline)
            .map_err(|failure| {
                // A trap or a deadline in the allocator: say whose.
                let message = failure.error.message;
                NewError::Failed(WasmError::msg(if message.contains(abi::EXPORT_ALLOC) {
                    message
                } else {
                    format!(
                        "`{}({INITIAL_SCRATCH}, {DATA_ALIGN})` {message}",
                        abi::EXPORT_ALLOC
                    )
                }))
            })?;
        Ok(instance)
    }

    /// Runs target number `target` (an index into the guest's targets) on
    /// `call`. `guest` and `target_name` name it in logs.
    ///
    /// # Errors
    ///
    /// The guest's own error, a trap, a deadline, a limit, or a bad frame;
    /// [`CallFailure::discard`] says whether this instance may be reused.
    pub(crate) fn call<C: CallView>(
        &mut self,
        target: usize,
        call: &C,
        info: CallInfo,
        guest: &str,
        target_name: &str,
    ) -> Result<(), CallFailure> {
        // Borrowed, not cloned, where it is called: cloning a `TypedFunc`
        // clones its registered type (an atomic count and a lock-free
        // registry lookup), measurable at this call rate.
        if !stack::has_room(self.limits.stack) {
            return Err(CallFailure::keep(stack_refusal(self.limits.stack)));
        }
        if target >= self.handlers.len() {
            return Err(CallFailure::keep(HandlerError::internal(format!(
                "no handler export number {target}"
            ))));
        }
        self.layout
            .plan(call, self.scratch.offset, self.api)
            .map_err(CallFailure::keep)?;
        if self.layout.total > self.scratch.len {
            // `cyxla_alloc` is guest code: what earlier calls left in the
            // old region goes first.
            self.scrub_copied();
            self.grow_scratch(
                self.layout.total,
                (self.limits.call_timeout, self.call_ticks),
            )?;
            self.layout
                .plan(call, self.scratch.offset, self.api)
                .map_err(CallFailure::keep)?;
        }
        self.measure = CallMeasure {
            bytes_in: self.layout.bytes_in,
            ..CallMeasure::default()
        };
        let timing = stats::timing();
        let started = timing.then(Instant::now);
        self.write_frame(call)?;
        let copied_in = timing.then(Instant::now);

        {
            let state = self.store.data_mut();
            state.call = Some(info);
            state.limiter.refused_memory = None;
            state.limiter.refused_budget = None;
            state.limiter.refused_table = None;
        }
        let result = run_guest(
            &mut self.store,
            &self.engine,
            &self.poll,
            self.call_ticks,
            &self.code,
            &self.handlers[target],
            self.layout.frame_addr().cast_signed(),
        );
        let returned = timing.then(Instant::now);
        drain_logs(&self.store, guest, target_name);

        let outcome = match result {
            Ok(0) => {
                let read = match self.limits.unwritten {
                    Unwritten::Off => Ok(()),
                    mode => self.check_unwritten(call, mode, guest, target_name),
                }
                .and_then(|()| self.read_results(call));
                if read.is_ok() {
                    self.measure.bytes_out = self.layout.bytes_out;
                }
                read
            }
            Ok(handle) => match self.store.data_mut().errors.take(handle) {
                Some(error) => Err(CallFailure {
                    from_guest: true,
                    ..CallFailure::keep(error.to_handler_error(""))
                }),
                None => Err(CallFailure {
                    error: HandlerError::internal(format!(
                        "the guest returned a forged error handle ({handle:#x}): the host never issued it, or it was destroyed"
                    )),
                    discard: true,
                    from_guest: false,
                }),
            },
            Err(error) => Err(self.trapped(&error, self.limits.call_timeout)),
        };
        if let (Some(started), Some(copied_in), Some(returned)) = (started, copied_in, returned) {
            self.measure.timed = true;
            self.measure.guest = returned - copied_in;
            self.measure.copy = (copied_in - started) + returned.elapsed();
        }
        let state = self.store.data_mut();
        state.call = None;
        state.errors.clear();
        outcome
    }

    /// Zeroes what the last call copied into the scratch region.
    fn scrub_copied(&mut self) {
        let data = self.memory.data_mut(&mut self.store);
        for &(start, end) in &self.copied {
            if let Some(range) = guest_range(
                data.len(),
                self.scratch.offset.saturating_add(start),
                (end - start) as usize,
            ) {
                data[range].fill(0);
            }
        }
        self.copied.clear();
        self.copied_version = None;
    }

    /// Copies the header and the inputs into guest memory. A result aliased
    /// with an operand shares its region, which is filled once, with the
    /// operand's bytes; any other result's region is left as it is (XLA's
    /// result buffers hold unspecified bytes too).
    ///
    /// No call finds bytes the host copied in for an earlier one: what the
    /// last call's header and operands left, this call overwrites with its
    /// own or zeroes. What the guest wrote itself (its results, its heap)
    /// it may find again, as it finds its statics. Each buffer is copied in
    /// once and nothing is zeroed twice: a result region that held a
    /// result last time costs nothing here.
    fn write_frame<C: CallView>(&mut self, call: &C) -> Result<(), CallFailure> {
        // The layout keeps the header below `total`, a u32.
        let header = u32::try_from(self.layout.header.len()).unwrap_or(self.layout.total);
        // The ranges this call copies into: those of the last call while
        // the layout's header length and regions are the ones they were
        // found from (the usual case at one call site), else found again.
        let version = self.layout.ranges_version();
        let moved = self.copied_version != Some(version);
        if moved {
            self.copying.clear();
            self.copying.push((0, header));
            for fill in &self.layout.fills {
                if let Source::Operand(_) = fill.source {
                    let start = fill.region.offset;
                    self.copying.push((start, start + fill.region.len));
                }
            }
        }
        let last_end = self.copied.last().map_or(0, |&(_, end)| end);
        let extent = self.layout.total.max(last_end) as usize;
        let region = self.scratch;
        let Some(scratch) = scratch_bytes(
            &mut self.store,
            self.memory,
            self.memory_base,
            region,
            extent,
        ) else {
            return Err(CallFailure {
                error: HandlerError::internal(format!(
                    "the call's {extent} bytes exceed the scratch region at {:#x} ({} bytes)",
                    region.offset, region.len
                )),
                discard: true,
                from_guest: false,
            });
        };
        let copier = Copier::new(self.limits.copy_threads);
        // A call laid out as the last one (the usual case at one call site)
        // copies into the same ranges: nothing to zero.
        if moved {
            if !same(&self.copied, &self.copying) {
                for_each_uncovered(&self.copied, &self.copying, |start, end| {
                    scratch[start as usize..end as usize].fill(0);
                });
                // Recorded before copying: if reading an operand fails
                // half-way, the next call still scrubs whatever this one
                // wrote.
                std::mem::swap(&mut self.copied, &mut self.copying);
            }
            self.copied_version = Some(version);
        }
        scratch[..header as usize].copy_from_slice(&self.layout.header);
        for fill in &self.layout.fills {
            let start = fill.region.offset as usize;
            let dst = &mut scratch[start..start + fill.region.len as usize];
            match fill.source {
                Source::Operand(i) => call
                    .read_arg(i, self.layout.checked_shape(i), dst, copier)
                    .map_err(CallFailure::keep)?,
                // The unwritten-results check: a result region aliasing no
                // operand starts as poison (`check_unwritten` reads it).
                Source::Unfilled if self.limits.unwritten != Unwritten::Off => {
                    dst.fill(UNWRITTEN_POISON);
                }
                Source::Unfilled => {}
            }
        }
        Ok(())
    }

    /// The unwritten-results check ([`Limits::unwritten`]), after a
    /// successful call: the elements of each result that still hold the
    /// poison `write_frame` filled its region with, reported as an error
    /// (`Error`) or logged as a warning (`Warn`). Results aliased with an
    /// operand (which start with the operand's bytes) are not checked.
    fn check_unwritten<C: CallView>(
        &mut self,
        call: &C,
        mode: Unwritten,
        guest: &str,
        target: &str,
    ) -> Result<(), CallFailure> {
        /// First indices named per result.
        const SHOWN: usize = 4;
        let data = self.memory.data(&self.store);
        let mut report = Vec::new();
        for (i, region) in self.layout.outputs.iter().enumerate() {
            let aliased = self.layout.fills.iter().any(|f| {
                f.region.offset == region.offset && matches!(f.source, Source::Operand(_))
            });
            if aliased || region.len == 0 {
                continue;
            }
            let Ok(desc) = call.ret(i) else { continue };
            let count: usize = desc
                .dims
                .iter()
                .map(|&d| usize::try_from(d).unwrap_or(0))
                .product();
            let len = region.len as usize;
            // Elements of whole bytes; anything else (packed sub-byte
            // types) is checked byte by byte.
            let (unit, what) = if count > 0 && len.is_multiple_of(count) {
                (len / count, "elements")
            } else {
                (1, "bytes")
            };
            let addr = self.scratch.offset.saturating_add(region.offset);
            let Some(range) = guest_range(data.len(), addr, len) else {
                continue;
            };
            let mut missing = 0usize;
            let mut first = Vec::new();
            for (index, element) in data[range].chunks_exact(unit).enumerate() {
                // Most elements differ in their first byte already.
                if element[0] == UNWRITTEN_POISON && element.iter().all(|&b| b == UNWRITTEN_POISON)
                {
                    missing += 1;
                    if first.len() < SHOWN {
                        first.push(index.to_string());
                    }
                }
            }
            if missing > 0 {
                let more = if missing > first.len() { ", …" } else { "" };
                report.push(format!(
                    "result {i}: {missing} of {} {what} never written (first at {}{more})",
                    len / unit,
                    first.join(", ")
                ));
            }
        }
        if report.is_empty() {
            return Ok(());
        }
        let text = format!(
            "left result elements unwritten (check `unwritten`): {}",
            report.join("; ")
        );
        match mode {
            Unwritten::Error => Err(CallFailure::keep(HandlerError::new(
                ErrorCode::Internal,
                bounded(text, self.limits.error_message),
            ))),
            _ => {
                tracing::warn!(guest, custom_call = target, "{text}");
                Ok(())
            }
        }
    }

    /// Copies each result out of the region the host allocated for it (for
    /// a result aliased with an operand, the region they share).
    fn read_results<C: CallView>(&mut self, call: &C) -> Result<(), CallFailure> {
        let scratch = self.scratch;
        let data: &[u8] = scratch_bytes(
            &mut self.store,
            self.memory,
            self.memory_base,
            scratch,
            scratch.len as usize,
        )
        .unwrap_or_default();
        let copier = Copier::new(self.limits.copy_threads);
        for (i, region) in self.layout.outputs.iter().enumerate() {
            // The layout plans every region inside the scratch region.
            let range =
                guest_range(data.len(), region.offset, region.len as usize).ok_or_else(|| {
                    CallFailure {
                        error: HandlerError::internal(format!(
                            "result {i} is outside the scratch region"
                        )),
                        discard: true,
                        from_guest: false,
                    }
                })?;
            let checked = self.layout.checked_shape(self.layout.inputs.len() + i);
            call.write_ret(i, checked, &data[range], copier)
                .map_err(CallFailure::keep)?;
        }
        Ok(())
    }

    /// Makes the scratch region at least `needed` bytes (growing it at least
    /// twofold, in whole 64 KiB pages) with the guest's `cyxla_alloc`, run
    /// under `deadline` (wall time, timer ticks).
    fn grow_scratch(&mut self, needed: u32, deadline: (Duration, u64)) -> Result<(), CallFailure> {
        let want = needed
            .max(self.scratch.len.saturating_mul(2))
            .checked_next_multiple_of(64 << 10)
            .unwrap_or(needed);
        let Ok(want_i32) = i32::try_from(want) else {
            return Err(CallFailure::keep(HandlerError::new(
                ErrorCode::ResourceExhausted,
                format!(
                    "the call needs {needed} bytes of guest memory, more than a wasm32 allocation can hold"
                ),
            )));
        };
        let result = run_guest(
            &mut self.store,
            &self.engine,
            &self.poll,
            deadline.1,
            &self.code,
            &self.alloc,
            (want_i32, DATA_ALIGN.cast_signed()),
        );
        let addr = match result {
            Ok(addr) => addr.cast_unsigned(),
            Err(error) => return Err(self.trapped(&error, deadline.0)),
        };
        if addr == 0 {
            return Err(CallFailure::keep(HandlerError::new(
                ErrorCode::ResourceExhausted,
                format!(
                    "`{}({want}, {DATA_ALIGN})` returned 0: no room in guest memory for the call (memory limit {})",
                    abi::EXPORT_ALLOC,
                    self.limits.memory_display()
                ),
            )));
        }
        let size = self.memory.data_size(&self.store);
        if guest_range(size, addr, want as usize).is_none() || addr % DATA_ALIGN != 0 {
            return Err(CallFailure {
                error: HandlerError::internal(format!(
                    "`{}({want}, {DATA_ALIGN})` returned {addr:#x}, not an aligned block inside guest memory ({size} bytes)",
                    abi::EXPORT_ALLOC
                )),
                discard: true,
                from_guest: false,
            });
        }
        self.scratch = Region {
            offset: addr,
            len: want,
        };
        // The guest's allocator may hand out memory it used before: start
        // from zeros (what calls copy in is scrubbed, see `write_frame`).
        let data = self.memory.data_mut(&mut self.store);
        if let Some(range) = guest_range(data.len(), addr, want as usize) {
            data[range].fill(0);
        }
        Ok(())
    }

    /// The failure for an error out of guest code that ran under a
    /// wall-time limit of `deadline`; the instance is discarded.
    fn trapped(&mut self, error: &wasmtime::Error, deadline: Duration) -> CallFailure {
        let is_trap = error.downcast_ref::<Trap>().is_some();
        let panic = if is_trap { self.panic_message() } else { None };
        let (code, text) = match panic {
            // A panicking guest stored its message and trapped: the message
            // (with its source location) says more than the trap.
            Some(panic) => {
                let text = match panic.strip_prefix("panicked ") {
                    Some(rest) => format!("the guest panicked {rest}"),
                    None => format!("the guest panicked: {panic}"),
                };
                (ErrorCode::Internal, text)
            }
            None => describe(error, self.store.data(), &self.limits, deadline),
        };
        CallFailure {
            error: HandlerError::new(code, text),
            discard: true,
            from_guest: false,
        }
    }

    /// The guest's last panic message, if it exports `cyxla_last_panic` and
    /// has one.
    fn panic_message(&mut self) -> Option<String> {
        let func = self.last_panic.clone()?;
        let addr = run_guest(
            &mut self.store,
            &self.engine,
            &self.poll,
            3,
            &self.code,
            &func,
            (),
        )
        .ok()?
        .cast_unsigned();
        if addr == 0 {
            return None;
        }
        let data = self.memory.data(&self.store);
        let start = usize::try_from(addr).ok()?;
        let limit = self.limits.error_message;
        let window = data.get(start..data.len().min(start.saturating_add(limit)))?;
        let len = window.iter().position(|&b| b == 0).unwrap_or(window.len());
        Some(String::from_utf8_lossy(&window[..len]).into_owned())
    }
}

/// Calls `f` with each piece of the ranges in `old` that no range in `new`
/// covers. Both hold sorted, disjoint, half-open ranges.
fn for_each_uncovered(old: &[(u32, u32)], new: &[(u32, u32)], mut f: impl FnMut(u32, u32)) {
    let mut next = 0;
    for &(start, end) in old {
        let mut at = start;
        // Ranges of `new` ending at or before `at` cover nothing from here on.
        while next < new.len() && new[next].1 <= at {
            next += 1;
        }
        let mut j = next;
        while at < end && j < new.len() && new[j].0 < end {
            let (cover_start, cover_end) = new[j];
            if cover_start > at {
                f(at, cover_start);
            }
            at = at.max(cover_end);
            j += 1;
        }
        if at < end {
            f(at, end);
        }
    }
}

/// Calls guest function `func` of the instance whose store, engine, poll
/// page and code these are, under a deadline of `ticks` ticks (as
/// [`Limits::deadline_ticks`] counts a call's) and in wasm's float mode
/// ([`WasmFloatMode`], the caller's mode back after it, however it ends):
/// its result. (A free function, so that a caller can lend `func` from the
/// instance while the store is borrowed mutably.) Every call of a ready
/// instance's exports goes through here; [`Instance::new_here`] covers
/// those of instantiation.
#[inline]
fn run_guest<P: WasmParams, R: WasmResults>(
    store: &mut Store<HostState>,
    engine: &Engine,
    poll: &Poll,
    ticks: u64,
    code: &CodeRanges,
    func: &TypedFunc<P, R>,
    params: P,
) -> wasmtime::Result<R> {
    let _float_mode = WasmFloatMode::enter();
    let _active = engine.ticker().enter(store, poll, ticks, code);
    func.call(&mut *store, params)
}

/// Export `name` is missing or has the wrong type: wasmtime's error, kept
/// behind the message.
fn abi_export(name: &str, error: wasmtime::Error) -> NewError {
    let text = format!("export `{name}`: {error:#}");
    NewError::Abi(WasmError::described(error, text))
}

/// The error for a call on a thread without native stack room for the
/// guest's wasm stack limit.
fn stack_refusal(stack_bytes: usize) -> HandlerError {
    let show = |n: usize| bytes_display(u64::try_from(n).unwrap_or(u64::MAX));
    let left = stack::remaining().unwrap_or(0);
    HandlerError::new(
        ErrorCode::ResourceExhausted,
        format!(
            "not run: this thread has {} KiB of native stack left, less than the wasm stack limit ({}, `stack`) plus {} for host code; lower the `stack` limit or call from a thread with a larger stack",
            left >> 10,
            show(stack_bytes),
            show(stack::HOST_MARGIN)
        ),
    )
}

/// Logs what the guest wrote to stdout and stderr.
fn drain_logs(store: &Store<HostState>, guest: &str, target: &str) {
    let state = store.data();
    let dropped = |n: u64| {
        if n > 0 {
            format!("… ({n} bytes dropped)")
        } else {
            String::new()
        }
    };
    // The pipe named `$stream`, logged at `$level` (a macro: `tracing`
    // takes the level as a constant).
    macro_rules! drain {
        ($stream:ident, $level:ident) => {
            state.$stream.drain(|text, n| {
                tracing::$level!(
                    guest,
                    custom_call = target,
                    stream = stringify!($stream),
                    "{text}{}",
                    dropped(n)
                );
            })
        };
    }
    drain!(stdout, info);
    drain!(stderr, warn);
}

/// The error code and description (lower case, no final period) of an
/// error out of guest code that ran under `limits` with a wall-time limit
/// of `deadline`.
pub(crate) fn describe(
    error: &wasmtime::Error,
    state: &HostState,
    limits: &Limits,
    deadline: std::time::Duration,
) -> (ErrorCode, String) {
    let (mut code, mut text) = if let Some(trap) = error.downcast_ref::<Trap>() {
        match trap {
            Trap::Interrupt => (
                ErrorCode::DeadlineExceeded,
                format!("exceeded its deadline ({deadline:?})"),
            ),
            Trap::StackOverflow => (
                ErrorCode::ResourceExhausted,
                format!(
                    "trapped: call stack exhausted (the wasm stack limit is {})",
                    bytes_display(u64::try_from(limits.stack).unwrap_or(u64::MAX))
                ),
            ),
            other => {
                let text = other.to_string();
                let text = text.strip_prefix("wasm trap: ").unwrap_or(&text).to_owned();
                (ErrorCode::Internal, format!("trapped: {text}"))
            }
        }
    } else if let Some(fault) = error.downcast_ref::<GuestFault>() {
        (
            ErrorCode::Internal,
            format!("made an invalid host call: {fault}"),
        )
    } else if let Some(exit) = error.downcast_ref::<wasmtime_wasi::I32Exit>() {
        (ErrorCode::Internal, format!("called exit({})", exit.0))
    } else {
        (
            ErrorCode::Internal,
            format!("failed: {}", error.root_cause()),
        )
    };
    if let Some((budget, held)) = state.limiter.refused_budget {
        code = ErrorCode::ResourceExhausted;
        text.push_str(&format!(
            " after its memory was refused growth to {}: the guests of this process hold {} of their memory_budget of {}",
            bytes_display(state.limiter.refused_memory.map_or(0, |b| b as u64)),
            bytes_display(held),
            bytes_display(budget)
        ));
    } else if let Some(bytes) = state.limiter.refused_memory {
        code = ErrorCode::ResourceExhausted;
        text.push_str(&format!(
            " after its memory was refused growth to {} (limit {})",
            bytes_display(u64::try_from(bytes).unwrap_or(u64::MAX)),
            limits.memory_display()
        ));
    }
    if let Some(elements) = state.limiter.refused_table {
        text.push_str(&format!(
            " after a table was refused growth to {elements} elements (limit {})",
            limits.table_elements
        ));
    }
    if let Some(trace) = error.downcast_ref::<WasmBacktrace>() {
        let (frames, more) = frame_lines(trace);
        if !frames.is_empty() {
            text.push_str(" (in ");
            text.push_str(&frames.join(" ← "));
            if more {
                text.push_str(" ← …");
            }
            text.push(')');
        }
    }
    (code, bounded(text, limits.error_message))
}

/// The first [`BACKTRACE_FRAMES`] frames of `trace`, innermost first, and
/// whether there are more. A frame of a guest built with line tables
/// (DWARF) names its source file and line, `name (file:line)`, and a call
/// the compiler inlined there is a frame of its own; without them, a frame
/// is the function's name from the name section (or `func[index]`).
fn frame_lines(trace: &WasmBacktrace) -> (Vec<String>, bool) {
    let mut lines = Vec::new();
    let mut more = false;
    for frame in trace.frames() {
        if lines.len() >= BACKTRACE_FRAMES {
            more = true;
            break;
        }
        let func = || match frame.func_name() {
            Some(name) => bounded_name(name),
            None => format!("func[{}]", frame.func_index()),
        };
        if frame.symbols().is_empty() {
            lines.push(func());
        }
        for symbol in frame.symbols() {
            let name = symbol.name().map_or_else(func, bounded_name);
            lines.push(match (symbol.file(), symbol.line()) {
                (Some(file), Some(line)) => format!("{name} ({}:{line})", bounded_path(file)),
                (Some(file), None) => format!("{name} ({})", bounded_path(file)),
                _ => name,
            });
        }
    }
    more |= lines.len() > BACKTRACE_FRAMES;
    lines.truncate(BACKTRACE_FRAMES);
    (lines, more)
}

/// A source path from the guest's DWARF, cut to its last
/// [`FRAME_NAME_BYTES`] (the file name is the end that matters).
fn bounded_path(path: &str) -> String {
    if path.len() <= FRAME_NAME_BYTES {
        return path.to_owned();
    }
    let mut start = path.len() - FRAME_NAME_BYTES;
    while !path.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &path[start..])
}

/// A function name from the guest's name section, demangled, cut to
/// [`FRAME_NAME_BYTES`]. Demangling can expand a short symbol enormously
/// (back-references), so it is written through a bounded writer that stops
/// the formatter once the name is long enough.
fn bounded_name(name: &str) -> String {
    use std::fmt::Write;

    /// Keeps the first `FRAME_NAME_BYTES` and then fails the formatter.
    struct Capped(String);
    impl Write for Capped {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            let room = FRAME_NAME_BYTES.saturating_sub(self.0.len());
            if s.len() <= room {
                self.0.push_str(s);
                return Ok(());
            }
            let mut end = room;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            self.0.push_str(&s[..end]);
            Err(std::fmt::Error)
        }
    }
    let mut out = Capped(String::new());
    let complete = match rustc_demangle::try_demangle(name) {
        Ok(demangled) => write!(out, "{demangled:#}").is_ok(),
        Err(_) => out.write_str(name).is_ok(),
    };
    if complete {
        out.0
    } else {
        format!("{}…", out.0)
    }
}

#[cfg(test)]
mod tests {
    use super::for_each_uncovered;

    /// Sorted, disjoint ranges from a byte mask.
    fn ranges(mask: &[bool]) -> Vec<(u32, u32)> {
        let mut out: Vec<(u32, u32)> = Vec::new();
        for (i, _) in mask.iter().enumerate().filter(|(_, set)| **set) {
            let i = i as u32;
            match out.last_mut() {
                Some(last) if last.1 == i => last.1 = i + 1,
                _ => out.push((i, i + 1)),
            }
        }
        out
    }

    #[test]
    fn uncovered_pieces_are_the_old_bytes_no_new_range_covers() {
        // Every pair of masks over 8 bytes, with each range split in two
        // where it can be, so that adjacent ranges occur too.
        for old_bits in 0u32..256 {
            for new_bits in 0u32..256 {
                let old: Vec<bool> = (0..8).map(|i| old_bits >> i & 1 == 1).collect();
                let new: Vec<bool> = (0..8).map(|i| new_bits >> i & 1 == 1).collect();
                let mut new_ranges = Vec::new();
                for (start, end) in ranges(&new) {
                    if end - start > 1 {
                        let mid = start + (end - start) / 2;
                        new_ranges.extend([(start, mid), (mid, end)]);
                    } else {
                        new_ranges.push((start, end));
                    }
                }
                let mut got = vec![false; 8];
                let mut pieces = Vec::new();
                for_each_uncovered(&ranges(&old), &new_ranges, |start, end| {
                    assert!(start < end, "{old_bits:08b} {new_bits:08b}: empty piece");
                    pieces.push((start, end));
                    for byte in &mut got[start as usize..end as usize] {
                        assert!(!*byte, "{old_bits:08b} {new_bits:08b}: byte twice");
                        *byte = true;
                    }
                });
                let want: Vec<bool> = old.iter().zip(&new).map(|(o, n)| *o && !*n).collect();
                assert_eq!(got, want, "old {old_bits:08b}, new {new_bits:08b}");
                assert!(pieces.windows(2).all(|w| w[0].1 <= w[1].0), "sorted");
            }
        }
    }
}
