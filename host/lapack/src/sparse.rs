//! `cpu_csr_sparse_dense_ffi`: CSR matrix times a dense vector or matrix.
//!
//! Contract: docs/lapack-targets.md, "cpu_csr_sparse_dense_ffi". No LAPACK;
//! unlike jaxlib, every index is bounds-checked.

use std::ops::{Add, Mul};

use num_complex::Complex;
use rayon::prelude::*;

use crate::call::{Call, Operand, PARALLEL_FLOPS};
use crate::scalar::Elem;
use plugin_glue::dtype::DType;
use plugin_glue::handler::HandlerError;

/// A CSR value type: s32, s64, f32, f64, c64, c128.
pub(crate) trait Value: Elem + Default + Add<Output = Self> + Mul<Output = Self> {}
impl<T: Elem + Default + Add<Output = T> + Mul<Output = T>> Value for T {}

/// A CSR index type: s32 or s64.
pub(crate) trait Index: Elem {
    /// As `i64`.
    fn get(self) -> i64;
}
impl Index for i32 {
    fn get(self) -> i64 {
        i64::from(self)
    }
}
impl Index for i64 {
    fn get(self) -> i64 {
        self
    }
}

/// Why a CSR structure was rejected.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum CsrError {
    /// `indptr[row]..indptr[row+1]` is not an increasing range inside `0..=nnz`.
    Row {
        row: usize,
        start: i64,
        end: i64,
        nnz: usize,
    },
    /// A column index outside `0..cols`.
    Column {
        row: usize,
        position: usize,
        index: i64,
        cols: usize,
    },
}

impl std::fmt::Display for CsrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CsrError::Row {
                row,
                start,
                end,
                nnz,
            } => {
                write!(
                    f,
                    "indptr of row {row} is {start}..{end}, not an increasing range within 0..={nnz}"
                )
            }
            CsrError::Column {
                row,
                position,
                index,
                cols,
            } => {
                write!(
                    f,
                    "indices[{position}] = {index} (row {row}) is outside 0..{cols}"
                )
            }
        }
    }
}

/// `out[i,:] = Σ data[p]·rhs[indices[p],:]` over `p` in `indptr[i]..indptr[i+1]`;
/// `rhs` is `cols×c` and `out` `rows×c`, both row-major. Every row range
/// and column index is checked before it is used.
///
/// # Errors
///
/// The first malformed row range or out-of-range column index (the rows
/// before it may already be written; the call fails as a whole).
pub(crate) fn csr_matmul<T: Value, I: Index>(
    data: &[T],
    indptr: &[I],
    indices: &[I],
    rhs: &[T],
    cols: usize,
    c: usize,
    out: &mut [T],
) -> Result<(), CsrError> {
    let rows = indptr.len().saturating_sub(1);
    let nnz = data.len().min(indices.len());
    let row_range = |i: usize| -> Result<(usize, usize), CsrError> {
        let (start, end) = (indptr[i].get(), indptr[i + 1].get());
        match (usize::try_from(start), usize::try_from(end)) {
            (Ok(s), Ok(e)) if s <= e && e <= nnz => Ok((s, e)),
            _ => Err(CsrError::Row {
                row: i,
                start,
                end,
                nnz,
            }),
        }
    };
    let one_row = |i: usize, o: &mut [T]| -> Result<(), CsrError> {
        let (s, e) = row_range(i)?;
        o.fill(T::default());
        for p in s..e {
            let index = indices[p].get();
            let col =
                usize::try_from(index)
                    .ok()
                    .filter(|&j| j < cols)
                    .ok_or(CsrError::Column {
                        row: i,
                        position: p,
                        index,
                        cols,
                    })?;
            if c == 0 {
                continue;
            }
            let v = data[p];
            for (o, &r) in o.iter_mut().zip(&rhs[col * c..(col + 1) * c]) {
                *o = *o + v * r;
            }
        }
        Ok(())
    };
    if c == 0 {
        // Still validate the structure.
        return (0..rows).try_for_each(|i| one_row(i, &mut []));
    }
    if (nnz * c) as f64 >= PARALLEL_FLOPS && rows > 1 {
        out.par_chunks_mut(c)
            .enumerate()
            .try_for_each(|(i, o)| one_row(i, o))
    } else {
        out.chunks_mut(c)
            .enumerate()
            .try_for_each(|(i, o)| one_row(i, o))
    }
}

