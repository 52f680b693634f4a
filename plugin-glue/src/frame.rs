//! Checked views of an `XLA_FFI_CallFrame`.
//!
//! [`CallFrame::from_raw`] validates what XLA handed over (struct sizes, NULL
//! pointers, argument and result types, every buffer's dtype, rank, element
//! count and byte size, the attribute table) and then gives out borrowed
//! views whose lifetime `'a` is the duration of the call:
//!
//! ```text
//! CallFrame<'a> ── arg(i) / ret(i) ──► BufferView<'a> ── as_slice::<f32>() ──► &'a [f32]
//!               └─ attrs() ──────────► Attrs<'a> ── get("factor") ──► Attr<'a>
//!                                                   Scalar | ArrayView<'a> | String(&'a [u8]) | Dictionary(Attrs<'a>)
//! ```
//!
//! Each buffer is validated once, in `from_raw`, and its view kept in the
//! frame. Nothing here allocates unless an error is reported or a call has
//! more than eight operands and results, so the views are cheap enough for
//! the per-call hot path.
//!
//! Layouts and values follow docs/abi.md, "XLA FFI C API", "Attributes" and
//! "Handler protocol" (x86_64).

mod attrs;
mod buffer;
#[cfg(test)]
pub(crate) mod testing;

use std::ffi::{CStr, c_void};
use std::fmt;
use std::mem::{align_of, offset_of, size_of};
use std::ptr;

use smallvec::SmallVec;

pub use attrs::{ArrayView, Attr, Attrs, Scalar};
use buffer::Role;
pub use buffer::{BufferShape, BufferView, Element};

use crate::error::HandlerError;
use crate::ffi::xla_ffi::{
    XLA_FFI_Api, XLA_FFI_ArgType_BUFFER, XLA_FFI_Args_STRUCT_SIZE, XLA_FFI_CallFrame,
    XLA_FFI_CallFrame_STRUCT_SIZE, XLA_FFI_DeviceOrdinal_Get_Args,
    XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE, XLA_FFI_Error, XLA_FFI_Error_Code,
    XLA_FFI_Error_Code_INVALID_ARGUMENT, XLA_FFI_Error_Create_Args,
    XLA_FFI_Error_Create_Args_STRUCT_SIZE, XLA_FFI_Error_Destroy_Args,
    XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, XLA_FFI_Error_GetMessage_Args,
    XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE, XLA_FFI_ExecutionContext, XLA_FFI_ExecutionStage,
    XLA_FFI_Extension_Base, XLA_FFI_Extension_Metadata, XLA_FFI_Metadata,
    XLA_FFI_Metadata_Extension, XLA_FFI_Metadata_Extension_STRUCT_SIZE,
    XLA_FFI_Metadata_STRUCT_SIZE, XLA_FFI_RetType_BUFFER, XLA_FFI_Rets_STRUCT_SIZE,
    XLA_FFI_RunId_Get_Args, XLA_FFI_RunId_Get_Args_STRUCT_SIZE,
};

// ---------------------------------------------------------------------------
// Raw helpers
// ---------------------------------------------------------------------------

/// Why a C (pointer, length) pair cannot be a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SliceError {
    Null,
    Misaligned,
    TooLong,
}

impl fmt::Display for SliceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SliceError::Null => "is NULL",
            SliceError::Misaligned => "is misaligned",
            SliceError::TooLong => "spans more than isize::MAX bytes",
        })
    }
}

/// A slice from a C (pointer, length) pair that accepts `(NULL, 0)` (and
/// any pointer with length 0) as the empty slice, like wasmtime's
/// `slice_from_raw_parts` in `crates/c-api/src/lib.rs`.
///
/// # Safety
///
/// If `len > 0`, a non-NULL, aligned `ptr` must point at `len` initialised
/// `T`s that stay valid and unmodified for `'a`.
#[inline(always)]
unsafe fn slice_from_raw_parts<'a, T>(ptr: *const T, len: usize) -> Result<&'a [T], SliceError> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(SliceError::Null);
    }
    if !ptr.cast::<u8>().addr().is_multiple_of(align_of::<T>()) {
        return Err(SliceError::Misaligned);
    }
    if len
        .checked_mul(size_of::<T>())
        .is_none_or(|bytes| bytes > isize::MAX as usize)
    {
        return Err(SliceError::TooLong);
    }
    // SAFETY: non-NULL, aligned, total size ≤ isize::MAX (checked above);
    // validity of the `len` elements for `'a` is the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// `i64` count from a C struct → `usize`, or an error naming it.
#[inline(always)]
fn count(what: impl FnOnce() -> String, value: i64) -> Result<usize, HandlerError> {
    usize::try_from(value)
        .map_err(|_| HandlerError::invalid_argument(format!("{} is {value}", what())))
}

/// Reads a struct's leading `struct_size` field (every struct it is used on
/// starts with `size_t struct_size`).
///
/// # Safety
///
/// `ptr` must be non-NULL, aligned and point at readable memory of at least
/// `size_of::<usize>()` bytes.
unsafe fn leading_struct_size<T>(ptr: *const T) -> usize {
    // SAFETY: the caller guarantees a readable, aligned leading usize.
    unsafe { ptr.cast::<usize>().read() }
}

/// Checks `got >= want` for a `struct_size`. Inlined (each call site's
/// check is a compare and a branch): the error is built out of line.
#[inline(always)]
fn check_struct_size(
    what: impl FnOnce() -> String,
    got: usize,
    want: usize,
) -> Result<(), HandlerError> {
    if got < want {
        return Err(struct_size_error(&what(), got, want));
    }
    Ok(())
}

/// [`check_struct_size`]'s error: `what` has `got`, not `want`.
#[cold]
#[inline(never)]
fn struct_size_error(what: &str, got: usize, want: usize) -> HandlerError {
    HandlerError::invalid_argument(format!(
        "{what} has struct_size {got}, expected at least {want}"
    ))
}

// ---------------------------------------------------------------------------
// The runtime's API table (XLA_FFI_Api), checked per slot
// ---------------------------------------------------------------------------

/// Reads a function slot of an `XLA_FFI_Api`, or `None` if the table is too
/// short to hold it (its `struct_size` does not cover the slot) or the slot
/// is NULL.
macro_rules! api_slot {
    ($api:expr, $field:ident) => {{
        let api: &ApiTable = $api;
        if XLA_FFI_Api::covers(api.struct_size, offset_of!(XLA_FFI_Api, $field)) {
            // SAFETY: `ApiTable::new` checked that `api.ptr` is non-NULL and
            // aligned; the slot lies within the runtime's `struct_size`
            // (checked just above), so it is readable.
            unsafe { ptr::addr_of!((*api.ptr).$field).read() }
        } else {
            None
        }
    }};
}

/// A runtime's `XLA_FFI_Api` table (`frame->api`), accessed slot by slot:
/// a slot is only read when the table's `struct_size` covers it.
#[derive(Clone, Copy)]
pub(crate) struct ApiTable {
    ptr: *const XLA_FFI_Api,
    struct_size: usize,
}

impl ApiTable {
    /// Wraps `frame->api`; `None` if it is NULL or misaligned.
    ///
    /// # Safety
    ///
    /// A non-NULL `api` must point at a live `XLA_FFI_Api` whose first
    /// `struct_size` bytes are readable for as long as the result is used
    /// (XLA keeps its table alive for the life of the process).
    pub(crate) unsafe fn new(api: *const XLA_FFI_Api) -> Option<ApiTable> {
        if api.is_null() || !api.addr().is_multiple_of(align_of::<XLA_FFI_Api>()) {
            return None;
        }
        // SAFETY: non-NULL and aligned; the table starts with `size_t struct_size`.
        let struct_size = unsafe { leading_struct_size(api) };
        Some(ApiTable {
            ptr: api,
            struct_size,
        })
    }

