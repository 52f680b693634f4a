//! Per-slot native entry points, generated with cranelift-jit.
//!
//! XLA calls a handler with nothing but the call frame (no user data), so
//! each registered target needs its own function address. A trampoline is
//! the smallest such function:
//!
//! ```text
//! extern "C" fn trampoline_N(frame: *mut XLA_FFI_CallFrame) -> *mut XLA_FFI_Error {
//!     dispatch(N, frame)
//! }
//! ```
//!
//! The generator follows bytecodealliance/cranelift-jit-demo (`src/jit.rs`):
//! one struct owns the `FunctionBuilderContext`, the `codegen::Context` and
//! the `JITModule`; each trampoline goes through declare → define → clear →
//! finalize → fetch the pointer; the pointer-to-fn cast happens in exactly
//! one documented `unsafe fn` (`as_handler`). The dispatcher is made known
//! to the module with `JITBuilder::symbol`, so resolving it never searches
//! the process's symbol tables.
//!
//! Generated code is never freed (cranelift-jit leaks its memory on drop),
//! which is what XLA needs: it keeps handler pointers for the process's life.

use std::fmt;

use cranelift_codegen::Context;
use cranelift_codegen::ir::{AbiParam, InstBuilder, Signature, UserFuncName, types};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module, ModuleError, default_libcall_names};

use crate::error::{Error, Result};
use crate::ffi::xla_ffi::{XLA_FFI_CallFrame, XLA_FFI_Error, XLA_FFI_Handler};

/// The function every trampoline calls: `dispatch(slot, frame)`.
pub type Dispatcher =
    unsafe extern "C" fn(slot: u64, frame: *mut XLA_FFI_CallFrame) -> *mut XLA_FFI_Error;

/// The name under which the dispatcher is registered with the JIT.
const DISPATCHER_SYMBOL: &str = "cyxla_dispatch";

/// Generates trampolines that call one dispatcher.
///
/// # Thread safety
///
/// `Send` but not `Sync` (cranelift's `JITModule` is not); keep it behind a
/// `Mutex` to share it. Trampolines it produced may be called from any
/// thread.
pub struct Trampolines {
    builder_context: FunctionBuilderContext,
    ctx: Context,
    module: JITModule,
    dispatcher: FuncId,
    built: usize,
}

impl fmt::Debug for Trampolines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Trampolines")
            .field("built", &self.built)
            .finish_non_exhaustive()
    }
}

impl Trampolines {
    /// A generator for the host machine whose trampolines call `dispatcher`.
    ///
    /// # Errors
    ///
    /// [`Error::Trampoline`] (target `*`) if cranelift does not support the
    /// host or rejects its settings.
    pub fn new(dispatcher: Dispatcher) -> Result<Trampolines> {
        let fail = |message: String| Error::Trampoline {
            target: "*".into(),
            message,
        };
        let mut flags = settings::builder();
        // As cranelift_jit::JITBuilder::with_flags does: JIT code is placed
        // anywhere in memory, so calls use absolute addresses.
        flags
            .set("use_colocated_libcalls", "false")
            .map_err(|e| fail(format!("cranelift setting use_colocated_libcalls: {e}")))?;
        flags
            .set("is_pic", "false")
            .map_err(|e| fail(format!("cranelift setting is_pic: {e}")))?;
        let isa = cranelift_native::builder()
            .map_err(|e| fail(format!("cranelift does not support this host: {e}")))?
            .finish(settings::Flags::new(flags))
            .map_err(|e| fail(format!("cranelift cannot target this host: {e}")))?;
        let mut builder = JITBuilder::with_isa(isa, default_libcall_names());
        builder.symbol(DISPATCHER_SYMBOL, dispatcher as *const u8);
        let mut module = JITModule::new(builder);

        let mut signature = module.make_signature();
        signature.params.push(AbiParam::new(types::I64));
        signature
            .params
            .push(AbiParam::new(module.target_config().pointer_type()));
        signature
            .returns
            .push(AbiParam::new(module.target_config().pointer_type()));
        let dispatcher = module
            .declare_function(DISPATCHER_SYMBOL, Linkage::Import, &signature)
            .map_err(|e| fail(format!("cannot declare the dispatcher: {e}")))?;

        Ok(Trampolines {
            builder_context: FunctionBuilderContext::new(),
            ctx: module.make_context(),
            module,
            dispatcher,
            built: 0,
        })
    }

