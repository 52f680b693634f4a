//! Host-owned calls: a custom call built in Rust (operands, result buffers,
//! attributes) that a [`crate::GuestHandler`] can run without XLA. Tests,
//! benches and `cyxla-host check` use it to drive guests directly; XLA's own
//! frames take the same path through the same code (`layout.rs`).

use std::cell::RefCell;

use cyxla_xla_types::attr::{ArrayView, Scalar};
use plugin_glue::frame::BufferShape;
use plugin_glue::{DType, HandlerError};

use crate::copy::Copier;
use crate::layout::{AttrSource, AttrValue, BufferDesc, CallView};

/// One operand or result of a [`HostCall`].
#[derive(Clone, Debug, PartialEq)]
pub struct HostBuffer {
    dtype: DType,
    dims: Vec<i64>,
    data: RefCell<Vec<u8>>,
}

impl HostBuffer {
    /// A buffer of `dtype` and shape `dims` holding `data` (little-endian,
    /// row-major).
    ///
    /// # Panics
    ///
    /// If `data` is not exactly the size of the shape.
    pub fn new(dtype: DType, dims: &[i64], data: Vec<u8>) -> HostBuffer {
        let buffer = HostBuffer {
            dtype,
            dims: dims.to_vec(),
            data: RefCell::new(data),
        };
        assert_eq!(
            Some(buffer.data.borrow().len()),
            buffer.expected_len(),
            "data of a {dtype}{dims:?} buffer"
        );
        buffer
    }

    /// A buffer of `dtype` and shape `dims` holding `data`, whatever its
    /// size (for fuzzing).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn from_parts(dtype: DType, dims: &[i64], data: Vec<u8>) -> HostBuffer {
        HostBuffer {
            dtype,
            dims: dims.to_vec(),
            data: RefCell::new(data),
        }
    }

    /// A zero-filled buffer of `dtype` and shape `dims` with `len` bytes.
    pub fn sized(dtype: DType, dims: &[i64], len: usize) -> HostBuffer {
        HostBuffer {
            dtype,
            dims: dims.to_vec(),
            data: RefCell::new(vec![0; len]),
        }
    }

    /// A zero-filled buffer of `dtype` and shape `dims`.
    ///
    /// # Panics
    ///
    /// If the shape has a negative dimension or overflows.
    pub fn zeros(dtype: DType, dims: &[i64]) -> HostBuffer {
        let mut buffer = HostBuffer::sized(dtype, dims, 0);
        let len = buffer.expected_len().expect("a valid shape");
        buffer.data.get_mut().resize(len, 0);
        buffer
    }

    /// An `f32` buffer.
    pub fn f32(dims: &[i64], values: &[f32]) -> HostBuffer {
        HostBuffer::new(
            DType::F32,
            dims,
            values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        )
    }

    /// An `f64` buffer.
    pub fn f64(dims: &[i64], values: &[f64]) -> HostBuffer {
        HostBuffer::new(
            DType::F64,
            dims,
            values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        )
    }

    fn expected_len(&self) -> Option<usize> {
        let mut count: u64 = 1;
        for &d in &self.dims {
            count = count.checked_mul(u64::try_from(d).ok()?)?;
        }
        usize::try_from(self.dtype.byte_size(count)?).ok()
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The dimensions.
    pub fn dims(&self) -> &[i64] {
        &self.dims
    }

    /// A copy of the bytes.
    pub fn bytes(&self) -> Vec<u8> {
        self.data.borrow().clone()
    }

    /// The data as `f32` values.
    pub fn to_f32(&self) -> Vec<f32> {
        self.data
            .borrow()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    /// The data as `f64` values.
    pub fn to_f64(&self) -> Vec<f64> {
        self.data
            .borrow()
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect()
    }
}

/// An attribute value of a [`HostCall`], owned: the host's form of the
/// attribute model both sides of the sandbox share
/// ([`cyxla_xla_types::attr::Attr`]), whose [`Scalar`] it holds.
#[derive(Clone, Debug, PartialEq)]
pub enum HostAttr {
    /// A scalar (of the dtypes XLA delivers as scalars).
    Scalar(Scalar),
    /// An array: element type, element count, little-endian bytes.
    Array(DType, usize, Vec<u8>),
    /// A string.
    String(Vec<u8>),
    /// A dictionary (entries in the order given; XLA sorts them by name).
    Dictionary(Vec<(String, HostAttr)>),
}

/// One result of a [`HostCall`].
#[derive(Clone, Debug, PartialEq)]
enum HostRet {
    /// A buffer of its own.
    Own(HostBuffer),
    /// Operand `.0`'s buffer: the same memory, as XLA gives a result that
    /// `input_output_aliases` (or donation) aliases with an operand.
    Alias(usize),
    /// A buffer of its own that claims to start `offset` bytes into operand
    /// `operand`'s memory: a partial overlap, which the sandbox refuses.
    /// Only for tests (`fuzzing`).
    #[cfg(any(test, feature = "fuzzing"))]
    Overlap {
        operand: usize,
        offset: usize,
        buffer: HostBuffer,
    },
}

/// A custom call owned by the host: operands, results, attributes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostCall {
    args: Vec<HostBuffer>,
    rets: Vec<HostRet>,
    attrs: Vec<(String, HostAttr)>,
}

