//! Unit-test kernels natively: build a wasm32 call frame in a buffer, exactly
//! as the host lays it out in guest memory, and run a handler on it
//! (feature `testing`).
//!
//! ```
//! use cyxla_guest_sdk::testing::FrameBuilder;
//! use cyxla_guest_sdk::{CallFrame, DataType, Result};
//!
//! fn double(frame: &CallFrame<'_>) -> Result<()> {
//!     let x = frame.arg::<f32>(0)?;
//!     let mut y = frame.ret::<f32>(0)?;
//!     y.iter_mut().zip(x.iter()).for_each(|(y, x)| *y = 2.0 * x);
//!     Ok(())
//! }
//!
//! let mut call = FrameBuilder::new()
//!     .arg(&[3], &[1.0f32, 2.0, 3.0])
//!     .ret(DataType::F32, &[3])
//!     .build();
//! call.call(double).unwrap();
//! assert_eq!(call.ret::<f32>(0), [2.0, 4.0, 6.0]);
//! ```

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use crate::abi::{self, attr_type, call_frame as frame_layout};
use crate::attrs::Scalar;
use crate::dtype::{DataType, Element};
use crate::error::Result;
use crate::frame::CallFrame;
use crate::memory::Memory;

/// Byte the result regions are filled with before a call, so a test can tell
/// unwritten elements (XLA does not zero results either).
pub const RESULT_FILL: u8 = 0xA5;

/// An attribute value for [`FrameBuilder::attr`].
#[derive(Clone, Debug, PartialEq)]
pub enum TestAttr {
    /// A scalar.
    Scalar(Scalar),
    /// An array: dtype and little-endian element bytes.
    Array(DataType, Vec<u8>),
    /// A string's bytes.
    String(Vec<u8>),
    /// A dictionary (sorted by name when written, like XLA).
    Dictionary(Vec<(String, TestAttr)>),
}

impl TestAttr {
    /// An array attribute of `T`s.
    pub fn array<T: Element>(values: &[T]) -> TestAttr {
        // SAFETY: T: Element has no padding, so its bytes are initialised.
        let bytes = unsafe {
            core::slice::from_raw_parts(values.as_ptr().cast::<u8>(), size_of_val(values))
        };
        TestAttr::Array(T::DTYPE, bytes.to_vec())
    }

    /// A dictionary attribute.
    pub fn dict(entries: impl IntoIterator<Item = (impl Into<String>, TestAttr)>) -> TestAttr {
        TestAttr::Dictionary(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}

macro_rules! scalar_test_attr {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for TestAttr {
            fn from(v: $t) -> TestAttr {
                TestAttr::Scalar(Scalar::$v(v))
            }
        }
    )*};
}

scalar_test_attr!(bool => Pred, i8 => S8, i16 => S16, i32 => S32, i64 => S64, u8 => U8, u16 => U16, u32 => U32, u64 => U64, f32 => F32, f64 => F64);

impl From<&str> for TestAttr {
    fn from(v: &str) -> TestAttr {
        TestAttr::String(v.as_bytes().to_vec())
    }
}

#[derive(Clone, Debug)]
struct BufferSpec {
    dtype: DataType,
    dims: Vec<i64>,
    bytes: Option<Vec<u8>>,
    /// Results: the operand whose data this result shares.
    alias: Option<usize>,
}

/// Builds a call: operands, result shapes and attributes.
#[derive(Clone, Debug, Default)]
pub struct FrameBuilder {
    args: Vec<BufferSpec>,
    rets: Vec<BufferSpec>,
    attrs: Vec<(String, TestAttr)>,
}

impl FrameBuilder {
    /// An empty call.
    pub fn new() -> FrameBuilder {
        FrameBuilder::default()
    }

