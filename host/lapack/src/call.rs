//! A call as the LAPACK handlers see it: buffers (dtype, logical dims, data
//! pointer) and attributes, independent of where they come from (an XLA
//! call frame, or a unit test), plus the shape checks, the aliasing step and
//! the batch loop every family shares.

use std::fmt::{self, Display};
use std::marker::PhantomData;

use rayon::prelude::*;

use crate::library::LapackLibrary;
use crate::scalar::{Elem, RealScalar};
use plugin_glue::dtype::DType;
use plugin_glue::frame::Scalar;
use plugin_glue::handler::HandlerError;

/// One buffer: element type, logical dims (program order) and data.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Buf<'a> {
    /// Element type.
    pub dtype: DType,
    /// Logical dims.
    pub dims: &'a [i64],
    /// First byte; may be NULL when the buffer has no elements.
    pub ptr: *mut u8,
}

/// An attribute value as these targets read it: a scalar of the attribute
/// model both sides of the sandbox share, or, for anything else (arrays,
/// strings, dictionaries), its kind, for messages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum AttrValue {
    /// A scalar.
    Scalar(Scalar),
    /// Not a scalar: its kind (`array`, `string`, `dictionary`).
    Other(&'static str),
}

impl fmt::Display for AttrValue {
    /// `a s32 scalar, 5`, `an array`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrValue::Scalar(s) => match s.to_i64() {
                Some(v) => write!(f, "a {} scalar, {v}", s.dtype()),
                None => write!(f, "a {} scalar, {}", s.dtype(), s.to_f64()),
            },
            AttrValue::Other(kind) if kind.starts_with(['a', 'e', 'i', 'o', 'u']) => {
                write!(f, "an {kind}")
            }
            AttrValue::Other(kind) => write!(f, "a {kind}"),
        }
    }
}

/// The buffers and attributes of one call of `target`.
#[derive(Debug)]
pub(crate) struct Call<'a> {
    pub target: &'a str,
    pub args: Vec<Buf<'a>>,
    pub rets: Vec<Buf<'a>>,
    pub attrs: Vec<(&'a [u8], AttrValue)>,
}

/// Which side of the call a buffer is on, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Operand,
    Result,
}

/// One buffer of a call, with the names that go into error messages.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Operand<'a> {
    pub buf: Buf<'a>,
    target: &'a str,
    side: Side,
    index: usize,
    name: &'static str,
}

impl<'a> Call<'a> {
    /// `INVALID_ARGUMENT` naming the target.
    pub fn err(&self, msg: impl Display) -> HandlerError {
        HandlerError::invalid_argument(format!("{}: {msg}", self.target))
    }

    /// Checks the number of operands and results.
    fn arity(&self, args: usize, rets: usize) -> Result<(), HandlerError> {
        if self.args.len() != args || self.rets.len() != rets {
            return Err(self.err(format_args!(
                "expected {args} operands and {rets} results, got {} and {}",
                self.args.len(),
                self.rets.len()
            )));
        }
        Ok(())
    }

