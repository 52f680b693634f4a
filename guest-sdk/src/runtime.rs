//! The guest half of the ABI on wasm32: the guest's static `XLA_FFI_Api`,
//! the required exports, the entry of every handler and the allocator (on
//! other targets: nothing; the argument structs are in `args`, the calls of
//! the execution context in `context`).

#[cfg(target_arch = "wasm32")]
pub use wasm::{run, run_kernel};

#[cfg(target_arch = "wasm32")]
mod wasm {
    use alloc::vec::Vec;
    use core::alloc::Layout;

    use crate::abi::{self, execution_stage, extension_type};
    use crate::args;
    use crate::error::{Error, Result};
    use crate::frame::CallFrame;
    use crate::memory::Memory;
    use crate::sys;

    /// The guest's `XLA_FFI_Api` (version 0.5) in wasm32 layout; its function
    /// pointers are function-table indices of the `cyxla` imports.
    #[repr(C)]
    struct Api {
        struct_size: u32,
        extension_start: u32,
        api_version: args::ApiVersion,
        internal_api: u32,
        fns: sys::ApiFns,
    }

    const _: () = {
        assert!(size_of::<Api>() == abi::api::SIZE as usize);
        assert!(core::mem::offset_of!(Api, api_version) == abi::api::API_VERSION as usize);
        assert!(core::mem::offset_of!(Api, internal_api) == abi::api::INTERNAL_API as usize);
        assert!(core::mem::offset_of!(Api, fns) == abi::api::FIRST_SLOT as usize);
    };

    static API: Api = Api {
        struct_size: abi::api::STRUCT_SIZE,
        extension_start: 0,
        api_version: args::ApiVersion::new(abi::FFI_API_MAJOR, abi::FFI_API_MINOR),
        internal_api: 0,
        fns: sys::API_FNS,
    };

    /// Guest address of a pointer (wasm32 pointers are 32-bit).
    fn addr<T>(p: *const T) -> u32 {
        p.expose_provenance() as u32
    }

    /// Required export: the ABI version.
    #[unsafe(no_mangle)]
    pub extern "C" fn cyxla_abi_version() -> u32 {
        abi::ABI_VERSION
    }

    /// Required export: guest address of the static `XLA_FFI_Api`.
    #[unsafe(no_mangle)]
    pub extern "C" fn cyxla_api() -> u32 {
        addr(&raw const API)
    }

    /// Required export: `size` bytes aligned to `align` from the global
    /// allocator, or 0. Size 0 is served as size 1 so the address is unique.
    #[unsafe(no_mangle)]
    pub extern "C" fn cyxla_alloc(size: u32, align: u32) -> u32 {
        let Ok(layout) = Layout::from_size_align(size.max(1) as usize, align.max(1) as usize)
        else {
            return 0;
        };
        // SAFETY: layout has a non-zero size.
        addr(unsafe { alloc::alloc::alloc(layout) })
    }

    /// Optional export: frees what `cyxla_alloc(size, align)` returned.
    /// A host passing anything else corrupts only this instance's heap.
    #[unsafe(no_mangle)]
    pub extern "C" fn cyxla_free(ptr: u32, size: u32, align: u32) {
        let Ok(layout) = Layout::from_size_align(size.max(1) as usize, align.max(1) as usize)
        else {
            return;
        };
        if ptr != 0 {
            // SAFETY: the ABI requires ptr to come from cyxla_alloc with the
            // same size and align, i.e. from alloc() with this layout.
            unsafe {
                alloc::alloc::dealloc(core::ptr::with_exposed_provenance_mut(ptr as usize), layout)
            }
        }
    }

    /// Hands `error` to the host (`error_create`) and returns the handle.
    /// Traps if the host returns no handle (a host bug: success would be
    /// reported otherwise).
    fn create_error(error: &Error) -> u32 {
        let mut message: Vec<u8> = error.message.bytes().take_while(|&b| b != 0).collect();
        message.push(0);
        let mut a = args::ErrorCreate::new(addr(message.as_ptr()), error.code.to_raw());
        // SAFETY: `a` and the NUL-terminated message live across the call; the
        // host copies the message before returning.
        let handle = unsafe { sys::error_create(&mut a) };
        if handle == 0 {
            crate::panic::record_message("host import error_create returned no error handle");
            core::arch::wasm32::unreachable();
        }
        handle
    }

    /// Answers a metadata probe (`extension_start` set) like XLA's C++
    /// binding: the SDK's API version (`abi::FFI_API_VERSION`), no traits.
    fn answer_probe(mem: Memory<'_>, ext: u32) -> Result<()> {
        let what = "metadata extension";
        let ty = mem.u32(
            Memory::offset(ext, u64::from(abi::extension_base::TYPE), &what)?,
            &what,
        )?;
        if ty != extension_type::METADATA {
            return Ok(());
        }
        let md = mem.u32(
            Memory::offset(ext, u64::from(abi::metadata_extension::METADATA), &what)?,
            &what,
        )?;
        let v = Memory::offset(md, u64::from(abi::metadata::API_VERSION), &what)?;
        mem.write_u32(
            Memory::offset(v, u64::from(abi::api_version::MAJOR_VERSION), &what)?,
            abi::FFI_API_MAJOR as u32,
            &what,
        )?;
        mem.write_u32(
            Memory::offset(v, u64::from(abi::api_version::MINOR_VERSION), &what)?,
            abi::FFI_API_MINOR as u32,
            &what,
        )?;
        mem.write_u32(
            Memory::offset(md, u64::from(abi::metadata::TRAITS), &what)?,
            0,
            &what,
        )
    }

