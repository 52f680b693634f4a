//! A compiled program: its signature and its execution over N devices.

use std::ffi::c_char;
use std::ptr::{self, NonNull};
use std::sync::Arc;

use super::{Buffer, ClientInner, non_null_devices, proto, returned};
use plugin_glue::DType;
use plugin_glue::error::ErrorCode;
use plugin_glue::error::{Error, Result};
use plugin_glue::ffi::pjrt::{
    self, PJRT_Buffer, PJRT_Device, PJRT_Event, PJRT_Executable, PJRT_LoadedExecutable, slot,
};
use plugin_glue::plugin::raw_slice;

const EXECUTE: &str = "PJRT_LoadedExecutable_Execute";

/// A compiled program, loaded on the devices it runs on; destroyed on drop
/// (its `PJRT_Executable`, then its `PJRT_LoadedExecutable`).
pub struct Executable {
    client: Arc<ClientInner>,
    loaded: NonNull<PJRT_LoadedExecutable>,
    /// From `PJRT_LoadedExecutable_GetExecutable`; owned, destroyed first.
    executable: Option<NonNull<PJRT_Executable>>,
    /// Devices it runs on, owned by the loaded executable.
    devices: Vec<NonNull<PJRT_Device>>,
    num_outputs: usize,
}

// SAFETY: `loaded`/`executable` are PJRT handles owned by this object; XLA's
// PjRtLoadedExecutable is thread-safe (concurrent Execute calls on one
// executable were measured: docs/abi.md, "Concurrency") and only C API entry points
// are called on them; the client handle is `Send + Sync`.
unsafe impl Send for Executable {}
// SAFETY: as for `Send`: `&Executable` methods only run thread-safe PJRT
// queries and `Execute`.
unsafe impl Sync for Executable {}

impl std::fmt::Debug for Executable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executable")
            .field("devices", &self.devices.len())
            .field("num_outputs", &self.num_outputs)
            .finish()
    }
}

impl Executable {
    /// Compiles `program` (`format`) with serialized `options`.
    pub(super) fn compile(
        client: Arc<ClientInner>,
        program: &[u8],
        format: &str,
        options: &[u8],
    ) -> Result<Executable> {
        let plugin = client.plugin();
        plugin.function(slot::PJRT_Client_Compile)?;
        // Everything needed to clean up and to run, looked up before compiling.
        plugin.function(slot::PJRT_LoadedExecutable_Destroy)?;
        plugin.function(slot::PJRT_LoadedExecutable_Execute)?;

        let mut code = pjrt::PJRT_Program::new();
        // The C API takes `char*`; compile only reads it.
        code.code = program.as_ptr().cast::<c_char>().cast_mut();
        code.code_size = program.len();
        code.format = format.as_ptr().cast();
        code.format_size = format.len();
        let mut args = pjrt::PJRT_Client_Compile_Args::new();
        args.client = client.raw.as_ptr();
        args.program = &code;
        args.compile_options = options.as_ptr().cast();
        args.compile_options_size = options.len();
        // SAFETY: `PJRT_Client_Compile` on a live client; `code`, `program`,
        // `format` and `options` outlive the call, and `options` sets
        // num_replicas and num_partitions ≥ 1 (without them XLA aborts the
        // process).
        unsafe { plugin.call(slot::PJRT_Client_Compile, &mut args) }?;
        let loaded = returned(args.executable, slot::PJRT_Client_Compile, "executable")?;
        let mut exe = Executable {
            client: client.clone(),
            loaded,
            executable: None,
            devices: Vec::new(),
            num_outputs: 0,
        };

        plugin.function(slot::PJRT_LoadedExecutable_GetExecutable)?;
        plugin.function(slot::PJRT_Executable_Destroy)?;
        let mut args = pjrt::PJRT_LoadedExecutable_GetExecutable_Args::new();
        args.loaded_executable = loaded.as_ptr();
        // SAFETY: `PJRT_LoadedExecutable_GetExecutable` on a live loaded
        // executable.
        unsafe { plugin.call(slot::PJRT_LoadedExecutable_GetExecutable, &mut args) }?;
        let executable = returned(
            args.executable,
            slot::PJRT_LoadedExecutable_GetExecutable,
            "executable",
        )?;
        exe.executable = Some(executable);

        let mut args = pjrt::PJRT_Executable_NumOutputs_Args::new();
        args.executable = executable.as_ptr();
        // SAFETY: `PJRT_Executable_NumOutputs` on a live executable.
        unsafe { plugin.call(slot::PJRT_Executable_NumOutputs, &mut args) }?;
        exe.num_outputs = args.num_outputs;

        let mut args = pjrt::PJRT_LoadedExecutable_AddressableDevices_Args::new();
        args.executable = loaded.as_ptr();
        // SAFETY: `PJRT_LoadedExecutable_AddressableDevices` on a live loaded
        // executable.
        unsafe { plugin.call(slot::PJRT_LoadedExecutable_AddressableDevices, &mut args) }?;
        // SAFETY: on success the plugin set an array of
        // `num_addressable_devices` devices owned by the executable.
        let devices = unsafe { raw_slice(args.addressable_devices, args.num_addressable_devices) };
        exe.devices = non_null_devices(
            devices,
            slot::PJRT_LoadedExecutable_AddressableDevices.name(),
        )?;
        if exe.devices.is_empty() {
            return Err(Error::InvalidInput(
                "the compiled executable has no addressable device".into(),
            ));
        }
        Ok(exe)
    }