    /// Checks the arity against the names given, then returns the operands
    /// and the results in order, each called by its name in messages:
    ///
    /// ```text
    /// let ([a], [lu, info]) = call.operands(["a"], ["lu", "info"])?;
    /// ```
    pub fn operands<const A: usize, const R: usize>(
        &self,
        args: [&'static str; A],
        rets: [&'static str; R],
    ) -> Result<([Operand<'a>; A], [Operand<'a>; R]), HandlerError> {
        self.arity(A, R)?;
        let named = |side: Side, list: &[Buf<'a>], i: usize, name: &'static str| Operand {
            buf: list[i],
            target: self.target,
            side,
            index: i,
            name,
        };
        Ok((
            std::array::from_fn(|i| named(Side::Operand, &self.args, i, args[i])),
            std::array::from_fn(|i| named(Side::Result, &self.rets, i, rets[i])),
        ))
    }

    fn attr(&self, name: &str) -> Result<AttrValue, HandlerError> {
        self.attrs
            .iter()
            .find(|(n, _)| *n == name.as_bytes())
            .map(|(_, v)| *v)
            .ok_or_else(|| self.err(format_args!("missing attribute `{name}`")))
    }

    /// A LAPACK character attribute (`U8` or `S8` scalar) that must be one of
    /// `allowed`.
    pub fn char_attr(&self, name: &str, allowed: &[u8]) -> Result<u8, HandlerError> {
        let value = match self.attr(name)? {
            AttrValue::Scalar(Scalar::U8(c)) => i64::from(c),
            AttrValue::Scalar(Scalar::S8(c)) => i64::from(c),
            other => {
                return Err(self.err(format_args!(
                    "attribute `{name}` must be a ui8 (or i8) character, got {other}"
                )));
            }
        };
        match u8::try_from(value) {
            Ok(c) if allowed.contains(&c) => Ok(c),
            _ => Err(self.err(format_args!(
                "attribute `{name}` is {value}{}, expected one of {}",
                u8::try_from(value)
                    .ok()
                    .filter(u8::is_ascii_graphic)
                    .map(|c| format!(" ('{}')", char::from(c)))
                    .unwrap_or_default(),
                allowed
                    .iter()
                    .map(|c| format!("'{}'", char::from(*c)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// A boolean attribute (`PRED`, or an integer 0/1).
    pub fn bool_attr(&self, name: &str) -> Result<bool, HandlerError> {
        // PRED reads as 0 or 1 too.
        let value = self.attr(name)?;
        if let AttrValue::Scalar(s) = value
            && let Some(v @ (0 | 1)) = s.to_i64()
        {
            return Ok(v == 1);
        }
        Err(self.err(format_args!(
            "attribute `{name}` must be a boolean, got {value}"
        )))
    }

    /// An integer attribute.
    pub fn int_attr(&self, name: &str) -> Result<i64, HandlerError> {
        match self.attr(name)? {
            AttrValue::Scalar(s) if !matches!(s, Scalar::Pred(_)) => s.to_i64().ok_or_else(|| {
                self.err(format_args!(
                    "attribute `{name}` must be an integer of at most 64 bits, got {}",
                    AttrValue::Scalar(s)
                ))
            }),
            other => Err(self.err(format_args!(
                "attribute `{name}` must be an integer, got {other}"
            ))),
        }
    }
}

impl<'a> Operand<'a> {
    /// `INVALID_ARGUMENT` naming the target and this buffer.
    pub fn err(&self, msg: impl Display) -> HandlerError {
        let side = match self.side {
            Side::Operand => "operand",
            Side::Result => "result",
        };
        HandlerError::invalid_argument(format!(
            "{}: {side} {} ({}) {msg}",
            self.target, self.index, self.name
        ))
    }

    /// Logical dims.
    pub fn dims(&self) -> &'a [i64] {
        self.buf.dims
    }

    /// Checks the element type.
    pub fn dtype(&self, expected: DType) -> Result<(), HandlerError> {
        if self.buf.dtype != expected {
            return Err(self.err(format_args!(
                "has element type {}, expected {}",
                self.buf.dtype.name(),
                expected.name()
            )));
        }
        Ok(())
    }

    fn dim(&self, d: i64) -> Result<usize, HandlerError> {
        usize::try_from(d).map_err(|_| {
            self.err(format_args!(
                "has a negative dimension in {:?}",
                self.buf.dims
            ))
        })
    }

    /// `(batch dims, rows, cols)` of a batch of matrices (rank ≥ 2).
    pub fn matrix(&self) -> Result<(&'a [i64], usize, usize), HandlerError> {
        let d = self.buf.dims;
        if d.len() < 2 {
            return Err(self.err(format_args!("must have rank >= 2, got shape {d:?}")));
        }
        Ok((
            &d[..d.len() - 2],
            self.dim(d[d.len() - 2])?,
            self.dim(d[d.len() - 1])?,
        ))
    }

    /// `(batch dims, rows, cols)` of a batch of matrices of `dtype`.
    pub fn matrix_of(&self, dtype: DType) -> Result<(&'a [i64], usize, usize), HandlerError> {
        self.dtype(dtype)?;
        self.matrix()
    }

    /// `(batch dims, n)` of a batch of square matrices of `dtype`.
    pub fn square(&self, dtype: DType) -> Result<(&'a [i64], usize), HandlerError> {
        let (batch, m, n) = self.matrix_of(dtype)?;
        if m != n {
            return Err(self.err(format_args!("must be square, got {m}×{n}")));
        }
        Ok((batch, n))
    }

    /// [`Operand::square`] for the targets that need n ≥ 1.
    pub fn square_nonempty(&self, dtype: DType) -> Result<(&'a [i64], usize), HandlerError> {
        let (batch, m, n) = self.matrix_of(dtype)?;
        if m != n || n == 0 {
            return Err(self.err(format_args!("must be square with n >= 1, got {m}×{n}")));
        }
        Ok((batch, n))
    }

    /// `(batch dims, length)` of a batch of vectors (rank ≥ 1).
    pub fn vector(&self) -> Result<(&'a [i64], usize), HandlerError> {
        let d = self.buf.dims;
        if d.is_empty() {
            return Err(self.err("must have rank >= 1, got a scalar"));
        }
        Ok((&d[..d.len() - 1], self.dim(d[d.len() - 1])?))
    }

    /// Checks dtype and exact shape `batch ++ tail`.
    pub fn expect(&self, dtype: DType, batch: &[i64], tail: &[usize]) -> Result<(), HandlerError> {
        self.dtype(dtype)?;
        let d = self.buf.dims;
        let ok = d.len() == batch.len() + tail.len()
            && d[..batch.len()] == *batch
            && d[batch.len()..]
                .iter()
                .zip(tail)
                .all(|(&a, &b)| u64::try_from(a).ok() == u64::try_from(b).ok());
        if !ok {
            let mut want: Vec<i64> = batch.to_vec();
            want.extend(tail.iter().map(|&t| i64::try_from(t).unwrap_or(i64::MAX)));
            return Err(self.err(format_args!("has shape {d:?}, expected {want:?}")));
        }
        Ok(())
    }

    /// Checks an `S32` scalar per batch element (`info`, `sdim`).
    pub fn expect_scalars(&self, batch: &[i64]) -> Result<(), HandlerError> {
        self.expect(DType::S32, batch, &[])
    }

    /// Number of elements, checked against overflow.
    pub fn elements(&self) -> Result<usize, HandlerError> {
        self.buf.dims.iter().try_fold(1usize, |acc, &d| {
            acc.checked_mul(self.dim(d)?)
                .ok_or_else(|| self.err(format_args!("shape {:?} overflows", self.buf.dims)))
        })
    }

    fn raw<T: Elem>(&self) -> Result<(*mut T, usize), HandlerError> {
        self.dtype(T::DTYPE)?;
        let len = self.elements()?;
        if len == 0 {
            return Ok((std::ptr::NonNull::dangling().as_ptr(), 0));
        }
        if self.buf.ptr.is_null() {
            return Err(self.err(format_args!("has {len} elements but a NULL data pointer")));
        }
        if !(self.buf.ptr as usize).is_multiple_of(std::mem::align_of::<T>()) {
            return Err(self.err("has a misaligned data pointer"));
        }
        Ok((self.buf.ptr.cast(), len))
    }

    /// The buffer as `[T]` (dtype-checked).
    ///
    /// # Safety
    ///
    /// The buffer must hold `elements()` valid `T`s for `'a`, with no
    /// mutable reference to them alive while the slice is.
    pub unsafe fn slice<T: Elem>(&self) -> Result<&'a [T], HandlerError> {
        let (p, len) = self.raw::<T>()?;
        // SAFETY: the caller guarantees the memory; `raw` checked dtype,
        // non-null and alignment, and `p` is dangling only for len 0.
        Ok(unsafe { std::slice::from_raw_parts(p, len) })
    }

    /// The buffer as `[T]`, writable (dtype-checked).
    ///
    /// # Safety
    ///
    /// The buffer must hold `elements()` `T`s for `'a`, exclusively ours
    /// (a result, and no other view of it alive).
    pub unsafe fn slice_mut<T: Elem>(&self) -> Result<&'a mut [T], HandlerError> {
        let (p, len) = self.raw::<T>()?;
        // SAFETY: as in `slice`, plus exclusivity from the caller.
        Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
    }

    /// The aliasing step of an output-operand alias: checks that `result`
    /// has this operand's dtype and shape and copies the operand's bytes into
    /// it when the two pointers differ (as jaxlib does).
    ///
    /// # Safety
    ///
    /// Both buffers must be valid for `elements()` elements; `result` must
    /// be ours, with no reference to either buffer alive.
    pub unsafe fn copy_to<T: Elem>(&self, result: &Operand<'a>) -> Result<(), HandlerError> {
        result.dtype(self.buf.dtype)?;
        if result.buf.dims != self.buf.dims {
            return Err(result.err(format_args!(
                "aliases {} but has shape {:?}, not {:?}",
                self.name, result.buf.dims, self.buf.dims
            )));
        }
        let (src, len) = self.raw::<T>()?;
        let (dst, _) = result.raw::<T>()?;
        if src != dst && len > 0 {
            // SAFETY: both regions hold `len` elements (same dtype and shape,
            // validated pointers); `copy` tolerates overlap.
            unsafe { std::ptr::copy(src, dst, len) };
        }
        Ok(())
    }

    /// [`Operand::copy_to`], then `result` as a writable slice. With several
    /// aliases in one call, do every `copy_to` first instead.
    ///
    /// # Safety
    ///
    /// As [`Operand::copy_to`], and `result` must stay exclusively ours for
    /// `'a` (the operand is not used again: it may be the same memory).
    pub unsafe fn alias_into<T: Elem>(
        &self,
        result: &Operand<'a>,
    ) -> Result<&'a mut [T], HandlerError> {
        // SAFETY: forwarded from the caller.
        unsafe {
            self.copy_to::<T>(result)?;
            result.slice_mut()
        }
    }
}

/// Per-call context: the library and the target name for messages.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub lib: &'a LapackLibrary,
    pub target: &'a str,
    /// What one flop of the target's element type costs relative to an f64
    /// flop (`LapackScalar::FLOP_COST`); [`Ctx::for_each`] scales estimates by it.
    pub flop_cost: f64,
}

impl Ctx<'_> {
    /// `v` as a LAPACK integer, or an `INVALID_ARGUMENT` naming `what`.
    pub fn int(&self, what: &str, v: usize) -> Result<i32, HandlerError> {
        i32::try_from(v).map_err(|_| {
            HandlerError::invalid_argument(format!(
                "{}: {what} = {v} does not fit LAPACK's 32-bit integer",
                self.target
            ))
        })
    }

    /// The LWORK a workspace query returned, once it fits LAPACK's
    /// integer (else an `INVALID_ARGUMENT`, as [`Ctx::int`]).
    pub fn lwork(&self, lwork: usize) -> Result<usize, HandlerError> {
        self.int("lwork", lwork)?;
        Ok(lwork)
    }

    /// The order `n` as a LAPACK integer, or `None` when it is 0: then
    /// there is nothing to compute, and every batch element's `info` is 0.
    pub fn order(&self, n: usize, info: &mut [i32]) -> Result<Option<i32>, HandlerError> {
        if n == 0 {
            info.fill(0);
            return Ok(None);
        }
        self.int("n", n).map(Some)
    }

    /// Runs `body(workspace, b)` for every batch element `b < batch`, in
    /// parallel over rayon's pool when the batch is worth it, each worker
    /// with its own workspace from `init`; `flops` is the estimated cost of
    /// one element, in flops of the target's element type (scaled here by
    /// [`Ctx::flop_cost`]). OpenBLAS threads follow [`LapackLibrary::run`].
    pub fn for_each<W>(
        &self,
        batch: usize,
        flops: f64,
        init: impl Fn() -> W + Sync + Send,
        body: impl Fn(&mut W, usize) + Sync + Send,
    ) {
        let flops = flops * self.flop_cost;
        let total = flops * batch as f64;
        self.lib.run(total, batch == 1, || {
            for_each_batch(batch, flops, init, body)
        })
    }

    /// [`Ctx::for_each`] on the pieces of each batch element: runs
    /// `body(workspace, pieces of b)` for every batch element `b < batch`.
    pub fn for_each_element<W, P: Pieces>(
        &self,
        batch: usize,
        flops: f64,
        init: impl Fn() -> W + Sync + Send,
        pieces: P,
        body: impl Fn(&mut W, P::Piece) + Sync + Send,
    ) {
        self.for_each(batch, flops, init, |w, b| {
            // SAFETY: `for_each` hands each batch index to one worker only.
            body(w, unsafe { pieces.get(b) })
        })
    }
}

/// Runs `body(workspace, b)` for every `b < batch`, over rayon's pool when
/// the estimated total (`flops` per element) is worth it, each worker with
/// its own workspace from `init`.
pub(crate) fn for_each_batch<W>(
    batch: usize,
    flops: f64,
    init: impl Fn() -> W + Sync + Send,
    body: impl Fn(&mut W, usize) + Sync + Send,
) {
    let parallel =
        batch > 1 && flops * batch as f64 >= PARALLEL_FLOPS && rayon::current_num_threads() > 1;
    if parallel {
        (0..batch)
            .into_par_iter()
            .for_each_init(&init, |w, b| body(w, b));
    } else {
        let mut w = init();
        (0..batch).for_each(|b| body(&mut w, b));
    }
}

/// Whether the largest magnitude among `values` is 0 or in `[low, high]`
/// (false as soon as one is NaN or above `high`): the test LAPACK's drivers
/// make before they scale a matrix.
pub(crate) fn norm_within<'a, T: RealScalar>(
    values: impl IntoIterator<Item = &'a T>,
    low: T,
    high: T,
) -> bool {
    let mut norm = T::ZERO;
    for x in values {
        let x = x.abs();
        if x.is_nan() || x > high {
            return false;
        }
        norm = norm.max(x);
    }
    norm == T::ZERO || norm >= low
}

/// Total estimated flops from which a batch is spread over rayon (jaxlib uses
/// about 2·10⁵ for its thread pool).
pub(crate) const PARALLEL_FLOPS: f64 = 2.0e5;

/// Disjoint per-batch-element pieces of one buffer, handed out by index to
/// the workers of [`Ctx::for_each`].
pub(crate) struct Batched<'a, T> {
    ptr: *mut T,
    stride: usize,
    count: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: a `Batched` is a `&mut [T]` split into pieces; sending or sharing
// it is sound when `T: Send`, and `get`'s contract keeps pieces disjoint.
unsafe impl<T: Send> Send for Batched<'_, T> {}
// SAFETY: as above; shared access only hands out pieces under `get`'s contract.
unsafe impl<T: Send> Sync for Batched<'_, T> {}

impl<'a, T> Batched<'a, T> {
    /// Splits `slice` into `count` pieces of `stride` elements.
    ///
    /// # Panics
    ///
    /// If `slice.len() != stride * count` (a bug in the caller's checks).
    pub fn new(slice: &'a mut [T], stride: usize, count: usize) -> Self {
        assert_eq!(
            Some(slice.len()),
            stride.checked_mul(count),
            "batched buffer size"
        );
        Batched {
            ptr: slice.as_mut_ptr(),
            stride,
            count,
            _borrow: PhantomData,
        }
    }

    /// Piece `b`.
    ///
    /// # Safety
    ///
    /// No other reference to piece `b` may be alive while the returned one
    /// is ([`Ctx::for_each`] hands each index to exactly one worker).
    ///
    /// # Panics
    ///
    /// If `b >= count`.
    pub unsafe fn get(&self, b: usize) -> &'a mut [T] {
        assert!(b < self.count, "batch index {b} out of {}", self.count);
        // SAFETY: `b < count`, so the piece lies inside the original slice;
        // exclusivity of piece `b` is the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(b * self.stride), self.stride) }
    }

    /// Pieces `first..first + len`, contiguous (clipped to the batch).
    ///
    /// # Safety
    ///
    /// No other reference to any of these pieces may be alive while the
    /// returned one is (each range handed to exactly one worker).
    ///
    /// # Panics
    ///
    /// If `first >= count`.
    pub unsafe fn get_range(&self, first: usize, len: usize) -> &'a mut [T] {
        assert!(
            first < self.count,
            "batch index {first} out of {}",
            self.count
        );
        let len = len.min(self.count - first);
        // SAFETY: pieces first..first+len lie inside the original slice
        // (clipped above); exclusivity is the caller's contract.
        unsafe {
            std::slice::from_raw_parts_mut(self.ptr.add(first * self.stride), len * self.stride)
        }
    }
}

/// Read-only piece `b` of a batch with `stride` elements per element.
pub(crate) fn piece<T>(s: &[T], stride: usize, b: usize) -> &[T] {
    &s[b * stride..(b + 1) * stride]
}

/// Per-batch-element pieces of a read-only buffer, as [`piece`] cuts them.
#[derive(Clone, Copy)]
pub(crate) struct Shared<'a, T> {
    slice: &'a [T],
    stride: usize,
}

