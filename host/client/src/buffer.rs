//! A device buffer: element type, dimensions, copy back to the host.

use std::ptr::NonNull;
use std::sync::Arc;

use super::ClientInner;
use plugin_glue::DType;
use plugin_glue::error::{Error, Result};
use plugin_glue::ffi::pjrt::{self, PJRT_Buffer, slot};
use plugin_glue::plugin::raw_slice;

/// A buffer on one device of a [`super::Client`]; destroyed on drop.
pub struct Buffer {
    client: Arc<ClientInner>,
    raw: NonNull<PJRT_Buffer>,
}

// SAFETY: `raw` is a PJRT buffer owned by this object; PjRtBuffer is
// thread-safe (xla/pjrt/pjrt_client.h) and only C API entry points are
// called on it; the client handle is `Send + Sync`.
unsafe impl Send for Buffer {}
// SAFETY: as for `Send`: `&Buffer` methods only call thread-safe PJRT
// queries and copies.
unsafe impl Sync for Buffer {}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer").field("raw", &self.raw).finish()
    }
}

impl Buffer {
    /// Takes ownership of `raw`, a live buffer of `client`.
    pub(crate) fn from_raw(client: Arc<ClientInner>, raw: NonNull<PJRT_Buffer>) -> Buffer {
        Buffer { client, raw }
    }

    pub(crate) fn raw(&self) -> *mut PJRT_Buffer {
        self.raw.as_ptr()
    }

    pub(crate) fn client(&self) -> &Arc<ClientInner> {
        &self.client
    }

    /// The element type.
    ///
    /// # Errors
    ///
    /// [`Error::Pjrt`] if `PJRT_Buffer_ElementType` fails,
    /// [`Error::InvalidInput`] if it returns a type this crate does not know.
    pub fn dtype(&self) -> Result<DType> {
        let plugin = self.client.plugin();
        let mut args = pjrt::PJRT_Buffer_ElementType_Args::new();
        args.buffer = self.raw();
        // SAFETY: `PJRT_Buffer_ElementType` on a live buffer.
        unsafe { plugin.call(slot::PJRT_Buffer_ElementType, &mut args) }?;
        DType::from_pjrt(args.type_).ok_or_else(|| {
            Error::InvalidInput(format!(
                "PJRT_Buffer_ElementType returned unknown PJRT_Buffer_Type {}",
                args.type_
            ))
        })
    }

    /// The dimensions.
    ///
    /// # Errors
    ///
    /// [`Error::Pjrt`] if `PJRT_Buffer_Dimensions` fails.
    pub fn dims(&self) -> Result<Vec<i64>> {
        let plugin = self.client.plugin();
        let mut args = pjrt::PJRT_Buffer_Dimensions_Args::new();
        args.buffer = self.raw();
        // SAFETY: `PJRT_Buffer_Dimensions` on a live buffer.
        unsafe { plugin.call(slot::PJRT_Buffer_Dimensions, &mut args) }?;
        // SAFETY: on success `dims` has `num_dims` entries owned by the
        // buffer, which is alive; they are copied out at once.
        Ok(unsafe { raw_slice(args.dims, args.num_dims) }.to_vec())
    }

    /// Waits until the buffer's contents are computed.
    ///
    /// # Errors
    ///
    /// The error of the computation that produces the buffer, as
    /// [`Error::Pjrt`] naming `PJRT_Buffer_ReadyEvent`.
    pub fn wait_ready(&self) -> Result<()> {
        let plugin = self.client.plugin();
        let mut args = pjrt::PJRT_Buffer_ReadyEvent_Args::new();
        args.buffer = self.raw();
        // SAFETY: `PJRT_Buffer_ReadyEvent` on a live buffer.
        unsafe { plugin.call(slot::PJRT_Buffer_ReadyEvent, &mut args) }?;
        self.client
            .await_event(args.event, "PJRT_Buffer_ReadyEvent")
    }

    /// Copies the buffer to the host: dense, row-major, as
    /// `PJRT_Buffer_ToHostBuffer` lays it out with no host layout.
    ///
    /// # Errors
    ///
    /// [`Error::Pjrt`] naming `PJRT_Buffer_ToHostBuffer` if the copy fails
    /// or the computation that produced the buffer failed.
    pub fn to_host(&self) -> Result<Vec<u8>> {
        let plugin = self.client.plugin();
        let mut args = pjrt::PJRT_Buffer_ToHostBuffer_Args::new();
        args.src = self.raw();
        // SAFETY: `PJRT_Buffer_ToHostBuffer` on a live buffer with
        // `dst = NULL`: it only reports the needed `dst_size`.
        unsafe { plugin.call(slot::PJRT_Buffer_ToHostBuffer, &mut args) }?;
        self.client
            .await_event(args.event, "PJRT_Buffer_ToHostBuffer")?;
        let size = args.dst_size;

        let mut host = vec![0u8; size];
        let mut args = pjrt::PJRT_Buffer_ToHostBuffer_Args::new();
        args.src = self.raw();
        args.dst = host.as_mut_ptr().cast();
        args.dst_size = size;
        // SAFETY: as above, now with `dst` pointing at `size` writable bytes
        // that stay alive (and unaliased) until the event below has fired.
        unsafe { plugin.call(slot::PJRT_Buffer_ToHostBuffer, &mut args) }?;
        self.client
            .await_event(args.event, "PJRT_Buffer_ToHostBuffer")?;
        Ok(host)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let plugin = self.client.plugin();
        let mut args = pjrt::PJRT_Buffer_Destroy_Args::new();
        args.buffer = self.raw();
        // SAFETY: `PJRT_Buffer_Destroy` on the buffer we own, destroyed
        // exactly once; the client is still alive (we hold an `Arc` to it).
        if let Err(e) = unsafe { plugin.call(slot::PJRT_Buffer_Destroy, &mut args) } {
            tracing::warn!("cannot destroy a PJRT buffer: {e}");
        }
    }
}