    /// The runtime's FFI API version `(major, minor)`, if the table is long
    /// enough to hold it.
    pub(crate) fn version(&self) -> Option<(i32, i32)> {
        let end = offset_of!(XLA_FFI_Api, api_version)
            + size_of::<crate::ffi::xla_ffi::XLA_FFI_Api_Version>();
        if self.struct_size < end {
            return None;
        }
        // SAFETY: non-NULL, aligned (checked in `new`) and within the
        // runtime's `struct_size` (checked above).
        unsafe {
            let version = ptr::addr_of!((*self.ptr).api_version);
            Some((
                ptr::addr_of!((*version).major_version).read(),
                ptr::addr_of!((*version).minor_version).read(),
            ))
        }
    }

    /// `XLA_FFI_Error_Create(message, code)`; `None` if the runtime lacks
    /// the function. Interior NUL bytes in `message` are written as `\0`.
    pub(crate) fn create_error(
        &self,
        message: &str,
        code: XLA_FFI_Error_Code,
    ) -> Option<*mut XLA_FFI_Error> {
        let create = api_slot!(self, XLA_FFI_Error_Create)?;
        let message = match std::ffi::CString::new(message) {
            Ok(message) => message,
            Err(_) => std::ffi::CString::new(message.replace('\0', "\\0"))
                .expect("NUL bytes were replaced"),
        };
        let mut args = XLA_FFI_Error_Create_Args {
            struct_size: XLA_FFI_Error_Create_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            message: message.as_ptr(),
            errc: code,
        };
        // SAFETY: `create` is the runtime's XLA_FFI_Error_Create; `args` is a
        // valid, fully initialised args struct and `message` is a
        // NUL-terminated string that outlives the call (the runtime copies it).
        Some(unsafe { create(&mut args) })
    }

    /// Reads an error's message (`XLA_FFI_Error_GetMessage`) without
    /// destroying it: `None` if the runtime lacks the function, `Some(None)`
    /// if it gave no message.
    ///
    /// # Safety
    ///
    /// `error` must be a live error returned by this runtime.
    pub(crate) unsafe fn error_message(&self, error: *mut XLA_FFI_Error) -> Option<Option<String>> {
        let get_message = api_slot!(self, XLA_FFI_Error_GetMessage)?;
        let mut args = XLA_FFI_Error_GetMessage_Args {
            struct_size: XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            error,
            message: ptr::null(),
        };
        // SAFETY: runtime function with a valid args struct and a live error
        // (caller's contract).
        unsafe { get_message(&mut args) };
        if args.message.is_null() {
            return Some(None);
        }
        // SAFETY: the runtime returns a NUL-terminated string that lives
        // until the error is destroyed, after this copy.
        let message = unsafe { CStr::from_ptr(args.message) };
        Some(Some(message.to_string_lossy().into_owned()))
    }

    /// Reads an error's message (`XLA_FFI_Error_GetMessage`) and destroys it
    /// (`XLA_FFI_Error_Destroy`).
    ///
    /// # Safety
    ///
    /// `error` must be a live error returned by this runtime and not yet
    /// destroyed or handed back to XLA.
    pub(crate) unsafe fn take_error_message(&self, error: *mut XLA_FFI_Error) -> String {
        // SAFETY: a live error of this runtime (caller's contract),
        // destroyed only below.
        let message = unsafe { self.error_message(error) }
            .flatten()
            .unwrap_or_else(|| "(the runtime gave no message)".into());
        if let Some(destroy) = api_slot!(self, XLA_FFI_Error_Destroy) {
            let mut args = XLA_FFI_Error_Destroy_Args {
                struct_size: XLA_FFI_Error_Destroy_Args_STRUCT_SIZE,
                extension_start: ptr::null_mut(),
                error,
            };
            // SAFETY: runtime function with a valid args struct; the error is
            // live and owned by us (caller's contract) and not used after.
            unsafe { destroy(&mut args) };
        }
        message
    }

    /// Turns an error returned by the runtime function `function` into a
    /// [`HandlerError`], destroying it.
    ///
    /// # Safety
    ///
    /// As for [`ApiTable::take_error_message`].
    unsafe fn runtime_error(&self, function: &str, error: *mut XLA_FFI_Error) -> HandlerError {
        // SAFETY: forwarded caller contract.
        let message = unsafe { self.take_error_message(error) };
        HandlerError::internal(format!("{function} failed: {message}"))
    }
}

impl fmt::Debug for ApiTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiTable")
            .field("ptr", &self.ptr)
            .field("struct_size", &self.struct_size)
            .finish()
    }
}

// ---------------------------------------------------------------------------
// The frame header, read before validation (by the dispatcher)
// ---------------------------------------------------------------------------

/// Longest extension chain walked when looking for the metadata extension.
const MAX_EXTENSIONS: usize = 16;

/// A call frame checked, once, to be readable up to XLA's
/// `XLA_FFI_CallFrame_STRUCT_SIZE` (168): non-NULL, aligned, and with a
/// `struct_size` of at least that. [`ReadableFrame::check`] is the only
/// place that makes one, so what holds one (the dispatcher's
/// [`FrameHeader`], [`CallFrame`]'s validation) reads the frame's fixed
/// fields without checking them again.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadableFrame(*const XLA_FFI_CallFrame);

/// Why a pointer to one of XLA's structs is not readable
/// ([`check_struct_ptr`]): a frame's, which is then not a
/// [`ReadableFrame`], or a buffer's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FrameDefect {
    /// The pointer is NULL.
    Null,
    /// The pointer is not aligned for the struct.
    Misaligned,
    /// The struct's `struct_size` (this value) is less than the size
    /// required (168 for a frame); the pointer is non-NULL and aligned.
    Short(usize),
}

/// Checks that `ptr` is non-NULL and aligned for `T`, and that the
/// `struct_size` it starts with is at least `min`.
///
/// # Errors
///
/// What is wrong with it.
///
/// # Safety
///
/// A non-NULL, aligned `ptr` must point at readable memory that starts
/// with a `size_t struct_size`.
#[inline(always)]
unsafe fn check_struct_ptr<T>(ptr: *const T, min: usize) -> Result<(), FrameDefect> {
    if ptr.is_null() {
        return Err(FrameDefect::Null);
    }
    if !ptr.addr().is_multiple_of(align_of::<T>()) {
        return Err(FrameDefect::Misaligned);
    }
    // SAFETY: non-NULL and aligned; the struct starts with size_t
    // struct_size (caller contract).
    let struct_size = unsafe { leading_struct_size(ptr) };
    if struct_size < min {
        return Err(FrameDefect::Short(struct_size));
    }
    Ok(())
}

impl FrameDefect {
    /// The error [`CallFrame::from_raw`] reports for it.
    fn error(self) -> HandlerError {
        HandlerError::invalid_argument(self.describe(
            "the call frame",
            "the call frame",
            XLA_FFI_CallFrame_STRUCT_SIZE,
        ))
    }

    /// What is wrong, in words: `pointer` (what the pointer is called) is
    /// NULL or misaligned, or `what` (the struct) has a `struct_size` below
    /// `min`.
    #[cold]
    #[inline(never)]
    pub(crate) fn describe(self, pointer: &str, what: &str, min: usize) -> String {
        match self {
            FrameDefect::Null => format!("{pointer} is NULL"),
            FrameDefect::Misaligned => format!("{pointer} is misaligned"),
            FrameDefect::Short(struct_size) => {
                format!("{what} has struct_size {struct_size}, expected at least {min}")
            }
        }
    }
}

