//! [`CallFrame`]: the checked view of one call's wasm32 `XLA_FFI_CallFrame`.

use alloc::vec::Vec;
use core::cell::{Cell, OnceCell};

use crate::abi::{arg_type, ret_type};
use crate::attrs::{Attrs, FromAttr};
use crate::buffer::{AnyBuffer, AnyResultBuffer, Buffer, RawBuffer, ResultBuffer, Which};
use crate::cache::FrameCache;
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::header::Header;
use crate::memory::Memory;

/// One call: operands, results and attributes, as the host laid them out in
/// guest memory.
///
/// Inputs can be viewed any number of times ([`CallFrame::arg`],
/// [`CallFrame::any_arg`]). Each result can be taken once
/// ([`CallFrame::ret`], [`CallFrame::any_ret`]), after a check that its
/// memory overlaps no other buffer, so the mutable slices are exclusive.
///
/// # In-place updates
///
/// A result that XLA aliases with an operand (`input_output_aliases={0: 0}`
/// in `jax.ffi.ffi_call`, or a donated argument) is the operand's memory:
/// the host gives both one region, holding the operand's values when the
/// handler starts, as XLA does natively. Operand views are shared slices
/// for the whole call, so such a result can only be taken while its operand
/// was never viewed, and the operand can no longer be viewed once the result
/// was taken. Take the result first and read the operand's values through
/// it:
///
/// ```
/// use cyxla_guest_sdk::{CallFrame, Result};
///
/// /// y aliases x: sets y[0] = 42 and keeps the rest of x.
/// pub fn set0(frame: &CallFrame<'_>) -> Result<()> {
///     let mut y = frame.ret::<f32>(0)?; // holds x's values
///     if let Some(first) = y.first_mut() {
///         *first = 42.0;
///     }
///     // frame.arg::<f32>(0) would now fail: argument 0 is aliased with
///     // result 0 (in place) and its values are in the result.
///     Ok(())
/// }
/// # let _ = set0;
/// ```
///
/// [`CallFrame::aliased_arg`] says whether a result is aliased, for a
/// handler that also serves calls without aliasing (and then copies its
/// operand). Only exact aliases (same address and size) are accepted; a
/// result that partly overlaps another buffer is an error.
///
/// # Examples
///
/// ```
/// use cyxla_guest_sdk::{CallFrame, Error, Result};
///
/// pub fn scale(frame: &CallFrame<'_>) -> Result<()> {
///     frame.expect_arity(1, 1)?;
///     let factor: f32 = frame.attr("factor")?;
///     let x = frame.arg::<f32>(0)?;
///     let mut y = frame.ret::<f32>(0)?;
///     if x.dims() != y.dims() {
///         return Err(Error::invalid_argument("x and y differ in shape"));
///     }
///     for (y, x) in y.iter_mut().zip(x.iter()) {
///         *y = x * factor;
///     }
///     Ok(())
/// }
/// # let _ = scale;
/// ```
pub struct CallFrame<'a> {
    mem: Memory<'a>,
    /// The frame's scalar fields, read and checked.
    header: Header,
    /// Per buffer, operands then results: its decoding, once it succeeded,
    /// and (results only) whether it was handed out.
    slots: Slots<'a>,
    /// The target's cache of decodes, in a guest.
    cache: Option<&'a FrameCache>,
}

/// Buffers whose [`Slot`]s a frame keeps without allocating.
const INLINE_SLOTS: usize = 4;