    fn executable(&self) -> *mut PJRT_Executable {
        self.executable.map_or(ptr::null_mut(), NonNull::as_ptr)
    }

    /// Number of outputs per device.
    ///
    /// # Errors
    ///
    /// None today (read at compile time).
    pub fn num_outputs(&self) -> Result<usize> {
        Ok(self.num_outputs)
    }

    /// Number of devices it runs on (its replicas); `execute` takes one
    /// argument list per device.
    pub fn num_devices(&self) -> usize {
        self.devices.len()
    }

    /// Element type and dimensions of each output
    /// (`PJRT_Executable_OutputElementTypes` / `OutputDimensions`).
    ///
    /// # Errors
    ///
    /// [`Error::Pjrt`] if either call fails, [`Error::InvalidInput`] if they
    /// disagree or name an unknown type.
    pub fn output_shapes(&self) -> Result<Vec<(DType, Vec<i64>)>> {
        let plugin = self.client.plugin();
        let mut args = pjrt::PJRT_Executable_OutputElementTypes_Args::new();
        args.executable = self.executable();
        // SAFETY: `PJRT_Executable_OutputElementTypes` on a live executable.
        unsafe { plugin.call(slot::PJRT_Executable_OutputElementTypes, &mut args) }?;
        // SAFETY: on success `output_types` has `num_output_types` entries
        // owned by the executable, which is alive; copied out at once.
        let types = unsafe { raw_slice(args.output_types, args.num_output_types) }.to_vec();

        let mut args = pjrt::PJRT_Executable_OutputDimensions_Args::new();
        args.executable = self.executable();
        // SAFETY: `PJRT_Executable_OutputDimensions` on a live executable.
        unsafe { plugin.call(slot::PJRT_Executable_OutputDimensions, &mut args) }?;
        // SAFETY: on success `dim_sizes` has `num_outputs` entries owned by
        // the executable.
        let ranks = unsafe { raw_slice(args.dim_sizes, args.num_outputs) }.to_vec();
        let total: usize = ranks.iter().sum();
        // SAFETY: `dims` holds the concatenation of all outputs' dimensions,
        // `sum(dim_sizes)` entries, owned by the executable.
        let dims = unsafe { raw_slice(args.dims, total) };
        if ranks.len() != types.len() {
            return Err(Error::InvalidInput(format!(
                "PJRT_Executable_OutputElementTypes lists {} outputs, OutputDimensions {}",
                types.len(),
                ranks.len()
            )));
        }
        let mut shapes = Vec::with_capacity(types.len());
        let mut start = 0;
        for (k, (t, rank)) in types.iter().zip(&ranks).enumerate() {
            let dtype = DType::from_pjrt(*t).ok_or_else(|| {
                Error::InvalidInput(format!("output {k} has unknown PJRT_Buffer_Type {t}"))
            })?;
            shapes.push((dtype, dims[start..start + rank].to_vec()));
            start += rank;
        }
        Ok(shapes)
    }

