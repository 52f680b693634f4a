//! The process-wide table of registered custom-call targets: slots, the
//! dispatcher, the metadata probe, registration and its verification.
//!
//! ```text
//! register(plugin, "t", handler)
//!   ├─ slot N ← { target "t", Native(handler) }          (SLOTS: fixed array, set once)
//!   ├─ trampoline_N = JIT(frame ↦ dispatch(N, frame))   (crate::trampoline)
//!   ├─ plugin.register_handler("t", trampoline_N)        XLA probes synchronously:
//!   │     trampoline_N(probe frame) → dispatch → answers min(0.3, runtime), records it
//!   └─ verdict: probe seen and answer in [0.1, runtime]? else Error::RegistrationDropped
//!
//! execution: XLA → trampoline_N(frame) → dispatch(N, frame)
//!   → FrameHeader::read (the frame checked readable, once) → stage EXECUTE?
//!   → LazyFrame::with_readable (the fixed part checked) → handler.execute_lazy
//!     (by default: every buffer checked, then handler.execute) → NULL or XLA_FFI_Error
//! ```
//!
//! The hot path (an EXECUTE call) takes no lock, allocates nothing and logs
//! nothing unless it reports an error: the slot is found with one atomic
//! load ([`OnceLock::get`]) in a static array.
//!
//! XLA keeps handler pointers for the life of the process and keeps the
//! *first* registration of a name (per plugin image), so slots, trampolines
//! and handlers are never freed, and registering a name again with another
//! handler is refused ([`Error::DuplicateTarget`]).

use std::collections::BTreeMap;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::ptr;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use crate::error::{Error, Result};
use crate::ffi::xla_ffi::{
    XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR, XLA_FFI_Api_Version_STRUCT_SIZE, XLA_FFI_CallFrame,
    XLA_FFI_Error, XLA_FFI_Error_Code_INTERNAL, XLA_FFI_Error_Code_INVALID_ARGUMENT,
    XLA_FFI_ExecutionStage_EXECUTE, XLA_FFI_Handler, XLA_FFI_Metadata,
};
use crate::frame::{LazyFrame, invalid_frame};
use crate::handler::Handler;
use crate::plugin::Plugin;
use crate::trampoline::Trampolines;

use crate::frame::{FrameHeader, fail, find_metadata, malformed, peek_error_message};

/// How many targets can be registered in one process (over all plugins).
pub const CAPACITY: usize = 4096;

/// The XLA FFI API version our handlers speak (the header's, 0.3). The
/// probe answers `min(OUR_API_VERSION, runtime's version)`.
pub const OUR_API_VERSION: (i32, i32) = (XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR);

/// The newest FFI API version whose call frames are laid out exactly as in
/// every older runtime we host (0.2, 0.3 and 0.4 were measured byte-identical:
/// docs/abi.md, "Version rule"). A foreign handler answering up to this version is
/// clamped to the runtime's version instead of being dropped.
pub const FRAME_COMPATIBLE_MAX: (i32, i32) = (0, 4);

/// The lowest version a runtime accepts in a probe answer.
pub const MIN_API_VERSION: (i32, i32) = (0, 1);

/// Handler traits passed at registration (none; XLA ORs them into the
/// probe's answer).
const TRAITS: u32 = 0;

static SLOTS: [OnceLock<Registration>; CAPACITY] = [const { OnceLock::new() }; CAPACITY];

/// Registration-time state (never touched on the call path).
struct State {
    trampolines: Option<Trampolines>,
    next_slot: usize,
    /// (plugin image, target) → slot of a registration XLA accepted.
    accepted: BTreeMap<(usize, String), usize>,
    /// target → (slot, trampoline) of each [`export`]ed target.
    exported: BTreeMap<String, (usize, XLA_FFI_Handler)>,
}

static STATE: Mutex<State> = Mutex::new(State {
    trampolines: None,
    next_slot: 0,
    accepted: BTreeMap::new(),
    exported: BTreeMap::new(),
});

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves consistent data behind (every
    // update is a single insert or counter bump), so poisoning is ignored.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

// ---------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------

/// What implements a registered target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TargetKind {
    /// A Rust [`Handler`] behind the dispatcher.
    Native,
    /// A foreign `XLA_FFI_Handler` function the dispatcher forwards to.
    Foreign,
}

/// A target XLA accepted, as listed by [`registered`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisteredTarget {
    /// The custom-call target name.
    pub target: String,
    /// The plugin it was registered in.
    pub plugin: PathBuf,
    /// Native or foreign.
    pub kind: TargetKind,
    /// Where the handler comes from (e.g. `native handler`, a library path
    /// and symbol, a guest file), for error hints.
    pub origin: String,
    /// The API version the probe answered.
    pub api_version: (i32, i32),
    /// Its slot in the dispatcher's table.
    pub slot: usize,
}