    /// Adds an operand of shape `dims` holding `data` (row-major).
    ///
    /// # Panics
    ///
    /// `data.len()` is not the product of `dims`.
    pub fn arg<T: Element>(self, dims: &[i64], data: &[T]) -> FrameBuilder {
        let n: i64 = dims.iter().product();
        assert_eq!(
            n as usize,
            data.len(),
            "operand data length vs dims {dims:?}"
        );
        // SAFETY: T: Element has no padding, so its bytes are initialised.
        let bytes =
            unsafe { core::slice::from_raw_parts(data.as_ptr().cast::<u8>(), size_of_val(data)) };
        self.arg_bytes(T::DTYPE, dims, bytes)
    }

    /// Adds an operand of any dtype from raw bytes.
    pub fn arg_bytes(mut self, dtype: DataType, dims: &[i64], bytes: &[u8]) -> FrameBuilder {
        self.args.push(BufferSpec {
            dtype,
            dims: dims.to_vec(),
            bytes: Some(bytes.to_vec()),
            alias: None,
        });
        self
    }

    /// Adds a result of `dtype` and shape `dims`.
    pub fn ret(mut self, dtype: DataType, dims: &[i64]) -> FrameBuilder {
        self.rets.push(BufferSpec {
            dtype,
            dims: dims.to_vec(),
            bytes: None,
            alias: None,
        });
        self
    }

    /// Adds a result aliased with operand `operand`: the same dtype, shape
    /// and data address, holding the operand's values, as the host lays out
    /// a result that XLA aliases (`input_output_aliases`, donation).
    ///
    /// # Panics
    ///
    /// There is no operand `operand` yet.
    pub fn ret_alias(mut self, operand: usize) -> FrameBuilder {
        let arg = &self.args[operand];
        self.rets.push(BufferSpec {
            dtype: arg.dtype,
            dims: arg.dims.clone(),
            bytes: None,
            alias: Some(operand),
        });
        self
    }

    /// Adds an attribute.
    pub fn attr(mut self, name: &str, value: impl Into<TestAttr>) -> FrameBuilder {
        self.attrs.push((name.into(), value.into()));
        self
    }

    /// Lays the call out in a fresh buffer standing for guest memory.
    pub fn build(self) -> TestCall {
        let image = self.image_at(0);
        // Copy into u64 storage so that guest address alignment mod 8 is real.
        let mut mem = vec![0u64; image.bytes.len().div_ceil(8)];
        for (i, chunk) in image.bytes.chunks(8).enumerate() {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            mem[i] = u64::from_ne_bytes(word);
        }
        TestCall {
            mem,
            len: image.bytes.len(),
            frame: image.frame,
            rets: image.rets,
        }
    }

    /// Lays the call out for guest addresses starting at `base` (a multiple
    /// of 64), e.g. to copy it into a real guest's memory at an address its
    /// `cyxla_alloc` returned. The first 64 bytes are left zero.
    ///
    /// # Panics
    ///
    /// `base` is not a multiple of 64.
    pub fn image_at(self, base: u32) -> FrameImage {
        assert!(base.is_multiple_of(64), "image base must be 64-aligned");
        let mut w = Writer {
            base,
            buf: vec![0; 64],
        };
        let frame = w.alloc(frame_layout::SIZE, 8);
        w.u32(frame, frame_layout::STRUCT_SIZE);
        w.u32(frame + frame_layout::API, 0);
        w.u32(frame + frame_layout::CTX, 8);
        w.u32(frame + frame_layout::STAGE, abi::execution_stage::EXECUTE);
        let args = w.write_buffers(frame + frame_layout::ARGS, &self.args, &ARGS, &[]);
        let rets = w.write_buffers(frame + frame_layout::RETS, &self.rets, &RETS, &args);
        w.write_attrs(frame + frame_layout::ATTRS, &self.attrs);
        FrameImage {
            base,
            bytes: w.buf,
            frame,
            rets,
        }
    }
}

/// What differs between the Args and the Rets struct: their `struct_size`
/// and the offsets of their types and pointers arrays.
struct BufferList {
    struct_size: u32,
    types: u32,
    ptrs: u32,
}

/// `XLA_FFI_Args`.
const ARGS: BufferList = BufferList {
    struct_size: abi::args::STRUCT_SIZE,
    types: abi::args::TYPES,
    ptrs: abi::args::ARGS,
};

