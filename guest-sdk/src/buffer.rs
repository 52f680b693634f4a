//! Operand and result buffers of a call: [`AnyBuffer`] / [`Buffer`] for
//! inputs, [`AnyResultBuffer`] / [`ResultBuffer`] for outputs.

use core::fmt;
use core::ops::{Deref, DerefMut};

use crate::abi::buffer as layout;
use crate::dtype::{DataType, Element};
use crate::error::{Error, Result};
use crate::memory::Memory;

/// Names a buffer in messages: `argument 0`, `result 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Which {
    Arg(usize),
    Ret(usize),
}

impl fmt::Display for Which {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Which::Arg(i) => write!(f, "argument {i}"),
            Which::Ret(i) => write!(f, "result {i}"),
        }
    }
}

/// Largest rank accepted in a frame (XLA's own limit is far lower).
const MAX_RANK: i64 = 64;

/// The decoded fields of one wasm32 `XLA_FFI_Buffer`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawBuffer<'a> {
    pub(crate) mem: Memory<'a>,
    pub(crate) which: Which,
    pub(crate) dtype: DataType,
    pub(crate) dims: &'a [i64],
    pub(crate) dims_addr: u32,
    pub(crate) data: u32,
    pub(crate) elements: usize,
    pub(crate) byte_len: usize,
}

/// The dtype of buffer `which` from its raw `XLA_FFI_DataType`: an
/// unknown one (one XLA may add) is an error, on the checked and the
/// trusted path alike.
#[inline(always)]
fn dtype_of(raw_dtype: u32, which: &Which) -> Result<DataType> {
    DataType::from_raw(raw_dtype).ok_or_else(|| {
        crate::error::cold(
            crate::error::ErrorCode::InvalidArgument,
            format_args!("{which}: unknown dtype {raw_dtype}"),
        )
    })
}

