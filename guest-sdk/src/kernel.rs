//! [`kernel!`](crate::kernel): a target whose handler takes its operands,
//! results and attributes as typed parameters, read straight from the
//! host's frame.
//!
//! A [`target!`](crate::target) handler asks a [`CallFrame`] for each
//! buffer, and the frame tracks what it handed out so that in-place
//! updates stay sound. A kernel says in its signature what it takes: each
//! [`Buffer`] parameter is the next operand, each [`ResultBuffer`] the next
//! result, an [`Attrs`] the call's attributes. Before the kernel runs, the
//! call is checked against the signature (as many operands and results, of
//! the dtypes named), and each buffer is read where the host wrote it
//! (docs/abi.md, "What a guest may rely on"): a few loads and compares a
//! buffer, no decoding and no bookkeeping. A result that shares its memory
//! with an operand (an in-place update) is refused: such a target takes a
//! [`CallFrame`] ("In-place updates" there).

use crate::abi;
use crate::attrs::{Attrs, AttrsAt};
use crate::buffer::{Buffer, RawBuffer, ResultBuffer, Which};
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::frame::CallFrame;
use crate::memory::Memory;

/// A call as a kernel reads it: the host's frame at `addr`, its operand and
/// result counts and pointer arrays.
#[doc(hidden)]
pub struct KernelFrame<'a> {
    mem: Memory<'a>,
    addr: u32,
    num_args: usize,
    args: u32,
    num_rets: usize,
    rets: u32,
}

impl<'a> KernelFrame<'a> {
    /// The host's frame at guest address `addr`, or `None` for a frame of
    /// another `struct_size` or with a count out of range (a frame the host
    /// did not write: decoding it says what is wrong).
    ///
    /// # Safety
    ///
    /// As for `CallFrame::trusted`: `addr` must be the frame the host
    /// passed to a handler export for the call in progress (or one
    /// `CallFrame::validated` accepted), and its memory must not be
    /// accessed other than through the returned view during `'a`.
    #[cfg(any(target_arch = "wasm32", test, feature = "testing"))]
    #[inline(always)]
    pub(crate) unsafe fn trusted(mem: Memory<'a>, addr: u32) -> Option<KernelFrame<'a>> {
        use abi::call_frame as layout;
        // SAFETY: the frame's fields are inside memory (caller); integers.
        let (struct_size, num_args, args, num_rets, rets) = unsafe {
            (
                mem.read_unchecked::<u32>(addr),
                mem.read_unchecked::<i64>(addr + layout::ARGS + abi::args::SIZE_FIELD),
                mem.read_unchecked::<u32>(addr + layout::ARGS + abi::args::ARGS),
                mem.read_unchecked::<i64>(addr + layout::RETS + abi::rets::SIZE_FIELD),
                mem.read_unchecked::<u32>(addr + layout::RETS + abi::rets::RETS),
            )
        };
        if struct_size != layout::STRUCT_SIZE {
            return None;
        }
        Some(KernelFrame {
            mem,
            addr,
            num_args: usize::try_from(num_args).ok()?,
            args,
            num_rets: usize::try_from(num_rets).ok()?,
            rets,
        })
    }

    /// Fails unless the call has `args` operands and `rets` results.
    #[inline(always)]
    fn expect_arity(&self, args: usize, rets: usize) -> Result<()> {
        if (self.num_args, self.num_rets) == (args, rets) {
            Ok(())
        } else {
            Err(self
                .general()
                .and_then(|f| f.expect_arity(args, rets))
                .err()
                .unwrap_or_else(|| {
                    Error::internal("kernel arity: the frame's counts read two ways")
                }))
        }
    }

    /// The buffer struct of `which` (in range: [`KernelFrame::expect_arity`]
    /// checked the counts).
    #[inline(always)]
    fn buffer(&self, which: Which) -> Option<u32> {
        let (i, n, ptrs) = match which {
            Which::Arg(i) => (i, self.num_args, self.args),
            Which::Ret(i) => (i, self.num_rets, self.rets),
        };
        // SAFETY: the host's pointer arrays hold `n` entries
        // (KernelFrame::trusted).
        (i < n).then(|| unsafe { self.mem.read_unchecked::<u32>(ptrs + 4 * i as u32) })
    }

    /// Buffer `which` as a `T` buffer, or the error of what it is instead.
    #[inline(always)]
    fn raw<T: Element>(&self, which: Which) -> Result<RawBuffer<'a>> {
        // SAFETY: a buffer struct of the host's frame (KernelFrame).
        let raw = self
            .buffer(which)
            .and_then(|addr| unsafe { RawBuffer::trusted_as::<T>(self.mem, addr, which) });
        raw.ok_or_else(|| self.not_a::<T>(which))
    }

