//! A small PJRT client: create a client, compile StableHLO, move buffers in
//! and out, execute over one or several devices.
//!
//! ```text
//! Plugin ──► Client ──► Executable ──► execute() ──► Vec<Vec<Buffer>>
//!              └──────► Buffer (buffer_from_host, to_host)
//! ```
//!
//! Every object owns its PJRT handle and destroys it on drop; buffers and
//! executables keep their client alive, and the client keeps the plugin.
//! Events are always awaited and destroyed; an error carried by an event
//! surfaces as [`Error::Pjrt`] with XLA's code and message, named after the
//! call that produced the event.
//!
//! # Examples
//!
//! ```no_run
//! use cyxla_pjrt_client::Client;
//! use plugin_glue::plugin::Plugin;
//! use plugin_glue::DType;
//!
//! // SAFETY: the default XLA CPU plugin is a PJRT plugin.
//! let plugin = unsafe { Plugin::load(".venv/lib/python3.11/site-packages/lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so".as_ref()) }?;
//! let client = Client::new(&plugin, Some(1))?;
//! let exe = client.compile(br#"module @m {
//!   func.func public @main(%x: tensor<2xf32>) -> tensor<2xf32> {
//!     %0 = stablehlo.add %x, %x : tensor<2xf32>
//!     return %0 : tensor<2xf32>
//!   }
//! }"#, 1)?;
//! let bytes: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
//! let x = client.buffer_from_host(&bytes, DType::F32, &[2], 0)?;
//! let out = exe.execute(&[vec![&x]])?;
//! let doubled = out[0][0].to_host()?;
//! assert_eq!(doubled.len(), 8);
//! # Ok::<(), plugin_glue::Error>(())
//! ```

mod buffer;
mod executable;
mod proto;

use std::ptr::NonNull;
use std::sync::Arc;

pub use buffer::Buffer;
pub use executable::Executable;

use plugin_glue::DType;
use plugin_glue::error::{Error, Result};
use plugin_glue::ffi::pjrt::{self, ApiFunction, PJRT_Client, PJRT_Device, PJRT_Event, slot};
use plugin_glue::plugin::{Plugin, raw_slice};

/// `PJRT_Client_Create` option naming the number of CPU devices.
pub const CPU_DEVICE_COUNT_OPTION: &str = "cpu_device_count";

/// The program format handed to `PJRT_Client_Compile`: StableHLO as text or
/// MLIR bytecode (including `jax.export` artifacts).
pub const PROGRAM_FORMAT: &str = "mlir";

/// A PJRT client on a loaded plugin.
///
/// # Thread safety
///
/// `Client`, [`Executable`] and [`Buffer`] are `Send + Sync`; PJRT clients,
/// executables and buffers are thread-safe objects.
#[derive(Clone)]
pub struct Client {
    inner: Arc<ClientInner>,
}

/// What buffers and executables share with their client.
pub(crate) struct ClientInner {
    plugin: Plugin,
    raw: NonNull<PJRT_Client>,
    /// Addressable devices, owned by the client.
    devices: Vec<NonNull<PJRT_Device>>,
}

// SAFETY: `raw` and `devices` are handles owned by (or, for devices, owned by
// the client behind) this object; XLA's PjRtClient is thread-safe
// (xla/pjrt/pjrt_client.h), and this crate calls only C API entry points on
// them, which may run on any thread. The plugin handle is `Send + Sync`.
unsafe impl Send for ClientInner {}
// SAFETY: as for `Send`: shared use only calls thread-safe PJRT entry points.
unsafe impl Sync for ClientInner {}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("plugin", &self.inner.plugin.path())
            .field("devices", &self.inner.devices.len())
            .finish()
    }
}