impl<'a, T> Shared<'a, T> {
    /// `slice` in pieces of `stride` elements.
    pub fn new(slice: &'a [T], stride: usize) -> Self {
        Shared { slice, stride }
    }
}

/// Buffers split per batch element, as [`Ctx::for_each_element`] hands
/// them out: a [`Batched`], a [`Shared`], or a tuple of them (whose piece
/// is the tuple of their pieces).
pub(crate) trait Pieces: Sync {
    /// The pieces of one batch element.
    type Piece;

    /// The pieces of batch element `b`.
    ///
    /// # Safety
    ///
    /// As [`Batched::get`]: no other reference to a mutable piece `b` may
    /// be alive while the returned one is.
    unsafe fn get(&self, b: usize) -> Self::Piece;
}

impl<'a, T: Send> Pieces for Batched<'a, T> {
    type Piece = &'a mut [T];

    unsafe fn get(&self, b: usize) -> &'a mut [T] {
        // SAFETY: forwarded from the caller.
        unsafe { Batched::get(self, b) }
    }
}

impl<'a, T: Sync> Pieces for Shared<'a, T> {
    type Piece = &'a [T];

    unsafe fn get(&self, b: usize) -> &'a [T] {
        piece(self.slice, self.stride, b)
    }
}

/// [`Pieces`] for a tuple of pieces.
macro_rules! tuple_pieces {
    ($($p:ident),+) => {
        impl<$($p: Pieces),+> Pieces for ($($p,)+) {
            type Piece = ($($p::Piece,)+);

            #[expect(non_snake_case, reason = "one binding per type parameter")]
            unsafe fn get(&self, b: usize) -> Self::Piece {
                let ($($p,)+) = self;
                // SAFETY: forwarded from the caller, for each buffer.
                unsafe { ($($p.get(b),)+) }
            }
        }
    };
}
tuple_pieces!(A, B);
tuple_pieces!(A, B, C);
tuple_pieces!(A, B, C, D);
tuple_pieces!(A, B, C, D, E);
tuple_pieces!(A, B, C, D, E, F);