    /// The frame read the general way, for the errors [`CallFrame`] gives.
    #[cold]
    #[inline(never)]
    fn general(&self) -> Result<CallFrame<'a>> {
        CallFrame::decode(self.mem, self.addr)
    }

    /// The error of `which` not being a `T` buffer: what `CallFrame::arg`
    /// or `CallFrame::ret` says about it.
    #[cold]
    #[inline(never)]
    fn not_a<T: Element>(&self, which: Which) -> Error {
        let said = self.general().and_then(|f| match which {
            Which::Arg(i) => f.arg::<T>(i).map(drop),
            Which::Ret(i) => f.ret::<T>(i).map(drop),
        });
        said.err()
            .unwrap_or_else(|| Error::internal(alloc::format!("{which}: read two ways")))
    }

    /// The error of result `j` (data at `data`, `byte_len` bytes) if an
    /// operand's non-empty data is the same memory, else `None`. Only an
    /// operand at the same address can be
    /// (docs/abi.md, "What a guest may rely on"); one there may still be
    /// empty.
    #[inline(always)]
    fn aliased(&self, j: usize, data: u32, byte_len: usize) -> Option<Error> {
        if byte_len == 0 {
            return None;
        }
        for i in 0..self.num_args {
            let addr = self.buffer(Which::Arg(i))?;
            // SAFETY: a buffer struct of the host's frame.
            let theirs = unsafe { self.mem.read_unchecked::<u32>(addr + abi::buffer::DATA) };
            if theirs == data {
                return self.aliased_error(j, i);
            }
        }
        None
    }

    /// [`KernelFrame::aliased`] for operand `i`, at result `j`'s address.
    #[cold]
    #[inline(never)]
    fn aliased_error(&self, j: usize, i: usize) -> Option<Error> {
        let frame = match self.general() {
            Ok(frame) => frame,
            Err(e) => return Some(e),
        };
        match frame.any_arg(i) {
            Ok(operand) if operand.byte_len() == 0 => None,
            Ok(_) => Some(Error::invalid_argument(alloc::format!(
                "result {j} is aliased with argument {i} (in place): a kernel! does not \
                 update in place; serve this target with target! and a CallFrame"
            ))),
            Err(e) => Some(e),
        }
    }
}

/// Which operand and which result the next parameter takes.
#[doc(hidden)]
#[derive(Default)]
pub struct Next {
    args: usize,
    rets: usize,
}

mod sealed {
    pub trait Sealed {}
}

/// A parameter of a [`kernel!`](crate::kernel): [`Buffer`] (the next
/// operand), [`ResultBuffer`] (the next result) or [`Attrs`] (the call's
/// attributes). Not implemented outside the SDK.
pub trait Param<'a>: Sized + sealed::Sealed {
    /// Operands it takes (0 or 1).
    #[doc(hidden)]
    const ARGS: usize;
    /// Results it takes (0 or 1).
    #[doc(hidden)]
    const RETS: usize;
    /// Takes it from the call.
    #[doc(hidden)]
    fn take(frame: &KernelFrame<'a>, next: &mut Next) -> Result<Self>;
}

impl<T: Element> sealed::Sealed for Buffer<'_, T> {}

impl<'a, T: Element> Param<'a> for Buffer<'a, T> {
    const ARGS: usize = 1;
    const RETS: usize = 0;

    #[inline(always)]
    fn take(frame: &KernelFrame<'a>, next: &mut Next) -> Result<Self> {
        let which = Which::Arg(next.args);
        next.args += 1;
        let raw = frame.raw::<T>(which)?;
        // SAFETY: read from the host's frame as `T::DTYPE`; operands are
        // only ever read, and a result whose memory is this operand's is
        // refused before the kernel runs (ResultBuffer's `take`).
        Ok(unsafe { Buffer::trusted(raw) })
    }
}

