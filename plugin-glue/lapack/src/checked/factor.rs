//! The factorisations, QR and solves: `?trsm`, `?getrf`, `?potrf`,
//! `?geqrf`, `?orgqr`/`?ungqr`, `?ormqr`/`?unmqr`, `?geqp3`, `?gtsv`.

#![expect(
    clippy::too_many_arguments,
    reason = "each function mirrors its LAPACK or BLAS routine"
)]

use super::{array, complex_rwork, len, matrix, need_matrix, or_dummy, work_array};
use crate::ffi::{LapackSymbols, lapack_int};
use crate::scalar::LapackScalar;

/// `?trsm` with `alpha = 1`: solves op(A)·X = B (`side` 'L') or
/// X·op(A) = B ('R') for the m×n `b` (`ldb`), A the k×k triangle of `a`
/// (`lda`, k = m or n).
pub(crate) fn trsm<T: LapackScalar>(
    l: &LapackSymbols,
    side: u8,
    uplo: u8,
    trans: u8,
    diag: u8,
    m: lapack_int,
    n: lapack_int,
    a: &[T],
    lda: lapack_int,
    b: &mut [T],
    ldb: lapack_int,
) {
    let k = if side == b'L' { m } else { n };
    let a = matrix("trsm", "a", a, k, k, lda);
    let b = matrix("trsm", "b", b, m, n, ldb);
    // SAFETY: `a` holds the k×k triangle and `b` the m×n matrix at their
    // leading dimensions (checked above), which is all `?trsm` references.
    unsafe { T::trsm(l, side, uplo, trans, diag, m, n, a, lda, b, ldb) }
}

/// `?getrf` on the m×n `a` (`lda`), pivots into `ipiv` (min(m,n)); returns
/// INFO.
pub(crate) fn getrf<T: LapackScalar>(
    l: &LapackSymbols,
    m: lapack_int,
    n: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    ipiv: &mut [lapack_int],
) -> lapack_int {
    let a = matrix("getrf", "a", a, m, n, lda);
    let ipiv = array("getrf", "ipiv", ipiv, len("getrf", "m", m.min(n)));
    // SAFETY: `a` is m×n at `lda` and `ipiv` holds min(m,n) (checked).
    unsafe { T::getrf(l, m, n, a, lda, ipiv) }
}

/// `?potrf` on the n×n `a` (`lda`, the `uplo` triangle); returns INFO.
pub(crate) fn potrf<T: LapackScalar>(
    l: &LapackSymbols,
    uplo: u8,
    n: lapack_int,
    a: &mut [T],
    lda: lapack_int,
) -> lapack_int {
    let a = matrix("potrf", "a", a, n, n, lda);
    // SAFETY: `a` is n×n at `lda` (checked).
    unsafe { T::potrf(l, uplo, n, a, lda) }
}

lwork_query! {
    /// The optimal LWORK of [`geqrf`] for these dims.
    fn geqrf_lwork<T: LapackScalar>(l, m, n, lda)
        |q, w| T::geqrf(l, m, n, q.t(0), lda, q.t(1), w, -1);
}

/// `?geqrf` on the m×n `a` (`lda`), min(m,n) scalars into `tau`, LWORK =
/// `work.len()`; returns INFO.
pub(crate) fn geqrf<T: LapackScalar>(
    l: &LapackSymbols,
    m: lapack_int,
    n: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    tau: &mut [T],
    work: &mut [T],
) -> lapack_int {
    let a = matrix("geqrf", "a", a, m, n, lda);
    let tau = array("geqrf", "tau", tau, len("geqrf", "m", m.min(n)));
    let (work, lwork) = work_array("geqrf", work);
    // SAFETY: `a` is m×n at `lda`, `tau` holds min(m,n) and `work` LWORK
    // (checked).
    unsafe { T::geqrf(l, m, n, a, lda, tau, work, lwork) }
}

lwork_query! {
    /// The optimal LWORK of [`orgqr`] for these dims.
    fn orgqr_lwork<T: LapackScalar>(l, m, n, k, lda)
        |q, w| T::orgqr(l, m, n, k, q.t(0), lda, q.t(5), w, -1);
}

/// `?orgqr` / `?ungqr`: the first n columns of Q = H(1)…H(k) over the m×n
/// `a` (`lda`), from k reflectors and `tau` (k), LWORK = `work.len()`;
/// returns INFO.
pub(crate) fn orgqr<T: LapackScalar>(
    l: &LapackSymbols,
    m: lapack_int,
    n: lapack_int,
    k: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    tau: &[T],
    work: &mut [T],
) -> lapack_int {
    let a = matrix("orgqr", "a", a, m, n, lda);
    let tau = array("orgqr", "tau", tau, len("orgqr", "k", k));
    let (work, lwork) = work_array("orgqr", work);
    // SAFETY: `a` is m×n at `lda`, `tau` holds k and `work` LWORK (checked).
    unsafe { T::orgqr(l, m, n, k, a, lda, tau, work, lwork) }
}

