//! The value of an attribute of an XLA FFI call (`XLA_FFI_Scalar`,
//! `XLA_FFI_Array`), the same on both sides of the sandbox: [`Attr`], one
//! of the four kinds of value, [`Scalar`] and [`ArrayView`], the element
//! bytes of an array attribute with their element access.
//!
//! What is left to each side is how an attribute is found and its bytes are
//! reached (the guest SDK through guest memory and the guest ABI,
//! plugin-glue through XLA's native pointers), so its array and dictionary
//! types that [`Attr`] holds, typed slices over the bytes, and the wording
//! of errors: the functions here answer `None` where a side reports an
//! error.
//!
//! ```
//! use cyxla_xla_types::DataType;
//! use cyxla_xla_types::attr::{ArrayView, Scalar};
//!
//! assert_eq!(
//!     Scalar::from_le_bytes(DataType::F32, &1.5f32.to_le_bytes()),
//!     Some(Scalar::F32(1.5))
//! );
//! let bytes = [1u8, 0, 0xfe, 0xff];
//! let a = ArrayView::new(DataType::S16, 2, &bytes);
//! assert_eq!((a.dtype(), a.len()), (DataType::S16, 2));
//! assert_eq!(a.get(1), Some(Scalar::S16(-2)));
//! assert_eq!(a.get(2), None);
//! ```

use core::fmt;
use core::ops::Deref;

use alloc::string::String;

use crate::DataType;

/// One attribute value. `A` is a side's array attribute (its
/// [`ArrayView`], which it dereferences to, with that side's typed slices)
/// and `D` its dictionary of nested attributes: each side names this type
/// with its own two (`cyxla_guest_sdk::Attr`, `plugin_glue::frame::Attr`).
///
/// # Examples
///
/// ```
/// use cyxla_xla_types::DataType;
/// use cyxla_xla_types::attr::{ArrayView, Attr, Scalar};
///
/// type Value<'a> = Attr<'a, ArrayView<'a>, ()>;
/// let scalar = Value::Scalar(Scalar::S32(5));
/// assert_eq!(scalar.kind(), "scalar");
/// assert_eq!(scalar.as_scalar(), Some(Scalar::S32(5)));
/// let array = Value::Array(ArrayView::new(DataType::F32, 0, &[]));
/// assert_eq!(array.as_array().map(|a| a.dtype()), Some(DataType::F32));
/// assert_eq!(Value::String(b"mode").as_str(), Some("mode"));
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Attr<'a, A, D> {
    /// A scalar (`1.0 : f32`, `3 : i64`, `true`).
    Scalar(Scalar),
    /// A flat array (`array<i64: 1, 2>` or a flattened `dense<...>`).
    Array(A),
    /// A string's bytes, not NUL-terminated (UTF-8 in practice; not checked).
    String(&'a [u8]),
    /// A nested dictionary.
    Dictionary(D),
}

impl<'a, A: Copy, D: Copy> Attr<'a, A, D> {
    /// `scalar`, `array`, `string` or `dictionary` (for messages).
    pub fn kind(&self) -> &'static str {
        match self {
            Attr::Scalar(_) => "scalar",
            Attr::Array(_) => "array",
            Attr::String(_) => "string",
            Attr::Dictionary(_) => "dictionary",
        }
    }

    /// The scalar, if this is one.
    pub fn as_scalar(&self) -> Option<Scalar> {
        match self {
            Attr::Scalar(s) => Some(*s),
            _ => None,
        }
    }

    /// The array, if this is one.
    pub fn as_array(&self) -> Option<A> {
        match self {
            Attr::Array(a) => Some(*a),
            _ => None,
        }
    }

    /// The string's bytes, if this is a string.
    pub fn as_bytes(&self) -> Option<&'a [u8]> {
        match self {
            Attr::String(s) => Some(s),
            _ => None,
        }
    }

    /// The string, if this is a string of valid UTF-8.
    pub fn as_str(&self) -> Option<&'a str> {
        self.as_bytes().and_then(|b| core::str::from_utf8(b).ok())
    }

    /// The nested dictionary, if this is one.
    pub fn as_dictionary(&self) -> Option<D> {
        match self {
            Attr::Dictionary(d) => Some(*d),
            _ => None,
        }
    }
}

impl<'a, A: Deref<Target = ArrayView<'a>>, D> Attr<'a, A, D> {
    /// What this is, for messages: `a f32 scalar`, `a s64 array`, `a string`,
    /// `a dictionary`.
    pub fn describe(&self) -> String {
        match self {
            Attr::Scalar(s) => alloc::format!("a {} scalar", s.dtype()),
            Attr::Array(a) => alloc::format!("a {} array", a.dtype()),
            Attr::String(_) => "a string".into(),
            Attr::Dictionary(_) => "a dictionary".into(),
        }
    }
}