    /// Element type and dimensions of each parameter of the entry
    /// computation, read from the optimized program
    /// (`PJRT_Executable_OptimizedProgram`, a serialized
    /// `HloModuleProtoWithConfig`).
    ///
    /// # Errors
    ///
    /// [`Error::Pjrt`] if the call fails; [`Error::InvalidInput`] if the
    /// program cannot be decoded or a parameter is a tuple.
    pub fn parameter_shapes(&self) -> Result<Vec<(DType, Vec<i64>)>> {
        const FUNCTION: &str = "PJRT_Executable_OptimizedProgram";
        let plugin = self.client.plugin();
        plugin.function(slot::PJRT_Executable_OptimizedProgram)?;

        let mut program = pjrt::PJRT_Program::new();
        let mut args = pjrt::PJRT_Executable_OptimizedProgram_Args::new();
        args.executable = self.executable();
        args.program = &mut program;
        // SAFETY: `PJRT_Executable_OptimizedProgram` on a live executable
        // with `program.code = NULL`: it sets `code_size` and the format.
        unsafe { plugin.call(slot::PJRT_Executable_OptimizedProgram, &mut args) }?;

        let mut code = vec![0u8; program.code_size];
        program.code = code.as_mut_ptr().cast();
        program.code_size = code.len();
        let mut args = pjrt::PJRT_Executable_OptimizedProgram_Args::new();
        args.executable = self.executable();
        args.program = &mut program;
        // SAFETY: as above, now with `code` pointing at `code_size` writable
        // bytes that outlive the call.
        unsafe { plugin.call(slot::PJRT_Executable_OptimizedProgram, &mut args) }?;
        code.truncate(program.code_size.min(code.len()));
        // SAFETY: the plugin set `format`/`format_size` to a string it owns
        // (a static constant in XLA).
        let format = unsafe { raw_slice(program.format.cast::<u8>(), program.format_size) };
        let format = String::from_utf8_lossy(format).into_owned();

        proto::optimized_program_parameters(&format, &code).map_err(|e| {
            Error::InvalidInput(format!(
                "cannot read the parameters from {FUNCTION} ({format}, {} bytes): {e}",
                code.len()
            ))
        })
    }

