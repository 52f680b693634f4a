//! Argument and result buffers: [`BufferView`] and the [`Element`] types
//! they can be viewed as (the contract's trait, which the guest SDK shares).

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::mem::{MaybeUninit, align_of};

use smallvec::SmallVec;

use super::{FrameDefect, check_struct_ptr, slice_from_raw_parts};
pub use cyxla_xla_types::element::Element;

use crate::dtype::DType;
use crate::error::HandlerError;
use crate::ffi::xla_ffi::{XLA_FFI_Buffer, XLA_FFI_Buffer_STRUCT_SIZE};

/// Whether a buffer is an argument or a result (for messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    Argument,
    Result,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Argument => "argument",
            Role::Result => "result",
        })
    }
}

/// The `XLA_FFI_Buffer` behind `buffer`, if the pointer is non-NULL and
/// aligned and the struct at least as long as the fields read.
///
/// # Safety
///
/// As for [`BufferView::from_raw`].
#[inline(always)]
unsafe fn raw_buffer<'a>(buffer: *const c_void) -> Result<&'a XLA_FFI_Buffer, FrameDefect> {
    let buffer = buffer.cast::<XLA_FFI_Buffer>();
    // SAFETY: a buffer starts with size_t struct_size (caller contract).
    unsafe { check_struct_ptr(buffer, XLA_FFI_Buffer_STRUCT_SIZE) }?;
    // SAFETY: struct_size covers the whole struct (48 = size_of on x86_64
    // and aarch64); valid for 'a by the caller's contract.
    Ok(unsafe { &*buffer })
}