impl fmt::Display for RegisteredTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` ({}, FFI API {}.{}, in {})",
            self.target,
            self.origin,
            self.api_version.0,
            self.api_version.1,
            self.plugin.display()
        )
    }
}

/// Registers a Rust handler for `target` in `plugin`, through a slot of its
/// own and a JIT trampoline, and checks that XLA kept it.
///
/// Registering the same `Arc` again for the same plugin and target is a
/// no-op.
///
/// # Errors
///
/// [`Error::InvalidInput`] for an empty target name,
/// [`Error::DuplicateTarget`] if the target is already registered in this
/// plugin with another handler (XLA would silently keep the first),
/// [`Error::TooManyTargets`], [`Error::Trampoline`], the plugin's
/// registration errors, and [`Error::RegistrationDropped`] if XLA did not
/// probe the handler or did not accept its answer.
///
/// # Examples
///
/// ```no_run
/// use std::sync::Arc;
/// use plugin_glue::frame::CallFrame;
/// use plugin_glue::plugin::Plugin;
/// use plugin_glue::{Handler, HandlerError, registry};
///
/// struct Noop;
/// impl Handler for Noop {
///     fn execute(&self, _frame: &CallFrame<'_>) -> Result<(), HandlerError> {
///         Ok(())
///     }
/// }
///
/// // SAFETY: the XLA CPU plugin is a PJRT plugin.
/// let plugin = unsafe { Plugin::load("pjrt_c_api_cpu_plugin.so".as_ref()) }?;
/// registry::register(&plugin, "my_noop", Arc::new(Noop))?;
/// # Ok::<(), plugin_glue::Error>(())
/// ```
pub fn register(plugin: &Plugin, target: &str, handler: Arc<dyn Handler>) -> Result<()> {
    register_with_origin(plugin, target, handler, "native handler".into())
}

/// [`register`] with a description of where the handler comes from (shown
/// by [`registered`] and in error hints), e.g. `guest rms_norm.wasm`.
///
/// # Errors
///
/// As for [`register`].
pub fn register_with_origin(
    plugin: &Plugin,
    target: &str,
    handler: Arc<dyn Handler>,
    origin: String,
) -> Result<()> {
    register_kind(plugin, target, Kind::Native(handler), origin)
}

/// Registers a foreign `XLA_FFI_Handler` (e.g. a symbol from a shared
/// library) for `target` in `plugin`. Its slot forwards every call, the
/// metadata probe included, to `handler`; the probe's answer is recorded
/// and must be a version in [0.1, runtime version].
///
/// Registering the same function again for the same plugin and target is a
/// no-op.
///
/// # Errors
///
/// As for [`register`]; [`Error::RegistrationDropped`] says what the
/// foreign probe answered, e.g. "its metadata probe answered version 0.0
/// (expected 0.1..=0.4)".
///
/// `handler` is expected to implement the XLA FFI handler protocol (answer
/// the metadata probe, handle EXECUTE frames), to be callable concurrently
/// from any thread and to stay valid for the life of the process; it is only
/// ever called with frames XLA built, which is all its type promises.
pub fn register_foreign(
    plugin: &Plugin,
    target: &str,
    handler: XLA_FFI_Handler,
    origin: String,
) -> Result<()> {
    register_kind(plugin, target, Kind::Foreign(handler), origin)
}

/// The pseudo image id of targets handed out by [`export`] (no plugin
/// image has its `PJRT_Api` table at address 0).
const EXPORTED: usize = 0;

/// What [`registered`] lists as the "plugin" of exported targets.
pub const EXPORTED_TO: &str = "exported (e.g. to jaxlib's CPU client)";

/// Builds the slot and trampoline of a Rust handler for `target` and
/// returns the trampoline, for a client that registers handlers itself
/// (jaxlib's CPU client: `jax.ffi.register_ffi_target`), instead of
/// registering it with a PJRT plugin. The trampoline answers the metadata
/// probe and routes EXECUTE by slot, as for [`register`]; whoever
/// registers it probes it then, which [`registered`] reports.
///
/// Exporting the same `Arc` again for the same target returns the same
/// trampoline.
///
/// # Errors
///
/// [`Error::InvalidInput`] for an empty target name,
/// [`Error::DuplicateTarget`] if `target` was exported with another
/// handler, [`Error::TooManyTargets`], [`Error::Trampoline`].
pub fn export(target: &str, handler: Arc<dyn Handler>, origin: String) -> Result<XLA_FFI_Handler> {
    export_kind(target, Kind::Native(handler), origin)
}

/// [`export`] for a foreign `XLA_FFI_Handler` (a trusted native), which the
/// slot forwards every call to, as for [`register_foreign`].
///
/// # Errors
///
/// As for [`export`].
pub fn export_foreign(
    target: &str,
    handler: XLA_FFI_Handler,
    origin: String,
) -> Result<XLA_FFI_Handler> {
    export_kind(target, Kind::Foreign(handler), origin)
}

/// Every exported target and its trampoline, in export order.
pub fn exported() -> Vec<(String, XLA_FFI_Handler)> {
    let state = lock(&STATE);
    let mut out: Vec<(usize, String, XLA_FFI_Handler)> = state
        .exported
        .iter()
        .map(|(target, &(slot, entry))| (slot, target.clone(), entry))
        .collect();
    out.sort_unstable_by_key(|(slot, _, _)| *slot);
    out.into_iter().map(|(_, t, e)| (t, e)).collect()
}