/// Runs a LAPACK workspace query (`query` passes its argument as WORK with
/// LWORK = −1) and returns the optimal size, at least 1.
pub(crate) fn workspace<T: crate::scalar::LapackScalar>(
    query: impl FnOnce(&mut T) -> i32,
) -> usize {
    let mut w = T::default();
    let _info = query(&mut w);
    w.work_size().max(1)
}

/// Stand-ins for the arrays of a workspace query. LAPACK only writes the
/// first element of WORK, RWORK and IWORK during a query (`cgeev` passes its
/// RWORK down to `ctrevc3`, which does write `RWORK(1)`), so each pointer
/// gets a separate small array rather than NULL.
pub(crate) struct QueryArrays<T: crate::scalar::LapackScalar> {
    t: [[T; 2]; 6],
    r: [[T::Real; 2]; 3],
    i: [[i32; 2]; 3],
    /// How many stand-ins of `t`, `r` and `i` are handed out.
    used: [usize; 3],
}

impl<T: crate::scalar::LapackScalar> QueryArrays<T> {
    /// Zeroed arrays.
    pub fn new() -> Self {
        QueryArrays {
            t: [[T::default(); 2]; 6],
            r: [[T::Real::default(); 2]; 3],
            i: [[0; 2]; 3],
            used: [0; 3],
        }
    }
    /// The index of the next stand-in of kind `kind` (0 `t`, 1 `r`, 2 `i`).
    fn next(&mut self, kind: usize) -> usize {
        self.used[kind] += 1;
        self.used[kind] - 1
    }
    /// The next stand-in (of 6) for an array of `T`.
    pub fn t(&mut self) -> *mut T {
        let k = self.next(0);
        self.t[k].as_mut_ptr()
    }
    /// The next stand-in (of 3) for an array of reals.
    pub fn r(&mut self) -> *mut T::Real {
        let k = self.next(1);
        self.r[k].as_mut_ptr()
    }
    /// The next stand-in (of 3) for an integer array.
    pub fn i(&mut self) -> *mut i32 {
        let k = self.next(2);
        self.i[k].as_mut_ptr()
    }
}
