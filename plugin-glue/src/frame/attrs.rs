//! Attributes of a call site: [`Attrs`], [`Attr`], [`Scalar`], [`ArrayView`].
//!
//! XLA sorts attribute names byte-wise (recursively in dictionaries), so a
//! lookup by name is a binary search. Values are decoded when read.

use std::ffi::c_void;
use std::fmt;
use std::mem::align_of;
use std::ops::Deref;

use cyxla_xla_types::attr;
pub use cyxla_xla_types::attr::Scalar;

use super::{SliceError, check_struct_ptr, count, slice_from_raw_parts};
use crate::dtype::DType;
use crate::error::HandlerError;
use crate::ffi::xla_ffi::{
    XLA_FFI_Array, XLA_FFI_AttrType, XLA_FFI_AttrType_ARRAY, XLA_FFI_AttrType_DICTIONARY,
    XLA_FFI_AttrType_SCALAR, XLA_FFI_AttrType_STRING, XLA_FFI_Attrs, XLA_FFI_Attrs_STRUCT_SIZE,
    XLA_FFI_ByteSpan, XLA_FFI_Scalar,
};
use crate::frame::buffer::Element;

/// The attributes of a call site or a nested dictionary, sorted byte-wise by
/// name as XLA sorts them.
#[derive(Clone, Copy)]
pub struct Attrs<'a> {
    types: &'a [XLA_FFI_AttrType],
    names: &'a [*mut XLA_FFI_ByteSpan],
    values: &'a [*mut c_void],
    /// Name of the dictionary attribute these are nested in (for messages).
    parent: Option<&'a [u8]>,
}

// SAFETY: attribute storage is built at compile time, shared by all
// executions and only read through this view; the raw pointers it holds are
// never written through.
unsafe impl Send for Attrs<'_> {}
// SAFETY: as for Send.
unsafe impl Sync for Attrs<'_> {}

impl fmt::Debug for Attrs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for entry in self.iter() {
            match entry {
                Ok((name, value)) => map.entry(&String::from_utf8_lossy(name), &value),
                Err(e) => map.entry(&"<error>", &e.message),
            };
        }
        map.finish()
    }
}