impl ReadableFrame {
    /// Checks that `frame` is non-NULL, aligned, and has a `struct_size` of
    /// at least 168.
    ///
    /// # Errors
    ///
    /// What is wrong with it.
    ///
    /// # Safety
    ///
    /// A non-NULL, aligned `frame` must point at a readable
    /// `XLA_FFI_CallFrame` prefix of at least its `struct_size` bytes.
    #[inline(always)]
    pub(crate) unsafe fn check(
        frame: *const XLA_FFI_CallFrame,
    ) -> Result<ReadableFrame, FrameDefect> {
        // SAFETY: a frame starts with size_t struct_size (caller contract).
        unsafe { check_struct_ptr(frame, XLA_FFI_CallFrame_STRUCT_SIZE) }?;
        Ok(ReadableFrame(frame))
    }

    /// The frame's address.
    #[inline(always)]
    pub(crate) fn ptr(self) -> *const XLA_FFI_CallFrame {
        self.0
    }
}

/// The frame fields the dispatcher needs before validation, and the frame
/// they were read from.
#[derive(Clone, Copy)]
pub(crate) struct FrameHeader {
    pub(crate) frame: ReadableFrame,
    pub(crate) extension_start: *mut XLA_FFI_Extension_Base,
    pub(crate) api: *const XLA_FFI_Api,
    pub(crate) stage: XLA_FFI_ExecutionStage,
}

impl FrameHeader {
    /// Reads the header of a frame whose `struct_size` is at least 168;
    /// what is wrong with a NULL, misaligned or short frame.
    ///
    /// # Safety
    ///
    /// A non-NULL `frame` must point at a readable `XLA_FFI_CallFrame`
    /// prefix of at least its `struct_size` bytes.
    #[inline(always)]
    pub(crate) unsafe fn read(frame: *const XLA_FFI_CallFrame) -> Result<FrameHeader, FrameDefect> {
        // SAFETY: forwarded caller contract.
        let frame = unsafe { ReadableFrame::check(frame) }?;
        let raw = frame.ptr();
        // SAFETY: all three fields lie within the first 168 bytes, which a
        // ReadableFrame has.
        unsafe {
            Ok(FrameHeader {
                frame,
                extension_start: ptr::addr_of!((*raw).extension_start).read(),
                api: ptr::addr_of!((*raw).api).read(),
                stage: ptr::addr_of!((*raw).stage).read(),
            })
        }
    }

    pub(crate) fn api_table(&self) -> Option<ApiTable> {
        // SAFETY: `frame->api` of an XLA frame is the runtime's table, which
        // lives for the life of the process.
        unsafe { ApiTable::new(self.api) }
    }

    /// `XLA_FFI_Error_Create(message, code)` through the frame's API, or
    /// NULL (logged) if the runtime gives no way to report errors.
    pub(crate) fn error(&self, code: XLA_FFI_Error_Code, message: &str) -> *mut XLA_FFI_Error {
        report(self.api, code, message)
    }
}

/// `XLA_FFI_Error_Create(message, code)` through the runtime's table `api`
/// (a frame's `api`), or NULL (logged) if it gives no way to report errors.
fn report(api: *const XLA_FFI_Api, code: XLA_FFI_Error_Code, message: &str) -> *mut XLA_FFI_Error {
    // SAFETY: `frame->api` of an XLA frame is the runtime's table, which
    // lives for the life of the process.
    match unsafe { ApiTable::new(api) }.and_then(|api| api.create_error(message, code)) {
        Some(error) => error,
        None => {
            tracing::error!(
                "cannot report an error to XLA (the frame has no usable \
                 XLA_FFI_Error_Create): {message}"
            );
            ptr::null_mut()
        }
    }
}

/// An error through the frame's API, for frames the dispatcher could not
/// route (no header needed beyond `api`).
///
/// # Safety
///
/// As for [`dispatch`](crate::registry::dispatch).
pub(crate) unsafe fn fail(
    frame: *mut XLA_FFI_CallFrame,
    code: XLA_FFI_Error_Code,
    message: &str,
) -> *mut XLA_FFI_Error {
    // SAFETY: caller contract.
    match unsafe { FrameHeader::read(frame) } {
        Ok(header) => header.error(code, message),
        Err(_) => {
            tracing::error!("cannot report an error to XLA (unreadable call frame): {message}");
            ptr::null_mut()
        }
    }
}

/// Reports a frame that [`FrameHeader::read`] found `defect`ive: through
/// its `api` if the frame is short but still holds that field.
///
/// # Safety
///
/// As for [`dispatch`](crate::registry::dispatch).
pub(crate) unsafe fn malformed(
    frame: *mut XLA_FFI_CallFrame,
    defect: FrameDefect,
    target: &str,
) -> *mut XLA_FFI_Error {
    let message =
        format!("target `{target}`: unreadable call frame (NULL, misaligned or struct_size < 168)");
    let api_end = std::mem::offset_of!(XLA_FFI_CallFrame, api) + size_of::<usize>();
    match defect {
        FrameDefect::Short(struct_size) if struct_size >= api_end => {
            // SAFETY: a short frame is non-NULL and aligned
            // (`ReadableFrame::check`), and `api` lies within its
            // struct_size, which the caller guarantees readable.
            let api = unsafe { ptr::addr_of!((*frame).api).read() };
            report(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, &message)
        }
        _ => {
            tracing::error!("{message}");
            ptr::null_mut()
        }
    }
}

/// Walks `extension_start` for the metadata extension: `Ok(None)` if there
/// is none (not a probe), `Ok(Some(metadata))` for a usable one, `Err` if
/// the chain or the metadata is malformed.
///
/// # Safety
///
/// Every non-NULL, aligned extension in the chain must be readable for its
/// `struct_size`, and a metadata extension's `metadata` must be writable.
pub(crate) unsafe fn find_metadata(
    mut extension: *mut XLA_FFI_Extension_Base,
) -> std::result::Result<Option<*mut XLA_FFI_Metadata>, String> {
    for _ in 0..MAX_EXTENSIONS {
        if extension.is_null() {
            return Ok(None);
        }
        if !extension
            .addr()
            .is_multiple_of(align_of::<XLA_FFI_Extension_Base>())
        {
            return Err("misaligned extension".into());
        }
        // SAFETY: non-NULL, aligned extension head (caller contract).
        let base = unsafe { &*extension };
        if base.type_ == XLA_FFI_Extension_Metadata {
            if base.struct_size < XLA_FFI_Metadata_Extension_STRUCT_SIZE {
                return Err(format!(
                    "the metadata extension has struct_size {}, expected at least {}",
                    base.struct_size, XLA_FFI_Metadata_Extension_STRUCT_SIZE
                ));
            }
            // SAFETY: the struct size covers the whole metadata extension.
            let metadata = unsafe { (*extension.cast::<XLA_FFI_Metadata_Extension>()).metadata };
            if metadata.is_null()
                || !metadata
                    .addr()
                    .is_multiple_of(align_of::<XLA_FFI_Metadata>())
            {
                return Err("the metadata pointer is NULL or misaligned".into());
            }
            // SAFETY: non-NULL, aligned; XLA_FFI_Metadata starts with struct_size.
            let size = unsafe { ptr::addr_of!((*metadata).struct_size).read() };
            if size < XLA_FFI_Metadata_STRUCT_SIZE {
                return Err(format!(
                    "the metadata has struct_size {size}, expected at least {XLA_FFI_Metadata_STRUCT_SIZE}"
                ));
            }
            return Ok(Some(metadata));
        }
        extension = base.next;
    }
    Err(format!(
        "the extension chain is longer than {MAX_EXTENSIONS}"
    ))
}

