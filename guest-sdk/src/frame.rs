//! [`CallFrame`]: the checked view of one call's wasm32 `XLA_FFI_CallFrame`.

// [`State`] and [`BufferStates`] hold buffer states inline, so that a call
// allocates nothing for the usual few buffers.
#![cfg_attr(
    not(target_arch = "wasm32"),
    expect(
        clippy::large_enum_variant,
        reason = "the inline slots are the point: a frame lives on the stack for one call"
    )
)]

use alloc::vec::Vec;
use core::cell::{Cell, OnceCell};

use crate::abi::{arg_type, ret_type};
use crate::attrs::{Attrs, FromAttr};
use crate::buffer::{AnyBuffer, AnyResultBuffer, Buffer, RawBuffer, ResultBuffer, Which};
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::header::Header;
use crate::memory::Memory;

/// One call: operands, results and attributes, as the host laid them out in
/// guest memory.
///
/// Inputs can be viewed any number of times ([`CallFrame::arg`],
/// [`CallFrame::any_arg`]). Each result can be taken once
/// ([`CallFrame::ret`], [`CallFrame::any_ret`]), and its memory overlaps no
/// other buffer (the host lays frames out so,
/// docs/abi.md, "What a guest may rely on"; a frame from elsewhere is
/// checked), so the mutable slices are exclusive.
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
    /// The frame's scalar fields.
    header: Header,
    /// How buffers are read, and what was handed out.
    state: State<'a>,
}

/// How a [`CallFrame`] reads its buffers.
enum State<'a> {
    /// The host's frame, or one [`CallFrame::validated`] checked as the
    /// host guarantees it (docs/abi.md, "What a guest may rely on"): each
    /// buffer is read where it is when asked for, without checks, and
    /// results are exclusive by the host's layout, so only exact aliases of
    /// an operand need tracking. Up to 64 operands and 64 results.
    Trusted(Handed),
    /// Any other frame: per buffer, operands then results, its decoding,
    /// checked on first use, and what was handed out.
    Checked(BufferStates<'a>),
}

/// What a trusted frame handed out, one bit per operand or result.
#[derive(Default)]
struct Handed {
    /// Operands viewed (shared views may be alive for the whole call).
    viewed: Cell<u64>,
    /// Results taken.
    taken: Cell<u64>,
    /// Operands that a taken result aliases (updated in place).
    in_place: Cell<u64>,
}

/// Most operands, and most results, a trusted frame tracks ([`Handed`]).
const TRUSTED_BUFFERS: usize = 64;

/// Buffers whose [`BufferState`]s a frame keeps without allocating.
const INLINE_SLOTS: usize = 4;