impl<'a> RawBuffer<'a> {
    /// Decodes and checks the `XLA_FFI_Buffer` at guest address `addr`.
    pub(crate) fn decode(mem: Memory<'a>, addr: u32, which: Which) -> Result<RawBuffer<'a>> {
        use crate::error::{ErrorCode::*, cold};
        let at = |off: u32| Memory::offset(addr, u64::from(off), &which);
        let struct_size = mem.u32(addr, &which)?;
        if struct_size < layout::STRUCT_SIZE {
            return Err(cold(
                Internal,
                format_args!(
                    "{which}: XLA_FFI_Buffer struct_size is {struct_size}, expected {}",
                    layout::STRUCT_SIZE
                ),
            ));
        }
        let raw_dtype = mem.u32(at(layout::DTYPE)?, &which)?;
        let dtype = dtype_of(raw_dtype, &which)?;
        let data = mem.u32(at(layout::DATA)?, &which)?;
        let rank = mem.i64(at(layout::RANK)?, &which)?;
        if !(0..=MAX_RANK).contains(&rank) {
            return Err(cold(
                Internal,
                format_args!("{which}: rank {rank} is out of range"),
            ));
        }
        let dims_addr = mem.u32(at(layout::DIMS)?, &which)?;
        let what = DimsOf(which);
        // SAFETY: i64 has no invalid bit patterns; dims are only ever read.
        let dims: &'a [i64] = unsafe { mem.slice(dims_addr, rank as usize, &what) }?;
        let mut elements: usize = 1;
        for (axis, &d) in dims.iter().enumerate() {
            let Ok(d) = usize::try_from(d) else {
                return Err(cold(
                    InvalidArgument,
                    format_args!("{which}: dimension {axis} is {d}"),
                ));
            };
            let Some(product) = elements.checked_mul(d) else {
                return Err(cold(
                    InvalidArgument,
                    format_args!("{which}: element count of {dims:?} overflows"),
                ));
            };
            elements = product;
        }
        let Some(byte_len) = dtype
            .byte_size(elements as u64)
            .and_then(|b| usize::try_from(b).ok())
        else {
            return Err(cold(
                InvalidArgument,
                format_args!("{which}: byte size of {dims:?} overflows"),
            ));
        };
        mem.check(data, byte_len, 1, &which)?;
        Ok(RawBuffer {
            mem,
            which,
            dtype,
            dims,
            dims_addr,
            data,
            elements,
            byte_len,
        })
    }

    /// The `XLA_FFI_Buffer` at guest address `addr` of the host's frame,
    /// read without the checks of [`RawBuffer::decode`]: the host wrote it
    /// (docs/abi.md, "What a guest may rely on"). Only an unknown dtype is
    /// an error (one XLA may add).
    ///
    /// # Safety
    ///
    /// `addr` must be a buffer struct of the host's frame of the call in
    /// progress (or of a frame [`CallFrame::validated`] accepted): inside
    /// `mem`, its dims `rank` non-negative `i64`s inside `mem`, 8-aligned
    /// and not at 0, and its data `byte_len` bytes inside `mem`, overlapping
    /// no other buffer's data unless they are the same region.
    ///
    /// [`CallFrame::validated`]: crate::CallFrame
    #[inline(always)]
    pub(crate) unsafe fn trusted(
        mem: Memory<'a>,
        addr: u32,
        which: Which,
    ) -> Result<RawBuffer<'a>> {
        // SAFETY: the struct is inside memory (caller); integers.
        let (raw_dtype, data, rank, dims_addr) = unsafe {
            (
                mem.read_unchecked::<u32>(addr + layout::DTYPE),
                mem.read_unchecked::<u32>(addr + layout::DATA),
                mem.read_unchecked::<i64>(addr + layout::RANK),
                mem.read_unchecked::<u32>(addr + layout::DIMS),
            )
        };
        let dtype = dtype_of(raw_dtype, &which)?;
        // SAFETY: the dims are inside memory, aligned and not at 0 (caller);
        // i64 has no invalid bit patterns and dims are only ever read.
        let dims: &'a [i64] = unsafe { mem.slice_unchecked(dims_addr, rank as usize) };
        // The host's data region holds the buffer's bytes, less than 4 GiB,
        // so a product of non-zero dimensions fits in 35 bits (1-bit types)
        // and every partial product too; with a 0 among the factors, the
        // wrapping product is 0, as the true one.
        // So are the bits (at most 128 an element): no overflow checks,
        // whose 128-bit multiplications are library calls on wasm32.
        let count = dims.iter().fold(1u64, |n, &d| n.wrapping_mul(d as u64));
        let bytes = count.wrapping_mul(u64::from(dtype.bits())).div_ceil(8);
        let (Ok(elements), Ok(byte_len)) = (usize::try_from(count), usize::try_from(bytes)) else {
            return Err(crate::error::cold(
                crate::error::ErrorCode::InvalidArgument,
                format_args!("{which}: element count of {dims:?} overflows"),
            ));
        };
        Ok(RawBuffer {
            mem,
            which,
            dtype,
            dims,
            dims_addr,
            data,
            elements,
            byte_len,
        })
    }