/// The [`Slot`]s of a frame: inline for the usual few buffers, so that
/// decoding a frame allocates nothing on the per-call path.
#[expect(
    clippy::large_enum_variant,
    reason = "the inline variant is the point: a frame lives on the stack for one call"
)]
enum Slots<'a> {
    Inline([Slot<'a>; INLINE_SLOTS], usize),
    Heap(Vec<Slot<'a>>),
}

impl<'a> Slots<'a> {
    #[inline(always)]
    fn new(n: usize) -> Slots<'a> {
        if n <= INLINE_SLOTS {
            Slots::Inline(Default::default(), n)
        } else {
            Slots::Heap((0..n).map(|_| Slot::default()).collect())
        }
    }
}

impl<'a> core::ops::Deref for Slots<'a> {
    type Target = [Slot<'a>];

    fn deref(&self) -> &[Slot<'a>] {
        match self {
            Slots::Inline(slots, n) => &slots[..*n],
            Slots::Heap(slots) => slots,
        }
    }
}

/// What a [`CallFrame`] remembers of one buffer.
#[derive(Default)]
struct Slot<'a> {
    decoded: OnceCell<RawBuffer<'a>>,
    /// Results: handed out.
    taken: Cell<bool>,
    /// Operands: handed out (shared views may be alive for the whole call).
    viewed: Cell<bool>,
    /// Operands: the taken result that aliases this operand's memory.
    in_place: Cell<Option<usize>>,
}

impl core::fmt::Debug for CallFrame<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CallFrame")
            .field("addr", &self.header.addr)
            .field("num_args", &self.header.num_args)
            .field("num_rets", &self.header.num_rets)
            .field("attrs", &self.attrs())
            .finish_non_exhaustive()
    }
}

