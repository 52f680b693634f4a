//! The singular value decompositions: `?gesdd`, `?gesvd`, and the steps
//! of the split `?gesdd` (`?gebrd`, `?bdsdc`, `?ormbr`).

#![expect(
    clippy::too_many_arguments,
    reason = "each function mirrors its LAPACK routine"
)]

use crate::ffi::lapack_int;
use crate::scalar::{LapackScalar, RealLapack};

lwork_query! {
    /// The optimal LWORK of [`gesdd`](super::gesdd) for these dims.
    fn gesdd_lwork<T: LapackScalar>(l, jobz: u8, m, n, lda, ldu, ldvt)
        |q, w| T::gesdd(l, jobz, m, n, q.t(0), lda, q.r(0), q.t(1), ldu, q.t(2), ldvt, w, -1,
            q.r(1), q.i(0));
}

/// The RWORK `?gesdd` needs: none for the real types (1), else 7k for
/// `jobz` 'N' and max(5k² + 5k, 2·max(m,n)·k + 2k² + k) otherwise
/// (k = min(m,n)).
pub(crate) fn gesdd_lrwork<T: LapackScalar>(jobz: u8, m: usize, n: usize) -> usize {
    let k = m.min(n);
    if !T::IS_COMPLEX {
        1
    } else if jobz == b'N' {
        7 * k
    } else {
        (5 * k * k + 5 * k).max(2 * m.max(n) * k + 2 * k * k + k)
    }
}

/// The singular vectors' shapes `?gesdd` (and `?gesvd` with `job` for
/// both) writes: (U's columns, Vᵀ's rows) for 'A', 'S' and 'N' (none).
pub(super) fn svd_vectors(job: u8, m: lapack_int, n: lapack_int) -> (lapack_int, lapack_int) {
    match job {
        b'A' => (m, n),
        b'S' => (m.min(n), m.min(n)),
        b'N' => (0, 0),
        other => panic!("svd: job {} is not one of 'A', 'S', 'N'", char::from(other)),
    }
}

lwork_query! {
    /// The optimal LWORK of [`gesvd`](super::gesvd) for these dims.
    fn gesvd_lwork<T: LapackScalar>(l, job: u8, m, n, lda, ldu, ldvt)
        |q, w| T::gesvd(l, job, m, n, q.t(0), lda, q.r(0), q.t(1), ldu, q.t(2), ldvt, w, -1,
            q.r(1));
}

lwork_query! {
    /// The optimal LWORK of [`gebrd`](super::gebrd) for these dims.
    fn gebrd_lwork<T: RealLapack>(l, m, n, lda)
        |q, w| T::gebrd(l, m, n, q.t(0), lda, q.t(1), q.t(2), q.t(3), q.t(4), w, -1);
}

/// The rows and columns of `?gebrd`'s reflectors that `?ormbr` reads for
/// `vect` ('Q' or 'P'), Q or P being of order `nq`, from k columns or rows.
pub(super) fn ormbr_reflectors(
    vect: u8,
    nq: lapack_int,
    k: lapack_int,
) -> (lapack_int, lapack_int) {
    if vect == b'Q' {
        (nq, nq.min(k))
    } else {
        (nq.min(k), nq)
    }
}

lwork_query! {
    /// The optimal LWORK of [`ormbr`](super::ormbr) for these dims.
    fn ormbr_lwork<T: RealLapack>(l, vect: u8, side: u8, trans: u8, m, n, k, lda, ldc)
        |q, w| T::ormbr(l, vect, side, trans, m, n, k, q.t(0), lda, q.t(1), q.t(2), ldc, w, -1);
}