    /// Number of trampolines built so far.
    pub fn len(&self) -> usize {
        self.built
    }

    /// Whether none were built yet.
    pub fn is_empty(&self) -> bool {
        self.built == 0
    }

    /// The handler signature: `(frame: ptr) -> ptr` in the host's C calling
    /// convention.
    fn handler_signature(&self) -> Signature {
        let pointer = self.module.target_config().pointer_type();
        let mut signature = self.module.make_signature();
        signature.params.push(AbiParam::new(pointer));
        signature.returns.push(AbiParam::new(pointer));
        signature
    }

    /// Fills `self.ctx.func` with the body of the trampoline for `slot`.
    fn fill_body(&mut self, slot: u64, id: FuncId, signature: Signature) {
        self.ctx.func.signature = signature;
        self.ctx.func.name = UserFuncName::user(0, id.as_u32());
        let config = self.module.target_config();
        let mut b = FunctionBuilder::new(&mut self.ctx.func, &mut self.builder_context);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let frame = b.block_params(entry)[0];
        // The slot number travels as a 64-bit immediate (bit pattern kept).
        let slot = b.ins().iconst(types::I64, slot as i64);
        let callee = self.module.declare_func_in_func(self.dispatcher, b.func);
        let call = b.ins().call(callee, &[slot, frame]);
        let result = b.inst_results(call)[0];
        b.ins().return_(&[result]);
        b.finalize(config);
    }

    /// Declares the local function `name` with the handler signature and
    /// writes the trampoline body for `slot` into the context; a failure to
    /// declare becomes `declare_error(e)`.
    fn declare_with_body(
        &mut self,
        name: &str,
        slot: u64,
        declare_error: impl FnOnce(ModuleError) -> Error,
    ) -> Result<FuncId> {
        let signature = self.handler_signature();
        let id = self
            .module
            .declare_function(name, Linkage::Local, &signature)
            .map_err(declare_error)?;
        self.fill_body(slot, id, signature);
        Ok(id)
    }

    /// Builds the trampoline for `slot`, used by target `target` (named in
    /// errors), and returns its address as an XLA FFI handler.
    ///
    /// # Errors
    ///
    /// [`Error::Trampoline`] naming the target if cranelift fails to
    /// declare, compile or finalize it.
    pub fn build(&mut self, slot: u64, target: &str) -> Result<XLA_FFI_Handler> {
        let fail = |step: &str, e: &dyn fmt::Display| Error::Trampoline {
            target: target.to_owned(),
            message: format!("{step} the trampoline for slot {slot}: {e}"),
        };
        // 1. declare, with the body written into the context
        let id = self.declare_with_body(&format!("cyxla_trampoline_{slot}"), slot, |e| {
            fail("cannot declare", &e)
        })?;
        // 2. define
        let defined = self.module.define_function(id, &mut self.ctx);
        // 3. clear (also after a failure, so the next build starts clean)
        self.module.clear_context(&mut self.ctx);
        defined.map_err(|e| fail("cannot compile", &e))?;
        // 4. finalize
        self.module
            .finalize_definitions()
            .map_err(|e| fail("cannot finalize", &e))?;
        // 5. fetch the pointer
        let code = self.module.get_finalized_function(id);
        self.built += 1;
        // SAFETY: `code` is the finalized entry of the function just defined
        // with `handler_signature()`, i.e. `(ptr) -> ptr` in the platform's C
        // calling convention, and cranelift-jit never frees it.
        Ok(unsafe { as_handler(code) })
    }