impl<'a> Attrs<'a> {
    /// Validates an `XLA_FFI_Attrs` table (not its entries, which are
    /// checked when read).
    ///
    /// # Safety
    ///
    /// `attrs` must point at an `XLA_FFI_Attrs` whose arrays hold `size`
    /// entries, each valid as XLA documents them, all for `'a`.
    #[inline(always)]
    pub(super) unsafe fn from_raw(
        attrs: *const XLA_FFI_Attrs,
        parent: Option<&'a [u8]>,
    ) -> Result<Attrs<'a>, HandlerError> {
        let what = || match parent {
            None => "the frame's attrs".to_string(),
            Some(name) => format!("dictionary attribute `{}`", String::from_utf8_lossy(name)),
        };
        // SAFETY: attrs start with size_t struct_size (caller contract).
        if let Err(defect) = unsafe { check_struct_ptr(attrs, XLA_FFI_Attrs_STRUCT_SIZE) } {
            let what = what();
            return Err(HandlerError::invalid_argument(defect.describe(
                &what,
                &what,
                XLA_FFI_Attrs_STRUCT_SIZE,
            )));
        }
        // SAFETY: struct_size covers the struct; valid for 'a (caller contract).
        let raw: &'a XLA_FFI_Attrs = unsafe { &*attrs };
        let n = count(|| format!("{}.size", what()), raw.size)?;
        let arr_err = |field: &str, e: SliceError| {
            HandlerError::invalid_argument(format!("{}.{field} {e}", what()))
        };
        // SAFETY: XLA provides `size` entries per array, valid for 'a.
        let types =
            unsafe { slice_from_raw_parts(raw.types, n) }.map_err(|e| arr_err("types", e))?;
        // SAFETY: as above.
        let names = unsafe { slice_from_raw_parts(raw.names.cast_const(), n) }
            .map_err(|e| arr_err("names", e))?;
        // SAFETY: as above.
        let values = unsafe { slice_from_raw_parts(raw.attrs.cast_const(), n) }
            .map_err(|e| arr_err("attrs", e))?;
        Ok(Attrs {
            types,
            names,
            values,
            parent,
        })
    }

    /// Number of attributes.
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// The name of entry `i`.
    fn name(&self, i: usize) -> Result<&'a [u8], HandlerError> {
        let span = self.names[i];
        if span.is_null() || !span.addr().is_multiple_of(align_of::<XLA_FFI_ByteSpan>()) {
            return Err(HandlerError::invalid_argument(format!(
                "the name of attribute {i}{} is NULL or misaligned",
                self.context()
            )));
        }
        // SAFETY: non-NULL, aligned ByteSpan valid for 'a (from_raw contract).
        let span = unsafe { &*span };
        // SAFETY: the span's bytes are valid for 'a.
        unsafe { slice_from_raw_parts(span.ptr.cast::<u8>(), span.len) }.map_err(|e| {
            HandlerError::invalid_argument(format!(
                "the name of attribute {i}{} {e}",
                self.context()
            ))
        })
    }

    /// " in dictionary `x`" or "".
    fn context(&self) -> String {
        match self.parent {
            None => String::new(),
            Some(p) => format!(" in dictionary `{}`", String::from_utf8_lossy(p)),
        }
    }

    /// The value of entry `i`, named `name`.
    fn value(&self, i: usize, name: &'a [u8]) -> Result<Attr<'a>, HandlerError> {
        let err = |what: String| {
            HandlerError::invalid_argument(format!(
                "attribute `{}`{}: {what}",
                String::from_utf8_lossy(name),
                self.context()
            ))
        };
        let value = self.values[i];
        if value.is_null() {
            return Err(err("the value pointer is NULL".into()));
        }
        const SCALAR: XLA_FFI_AttrType = XLA_FFI_AttrType_SCALAR;
        const ARRAY: XLA_FFI_AttrType = XLA_FFI_AttrType_ARRAY;
        const STRING: XLA_FFI_AttrType = XLA_FFI_AttrType_STRING;
        const DICTIONARY: XLA_FFI_AttrType = XLA_FFI_AttrType_DICTIONARY;
        match self.types[i] {
            SCALAR => {
                // SAFETY: a SCALAR entry points at an XLA_FFI_Scalar (checked
                // for alignment in `read_struct`).
                let s: &XLA_FFI_Scalar = unsafe { read_struct(value) }.map_err(err)?;
                // SAFETY: `s.value` points at a native value of `s.dtype`.
                unsafe { scalar_from_raw(s.dtype, s.value) }
                    .map(Attr::Scalar)
                    .map_err(err)
            }
            ARRAY => {
                // SAFETY: an ARRAY entry points at an XLA_FFI_Array.
                let a: &XLA_FFI_Array = unsafe { read_struct(value) }.map_err(err)?;
                // SAFETY: `a.data` holds `a.size` elements of `a.dtype` for 'a.
                unsafe { ArrayView::from_raw(a) }
                    .map(Attr::Array)
                    .map_err(err)
            }
            STRING => {
                // SAFETY: a STRING entry points at an XLA_FFI_ByteSpan.
                let s: &XLA_FFI_ByteSpan = unsafe { read_struct(value) }.map_err(err)?;
                // SAFETY: the span's bytes are valid for 'a.
                unsafe { slice_from_raw_parts(s.ptr.cast::<u8>(), s.len) }
                    .map(Attr::String)
                    .map_err(|e| err(format!("the string data {e}")))
            }
            DICTIONARY => {
                // SAFETY: a DICTIONARY entry points at a nested XLA_FFI_Attrs
                // valid for 'a.
                unsafe { Attrs::from_raw(value.cast::<XLA_FFI_Attrs>(), Some(name)) }
                    .map(Attr::Dictionary)
            }
            other => Err(err(format!("unknown attribute type {other}"))),
        }
    }

    /// Entry `i` as `(name, value)`, in XLA's (sorted) order.
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` if `i` is out of range or the entry is malformed.
    pub fn entry(&self, i: usize) -> Result<(&'a [u8], Attr<'a>), HandlerError> {
        if i >= self.len() {
            return Err(HandlerError::invalid_argument(format!(
                "attribute index {i} is out of range: there are {}{}",
                self.len(),
                self.context()
            )));
        }
        let name = self.name(i)?;
        Ok((name, self.value(i, name)?))
    }

    /// All entries as `(name, value)`, in XLA's (sorted) order.
    pub fn iter(&self) -> impl Iterator<Item = Result<(&'a [u8], Attr<'a>), HandlerError>> + 'a {
        let this = *self;
        (0..this.len()).map(move |i| this.entry(i))
    }

    /// The attribute called `name` (binary search: XLA sorts names
    /// byte-wise, in nested dictionaries too).
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` if an entry met during the search is malformed.
    pub fn get(&self, name: &str) -> Result<Option<Attr<'a>>, HandlerError> {
        let key = name.as_bytes();
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let here = self.name(mid)?;
            match here.cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return self.value(mid, here).map(Some),
            }
        }
        Ok(None)
    }

    /// The attribute called `name`, which must be present.
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` naming the attribute if it is missing or malformed.
    pub fn require(&self, name: &str) -> Result<Attr<'a>, HandlerError> {
        self.get(name)?.ok_or_else(|| {
            HandlerError::invalid_argument(format!("missing attribute `{name}`{}", self.context()))
        })
    }

    /// The scalar attribute `name`, which must be present.
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` naming the attribute if it is missing or not a scalar.
    pub fn scalar(&self, name: &str) -> Result<Scalar, HandlerError> {
        match self.require(name)? {
            Attr::Scalar(s) => Ok(s),
            other => Err(HandlerError::invalid_argument(format!(
                "attribute `{name}`{} is {}, expected a scalar",
                self.context(),
                other.kind()
            ))),
        }
    }
}