impl<T: Element> sealed::Sealed for ResultBuffer<'_, T> {}

impl<'a, T: Element> Param<'a> for ResultBuffer<'a, T> {
    const ARGS: usize = 0;
    const RETS: usize = 1;

    #[inline(always)]
    fn take(frame: &KernelFrame<'a>, next: &mut Next) -> Result<Self> {
        let j = next.rets;
        next.rets += 1;
        let raw = frame.raw::<T>(Which::Ret(j))?;
        if let Some(e) = frame.aliased(j, raw.data, raw.byte_len) {
            return Err(e);
        }
        // SAFETY: read from the host's frame as `T::DTYPE`; each result is
        // taken once (one parameter each), two results are never one region
        // and no operand shares its memory (checked above; docs/abi.md,
        // "What a guest may rely on").
        Ok(unsafe { ResultBuffer::trusted(raw) })
    }
}

impl sealed::Sealed for Attrs<'_> {}

impl<'a> Param<'a> for Attrs<'a> {
    const ARGS: usize = 0;
    const RETS: usize = 0;

    #[inline(always)]
    fn take(frame: &KernelFrame<'a>, _next: &mut Next) -> Result<Self> {
        // SAFETY: the inline attributes are inside the host's frame.
        let at = unsafe { AttrsAt::trusted(frame.mem, frame.addr + abi::call_frame::ATTRS) };
        Ok(at.attrs(frame.mem))
    }
}

/// A function a [`kernel!`](crate::kernel) can serve: `Fn(P1, ..., Pn) ->
/// Result<()>` for up to eight [`Param`]s. `Params` is the tuple of their
/// types (inferred).
pub trait Kernel<'a, Params> {
    /// Checks the call against the signature, takes the parameters and runs
    /// the kernel.
    #[doc(hidden)]
    fn run(&self, frame: &KernelFrame<'a>) -> Result<()>;
}

macro_rules! kernels {
    ($($p:ident $v:ident),*) => {
        impl<'a, F, $($p: Param<'a>),*> Kernel<'a, ($($p,)*)> for F
        where
            F: Fn($($p),*) -> Result<()>,
        {
            #[inline(always)]
            fn run(&self, frame: &KernelFrame<'a>) -> Result<()> {
                frame.expect_arity(0 $(+ $p::ARGS)*, 0 $(+ $p::RETS)*)?;
                #[allow(unused_mut, unused_variables, reason = "a kernel of no buffers takes nothing")]
                let mut next = Next::default();
                $(let $v = $p::take(frame, &mut next)?;)*
                self($($v),*)
            }
        }
    };
}

kernels!();
kernels!(A a);
kernels!(A a, B b);
kernels!(A a, B b, C c);
kernels!(A a, B b, C c, D d);
kernels!(A a, B b, C c, D d, E e);
kernels!(A a, B b, C c, D d, E e, G g);
kernels!(A a, B b, C c, D d, E e, G g, H h);
kernels!(A a, B b, C c, D d, E e, G g, H h, I i);

/// Runs `kernel` on the frame at guest address `addr` of `mem`.
///
/// # Safety
///
/// As for `KernelFrame::trusted`.
#[cfg(any(target_arch = "wasm32", test, feature = "testing"))]
#[inline(always)]
pub(crate) unsafe fn run<'a, P, K: Kernel<'a, P>>(
    mem: Memory<'a>,
    addr: u32,
    kernel: &K,
) -> Result<()> {
    // SAFETY: forwarded caller contract.
    match unsafe { KernelFrame::trusted(mem, addr) } {
        Some(frame) => kernel.run(&frame),
        None => Err(not_a_host_frame(mem, addr)),
    }
}

/// The error of a frame [`KernelFrame::trusted`] does not read: what
/// decoding it finds.
#[cfg(any(target_arch = "wasm32", test, feature = "testing"))]
#[cold]
#[inline(never)]
fn not_a_host_frame(mem: Memory<'_>, addr: u32) -> Error {
    match CallFrame::decode(mem, addr) {
        Err(e) => e,
        Ok(frame) => Error::internal(alloc::format!(
            "call frame with {} operands and {} results",
            frame.num_args(),
            frame.num_rets()
        )),
    }
}