/// A scalar attribute value, by dtype. XLA delivers these dtypes only
/// (f16/bf16 scalars are rejected at compile time).
///
/// # Examples
///
/// ```
/// use cyxla_xla_types::DataType;
/// use cyxla_xla_types::attr::Scalar;
///
/// let s = Scalar::from_le_bytes(DataType::S64, &(-7i64).to_le_bytes()).unwrap();
/// assert_eq!(s, Scalar::S64(-7));
/// assert_eq!(s.dtype(), DataType::S64);
/// assert_eq!(s.to_i64(), Some(-7));
/// assert_eq!(Scalar::Pred(true).to_f64(), 1.0);
/// assert_eq!(Scalar::from_le_bytes(DataType::F16, &[0, 0]), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// PRED.
    Pred(bool),
    /// S8.
    S8(i8),
    /// S16.
    S16(i16),
    /// S32.
    S32(i32),
    /// S64.
    S64(i64),
    /// U8.
    U8(u8),
    /// U16.
    U16(u16),
    /// U32.
    U32(u32),
    /// U64.
    U64(u64),
    /// F32.
    F32(f32),
    /// F64.
    F64(f64),
}

impl Scalar {
    /// Decodes a value of `dtype` from the start of `bytes`, little-endian
    /// (PRED: any byte but 0 is `true`); no alignment is needed.
    ///
    /// `None` if `dtype` is not one of the scalar dtypes or `bytes` is
    /// shorter than one value of it.
    #[inline]
    pub fn from_le_bytes(dtype: DataType, bytes: &[u8]) -> Option<Scalar> {
        /// The first `N` bytes.
        #[inline(always)]
        fn le<const N: usize>(bytes: &[u8]) -> Option<[u8; N]> {
            bytes.first_chunk::<N>().copied()
        }
        Some(match dtype {
            DataType::Pred => Scalar::Pred(*bytes.first()? != 0),
            DataType::S8 => Scalar::S8(i8::from_le_bytes(le(bytes)?)),
            DataType::S16 => Scalar::S16(i16::from_le_bytes(le(bytes)?)),
            DataType::S32 => Scalar::S32(i32::from_le_bytes(le(bytes)?)),
            DataType::S64 => Scalar::S64(i64::from_le_bytes(le(bytes)?)),
            DataType::U8 => Scalar::U8(*bytes.first()?),
            DataType::U16 => Scalar::U16(u16::from_le_bytes(le(bytes)?)),
            DataType::U32 => Scalar::U32(u32::from_le_bytes(le(bytes)?)),
            DataType::U64 => Scalar::U64(u64::from_le_bytes(le(bytes)?)),
            DataType::F32 => Scalar::F32(f32::from_le_bytes(le(bytes)?)),
            DataType::F64 => Scalar::F64(f64::from_le_bytes(le(bytes)?)),
            _ => return None,
        })
    }

    /// The value's little-endian bytes (PRED: 0 or 1), the inverse of
    /// [`Scalar::from_le_bytes`]: the first `len` bytes of a zeroed 8-byte
    /// buffer, returned with `len`.
    #[inline]
    pub fn to_le_bytes(&self) -> ([u8; 8], usize) {
        /// `bytes` at the start of a zeroed 8-byte buffer, and their length.
        #[inline(always)]
        fn padded<const N: usize>(bytes: [u8; N]) -> ([u8; 8], usize) {
            let mut out = [0u8; 8];
            out[..N].copy_from_slice(&bytes);
            (out, N)
        }
        match *self {
            Scalar::Pred(v) => padded([u8::from(v)]),
            Scalar::S8(v) => padded(v.to_le_bytes()),
            Scalar::S16(v) => padded(v.to_le_bytes()),
            Scalar::S32(v) => padded(v.to_le_bytes()),
            Scalar::S64(v) => padded(v.to_le_bytes()),
            Scalar::U8(v) => padded([v]),
            Scalar::U16(v) => padded(v.to_le_bytes()),
            Scalar::U32(v) => padded(v.to_le_bytes()),
            Scalar::U64(v) => padded(v.to_le_bytes()),
            Scalar::F32(v) => padded(v.to_le_bytes()),
            Scalar::F64(v) => padded(v.to_le_bytes()),
        }
    }

