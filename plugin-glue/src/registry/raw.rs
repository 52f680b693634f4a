//! Reading XLA's frames on the call path, before validation: the frame
//! header, the metadata probe's extension chain, error reporting through
//! `frame->api`, and panic payloads.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use crate::ffi::xla_ffi::{
    XLA_FFI_Api, XLA_FFI_CallFrame, XLA_FFI_CallFrame_STRUCT_SIZE, XLA_FFI_Error,
    XLA_FFI_Error_Code, XLA_FFI_Error_Code_INVALID_ARGUMENT, XLA_FFI_ExecutionStage,
    XLA_FFI_Extension_Base, XLA_FFI_Extension_Metadata, XLA_FFI_Metadata,
    XLA_FFI_Metadata_Extension, XLA_FFI_Metadata_Extension_STRUCT_SIZE,
    XLA_FFI_Metadata_STRUCT_SIZE,
};
use crate::frame::ApiTable;

/// Longest extension chain walked when looking for the metadata extension.
const MAX_EXTENSIONS: usize = 16;

/// The frame fields the dispatcher needs before validation.
#[derive(Clone, Copy)]
pub(super) struct FrameHeader {
    pub(super) extension_start: *mut XLA_FFI_Extension_Base,
    pub(super) api: *const XLA_FFI_Api,
    pub(super) stage: XLA_FFI_ExecutionStage,
}

impl FrameHeader {
    /// Reads the header of a frame whose `struct_size` is at least 168;
    /// `None` for NULL, misaligned or short frames.
    ///
    /// # Safety
    ///
    /// A non-NULL `frame` must point at a readable `XLA_FFI_CallFrame`
    /// prefix of at least its `struct_size` bytes.
    pub(super) unsafe fn read(frame: *const XLA_FFI_CallFrame) -> Option<FrameHeader> {
        if frame.is_null() || !frame.addr().is_multiple_of(align_of::<XLA_FFI_CallFrame>()) {
            return None;
        }
        // SAFETY: non-NULL, aligned; the frame starts with size_t struct_size.
        let struct_size = unsafe { ptr::addr_of!((*frame).struct_size).read() };
        if struct_size < XLA_FFI_CallFrame_STRUCT_SIZE {
            return None;
        }
        // SAFETY: all three fields lie within the first 168 bytes.
        unsafe {
            Some(FrameHeader {
                extension_start: ptr::addr_of!((*frame).extension_start).read(),
                api: ptr::addr_of!((*frame).api).read(),
                stage: ptr::addr_of!((*frame).stage).read(),
            })
        }
    }

    pub(super) fn api_table(&self) -> Option<ApiTable> {
        // SAFETY: `frame->api` of an XLA frame is the runtime's table, which
        // lives for the life of the process.
        unsafe { ApiTable::new(self.api) }
    }

    /// `XLA_FFI_Error_Create(message, code)` through the frame's API, or
    /// NULL (logged) if the runtime gives no way to report errors.
    pub(super) fn error(&self, code: XLA_FFI_Error_Code, message: &str) -> *mut XLA_FFI_Error {
        match self
            .api_table()
            .and_then(|api| api.create_error(message, code))
        {
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
}

/// An error through the frame's API, for frames the dispatcher could not
/// route (no header needed beyond `api`).
///
/// # Safety
///
/// As for [`dispatch`](super::dispatch).
pub(super) unsafe fn fail(
    frame: *mut XLA_FFI_CallFrame,
    code: XLA_FFI_Error_Code,
    message: &str,
) -> *mut XLA_FFI_Error {
    // SAFETY: caller contract.
    match unsafe { FrameHeader::read(frame) } {
        Some(header) => header.error(code, message),
        None => {
            tracing::error!("cannot report an error to XLA (unreadable call frame): {message}");
            ptr::null_mut()
        }
    }
}

/// Reports a frame too short or misaligned to read.
///
/// # Safety
///
/// As for [`dispatch`](super::dispatch).
pub(super) unsafe fn malformed(frame: *mut XLA_FFI_CallFrame, target: &str) -> *mut XLA_FFI_Error {
    let message =
        format!("target `{target}`: unreadable call frame (NULL, misaligned or struct_size < 168)");
    if frame.is_null() || !frame.addr().is_multiple_of(align_of::<XLA_FFI_CallFrame>()) {
        tracing::error!("{message}");
        return ptr::null_mut();
    }
    // SAFETY: non-NULL and aligned; struct_size is the first field.
    let struct_size = unsafe { ptr::addr_of!((*frame).struct_size).read() };
    let api_end = std::mem::offset_of!(XLA_FFI_CallFrame, api) + size_of::<usize>();
    if struct_size < api_end {
        tracing::error!("{message}");
        return ptr::null_mut();
    }
    // SAFETY: `api` lies within the frame's struct_size.
    let api = unsafe { ptr::addr_of!((*frame).api).read() };
    let header = FrameHeader {
        extension_start: ptr::null_mut(),
        api,
        stage: 0,
    };
    header.error(XLA_FFI_Error_Code_INVALID_ARGUMENT, &message)
}

/// Walks `extension_start` for the metadata extension: `Ok(None)` if there
/// is none (not a probe), `Ok(Some(metadata))` for a usable one, `Err` if
/// the chain or the metadata is malformed.
///
/// # Safety
///
/// Every non-NULL, aligned extension in the chain must be readable for its
/// `struct_size`, and a metadata extension's `metadata` must be writable.
pub(super) unsafe fn find_metadata(
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
pub(super) unsafe fn peek_error_message(api: &ApiTable, error: *mut XLA_FFI_Error) -> String {
    // SAFETY: a live error of the runtime behind `api` (caller contract).
    match unsafe { api.error_message(error) } {
        None => "(the runtime cannot read error messages)".into(),
        Some(None) => "(no message)".into(),
        Some(Some(message)) => message,
    }
}

/// The text of a panic payload.
pub(super) fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "(a non-string panic payload)"
    }
}

/// Drops a panic payload without letting a panicking `Drop` escape.
pub(super) fn drop_payload(payload: Box<dyn std::any::Any + Send>) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
}