    /// The `XLA_FFI_Buffer` at guest address `addr` of the host's frame as
    /// a buffer of `T`, read as [`RawBuffer::trusted`] reads it but with
    /// the dtype known: `None` if its dtype is another, for the general path
    /// to report. One compare instead of decoding the dtype, and sizes in
    /// 32 bits without checks: the host's data region is less than 4 GiB
    /// and `T` at least a byte wide, so the element count and every partial
    /// product of the dims fit in a `u32` (with a 0 among the factors the
    /// wrapping product is 0, as the true one), and so does the byte size.
    ///
    /// # Safety
    ///
    /// As for [`RawBuffer::trusted`].
    #[inline(always)]
    pub(crate) unsafe fn trusted_as<T: Element>(
        mem: Memory<'a>,
        addr: u32,
        which: Which,
    ) -> Option<RawBuffer<'a>> {
        // SAFETY: the struct is inside memory (caller); an integer.
        let raw_dtype = unsafe { mem.read_unchecked::<u32>(addr + layout::DTYPE) };
        if raw_dtype != T::DTYPE as u32 {
            return None;
        }
        // SAFETY: the struct is inside memory (caller); integers.
        let (data, rank, dims_addr) = unsafe {
            (
                mem.read_unchecked::<u32>(addr + layout::DATA),
                mem.read_unchecked::<i64>(addr + layout::RANK),
                mem.read_unchecked::<u32>(addr + layout::DIMS),
            )
        };
        // SAFETY: the dims are inside memory, aligned and not at 0 (caller);
        // i64 has no invalid bit patterns and dims are only ever read.
        let dims: &'a [i64] = unsafe { mem.slice_unchecked(dims_addr, rank as usize) };
        // The usual ranks without a loop.
        let count = match *dims {
            [] => 1,
            [a] => a as u32,
            [a, b] => (a as u32).wrapping_mul(b as u32),
            _ => dims.iter().fold(1u32, |n, &d| n.wrapping_mul(d as u32)),
        };
        Some(RawBuffer {
            mem,
            which,
            dtype: T::DTYPE,
            dims,
            dims_addr,
            data,
            elements: count as usize,
            // Every element type's size is its dtype's width.
            byte_len: count.wrapping_mul(size_of::<T>() as u32) as usize,
        })
    }

    /// Guest byte range of the data, for overlap checks.
    pub(crate) fn span(&self) -> core::ops::Range<u64> {
        u64::from(self.data)..u64::from(self.data) + self.byte_len as u64
    }

    /// Guest byte range of the dims array.
    pub(crate) fn dims_span(&self) -> core::ops::Range<u64> {
        u64::from(self.dims_addr)..u64::from(self.dims_addr) + 8 * self.dims.len() as u64
    }

    /// [`AnyBuffer::dims_of_rank`], for every buffer type.
    fn dims_of_rank<const N: usize>(&self) -> Result<[usize; N]> {
        if self.dims.len() != N {
            return Err(Error::invalid_argument(alloc::format!(
                "{}: expected rank {N}, got {} {:?}",
                self.which,
                self.dtype,
                self.dims
            )));
        }
        // Dimensions were checked non-negative and to fit usize products.
        Ok(core::array::from_fn(|i| self.dims[i] as usize))
    }

    /// [`AnyBuffer::expect_dims`], for every buffer type.
    fn expect_dims(&self, expected: &[usize]) -> Result<()> {
        let detail = if self.dims.len() != expected.len() {
            alloc::format!("rank {}, expected {}", self.dims.len(), expected.len())
        } else if let Some(i) =
            (0..expected.len()).find(|&i| self.dims[i] as u64 != expected[i] as u64)
        {
            alloc::format!(
                "dimension {i} is {}, expected {}",
                self.dims[i],
                expected[i]
            )
        } else {
            return Ok(());
        };
        Err(Error::invalid_argument(alloc::format!(
            "{}: expected dims {expected:?}, got {} {:?}: {detail}",
            self.which,
            self.dtype,
            self.dims
        )))
    }

    fn check_dtype(&self, want: DataType) -> Result<()> {
        if self.dtype == want {
            Ok(())
        } else {
            Err(Error::invalid_argument(alloc::format!(
                "{}: expected a {want} buffer, got {} {:?}",
                self.which,
                self.dtype,
                self.dims
            )))
        }
    }
}

pub(crate) struct DimsOf(pub(crate) Which);

impl fmt::Display for DimsOf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} dims", self.0)
    }
}