fn export_kind(target: &str, kind: Kind, origin: String) -> Result<XLA_FFI_Handler> {
    if target.is_empty() {
        return Err(Error::InvalidInput(
            "cannot export a handler for an empty target name".into(),
        ));
    }
    let mut state = lock(&STATE);
    if let Some(&(existing, entry)) = state.exported.get(target) {
        let slot = SLOTS[existing].get().expect("exported slots are set");
        if slot.kind.same_as(&kind) {
            return Ok(entry);
        }
        return Err(Error::DuplicateTarget {
            target: target.to_owned(),
            first: slot.origin.clone(),
            second: origin,
        });
    }
    let (index, entry) = allocate(&mut state, target, PathBuf::from(EXPORTED_TO), kind, origin)?;
    state.accepted.insert((EXPORTED, target.to_owned()), index);
    state.exported.insert(target.to_owned(), (index, entry));
    tracing::debug!(
        target_name = target,
        slot = index,
        "exported custom-call target"
    );
    Ok(entry)
}

/// Every registration XLA accepted, in registration order.
pub fn registered() -> Vec<RegisteredTarget> {
    let state = lock(&STATE);
    let mut slots: Vec<usize> = state.accepted.values().copied().collect();
    slots.sort_unstable();
    slots
        .into_iter()
        .filter_map(|i| SLOTS[i].get().map(|slot| slot.describe(i)))
        .collect()
}

/// The registration of `target` in `plugin`, if XLA accepted one.
pub fn lookup(plugin: &Plugin, target: &str) -> Option<RegisteredTarget> {
    let state = lock(&STATE);
    let i = *state.accepted.get(&(image_id(plugin), target.to_owned()))?;
    SLOTS[i].get().map(|slot| slot.describe(i))
}

/// The dispatcher every trampoline calls: routes a call of slot `slot` to
/// its handler.
///
/// * A metadata probe (an `XLA_FFI_Metadata_Extension` on
///   `extension_start`) is answered with `min((0, 3), frame->api's
///   version)` and recorded; args are not touched. Foreign slots forward the
///   probe and record what the foreign handler answered.
/// * Stages other than EXECUTE return NULL (success).
/// * EXECUTE: the frame's fixed part is validated and the frame passed to
///   the handler's [`Handler::execute_lazy`], which by default validates
///   every buffer (as
///   [`CallFrame::with_raw`](crate::frame::CallFrame::with_raw) does) and calls
///   [`Handler::execute`]; its error becomes `XLA_FFI_Error_Create(message, code)`;
///   a panic becomes an INTERNAL error naming the target.
///
/// Nothing unwinds out of this function.
///
/// # Safety
///
/// `frame` must be a call frame built by XLA for this slot's registration
/// (valid for the duration of the call), as for any `XLA_FFI_Handler`.
pub unsafe extern "C" fn dispatch(slot: u64, frame: *mut XLA_FFI_CallFrame) -> *mut XLA_FFI_Error {
    let Some(entry) = usize::try_from(slot)
        .ok()
        .and_then(|i| SLOTS.get(i))
        .and_then(OnceLock::get)
    else {
        // SAFETY: forwarded caller contract.
        return unsafe {
            fail(
                frame,
                XLA_FFI_Error_Code_INTERNAL,
                &format!("cyxla dispatcher: slot {slot} has no handler"),
            )
        };
    };
    // SAFETY: forwarded caller contract.
    match catch_unwind(AssertUnwindSafe(|| unsafe { entry.call(frame) })) {
        Ok(error) => error,
        Err(payload) => {
            let message = format!(
                "handler for target `{}` panicked: {}",
                entry.target,
                panic_message(&*payload)
            );
            drop_payload(payload);
            tracing::error!(target_name = %entry.target, "{message}");
            // SAFETY: forwarded caller contract.
            unsafe { fail(frame, XLA_FFI_Error_Code_INTERNAL, &message) }
        }
    }
}

/// The text of a panic payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "(a non-string panic payload)"
    }
}

/// Drops a panic payload without letting a panicking `Drop` escape.
fn drop_payload(payload: Box<dyn std::any::Any + Send>) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
}

// ---------------------------------------------------------------------------
// Slots
// ---------------------------------------------------------------------------

enum Kind {
    Native(Arc<dyn Handler>),
    Foreign(XLA_FFI_Handler),
}

impl Kind {
    fn same_as(&self, other: &Kind) -> bool {
        match (self, other) {
            (Kind::Native(a), Kind::Native(b)) => ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b)),
            (Kind::Foreign(a), Kind::Foreign(b)) => *a as usize == *b as usize,
            _ => false,
        }
    }
}

/// What happened in a metadata probe of a slot.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ProbeOutcome {
    /// The handler left this version in the metadata (and returned NULL).
    Answered {
        answer: (i32, i32),
        runtime: Option<(i32, i32)>,
    },
    /// The handler returned an error from the probe.
    ReturnedError { message: String },
    /// The probe frame could not be read.
    Malformed(String),
}