/// Reads an error's message without destroying it (XLA owns it once the
/// handler returns it).
///
/// # Safety
///
/// `error` must be a live error of the runtime behind `api`.
pub(crate) unsafe fn peek_error_message(api: &ApiTable, error: *mut XLA_FFI_Error) -> String {
    // SAFETY: a live error of the runtime behind `api` (caller contract).
    match unsafe { api.error_message(error) } {
        None => "(the runtime cannot read error messages)".into(),
        Some(None) => "(no message)".into(),
        Some(Some(message)) => message,
    }
}

// ---------------------------------------------------------------------------
// CallFrame
// ---------------------------------------------------------------------------

/// A validated view of one EXECUTE call frame, valid for the call (`'a`).
///
/// # Thread safety
///
/// Not `Send`/`Sync`: it carries XLA's per-call context. The views it gives
/// out ([`BufferView`], [`Attrs`], [`Attr`]) are `Send + Sync` and can be
/// used from worker threads for the duration of the call.
pub struct CallFrame<'a> {
    raw: &'a XLA_FFI_CallFrame,
    /// The validated buffers, operands then results: checked once, in
    /// [`CallFrame::from_raw`], and handed out from here (inline up to
    /// [`INLINE_BUFFERS`], so a common call allocates nothing).
    buffers: SmallVec<[BufferView<'a>; INLINE_BUFFERS]>,
    num_args: usize,
    attrs: Attrs<'a>,
}

/// Buffers (operands and results together) a frame holds without
/// allocating.
const INLINE_BUFFERS: usize = 8;

/// The runtime side of a call in progress (`frame->api` and `frame->ctx`):
/// what [`CallContext::device_ordinal`] and [`CallContext::run_id`] ask
/// XLA. Copied out of a [`CallFrame`] so that a handler can ask only when
/// its code needs the answer; it has no lifetime, so the caller vouches that
/// the call is still in progress.
#[derive(Clone, Copy, Debug)]
pub struct CallContext {
    api: *const XLA_FFI_Api,
    ctx: *mut XLA_FFI_ExecutionContext,
}

// SAFETY: two addresses; XLA's functions behind them may be called from any
// thread during the call (`unsafe` methods, whose callers vouch for that).
unsafe impl Send for CallContext {}
// SAFETY: as for Send.
unsafe impl Sync for CallContext {}

/// The body of a [`CallContext`] query: calls the `XLA_FFI_Api` function
/// `$function` with the context and returns the `$out` field it fills in.
/// Its caller vouches that the call is still in progress.
macro_rules! context_query {
    ($context:expr, $function:ident, $args:ident { $out:ident }, $size:ident) => {{
        const FUNCTION: &str = stringify!($function);
        // SAFETY: forwarded caller contract.
        let (api, ctx) = unsafe { $context.api_and_ctx(FUNCTION) }?;
        let get = api_slot!(&api, $function).ok_or_else(|| unavailable(FUNCTION))?;
        let mut args = $args {
            struct_size: $size,
            extension_start: ptr::null_mut(),
            ctx,
            $out: 0,
        };
        // SAFETY: runtime function, valid args struct, the live ctx.
        let error = unsafe { get(&mut args) };
        if error.is_null() {
            Ok(args.$out)
        } else {
            // SAFETY: a fresh error from this runtime, owned by us.
            Err(unsafe { api.runtime_error(FUNCTION, error) })
        }
    }};
}

impl CallContext {
    /// `XLA_FFI_DeviceOrdinal_Get`: the device ordinal the call runs on.
    ///
    /// # Errors
    ///
    /// As for [`CallFrame::device_ordinal`].
    ///
    /// # Safety
    ///
    /// The call this context was taken from must still be in progress (its
    /// handler has not returned).
    pub unsafe fn device_ordinal(&self) -> Result<i32, HandlerError> {
        context_query!(
            self,
            XLA_FFI_DeviceOrdinal_Get,
            XLA_FFI_DeviceOrdinal_Get_Args { device_ordinal },
            XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE
        )
    }

    /// `XLA_FFI_RunId_Get`: the run id of this execution.
    ///
    /// # Errors
    ///
    /// As for [`CallFrame::device_ordinal`].
    ///
    /// # Safety
    ///
    /// As for [`CallContext::device_ordinal`].
    pub unsafe fn run_id(&self) -> Result<i64, HandlerError> {
        context_query!(
            self,
            XLA_FFI_RunId_Get,
            XLA_FFI_RunId_Get_Args { run_id },
            XLA_FFI_RunId_Get_Args_STRUCT_SIZE
        )
    }

    /// # Safety
    ///
    /// As for [`CallContext::device_ordinal`].
    unsafe fn api_and_ctx(
        &self,
        function: &str,
    ) -> Result<(ApiTable, *mut XLA_FFI_ExecutionContext), HandlerError> {
        // SAFETY: `frame->api` is the runtime's table, alive for the process
        // while the call is in progress (caller contract).
        let Some(api) = (unsafe { ApiTable::new(self.api) }) else {
            return Err(HandlerError::internal(format!(
                "cannot call {function}: the call frame has no XLA_FFI_Api"
            )));
        };
        if self.ctx.is_null() {
            return Err(HandlerError::internal(format!(
                "cannot call {function}: the call frame has no execution context"
            )));
        }
        Ok((api, self.ctx))
    }
}

impl fmt::Debug for CallFrame<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallFrame")
            .field("stage", &self.raw.stage)
            .field("num_args", &self.num_args())
            .field("num_rets", &self.num_rets())
            .field("attrs", &self.attrs)
            .finish()
    }
}

/// A frame whose fixed part (sizes, counts, types, arrays and inline
/// attributes) was checked by [`Checked::of`]; its buffers are checked as
/// they are recorded ([`CallFrame::fill`]).
struct Checked<'a> {
    raw: &'a XLA_FFI_CallFrame,
    args: &'a [*mut c_void],
    rets: &'a [*mut c_void],
    attrs: Attrs<'a>,
}

impl<'a> Checked<'a> {
    /// Checks the fixed part of a frame (see [`CallFrame::from_raw`]) that
    /// [`ReadableFrame::check`] found readable.
    ///
    /// # Safety
    ///
    /// As for [`CallFrame::from_raw`].
    #[inline(always)]
    unsafe fn of(frame: ReadableFrame) -> Result<Checked<'a>, HandlerError> {
        // SAFETY: non-NULL, aligned and at least 168 bytes long
        // (ReadableFrame); the caller guarantees a complete, unmodified
        // frame for 'a.
        let raw: &'a XLA_FFI_CallFrame = unsafe { &*frame.ptr() };

        check_struct_size(
            || "the frame's args".into(),
            raw.args.struct_size,
            XLA_FFI_Args_STRUCT_SIZE,
        )?;
        check_struct_size(
            || "the frame's rets".into(),
            raw.rets.struct_size,
            XLA_FFI_Rets_STRUCT_SIZE,
        )?;

        let num_args = count(|| "the frame's args.size".into(), raw.args.size)?;
        // SAFETY: XLA provides `size` types and buffer pointers (caller contract).
        let arg_types = unsafe { slice_from_raw_parts(raw.args.types, num_args) }
            .map_err(|e| HandlerError::invalid_argument(format!("args.types {e}")))?;
        // SAFETY: as above.
        let args = unsafe { slice_from_raw_parts(raw.args.args.cast_const(), num_args) }
            .map_err(|e| HandlerError::invalid_argument(format!("args.args {e}")))?;