impl Client {
    /// Creates a client. `devices = Some(n)` passes the `cpu_device_count`
    /// option (kInt64) to ask the CPU plugin for `n` devices; `None` keeps
    /// the plugin's default (4 on the examined CPU plugins).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidInput`] for `Some(0)`; [`Error::FunctionNotAvailable`]
    /// / [`Error::NullFunction`] if the plugin lacks a client function;
    /// [`Error::Pjrt`] if `PJRT_Client_Create` or
    /// `PJRT_Client_AddressableDevices` fails.
    pub fn new(plugin: &Plugin, devices: Option<usize>) -> Result<Client> {
        let mut options = Vec::new();
        if let Some(n) = devices {
            let count = i64::try_from(n).ok().filter(|n| *n >= 1).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "a PJRT client needs at least one device, got devices = {n}"
                ))
            })?;
            options.push(pjrt::PJRT_NamedValue::int64(CPU_DEVICE_COUNT_OPTION, count));
        }
        plugin.function(slot::PJRT_Client_Create)?;
        // Look up everything needed to clean up before creating anything.
        plugin.function(slot::PJRT_Client_Destroy)?;
        plugin.function(slot::PJRT_Client_AddressableDevices)?;

        let mut args = pjrt::PJRT_Client_Create_Args::new();
        args.create_options = options.as_ptr();
        args.num_options = options.len();
        // SAFETY: `args` is initialised and `options` (with its static
        // names) outlives the call; the key-value callbacks are NULL (single
        // process).
        unsafe { plugin.call(slot::PJRT_Client_Create, &mut args) }?;
        let raw = returned(args.client, slot::PJRT_Client_Create, "client")?;
        let mut inner = ClientInner {
            plugin: plugin.clone(),
            raw,
            devices: Vec::new(),
        };

        let mut args = pjrt::PJRT_Client_AddressableDevices_Args::new();
        args.client = raw.as_ptr();
        // SAFETY: `PJRT_Client_AddressableDevices` on `raw`, a live client.
        unsafe { plugin.call(slot::PJRT_Client_AddressableDevices, &mut args) }?;
        // SAFETY: on success the plugin set a device array of
        // `num_addressable_devices` entries owned by the client.
        let devices = unsafe { raw_slice(args.addressable_devices, args.num_addressable_devices) };
        inner.devices = non_null_devices(devices, slot::PJRT_Client_AddressableDevices.name())?;
        Ok(Client {
            inner: Arc::new(inner),
        })
    }

    /// The plugin this client runs on.
    pub fn plugin(&self) -> &Plugin {
        &self.inner.plugin
    }

    /// The platform name (`cpu` for the CPU plugins).
    ///
    /// # Errors
    ///
    /// [`Error::Pjrt`] if `PJRT_Client_PlatformName` fails.
    pub fn platform_name(&self) -> Result<String> {
        let mut args = pjrt::PJRT_Client_PlatformName_Args::new();
        args.client = self.inner.raw.as_ptr();
        // SAFETY: `PJRT_Client_PlatformName` on a live client.
        unsafe {
            self.inner
                .plugin
                .call(slot::PJRT_Client_PlatformName, &mut args)
        }?;
        // SAFETY: on success `platform_name` has `platform_name_size` bytes
        // owned by the client, which is alive.
        let bytes = unsafe { raw_slice(args.platform_name.cast::<u8>(), args.platform_name_size) };
        Ok(String::from_utf8_lossy(bytes).into_owned())
    }

    /// Number of addressable devices.
    ///
    /// # Errors
    ///
    /// None today (the devices are listed when the client is created); the
    /// `Result` leaves room for plugins that list them lazily.
    pub fn addressable_device_count(&self) -> Result<usize> {
        Ok(self.inner.devices.len())
    }

    /// Compiles a StableHLO program (text or MLIR bytecode, format `mlir`)
    /// for `replicas` devices (1 partition).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidInput`] if `replicas` is 0 or more than the client's
    /// devices (XLA would abort the process on 0); [`Error::Pjrt`] naming
    /// `PJRT_Client_Compile` with XLA's code and message when the program
    /// does not compile (e.g. NOT_FOUND for a custom-call target without a
    /// handler), or naming the executable query that failed.
    pub fn compile(&self, program: &[u8], replicas: usize) -> Result<Executable> {
        let devices = self.inner.devices.len();
        if replicas == 0 || replicas > devices {
            return Err(Error::InvalidInput(format!(
                "cannot compile for {replicas} replica(s): the client has {devices} device(s)"
            )));
        }
        let options = proto::compile_options(replicas as u64, 1);
        Executable::compile(self.inner.clone(), program, PROGRAM_FORMAT, &options)
    }

    /// Copies `bytes` (dense, row-major, little-endian elements of `dtype`
    /// with shape `dims`) into a new buffer on device `device` (an index
    /// into the addressable devices).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidInput`] if `device` is out of range, a dimension is
    /// negative, `dtype` is `Token`, or `bytes.len()` is not the size of
    /// `dims` elements of `dtype`; [`Error::Pjrt`] if PJRT rejects the copy.
    pub fn buffer_from_host(
        &self,
        bytes: &[u8],
        dtype: DType,
        dims: &[i64],
        device: usize,
    ) -> Result<Buffer> {
        let inner = &self.inner;
        let target = *inner.devices.get(device).ok_or_else(|| {
            Error::InvalidInput(format!(
                "device {device} does not exist: the client has {} device(s)",
                inner.devices.len()
            ))
        })?;
        let expected = host_byte_size(dtype, dims)?;
        if bytes.len() as u64 != expected {
            return Err(Error::InvalidInput(format!(
                "host data for {}{:?} must be {expected} bytes, got {}",
                dtype.name(),
                dims,
                bytes.len()
            )));
        }
        inner
            .plugin
            .function(slot::PJRT_Client_BufferFromHostBuffer)?;
        inner.plugin.function(slot::PJRT_Buffer_Destroy)?;
        let mut args = pjrt::PJRT_Client_BufferFromHostBuffer_Args::new();
        args.client = inner.raw.as_ptr();
        args.data = bytes.as_ptr().cast();
        args.type_ = dtype.to_pjrt();
        args.dims = dims.as_ptr();
        args.num_dims = dims.len();
        args.host_buffer_semantics = pjrt::PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
        args.device = target.as_ptr();
        // SAFETY: `PJRT_Client_BufferFromHostBuffer` on a live client and
        // device; `bytes` holds exactly the dense data described by
        // `type_`/`dims` (checked above) and, with kImmutableOnlyDuringCall,
        // is only read during the call.
        unsafe {
            inner
                .plugin
                .call(slot::PJRT_Client_BufferFromHostBuffer, &mut args)
        }?;
        let done = args.done_with_host_buffer;
        let function = slot::PJRT_Client_BufferFromHostBuffer;
        let buffer = returned(args.buffer, function, "buffer")
            .map(|raw| Buffer::from_raw(inner.clone(), raw));
        let awaited = inner.await_event(done, function.name());
        let buffer = buffer?;
        awaited?;
        Ok(buffer)
    }
}