/// The shape accessors of every buffer type, read from its `raw` field.
macro_rules! shape_methods {
    () => {
        /// Dimensions, major to minor (row-major layout).
        pub fn dims(&self) -> &'a [i64] {
            self.raw.dims
        }

        /// Number of dimensions.
        pub fn rank(&self) -> usize {
            self.raw.dims.len()
        }

        /// Number of elements (product of the dimensions; 1 for rank 0).
        pub fn element_count(&self) -> usize {
            self.raw.elements
        }

        /// Size of the last (minor) dimension, or `None` for rank 0.
        pub fn last_dim(&self) -> Option<usize> {
            // Dimensions were checked non-negative and to fit usize products.
            self.raw.dims.last().map(|&d| d as usize)
        }

        /// Element type.
        pub fn dtype(&self) -> DataType {
            self.raw.dtype
        }

        /// The dimensions of a buffer of rank `N`, as sizes: XLA FFI 0.5's
        /// `match::Buffer<dtype, N>` with a captured dimension each, in
        /// Rust. Bind them to names, and hold the other buffers to them
        /// with [`expect_dims`](Self::expect_dims) (the guide's "Dtype
        /// dispatch: check the shape first").
        ///
        /// # Errors
        ///
        /// `INVALID_ARGUMENT` naming the buffer, the rank expected and the
        /// buffer's shape (`argument 0: expected rank 2, got f32 [4]`).
        pub fn dims_of_rank<const N: usize>(&self) -> Result<[usize; N]> {
            self.raw.dims_of_rank()
        }

        /// Checks that the dimensions are `expected`, major to minor: XLA FFI
        /// 0.5's `WithDims` under `Match`/`Verify`, in Rust.
        ///
        /// # Errors
        ///
        /// `INVALID_ARGUMENT` naming the buffer, the dimensions expected
        /// and its shape, and the first dimension that differs (`result 0:
        /// expected dims [4, 8], got f32 [4, 9]: dimension 1 is 9, expected
        /// 8`).
        pub fn expect_dims(&self, expected: &[usize]) -> Result<()> {
            self.raw.expect_dims(expected)
        }
    };
}

/// An input buffer of any element type: dispatch on [`AnyBuffer::dtype`],
/// then view it with [`AnyBuffer::typed`].
#[derive(Clone, Copy, Debug)]
pub struct AnyBuffer<'a> {
    raw: RawBuffer<'a>,
}

impl<'a> AnyBuffer<'a> {
    pub(crate) fn new(raw: RawBuffer<'a>) -> AnyBuffer<'a> {
        AnyBuffer { raw }
    }

    shape_methods!();

    /// Size of the data in bytes (`ceil(elements * bits / 8)`; 0 for tokens).
    pub fn byte_len(&self) -> usize {
        self.raw.byte_len
    }

    /// The data as bytes (PRED buffers: one byte per element, 0 or 1; sub-byte
    /// types packed, element 0 in the low bits).
    ///
    /// # Errors
    ///
    /// The data is not inside guest memory.
    pub fn bytes(&self) -> Result<&'a [u8]> {
        // SAFETY: bytes have no invalid patterns; inputs are never handed out
        // mutably: results were checked to overlap no input, except one they
        // alias exactly, which CallFrame then no longer lets be viewed, and
        // which cannot have been viewed before (CallFrame::any_ret).
        unsafe {
            self.raw
                .mem
                .slice(self.raw.data, self.raw.byte_len, &self.raw.which)
        }
    }

    /// A typed view.
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` if the dtype is not `T::DTYPE` (the message names
    /// the argument, both dtypes and the shape); `INTERNAL` if the data is
    /// misaligned for `T` or outside guest memory.
    pub fn typed<T: Element>(&self) -> Result<Buffer<'a, T>> {
        self.raw.check_dtype(T::DTYPE)?;
        crate::dtype::any_bit_pattern::<T>();
        // SAFETY: T accepts every bit pattern of DTYPE's width (asserted
        // above when compiled); inputs are never handed out mutably (see
        // bytes()).
        let data = unsafe {
            self.raw
                .mem
                .slice(self.raw.data, self.raw.elements, &self.raw.which)
        }?;
        Ok(Buffer {
            raw: self.raw,
            data,
        })
    }
}

/// A typed input buffer: dimensions and a slice of elements. Dereferences to
/// `[T]`.
#[derive(Clone, Copy, Debug)]
pub struct Buffer<'a, T> {
    raw: RawBuffer<'a>,
    data: &'a [T],
}

impl<'a, T: Element> Buffer<'a, T> {
    shape_methods!();

    /// `raw` (of dtype `T::DTYPE`) as a typed buffer, without the checks of
    /// [`AnyBuffer::typed`].
    ///
    /// # Safety
    ///
    /// `raw` must come from [`RawBuffer::trusted_as`] with `T::DTYPE` (the
    /// host's frame: its data is inside memory, non-null and 64-byte
    /// aligned), and its data must not be handed out mutably during `'a`.
    #[inline(always)]
    pub(crate) unsafe fn trusted(raw: RawBuffer<'a>) -> Buffer<'a, T> {
        crate::dtype::any_bit_pattern::<T>();
        // SAFETY: caller: inside memory, aligned for every element type,
        // not mutable elsewhere; T accepts every bit pattern (asserted).
        let data = unsafe { raw.mem.slice_unchecked(raw.data, raw.elements) };
        Buffer { raw, data }
    }

    /// The elements, row-major.
    pub fn data(&self) -> &'a [T] {
        self.data
    }
}