        let num_rets = count(|| "the frame's rets.size".into(), raw.rets.size)?;
        // SAFETY: as above.
        let ret_types = unsafe { slice_from_raw_parts(raw.rets.types, num_rets) }
            .map_err(|e| HandlerError::invalid_argument(format!("rets.types {e}")))?;
        // SAFETY: as above.
        let rets = unsafe { slice_from_raw_parts(raw.rets.rets.cast_const(), num_rets) }
            .map_err(|e| HandlerError::invalid_argument(format!("rets.rets {e}")))?;

        for (i, &t) in arg_types.iter().enumerate() {
            if t != XLA_FFI_ArgType_BUFFER {
                return Err(HandlerError::invalid_argument(format!(
                    "argument {i} has type {t}, expected BUFFER ({XLA_FFI_ArgType_BUFFER})"
                )));
            }
        }
        for (i, &t) in ret_types.iter().enumerate() {
            if t != XLA_FFI_RetType_BUFFER {
                return Err(HandlerError::invalid_argument(format!(
                    "result {i} has type {t}, expected BUFFER ({XLA_FFI_RetType_BUFFER})"
                )));
            }
        }
        // SAFETY: the inline attrs are part of the frame (valid for 'a).
        let attrs = unsafe { Attrs::from_raw(&raw.attrs, None) }?;
        Ok(Checked {
            raw,
            args,
            rets,
            attrs,
        })
    }

    /// A frame with this one's fixed part and no buffers yet.
    #[inline(always)]
    fn empty(&self) -> CallFrame<'a> {
        CallFrame {
            raw: self.raw,
            buffers: SmallVec::new(),
            num_args: self.args.len(),
            attrs: self.attrs,
        }
    }
}

/// An EXECUTE call frame whose fixed part (sizes, counts, types, arrays and
/// inline attributes) is checked as [`CallFrame::from_raw`] checks it, and
/// whose buffers are checked when they are read: in full
/// ([`LazyFrame::arg`], [`LazyFrame::ret`]), or against a shape checked
/// before ([`LazyFrame::arg_shaped`], [`LazyFrame::ret_shaped`]), which
/// compares a buffer's dtype and dims instead of computing its sizes. What
/// [`Handler::execute_lazy`](crate::Handler::execute_lazy) is given.
pub struct LazyFrame<'a> {
    checked: Checked<'a>,
    /// The target called, for the messages of [`LazyFrame::check`].
    target: &'a str,
}

impl<'a> LazyFrame<'a> {
    /// Checks the fixed part of `frame`, found readable, then runs `f` on
    /// it.
    ///
    /// # Errors
    ///
    /// As for [`CallFrame::from_raw`], for the fixed part (then `f` does
    /// not run).
    ///
    /// # Safety
    ///
    /// As for [`CallFrame::from_raw`], for the frame `frame` checked.
    #[inline]
    pub(crate) unsafe fn with_readable<R>(
        frame: ReadableFrame,
        target: &'a str,
        f: impl FnOnce(&LazyFrame<'a>) -> R,
    ) -> Result<R, HandlerError> {
        // SAFETY: forwarded caller contract.
        let checked = unsafe { Checked::of(frame) }?;
        Ok(f(&LazyFrame { checked, target }))
    }

    /// Checks every buffer, as [`CallFrame::from_raw`] does, and runs `f`
    /// on the checked frame.
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` naming the target and the first buffer found
    /// invalid (`target `t`: invalid call frame: argument 0: ...`); then
    /// `f` does not run.
    #[inline]
    pub fn check<R>(&self, f: impl FnOnce(&CallFrame<'a>) -> R) -> Result<R, HandlerError> {
        let mut view = self.checked.empty();
        // SAFETY: the buffers are those of the frame `self.checked` was
        // checked from, which `with_readable`'s caller vouched for.
        match unsafe { view.fill(&self.checked) } {
            Ok(()) => Ok(f(&view)),
            Err(e) => Err(invalid_frame(self.target, &e)),
        }
    }

    /// Number of arguments (operands of the custom call).
    #[inline]
    pub fn num_args(&self) -> usize {
        self.checked.args.len()
    }

    /// Number of results.
    #[inline]
    pub fn num_rets(&self) -> usize {
        self.checked.rets.len()
    }

    /// Argument `i`, checked in full.
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` if `i` is out of range (naming `i` and the count)
    /// or the buffer is invalid (naming what is wrong, as
    /// [`CallFrame::from_raw`] does).
    #[inline]
    pub fn arg(&self, i: usize) -> Result<BufferView<'a>, HandlerError> {
        match self.checked.args.get(i) {
            // SAFETY: an entry of the checked frame's array, pointing at an
            // XLA_FFI_Buffer valid for 'a (`with_readable`'s caller).
            Some(&b) => unsafe { BufferView::from_raw(b, Role::Argument, i) },
            None => Err(out_of_range("argument", i, self.num_args())),
        }
    }

    /// Result `i`, checked in full.
    ///
    /// # Errors
    ///
    /// As for [`LazyFrame::arg`].
    #[inline]
    pub fn ret(&self, i: usize) -> Result<BufferView<'a>, HandlerError> {
        match self.checked.rets.get(i) {
            // SAFETY: as in `arg`.
            Some(&b) => unsafe { BufferView::from_raw(b, Role::Result, i) },
            None => Err(out_of_range("result", i, self.num_rets())),
        }
    }

    /// Argument `i` if it has `shape`'s dtype and dims: the view
    /// [`LazyFrame::arg`] gives, with `shape`'s sizes, which are those of
    /// its dtype and dims. `None` if it has another shape, `i` is out of
    /// range, or the buffer is invalid: [`LazyFrame::arg`] then says which.
    #[inline]
    pub fn arg_shaped(&self, i: usize, shape: &BufferShape) -> Option<BufferView<'a>> {
        let &b = self.checked.args.get(i)?;
        // SAFETY: as in `arg`.
        unsafe { BufferView::from_shaped(b, shape, Role::Argument, i) }
    }

    /// Result `i` if it has `shape`'s dtype and dims, as
    /// [`LazyFrame::arg_shaped`] finds an argument.
    #[inline]
    pub fn ret_shaped(&self, i: usize, shape: &BufferShape) -> Option<BufferView<'a>> {
        let &b = self.checked.rets.get(i)?;
        // SAFETY: as in `arg`.
        unsafe { BufferView::from_shaped(b, shape, Role::Result, i) }
    }

    /// The attributes of this call site (sorted by name).
    #[inline]
    pub fn attrs(&self) -> Attrs<'a> {
        self.checked.attrs
    }

    /// The call's runtime context ([`CallFrame::context`]).
    #[inline]
    pub fn context(&self) -> CallContext {
        CallContext {
            api: self.checked.raw.api,
            ctx: self.checked.raw.ctx,
        }
    }

    /// The raw frame.
    #[inline]
    pub fn raw(&self) -> &'a XLA_FFI_CallFrame {
        self.checked.raw
    }
}

impl fmt::Debug for LazyFrame<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LazyFrame")
            .field("target", &self.target)
            .field("stage", &self.checked.raw.stage)
            .field("num_args", &self.num_args())
            .field("num_rets", &self.num_rets())
            .field("attrs", &self.checked.attrs)
            .finish()
    }
}

