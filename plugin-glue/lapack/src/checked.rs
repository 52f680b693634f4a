//! LAPACK routines on slices: one safe function per routine, which checks
//! each slice's length against the dims and leading dimensions it is called
//! with, then makes the FFI call. The families above call these and hold
//! no `unsafe` for LAPACK.
//!
//! A failed check is a bug in the caller's shape checks, not bad input (the
//! handlers validate shapes first), so it panics, and the panic becomes the
//! call's error; LAPACK is never called with a slice too short.
//!
//! The workspace queries (`*_lwork`) make LAPACK's LWORK = −1 call with the
//! same dims and return the optimal size, at least 1.

use crate::ffi::lapack_int;

mod eigen;
mod factor;
mod svd;

pub(crate) use eigen::*;
pub(crate) use factor::*;
pub(crate) use svd::*;

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

/// `s`, or `dummy` when `s` is empty: LAPACK wants a valid pointer for an
/// array it does not reference at these sizes.
fn or_dummy<'a, T>(s: &'a mut [T], dummy: &'a mut [T; 1]) -> &'a mut [T] {
    if s.is_empty() { dummy } else { s }
}

/// LWORK for `work`: its length, at most `i32::MAX`; panics when empty.
fn lwork_of<T>(routine: &str, work: &[T]) -> lapack_int {
    need(routine, "work", work.len(), 1);
    lapack_int::try_from(work.len()).unwrap_or(lapack_int::MAX)
}
