//! Attributes of a call (the custom call's `backend_config` dictionary):
//! [`Attrs`], decoded by name into Rust values with [`FromAttr`].

use core::fmt;
use core::ops::Deref;

pub use cyxla_xla_types::attr::Scalar;
use cyxla_xla_types::attr::{self, ArrayView};

use crate::abi::{
    array as array_layout, attr_type, attrs as layout, byte_span, scalar as scalar_layout,
};
use crate::dtype::{DataType, Element};
use crate::error::{Error, Result};
use crate::memory::Memory;

/// The attributes of a call or of a dictionary attribute, in the order XLA
/// delivers them: sorted by name, byte-wise ascending.
///
/// # Examples
///
/// ```
/// # use cyxla_guest_sdk::{Attrs, Result};
/// pub fn read(attrs: Attrs<'_>) -> Result<()> {
///     let eps: f32 = attrs.get("eps")?;                // f32 scalar, required
///     let mode: Option<&str> = attrs.get_opt("mode")?; // string, optional
///     let axes: &[i64] = attrs.get("axes")?;          // array<i64: ...>
///     # let _ = (eps, mode, axes);
///     Ok(())
/// }
/// # let _ = read;
/// ```
#[derive(Clone, Copy)]
pub struct Attrs<'a> {
    mem: Memory<'a>,
    len: usize,
    types: u32,
    names: u32,
    values: u32,
}

impl fmt::Debug for Attrs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for entry in self.iter() {
            match entry {
                Ok((name, value)) => {
                    map.entry(&alloc::string::String::from_utf8_lossy(name), &value)
                }
                Err(e) => map.entry(&"<error>", &e.message),
            };
        }
        map.finish()
    }
}

/// An [`Attrs`] without its memory view: what a frame keeps of its
/// attributes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AttrsAt {
    len: usize,
    types: u32,
    names: u32,
    values: u32,
}

impl AttrsAt {
    /// The attributes, read through `mem`.
    #[inline(always)]
    pub(crate) fn attrs(self, mem: Memory<'_>) -> Attrs<'_> {
        Attrs {
            mem,
            len: self.len,
            types: self.types,
            names: self.names,
            values: self.values,
        }
    }
}

/// Largest number of attributes accepted in one dictionary.
const MAX_ATTRS: i64 = 1 << 20;

impl AttrsAt {
    /// The `XLA_FFI_Attrs` at guest address `addr` of the host's frame, read
    /// without checks: every later read of an entry checks its own range
    /// (a count out of range is clamped, so entries past memory are errors).
    ///
    /// # Safety
    ///
    /// The struct's bytes must lie inside `mem` (the host's frame does:
    /// docs/abi.md, "What a guest may rely on").
    #[inline(always)]
    pub(crate) unsafe fn trusted(mem: Memory<'_>, addr: u32) -> AttrsAt {
        // SAFETY: the struct is inside memory (caller), every field an
        // integer.
        let (len, types, names, values) = unsafe {
            (
                mem.read_unchecked::<i64>(addr + layout::SIZE_FIELD),
                mem.read_unchecked::<u32>(addr + layout::TYPES),
                mem.read_unchecked::<u32>(addr + layout::NAMES),
                mem.read_unchecked::<u32>(addr + layout::ATTRS),
            )
        };
        AttrsAt {
            len: len.clamp(0, MAX_ATTRS) as usize,
            types,
            names,
            values,
        }
    }
}

impl<'a> Attrs<'a> {
    /// Decodes the `XLA_FFI_Attrs` at guest address `addr`.
    pub(crate) fn decode(mem: Memory<'a>, addr: u32) -> Result<Attrs<'a>> {
        let what = "attributes";
        let at = |off: u32| Memory::offset(addr, u64::from(off), &what);
        let struct_size = mem.u32(addr, &what)?;
        if struct_size < layout::STRUCT_SIZE {
            return Err(Error::internal(alloc::format!(
                "XLA_FFI_Attrs struct_size is {struct_size}, expected {}",
                layout::STRUCT_SIZE
            )));
        }
        let len = mem.i64(at(layout::SIZE_FIELD)?, &what)?;
        if !(0..=MAX_ATTRS).contains(&len) {
            return Err(Error::internal(alloc::format!(
                "attribute count {len} is out of range"
            )));
        }
        let attrs = Attrs {
            mem,
            len: len as usize,
            types: mem.u32(at(layout::TYPES)?, &what)?,
            names: mem.u32(at(layout::NAMES)?, &what)?,
            values: mem.u32(at(layout::ATTRS)?, &what)?,
        };
        let bytes = attrs.len * 4;
        mem.check(attrs.types, bytes, 1, &"attribute types")?;
        mem.check(attrs.names, bytes, 1, &"attribute names")?;
        mem.check(attrs.values, bytes, 1, &"attribute values")?;
        Ok(attrs)
    }

    /// Where the attributes are, without the memory view.
    #[inline(always)]
    pub(crate) fn at(&self) -> AttrsAt {
        AttrsAt {
            len: self.len,
            types: self.types,
            names: self.names,
            values: self.values,
        }
    }

    /// Number of attributes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Name of attribute `i`.
    fn name(&self, i: usize) -> Result<&'a [u8]> {
        let what = "attribute name";
        let span = self
            .mem
            .u32(Memory::offset(self.names, 4 * i as u64, &what)?, &what)?;
        let (ptr, len) = self.span(span, &what)?;
        // SAFETY: bytes are always valid and attribute memory is never handed
        // out mutably.
        unsafe { self.mem.slice(ptr, len, &what) }
    }