/// `a == b` without a call to `memcmp`, which the slices' `==` makes: a
/// shape's dims are a few words.
#[inline(always)]
fn same(a: &[i64], b: &[i64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// A buffer's dtype and dims with the sizes they give, owned: made from a
/// checked view ([`BufferView::shape`]) or computed ([`BufferShape::new`])
/// with the checks [`CallFrame::from_raw`](super::CallFrame::from_raw)
/// makes of a buffer, so that its sizes are always those of its dtype and
/// dims.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferShape {
    dtype: DType,
    dims: SmallVec<[i64; 4]>,
    element_count: usize,
    byte_len: usize,
}

impl BufferShape {
    /// The shape of a `dtype` buffer of `dims`.
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` if a dimension is negative or the element count
    /// or byte size overflows (as `CallFrame::from_raw` refuses them).
    pub fn new(dtype: DType, dims: &[i64]) -> Result<BufferShape, HandlerError> {
        let err =
            |what: String| HandlerError::invalid_argument(format!("shape {dtype}{dims:?}: {what}"));
        let (element_count, byte_len) = sizes(dtype, dims).map_err(err)?;
        Ok(BufferShape {
            dtype,
            dims: SmallVec::from_slice(dims),
            element_count,
            byte_len,
        })
    }

    /// Element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Dimensions (empty for a scalar).
    pub fn dims(&self) -> &[i64] {
        &self.dims
    }

    /// Product of the dimensions.
    pub fn element_count(&self) -> usize {
        self.element_count
    }

    /// Size in bytes.
    pub fn byte_len(&self) -> usize {
        self.byte_len
    }
}

/// The element count and byte size of a `dtype` buffer of `dims`, or what
/// is wrong with them.
#[inline(always)]
fn sizes(dtype: DType, dims: &[i64]) -> Result<(usize, usize), String> {
    let mut element_count: usize = 1;
    for (d, &extent) in dims.iter().enumerate() {
        let extent = usize::try_from(extent).map_err(|_| format!("dimension {d} is {extent}"))?;
        element_count = element_count
            .checked_mul(extent)
            .ok_or_else(|| format!("the element count of shape {dims:?} overflows"))?;
    }
    let byte_len = dtype
        .byte_size(element_count as u64)
        .and_then(|b| usize::try_from(b).ok())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| {
            format!("the byte size of {dtype}{dims:?} ({element_count} elements) overflows")
        })?;
    Ok((element_count, byte_len))
}

/// A validated view of one argument or result buffer (dense, in the
/// operand's layout: row-major unless the program says otherwise).
#[derive(Clone, Copy)]
pub struct BufferView<'a> {
    dtype: DType,
    dims: &'a [i64],
    element_count: usize,
    byte_len: usize,
    data: *mut u8,
    role: Role,
    index: usize,
    _memory: PhantomData<&'a mut [u8]>,
}

// SAFETY: a BufferView is immutable metadata plus an address; every access
// to the memory behind it goes through `unsafe` methods whose contracts
// (no conflicting access for 'a) make sharing across threads sound.
unsafe impl Send for BufferView<'_> {}
// SAFETY: as for Send.
unsafe impl Sync for BufferView<'_> {}

impl fmt::Debug for BufferView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufferView")
            .field("role", &self.role)
            .field("index", &self.index)
            .field("dtype", &self.dtype)
            .field("dims", &self.dims)
            .field("byte_len", &self.byte_len)
            .field("data", &self.data)
            .finish()
    }
}

impl<'a> BufferView<'a> {
    /// Validates one `XLA_FFI_Buffer`.
    ///
    /// # Safety
    ///
    /// `buffer` must be NULL or point at an `XLA_FFI_Buffer` (at least its
    /// `struct_size` bytes, and at least 48) whose `dims` hold `rank`
    /// integers and whose `data` holds the bytes its shape describes, all
    /// valid for `'a`.
    #[inline(always)]
    pub(super) unsafe fn from_raw(
        buffer: *const c_void,
        role: Role,
        index: usize,
    ) -> Result<BufferView<'a>, HandlerError> {
        let err = |what: String| HandlerError::invalid_argument(format!("{role} {index}: {what}"));
        // SAFETY: forwarded caller contract.
        let raw = unsafe { raw_buffer(buffer) }.map_err(|defect| {
            err(defect.describe(
                "the buffer pointer",
                "the buffer",
                XLA_FFI_Buffer_STRUCT_SIZE,
            ))
        })?;
        let Some(dtype) = DType::from_xla(raw.dtype) else {
            return Err(err(format!("unknown dtype {}", raw.dtype)));
        };
        let rank = usize::try_from(raw.rank).map_err(|_| err(format!("rank is {}", raw.rank)))?;
        // SAFETY: XLA provides `rank` dims valid for 'a (caller contract).
        let dims = unsafe { slice_from_raw_parts(raw.dims.cast_const(), rank) }
            .map_err(|e| err(format!("dims (rank {rank}) {e}")))?;
        let (element_count, byte_len) = sizes(dtype, dims).map_err(err)?;
        let data = raw.data.cast::<u8>();
        if byte_len > 0 && data.is_null() {
            return Err(err(format!("data is NULL for {byte_len} bytes")));
        }
        Ok(BufferView {
            dtype,
            dims,
            element_count,
            byte_len,
            data,
            role,
            index,
            _memory: PhantomData,
        })
    }

    /// The view [`BufferView::from_raw`] would make of `buffer` if it has
    /// `shape`'s dtype and dims, found by comparing them instead of
    /// computing its sizes (`shape` holds them, computed from the same
    /// dtype and dims); `None` if it has another shape, or is not a buffer
    /// `from_raw` would accept.
    ///
    /// # Safety
    ///
    /// As for [`BufferView::from_raw`].
    #[inline(always)]
    pub(super) unsafe fn from_shaped(
        buffer: *const c_void,
        shape: &BufferShape,
        role: Role,
        index: usize,
    ) -> Option<BufferView<'a>> {
        // SAFETY: forwarded caller contract.
        let raw = unsafe { raw_buffer(buffer) }.ok()?;
        if raw.dtype != shape.dtype.to_xla() || raw.rank != shape.dims.len() as i64 {
            return None;
        }
        // SAFETY: XLA provides `rank` dims valid for 'a (caller contract);
        // the rank is the shape's, a usize.
        let dims = unsafe { slice_from_raw_parts(raw.dims.cast_const(), shape.dims.len()) }.ok()?;
        let data = raw.data.cast::<u8>();
        if !same(dims, &shape.dims) || (shape.byte_len > 0 && data.is_null()) {
            return None;
        }
        // The dtype and dims are `shape`'s, whose sizes `BufferShape::new`
        // computed from them as `from_raw` does.
        Some(BufferView {
            dtype: shape.dtype,
            dims,
            element_count: shape.element_count,
            byte_len: shape.byte_len,
            data,
            role,
            index,
            _memory: PhantomData,
        })
    }

    /// This view's dtype and dims, with its sizes, kept past the call: what
    /// [`LazyFrame::arg_shaped`](super::LazyFrame::arg_shaped) compares a
    /// later call's buffer with.
    pub fn shape(&self) -> BufferShape {
        BufferShape {
            dtype: self.dtype,
            dims: SmallVec::from_slice(self.dims),
            element_count: self.element_count,
            byte_len: self.byte_len,
        }
    }

    /// Element type.
    #[inline]
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Dimensions (empty for a scalar).
    #[inline]
    pub fn dims(&self) -> &'a [i64] {
        self.dims
    }

    /// Number of dimensions.
    #[inline]
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Product of the dimensions (1 for a scalar, 0 if any dimension is 0).
    #[inline]
    pub fn element_count(&self) -> usize {
        self.element_count
    }

    /// Size in bytes (sub-byte types packed; 0 for tokens).
    #[inline]
    pub fn byte_len(&self) -> usize {
        self.byte_len
    }

    /// Address of the data (do not read or write it when `byte_len` is 0).
    #[inline]
    pub fn data_ptr(&self) -> *mut u8 {
        self.data
    }

    /// The data as bytes (empty when `byte_len` is 0).
    ///
    /// # Safety
    ///
    /// No `&mut` to the same memory may be live during `'a`: arguments may
    /// alias results (`output_operand_aliases`), so do not hold this
    /// together with [`BufferView::uninit_bytes`] of an aliasing result.
    #[inline]
    pub unsafe fn bytes(&self) -> &'a [u8] {
        if self.byte_len == 0 {
            return &[];
        }
        // SAFETY: non-NULL data of byte_len bytes (validated at
        // construction), valid for 'a; aliasing is the caller's contract.
        unsafe { std::slice::from_raw_parts(self.data, self.byte_len) }
    }

    /// A result's memory as bytes not yet written (empty when `byte_len` is
    /// 0). XLA does not initialise result buffers, so the view lets a
    /// handler write them but not read what was there: write every byte
    /// (e.g. `write_copy_of_slice`).
    ///
    /// # Safety
    ///
    /// The caller needs exclusive access for `'a`: use it only for results,
    /// at most once per buffer, and not while a view of an aliasing
    /// argument is live.
    #[inline]
    pub unsafe fn uninit_bytes(&self) -> &'a mut [MaybeUninit<u8>] {
        if self.byte_len == 0 {
            return &mut [];
        }
        // SAFETY: non-NULL data of byte_len bytes (validated at
        // construction), valid for 'a; `MaybeUninit<u8>` has u8's layout and
        // claims nothing of the bytes; exclusivity is the caller's contract.
        unsafe {
            std::slice::from_raw_parts_mut(self.data.cast::<MaybeUninit<u8>>(), self.byte_len)
        }
    }

    fn check_element<T: Element>(&self) -> Result<(), HandlerError> {
        if self.dtype != T::DTYPE {
            return Err(HandlerError::invalid_argument(format!(
                "{} {} has dtype {}, expected {}",
                self.role,
                self.index,
                self.dtype,
                T::DTYPE
            )));
        }
        if self.element_count > 0 && !self.data.addr().is_multiple_of(align_of::<T>()) {
            return Err(HandlerError::invalid_argument(format!(
                "{} {}: data at {:p} is not aligned for {}",
                self.role,
                self.index,
                self.data,
                T::DTYPE
            )));
        }
        Ok(())
    }

    /// The data as a slice of `T`, whose dtype must match.
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` if the dtype differs from `T::DTYPE` (naming
    /// both), the data is misaligned for `T`, or (for `bool`) a byte is
    /// neither 0 nor 1.
    ///
    /// # Safety
    ///
    /// As for [`BufferView::bytes`].
    pub unsafe fn as_slice<T: Element>(&self) -> Result<&'a [T], HandlerError> {
        self.check_element::<T>()?;
        if self.element_count == 0 {
            return Ok(&[]);
        }
        if !T::ANY_BIT_PATTERN {
            // SAFETY: forwarded caller contract.
            let bytes = unsafe { self.bytes() };
            if let Some(pos) = bytes.iter().position(|&b| b > 1) {
                return Err(HandlerError::invalid_argument(format!(
                    "{} {}: element {pos} is {}, not a valid pred (0 or 1)",
                    self.role, self.index, bytes[pos]
                )));
            }
        }
        // SAFETY: dtype matches T (same size: Element's safety contract
        // gives T its DTYPE's width), data is non-NULL, aligned and holds
        // element_count elements valid for 'a; bit patterns are valid for T
        // (checked above for bool); aliasing is the caller's contract.
        Ok(unsafe { std::slice::from_raw_parts(self.data.cast::<T>(), self.element_count) })
    }

    /// A result's data as a slice of `T` not yet written, whose dtype must
    /// match. XLA does not initialise result buffers: write every element
    /// (`MaybeUninit::write`, `write_copy_of_slice`).
    ///
    /// # Errors
    ///
    /// As for [`BufferView::as_slice`] (except the pred check).
    ///
    /// # Safety
    ///
    /// As for [`BufferView::uninit_bytes`].
    pub unsafe fn as_uninit_slice<T: Element>(
        &self,
    ) -> Result<&'a mut [MaybeUninit<T>], HandlerError> {
        self.check_element::<T>()?;
        if self.element_count == 0 {
            return Ok(&mut []);
        }
        // SAFETY: dtype matches T (same size: Element's safety contract
        // gives T its DTYPE's width), data is non-NULL, aligned and holds
        // element_count elements valid for 'a; `MaybeUninit<T>` claims no
        // valid value; exclusivity is the caller's contract.
        Ok(unsafe {
            std::slice::from_raw_parts_mut(self.data.cast::<MaybeUninit<T>>(), self.element_count)
        })
    }

    /// A result's data as a mutable slice of `T`, every element zero first:
    /// for a kernel that reads the result as it writes it (accumulates).
    ///
    /// # Errors
    ///
    /// As for [`BufferView::as_slice`] (except the pred check).
    ///
    /// # Safety
    ///
    /// As for [`BufferView::uninit_bytes`].
    pub unsafe fn as_zeroed_slice<T: Element>(&self) -> Result<&'a mut [T], HandlerError> {
        // SAFETY: forwarded caller contract.
        let uninit = unsafe { self.as_uninit_slice::<T>() }?;
        let len = uninit.len();
        let data = uninit.as_mut_ptr().cast::<T>();
        // SAFETY: `data` holds `len` elements, exclusively ours for 'a; the
        // all-zero pattern is a valid value of every Element type (false,
        // 0, 0.0, 0 + 0i), so after the fill the slice is initialised.
        unsafe {
            std::ptr::write_bytes(data, 0, len);
            Ok(std::slice::from_raw_parts_mut(data, len))
        }
    }

    /// The data of a buffer that already holds values, as a mutable slice
    /// of `T` (whose dtype must match): a result aliased with an operand
    /// (`input_output_aliases`, donation), which starts with the operand's
    /// values, updated in place. For `bool`, bytes other than 0 are first
    /// normalised to 1.
    ///
    /// # Errors
    ///
    /// As for [`BufferView::as_slice`] (except the pred check).
    ///
    /// # Safety
    ///
    /// As for [`BufferView::uninit_bytes`], and the memory must hold values
    /// already: only a result that aliases an operand does. Any other result
    /// is uninitialised; use [`BufferView::as_uninit_slice`] or
    /// [`BufferView::as_zeroed_slice`] for it.
    pub unsafe fn as_mut_slice<T: Element>(&self) -> Result<&'a mut [T], HandlerError> {
        self.check_element::<T>()?;
        if self.element_count == 0 {
            return Ok(Default::default());
        }
        if !T::ANY_BIT_PATTERN {
            // SAFETY: the bytes are initialised and exclusively ours (caller
            // contract); u8 has no invalid values.
            let bytes = unsafe { std::slice::from_raw_parts_mut(self.data, self.byte_len) };
            for b in bytes.iter_mut() {
                *b = u8::from(*b != 0);
            }
        }
        // SAFETY: as in `as_slice`, with initialised values and exclusivity
        // from the caller.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.data.cast::<T>(), self.element_count) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::ffi::xla_ffi::*;
    use crate::frame::CallFrame;
    use crate::frame::testing::*;
    use cyxla_xla_types::element::Complex;
    use std::mem::size_of;
    use std::ptr;

    fn f32_bytes(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn frame_with(args: Vec<OwnedBuffer>, rets: Vec<OwnedBuffer>) -> OwnedFrame {
        OwnedFrame::new(args, rets, OwnedAttrs::new(vec![]))
    }

    #[test]
    fn buffers_and_dims() {
        let mut f = frame_with(
            vec![OwnedBuffer::new(
                XLA_FFI_DataType_F32,
                &[2, 2],
                &f32_bytes(&[1.0, 2.0, 3.0, 4.0]),
            )],
            vec![OwnedBuffer::new(XLA_FFI_DataType_F32, &[4], &[0; 16])],
        );
        // SAFETY: a complete owned frame that outlives the view.
        let frame = unsafe { CallFrame::from_raw(f.ptr()) }.unwrap();
        assert_eq!((frame.num_args(), frame.num_rets()), (1, 1));
        let a = frame.arg(0).unwrap();
        assert_eq!(a.dtype(), DType::F32);
        assert_eq!(a.dims(), &[2, 2]);
        assert_eq!((a.rank(), a.element_count(), a.byte_len()), (2, 4, 16));
        // SAFETY: no mutable view is live.
        let values = unsafe { a.as_slice::<f32>() }.unwrap();
        assert_eq!(values, &[1.0, 2.0, 3.0, 4.0]);
        // SAFETY: as above.
        let e = unsafe { a.as_slice::<f64>() }.unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert_eq!(e.message, "argument 0 has dtype f32, expected f64");
        let r = frame.ret(0).unwrap();
        // SAFETY: the only view of the result.
        let out = unsafe { r.as_uninit_slice::<f32>() }.unwrap();
        out.write_copy_of_slice(&[9.0, 8.0, 7.0, 6.0]);
        assert_eq!(f.rets[0].bytes(16), &f32_bytes(&[9.0, 8.0, 7.0, 6.0])[..]);
    }

    #[test]
    fn rank0_with_null_dims_and_zero_sized_buffers() {
        let mut scalar = OwnedBuffer::new(XLA_FFI_DataType_S32, &[], &7i32.to_le_bytes());
        scalar.raw.dims = ptr::null_mut();
        let mut empty = OwnedBuffer::new(XLA_FFI_DataType_F64, &[0, 3], &[]);
        empty.raw.data = ptr::null_mut();
        let mut f = frame_with(vec![scalar, empty], vec![]);
        // SAFETY: owned frame.
        let frame = unsafe { CallFrame::from_raw(f.ptr()) }.unwrap();
        let s = frame.arg(0).unwrap();
        assert_eq!((s.rank(), s.element_count()), (0, 1));
        // SAFETY: read-only.
        assert_eq!(unsafe { s.as_slice::<i32>() }.unwrap(), &[7]);
        let e = frame.arg(1).unwrap();
        assert_eq!((e.element_count(), e.byte_len()), (0, 0));
        // SAFETY: read-only; empty.
        assert!(unsafe { e.as_slice::<f64>() }.unwrap().is_empty());
        // SAFETY: empty.
        assert!(unsafe { e.bytes() }.is_empty());
    }

    #[test]
    fn element_widths_match_their_dtypes() {
        fn width<T: Element>() -> (usize, u32) {
            (size_of::<T>() * 8, T::DTYPE.bits())
        }
        for (bytes, bits) in [
            width::<bool>(),
            width::<i8>(),
            width::<i16>(),
            width::<i32>(),
            width::<i64>(),
            width::<u8>(),
            width::<u16>(),
            width::<u32>(),
            width::<u64>(),
            width::<f32>(),
            width::<f64>(),
            width::<Complex<f32>>(),
            width::<Complex<f64>>(),
        ] {
            assert_eq!(bytes, bits as usize);
        }
    }

    #[test]
    fn pred_buffers() {
        let mut f = frame_with(
            vec![OwnedBuffer::new(XLA_FFI_DataType_PRED, &[3], &[1, 0, 2])],
            vec![OwnedBuffer::new(XLA_FFI_DataType_PRED, &[3], &[0, 7, 1])],
        );
        // SAFETY: owned frame.
        let frame = unsafe { CallFrame::from_raw(f.ptr()) }.unwrap();
        // SAFETY: read-only view.
        let e = unsafe { frame.arg(0).unwrap().as_slice::<bool>() }.unwrap_err();
        assert_eq!(
            e.message,
            "argument 0: element 2 is 2, not a valid pred (0 or 1)"
        );
        // SAFETY: exclusive view of the result, whose memory holds bytes
        // already (as a result aliased with an operand does).
        let r = unsafe { frame.ret(0).unwrap().as_mut_slice::<bool>() }.unwrap();
        assert_eq!(r, &[false, true, true]);
    }

    #[test]
    fn fresh_results_are_written_or_zeroed_not_read() {
        let mut f = frame_with(
            vec![],
            vec![
                OwnedBuffer::new(XLA_FFI_DataType_PRED, &[3], &[9, 7, 1]),
                OwnedBuffer::new(XLA_FFI_DataType_S16, &[2], &[0xff; 4]),
            ],
        );
        // SAFETY: owned frame.
        let frame = unsafe { CallFrame::from_raw(f.ptr()) }.unwrap();
        // SAFETY: the only view of result 0.
        let p = unsafe { frame.ret(0).unwrap().as_uninit_slice::<bool>() }.unwrap();
        assert_eq!(p.len(), 3);
        p.write_copy_of_slice(&[true, false, true]);
        // SAFETY: the only view of result 1.
        let z = unsafe { frame.ret(1).unwrap().as_zeroed_slice::<i16>() }.unwrap();
        assert_eq!(z, &[0, 0]);
        z[1] += 5;
        // SAFETY: as above; the dtype is checked before any byte is touched.
        let e = unsafe { frame.ret(1).unwrap().as_uninit_slice::<u16>() }.unwrap_err();
        assert_eq!(e.message, "result 1 has dtype s16, expected u16");
        assert_eq!(f.rets[0].bytes(3), &[1, 0, 1]);
        assert_eq!(f.rets[1].bytes(4), &[0, 0, 5, 0]);
    }
}