/// The `what` handle that the function in `slot` returned on success,
/// checked to be non-NULL.
fn returned<T, F>(handle: *mut T, slot: ApiFunction<F>, what: &str) -> Result<NonNull<T>> {
    let function = slot.name();
    NonNull::new(handle)
        .ok_or_else(|| Error::InvalidInput(format!("{function} succeeded but returned no {what}")))
}

/// The devices `function` listed, each checked to be non-NULL.
fn non_null_devices(
    devices: &[*mut PJRT_Device],
    function: &str,
) -> Result<Vec<NonNull<PJRT_Device>>> {
    devices
        .iter()
        .map(|d| {
            NonNull::new(*d)
                .ok_or_else(|| Error::InvalidInput(format!("{function} returned a NULL device")))
        })
        .collect()
}

/// Bytes of a dense array of `dims` elements of `dtype`.
fn host_byte_size(dtype: DType, dims: &[i64]) -> Result<u64> {
    if dtype == DType::Token {
        return Err(Error::InvalidInput(
            "a token cannot be copied from the host".into(),
        ));
    }
    let mut elements: u64 = 1;
    for d in dims {
        let d = u64::try_from(*d).map_err(|_| {
            Error::InvalidInput(format!("dimensions {dims:?} contain a negative size"))
        })?;
        elements = elements.checked_mul(d).ok_or_else(|| {
            Error::InvalidInput(format!("dimensions {dims:?} overflow the element count"))
        })?;
    }
    dtype.byte_size(elements).ok_or_else(|| {
        Error::InvalidInput(format!("{}{dims:?} is too large to address", dtype.name()))
    })
}

impl ClientInner {
    pub(crate) fn plugin(&self) -> &Plugin {
        &self.plugin
    }

    /// Awaits `event` (NULL is fine) and destroys it. The event's error is
    /// reported as an error of `function`, the call that produced it.
    pub(crate) fn await_event(&self, event: *mut PJRT_Event, function: &'static str) -> Result<()> {
        if event.is_null() {
            return Ok(());
        }
        let awaited = self
            .plugin
            .function(slot::PJRT_Event_Await)
            .and_then(|await_fn| {
                let mut args = pjrt::PJRT_Event_Await_Args::new();
                args.event = event;
                // SAFETY: the plugin's `PJRT_Event_Await` on a live event
                // owned by us; it blocks until the event is ready.
                let error = unsafe { await_fn(&mut args) };
                // SAFETY: `error` is what the plugin's function just
                // returned, ours.
                unsafe { self.plugin.check(function, error) }
            });
        let destroyed = self.destroy_event(event);
        awaited.and(destroyed)
    }

    fn destroy_event(&self, event: *mut PJRT_Event) -> Result<()> {
        let mut args = pjrt::PJRT_Event_Destroy_Args::new();
        args.event = event;
        // SAFETY: `PJRT_Event_Destroy` on a live event owned by us,
        // destroyed exactly once.
        unsafe { self.plugin.call(slot::PJRT_Event_Destroy, &mut args) }
    }
}

impl Drop for ClientInner {
    fn drop(&mut self) {
        let mut args = pjrt::PJRT_Client_Destroy_Args::new();
        args.client = self.raw.as_ptr();
        // SAFETY: `PJRT_Client_Destroy` on the client we own; every buffer
        // and executable holds an `Arc` to this object, so none outlives the
        // client.
        if let Err(e) = unsafe { self.plugin.call(slot::PJRT_Client_Destroy, &mut args) } {
            tracing::warn!("cannot destroy the PJRT client: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_byte_sizes() {
        assert_eq!(host_byte_size(DType::F32, &[2, 3]).unwrap(), 24);
        assert_eq!(host_byte_size(DType::C128, &[]).unwrap(), 16);
        assert_eq!(host_byte_size(DType::Pred, &[0, 5]).unwrap(), 0);
        assert!(host_byte_size(DType::F32, &[-1]).is_err());
        assert!(host_byte_size(DType::Token, &[]).is_err());
        assert!(host_byte_size(DType::F64, &[i64::MAX, i64::MAX]).is_err());
    }
}