/// `XLA_FFI_Rets`.
const RETS: BufferList = BufferList {
    struct_size: abi::rets::STRUCT_SIZE,
    types: abi::rets::TYPES,
    ptrs: abi::rets::RETS,
};

/// A call laid out for guest addresses `base..base + bytes.len()`.
#[derive(Clone, Debug)]
pub struct FrameImage {
    /// Guest address of `bytes[0]`.
    pub base: u32,
    /// The bytes to copy to guest memory at `base`.
    pub bytes: Vec<u8>,
    /// Guest address of the call frame (what the handler export receives).
    pub frame: u32,
    /// Guest address and byte length of each result's data.
    pub rets: Vec<(u32, usize)>,
}

struct Writer {
    base: u32,
    buf: Vec<u8>,
}

impl Writer {
    /// Allocates `size` bytes aligned to `align`; returns the guest address.
    fn alloc(&mut self, size: u32, align: u32) -> u32 {
        let start = self.buf.len().next_multiple_of(align as usize);
        self.buf.resize(start + size as usize, 0);
        self.base + start as u32
    }

    fn bytes(&mut self, at: u32, b: &[u8]) {
        let at = (at - self.base) as usize;
        self.buf[at..at + b.len()].copy_from_slice(b);
    }

    fn u32(&mut self, at: u32, v: u32) {
        self.bytes(at, &v.to_le_bytes());
    }

    fn i64(&mut self, at: u32, v: i64) {
        self.bytes(at, &v.to_le_bytes());
    }

    fn data(&mut self, b: &[u8]) -> u32 {
        let at = self.alloc(b.len() as u32, 64);
        self.bytes(at, b);
        at
    }

    /// Writes an Args/Rets struct (laid out as `list` says) at `at`; returns
    /// (data address, byte length) of each buffer. An aliased result uses
    /// its operand's data in `args`.
    fn write_buffers(
        &mut self,
        at: u32,
        bufs: &[BufferSpec],
        list: &BufferList,
        args: &[(u32, usize)],
    ) -> Vec<(u32, usize)> {
        self.u32(at, list.struct_size);
        self.i64(at + abi::args::SIZE_FIELD, bufs.len() as i64);
        let types = self.alloc(4 * bufs.len() as u32, 4);
        let ptrs = self.alloc(4 * bufs.len() as u32, 4);
        self.u32(at + list.types, types);
        self.u32(at + list.ptrs, ptrs);
        let mut regions = Vec::new();
        for (i, b) in bufs.iter().enumerate() {
            let elements: i64 = b.dims.iter().product();
            let len = b.dtype.byte_size(elements as u64).expect("buffer size") as usize;
            let data = match (&b.bytes, b.alias) {
                (_, Some(operand)) => args[operand].0,
                (Some(bytes), None) => self.data(bytes),
                (None, None) => self.data(&vec![RESULT_FILL; len]),
            };
            let dims = self.alloc(8 * b.dims.len() as u32, 8);
            for (k, &d) in b.dims.iter().enumerate() {
                self.i64(dims + 8 * k as u32, d);
            }
            let buf = self.alloc(abi::buffer::SIZE, 8);
            self.u32(buf, abi::buffer::STRUCT_SIZE);
            self.u32(buf + abi::buffer::DTYPE, b.dtype.to_raw());
            self.u32(buf + abi::buffer::DATA, data);
            self.i64(buf + abi::buffer::RANK, b.dims.len() as i64);
            self.u32(buf + abi::buffer::DIMS, dims);
            self.u32(types + 4 * i as u32, abi::arg_type::BUFFER);
            self.u32(ptrs + 4 * i as u32, buf);
            regions.push((data, len));
        }
        regions
    }