/// The [`BufferState`]s of a frame: inline for the usual few buffers, so that
/// decoding a frame allocates nothing on the per-call path.
enum BufferStates<'a> {
    Inline([BufferState<'a>; INLINE_SLOTS], usize),
    Heap(Vec<BufferState<'a>>),
}

impl<'a> BufferStates<'a> {
    #[inline(always)]
    fn new(n: usize) -> BufferStates<'a> {
        if n <= INLINE_SLOTS {
            BufferStates::Inline(Default::default(), n)
        } else {
            BufferStates::Heap((0..n).map(|_| BufferState::default()).collect())
        }
    }
}

impl<'a> core::ops::Deref for BufferStates<'a> {
    type Target = [BufferState<'a>];

    fn deref(&self) -> &[BufferState<'a>] {
        match self {
            BufferStates::Inline(slots, n) => &slots[..*n],
            BufferStates::Heap(slots) => slots,
        }
    }
}

/// What a [`CallFrame`] remembers of one buffer.
#[derive(Default)]
struct BufferState<'a> {
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
        let header = Header::decode(mem, addr)?;
        let slots = BufferStates::new(header.num_args + header.num_rets);
        Ok(CallFrame {
            mem,
            header,
            state: State::Checked(slots),
        })
    }

    /// The frame the host wrote at guest address `addr`, read as the host
    /// guarantees it (docs/abi.md, "What a guest may rely on"): nothing is
    /// decoded or checked again on the call's path but the frame's
    /// `struct_size` and the dtypes. `None` for a frame of another
    /// `struct_size` or of more than 64 operands or results (decode it).
    ///
    /// # Safety
    ///
    /// `addr` must be the frame the host passed to a handler export for the
    /// call in progress, or one [`CallFrame::validated`] accepted; its memory
    /// must not be accessed other than through the returned view during
    /// `'a`.
    #[cfg_attr(
        not(any(target_arch = "wasm32", test, feature = "testing")),
        expect(dead_code, reason = "used by guest exports and by `testing`")
    )]
    #[inline(always)]
    pub(crate) unsafe fn trusted(mem: Memory<'a>, addr: u32) -> Option<CallFrame<'a>> {
        // SAFETY: forwarded caller contract.
        let (struct_size, header) =
            unsafe { (mem.read_unchecked::<u32>(addr), Header::trusted(mem, addr)) };
        // One compare tells a frame of this ABI from anything else (which
        // decoding then reports).
        if struct_size != crate::abi::call_frame::STRUCT_SIZE
            || header.num_args > TRUSTED_BUFFERS
            || header.num_rets > TRUSTED_BUFFERS
        {
            return None;
        }
        Some(CallFrame {
            mem,
            header,
            state: State::Trusted(Handed::default()),
        })
    }

    /// The frame at guest address `addr` of `mem` as a trusted frame, if it
    /// is laid out as the host guarantees
    /// (docs/abi.md, "What a guest may rely on"), checked here in full: the
    /// header and every buffer decode, every buffer is a buffer, and no
    /// buffer's data overlaps another's (but an operand's exactly, or two
    /// operands' exactly), a dims array, a buffer struct, or the frame's
    /// arrays. `None` otherwise, or for
    /// more than 64 operands or results. How [`testing`](crate::testing)
    /// runs handlers on the trusted path a guest takes.
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn validated(mem: Memory<'a>, addr: u32) -> Option<CallFrame<'a>> {
        let checked = CallFrame::decode(mem, addr).ok()?;
        let h = &checked.header;
        let (n_args, n_rets) = (h.num_args, h.num_rets);
        if n_args > TRUSTED_BUFFERS || n_rets > TRUSTED_BUFFERS {
            return None;
        }
        let range = |start: u32, len: u64| u64::from(start)..u64::from(start) + len;
        // What no data may overlap, and the data spans (slot, span).
        let mut fixed = alloc::vec![
            range(addr, u64::from(crate::abi::call_frame::SIZE)),
            range(h.arg_types, 4 * n_args as u64),
            range(h.args, 4 * n_args as u64),
            range(h.ret_types, 4 * n_rets as u64),
            range(h.rets, 4 * n_rets as u64),
        ];
        let mut data = Vec::new();
        for index in 0..n_args + n_rets {
            let which = if index < n_args {
                Which::Arg(index)
            } else {
                Which::Ret(index - n_args)
            };
            let (ptrs, i) = match which {
                Which::Arg(i) => (h.args, i),
                Which::Ret(i) => (h.rets, i),
            };
            let raw = checked.decode_slot(which).ok()?;
            let ptr = mem.u32(ptrs + 4 * i as u32, &which).ok()?;
            fixed.push(range(ptr, u64::from(crate::abi::buffer::SIZE)));
            let dims = raw.dims_span();
            // Trusted dims are read through a slice: aligned, not at 0.
            if dims.start == 0 || !dims.start.is_multiple_of(8) {
                return None;
            }
            // So is trusted data, as any element type (at most 8-aligned).
            if raw.byte_len != 0 && (raw.data == 0 || !raw.data.is_multiple_of(8)) {
                return None;
            }
            fixed.push(dims);
            data.push((index, raw.span()));
        }
        let overlaps = |a: &core::ops::Range<u64>, b: &core::ops::Range<u64>| {
            !a.is_empty() && !b.is_empty() && a.start < b.end && b.start < a.end
        };
        for (k, (index, span)) in data.iter().enumerate() {
            if fixed.iter().any(|f| overlaps(span, f)) {
                return None;
            }
            for (_, theirs) in &data[k + 1..] {
                let same = span == theirs && *index < n_args;
                if overlaps(span, theirs) && !same {
                    return None;
                }
            }
        }
        // SAFETY: checked above: the frame, its arrays and buffers are laid
        // out as the host lays out its frames; the caller's view is
        // exclusive for 'a (Memory).
        unsafe { CallFrame::trusted(mem, addr) }
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

    /// Operand or result `which`: in a trusted frame read where it is (a
    /// few loads), in a checked one decoded and checked on first use and
    /// remembered for the rest of the call (`check_exclusive` looks at every
    /// buffer each time a result is taken). Inline for a buffer decoded
    /// already: a call of [`CallFrame::decode_slot`] costs more than the
    /// lookup.
    #[inline(always)]
    fn raw(&self, which: Which) -> Result<RawBuffer<'a>> {
        let (i, n, index, ptrs) = match which {
            Which::Arg(i) => (i, self.header.num_args, i, self.header.args),
            Which::Ret(i) => (
                i,
                self.header.num_rets,
                self.header.num_args + i,
                self.header.rets,
            ),
        };
        match &self.state {
            State::Trusted(_) if i < n => {
                // SAFETY: a trusted frame's pointer arrays hold `n` buffer
                // structs of the host's layout (CallFrame::trusted).
                unsafe {
                    let addr = self.mem.read_unchecked::<u32>(ptrs + 4 * i as u32);
                    RawBuffer::trusted(self.mem, addr, which)
                }
            }
            State::Checked(slots) if i < n => match slots[index].decoded.get() {
                Some(raw) => Ok(*raw),
                None => self.decode_slot(which).copied(),
            },
            _ => Err(out_of_range(which, n)),
        }
    }

    /// [`CallFrame::raw`] in a checked frame for a buffer not decoded yet
    /// in this call (or out of range: the error).
    #[inline(never)]
    fn decode_slot(&self, which: Which) -> Result<&RawBuffer<'a>> {
        let (i, n, types, ptrs, want) = match which {
            Which::Arg(i) => (
                i,
                self.header.num_args,
                self.header.arg_types,
                self.header.args,
                arg_type::BUFFER,
            ),
            Which::Ret(i) => (
                i,
                self.header.num_rets,
                self.header.ret_types,
                self.header.rets,
                ret_type::BUFFER,
            ),
        };
        let State::Checked(slots) = &self.state else {
            return Err(Error::internal("decode_slot on a trusted frame"));
        };
        if i >= n {
            return Err(out_of_range(which, n));
        }
        let index = match which {
            Which::Arg(i) => i,
            Which::Ret(i) => self.header.num_args + i,
        };
        let slot = &slots[index];
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
        let raw = RawBuffer::decode(self.mem, addr, which)?;
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
        let raw = self.raw(Which::Arg(i))?;
        match &self.state {
            State::Trusted(handed) => {
                let bit = 1u64 << i;
                if handed.in_place.get() & bit != 0 {
                    return Err(self.in_place_error_of(i, &raw));
                }
                handed.viewed.set(handed.viewed.get() | bit);
            }
            State::Checked(slots) => {
                let slot = &slots[i];
                if let Some(j) = slot.in_place.get() {
                    return Err(in_place_error(i, j));
                }
                slot.viewed.set(true);
            }
        }
        Ok(AnyBuffer::new(raw))
    }

    /// The error of viewing operand `i` (`raw`) of a trusted frame after a
    /// result that aliases it was taken.
    #[cold]
    #[inline(never)]
    fn in_place_error_of(&self, i: usize, raw: &RawBuffer<'a>) -> Error {
        let taken = match &self.state {
            State::Trusted(handed) => handed.taken.get(),
            State::Checked(_) => 0,
        };
        let j = (0..self.header.num_rets)
            .find(|&j| {
                taken & (1 << j) != 0
                    && self
                        .raw(Which::Ret(j))
                        .is_ok_and(|ret| ret.span() == raw.span())
            })
            .unwrap_or(0);
        in_place_error(i, j)
    }

    /// Operand `i` as a typed buffer.
    ///
    /// # Errors
    ///
    /// As [`CallFrame::any_arg`], and `INVALID_ARGUMENT` if its dtype is not
    /// `T::DTYPE` (``argument 0: expected a f32 buffer, got f64 [3, 5]``).
    pub fn arg<T: Element>(&self, i: usize) -> Result<Buffer<'a, T>> {
        if let (State::Trusted(handed), Some(raw)) =
            (&self.state, self.trusted_as::<T>(Which::Arg(i)))
        {
            let bit = 1u64 << i;
            if handed.in_place.get() & bit == 0 {
                handed.viewed.set(handed.viewed.get() | bit);
                // SAFETY: read from the host's frame as `T::DTYPE`
                // (trusted_as); operands are never handed out mutably but as
                // a result that aliases them, and none that aliases this one
                // was taken (in_place).
                return Ok(unsafe { Buffer::trusted(raw) });
            }
        }
        self.any_arg(i)?.typed()
    }

    /// Operand or result `which` of a trusted frame as a buffer of
    /// `T::DTYPE`, read where the host wrote it without decoding its dtype:
    /// the path of [`CallFrame::arg`] and [`CallFrame::ret`] for a call as
    /// the handler expects it. `None` for a checked frame, an index out of
    /// range or another dtype, which the general path then reports.
    #[inline(always)]
    fn trusted_as<T: Element>(&self, which: Which) -> Option<RawBuffer<'a>> {
        let State::Trusted(_) = &self.state else {
            return None;
        };
        let (i, n, ptrs) = match which {
            Which::Arg(i) => (i, self.header.num_args, self.header.args),
            Which::Ret(i) => (i, self.header.num_rets, self.header.rets),
        };
        if i >= n {
            return None;
        }
        // SAFETY: a trusted frame's pointer arrays hold `n` buffer structs
        // of the host's layout (CallFrame::trusted).
        unsafe {
            let addr = self.mem.read_unchecked::<u32>(ptrs + 4 * i as u32);
            RawBuffer::trusted_as::<T>(self.mem, addr, which)
        }
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
        let raw = self.raw(which)?;
        match &self.state {
            State::Trusted(handed) => {
                let bit = 1u64 << i;
                if handed.taken.get() & bit != 0 {
                    return Err(taken_error(which));
                }
                let aliases = self.trusted_aliases(&raw)?;
                if aliases & handed.viewed.get() != 0 {
                    let arg = (aliases & handed.viewed.get()).trailing_zeros() as usize;
                    return Err(viewed_error(i, arg));
                }
                handed.in_place.set(handed.in_place.get() | aliases);
                handed.taken.set(handed.taken.get() | bit);
            }
            State::Checked(slots) => {
                let slot = &slots[self.header.num_args + i];
                if slot.taken.get() {
                    return Err(taken_error(which));
                }
                self.check_exclusive(&raw)?;
                slot.taken.set(true);
            }
        }
        Ok(AnyResultBuffer::new_exclusive(raw))
    }

    /// The operands of a trusted frame whose data is result `ret`'s, one
    /// bit each. The host's layout gives two buffers the same non-empty
    /// data only when they are one region
    /// (docs/abi.md, "What a guest may rely on"), so one load per operand
    /// finds them; an operand at the same address is decoded only to rule
    /// out an empty one.
    #[inline(always)]
    fn trusted_aliases(&self, ret: &RawBuffer<'a>) -> Result<u64> {
        let mine = ret.span();
        if mine.is_empty() {
            return Ok(0);
        }
        let mut aliases = 0;
        for arg in 0..self.header.num_args {
            // SAFETY: a trusted frame's pointer arrays hold `num_args`
            // buffer structs of the host's layout (CallFrame::trusted).
            let data = unsafe {
                let addr = self
                    .mem
                    .read_unchecked::<u32>(self.header.args + 4 * arg as u32);
                self.mem
                    .read_unchecked::<u32>(addr + crate::abi::buffer::DATA)
            };
            if data == ret.data && self.raw(Which::Arg(arg))?.span() == mine {
                aliases |= 1 << arg;
            }
        }
        Ok(aliases)
    }

    /// Result `i` as a typed, writable buffer.
    ///
    /// # Errors
    ///
    /// As [`CallFrame::any_ret`], and `INVALID_ARGUMENT` if its dtype is not
    /// `T::DTYPE`.
    pub fn ret<T: Element>(&self, i: usize) -> Result<ResultBuffer<'a, T>> {
        if let (State::Trusted(handed), Some(raw)) =
            (&self.state, self.trusted_as::<T>(Which::Ret(i)))
        {
            let bit = 1u64 << i;
            if handed.taken.get() & bit == 0
                && let Ok(aliases) = self.trusted_aliases(&raw)
                && aliases & handed.viewed.get() == 0
            {
                handed.in_place.set(handed.in_place.get() | aliases);
                handed.taken.set(handed.taken.get() | bit);
                // SAFETY: read from the host's frame as `T::DTYPE`
                // (trusted_as); taken once (taken), and the operands whose
                // region it is were not viewed and no longer can be
                // (in_place); the host's layout shares its data with no
                // other buffer (docs/abi.md, "What a guest may rely on").
                return Ok(unsafe { ResultBuffer::trusted(raw) });
            }
        }
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

    /// Checks, in a checked frame, that `ret`'s data overlaps no other
    /// buffer's data and no dims, except operands it aliases exactly (same
    /// span), which must not have been viewed; then marks those operands as
    /// updated in place. Runs on every result taken: one pass over the
    /// slots, the buffers decoded already read in place.
    fn check_exclusive(&self, ret: &RawBuffer<'a>) -> Result<()> {
        let mine = ret.span();
        if mine.is_empty() {
            return Ok(());
        }
        let Which::Ret(j) = ret.which else {
            return Err(Error::internal("check_exclusive on an operand"));
        };
        let State::Checked(slots) = &self.state else {
            return Err(Error::internal("check_exclusive on a trusted frame"));
        };
        let n_args = self.header.num_args;
        let me = n_args + j;
        let overlaps =
            |r: &core::ops::Range<u64>| !r.is_empty() && r.start < mine.end && mine.start < r.end;
        let slots: &[BufferState<'a>] = slots;
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
                return Err(viewed_error(j, index));
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

/// The error of asking for a buffer past the end.
#[cold]
#[inline(never)]
fn out_of_range(which: Which, n: usize) -> Error {
    let kind = match which {
        Which::Arg(_) => "operand",
        Which::Ret(_) => "result",
    };
    crate::error::cold(
        crate::error::ErrorCode::InvalidArgument,
        format_args!("{which} requested, but the call has {n} {kind}(s)"),
    )
}

/// The error of taking a result twice.
#[cold]
#[inline(never)]
fn taken_error(which: Which) -> Error {
    Error::invalid_argument(alloc::format!("{which} was already taken"))
}

/// The error of viewing operand `i` after result `j`, which aliases it, was
/// taken.
#[cold]
#[inline(never)]
fn in_place_error(i: usize, j: usize) -> Error {
    Error::invalid_argument(alloc::format!(
        "argument {i} is aliased with result {j} (in place), which was taken: \
         its values are in result {j}"
    ))
}

/// The error of taking result `j` after operand `i`, which it aliases, was
/// viewed.
#[cold]
#[inline(never)]
fn viewed_error(j: usize, i: usize) -> Error {
    Error::invalid_argument(alloc::format!(
        "result {j} is aliased with argument {i} (in place), which was already \
         viewed: take result {j} first and read the argument's values through it"
    ))
}