impl HostCall {
    /// An empty call.
    pub fn new() -> HostCall {
        HostCall::default()
    }

    /// Adds an operand.
    pub fn arg(mut self, buffer: HostBuffer) -> HostCall {
        self.args.push(buffer);
        self
    }

    /// Adds a result buffer.
    pub fn ret(mut self, buffer: HostBuffer) -> HostCall {
        self.rets.push(HostRet::Own(buffer));
        self
    }

    /// Adds a result aliased with operand `operand`: the same memory (same
    /// address, dtype and shape), as XLA passes a result that
    /// `input_output_aliases={operand: result}` or a donated argument ties to
    /// an operand. The result holds the operand's values when the handler
    /// starts, and [`HostCall::result`] and [`HostCall::operand`] show the
    /// same bytes afterwards.
    ///
    /// # Panics
    ///
    /// If there is no operand `operand` yet.
    pub fn ret_alias(mut self, operand: usize) -> HostCall {
        assert!(
            operand < self.args.len(),
            "result aliased with operand {operand}, but the call has {} operand(s)",
            self.args.len()
        );
        self.rets.push(HostRet::Alias(operand));
        self
    }

    /// Adds a result whose memory claims to start `offset` bytes into
    /// operand `operand`'s (while `buffer` gives its dtype, shape and
    /// storage): a partial overlap, which XLA does not produce and the
    /// sandbox refuses. For tests (the `fuzzing` feature).
    ///
    /// # Panics
    ///
    /// If there is no operand `operand` yet.
    #[cfg(any(test, feature = "fuzzing"))]
    #[doc(hidden)]
    pub fn ret_overlapping(
        mut self,
        operand: usize,
        offset: usize,
        buffer: HostBuffer,
    ) -> HostCall {
        assert!(
            operand < self.args.len(),
            "result overlapping operand {operand}, but the call has {} operand(s)",
            self.args.len()
        );
        self.rets.push(HostRet::Overlap {
            operand,
            offset,
            buffer,
        });
        self
    }

    /// Adds an attribute (add them sorted by name, as XLA delivers them).
    pub fn attr(mut self, name: &str, value: HostAttr) -> HostCall {
        self.attrs.push((name.to_owned(), value));
        self
    }

    /// Result `i` (for a result aliased with an operand, that operand's
    /// buffer).
    ///
    /// # Panics
    ///
    /// If there is no result `i`.
    pub fn result(&self, i: usize) -> &HostBuffer {
        self.ret_buffer(&self.rets[i])
    }

    /// Operand `i`, or the error a handler gets for an index past the end.
    fn checked_arg(&self, i: usize) -> Result<&HostBuffer, HandlerError> {
        self.args
            .get(i)
            .ok_or_else(|| index_error("operand", i, self.args.len()))
    }