    /// Reads an `XLA_FFI_ByteSpan` at `addr`: (ptr, len).
    fn span(&self, addr: u32, what: &dyn fmt::Display) -> Result<(u32, usize)> {
        let ptr = self
            .mem
            .u32(Memory::offset(addr, u64::from(byte_span::PTR), what)?, what)?;
        let len = self
            .mem
            .u32(Memory::offset(addr, u64::from(byte_span::LEN), what)?, what)?;
        Ok((ptr, len as usize))
    }

    /// Attribute `i` as (name, value).
    ///
    /// # Errors
    ///
    /// `i >= len()` or the entry is malformed.
    pub fn entry(&self, i: usize) -> Result<(&'a [u8], Attr<'a>)> {
        if i >= self.len {
            return Err(Error::out_of_range(alloc::format!(
                "attribute {i} of {}",
                self.len
            )));
        }
        let name = self.name(i)?;
        let value = self.value(i, name).map_err(|e| e.context(NameOf(name)))?;
        Ok((name, value))
    }

    fn value(&self, i: usize, _name: &[u8]) -> Result<Attr<'a>> {
        let what = "attribute";
        let ty = self
            .mem
            .u32(Memory::offset(self.types, 4 * i as u64, &what)?, &what)?;
        let addr = self
            .mem
            .u32(Memory::offset(self.values, 4 * i as u64, &what)?, &what)?;
        let at = |off: u32| Memory::offset(addr, u64::from(off), &what);
        match ty {
            attr_type::SCALAR => {
                let dtype = self.dtype(self.mem.u32(at(scalar_layout::DTYPE)?, &what)?)?;
                let value = self.mem.u32(at(scalar_layout::VALUE)?, &what)?;
                let size = dtype.byte_size(1).unwrap_or(0) as usize;
                // SAFETY: bytes are always valid; attribute memory is read-only.
                let bytes = unsafe { self.mem.slice::<u8>(value, size, &what) }?;
                Scalar::from_le_bytes(dtype, bytes)
                    .map(Attr::Scalar)
                    .ok_or_else(|| {
                        Error::invalid_argument(alloc::format!("unsupported {dtype} scalar"))
                    })
            }
            attr_type::ARRAY => {
                let dtype = self.dtype(self.mem.u32(at(array_layout::DTYPE)?, &what)?)?;
                let len = self.mem.u32(at(array_layout::SIZE_FIELD)?, &what)? as usize;
                let data = self.mem.u32(at(array_layout::DATA)?, &what)?;
                let bytes = dtype
                    .byte_len(len)
                    .ok_or_else(|| Error::internal("array size overflows"))?;
                // SAFETY: as above.
                let bytes = unsafe { self.mem.slice::<u8>(data, bytes, &what) }?;
                Ok(Attr::Array(Array {
                    view: ArrayView::new(dtype, len, bytes),
                    mem: self.mem,
                    data,
                }))
            }
            attr_type::STRING => {
                let (ptr, len) = self.span(addr, &what)?;
                // SAFETY: as above.
                Ok(Attr::String(unsafe { self.mem.slice(ptr, len, &what) }?))
            }
            attr_type::DICTIONARY => Attrs::decode(self.mem, addr).map(Attr::Dictionary),
            other => Err(Error::internal(alloc::format!(
                "unknown attribute type {other}"
            ))),
        }
    }