#[derive(Default)]
struct ProbeLog {
    calls: u32,
    last: Option<ProbeOutcome>,
}

struct Registration {
    target: Box<str>,
    plugin: PathBuf,
    origin: String,
    kind: Kind,
    /// Locked only in probes and at registration, never on EXECUTE.
    probes: Mutex<ProbeLog>,
}

impl Registration {
    fn record(&self, outcome: ProbeOutcome) {
        let mut log = lock(&self.probes);
        log.calls += 1;
        log.last = Some(outcome);
    }

    fn describe(&self, index: usize) -> RegisteredTarget {
        let api_version = match &lock(&self.probes).last {
            Some(ProbeOutcome::Answered { answer, .. }) => *answer,
            _ => (0, 0),
        };
        RegisteredTarget {
            target: self.target.to_string(),
            plugin: self.plugin.clone(),
            kind: match self.kind {
                Kind::Native(_) => TargetKind::Native,
                Kind::Foreign(_) => TargetKind::Foreign,
            },
            origin: self.origin.clone(),
            api_version,
            slot: index,
        }
    }

    /// Whether XLA kept the registration, judging by the probe(s) seen.
    fn verdict(&self) -> std::result::Result<(i32, i32), String> {
        let log = lock(&self.probes);
        match &log.last {
            _ if log.calls == 0 => Err("XLA never called its metadata probe during registration, \
                 so it did not keep the handler"
                .into()),
            Some(ProbeOutcome::Answered { answer, runtime }) => check_answer(*answer, *runtime),
            Some(ProbeOutcome::ReturnedError { message }) => {
                Err(format!("its metadata probe returned an error: {message}"))
            }
            Some(ProbeOutcome::Malformed(reason)) => {
                Err(format!("its metadata probe frame was malformed: {reason}"))
            }
            None => Err("no probe outcome was recorded".into()),
        }
    }

    /// One call through this slot (everything but panics).
    ///
    /// # Safety
    ///
    /// As for [`dispatch`].
    unsafe fn call(&self, frame: *mut XLA_FFI_CallFrame) -> *mut XLA_FFI_Error {
        // SAFETY: caller contract: `frame` is XLA's frame (or NULL).
        let header = unsafe { FrameHeader::read(frame) };
        match &self.kind {
            Kind::Foreign(handler) => {
                let header = header.ok();
                // SAFETY: as above; the extension chain belongs to the frame.
                let metadata =
                    header.and_then(|h| unsafe { find_metadata(h.extension_start) }.ok().flatten());
                // SAFETY: an XLA_FFI_Handler's only precondition is a frame
                // built by XLA for it, which is our own caller's contract.
                let error = unsafe { handler(frame) };
                if let (Some(h), Some(metadata)) = (header, metadata) {
                    // SAFETY: `metadata` was validated by find_metadata and
                    // the frame's API table is the runtime's.
                    unsafe { self.record_foreign_probe(&h, metadata, error) };
                }
                error
            }
            Kind::Native(handler) => {
                let header = match header {
                    Ok(header) => header,
                    // SAFETY: caller contract.
                    Err(defect) => return unsafe { malformed(frame, defect, &self.target) },
                };
                // SAFETY: the chain belongs to XLA's frame.
                match unsafe { find_metadata(header.extension_start) } {
                    Ok(Some(metadata)) => {
                        // SAFETY: validated metadata of XLA's probe frame.
                        unsafe { self.answer_probe(&header, metadata) };
                        return ptr::null_mut();
                    }
                    Ok(None) => {}
                    Err(reason) => {
                        self.record(ProbeOutcome::Malformed(reason.clone()));
                        return header.error(
                            XLA_FFI_Error_Code_INVALID_ARGUMENT,
                            &format!(
                                "target `{}`: malformed metadata probe: {reason}",
                                self.target
                            ),
                        );
                    }
                }
                if header.stage != XLA_FFI_ExecutionStage_EXECUTE {
                    return ptr::null_mut();
                }
                // SAFETY: an EXECUTE frame built by XLA, valid for this call,
                // found readable by `FrameHeader::read`.
                match unsafe {
                    LazyFrame::with_readable(header.frame, &self.target, |frame| {
                        handler.execute_lazy(frame)
                    })
                } {
                    Ok(Ok(())) => ptr::null_mut(),
                    Ok(Err(e)) => header.error(e.code.to_c(), &e.message),
                    Err(e) => {
                        let e = invalid_frame(&self.target, &e);
                        header.error(e.code.to_c(), &e.message)
                    }
                }
            }
        }
    }