    /// The IR of the trampoline for `slot`, checked by cranelift's verifier
    /// (for this module's tests; nothing is compiled or kept).
    ///
    /// # Errors
    ///
    /// [`Error::Trampoline`] with the verifier's report if the IR is invalid.
    #[cfg(test)]
    fn verified_ir(&mut self, slot: u64) -> Result<String> {
        self.declare_with_body(&format!("cyxla_ir_check_{slot}"), slot, |e| {
            Error::Trampoline {
                target: "*".into(),
                message: format!("cannot declare the IR check for slot {slot}: {e}"),
            }
        })?;
        let flags = settings::Flags::new(settings::builder());
        let verified =
            cranelift_codegen::verify_function(&self.ctx.func, &flags).map_err(|errors| {
                cranelift_codegen::print_errors::pretty_verifier_error(&self.ctx.func, None, errors)
            });
        let text = self.ctx.func.display().to_string();
        self.module.clear_context(&mut self.ctx);
        verified.map_err(|report| Error::Trampoline {
            target: "*".into(),
            message: format!("the trampoline IR for slot {slot} does not verify:\n{report}"),
        })?;
        Ok(text)
    }
}

/// Casts the address of finalized JIT code to a handler pointer: the one
/// place where generated code becomes callable.
///
/// # Safety
///
/// `code` must be the non-NULL entry point of a finalized function with the
/// signature `extern "C" fn(*mut XLA_FFI_CallFrame) -> *mut XLA_FFI_Error`
/// whose memory stays executable for as long as the result is used.
unsafe fn as_handler(code: *const u8) -> XLA_FFI_Handler {
    debug_assert!(!code.is_null());
    // SAFETY: a non-NULL code address with the handler's signature (caller
    // contract); fn pointers and data pointers have the same size here.
    unsafe { std::mem::transmute::<*const u8, XLA_FFI_Handler>(code) }
}

// Checked at compile time: the IR above uses `pointer_type` for both the
// frame and the result, and `I64` for the slot.
const _: () = assert!(size_of::<*mut XLA_FFI_CallFrame>() == size_of::<u64>());

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    static SEEN_SLOT: AtomicU64 = AtomicU64::new(0);

    /// Returns `frame + slot` (as an address) so the caller sees both.
    unsafe extern "C" fn test_dispatch(
        slot: u64,
        frame: *mut XLA_FFI_CallFrame,
    ) -> *mut XLA_FFI_Error {
        SEEN_SLOT.store(slot, Ordering::SeqCst);
        frame.cast::<u8>().wrapping_add(slot as usize).cast()
    }

    #[test]
    fn ir_of_a_trampoline_verifies() {
        let mut t = Trampolines::new(test_dispatch).unwrap();
        let ir = t.verified_ir(4095).unwrap();
        assert!(ir.contains("iconst.i64 4095"), "{ir}");
        assert!(ir.contains("call fn0"), "{ir}");
        assert!(ir.contains("return"), "{ir}");
    }

    #[test]
    fn trampolines_pass_their_slot_and_the_frame() {
        let mut t = Trampolines::new(test_dispatch).unwrap();
        let a = t.build(3, "a").unwrap();
        let b = t.build(0x1_0000_0001, "b").unwrap();
        assert_eq!(t.len(), 2);
        assert_ne!(a as usize, b as usize);
        let frame: *mut XLA_FFI_CallFrame = std::ptr::without_provenance_mut(0x1000);
        // SAFETY: `a` calls test_dispatch, which never dereferences the frame.
        let r = unsafe { a(frame) };
        assert_eq!(SEEN_SLOT.load(Ordering::SeqCst), 3);
        assert_eq!(r.addr(), 0x1003);
        // SAFETY: as above.
        let r = unsafe { b(frame) };
        assert_eq!(SEEN_SLOT.load(Ordering::SeqCst), 0x1_0000_0001);
        assert_eq!(r.addr(), 0x1000 + 0x1_0000_0001);
        // A trampoline stays valid after more are built.
        for slot in 10..20 {
            t.build(slot, "more").unwrap();
        }
        // SAFETY: as above.
        let r = unsafe { a(frame) };
        assert_eq!(r.addr(), 0x1003);
    }
}