    /// Runs the program once on each of its devices: `args[d]` are the
    /// arguments for device `d` (as many lists as [`Executable::num_devices`],
    /// each with the same length). Returns each device's outputs once the
    /// computation has finished.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidInput`] for a wrong number of argument lists, lists of
    /// different lengths, or a buffer from another client; [`Error::Pjrt`]
    /// naming `PJRT_LoadedExecutable_Execute` with XLA's code and message if
    /// the execution fails, synchronously or asynchronously. Asynchronous
    /// failures are read from the device-complete events and the outputs'
    /// ready events, and reported as the handler raised them (PJRT's
    /// `Compute error: ` / `Buffer Definition Event: ` wrappers removed, the
    /// original code kept), the same on P81, P106 and P115.
    pub fn execute(&self, args: &[Vec<&Buffer>]) -> Result<Vec<Vec<Buffer>>> {
        let num_devices = self.devices.len();
        if args.len() != num_devices {
            return Err(Error::InvalidInput(format!(
                "the executable runs on {num_devices} device(s) and needs as many argument lists, got {}",
                args.len()
            )));
        }
        let num_args = args[0].len();
        for (d, list) in args.iter().enumerate() {
            if list.len() != num_args {
                return Err(Error::InvalidInput(format!(
                    "argument list {d} has {} buffer(s), list 0 has {num_args}",
                    list.len()
                )));
            }
            if let Some(k) = list
                .iter()
                .position(|b| !Arc::ptr_eq(b.client(), &self.client))
            {
                return Err(Error::InvalidInput(format!(
                    "argument {k} for device {d} belongs to another client"
                )));
            }
        }
        let plugin = self.client.plugin();
        plugin.function(slot::PJRT_LoadedExecutable_Execute)?;
        plugin.function(slot::PJRT_Buffer_Destroy)?;

        let arg_buffers: Vec<Vec<*mut PJRT_Buffer>> = args
            .iter()
            .map(|list| list.iter().map(|b| b.raw()).collect())
            .collect();
        let arg_lists: Vec<*const *mut PJRT_Buffer> =
            arg_buffers.iter().map(|list| list.as_ptr()).collect();
        let mut outputs: Vec<Vec<*mut PJRT_Buffer>> =
            vec![vec![ptr::null_mut(); self.num_outputs]; num_devices];
        let output_lists: Vec<*mut *mut PJRT_Buffer> =
            outputs.iter_mut().map(|list| list.as_mut_ptr()).collect();
        let mut events: Vec<*mut PJRT_Event> = vec![ptr::null_mut(); num_devices];

        let mut options = pjrt::PJRT_ExecuteOptions::new();
        let mut call = pjrt::PJRT_LoadedExecutable_Execute_Args::new();
        call.executable = self.loaded.as_ptr();
        call.options = &mut options;
        call.argument_lists = arg_lists.as_ptr();
        call.num_devices = num_devices;
        call.num_args = num_args;
        call.output_lists = output_lists.as_ptr();
        call.device_complete_events = events.as_mut_ptr();
        // SAFETY: `PJRT_LoadedExecutable_Execute` on a live loaded
        // executable; `argument_lists` is `[num_devices][num_args]` live
        // buffers of this client (checked above) that `args` keeps alive;
        // `output_lists` is caller-allocated `[num_devices][num_outputs]` and
        // `device_complete_events` `[num_devices]`, all outliving the call.
        unsafe { plugin.call(slot::PJRT_LoadedExecutable_Execute, &mut call) }?;
        // The plugin wrote through `output_lists`, which point into `outputs`.
        drop(output_lists);

        // Own every output first, so that they are destroyed on any error below.
        let mut results: Vec<Vec<Buffer>> = Vec::with_capacity(num_devices);
        let mut missing = None;
        for (d, list) in outputs.iter().enumerate() {
            let mut owned = Vec::with_capacity(list.len());
            for (k, raw) in list.iter().enumerate() {
                match NonNull::new(*raw) {
                    Some(raw) => owned.push(Buffer::from_raw(self.client.clone(), raw)),
                    None => missing = missing.or(Some((d, k))),
                }
            }
            results.push(owned);
        }

        // Await every buffer and every device; keep the first error of each kind.
        let mut buffer_error = None;
        for buffer in results.iter().flatten() {
            if let Err(e) = buffer.wait_ready() {
                buffer_error.get_or_insert(rename(e, EXECUTE));
            }
        }
        let mut device_error = None;
        for event in events {
            if let Err(e) = self.client.await_event(event, EXECUTE) {
                device_error.get_or_insert(e);
            }
        }
        if let Some(e) = reconcile(device_error, buffer_error) {
            return Err(e);
        }
        if let Some((d, k)) = missing {
            return Err(Error::InvalidInput(format!(
                "{EXECUTE} succeeded but left output {k} of device {d} empty"
            )));
        }
        Ok(results)
    }
}

/// Wrappers that PJRT puts around a failed execution's status: P81 reports
/// the device event as INTERNAL `Compute error: <message>`; output buffers'
/// ready events say `Buffer Definition Event: <message>` (P81, P106) with the
/// original code.
const WRAPPERS: [&str; 2] = ["Compute error: ", "Buffer Definition Event: "];

fn unwrapped(message: &str) -> &str {
    WRAPPERS
        .iter()
        .find_map(|w| message.strip_prefix(w))
        .unwrap_or(message)
}