    /// The scalar's dtype.
    #[inline]
    pub fn dtype(&self) -> DataType {
        match self {
            Scalar::Pred(_) => DataType::Pred,
            Scalar::S8(_) => DataType::S8,
            Scalar::S16(_) => DataType::S16,
            Scalar::S32(_) => DataType::S32,
            Scalar::S64(_) => DataType::S64,
            Scalar::U8(_) => DataType::U8,
            Scalar::U16(_) => DataType::U16,
            Scalar::U32(_) => DataType::U32,
            Scalar::U64(_) => DataType::U64,
            Scalar::F32(_) => DataType::F32,
            Scalar::F64(_) => DataType::F64,
        }
    }

    /// The value as `f64` (PRED as 0 or 1; 64-bit integers beyond 2^53 are
    /// rounded).
    #[inline]
    pub fn to_f64(&self) -> f64 {
        match *self {
            Scalar::Pred(v) => f64::from(u8::from(v)),
            Scalar::S8(v) => f64::from(v),
            Scalar::S16(v) => f64::from(v),
            Scalar::S32(v) => f64::from(v),
            Scalar::S64(v) => v as f64,
            Scalar::U8(v) => f64::from(v),
            Scalar::U16(v) => f64::from(v),
            Scalar::U32(v) => f64::from(v),
            Scalar::U64(v) => v as f64,
            Scalar::F32(v) => f64::from(v),
            Scalar::F64(v) => v,
        }
    }

    /// The value as `i64`, for integers and PRED (0 or 1) that fit; `None`
    /// for floats and for `U64` values above `i64::MAX`.
    #[inline]
    pub fn to_i64(&self) -> Option<i64> {
        match *self {
            Scalar::Pred(v) => Some(i64::from(v)),
            Scalar::S8(v) => Some(v.into()),
            Scalar::S16(v) => Some(v.into()),
            Scalar::S32(v) => Some(v.into()),
            Scalar::S64(v) => Some(v),
            Scalar::U8(v) => Some(v.into()),
            Scalar::U16(v) => Some(v.into()),
            Scalar::U32(v) => Some(v.into()),
            Scalar::U64(v) => i64::try_from(v).ok(),
            Scalar::F32(_) | Scalar::F64(_) => None,
        }
    }
}

/// The elements of an array attribute: their dtype, their number and their
/// bytes, little-endian and packed as [`DataType::byte_size`] counts them
/// (multi-dimensional tensors arrive flattened, row-major; the shape of a
/// `dense<>` is lost).
///
/// A view borrows the bytes; it does not check that they are as many as
/// `len` elements take (each side makes them so), and [`get`](Self::get)
/// reads only inside them.
#[derive(Clone, Copy)]
pub struct ArrayView<'a> {
    dtype: DataType,
    len: usize,
    bytes: &'a [u8],
}

impl fmt::Debug for ArrayView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArrayView")
            .field("dtype", &self.dtype)
            .field("len", &self.len)
            .field("byte_len", &self.bytes.len())
            .finish()
    }
}

