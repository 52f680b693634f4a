//! The eigenproblems' pieces the table does not write: the workspace
//! queries of `?syevd`/`?heevd` and `?stedc`, which return more than LWORK,
//! and the check of `?geev`'s and `?gees`' eigenvector arrays.

use super::{int_work_size, need_matrix, or_dummy, query_lwork};
use crate::ffi::{LapackSymbols, lapack_int};
use crate::scalar::{LapackScalar, RealLapack, RealScalar};

/// The optimal (LWORK, LRWORK, LIWORK) of [`syevd`](super::syevd) for these dims, each at
/// least 1 (LRWORK is the complex types' RWORK).
pub(crate) fn syevd_lwork<T: LapackScalar>(
    l: &LapackSymbols,
    jobz: u8,
    uplo: u8,
    n: lapack_int,
    lda: lapack_int,
) -> (usize, usize, usize) {
    let (mut qrw, mut qiw) = (<T::Real as RealScalar>::ZERO, 0);
    // SAFETY: a workspace query (LWORK = LRWORK = LIWORK = −1) reads only
    // the dims and writes the three optimal sizes; the stand-ins are valid
    // arrays.
    let lwork = query_lwork(|q, w| unsafe {
        T::syevd(
            l,
            jobz,
            uplo,
            n,
            q.t(),
            lda,
            q.r(),
            w,
            -1,
            &mut qrw,
            -1,
            &mut qiw,
            -1,
        )
    });
    (lwork, qrw.real_work_size().max(1), int_work_size(qiw))
}

/// The pointer to an eigenvector array `v` once it holds an n×n matrix at
/// `ldv` when `job` is 'V' (LAPACK references it only then; `ldv >= 1`
/// always), or to `dummy` when `v` is empty.
pub(super) fn vectors<T>(
    routine: &str,
    what: &str,
    job: u8,
    v: &mut [T],
    n: lapack_int,
    ldv: lapack_int,
    dummy: &mut [T; 1],
) -> *mut T {
    let order = if job == b'V' { n } else { 0 };
    need_matrix(routine, what, v.len(), order, order, ldv);
    or_dummy(v, dummy)
}

/// The optimal (LWORK, LIWORK) of [`stedc`](super::stedc) for these dims, at least 1
/// each.
pub(crate) fn stedc_lwork<T: RealLapack>(
    l: &LapackSymbols,
    n: lapack_int,
    ldz: lapack_int,
) -> (usize, usize) {
    let mut qiw = 0;
    // SAFETY: a workspace query (LWORK = LIWORK = −1) reads only the dims
    // and writes the two optimal sizes; the stand-ins are valid arrays.
    let lwork = query_lwork(|q, w| unsafe {
        T::stedc(l, n, q.t(), q.t(), q.t(), ldz, w, -1, &mut qiw, -1)
    });
    (lwork, int_work_size(qiw))
}