    /// Runs `handler` for the frame at guest address `frame`; returns 0 or
    /// an error handle. Used by [`target!`](crate::target); not a public
    /// API.
    ///
    /// The frame is read as the host guarantees it
    /// (docs/abi.md, "What a guest may rely on"): the host checked the call
    /// once, so nothing is decoded or checked again here (a frame of more
    /// than 64 operands or results, or of another `struct_size`, is decoded
    /// and checked).
    ///
    /// Inlined into each export, so that the handler is a direct call and
    /// an execute frame costs a few loads and compares before it; probes,
    /// decoded frames and errors take functions of their own. The handler
    /// is called from one place, whichever way the frame was read, so that
    /// LLVM may inline it too (and then keeps the frame's fields in
    /// registers).
    ///
    /// # Safety
    ///
    /// `frame` must be the argument the host passed to a handler export,
    /// during that export's call: only the export `target!` generates
    /// calls it.
    #[inline(always)]
    pub unsafe fn run(frame: u32, handler: crate::Handler) -> u32 {
        let mem = Memory::linear();
        // SAFETY: the host's frame of this call (caller).
        if let Some(answer) = unsafe { other_than_execute(mem, frame) } {
            return answer;
        }
        // SAFETY: the host's frame of the call in progress (caller); the
        // host wrote it for this call and nothing else in the guest holds
        // references into it.
        let f = match unsafe { CallFrame::trusted(mem, frame) } {
            Some(f) => f,
            None => match decoded(mem, frame) {
                Ok(f) => f,
                Err(e) => return failed(e),
            },
        };
        match handler(&f) {
            Ok(()) => 0,
            Err(e) => failed(e),
        }
    }

    /// [`run`] for a [`kernel!`](crate::kernel): the kernel's signature
    /// read from the host's frame (`crate::kernel`). Used by `kernel!`; not
    /// a public API.
    ///
    /// The buffers live as long as `scope`, a borrow of the export's own
    /// local: so a kernel must take buffers of any lifetime (it cannot ask
    /// for `'static` ones and keep them past the call, whose memory the
    /// host then rewrites).
    ///
    /// # Safety
    ///
    /// As for [`run`].
    #[inline(always)]
    pub unsafe fn run_kernel<'m, P, K: crate::kernel::Kernel<'m, P>>(
        scope: &'m (),
        frame: u32,
        kernel: K,
    ) -> u32 {
        let _ = scope;
        let mem = Memory::linear();
        // SAFETY: the host's frame of this call (caller).
        if let Some(answer) = unsafe { other_than_execute(mem, frame) } {
            return answer;
        }
        // SAFETY: the host's frame of the call in progress (caller).
        match unsafe { crate::kernel::run(mem, frame, &kernel) } {
            Ok(()) => 0,
            Err(e) => failed(e),
        }
    }

    /// The export's answer to `frame` if it is not an execute frame (see
    /// [`not_execute`]), else `None`.
    ///
    /// # Safety
    ///
    /// `frame` must be the host's frame of the call in progress, whose
    /// fields are inside memory.
    #[inline(always)]
    unsafe fn other_than_execute(mem: Memory<'_>, frame: u32) -> Option<u32> {
        // SAFETY: the frame's fields are inside memory (caller); integers.
        let (ext, stage) = unsafe {
            (
                mem.read_unchecked::<u32>(frame + abi::call_frame::EXTENSION_START),
                mem.read_unchecked::<u32>(frame + abi::call_frame::STAGE),
            )
        };
        (ext != 0 || stage != execution_stage::EXECUTE).then(|| not_execute(mem, ext))
    }

    /// [`run`] for a frame that is not an execute frame: a metadata probe
    /// (`ext`, the extension chain, set) is answered, any other stage
    /// ignored.
    #[inline(never)]
    fn not_execute(mem: Memory<'_>, ext: u32) -> u32 {
        if ext == 0 {
            return 0;
        }
        match answer_probe(mem, ext) {
            Ok(()) => 0,
            Err(e) => create_error(&e),
        }
    }

    /// [`run`]'s frame when it is not read as trusted: decoded and
    /// checked.
    #[inline(never)]
    fn decoded(mem: Memory<'_>, frame: u32) -> Result<CallFrame<'_>> {
        CallFrame::decode(mem, frame)
    }

    /// [`run`]'s error handle for a handler's `error`.
    #[cold]
    #[inline(never)]
    fn failed(error: Error) -> u32 {
        create_error(&error)
    }

    #[cfg(feature = "allocator")]
    #[global_allocator]
    static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;
}