    /// Result `i`, or the error a handler gets for an index past the end.
    fn checked_ret(&self, i: usize) -> Result<&HostRet, HandlerError> {
        self.rets
            .get(i)
            .ok_or_else(|| index_error("result", i, self.rets.len()))
    }

    fn ret_buffer<'s>(&'s self, ret: &'s HostRet) -> &'s HostBuffer {
        match ret {
            HostRet::Own(buffer) => buffer,
            #[cfg(any(test, feature = "fuzzing"))]
            HostRet::Overlap { buffer, .. } => buffer,
            HostRet::Alias(operand) => &self.args[*operand],
        }
    }

    /// Operand `i`.
    ///
    /// # Panics
    ///
    /// If there is no operand `i`.
    pub fn operand(&self, i: usize) -> &HostBuffer {
        &self.args[i]
    }
}

fn index_error(what: &str, i: usize, n: usize) -> HandlerError {
    HandlerError::invalid_argument(format!("{what} {i} requested, the call has {n}"))
}

fn desc(buffer: &HostBuffer) -> BufferDesc<'_> {
    let data = buffer.data.borrow();
    BufferDesc {
        dtype: buffer.dtype,
        dims: &buffer.dims,
        byte_len: data.len(),
        addr: data.as_ptr().addr(),
    }
}

#[cfg(any(test, feature = "fuzzing"))]
fn desc_addr(buffer: &HostBuffer) -> usize {
    buffer.data.borrow().as_ptr().addr()
}

impl CallView for HostCall {
    type Attrs<'s> = &'s [(String, HostAttr)];

    fn num_args(&self) -> usize {
        self.args.len()
    }

    fn num_rets(&self) -> usize {
        self.rets.len()
    }

    fn arg(&self, i: usize) -> Result<BufferDesc<'_>, HandlerError> {
        self.checked_arg(i).map(desc)
    }

    fn ret(&self, i: usize) -> Result<BufferDesc<'_>, HandlerError> {
        let ret = self.checked_ret(i)?;
        #[cfg_attr(
            not(any(test, feature = "fuzzing")),
            expect(unused_mut, reason = "set below for tests")
        )]
        let mut desc = desc(self.ret_buffer(ret));
        #[cfg(any(test, feature = "fuzzing"))]
        if let HostRet::Overlap {
            operand, offset, ..
        } = ret
        {
            desc.addr = desc_addr(&self.args[*operand]).wrapping_add(*offset);
        }
        Ok(desc)
    }

    fn attrs(&self) -> &[(String, HostAttr)] {
        &self.attrs
    }

    fn read_arg(
        &self,
        i: usize,
        _: Option<&BufferShape>,
        dst: &mut [u8],
        copier: Copier,
    ) -> Result<(), HandlerError> {
        copier.copy(dst, &self.checked_arg(i)?.data.borrow());
        Ok(())
    }

    fn write_ret(
        &self,
        i: usize,
        _: Option<&BufferShape>,
        src: &[u8],
        copier: Copier,
    ) -> Result<(), HandlerError> {
        let ret = self.checked_ret(i)?;
        copier.copy(&mut self.ret_buffer(ret).data.borrow_mut(), src);
        Ok(())
    }
}

impl<'s> AttrSource for &'s [(String, HostAttr)] {
    fn count(&self) -> usize {
        self.len()
    }

    fn visit<F>(&self, mut f: F) -> Result<(), HandlerError>
    where
        F: FnMut(&[u8], AttrValue<'_, Self>) -> Result<(), HandlerError>,
    {
        let entries: &'s [(String, HostAttr)] = self;
        for (name, value) in entries {
            let value = match value {
                HostAttr::Scalar(scalar) => AttrValue::Scalar(*scalar),
                HostAttr::Array(dtype, len, bytes) => {
                    AttrValue::Array(ArrayView::new(*dtype, *len, bytes))
                }
                HostAttr::String(bytes) => AttrValue::String(bytes),
                HostAttr::Dictionary(inner) => AttrValue::Dictionary(inner.as_slice()),
            };
            f(name.as_bytes(), value)?;
        }
        Ok(())
    }
}