impl<'a> CallFrame<'a> {
    /// The frame at guest address `frame` in this instance's memory (what a
    /// handler export receives).
    ///
    /// # Errors
    ///
    /// `INTERNAL` if the frame is malformed (wrong `struct_size`, addresses
    /// outside memory, counts out of range).
    ///
    /// # Safety
    ///
    /// The memory the frame refers to must not be accessed other than through
    /// the returned view during `'a` (the host wrote it for this call and the
    /// guest has not handed it out elsewhere).
    /// Available on wasm32 only.
    #[cfg(target_arch = "wasm32")]
    pub unsafe fn from_raw(frame: u32) -> Result<CallFrame<'a>> {
        CallFrame::decode(Memory::linear(), frame)
    }

    /// The frame at guest address `frame` of `memory`, a buffer standing for
    /// a guest's linear memory (guest address `a` is `memory[a]`). Lets a host
    /// or a test check a frame it wrote with the SDK's own decoder.
    ///
    /// # Errors
    ///
    /// `INTERNAL` if the frame is malformed, as for a frame read in a guest.
    ///
    /// # Safety
    ///
    /// Each result's data must overlap none of the other bytes the frame
    /// refers to (frame, attributes, names, strings, arrays, type and pointer
    /// arrays). Overlaps between results, operands and dims are checked, the
    /// rest is not.
    #[cfg(not(target_arch = "wasm32"))]
    pub unsafe fn from_memory(memory: &'a mut [u8], frame: u32) -> Result<CallFrame<'a>> {
        // SAFETY: forwarded caller contract.
        unsafe { CallFrame::from_memory_at(memory, 0, frame) }
    }

    /// The frame at guest address `frame` of `memory`, a buffer standing for
    /// the part of a guest's linear memory that starts at guest address
    /// `origin` (guest address `a` is `memory[a - origin]`; addresses before
    /// `origin` or past the buffer are outside memory). Lets a host check a
    /// frame it laid out anywhere in a 4 GiB memory without a 4 GiB buffer.
    /// Alignment is checked on `memory`'s own addresses: give a buffer that
    /// is 8-aligned where `origin` is.
    ///
    /// # Errors
    ///
    /// As for [`CallFrame::from_memory`].
    ///
    /// # Safety
    ///
    /// As for [`CallFrame::from_memory`].
    #[cfg(not(target_arch = "wasm32"))]
    pub unsafe fn from_memory_at(
        memory: &'a mut [u8],
        origin: u32,
        frame: u32,
    ) -> Result<CallFrame<'a>> {
        // SAFETY: the slice is valid and exclusively borrowed for 'a.
        let mem = unsafe { Memory::from_raw_parts(memory.as_mut_ptr(), memory.len(), origin) };
        CallFrame::decode(mem, frame)
    }

    /// Decodes and checks the frame at guest address `addr` of `mem`.
    pub(crate) fn decode(mem: Memory<'a>, addr: u32) -> Result<CallFrame<'a>> {
        Ok(CallFrame::new(mem, Header::decode(mem, addr)?, None))
    }

    /// Decodes and checks the frame at guest address `addr` of `mem`, then
    /// runs `handler` on it; `cache` (the target's) skips decoding what the
    /// target's last calls decoded from the same bytes. The frame is built
    /// where it is used: a frame is a few hundred bytes (its inline
    /// [`Slots`]), which moving out of a `Result` would copy on every call.
    #[cfg_attr(
        not(any(target_arch = "wasm32", test, feature = "testing")),
        expect(dead_code, reason = "used by guest exports and by `testing`")
    )]
    #[inline(always)]
    pub(crate) fn decode_then<R>(
        mem: Memory<'a>,
        addr: u32,
        cache: &'a FrameCache,
        handler: impl FnOnce(&CallFrame<'a>) -> Result<R>,
    ) -> Result<R> {
        let header = match cache.header(mem, addr) {
            Some(header) => header,
            None => {
                let header = Header::decode(mem, addr)?;
                cache.keep_header(mem, addr, &header);
                header
            }
        };
        let frame = CallFrame::new(mem, header, Some(cache));
        handler(&frame)
    }

    #[inline(always)]
    fn new(mem: Memory<'a>, header: Header, cache: Option<&'a FrameCache>) -> CallFrame<'a> {
        CallFrame {
            mem,
            slots: Slots::new(header.num_args + header.num_rets),
            header,
            cache,
        }
    }

    /// Guest address of the frame.
    pub fn address(&self) -> u32 {
        self.header.addr
    }

    /// The execution stage (`abi::execution_stage::EXECUTE` for every call
    /// the host delivers).
    pub fn stage(&self) -> u32 {
        self.header.stage
    }

    /// Number of operands.
    pub fn num_args(&self) -> usize {
        self.header.num_args
    }

    /// Number of results.
    pub fn num_rets(&self) -> usize {
        self.header.num_rets
    }

    /// Fails with `INVALID_ARGUMENT` unless the call has exactly `args`
    /// operands and `rets` results.
    ///
    /// # Errors
    ///
    /// ``expected 1 operand(s) and 2 result(s), got 1 and 1``.
    pub fn expect_arity(&self, args: usize, rets: usize) -> Result<()> {
        if self.header.num_args == args && self.header.num_rets == rets {
            Ok(())
        } else {
            Err(Error::invalid_argument(alloc::format!(
                "expected {args} operand(s) and {rets} result(s), got {} and {}",
                self.header.num_args,
                self.header.num_rets
            )))
        }
    }

    /// Operand or result `which`, decoded and checked on first use and
    /// remembered for the rest of the call (`check_exclusive` looks at every
    /// buffer each time a result is taken). Inline for a buffer decoded
    /// already: a call of [`CallFrame::decode_slot`] costs more than the
    /// lookup.
    #[inline(always)]
    fn raw(&self, which: Which) -> Result<&RawBuffer<'a>> {
        let (i, n, index) = match which {
            Which::Arg(i) => (i, self.header.num_args, i),
            Which::Ret(i) => (i, self.header.num_rets, self.header.num_args + i),
        };
        if i < n
            && let Some(raw) = self.slots[index].decoded.get()
        {
            return Ok(raw);
        }
        self.decode_slot(which)
    }

    /// [`CallFrame::raw`] for a buffer not decoded yet in this call (or out
    /// of range: the error).
    #[inline(never)]
    fn decode_slot(&self, which: Which) -> Result<&RawBuffer<'a>> {
        let (i, n, types, ptrs, want, kind) = match which {
            Which::Arg(i) => (
                i,
                self.header.num_args,
                self.header.arg_types,
                self.header.args,
                arg_type::BUFFER,
                "operand",
            ),
            Which::Ret(i) => (
                i,
                self.header.num_rets,
                self.header.ret_types,
                self.header.rets,
                ret_type::BUFFER,
                "result",
            ),
        };
        if i >= n {
            return Err(crate::error::cold(
                crate::error::ErrorCode::InvalidArgument,
                format_args!("{which} requested, but the call has {n} {kind}(s)"),
            ));
        }
        let index = match which {
            Which::Arg(i) => i,
            Which::Ret(i) => self.header.num_args + i,
        };
        let slot = &self.slots[index];
        if let Some(raw) = slot.decoded.get() {
            return Ok(raw);
        }
        let ty = self
            .mem
            .u32(Memory::offset(types, 4 * i as u64, &which)?, &which)?;
        if ty != want {
            return Err(crate::error::cold(
                crate::error::ErrorCode::Internal,
                format_args!("{which} has type {ty}, expected a buffer ({want})"),
            ));
        }
        let addr = self
            .mem
            .u32(Memory::offset(ptrs, 4 * i as u64, &which)?, &which)?;
        let kept = self
            .cache
            .and_then(|c| c.buffer(self.mem, index, addr, which));
        let raw = match kept {
            Some(raw) => raw,
            None => {
                let raw = RawBuffer::decode(self.mem, addr, which)?;
                if let Some(cache) = self.cache {
                    cache.keep_buffer(self.mem, index, addr, &raw);
                }
                raw
            }
        };
        Ok(slot.decoded.get_or_init(|| raw))
    }

    /// Operand `i`, any dtype.
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` if `i` is out of range, the buffer is malformed, or
    /// a result aliased with it was taken (``argument 0 is aliased with
    /// result 0 (in place), which was taken: its values are in result 0``).
    pub fn any_arg(&self, i: usize) -> Result<AnyBuffer<'a>> {
        let raw = *self.raw(Which::Arg(i))?;
        let slot = &self.slots[i];
        if let Some(j) = slot.in_place.get() {
            return Err(Error::invalid_argument(alloc::format!(
                "argument {i} is aliased with result {j} (in place), which was taken: \
                 its values are in result {j}"
            )));
        }
        slot.viewed.set(true);
        Ok(AnyBuffer::new(raw))
    }

    /// Operand `i` as a typed buffer.
    ///
    /// # Errors
    ///
    /// As [`CallFrame::any_arg`], and `INVALID_ARGUMENT` if its dtype is not
    /// `T::DTYPE` (``argument 0: expected a f32 buffer, got f64 [3, 5]``).
    pub fn arg<T: Element>(&self, i: usize) -> Result<Buffer<'a, T>> {
        self.any_arg(i)?.typed()
    }

    /// Result `i`, any dtype, held exclusively. A result aliased with an
    /// operand (same address and size) holds the operand's values; see
    /// [In-place updates](CallFrame#in-place-updates).
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` if `i` is out of range, the result was already
    /// taken, or it is aliased with an operand that was already viewed
    /// (``result 0 is aliased with argument 0 (in place), which was already
    /// viewed: take result 0 first and read the argument's values through
    /// it``); `INTERNAL` if its memory partly overlaps another buffer or
    /// overlaps a dims array.
    pub fn any_ret(&self, i: usize) -> Result<AnyResultBuffer<'a>> {
        let which = Which::Ret(i);
        let raw = *self.raw(which)?;
        let slot = &self.slots[self.header.num_args + i];
        if slot.taken.get() {
            return Err(Error::invalid_argument(alloc::format!(
                "{which} was already taken"
            )));
        }
        self.check_exclusive(&raw)?;
        slot.taken.set(true);
        Ok(AnyResultBuffer::new_exclusive(raw))
    }

    /// Result `i` as a typed, writable buffer.
    ///
    /// # Errors
    ///
    /// As [`CallFrame::any_ret`], and `INVALID_ARGUMENT` if its dtype is not
    /// `T::DTYPE`.
    pub fn ret<T: Element>(&self, i: usize) -> Result<ResultBuffer<'a, T>> {
        self.any_ret(i)?.typed()
    }

    /// The operand that result `i` aliases (the same address and size: XLA's
    /// `input_output_aliases` or a donated argument), if any; the first one
    /// if several operands share that memory. Views and takes nothing, so a
    /// handler can ask before choosing between updating in place and
    /// copying its operand.
    ///
    /// # Errors
    ///
    /// As [`CallFrame::any_ret`] and [`CallFrame::any_arg`] for a malformed
    /// buffer.
    pub fn aliased_arg(&self, i: usize) -> Result<Option<usize>> {
        let mine = self.raw(Which::Ret(i))?.span();
        if mine.is_empty() {
            return Ok(None);
        }
        for arg in 0..self.header.num_args {
            if self.raw(Which::Arg(arg))?.span() == mine {
                return Ok(Some(arg));
            }
        }
        Ok(None)
    }

    /// Checks that `ret`'s data overlaps no other buffer's data and no dims,
    /// except operands it aliases exactly (same span), which must not have
    /// been viewed; then marks those operands as updated in place. Runs on
    /// every result taken: one pass over the slots, the buffers decoded
    /// already read in place.
    fn check_exclusive(&self, ret: &RawBuffer<'a>) -> Result<()> {
        let mine = ret.span();
        if mine.is_empty() {
            return Ok(());
        }
        let Which::Ret(j) = ret.which else {
            return Err(Error::internal("check_exclusive on an operand"));
        };
        let n_args = self.header.num_args;
        let me = n_args + j;
        let overlaps =
            |r: &core::ops::Range<u64>| !r.is_empty() && r.start < mine.end && mine.start < r.end;
        let slots: &[Slot<'a>] = &self.slots;
        let which_of = |index: usize| {
            if index < n_args {
                Which::Arg(index)
            } else {
                Which::Ret(index - n_args)
            }
        };
        for (index, slot) in slots.iter().enumerate() {
            let other = match slot.decoded.get() {
                Some(raw) => raw,
                None => self.decode_slot(which_of(index))?,
            };
            let alias = index < n_args && other.span() == mine;
            if overlaps(&other.dims_span()) || (index != me && !alias && overlaps(&other.span())) {
                return Err(Error::internal(alloc::format!(
                    "{}: its memory overlaps {}",
                    ret.which,
                    which_of(index)
                )));
            }
            if alias && slot.viewed.get() {
                return Err(Error::invalid_argument(alloc::format!(
                    "result {j} is aliased with argument {index} (in place), which was already \
                     viewed: take result {j} first and read the argument's values through it"
                )));
            }
        }
        for slot in &slots[..n_args] {
            if slot.decoded.get().is_some_and(|other| other.span() == mine) {
                slot.in_place.set(Some(j));
            }
        }
        Ok(())
    }

    /// The call's attributes.
    pub fn attrs(&self) -> Attrs<'a> {
        self.header.attrs.attrs(self.mem)
    }

    /// Attribute `name` converted to `T`; see [`Attrs::get`].
    ///
    /// # Errors
    ///
    /// As [`Attrs::get`].
    pub fn attr<T: FromAttr<'a>>(&self, name: &str) -> Result<T> {
        self.attrs().get(name)
    }

    /// The device ordinal of this call (`XLA_FFI_DeviceOrdinal_Get`).
    ///
    /// # Errors
    ///
    /// The host's error, or `UNIMPLEMENTED` outside wasm32.
    pub fn device_ordinal(&self) -> Result<i32> {
        crate::context::device_ordinal(self.header.ctx)
    }

    /// The run id of this call (`XLA_FFI_RunId_Get`).
    ///
    /// # Errors
    ///
    /// The host's error, or `UNIMPLEMENTED` outside wasm32.
    pub fn run_id(&self) -> Result<i64> {
        crate::context::run_id(self.header.ctx)
    }
}