    fn dtype(&self, raw: u32) -> Result<DataType> {
        DataType::from_raw(raw)
            .ok_or_else(|| Error::internal(alloc::format!("unknown dtype {raw}")))
    }

    /// All attributes as (name, value), in delivery (sorted) order.
    pub fn iter(&self) -> impl Iterator<Item = Result<(&'a [u8], Attr<'a>)>> + 'a {
        let this = *self;
        (0..self.len).map(move |i| this.entry(i))
    }

    /// The attribute called `name`, if present.
    ///
    /// # Errors
    ///
    /// An entry is malformed.
    pub fn find(&self, name: &str) -> Result<Option<Attr<'a>>> {
        for i in 0..self.len {
            if self.name(i)? == name.as_bytes() {
                return self.entry(i).map(|(_, v)| Some(v));
            }
        }
        Ok(None)
    }

    /// The attribute called `name`, converted to `T` (a scalar type, `bool`,
    /// `&str`, `&[T]` for arrays, [`Attrs`] for dictionaries, [`Scalar`],
    /// [`Array`] or [`Attr`]).
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` if it is missing or of another kind or dtype, e.g.
    /// ``attribute `eps`: expected a f32 scalar, got a f64 scalar``.
    pub fn get<T: FromAttr<'a>>(&self, name: &str) -> Result<T> {
        self.get_opt(name)?.ok_or_else(|| {
            Error::invalid_argument(alloc::format!(
                "missing attribute `{name}` ({})",
                T::EXPECTED
            ))
        })
    }

    /// Like [`Attrs::get`], but `Ok(None)` when the attribute is missing.
    ///
    /// # Errors
    ///
    /// As [`Attrs::get`], except for a missing attribute.
    pub fn get_opt<T: FromAttr<'a>>(&self, name: &str) -> Result<Option<T>> {
        match self.find(name)? {
            None => Ok(None),
            Some(attr) => T::from_attr(attr)
                .map(Some)
                .map_err(|e| e.context(alloc::format!("attribute `{name}`"))),
        }
    }
}

struct NameOf<'n>(&'n [u8]);

impl fmt::Display for NameOf<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "attribute `{}`",
            alloc::string::String::from_utf8_lossy(self.0)
        )
    }
}

/// One attribute value: a [`Scalar`], an [`Array`], a string's bytes (not
/// NUL-terminated; UTF-8 in practice) or a nested [`Attrs`] dictionary.
/// The shared model of both sides of the sandbox
/// ([`cyxla_xla_types::attr::Attr`]) with the SDK's array and dictionary;
/// [`describe`](attr::Attr::describe) says what it is, for messages.
pub type Attr<'a> = attr::Attr<'a, Array<'a>, Attrs<'a>>;

/// An array attribute: dtype and contiguous elements (multi-dimensional
/// tensors arrive flattened).
///
/// Its element type, length, bytes and elements are those of the shared
/// [`ArrayView`] it dereferences to: [`dtype`](ArrayView::dtype),
/// [`len`](ArrayView::len), [`is_empty`](ArrayView::is_empty),
/// [`bytes`](ArrayView::bytes) and [`get`](ArrayView::get) (element `i` as a
/// [`Scalar`], read without alignment requirements). Typed slices are the
/// SDK's: [`as_slice`](Array::as_slice).
#[derive(Clone, Copy)]
pub struct Array<'a> {
    view: ArrayView<'a>,
    mem: Memory<'a>,
    /// The guest address of the elements, for typed slices.
    data: u32,
}

impl fmt::Debug for Array<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Array")
            .field("dtype", &self.dtype())
            .field("len", &self.len())
            .finish()
    }
}

impl<'a> Deref for Array<'a> {
    type Target = ArrayView<'a>;

    #[inline(always)]
    fn deref(&self) -> &ArrayView<'a> {
        &self.view
    }
}

impl<'a> Array<'a> {
    /// The elements as a typed slice.
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` if the dtype is not `T::DTYPE`; `INTERNAL` if the
    /// data is misaligned for `T`.
    pub fn as_slice<T: Element>(&self) -> Result<&'a [T]> {
        if self.dtype() != T::DTYPE {
            return Err(Error::invalid_argument(alloc::format!(
                "expected a {} array, got a {} array",
                T::DTYPE,
                self.dtype()
            )));
        }
        crate::dtype::any_bit_pattern::<T>();
        // SAFETY: T accepts any bit pattern (asserted above when compiled);
        // attribute memory is read-only.
        unsafe { self.mem.slice(self.data, self.len(), &"array attribute") }
    }
}