impl<'a> ArrayView<'a> {
    /// The view of `len` elements of `dtype` held in `bytes`
    /// (`dtype.byte_len(len)` of them).
    #[inline]
    pub const fn new(dtype: DataType, len: usize, bytes: &'a [u8]) -> ArrayView<'a> {
        ArrayView { dtype, len, bytes }
    }

    /// Element type.
    #[inline]
    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements' bytes, little-endian.
    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Element `i` as a [`Scalar`] (read without alignment requirements);
    /// `None` past the end or if the dtype is not a scalar dtype (see
    /// [`Scalar::from_le_bytes`]).
    #[inline]
    pub fn get(&self, i: usize) -> Option<Scalar> {
        let size = usize::try_from(self.dtype.byte_size(1)?).ok()?;
        let start = i.checked_mul(size)?;
        let b = self.bytes.get(start..start.checked_add(size)?)?;
        Scalar::from_le_bytes(self.dtype, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;
    use std::vec::Vec;

    /// One value of each scalar dtype, with its little-endian bytes.
    fn samples() -> Vec<(Scalar, Vec<u8>)> {
        Vec::from([
            (Scalar::Pred(true), Vec::from([1u8])),
            (Scalar::S8(-3), Vec::from((-3i8).to_le_bytes())),
            (Scalar::S16(-300), Vec::from((-300i16).to_le_bytes())),
            (Scalar::S32(-70_000), Vec::from((-70_000i32).to_le_bytes())),
            (
                Scalar::S64(-(1 << 40)),
                Vec::from((-(1i64 << 40)).to_le_bytes()),
            ),
            (Scalar::U8(200), Vec::from([200u8])),
            (Scalar::U16(60_000), Vec::from(60_000u16.to_le_bytes())),
            (
                Scalar::U32(4_000_000_000),
                Vec::from(4_000_000_000u32.to_le_bytes()),
            ),
            (Scalar::U64(u64::MAX), Vec::from(u64::MAX.to_le_bytes())),
            (Scalar::F32(1.5), Vec::from(1.5f32.to_le_bytes())),
            (Scalar::F64(-2.25), Vec::from((-2.25f64).to_le_bytes())),
        ])
    }

    #[test]
    fn scalars_decode_from_their_bytes() {
        for (s, bytes) in samples() {
            let d = s.dtype();
            assert_eq!(Scalar::from_le_bytes(d, &bytes), Some(s), "{d}");
            // Bytes past the value are ignored; fewer bytes are no value.
            let mut longer = bytes.clone();
            longer.push(0xaa);
            assert_eq!(Scalar::from_le_bytes(d, &longer), Some(s), "{d}");
            assert_eq!(
                Scalar::from_le_bytes(d, &bytes[..bytes.len() - 1]),
                None,
                "{d}"
            );
            assert_eq!(d.byte_size(1), Some(bytes.len() as u64), "{d}");
            let (out, len) = s.to_le_bytes();
            assert_eq!(&out[..len], &bytes[..], "{d}");
            assert!(out[len..].iter().all(|&b| b == 0), "{d}");
        }
        assert_eq!(
            Scalar::from_le_bytes(DataType::Pred, &[2]),
            Some(Scalar::Pred(true))
        );
        assert_eq!(
            Scalar::from_le_bytes(DataType::Pred, &[0]),
            Some(Scalar::Pred(false))
        );
        for d in DataType::ALL {
            let scalar = samples().iter().any(|(s, _)| s.dtype() == d);
            assert_eq!(Scalar::from_le_bytes(d, &[0; 16]).is_some(), scalar, "{d}");
        }
    }

    #[test]
    fn scalar_conversions() {
        assert_eq!(Scalar::Pred(true).to_f64(), 1.0);
        assert_eq!(Scalar::Pred(false).to_i64(), Some(0));
        assert_eq!(Scalar::U8(200).to_f64(), 200.0);
        assert_eq!(Scalar::S64(-7).to_i64(), Some(-7));
        assert_eq!(Scalar::U64(u64::MAX).to_i64(), None);
        assert_eq!(Scalar::U64(1 << 63).to_f64(), 9.223372036854776e18);
        assert_eq!(Scalar::F32(1.5).to_i64(), None);
        assert_eq!(Scalar::F32(1.5).to_f64(), 1.5);
        assert_eq!(format!("{:?}", Scalar::F32(1.5)), "F32(1.5)");
    }

    #[test]
    fn array_view_elements() {
        let bytes: Vec<u8> = [1i64, -2, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
        // Unaligned: the elements start at an odd address.
        let mut shifted = Vec::from([0u8]);
        shifted.extend_from_slice(&bytes);
        let a = ArrayView::new(DataType::S64, 3, &shifted[1..]);
        assert_eq!(
            (a.dtype(), a.len(), a.is_empty()),
            (DataType::S64, 3, false)
        );
        assert_eq!(a.bytes(), &bytes[..]);
        assert_eq!(a.get(0), Some(Scalar::S64(1)));
        assert_eq!(a.get(1), Some(Scalar::S64(-2)));
        assert_eq!(a.get(2), Some(Scalar::S64(3)));
        assert_eq!(a.get(3), None);
        assert_eq!(a.get(usize::MAX), None);
        assert_eq!(
            format!("{a:?}"),
            "ArrayView { dtype: S64, len: 3, byte_len: 24 }"
        );

        let empty = ArrayView::new(DataType::F32, 0, &[]);
        assert!(empty.is_empty());
        assert_eq!(empty.get(0), None);

        let preds = ArrayView::new(DataType::Pred, 2, &[0, 1]);
        assert_eq!(preds.get(1), Some(Scalar::Pred(true)));
        // Elements of dtypes that are not scalars have no Scalar.
        let halves = ArrayView::new(DataType::F16, 1, &[0, 0x3c]);
        assert_eq!(halves.get(0), None);
        let tokens = ArrayView::new(DataType::Token, 3, &[]);
        assert_eq!(tokens.get(0), None);
    }

    #[test]
    fn byte_len_counts_packed_elements() {
        assert_eq!(DataType::F32.byte_len(3), Some(12));
        assert_eq!(DataType::S4.byte_len(3), Some(2));
        assert_eq!(DataType::F64.byte_len(usize::MAX), None);
    }
}
