//! [`target!`](crate::target): declare a target and export its handler.

/// The type of a handler: a plain function (or non-capturing closure) from
/// the call frame to success or an [`Error`](crate::Error).
pub type Handler = for<'f, 'a> fn(&'f crate::CallFrame<'a>) -> crate::Result<()>;

/// Declares that this guest serves custom-call target `$target` with the
/// handler `$handler`, exported as `$export`.
///
/// ```
/// use cyxla_guest_sdk::{CallFrame, Error, target};
///
/// pub fn scale(frame: &CallFrame<'_>) -> Result<(), Error> {
///     let factor: f32 = frame.attr("factor")?;
///     let x = frame.arg::<f32>(0)?;
///     let mut y = frame.ret::<f32>(0)?;
///     y.iter_mut().zip(x.iter()).for_each(|(y, x)| *y = x * factor);
///     Ok(())
/// }
///
/// target!("my_scale", my_scale, scale);
/// target!("my_noop", my_noop, |_frame: &CallFrame| -> Result<(), Error> { Ok(()) });
/// ```
///
/// It expands to, on wasm32:
///
/// * a record `cyxla-target v1 <target> <export>\n` in the `cyxla.targets`
///   custom section, so the host finds the target in the bare `.wasm`;
/// * an export `<export>: (frame: i32) -> i32` that answers a metadata
///   probe (the SDK's API version, 0.5) and ignores stages other than EXECUTE, reads
///   the frame as the host guarantees it
///   (docs/abi.md, "What a guest may rely on": the host checked the call,
///   so the frame is not decoded and checked again), calls the handler and
///   turns an `Err` into an error handle through the host's `error_create`
///   import (0 on success).
///
/// On other targets it only type-checks the handler (so kernels can be unit
/// tested natively with the `testing` module when the `testing` feature
/// is on). Names are checked at compile time: 1 to 255 bytes of
/// `[A-Za-z0-9_.$-]`.
///
/// # Panics
///
/// A panicking handler does not return an error: wasm32 guests cannot
/// unwind. The SDK's panic handler stores the message (export
/// `cyxla_last_panic`) and traps; the host reports the trap with that
/// message and discards the instance. Use the SDK's `Result`-returning
/// accessors and return errors instead of panicking.
#[macro_export]
macro_rules! target {
    ($target:literal, $export:ident, $handler:expr $(,)?) => {
        const _: () = {
            const HANDLER: $crate::Handler = $handler;
            $crate::__record!($target, $export);

            #[cfg(target_arch = "wasm32")]
            #[unsafe(export_name = stringify!($export))]
            extern "C" fn export(frame: u32) -> u32 {
                // SAFETY: only the host calls this export (it is not
                // nameable in Rust), with the frame of the call in progress.
                unsafe { $crate::__private::run(frame, HANDLER) }
            }

            // Used on every target (natively nothing else does).
            let _ = HANDLER;
        };
    };
}