fn run_typed<T: Value, I: Index>(
    call: &Call<'_>,
    [data, indptr, indices, rhs]: [Operand<'_>; 4],
    out: Operand<'_>,
) -> Result<(), HandlerError> {
    let (_, nnz) = data.vector()?;
    data.expect(T::DTYPE, &[], &[nnz])?;
    indices.expect(I::DTYPE, &[], &[nnz])?;
    let (_, rows_plus_one) = indptr.vector()?;
    if rows_plus_one == 0 {
        return Err(indptr.err("must hold rows + 1 >= 1 entries, got 0"));
    }
    let rows = rows_plus_one - 1;
    indptr.expect(I::DTYPE, &[], &[rows_plus_one])?;
    let (cols, c, matrix) = match rhs.dims() {
        [cols] => (*cols, 1, false),
        [cols, c] => (
            *cols,
            usize::try_from(*c).map_err(|_| rhs.err("has a negative dimension"))?,
            true,
        ),
        d => return Err(rhs.err(format_args!("must have rank 1 or 2, got shape {d:?}"))),
    };
    let cols = usize::try_from(cols).map_err(|_| rhs.err("has a negative dimension"))?;
    rhs.expect(
        T::DTYPE,
        &[],
        &if matrix { vec![cols, c] } else { vec![cols] },
    )?;
    out.expect(
        T::DTYPE,
        &[],
        &if matrix { vec![rows, c] } else { vec![rows] },
    )?;
    // SAFETY: the operands are read-only and XLA does not alias them with
    // the result (the target declares no alias); `out` is ours.
    let (data, indptr, indices, rhs, out) = unsafe {
        (
            data.slice::<T>()?,
            indptr.slice::<I>()?,
            indices.slice::<I>()?,
            rhs.slice::<T>()?,
            out.slice_mut::<T>()?,
        )
    };
    csr_matmul(data, indptr, indices, rhs, cols, c, out).map_err(|e| call.err(e))
}

fn run_index<T: Value>(
    call: &Call<'_>,
    args: [Operand<'_>; 4],
    out: Operand<'_>,
) -> Result<(), HandlerError> {
    match args[1].buf.dtype {
        DType::S32 => run_typed::<T, i32>(call, args, out),
        DType::S64 => run_typed::<T, i64>(call, args, out),
        other => Err(call.err(format_args!(
            "unsupported index type {} (expected s32 or s64)",
            other.name()
        ))),
    }
}

/// The handler: operands `data`, `indptr`, `indices`, `rhs`; result `out`;
/// value and index types come from the buffers.
pub(crate) fn run(call: &Call<'_>) -> Result<(), HandlerError> {
    let (args, [out]) = call.operands(["data", "indptr", "indices", "rhs"], ["out"])?;
    let [data, indptr, indices, _] = args;
    let (value, index) = (data.buf.dtype, indptr.buf.dtype);
    if indices.buf.dtype != index {
        return Err(indices.err(format_args!(
            "has index type {} but indptr has {}",
            indices.buf.dtype.name(),
            index.name()
        )));
    }
    match value {
        DType::S32 => run_index::<i32>(call, args, out),
        DType::S64 => run_index::<i64>(call, args, out),
        DType::F32 => run_index::<f32>(call, args, out),
        DType::F64 => run_index::<f64>(call, args, out),
        DType::C64 => run_index::<Complex<f32>>(call, args, out),
        DType::C128 => run_index::<Complex<f64>>(call, args, out),
        other => Err(call.err(format_args!(
            "unsupported element type {} (expected s32, s64, f32, f64, c64 or c128)",
            other.name()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::{CsrError, csr_matmul};

    #[test]
    fn multiplies_and_sums_duplicates() {
        // [[1, 0, 2], [0, 0, 0], [3+4 (duplicate), 0, 0]]
        let (data, indptr, indices) = ([1.0, 2.0, 3.0, 4.0], [0i32, 2, 2, 4], [0i32, 2, 0, 0]);
        let rhs = [1.0, 10.0, 2.0, 20.0, 3.0, 30.0];
        let mut out = [f64::NAN; 6];
        csr_matmul(&data, &indptr, &indices, &rhs, 3, 2, &mut out).unwrap();
        assert_eq!(out, [7.0, 70.0, 0.0, 0.0, 7.0, 70.0]);
    }

    #[test]
    fn rejects_out_of_range_indices() {
        let mut out = [0.0; 1];
        let err = csr_matmul(&[1.0], &[0i64, 1], &[3i64], &[1.0, 2.0], 2, 1, &mut out).unwrap_err();
        assert_eq!(
            err,
            CsrError::Column {
                row: 0,
                position: 0,
                index: 3,
                cols: 2
            }
        );
        let err = csr_matmul(&[1.0], &[0i64, 2], &[0i64], &[1.0], 1, 1, &mut out).unwrap_err();
        assert_eq!(
            err,
            CsrError::Row {
                row: 0,
                start: 0,
                end: 2,
                nnz: 1
            }
        );
    }
}