impl<'a> CallFrame<'a> {
    /// Validates a frame XLA passed to a handler.
    ///
    /// Checks: the frame is non-NULL with `struct_size` ≥ 168; args, rets
    /// and attrs have at least their struct sizes (40/40/48) and
    /// non-negative counts; their arrays are non-NULL unless empty; every
    /// argument/result type is BUFFER; every buffer is valid (see
    /// [`BufferView`]: known dtype, non-negative dims, element count and
    /// byte size without overflow, data non-NULL unless empty). Nested
    /// attribute dictionaries are checked when they are read.
    ///
    /// The stage is not checked (the dispatcher only passes EXECUTE frames).
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` naming the field, argument or result index and
    /// the offending value.
    ///
    /// # Safety
    ///
    /// `frame` must be NULL or point at a complete `XLA_FFI_CallFrame`
    /// (`size_of` bytes, as XLA allocates them) whose pointers are valid as
    /// XLA documents them, all for `'a`; nothing may modify the frame, its
    /// arrays, buffers descriptors or attributes during `'a`.
    pub unsafe fn from_raw(frame: *const XLA_FFI_CallFrame) -> Result<CallFrame<'a>, HandlerError> {
        // SAFETY: forwarded caller contract.
        let frame = unsafe { ReadableFrame::check(frame) }.map_err(FrameDefect::error)?;
        // SAFETY: forwarded caller contract.
        let checked = unsafe { Checked::of(frame) }?;
        let mut view = checked.empty();
        // SAFETY: as above.
        unsafe { view.fill(&checked) }?;
        Ok(view)
    }

    /// Validates a frame as [`CallFrame::from_raw`] does, then runs `f` on
    /// it. The frame is built where `f` sees it: it holds its buffers
    /// inline (hundreds of bytes), which returning it by value would copy,
    /// twice, on every call.
    ///
    /// # Errors
    ///
    /// As for [`CallFrame::from_raw`] (then `f` does not run).
    ///
    /// # Safety
    ///
    /// As for [`CallFrame::from_raw`].
    #[inline]
    pub unsafe fn with_raw<R>(
        frame: *const XLA_FFI_CallFrame,
        f: impl FnOnce(&CallFrame<'a>) -> R,
    ) -> Result<R, HandlerError> {
        // SAFETY: forwarded caller contract.
        let frame = unsafe { ReadableFrame::check(frame) }.map_err(FrameDefect::error)?;
        // SAFETY: forwarded caller contract.
        unsafe { CallFrame::with_readable(frame, f) }
    }

    /// [`CallFrame::with_raw`] for a frame already found readable (the
    /// dispatcher's, through its [`FrameHeader`]): the rest of the frame is
    /// validated, then `f` runs on it.
    ///
    /// # Errors
    ///
    /// As for [`CallFrame::from_raw`] (then `f` does not run).
    ///
    /// # Safety
    ///
    /// As for [`CallFrame::from_raw`], for the frame `frame` checked.
    #[inline]
    pub(crate) unsafe fn with_readable<R>(
        frame: ReadableFrame,
        f: impl FnOnce(&CallFrame<'a>) -> R,
    ) -> Result<R, HandlerError> {
        // SAFETY: forwarded caller contract.
        let checked = unsafe { Checked::of(frame) }?;
        let mut view = checked.empty();
        // SAFETY: as above.
        unsafe { view.fill(&checked) }?;
        Ok(f(&view))
    }

    /// Validates and records every buffer of `checked`'s frame, operands
    /// then results, in place.
    ///
    /// # Safety
    ///
    /// As for [`CallFrame::from_raw`], for the frame `checked` came from.
    #[inline(always)]
    unsafe fn fill(&mut self, checked: &Checked<'a>) -> Result<(), HandlerError> {
        self.buffers
            .reserve_exact(checked.args.len() + checked.rets.len());
        for (i, &b) in checked.args.iter().enumerate() {
            // SAFETY: each entry points at an XLA_FFI_Buffer valid for 'a
            // (caller contract).
            self.buffers
                .push(unsafe { BufferView::from_raw(b, Role::Argument, i) }?);
        }
        for (i, &b) in checked.rets.iter().enumerate() {
            // SAFETY: as above.
            self.buffers
                .push(unsafe { BufferView::from_raw(b, Role::Result, i) }?);
        }
        Ok(())
    }

    /// Number of arguments (operands of the custom call).
    #[inline]
    pub fn num_args(&self) -> usize {
        self.num_args
    }

    /// Argument `i`.
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` if `i` is out of range (naming `i` and the count).
    #[inline]
    pub fn arg(&self, i: usize) -> Result<BufferView<'a>, HandlerError> {
        match self.buffers[..self.num_args].get(i) {
            Some(&view) => Ok(view),
            None => Err(out_of_range("argument", i, self.num_args)),
        }
    }

    /// Number of results.
    #[inline]
    pub fn num_rets(&self) -> usize {
        self.buffers.len() - self.num_args
    }

    /// Result `i`.
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` if `i` is out of range (naming `i` and the count).
    #[inline]
    pub fn ret(&self, i: usize) -> Result<BufferView<'a>, HandlerError> {
        match self.buffers[self.num_args..].get(i) {
            Some(&view) => Ok(view),
            None => Err(out_of_range("result", i, self.num_rets())),
        }
    }

    /// The attributes of this call site (sorted by name).
    #[inline]
    pub fn attrs(&self) -> Attrs<'a> {
        self.attrs
    }

    /// The execution stage (3 = EXECUTE).
    #[inline]
    pub fn stage(&self) -> u32 {
        self.raw.stage
    }

    /// The device ordinal this call runs on (`XLA_FFI_DeviceOrdinal_Get`).
    ///
    /// # Errors
    ///
    /// `INTERNAL` if the frame has no API table or execution context, the
    /// runtime lacks the function, or it returned an error (its message is
    /// included).
    pub fn device_ordinal(&self) -> Result<i32, HandlerError> {
        // SAFETY: the frame's call is in progress for 'a, and `self` is.
        unsafe { self.context().device_ordinal() }
    }

    /// The run id of this execution (`XLA_FFI_RunId_Get`).
    ///
    /// # Errors
    ///
    /// As for [`CallFrame::device_ordinal`].
    pub fn run_id(&self) -> Result<i64, HandlerError> {
        // SAFETY: as for `device_ordinal`.
        unsafe { self.context().run_id() }
    }

    /// The call's runtime context, to ask for the device ordinal or run id
    /// later in the call, only if they are needed.
    #[inline]
    pub fn context(&self) -> CallContext {
        CallContext {
            api: self.raw.api,
            ctx: self.raw.ctx,
        }
    }

    /// The raw frame.
    #[inline]
    pub fn raw(&self) -> &'a XLA_FFI_CallFrame {
        self.raw
    }
}

/// The error for a frame of target `target` that its check refused with
/// `e`: `e`'s code, its message named.
#[cold]
#[inline(never)]
pub(crate) fn invalid_frame(target: &str, e: &HandlerError) -> HandlerError {
    HandlerError::new(
        e.code,
        format!("target `{target}`: invalid call frame: {}", e.message),
    )
}

/// The error of [`CallFrame::arg`] and [`CallFrame::ret`] for an index
/// past the `count` buffers of `what` (out of line: those two are inlined
/// into every handler's reads of its buffers, and this is never taken on a
/// well-formed call).
#[cold]
#[inline(never)]
fn out_of_range(what: &str, i: usize, count: usize) -> HandlerError {
    HandlerError::invalid_argument(format!(
        "{what} index {i} is out of range: the call has {count} {what}s"
    ))
}