/// Declares that this guest serves custom-call target `$target` with the
/// kernel `$kernel`, exported as `$export`: a function whose parameters are
/// what it takes from the call, in order. Each [`Buffer`](crate::Buffer)
/// is the next operand, each [`ResultBuffer`](crate::ResultBuffer) the
/// next result, an [`Attrs`](crate::Attrs) the call's attributes; it
/// returns [`Result<()>`](crate::Result).
///
/// ```
/// use cyxla_guest_sdk::{Attrs, Buffer, Error, Result, ResultBuffer, kernel};
///
/// /// y = x * factor.
/// pub fn scale(x: Buffer<'_, f32>, mut y: ResultBuffer<'_, f32>, attrs: Attrs<'_>) -> Result<()> {
///     let factor: f32 = attrs.get("factor")?;
///     if y.dims() != x.dims() {
///         return Err(Error::invalid_argument("x and y differ in shape"));
///     }
///     y.iter_mut().zip(x.iter()).for_each(|(y, x)| *y = x * factor);
///     Ok(())
/// }
///
/// kernel!("my_kernel_scale", my_kernel_scale, scale);
/// ```
///
/// It expands as [`target!`](crate::target) does (the same record, an
/// export of the same signature), but the export checks the call against
/// the kernel's signature before it runs it: as many operands and results
/// (``expected 1 operand(s) and 1 result(s), got 2 and 1``), of the dtypes
/// named (``argument 0: expected a f32 buffer, got f64 [3]``). Each buffer
/// is read where the host wrote it, with no decoding and no bookkeeping, so
/// a kernel's call costs less than a [`CallFrame`](crate::CallFrame)
/// handler's. A result that shares its memory with an operand (an in-place
/// update, `input_output_aliases`) is refused with `INVALID_ARGUMENT`: serve
/// such a target with `target!` and a `CallFrame` ("In-place updates"
/// there).
///
/// The buffers borrow guest memory for the call only: a kernel takes
/// buffers of any lifetime (`Buffer<'_, T>`). Up to eight parameters.
/// Natively (unit tests) it only type-checks the kernel; run it with
/// `testing::TestCall::kernel` (the `testing` module, with the feature
/// of its name).
#[macro_export]
macro_rules! kernel {
    ($target:literal, $export:ident, $kernel:expr $(,)?) => {
        const _: () = {
            $crate::__record!($target, $export);

            #[cfg(target_arch = "wasm32")]
            #[unsafe(export_name = stringify!($export))]
            extern "C" fn export(frame: u32) -> u32 {
                let scope = ();
                // SAFETY: only the host calls this export (it is not
                // nameable in Rust), with the frame of the call in progress.
                unsafe { $crate::__private::run_kernel(&scope, frame, $kernel) }
            }

            // Natively: that it is a kernel.
            fn type_check() {
                let scope = ();
                $crate::__private::is_kernel(&scope, $kernel);
            }
            let _ = type_check as fn();
        };
    };
}

/// The `cyxla.targets` record of `target!` and `kernel!`, with its names
/// checked at compile time; not a public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __record {
    ($target:literal, $export:ident) => {
        const RECORD_LEN: usize = $crate::__private::record_len($target, stringify!($export));
        const RECORD_BYTES: [u8; RECORD_LEN] =
            $crate::__private::record($target, stringify!($export));
        assert!(
            $crate::abi::is_valid_name($target),
            concat!("invalid target name `", $target, "`")
        );
        assert!(
            $crate::abi::is_valid_name(stringify!($export)),
            concat!("invalid export name `", stringify!($export), "`")
        );

        #[cfg(target_arch = "wasm32")]
        #[unsafe(link_section = "cyxla.targets")]
        #[used]
        static RECORD: [u8; RECORD_LEN] = RECORD_BYTES;

        // Used on every target (natively nothing else does).
        let _ = RECORD_BYTES;
    };
}

/// Support for [`target!`]; not a public API.
#[doc(hidden)]
pub mod __private {
    #[cfg(target_arch = "wasm32")]
    pub use crate::runtime::{run, run_kernel};

    /// Nothing: that `kernel` is a [`Kernel`](crate::Kernel), for
    /// `kernel!` on other targets than wasm32.
    pub fn is_kernel<'m, P, K: crate::Kernel<'m, P>>(scope: &'m (), kernel: K) {
        let _ = (scope, kernel);
    }

    use crate::abi::RECORD_PREFIX;

    /// Length of the record `cyxla-target v1 <target> <export>\n`.
    pub const fn record_len(target: &str, export: &str) -> usize {
        RECORD_PREFIX.len() + target.len() + 1 + export.len() + 1
    }

    /// The record `cyxla-target v1 <target> <export>\n` as an array (for a
    /// `link_section` static); `N` must be [`record_len`].
    pub const fn record<const N: usize>(target: &str, export: &str) -> [u8; N] {
        let mut out = [0u8; N];
        let mut at = copy(&mut out, 0, RECORD_PREFIX.as_bytes());
        at = copy(&mut out, at, target.as_bytes());
        at = copy(&mut out, at, b" ");
        at = copy(&mut out, at, export.as_bytes());
        at = copy(&mut out, at, b"\n");
        assert!(at == N, "record length");
        out
    }

    const fn copy<const N: usize>(out: &mut [u8; N], mut at: usize, bytes: &[u8]) -> usize {
        let mut i = 0;
        while i < bytes.len() {
            out[at] = bytes[i];
            at += 1;
            i += 1;
        }
        at
    }
}