/// Reads a pointer to an attribute value struct, checking alignment.
///
/// # Safety
///
/// A non-NULL, aligned `value` must point at a `T` valid for `'a`.
unsafe fn read_struct<'a, T>(value: *const c_void) -> Result<&'a T, String> {
    if !value.addr().is_multiple_of(align_of::<T>()) {
        return Err("the value pointer is misaligned".into());
    }
    // SAFETY: non-NULL (checked by the caller), aligned (checked above),
    // valid for 'a (caller contract).
    Ok(unsafe { &*value.cast::<T>() })
}

/// One attribute value: a [`Scalar`], an [`ArrayView`], a string's bytes
/// (not NUL-terminated; UTF-8 in practice, not checked) or a nested
/// [`Attrs`] dictionary. The shared model of both sides of the sandbox
/// ([`attr::Attr`], with its `kind` and `as_*` accessors) with
/// plugin-glue's array and dictionary.
pub type Attr<'a> = attr::Attr<'a, ArrayView<'a>, Attrs<'a>>;

/// Decodes a scalar attribute's value of dtype `dtype` at `value`.
///
/// # Safety
///
/// A non-NULL `value` must point at a readable native value of `dtype`
/// (any alignment).
unsafe fn scalar_from_raw(dtype: u32, value: *const c_void) -> Result<Scalar, String> {
    if value.is_null() {
        return Err("the scalar's value pointer is NULL".into());
    }
    let Some(t) = DType::from_xla(dtype) else {
        return Err(format!("unknown scalar dtype {dtype}"));
    };
    let size = t.byte_len(1).unwrap_or(0);
    // SAFETY: `value` points at a readable value of `t` (caller contract),
    // `size` bytes; u8 needs no alignment. x86_64 and aarch64 are
    // little-endian, so the native bytes are the little-endian ones.
    let bytes = unsafe { std::slice::from_raw_parts(value.cast::<u8>(), size) };
    Scalar::from_le_bytes(t, bytes).ok_or_else(|| format!("scalar dtype {t} is not supported"))
}

/// A flat array attribute (row-major; the shape of a `dense<>` is lost).
///
/// Its element type, length, bytes and elements are those of the shared
/// [`attr::ArrayView`] it dereferences to: [`dtype`](attr::ArrayView::dtype),
/// [`len`](attr::ArrayView::len), [`is_empty`](attr::ArrayView::is_empty),
/// [`bytes`](attr::ArrayView::bytes) (the raw element bytes) and
/// [`get`](attr::ArrayView::get). Typed slices are plugin-glue's:
/// [`as_slice`](ArrayView::as_slice).
#[derive(Clone, Copy)]
pub struct ArrayView<'a> {
    view: attr::ArrayView<'a>,
}

impl fmt::Debug for ArrayView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.view, f)
    }
}

impl<'a> Deref for ArrayView<'a> {
    type Target = attr::ArrayView<'a>;

    #[inline]
    fn deref(&self) -> &attr::ArrayView<'a> {
        &self.view
    }
}