/// `?gtsv`: solves the n×n tridiagonal system with sub-diagonal `dl`,
/// diagonal `d` and super-diagonal `du` (n−1, n, n−1) for the n×nrhs `b`
/// (`ldb`), in place; returns INFO.
pub(crate) fn gtsv<T: LapackScalar>(
    l: &LapackSymbols,
    n: lapack_int,
    nrhs: lapack_int,
    dl: &mut [T],
    d: &mut [T],
    du: &mut [T],
    b: &mut [T],
    ldb: lapack_int,
) -> lapack_int {
    let nu = len("gtsv", "n", n);
    let dl = array("gtsv", "dl", dl, nu.saturating_sub(1));
    let d = array("gtsv", "d", d, nu);
    let du = array("gtsv", "du", du, nu.saturating_sub(1));
    need_matrix("gtsv", "b", b.len(), n, nrhs, ldb);
    let mut dummy = [T::default()];
    let b = or_dummy(b, &mut dummy);
    // SAFETY: `dl`, `d`, `du` hold n−1, n, n−1 and `b` is n×nrhs at `ldb`
    // (a valid dummy when nrhs = 0, where LAPACK reads no right-hand side)
    // (checked).
    unsafe { T::gtsv(l, n, nrhs, dl, d, du, b, ldb) }
}

lwork_query! {
    /// The optimal LWORK of [`ormqr`] for these dims.
    fn ormqr_lwork<T: LapackScalar>(l, side: u8, trans: u8, m, n, k, lda, ldc)
        |q, w| T::ormqr(l, side, trans, m, n, k, q.t(0), lda, q.t(1), q.t(2), ldc, w, -1);
}

/// `?ormqr` / `?unmqr`: applies Q = H(1)…H(k) (or its adjoint, `trans`)
/// from `side` to the m×n `c` (`ldc`), the k reflectors in the columns of
/// `a` (`lda`; written to and restored by LAPACK) and `tau` (k), LWORK =
/// `work.len()`; returns INFO.
pub(crate) fn ormqr<T: LapackScalar>(
    l: &LapackSymbols,
    side: u8,
    trans: u8,
    m: lapack_int,
    n: lapack_int,
    k: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    tau: &[T],
    c: &mut [T],
    ldc: lapack_int,
    work: &mut [T],
) -> lapack_int {
    let order = if side == b'L' { m } else { n };
    let a = matrix("ormqr", "a", a, order, k, lda);
    let tau = array("ormqr", "tau", tau, len("ormqr", "k", k));
    let c = matrix("ormqr", "c", c, m, n, ldc);
    let (work, lwork) = work_array("ormqr", work);
    // SAFETY: `a` holds k reflectors of the order of Q at `lda`, `tau` k
    // scalars, `c` is m×n at `ldc` and `work` LWORK (checked).
    unsafe { T::ormqr(l, side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork) }
}

lwork_query! {
    /// The optimal LWORK of [`geqp3`] for these dims.
    fn geqp3_lwork<T: LapackScalar>(l, m, n, lda)
        |q, w| T::geqp3(l, m, n, q.t(0), lda, q.i(0), q.t(1), w, -1, q.r(0));
}

/// `?geqp3` on the m×n `a` (`lda`) with the column pivots `jpvt` (n, in
/// and out), min(m,n) scalars into `tau`, LWORK = `work.len()` and, for
/// the complex types, `rwork` (2n reals; ignored for the real ones);
/// returns INFO.
pub(crate) fn geqp3<T: LapackScalar>(
    l: &LapackSymbols,
    m: lapack_int,
    n: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    jpvt: &mut [lapack_int],
    tau: &mut [T],
    work: &mut [T],
    rwork: &mut [T::Real],
) -> lapack_int {
    let nu = len("geqp3", "n", n);
    let a = matrix("geqp3", "a", a, m, n, lda);
    let jpvt = array("geqp3", "jpvt", jpvt, nu);
    let tau = array("geqp3", "tau", tau, len("geqp3", "m", m.min(n)));
    let (work, lwork) = work_array("geqp3", work);
    let rwork = complex_rwork::<T>("geqp3", rwork, 2 * nu);
    // SAFETY: `a` is m×n at `lda`, `jpvt` holds n, `tau` min(m,n), `work`
    // LWORK and `rwork` 2n reals for the complex types (checked; the real
    // ones take no RWORK).
    unsafe { T::geqp3(l, m, n, a, lda, jpvt, tau, work, lwork, rwork) }
}