/// The error of a failed execution, from what the device-complete event and
/// the output buffers' ready events said. When both carry the same status
/// under PJRT's wrappers, that status is returned as the handler raised it:
/// the message without the wrapper, and the buffer's code where the device
/// event only says INTERNAL. Otherwise the device event's error wins.
fn reconcile(device: Option<Error>, buffer: Option<Error>) -> Option<Error> {
    match (device, buffer) {
        (
            Some(Error::Pjrt {
                function,
                code: device_code,
                message: device_message,
            }),
            Some(Error::Pjrt {
                code: buffer_code,
                message: buffer_message,
                ..
            }),
        ) => {
            let core = unwrapped(&device_message);
            if core == unwrapped(&buffer_message) {
                let code = if device_code == ErrorCode::Internal {
                    buffer_code
                } else {
                    device_code
                };
                Some(Error::Pjrt {
                    function,
                    code,
                    message: core.to_owned(),
                })
            } else {
                Some(Error::Pjrt {
                    function,
                    code: device_code,
                    message: device_message,
                })
            }
        }
        (Some(device), _) => Some(device),
        (None, buffer) => buffer,
    }
}

/// Reports a PJRT error as coming from `function`.
fn rename(error: Error, function: &'static str) -> Error {
    match error {
        Error::Pjrt { code, message, .. } => Error::Pjrt {
            function,
            code,
            message,
        },
        other => other,
    }
}

impl Drop for Executable {
    fn drop(&mut self) {
        let plugin = self.client.plugin();
        if let Some(executable) = self.executable {
            let mut args = pjrt::PJRT_Executable_Destroy_Args::new();
            args.executable = executable.as_ptr();
            // SAFETY: `PJRT_Executable_Destroy` on the executable we got from
            // GetExecutable and own; destroyed once.
            if let Err(e) = unsafe { plugin.call(slot::PJRT_Executable_Destroy, &mut args) } {
                tracing::warn!("cannot destroy a PJRT executable: {e}");
            }
        }
        let mut args = pjrt::PJRT_LoadedExecutable_Destroy_Args::new();
        args.executable = self.loaded.as_ptr();
        // SAFETY: `PJRT_LoadedExecutable_Destroy` on the loaded executable we
        // own; destroyed once, after the executable derived from it; the
        // client is alive.
        if let Err(e) = unsafe { plugin.call(slot::PJRT_LoadedExecutable_Destroy, &mut args) } {
            tracing::warn!("cannot destroy a PJRT loaded executable: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pjrt(code: ErrorCode, message: &str) -> Error {
        Error::Pjrt {
            function: EXECUTE,
            code,
            message: message.to_owned(),
        }
    }

    fn parts(e: Option<Error>) -> (ErrorCode, String) {
        match e {
            Some(Error::Pjrt { code, message, .. }) => (code, message),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn reconcile_unwraps_what_both_events_agree_on() {
        use ErrorCode::{FailedPrecondition as Fp, Internal};
        // P81: device INTERNAL "Compute error: ..", buffer keeps the code.
        let got = reconcile(
            Some(pjrt(Internal, "Compute error: boom")),
            Some(pjrt(Fp, "Buffer Definition Event: boom")),
        );
        assert_eq!(parts(got), (Fp, "boom".to_string()));
        // P106: device exact, buffer wrapped.
        let got = reconcile(
            Some(pjrt(Fp, "boom")),
            Some(pjrt(Fp, "Buffer Definition Event: boom")),
        );
        assert_eq!(parts(got), (Fp, "boom".to_string()));
        // A handler message that itself starts like a wrapper is kept.
        let got = reconcile(
            Some(pjrt(Fp, "Compute error: x")),
            Some(pjrt(Fp, "Buffer Definition Event: Compute error: x")),
        );
        assert_eq!(parts(got), (Fp, "Compute error: x".to_string()));
        // Disagreement: the device event wins, untouched.
        let got = reconcile(Some(pjrt(Internal, "a")), Some(pjrt(Fp, "b")));
        assert_eq!(parts(got), (Internal, "a".to_string()));
        // One side only.
        assert_eq!(
            parts(reconcile(None, Some(pjrt(Fp, "b")))),
            (Fp, "b".to_string())
        );
        assert_eq!(
            parts(reconcile(Some(pjrt(Fp, "a")), None)),
            (Fp, "a".to_string())
        );
        assert!(reconcile(None, None).is_none());
    }
}
