//! The eigenproblems: `?gehrd`, `?sytrd`/`?hetrd`, `?syevd`/`?heevd`,
//! `?geev`, `?gees`, and the steps of the split `?syevd` (`?stedc`,
//! `?laed1`, `?ormtr`).

use super::{int_work_size, need_matrix, or_dummy, query_lwork};
use crate::ffi::{LapackSymbols, lapack_int};
use crate::scalar::{ComplexLapack, LapackScalar, RealLapack, RealScalar};

lwork_query! {
    /// The optimal LWORK of [`gehrd`](super::gehrd) for these dims.
    fn gehrd_lwork<T: LapackScalar>(l, n, ilo, ihi, lda)
        |q, w| T::gehrd(l, n, ilo, ihi, q.t(0), lda, q.t(1), w, -1);
}

lwork_query! {
    /// The optimal LWORK of [`sytrd`](super::sytrd) for these dims.
    fn sytrd_lwork<T: LapackScalar>(l, uplo: u8, n, lda)
        |q, w| T::sytrd(l, uplo, n, q.t(0), lda, q.r(0), q.r(1), q.t(1), w, -1);
}

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
            q.t(0),
            lda,
            q.r(0),
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

lwork_query! {
    /// The optimal LWORK of [`geev_real`](super::geev_real) for these dims.
    fn geev_real_lwork<T: RealLapack>(l, jobvl: u8, jobvr: u8, n, lda, ldvl, ldvr)
        |q, w| T::geev(l, jobvl, jobvr, n, q.t(0), lda, q.t(1), q.t(2), q.t(3), ldvl, q.t(4), ldvr,
            w, -1);
}

lwork_query! {
    /// The optimal LWORK of [`geev_complex`](super::geev_complex) for these dims.
    fn geev_complex_lwork<T: ComplexLapack>(l, jobvl: u8, jobvr: u8, n, lda, ldvl, ldvr)
        |q, w| T::geev(l, jobvl, jobvr, n, q.t(0), lda, q.t(1), q.t(2), ldvl, q.t(3), ldvr, w, -1,
            q.r(0));
}

lwork_query! {
    /// The optimal LWORK of [`gees_real`](super::gees_real) for these dims.
    fn gees_real_lwork<T: RealLapack>(l, jobvs: u8, n, lda, ldvs)
        |q, w| T::gees(l, jobvs, n, q.t(0), lda, q.i(0), q.t(1), q.t(2), q.t(3), ldvs, w, -1);
}

lwork_query! {
    /// The optimal LWORK of [`gees_complex`](super::gees_complex) for these dims.
    fn gees_complex_lwork<T: ComplexLapack>(l, jobvs: u8, n, lda, ldvs)
        |q, w| T::gees(l, jobvs, n, q.t(0), lda, q.i(0), q.t(1), q.t(3), ldvs, w, -1, q.r(0));
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
        T::stedc(l, n, q.t(0), q.t(1), q.t(2), ldz, w, -1, &mut qiw, -1)
    });
    (lwork, int_work_size(qiw))
}

lwork_query! {
    /// The optimal LWORK of [`ormtr`](super::ormtr) for these dims.
    fn ormtr_lwork<T: RealLapack>(l, uplo: u8, m, n, lda, ldc)
        |q, w| T::ormtr(l, uplo, m, n, q.t(0), lda, q.t(1), q.t(2), ldc, w, -1);
}