    /// Answers a probe for a native slot and records the answer.
    ///
    /// # Safety
    ///
    /// `metadata` must be valid and writable (validated by `find_metadata`).
    unsafe fn answer_probe(&self, header: &FrameHeader, metadata: *mut XLA_FFI_Metadata) {
        let runtime = header.api_table().and_then(|api| api.version());
        let answer = match runtime {
            Some(runtime) => OUR_API_VERSION.min(runtime),
            // Unknown runtime: the lowest version every runtime accepts.
            None => MIN_API_VERSION,
        };
        // SAFETY: caller contract; only fields inside XLA_FFI_Metadata's
        // declared struct size (36) are written.
        unsafe {
            let version = ptr::addr_of_mut!((*metadata).api_version);
            ptr::addr_of_mut!((*version).struct_size).write(XLA_FFI_Api_Version_STRUCT_SIZE);
            ptr::addr_of_mut!((*version).extension_start).write(ptr::null_mut());
            ptr::addr_of_mut!((*version).major_version).write(answer.0);
            ptr::addr_of_mut!((*version).minor_version).write(answer.1);
            ptr::addr_of_mut!((*metadata).traits).write(TRAITS);
        }
        self.record(ProbeOutcome::Answered { answer, runtime });
    }

    /// Records what a foreign handler did with a probe.
    ///
    /// # Safety
    ///
    /// `metadata` must be valid (validated by `find_metadata`); `error` is
    /// what the foreign handler returned (NULL or a live error of this
    /// runtime, which is read but not destroyed).
    unsafe fn record_foreign_probe(
        &self,
        header: &FrameHeader,
        metadata: *mut XLA_FFI_Metadata,
        error: *mut XLA_FFI_Error,
    ) {
        let api = header.api_table();
        if !error.is_null() {
            let message = match api {
                // SAFETY: a live error of this runtime, not destroyed here.
                Some(api) => unsafe { peek_error_message(&api, error) },
                None => "(no XLA_FFI_Api to read it)".into(),
            };
            self.record(ProbeOutcome::ReturnedError { message });
            return;
        }
        // SAFETY: caller contract (validated metadata).
        let mut answer = unsafe {
            let version = ptr::addr_of!((*metadata).api_version);
            (
                ptr::addr_of!((*version).major_version).read(),
                ptr::addr_of!((*version).minor_version).read(),
            )
        };
        let runtime = api.and_then(|a| a.version());
        if let Some(runtime) = runtime {
            // A handler built against newer headers than the runtime (jaxlib
            // 0.10.2's ffi.h says 0.3; the 0.81 plugin runs 0.2) would be
            // dropped by XLA although it reads frames laid out exactly as
            // the runtime writes them: clamp its answer to the runtime's
            // version when both lie in the layout-compatible range.
            if answer > runtime && answer <= FRAME_COMPATIBLE_MAX && runtime >= MIN_API_VERSION {
                // SAFETY: caller contract (validated, writable metadata);
                // only the version fields are written.
                unsafe {
                    let version = ptr::addr_of_mut!((*metadata).api_version);
                    ptr::addr_of_mut!((*version).major_version).write(runtime.0);
                    ptr::addr_of_mut!((*version).minor_version).write(runtime.1);
                }
                answer = runtime;
            }
        }
        self.record(ProbeOutcome::Answered { answer, runtime });
    }
}

/// Whether a probe answer is one XLA accepts: [0.1, runtime version]
/// (docs/abi.md, "Version rule"). Returns the answer.
fn check_answer(
    answer: (i32, i32),
    runtime: Option<(i32, i32)>,
) -> std::result::Result<(i32, i32), String> {
    let max = runtime.unwrap_or(OUR_API_VERSION);
    if answer < MIN_API_VERSION || answer > max {
        return Err(format!(
            "its metadata probe answered version {}.{} (expected {}.{}..={}.{})",
            answer.0, answer.1, MIN_API_VERSION.0, MIN_API_VERSION.1, max.0, max.1
        ));
    }
    Ok(answer)
}

// ---------------------------------------------------------------------------
// Registration
// ---------------------------------------------------------------------------

/// Identity of a loaded plugin image: the address of its `PJRT_Api` table
/// (loading the same file twice yields the same image and table).
fn image_id(plugin: &Plugin) -> usize {
    ptr::from_ref(plugin.api()).addr()
}

fn register_kind(plugin: &Plugin, target: &str, kind: Kind, origin: String) -> Result<()> {
    if target.is_empty() {
        return Err(Error::InvalidInput(
            "cannot register a handler for an empty target name".into(),
        ));
    }
    let mut state = lock(&STATE);
    let key = (image_id(plugin), target.to_owned());
    if let Some(&existing) = state.accepted.get(&key) {
        let slot = SLOTS[existing].get().expect("accepted slots are set");
        if slot.kind.same_as(&kind) {
            return Ok(());
        }
        return Err(Error::DuplicateTarget {
            target: target.to_owned(),
            first: slot.origin.clone(),
            second: origin,
        });
    }
    let (index, entry) = allocate(&mut state, target, plugin.path().to_owned(), kind, origin)?;

    // SAFETY: `entry` is the trampoline of slot `index`, which dispatches to
    // a handler that implements the protocol (probe included); trampolines,
    // slots and handlers live for the rest of the process, and `dispatch`
    // never unwinds.
    unsafe { plugin.register_handler(target, entry, TRAITS) }?;

    let slot = SLOTS[index].get().expect("allocated slots are set");
    match slot.verdict() {
        Ok(version) => {
            state.accepted.insert(key, index);
            tracing::debug!(
                target_name = target,
                slot = index,
                plugin = %plugin.path().display(),
                version = ?version,
                "registered custom-call target"
            );
            Ok(())
        }
        Err(reason) => Err(Error::RegistrationDropped {
            target: target.to_owned(),
            reason,
        }),
    }
}

