//! LAPACK routines on slices: one safe function per routine, which checks
//! each slice's length against the dims and leading dimensions it is called
//! with, then makes the FFI call. The families above call these and hold
//! no `unsafe` for LAPACK. The functions are written from the table of
//! [`lapack_routines!`](crate::ffi::lapack_routines), where each routine's
//! parameters stand once with the checks of its slices.
//!
//! A failed check is a bug in the caller's shape checks, not bad input (the
//! handlers validate shapes first), so it panics, and the panic becomes the
//! call's error; LAPACK is never called with a slice too short. Every
//! pointer LAPACK gets comes out of a check (`array`, `matrix`,
//! `work_array`, …), which hands it out only once the slice is long enough.
//!
//! The workspace queries ([`lwork`], also from the table) make LAPACK's
//! LWORK = −1 call with the same dims and return the optimal size, at
//! least 1.

#![expect(
    clippy::too_many_arguments,
    reason = "each function mirrors its LAPACK or BLAS routine"
)]

use crate::call::{QueryArrays, workspace};
use crate::ffi::lapack_int;
use crate::scalar::{LapackScalar, RealLapack, RealScalar};

mod eigen;
mod svd;

pub(crate) use eigen::*;
pub(crate) use svd::*;

use eigen::vectors;
use svd::{ormbr_reflectors, svd_vectors};

crate::ffi::lapack_routines!(checked);

/// The workspace queries, one for each safe function above with one
/// workspace, under its name: LAPACK's LWORK = −1 call with the same dims.
pub(crate) mod lwork {
    use super::query_lwork;
    use crate::scalar::{LapackScalar, RealLapack};

    crate::ffi::lapack_routines!(lwork);
}

/// `v` as a length; panics on a negative dimension.
fn len(routine: &str, what: &str, v: lapack_int) -> usize {
    usize::try_from(v).unwrap_or_else(|_| panic!("{routine}: {what} = {v} is negative"))
}

/// Panics unless `have >= need`.
fn need(routine: &str, what: &str, have: usize, need: usize) {
    assert!(
        have >= need,
        "{routine}: {what} holds {have} elements, needs {need}"
    );
}

/// Panics unless `have` holds a `rows × cols` column-major matrix with
/// leading dimension `ld` (`ld >= max(1, rows)`; the last column needs
/// only `rows` elements).
fn need_matrix(
    routine: &str,
    what: &str,
    have: usize,
    rows: lapack_int,
    cols: lapack_int,
    ld: lapack_int,
) {
    let (rows, cols, ld) = (
        len(routine, "rows", rows),
        len(routine, "columns", cols),
        len(routine, "leading dimension", ld),
    );
    assert!(
        ld >= rows.max(1),
        "{routine}: {what} has leading dimension {ld} for {rows} rows"
    );
    let elements = if cols == 0 || rows == 0 {
        0
    } else {
        ld * (cols - 1) + rows
    };
    need(routine, what, have, elements);
}

/// The pointer to `s`, or to `dummy` when `s` is empty: LAPACK wants a
/// valid pointer for an array it does not reference at these sizes.
fn or_dummy<T>(s: &mut [T], dummy: &mut [T; 1]) -> *mut T {
    let s: &mut [T] = if s.is_empty() { dummy } else { s };
    s.as_mut_ptr()
}

/// LWORK for `work`: its length, at most `i32::MAX`; panics when empty.
fn lwork_of<T>(routine: &str, work: &[T]) -> lapack_int {
    need(routine, "work", work.len(), 1);
    lapack_int::try_from(work.len()).unwrap_or(lapack_int::MAX)
}

/// A slice as LAPACK takes it: `&[T]`, which it only reads, as `*const T`
/// and `&mut [T]` as `*mut T`.
trait Array {
    /// The pointer type.
    type Ptr;
    /// The number of elements.
    fn elements(&self) -> usize;
    /// The pointer to the first element.
    fn ptr(self) -> Self::Ptr;
}

impl<T> Array for &[T] {
    type Ptr = *const T;
    fn elements(&self) -> usize {
        self.len()
    }
    fn ptr(self) -> *const T {
        self.as_ptr()
    }
}

impl<T> Array for &mut [T] {
    type Ptr = *mut T;
    fn elements(&self) -> usize {
        self.len()
    }
    fn ptr(self) -> *mut T {
        self.as_mut_ptr()
    }
}

/// The pointer to `a` once it holds `n` elements (see [`need`]).
fn array<A: Array>(routine: &str, what: &str, a: A, n: usize) -> A::Ptr {
    need(routine, what, a.elements(), n);
    a.ptr()
}

/// The pointer to `s` once it holds `n` elements, or to `dummy` when `s`
/// is empty (see [`or_dummy`]).
fn array_or_dummy<T>(
    routine: &str,
    what: &str,
    s: &mut [T],
    n: usize,
    dummy: &mut [T; 1],
) -> *mut T {
    need(routine, what, s.len(), n);
    or_dummy(s, dummy)
}

/// The pointer to `a` once it holds a `rows × cols` matrix at `ld` (see
/// [`need_matrix`]).
fn matrix<A: Array>(
    routine: &str,
    what: &str,
    a: A,
    rows: lapack_int,
    cols: lapack_int,
    ld: lapack_int,
) -> A::Ptr {
    need_matrix(routine, what, a.elements(), rows, cols, ld);
    a.ptr()
}

/// The pointer to a workspace and its length as LWORK (see [`lwork_of`]).
fn work_array<T>(routine: &str, work: &mut [T]) -> (*mut T, lapack_int) {
    let lwork = lwork_of(routine, work);
    (work.as_mut_ptr(), lwork)
}

/// The length of an RWORK of `n` reals, which only the complex types take:
/// `n` for them, a one-element stand-in for the real types.
pub(crate) fn rwork_len<T: LapackScalar>(n: usize) -> usize {
    if T::IS_COMPLEX { n } else { 1 }
}

/// A zeroed RWORK of `n` reals, as [`rwork_len`] sizes it.
pub(crate) fn rwork<T: LapackScalar>(n: usize) -> Vec<T::Real> {
    vec![<T::Real as RealScalar>::ZERO; rwork_len::<T>(n)]
}

/// The pointer to `rwork` once it holds the `n` reals of the complex
/// types' RWORK (1 for the real types, which take none).
fn complex_rwork<T: LapackScalar>(routine: &str, rwork: &mut [T::Real], n: usize) -> *mut T::Real {
    array(routine, "rwork", rwork, rwork_len::<T>(n))
}

/// The pointer to `wi` once it holds the `n` elements of an array only
/// the real types have (nothing for the complex types, which ignore it).
fn real_array<T: LapackScalar>(routine: &str, what: &str, wi: &mut [T], n: usize) -> *mut T {
    array(routine, what, wi, if T::IS_COMPLEX { 0 } else { n })
}

/// One routine's workspace query: `query` makes the call with LWORK = −1,
/// the stand-in arrays of `q` and `w` as WORK. Returns the optimal LWORK,
/// at least 1.
fn query_lwork<T: LapackScalar>(
    query: impl FnOnce(&mut QueryArrays<T>, &mut T) -> lapack_int,
) -> usize {
    let mut q = QueryArrays::new();
    workspace(|w| query(&mut q, w))
}

/// An integer workspace size LAPACK wrote (LIWORK), at least 1.
fn int_work_size(v: lapack_int) -> usize {
    usize::try_from(v).unwrap_or(0).max(1)
}