impl<T> Deref for Buffer<'_, T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        self.data
    }
}

/// A result buffer of any element type, held exclusively. Dispatch on
/// [`AnyResultBuffer::dtype`], then view it with [`AnyResultBuffer::typed`].
#[derive(Debug)]
pub struct AnyResultBuffer<'a> {
    raw: RawBuffer<'a>,
}

impl<'a> AnyResultBuffer<'a> {
    /// The caller guarantees that no other reference to this buffer's data
    /// exists or will be created during `'a`.
    pub(crate) fn new_exclusive(raw: RawBuffer<'a>) -> AnyResultBuffer<'a> {
        AnyResultBuffer { raw }
    }

    shape_methods!();

    /// Size of the data in bytes.
    pub fn byte_len(&self) -> usize {
        self.raw.byte_len
    }

    /// The data as writable bytes. Results are not zero-initialised: write
    /// every byte.
    ///
    /// # Errors
    ///
    /// The data is not inside guest memory.
    pub fn into_bytes(self) -> Result<&'a mut [u8]> {
        // SAFETY: exclusive by construction (new_exclusive), bytes are always valid.
        unsafe {
            self.raw
                .mem
                .slice_mut(self.raw.data, self.raw.byte_len, &self.raw.which)
        }
    }

    /// A typed, writable view.
    ///
    /// # Errors
    ///
    /// As [`AnyBuffer::typed`].
    pub fn typed<T: Element>(self) -> Result<ResultBuffer<'a, T>> {
        self.raw.check_dtype(T::DTYPE)?;
        crate::dtype::any_bit_pattern::<T>();
        // SAFETY: exclusive by construction; T accepts any bit pattern
        // (asserted above when compiled).
        let data = unsafe {
            self.raw
                .mem
                .slice_mut(self.raw.data, self.raw.elements, &self.raw.which)
        }?;
        Ok(ResultBuffer {
            raw: self.raw,
            data,
        })
    }
}

/// A typed result buffer: dimensions and a mutable slice of elements.
/// Dereferences to `[T]`. Results are not zero-initialised: write every
/// element.
#[derive(Debug)]
pub struct ResultBuffer<'a, T> {
    raw: RawBuffer<'a>,
    data: &'a mut [T],
}

impl<'a, T: Element> ResultBuffer<'a, T> {
    shape_methods!();

    /// `raw` (of dtype `T::DTYPE`) as a typed, writable buffer, without the
    /// checks of [`AnyResultBuffer::typed`].
    ///
    /// # Safety
    ///
    /// `raw` must come from [`RawBuffer::trusted_as`] with `T::DTYPE` (the
    /// host's frame: its data is inside memory, non-null and 64-byte
    /// aligned), and no other reference to its data may exist or be created
    /// during `'a` (a result taken once, none of whose operands was viewed).
    #[inline(always)]
    pub(crate) unsafe fn trusted(raw: RawBuffer<'a>) -> ResultBuffer<'a, T> {
        crate::dtype::any_bit_pattern::<T>();
        // SAFETY: caller: inside memory, aligned for every element type,
        // exclusive; T accepts every bit pattern (asserted).
        let data = unsafe { raw.mem.slice_mut_unchecked(raw.data, raw.elements) };
        ResultBuffer { raw, data }
    }

    /// The elements, row-major.
    pub fn data_mut(&mut self) -> &mut [T] {
        self.data
    }

    /// The elements for the whole call.
    pub fn into_data(self) -> &'a mut [T] {
        self.data
    }
}

impl<T> Deref for ResultBuffer<'_, T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        self.data
    }
}

impl<T> DerefMut for ResultBuffer<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.data
    }
}