/// Conversion of an attribute into a Rust value, used by [`Attrs::get`].
pub trait FromAttr<'a>: Sized {
    /// What is expected, for messages (`a f32 scalar`).
    const EXPECTED: &'static str;

    /// Converts `attr`.
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` naming what was expected and what `attr` is.
    fn from_attr(attr: Attr<'a>) -> Result<Self>;
}

fn mismatch<T>(expected: &str, got: &Attr<'_>) -> Result<T> {
    Err(Error::invalid_argument(alloc::format!(
        "expected {expected}, got {}",
        got.describe()
    )))
}

/// Implements [`FromAttr`] for each type that one pattern of [`Attr`]
/// holds: `Type, "what is expected": pattern => binding;`. Any other
/// attribute is a [`mismatch`].
macro_rules! from_attr {
    ($($t:ty, $expected:literal: $pat:pat => $v:ident;)*) => {$(
        impl<'a> FromAttr<'a> for $t {
            const EXPECTED: &'static str = $expected;

            fn from_attr(attr: Attr<'a>) -> Result<Self> {
                match attr {
                    $pat => Ok($v),
                    other => mismatch(Self::EXPECTED, &other),
                }
            }
        }
    )*};
}

from_attr! {
    bool, "a pred scalar": Attr::Scalar(Scalar::Pred(v)) => v;
    i8, "a s8 scalar": Attr::Scalar(Scalar::S8(v)) => v;
    i16, "a s16 scalar": Attr::Scalar(Scalar::S16(v)) => v;
    i32, "a s32 scalar": Attr::Scalar(Scalar::S32(v)) => v;
    i64, "a s64 scalar": Attr::Scalar(Scalar::S64(v)) => v;
    u8, "a u8 scalar": Attr::Scalar(Scalar::U8(v)) => v;
    u16, "a u16 scalar": Attr::Scalar(Scalar::U16(v)) => v;
    u32, "a u32 scalar": Attr::Scalar(Scalar::U32(v)) => v;
    u64, "a u64 scalar": Attr::Scalar(Scalar::U64(v)) => v;
    f32, "a f32 scalar": Attr::Scalar(Scalar::F32(v)) => v;
    f64, "a f64 scalar": Attr::Scalar(Scalar::F64(v)) => v;
    Scalar, "a scalar": Attr::Scalar(s) => s;
    Array<'a>, "an array": Attr::Array(a) => a;
    Attrs<'a>, "a dictionary": Attr::Dictionary(d) => d;
}

impl<'a> FromAttr<'a> for &'a str {
    const EXPECTED: &'static str = "a UTF-8 string";

    fn from_attr(attr: Attr<'a>) -> Result<Self> {
        match attr {
            Attr::String(bytes) => core::str::from_utf8(bytes).map_err(|e| {
                Error::invalid_argument(alloc::format!("expected a UTF-8 string: {e}"))
            }),
            other => mismatch(Self::EXPECTED, &other),
        }
    }
}

impl<'a, T: Element> FromAttr<'a> for &'a [T] {
    const EXPECTED: &'static str = "an array";

    fn from_attr(attr: Attr<'a>) -> Result<Self> {
        match attr {
            Attr::Array(a) => a.as_slice(),
            other => Err(Error::invalid_argument(alloc::format!(
                "expected a {} array, got {}",
                T::DTYPE,
                other.describe()
            ))),
        }
    }
}

impl<'a> FromAttr<'a> for Attr<'a> {
    const EXPECTED: &'static str = "an attribute";

    fn from_attr(attr: Attr<'a>) -> Result<Self> {
        Ok(attr)
    }
}