    /// Writes an Attrs struct at `at` with `entries` sorted by name.
    fn write_attrs(&mut self, at: u32, entries: &[(String, TestAttr)]) {
        let mut sorted: Vec<&(String, TestAttr)> = entries.iter().collect();
        sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let n = sorted.len() as u32;
        self.u32(at, abi::attrs::STRUCT_SIZE);
        self.i64(at + abi::attrs::SIZE_FIELD, i64::from(n));
        let types = self.alloc(4 * n, 4);
        let names = self.alloc(4 * n, 4);
        let values = self.alloc(4 * n, 4);
        self.u32(at + abi::attrs::TYPES, types);
        self.u32(at + abi::attrs::NAMES, names);
        self.u32(at + abi::attrs::ATTRS, values);
        for (i, (name, value)) in sorted.into_iter().enumerate() {
            let i = i as u32;
            let span = self.span(name.as_bytes());
            self.u32(names + 4 * i, span);
            let (ty, addr) = match value {
                TestAttr::Scalar(s) => {
                    let bytes = scalar_bytes(s);
                    let v = self.alloc(bytes.len() as u32, 8);
                    self.bytes(v, &bytes);
                    let sc = self.alloc(abi::scalar::SIZE, 4);
                    self.u32(sc + abi::scalar::DTYPE, s.dtype().to_raw());
                    self.u32(sc + abi::scalar::VALUE, v);
                    (attr_type::SCALAR, sc)
                }
                TestAttr::Array(dtype, bytes) => {
                    let bits = dtype.bits().max(8) as usize;
                    let d = self.alloc(bytes.len() as u32, 8);
                    self.bytes(d, bytes);
                    let arr = self.alloc(abi::array::SIZE, 4);
                    self.u32(arr + abi::array::DTYPE, dtype.to_raw());
                    self.u32(
                        arr + abi::array::SIZE_FIELD,
                        (bytes.len() * 8 / bits) as u32,
                    );
                    self.u32(arr + abi::array::DATA, d);
                    (attr_type::ARRAY, arr)
                }
                TestAttr::String(bytes) => (attr_type::STRING, self.span(bytes)),
                TestAttr::Dictionary(entries) => {
                    let d = self.alloc(abi::attrs::SIZE, 8);
                    self.write_attrs(d, entries);
                    (attr_type::DICTIONARY, d)
                }
            };
            self.u32(types + 4 * i, ty);
            self.u32(values + 4 * i, addr);
        }
    }

    fn span(&mut self, bytes: &[u8]) -> u32 {
        let p = self.alloc(bytes.len() as u32, 1);
        self.bytes(p, bytes);
        let span = self.alloc(abi::byte_span::SIZE, 4);
        self.u32(span + abi::byte_span::PTR, p);
        self.u32(span + abi::byte_span::LEN, bytes.len() as u32);
        span
    }
}

fn scalar_bytes(s: &Scalar) -> Vec<u8> {
    match *s {
        Scalar::Pred(v) => vec![u8::from(v)],
        Scalar::S8(v) => v.to_le_bytes().to_vec(),
        Scalar::S16(v) => v.to_le_bytes().to_vec(),
        Scalar::S32(v) => v.to_le_bytes().to_vec(),
        Scalar::S64(v) => v.to_le_bytes().to_vec(),
        Scalar::U8(v) => v.to_le_bytes().to_vec(),
        Scalar::U16(v) => v.to_le_bytes().to_vec(),
        Scalar::U32(v) => v.to_le_bytes().to_vec(),
        Scalar::U64(v) => v.to_le_bytes().to_vec(),
        Scalar::F32(v) => v.to_le_bytes().to_vec(),
        Scalar::F64(v) => v.to_le_bytes().to_vec(),
    }
}

/// A call laid out in a buffer standing for guest memory; run handlers on it
/// and read the results back.
#[derive(Clone, Debug)]
pub struct TestCall {
    mem: Vec<u64>,
    len: usize,
    frame: u32,
    rets: Vec<(u32, usize)>,
}