/// Takes the next slot, fills it and builds its trampoline. The slot is
/// consumed even if XLA later drops the registration: XLA may hold the
/// trampoline, so it must keep working.
fn allocate(
    state: &mut State,
    target: &str,
    plugin: PathBuf,
    kind: Kind,
    origin: String,
) -> Result<(usize, XLA_FFI_Handler)> {
    let index = state.next_slot;
    if index >= CAPACITY {
        return Err(Error::TooManyTargets { limit: CAPACITY });
    }
    let trampolines = match &mut state.trampolines {
        Some(t) => t,
        none => none.insert(Trampolines::new(dispatch)?),
    };
    let entry = trampolines.build(index as u64, target)?;
    state.next_slot += 1;
    let fresh = SLOTS[index].set(Registration {
        target: target.into(),
        plugin,
        origin,
        kind,
        probes: Mutex::new(ProbeLog::default()),
    });
    assert!(fresh.is_ok(), "slot {index} was handed out twice");
    Ok((index, entry))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ErrorCode, HandlerError};
    use crate::ffi::xla_ffi::*;
    use crate::frame::CallFrame;
    use crate::frame::testing::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Reads an f32 arg, multiplies by attribute `factor`, writes ret 0.
    struct Scale;
    impl Handler for Scale {
        fn execute(&self, frame: &CallFrame<'_>) -> std::result::Result<(), HandlerError> {
            let factor = frame.attrs().scalar("factor")?.to_f64() as f32;
            // SAFETY: args and rets do not alias in these tests.
            let x = unsafe { frame.arg(0)?.as_slice::<f32>() }?;
            // SAFETY: exclusive access to the result.
            let y = unsafe { frame.ret(0)?.as_uninit_slice::<f32>() }?;
            for (y, x) in y.iter_mut().zip(x) {
                y.write(x * factor);
            }
            Ok(())
        }
    }

    struct Fails;
    impl Handler for Fails {
        fn execute(&self, _: &CallFrame<'_>) -> std::result::Result<(), HandlerError> {
            Err(HandlerError::new(
                ErrorCode::OutOfRange,
                "factor 9 is out of range",
            ))
        }
    }

    struct Panics(AtomicUsize);
    impl Handler for Panics {
        fn execute(&self, _: &CallFrame<'_>) -> std::result::Result<(), HandlerError> {
            if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
                panic!("boom {}", 1);
            }
            Ok(())
        }
    }

    /// The probe verdict recorded for slot `index`.
    fn verdict_of(index: usize) -> std::result::Result<(i32, i32), String> {
        SLOTS[index].get().unwrap().verdict()
    }

    fn slot_for(target: &str, kind: Kind) -> (usize, XLA_FFI_Handler) {
        let mut state = lock(&STATE);
        allocate(
            &mut state,
            target,
            PathBuf::from("test.so"),
            kind,
            "test".into(),
        )
        .unwrap()
    }

    fn scale_frame(factor: f32) -> OwnedFrame {
        let x: Vec<u8> = [1.0f32, 2.0, 3.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        OwnedFrame::new(
            vec![OwnedBuffer::new(XLA_FFI_DataType_F32, &[3], &x)],
            vec![OwnedBuffer::new(XLA_FFI_DataType_F32, &[3], &[0xff; 12])],
            OwnedAttrs::new(vec![(
                "factor",
                OwnedAttr::scalar(XLA_FFI_DataType_F32, &factor.to_le_bytes()),
            )]),
        )
    }

    #[test]
    fn probe_answers_min_of_ours_and_the_runtime() {
        let (index, entry) = slot_for("probe_versions", Kind::Native(Arc::new(Scale)));
        for (runtime, expected) in [
            ((0, 2), (0, 2)),
            ((0, 3), (0, 3)),
            ((0, 4), (0, 3)),
            ((1, 0), (0, 3)),
        ] {
            let mut probe = ProbeFrame::new(runtime.0, runtime.1);
            // SAFETY: a complete probe frame that outlives the call.
            let r = unsafe { entry(probe.ptr()) };
            assert!(r.is_null());
            assert_eq!(probe.answer(), expected);
            assert_eq!(probe.metadata.api_version.struct_size, 24);
            assert_eq!(probe.metadata.traits, 0);
            let slot = SLOTS[index].get().unwrap();
            assert_eq!(slot.verdict(), Ok(expected), "runtime {runtime:?}");
        }
        // A runtime older than 0.1 cannot accept anything.
        let mut probe = ProbeFrame::new(0, 0);
        // SAFETY: as above.
        unsafe { entry(probe.ptr()) };
        assert_eq!(
            verdict_of(index),
            Err("its metadata probe answered version 0.0 (expected 0.1..=0.0)".into())
        );
    }

    #[test]
    fn probe_is_found_behind_other_extensions_and_args_are_not_touched() {
        let (index, entry) = slot_for("probe_chain", Kind::Native(Arc::new(Scale)));
        let mut probe = ProbeFrame::new(0, 4);
        let mut other = Box::new(XLA_FFI_Extension_Base {
            struct_size: 24,
            type_: 77,
            next: probe.raw.extension_start,
        });
        probe.raw.extension_start = &mut *other;
        // Garbage args: touching them would crash or fail validation.
        probe.raw.args.size = 5;
        // SAFETY: complete probe frame; args are never read in a probe.
        assert!(unsafe { entry(probe.ptr()) }.is_null());
        assert_eq!(probe.answer(), (0, 3));
        assert_eq!(verdict_of(index), Ok((0, 3)));

        // A malformed metadata extension is an error and is recorded.
        probe.ext.extension_base.struct_size = 16;
        // SAFETY: as above.
        let e = unsafe { take_error(entry(probe.ptr())) };
        assert_eq!(e.code, XLA_FFI_Error_Code_INVALID_ARGUMENT);
        assert!(
            e.message.contains("metadata extension has struct_size 16"),
            "{}",
            e.message
        );
        assert!(verdict_of(index).unwrap_err().contains("malformed"));
    }

    #[test]
    fn no_probe_means_dropped() {
        let (index, _) = slot_for("never_probed", Kind::Native(Arc::new(Scale)));
        assert!(verdict_of(index).unwrap_err().contains("never called"));
    }

    #[test]
    fn execute_reaches_the_handler() {
        let (_, entry) = slot_for("scale_exec", Kind::Native(Arc::new(Scale)));
        let mut frame = scale_frame(2.5);
        // SAFETY: a complete owned frame.
        let r = unsafe { entry(frame.ptr()) };
        assert!(r.is_null());
        let out: Vec<u8> = [2.5f32, 5.0, 7.5]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(frame.rets[0].bytes(12), &out[..]);

        // Other stages do nothing.
        let mut frame = scale_frame(2.5);
        frame.raw.stage = XLA_FFI_ExecutionStage_INSTANTIATE;
        // SAFETY: as above.
        assert!(unsafe { entry(frame.ptr()) }.is_null());
        assert_eq!(frame.rets[0].bytes(12), &[0xff; 12]);
    }

    #[test]
    fn handler_errors_and_invalid_frames_become_xla_errors() {
        let (_, entry) = slot_for("fails", Kind::Native(Arc::new(Fails)));
        let mut frame = scale_frame(1.0);
        // SAFETY: a complete owned frame; the error comes from the fake api.
        let e = unsafe { take_error(entry(frame.ptr())) };
        assert_eq!(
            (e.code, e.message.as_str()),
            (11, "factor 9 is out of range")
        );

        let (_, entry) = slot_for("scale_bad_frame", Kind::Native(Arc::new(Scale)));
        let mut frame = scale_frame(1.0);
        frame.args[0].raw.dtype = 99;
        // SAFETY: as above.
        let e = unsafe { take_error(entry(frame.ptr())) };
        assert_eq!(e.code, 3);
        assert_eq!(
            e.message,
            "target `scale_bad_frame`: invalid call frame: argument 0: unknown dtype 99"
        );
    }

    #[test]
    fn panics_become_internal_errors_and_the_next_call_works() {
        let (_, entry) = slot_for(
            "panics",
            Kind::Native(Arc::new(Panics(AtomicUsize::new(0)))),
        );
        let mut frame = scale_frame(1.0);
        // SAFETY: a complete owned frame.
        let e = unsafe { take_error(entry(frame.ptr())) };
        assert_eq!(e.code, XLA_FFI_Error_Code_INTERNAL);
        assert_eq!(e.message, "handler for target `panics` panicked: boom 1");
        // SAFETY: as above.
        assert!(unsafe { entry(frame.ptr()) }.is_null());
    }

    #[test]
    fn exported_trampolines_route_by_slot() {
        let handler: Arc<dyn Handler> = Arc::new(Scale);
        let entry = export("exported_scale", handler.clone(), "test".into()).unwrap();
        let again = export("exported_scale", handler, "test".into()).unwrap();
        assert_eq!(entry as usize, again as usize);
        assert!(matches!(
            export("exported_scale", Arc::new(Scale), "other".into()),
            Err(Error::DuplicateTarget { .. })
        ));
        assert!(
            exported()
                .iter()
                .any(|(t, e)| t == "exported_scale" && *e as usize == entry as usize)
        );
        let mut frame = scale_frame(2.0);
        // SAFETY: a complete owned frame.
        assert!(unsafe { entry(frame.ptr()) }.is_null());
        let out: Vec<u8> = [2.0f32, 4.0, 6.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(frame.rets[0].bytes(12), &out[..]);
    }

    #[test]
    fn unknown_slots_report_an_error() {
        let mut frame = scale_frame(1.0);
        // SAFETY: a complete owned frame.
        let e = unsafe { take_error(dispatch(u64::MAX, frame.ptr())) };
        assert_eq!(
            e.message,
            format!("cyxla dispatcher: slot {} has no handler", u64::MAX)
        );
    }

    static FOREIGN_CALLS: AtomicUsize = AtomicUsize::new(0);

    /// The API version a probe frame asks the handler to fill in, or `None`
    /// for an execution frame.
    ///
    /// # Safety
    ///
    /// `frame` must be a live test frame whose extension, if it has one, is
    /// a metadata extension with a live `metadata`.
    unsafe fn probe_version(frame: *mut XLA_FFI_CallFrame) -> Option<*mut XLA_FFI_Api_Version> {
        // SAFETY: caller contract.
        unsafe {
            let ext = (*frame).extension_start;
            if ext.is_null() {
                return None;
            }
            let metadata = (*ext.cast::<XLA_FFI_Metadata_Extension>()).metadata;
            Some(ptr::addr_of_mut!((*metadata).api_version))
        }
    }

    /// A foreign handler that answers the probe with 0.0 (wrong).
    unsafe extern "C" fn foreign_wrong(frame: *mut XLA_FFI_CallFrame) -> *mut XLA_FFI_Error {
        FOREIGN_CALLS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: test frames.
        if let Some(version) = unsafe { probe_version(frame) } {
            // SAFETY: a live version field of the probe's metadata.
            unsafe {
                (*version).major_version = 0;
                (*version).minor_version = 0;
            }
        }
        ptr::null_mut()
    }

    /// A foreign handler that answers 0.2 and fails every execution.
    unsafe extern "C" fn foreign_ok(frame: *mut XLA_FFI_CallFrame) -> *mut XLA_FFI_Error {
        // SAFETY: test frames.
        if let Some(version) = unsafe { probe_version(frame) } {
            // SAFETY: a live version field of the probe's metadata.
            unsafe { (*version).minor_version = 2 };
            return ptr::null_mut();
        }
        fake_error("foreign says no", 9)
    }

    /// A foreign handler that returns an error from the probe.
    unsafe extern "C" fn foreign_error(_frame: *mut XLA_FFI_CallFrame) -> *mut XLA_FFI_Error {
        fake_error("probe refused", 13)
    }

    #[test]
    fn foreign_slots_forward_everything_and_record_the_probe() {
        let (index, entry) = slot_for("foreign_wrong", Kind::Foreign(foreign_wrong));
        let mut probe = ProbeFrame::new(0, 4);
        let before = FOREIGN_CALLS.load(Ordering::SeqCst);
        // SAFETY: a complete probe frame.
        assert!(unsafe { entry(probe.ptr()) }.is_null());
        assert_eq!(FOREIGN_CALLS.load(Ordering::SeqCst), before + 1);
        assert_eq!(
            verdict_of(index),
            Err("its metadata probe answered version 0.0 (expected 0.1..=0.4)".into())
        );

        let (index, entry) = slot_for("foreign_ok", Kind::Foreign(foreign_ok));
        let mut probe = ProbeFrame::new(0, 4);
        // SAFETY: as above.
        assert!(unsafe { entry(probe.ptr()) }.is_null());
        assert_eq!(verdict_of(index), Ok((0, 2)));
        let mut frame = scale_frame(1.0);
        // SAFETY: a complete owned frame; the foreign fn returns a fake error.
        let e = unsafe { take_error(entry(frame.ptr())) };
        assert_eq!((e.code, e.message.as_str()), (9, "foreign says no"));

        let (index, entry) = slot_for("foreign_error", Kind::Foreign(foreign_error));
        let mut probe = ProbeFrame::new(0, 3);
        // SAFETY: as above; the error is handed back to "XLA" (us).
        let e = unsafe { take_error(entry(probe.ptr())) };
        assert_eq!(e.message, "probe refused");
        assert_eq!(
            verdict_of(index),
            Err("its metadata probe returned an error: probe refused".into())
        );
    }

    #[test]
    fn answers_are_checked_against_the_runtime_range() {
        assert_eq!(check_answer((0, 1), Some((0, 2))), Ok((0, 1)));
        assert_eq!(check_answer((0, 4), Some((0, 4))), Ok((0, 4)));
        assert!(check_answer((0, 4), Some((0, 3))).is_err());
        assert!(check_answer((1, 0), Some((0, 4))).is_err());
        assert!(check_answer((0, 0), None).is_err());
    }

    #[test]
    fn same_handler_kind_comparison() {
        let a: Arc<dyn Handler> = Arc::new(Scale);
        let b: Arc<dyn Handler> = Arc::new(Scale);
        assert!(Kind::Native(a.clone()).same_as(&Kind::Native(a.clone())));
        assert!(!Kind::Native(a).same_as(&Kind::Native(b)));
        assert!(Kind::Foreign(foreign_ok).same_as(&Kind::Foreign(foreign_ok)));
        assert!(!Kind::Foreign(foreign_ok).same_as(&Kind::Foreign(foreign_wrong)));
    }
}