impl<'a> ArrayView<'a> {
    /// Validates an `XLA_FFI_Array`.
    ///
    /// # Safety
    ///
    /// `a.data` must hold `a.size` native elements of `a.dtype`, valid for `'a`.
    unsafe fn from_raw(a: &'a XLA_FFI_Array) -> Result<ArrayView<'a>, String> {
        let Some(dtype) = DType::from_xla(a.dtype) else {
            return Err(format!("unknown array dtype {}", a.dtype));
        };
        let byte_len = dtype
            .byte_len(a.size)
            .ok_or_else(|| format!("the byte size of {} {dtype} elements overflows", a.size))?;
        // SAFETY: the array's data is valid for 'a (caller contract).
        let bytes = unsafe { slice_from_raw_parts(a.data.cast_const().cast::<u8>(), byte_len) }
            .map_err(|e| format!("the array data ({} {dtype} elements) {e}", a.size))?;
        Ok(ArrayView {
            view: attr::ArrayView::new(dtype, a.size, bytes),
        })
    }

    /// The elements as `T`, whose dtype must match.
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` if the dtype differs (naming both), the data is
    /// misaligned for `T`, or (for `bool`) a byte is neither 0 nor 1.
    pub fn as_slice<T: Element>(&self) -> Result<&'a [T], HandlerError> {
        let (dtype, bytes) = (self.dtype(), self.bytes());
        if dtype != T::DTYPE {
            return Err(HandlerError::invalid_argument(format!(
                "array attribute has dtype {dtype}, expected {}",
                T::DTYPE
            )));
        }
        if !T::ANY_BIT_PATTERN && bytes.iter().any(|&b| b > 1) {
            return Err(HandlerError::invalid_argument(
                "array attribute of dtype pred holds a byte that is neither 0 nor 1",
            ));
        }
        // SAFETY: the bytes are `len` elements of T's dtype (same width, valid
        // bit patterns checked above for bool), valid for 'a.
        unsafe { slice_from_raw_parts(bytes.as_ptr().cast::<T>(), self.len()) }.map_err(|e| {
            HandlerError::invalid_argument(format!("array attribute data of dtype {dtype} {e}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::xla_ffi::*;
    use crate::frame::CallFrame;
    use crate::frame::testing::*;
    use std::ptr;

    fn sample_attrs() -> OwnedAttrs {
        // Sorted byte-wise, as XLA sorts them.
        OwnedAttrs::new(vec![
            (
                "Zupper",
                OwnedAttr::scalar(XLA_FFI_DataType_S32, &1i32.to_le_bytes()),
            ),
            (
                "arr",
                OwnedAttr::array(
                    XLA_FFI_DataType_S64,
                    3,
                    &[1i64, 2, 3]
                        .iter()
                        .flat_map(|x| x.to_le_bytes())
                        .collect::<Vec<_>>(),
                ),
            ),
            (
                "dct",
                OwnedAttr::Dict(Box::new(OwnedAttrs::new(vec![
                    ("a", OwnedAttr::string("s")),
                    (
                        "z",
                        OwnedAttr::scalar(XLA_FFI_DataType_S32, &5i32.to_le_bytes()),
                    ),
                ]))),
            ),
            ("empty", OwnedAttr::string("")),
            (
                "f32",
                OwnedAttr::scalar(XLA_FFI_DataType_F32, &1.5f32.to_le_bytes()),
            ),
            (
                "f64",
                OwnedAttr::scalar(XLA_FFI_DataType_F64, &2.25f64.to_le_bytes()),
            ),
            ("flag", OwnedAttr::scalar(XLA_FFI_DataType_PRED, &[1])),
            (
                "i64",
                OwnedAttr::scalar(XLA_FFI_DataType_S64, &(-7i64).to_le_bytes()),
            ),
            ("u8", OwnedAttr::scalar(XLA_FFI_DataType_U8, &[200])),
        ])
    }

    #[test]
    fn attributes_of_every_kind() {
        let mut f = OwnedFrame::new(vec![], vec![], sample_attrs());
        // SAFETY: owned frame.
        let frame = unsafe { CallFrame::from_raw(f.ptr()) }.unwrap();
        let attrs = frame.attrs();
        assert_eq!(attrs.len(), 9);
        assert_eq!(attrs.scalar("f32").unwrap(), Scalar::F32(1.5));
        assert_eq!(attrs.scalar("f64").unwrap(), Scalar::F64(2.25));
        assert_eq!(attrs.scalar("flag").unwrap(), Scalar::Pred(true));
        assert_eq!(attrs.scalar("i64").unwrap().to_i64(), Some(-7));
        assert_eq!(attrs.scalar("u8").unwrap(), Scalar::U8(200));
        assert_eq!(attrs.scalar("Zupper").unwrap().dtype(), DType::S32);
        assert_eq!(attrs.scalar("f32").unwrap().to_f64(), 1.5);
        let arr = attrs.get("arr").unwrap().unwrap().as_array().unwrap();
        assert_eq!((arr.dtype(), arr.len()), (DType::S64, 3));
        assert_eq!(arr.as_slice::<i64>().unwrap(), &[1, 2, 3]);
        assert_eq!(arr.get(1), Some(Scalar::S64(2)));
        assert_eq!(arr.bytes().len(), 24);
        assert_eq!(
            format!("{arr:?}"),
            "ArrayView { dtype: S64, len: 3, byte_len: 24 }"
        );
        assert!(arr.as_slice::<i32>().is_err());
        assert_eq!(attrs.get("empty").unwrap().unwrap().as_str(), Some(""));
        let dct = attrs.get("dct").unwrap().unwrap().as_dictionary().unwrap();
        assert_eq!(dct.len(), 2);
        assert_eq!(dct.get("a").unwrap().unwrap().as_bytes(), Some(&b"s"[..]));
        assert_eq!(dct.scalar("z").unwrap(), Scalar::S32(5));
        assert_eq!(
            dct.require("q").unwrap_err().message,
            "missing attribute `q` in dictionary `dct`"
        );
        for missing in ["", "A", "Zupper_", "b", "zzz", "f16"] {
            assert!(attrs.get(missing).unwrap().is_none(), "{missing}");
        }
        assert_eq!(
            attrs.scalar("arr").unwrap_err().message,
            "attribute `arr` is array, expected a scalar"
        );
        let names: Vec<String> = attrs
            .iter()
            .map(|e| String::from_utf8(e.unwrap().0.to_vec()).unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "Zupper", "arr", "dct", "empty", "f32", "f64", "flag", "i64", "u8"
            ]
        );
        // Debug does not fail on nested values.
        assert!(format!("{attrs:?}").contains("dct"));
    }

    #[test]
    fn malformed_attributes_name_the_attribute() {
        let mut attrs = OwnedAttrs::new(vec![
            ("bad", OwnedAttr::scalar(XLA_FFI_DataType_F16, &[0, 0])),
            ("n", OwnedAttr::array(XLA_FFI_DataType_F32, 2, &[])),
        ]);
        if let OwnedAttr::Array(a, _) = &mut attrs.values[1] {
            a.data = ptr::null_mut();
        }
        let mut f = OwnedFrame::new(vec![], vec![], attrs);
        // SAFETY: owned frame.
        let frame = unsafe { CallFrame::from_raw(f.ptr()) }.unwrap();
        let a = frame.attrs();
        assert_eq!(
            a.get("bad").unwrap_err().message,
            "attribute `bad`: scalar dtype f16 is not supported"
        );
        assert_eq!(
            a.get("n").unwrap_err().message,
            "attribute `n`: the array data (2 f32 elements) is NULL"
        );
    }

    /// A table that cannot be read is refused before anything of it is,
    /// named for where it is (the frame's, or a nested dictionary's).
    #[test]
    fn unreadable_attribute_tables_are_refused_by_name() {
        let message = |attrs: *const XLA_FFI_Attrs, parent: Option<&[u8]>| {
            // SAFETY: NULL, misaligned or a short owned table: each is
            // refused before anything past `struct_size` is read.
            unsafe { Attrs::from_raw(attrs, parent) }
                .unwrap_err()
                .message
        };
        assert_eq!(message(ptr::null(), None), "the frame's attrs is NULL");
        assert_eq!(
            message(ptr::without_provenance(0x1001), Some(b"d")),
            "dictionary attribute `d` is misaligned"
        );
        let mut short = OwnedAttrs::new(vec![]);
        short.raw.struct_size = 8;
        assert_eq!(
            message(&*short.raw, Some(b"d")),
            format!(
                "dictionary attribute `d` has struct_size 8, expected at least {XLA_FFI_Attrs_STRUCT_SIZE}"
            )
        );
    }
}