impl TestCall {
    /// Runs `handler` (a [`Handler`](crate::Handler) or any closure) on the
    /// call, reading the frame as a guest export does when the frame is
    /// laid out as the host guarantees (checked here first: docs/abi.md,
    /// "What a guest may rely on"); a frame that is not (one a test
    /// corrupted) is decoded and checked as it is used, so its flaws are
    /// errors.
    ///
    /// # Errors
    ///
    /// The handler's error, or the frame decoding error.
    pub fn call(&mut self, handler: impl FnOnce(&CallFrame<'_>) -> Result<()>) -> Result<()> {
        // SAFETY: `self.mem` outlives the view, which lives only during this
        // call, and nothing else touches `self.mem` meanwhile (&mut self).
        let mem = unsafe { Memory::from_raw_parts(self.mem.as_mut_ptr().cast(), self.len, 0) };
        match CallFrame::validated(mem, self.frame) {
            Some(frame) => handler(&frame),
            None => handler(&CallFrame::decode(mem, self.frame)?),
        }
    }

    /// Runs `kernel` (a function a [`kernel!`](crate::kernel) serves) on
    /// the call, as its export does on wasm32: the call checked against the
    /// kernel's signature, each buffer read where the frame says it is. The
    /// frame must be laid out as the host guarantees
    /// (docs/abi.md, "What a guest may rely on"), with at most 64 operands
    /// and 64 results; one that is not (one a test corrupted) is decoded
    /// instead, for its error.
    ///
    /// # Errors
    ///
    /// The kernel's error, the call's mismatch with its signature, or the
    /// frame decoding error.
    pub fn kernel<'s, P, K: crate::Kernel<'s, P>>(&'s mut self, kernel: K) -> Result<()> {
        // SAFETY: `self.mem` outlives the view, which lives for the borrow
        // of `self` ('s), during which nothing else touches `self.mem`.
        let mem = unsafe { Memory::from_raw_parts(self.mem.as_mut_ptr().cast(), self.len, 0) };
        match CallFrame::validated(mem, self.frame) {
            // SAFETY: laid out as the host lays out frames (validated).
            Some(_) => unsafe { crate::kernel::run(mem, self.frame, &kernel) },
            None => CallFrame::decode(mem, self.frame).and_then(|_| {
                Err(crate::Error::internal(
                    "the frame is not laid out as the host lays out frames",
                ))
            }),
        }
    }

    /// Whether [`TestCall::call`] reads the frame as a guest export does
    /// (laid out as the host guarantees), not decoding and checking it.
    #[cfg(test)]
    pub(crate) fn trusted(&mut self) -> bool {
        // SAFETY: as in call().
        let mem = unsafe { Memory::from_raw_parts(self.mem.as_mut_ptr().cast(), self.len, 0) };
        CallFrame::validated(mem, self.frame).is_some()
    }

    /// Guest address of the frame.
    pub fn frame_address(&self) -> u32 {
        self.frame
    }

    /// The guest memory, e.g. to corrupt a frame in a test.
    pub fn memory_mut(&mut self) -> &mut [u8] {
        // SAFETY: u64 storage viewed as its `len` leading bytes (len <= 8 * mem.len()).
        unsafe { core::slice::from_raw_parts_mut(self.mem.as_mut_ptr().cast(), self.len) }
    }

    /// Result `i`'s bytes.
    ///
    /// # Panics
    ///
    /// `i` is out of range.
    pub fn ret_bytes(&self, i: usize) -> &[u8] {
        let (at, len) = self.rets[i];
        // SAFETY: u64 storage viewed as bytes; the region was allocated inside it.
        let all: &[u8] = unsafe { core::slice::from_raw_parts(self.mem.as_ptr().cast(), self.len) };
        &all[at as usize..at as usize + len]
    }

    /// Result `i`'s elements.
    ///
    /// # Panics
    ///
    /// `i` is out of range or the result's size is not a multiple of `T`'s.
    pub fn ret<T: Element>(&self, i: usize) -> Vec<T> {
        crate::dtype::any_bit_pattern::<T>();
        let bytes = self.ret_bytes(i);
        assert_eq!(
            bytes.len() % size_of::<T>(),
            0,
            "result {i} size vs element size"
        );
        bytes
            .chunks_exact(size_of::<T>())
            // SAFETY: T accepts any bit pattern of its size (asserted above
            // when compiled).
            .map(|c| unsafe { c.as_ptr().cast::<T>().read_unaligned() })
            .collect()
    }
}