fn unavailable(function: &str) -> HandlerError {
    HandlerError::internal(format!(
        "{function} is not available in this XLA runtime (its XLA_FFI_Api is too short or the slot is NULL)"
    ))
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;
    use crate::DType;
    use crate::error::ErrorCode;
    use crate::ffi::xla_ffi::*;

    fn frame_with(args: Vec<OwnedBuffer>, rets: Vec<OwnedBuffer>) -> OwnedFrame {
        OwnedFrame::new(args, rets, OwnedAttrs::new(vec![]))
    }

    #[test]
    fn index_out_of_range_names_index_and_count() {
        let mut f = frame_with(vec![], vec![]);
        // SAFETY: owned frame.
        let frame = unsafe { CallFrame::from_raw(f.ptr()) }.unwrap();
        assert_eq!(
            frame.arg(2).unwrap_err().message,
            "argument index 2 is out of range: the call has 0 arguments"
        );
        assert_eq!(
            frame.ret(0).unwrap_err().message,
            "result index 0 is out of range: the call has 0 results"
        );
    }

    #[test]
    fn unknown_dtype_names_index_and_value() {
        let mut f = frame_with(
            vec![
                OwnedBuffer::new(XLA_FFI_DataType_F32, &[1], &[0; 4]),
                OwnedBuffer::new(99, &[1], &[0; 4]),
            ],
            vec![],
        );
        // SAFETY: owned frame.
        let e = unsafe { CallFrame::from_raw(f.ptr()) }.unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert_eq!(e.message, "argument 1: unknown dtype 99");
    }

    /// `with_raw` validates as `from_raw` does: the handler sees the same
    /// buffers, and does not run on a frame `from_raw` refuses.
    #[test]
    fn with_raw_checks_as_from_raw_does() {
        let mut f = frame_with(
            vec![OwnedBuffer::new(XLA_FFI_DataType_F32, &[2], &[0; 8])],
            vec![OwnedBuffer::new(XLA_FFI_DataType_S32, &[3, 1], &[0; 12])],
        );
        // SAFETY: owned frame.
        let seen = unsafe {
            CallFrame::with_raw(f.ptr(), |frame| {
                let (a, r) = (frame.arg(0).unwrap(), frame.ret(0).unwrap());
                (
                    frame.num_args(),
                    frame.num_rets(),
                    a.dtype(),
                    r.dims().to_vec(),
                )
            })
        }
        .unwrap();
        assert_eq!(seen, (1, 1, crate::DType::F32, vec![3, 1]));

        let mut f = frame_with(
            vec![OwnedBuffer::new(XLA_FFI_DataType_F32, &[1], &[0; 4])],
            vec![OwnedBuffer::new(99, &[1], &[0; 4])],
        );
        let mut ran = false;
        // SAFETY: owned frame.
        let e = unsafe { CallFrame::with_raw(f.ptr(), |_| ran = true) }.unwrap_err();
        assert!(!ran, "the handler ran on a refused frame");
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert_eq!(e.message, "result 0: unknown dtype 99");
    }

    #[test]
    fn overflowing_shapes_are_rejected() {
        let mut f = frame_with(
            vec![],
            vec![OwnedBuffer::new(
                XLA_FFI_DataType_F32,
                &[1 << 40, 1 << 40],
                &[0; 4],
            )],
        );
        // SAFETY: owned frame (the data pointer is never read: validation fails).
        let e = unsafe { CallFrame::from_raw(f.ptr()) }.unwrap_err();
        assert!(
            e.message
                .starts_with("result 0: the element count of shape"),
            "{e}"
        );

        let mut f = frame_with(
            vec![OwnedBuffer::new(
                XLA_FFI_DataType_C128,
                &[1 << 31, 1 << 31],
                &[0; 4],
            )],
            vec![],
        );
        // SAFETY: as above.
        let e = unsafe { CallFrame::from_raw(f.ptr()) }.unwrap_err();
        assert!(
            e.message.starts_with("argument 0: the byte size of c128"),
            "{e}"
        );

        let mut f = frame_with(
            vec![OwnedBuffer::new(XLA_FFI_DataType_F32, &[-1], &[])],
            vec![],
        );
        // SAFETY: as above.
        let e = unsafe { CallFrame::from_raw(f.ptr()) }.unwrap_err();
        assert_eq!(e.message, "argument 0: dimension 0 is -1");
    }

    #[test]
    fn struct_sizes_and_nulls_are_checked() {
        /// Breaks one field of a valid frame.
        type Corrupt = fn(&mut OwnedFrame);
        let one_f32 = || vec![OwnedBuffer::new(XLA_FFI_DataType_F32, &[1], &[0; 4])];
        let cases: [(Vec<OwnedBuffer>, Corrupt, &str); 8] = [
            (
                vec![],
                |f| f.raw.struct_size = 160,
                "the call frame has struct_size 160, expected at least 168",
            ),
            (
                vec![],
                |f| f.raw.args.struct_size = 32,
                "the frame's args has struct_size 32, expected at least 40",
            ),
            (
                vec![],
                |f| f.raw.attrs.struct_size = 40,
                "the frame's attrs has struct_size 40, expected at least 48",
            ),
            (
                one_f32(),
                |f| f.args[0].raw.struct_size = 40,
                "argument 0: the buffer has struct_size 40, expected at least 48",
            ),
            (
                one_f32(),
                |f| f.args[0].raw.data = ptr::null_mut(),
                "argument 0: data is NULL for 4 bytes",
            ),
            (
                one_f32(),
                |f| f.raw.args.args = ptr::null_mut(),
                "args.args is NULL",
            ),
            (
                one_f32(),
                |f| f.arg_types[0] = 2,
                "argument 0 has type 2, expected BUFFER (1)",
            ),
            (
                vec![],
                |f| f.raw.rets.size = -1,
                "the frame's rets.size is -1",
            ),
        ];
        for (args, corrupt, expected) in cases {
            let mut f = frame_with(args, vec![]);
            corrupt(&mut f);
            // SAFETY: owned frame; what was corrupted is rejected before use.
            let e = unsafe { CallFrame::from_raw(f.ptr()) }.unwrap_err();
            assert_eq!(e.message, expected);
        }

        // SAFETY: NULL is allowed and rejected.
        let e = unsafe { CallFrame::from_raw(ptr::null()) }.unwrap_err();
        assert_eq!(e.message, "the call frame is NULL");
    }

    #[test]
    fn null_empty_arrays_are_accepted() {
        // What the probe frame looks like: sizes 0, arrays NULL.
        let mut p = ProbeFrame::new(0, 3);
        // SAFETY: owned frame.
        let frame = unsafe { CallFrame::from_raw(p.ptr()) }.unwrap();
        assert_eq!(
            (frame.num_args(), frame.num_rets(), frame.attrs().len()),
            (0, 0, 0)
        );
    }

    #[test]
    fn device_ordinal_and_run_id_use_the_api() {
        let mut f = frame_with(vec![], vec![]);
        // SAFETY: owned frame.
        let frame = unsafe { CallFrame::from_raw(f.ptr()) }.unwrap();
        assert_eq!(frame.device_ordinal().unwrap(), 7);
        assert_eq!(frame.run_id().unwrap(), 42);

        // An error from the runtime: message read, error destroyed.
        f.raw.ctx = ptr::without_provenance_mut(0xbad);
        // SAFETY: owned frame.
        let frame = unsafe { CallFrame::from_raw(f.ptr()) }.unwrap();
        let e = frame.device_ordinal().unwrap_err();
        assert_eq!(e.code, ErrorCode::Internal);
        assert_eq!(
            e.message,
            "XLA_FFI_DeviceOrdinal_Get failed: no device here"
        );
        assert!(
            DESTROYED
                .lock()
                .unwrap()
                .iter()
                .any(|m| m == "no device here")
        );

        // A table too short for the slot.
        f.api.struct_size = offset_of!(XLA_FFI_Api, XLA_FFI_DeviceOrdinal_Get);
        // SAFETY: owned frame.
        let frame = unsafe { CallFrame::from_raw(f.ptr()) }.unwrap();
        assert!(
            frame
                .device_ordinal()
                .unwrap_err()
                .message
                .contains("not available")
        );
        assert_eq!(frame.run_id().unwrap(), 42);

        f.raw.ctx = ptr::null_mut();
        // SAFETY: owned frame.
        let frame = unsafe { CallFrame::from_raw(f.ptr()) }.unwrap();
        assert_eq!(
            frame.run_id().unwrap_err().message,
            "cannot call XLA_FFI_RunId_Get: the call frame has no execution context"
        );
    }

    #[test]
    fn api_table_creates_errors_with_nul_terminated_messages() {
        let api = fake_api(0, 3);
        // SAFETY: a live table.
        let table = unsafe { ApiTable::new(&*api) }.unwrap();
        assert_eq!(table.version(), Some((0, 3)));
        let e = table
            .create_error("bad\0input", XLA_FFI_Error_Code_INVALID_ARGUMENT)
            .unwrap();
        // SAFETY: from the fake runtime.
        let e = unsafe { take_error(e) };
        assert_eq!((e.message.as_str(), e.code), ("bad\\0input", 3));
        // SAFETY: NULL table.
        assert!(unsafe { ApiTable::new(ptr::null()) }.is_none());
    }

    /// Runs `f` on `frame` as the dispatcher hands it to a handler's
    /// `execute_lazy` (for target `t`).
    fn lazy<R>(frame: &mut OwnedFrame, f: impl FnOnce(&LazyFrame<'_>) -> R) -> R {
        // SAFETY: an owned, complete frame.
        let Ok(readable) = (unsafe { ReadableFrame::check(frame.ptr()) }) else {
            panic!("an owned frame is readable");
        };
        // SAFETY: as above.
        unsafe { LazyFrame::with_readable(readable, "t", f) }.unwrap()
    }

    /// What `arg_shaped` found, to compare with `arg`'s view.
    fn seen(view: &BufferView<'_>) -> (DType, Vec<i64>, usize, usize, *mut u8) {
        (
            view.dtype(),
            view.dims().to_vec(),
            view.element_count(),
            view.byte_len(),
            view.data_ptr(),
        )
    }

    /// A buffer of the shape given is the view a full check gives; a
    /// buffer of any other dtype or dims is not found.
    #[test]
    fn a_lazy_frame_finds_buffers_of_the_shape_it_is_given() {
        let mut f = frame_with(
            vec![OwnedBuffer::new(XLA_FFI_DataType_F32, &[2, 3], &[7; 24])],
            vec![OwnedBuffer::new(XLA_FFI_DataType_S32, &[4], &[0; 16])],
        );
        lazy(&mut f, |frame| {
            assert_eq!((frame.num_args(), frame.num_rets()), (1, 1));
            let (a, r) = (frame.arg(0).unwrap(), frame.ret(0).unwrap());
            let (a_shape, r_shape) = (a.shape(), r.shape());
            assert_eq!(a_shape, BufferShape::new(DType::F32, &[2, 3]).unwrap());
            assert_eq!((a_shape.element_count(), a_shape.byte_len()), (6, 24));
            assert_eq!(seen(&frame.arg_shaped(0, &a_shape).unwrap()), seen(&a));
            assert_eq!(seen(&frame.ret_shaped(0, &r_shape).unwrap()), seen(&r));
            for other in [
                BufferShape::new(DType::F32, &[3, 2]).unwrap(),
                BufferShape::new(DType::F32, &[6]).unwrap(),
                BufferShape::new(DType::F32, &[2, 3, 1]).unwrap(),
                BufferShape::new(DType::S32, &[2, 3]).unwrap(),
                BufferShape::new(DType::F32, &[]).unwrap(),
            ] {
                assert!(frame.arg_shaped(0, &other).is_none(), "{other:?}");
            }
            assert!(frame.ret_shaped(0, &a_shape).is_none());
            assert!(frame.arg_shaped(1, &a_shape).is_none());
            assert!(frame.ret_shaped(1, &r_shape).is_none());
            let e = frame.arg(1).unwrap_err();
            assert_eq!(
                e.message,
                "argument index 1 is out of range: the call has 1 arguments"
            );
        });
    }

    /// A buffer that a full check refuses is not found by its shape either,
    /// and the full check names what is wrong.
    #[test]
    fn a_lazy_frame_refuses_by_shape_what_a_full_check_refuses() {
        let shape = BufferShape::new(DType::F32, &[2, 3]).unwrap();
        type Defect = fn(&mut OwnedFrame);
        let defects: [(&str, Defect); 5] = [
            ("data is NULL for 24 bytes", |f| {
                f.args[0].raw.data = ptr::null_mut();
            }),
            ("the buffer has struct_size 8, expected at least 48", |f| {
                f.args[0].raw.struct_size = 8;
            }),
            ("dims (rank 2) is NULL", |f| {
                f.args[0].raw.dims = ptr::null_mut()
            }),
            ("the buffer pointer is NULL", |f| {
                f._arg_ptrs[0] = ptr::null_mut();
            }),
            ("rank is -2", |f| f.args[0].raw.rank = -2),
        ];
        for (message, defect) in defects {
            let mut f = frame_with(
                vec![OwnedBuffer::new(XLA_FFI_DataType_F32, &[2, 3], &[0; 24])],
                vec![],
            );
            defect(&mut f);
            lazy(&mut f, |frame| {
                assert!(frame.arg_shaped(0, &shape).is_none(), "{message}");
                let e = frame.arg(0).unwrap_err();
                assert_eq!(e.code, ErrorCode::InvalidArgument);
                assert_eq!(e.message, format!("argument 0: {message}"));
            });
        }
    }

    /// `check` checks every buffer, as `CallFrame::from_raw` does, and
    /// names the target in its error; `f` runs only on a valid frame.
    #[test]
    fn a_lazy_frame_checks_every_buffer_on_request() {
        let mut f = frame_with(
            vec![OwnedBuffer::new(XLA_FFI_DataType_F32, &[2], &[0; 8])],
            vec![OwnedBuffer::new(99, &[1], &[0; 4])],
        );
        let mut ran = false;
        let e = lazy(&mut f, |frame| frame.check(|_| ran = true)).unwrap_err();
        assert!(!ran, "ran on a refused frame");
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert_eq!(
            e.message,
            "target `t`: invalid call frame: result 0: unknown dtype 99"
        );
        let mut f = frame_with(
            vec![OwnedBuffer::new(XLA_FFI_DataType_F32, &[2], &[0; 8])],
            vec![OwnedBuffer::new(XLA_FFI_DataType_S32, &[3, 1], &[0; 12])],
        );
        let dims = lazy(&mut f, |frame| {
            frame.check(|view| view.ret(0).unwrap().dims().to_vec())
        });
        assert_eq!(dims.unwrap(), [3, 1]);
    }

    /// A shape's sizes are computed with `from_raw`'s checks.
    #[test]
    fn buffer_shapes_refuse_what_buffers_refuse() {
        let e = BufferShape::new(DType::F32, &[2, -1]).unwrap_err();
        assert_eq!(e.message, "shape f32[2, -1]: dimension 1 is -1");
        let e = BufferShape::new(DType::F64, &[1 << 62, 4]).unwrap_err();
        assert!(e.message.contains("overflows"), "{}", e.message);
        let bits = BufferShape::new(DType::S4, &[3]).unwrap();
        assert_eq!((bits.element_count(), bits.byte_len()), (3, 2));
    }
}
