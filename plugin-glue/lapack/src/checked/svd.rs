//! The singular value decompositions: `?gesdd`, `?gesvd`, and the steps
//! of the split `?gesdd` (`?gebrd`, `?bdsdc`, `?ormbr`).

#![expect(
    clippy::too_many_arguments,
    reason = "each function mirrors its LAPACK routine"
)]

use super::{array, complex_rwork, len, matrix, need_matrix, or_dummy, work_array};
use crate::ffi::{LapackSymbols, lapack_int};
use crate::scalar::{LapackScalar, RealLapack};

lwork_query! {
    /// The optimal LWORK of [`gesdd`] for these dims.
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
fn svd_vectors(job: u8, m: lapack_int, n: lapack_int) -> (lapack_int, lapack_int) {
    match job {
        b'A' => (m, n),
        b'S' => (m.min(n), m.min(n)),
        b'N' => (0, 0),
        other => panic!("svd: job {} is not one of 'A', 'S', 'N'", char::from(other)),
    }
}

/// `?gesdd` on the m×n `a` (`lda`, destroyed): the singular values into
/// `s` (min(m,n)) and, as `jobz` asks ('A', 'S'; none for 'N'), U into `u`
/// (`ldu`) and Vᵀ into `vt` (`ldvt`); LWORK is `work.len()`, `rwork` holds
/// [`gesdd_lrwork`] reals (complex types) and `iwork` 8·min(m,n). Returns
/// INFO.
pub(crate) fn gesdd<T: LapackScalar>(
    l: &LapackSymbols,
    jobz: u8,
    m: lapack_int,
    n: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    s: &mut [T::Real],
    u: &mut [T],
    ldu: lapack_int,
    vt: &mut [T],
    ldvt: lapack_int,
    work: &mut [T],
    rwork: &mut [T::Real],
    iwork: &mut [lapack_int],
) -> lapack_int {
    let (mu, nu) = (len("gesdd", "m", m), len("gesdd", "n", n));
    let k = mu.min(nu);
    let (ucols, vrows) = svd_vectors(jobz, m, n);
    let a = matrix("gesdd", "a", a, m, n, lda);
    let s = array("gesdd", "s", s, k);
    if jobz != b'N' {
        need_matrix("gesdd", "u", u.len(), m, ucols, ldu);
        need_matrix("gesdd", "vt", vt.len(), vrows, n, ldvt);
    }
    let (work, lwork) = work_array("gesdd", work);
    let rwork = array("gesdd", "rwork", rwork, gesdd_lrwork::<T>(jobz, mu, nu));
    let iwork = array("gesdd", "iwork", iwork, 8 * k);
    let (mut du, mut dvt) = ([T::default()], [T::default()]);
    let (u, vt) = (or_dummy(u, &mut du), or_dummy(vt, &mut dvt));
    // SAFETY: `a` is m×n at `lda`, `s` holds min(m,n), `u` and `vt` the
    // vectors `jobz` asks for at `ldu` and `ldvt` (valid dummies when empty:
    // 'N', where LAPACK never touches them), `work` LWORK, `rwork` and
    // `iwork` what LAPACK needs (checked).
    unsafe {
        T::gesdd(
            l, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, iwork,
        )
    }
}

lwork_query! {
    /// The optimal LWORK of [`gesvd`] for these dims.
    fn gesvd_lwork<T: LapackScalar>(l, job: u8, m, n, lda, ldu, ldvt)
        |q, w| T::gesvd(l, job, m, n, q.t(0), lda, q.r(0), q.t(1), ldu, q.t(2), ldvt, w, -1,
            q.r(1));
}

/// `?gesvd` with JOBU = JOBVT = `job` on the m×n `a` (`lda`, destroyed):
/// the singular values into `s` (min(m,n)) and, as `job` asks ('A', 'S';
/// none for 'N'), U into `u` (`ldu`) and Vᵀ into `vt` (`ldvt`); LWORK is
/// `work.len()` and `rwork` holds 5·min(m,n) reals (complex types).
/// Returns INFO.
pub(crate) fn gesvd<T: LapackScalar>(
    l: &LapackSymbols,
    job: u8,
    m: lapack_int,
    n: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    s: &mut [T::Real],
    u: &mut [T],
    ldu: lapack_int,
    vt: &mut [T],
    ldvt: lapack_int,
    work: &mut [T],
    rwork: &mut [T::Real],
) -> lapack_int {
    let k = len("gesvd", "m", m.min(n));
    let (ucols, vrows) = svd_vectors(job, m, n);
    let a = matrix("gesvd", "a", a, m, n, lda);
    let s = array("gesvd", "s", s, k);
    if job != b'N' {
        need_matrix("gesvd", "u", u.len(), m, ucols, ldu);
        need_matrix("gesvd", "vt", vt.len(), vrows, n, ldvt);
    }
    let (work, lwork) = work_array("gesvd", work);
    let rwork = complex_rwork::<T>("gesvd", rwork, 5 * k);
    let (mut du, mut dvt) = ([T::default()], [T::default()]);
    let (u, vt) = (or_dummy(u, &mut du), or_dummy(vt, &mut dvt));
    // SAFETY: `a` is m×n at `lda`, `s` holds min(m,n), `u` and `vt` the
    // vectors `job` asks for at `ldu` and `ldvt` (valid dummies when empty:
    // 'N', where LAPACK never touches them), `work` LWORK and `rwork`
    // 5·min(m,n) for the complex types (checked).
    unsafe {
        T::gesvd(
            l, job, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork,
        )
    }
}

lwork_query! {
    /// The optimal LWORK of [`gebrd`] for these dims.
    fn gebrd_lwork<T: RealLapack>(l, m, n, lda)
        |q, w| T::gebrd(l, m, n, q.t(0), lda, q.t(1), q.t(2), q.t(3), q.t(4), w, -1);
}

/// `?gebrd` on the m×n `a` (`lda`): the bidiagonal's diagonal into `d`
/// (min(m,n)) and off-diagonal into `e` (min(m,n) − 1), the scalars of Q
/// and P into `tauq` and `taup` (min(m,n) each); LWORK is `work.len()`.
/// Returns INFO.
pub(crate) fn gebrd<T: RealLapack>(
    l: &LapackSymbols,
    m: lapack_int,
    n: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    d: &mut [T],
    e: &mut [T],
    tauq: &mut [T],
    taup: &mut [T],
    work: &mut [T],
) -> lapack_int {
    let k = len("gebrd", "m", m.min(n));
    let a = matrix("gebrd", "a", a, m, n, lda);
    let d = array("gebrd", "d", d, k);
    let e = array("gebrd", "e", e, k.saturating_sub(1));
    let tauq = array("gebrd", "tauq", tauq, k);
    let taup = array("gebrd", "taup", taup, k);
    let (work, lwork) = work_array("gebrd", work);
    // SAFETY: `a` is m×n at `lda`, `d`, `tauq` and `taup` hold min(m,n),
    // `e` one fewer, and `work` LWORK (checked).
    unsafe { T::gebrd(l, m, n, a, lda, d, e, tauq, taup, work, lwork) }
}

/// `?bdsdc` with UPLO = 'U', COMPQ = 'I': the SVD of the n×n upper
/// bidiagonal matrix with diagonal `d` (n, singular values out) and
/// superdiagonal `e` (n−1), singular vectors into `u` and `vt` (n×n at
/// `ldu`, `ldvt`); `work` holds 3n² + 4n and `iwork` 8n. Returns INFO.
pub(crate) fn bdsdc<T: RealLapack>(
    l: &LapackSymbols,
    n: lapack_int,
    d: &mut [T],
    e: &mut [T],
    u: &mut [T],
    ldu: lapack_int,
    vt: &mut [T],
    ldvt: lapack_int,
    work: &mut [T],
    iwork: &mut [lapack_int],
) -> lapack_int {
    let nu = len("bdsdc", "n", n);
    let d = array("bdsdc", "d", d, nu);
    let e = array("bdsdc", "e", e, nu.saturating_sub(1));
    let u = matrix("bdsdc", "u", u, n, n, ldu);
    let vt = matrix("bdsdc", "vt", vt, n, n, ldvt);
    let work = array("bdsdc", "work", work, 3 * nu * nu + 4 * nu);
    let iwork = array("bdsdc", "iwork", iwork, 8 * nu);
    // SAFETY: `d` holds n, `e` n−1, `u` and `vt` are n×n at `ldu` and
    // `ldvt`, `work` 3n² + 4n and `iwork` 8n (checked).
    unsafe { T::bdsdc(l, n, d, e, u, ldu, vt, ldvt, work, iwork) }
}

/// The rows and columns of `?gebrd`'s reflectors that `?ormbr` reads for
/// `vect` ('Q' or 'P'), Q or P being of order `nq`, from k columns or rows.
fn ormbr_reflectors(vect: u8, nq: lapack_int, k: lapack_int) -> (lapack_int, lapack_int) {
    if vect == b'Q' {
        (nq, nq.min(k))
    } else {
        (nq.min(k), nq)
    }
}

lwork_query! {
    /// The optimal LWORK of [`ormbr`] for these dims.
    fn ormbr_lwork<T: RealLapack>(l, vect: u8, side: u8, trans: u8, m, n, k, lda, ldc)
        |q, w| T::ormbr(l, vect, side, trans, m, n, k, q.t(0), lda, q.t(1), q.t(2), ldc, w, -1);
}

/// `?ormbr`: applies `?gebrd`'s Q (`vect` 'Q') or P ('P'), from the
/// reflectors in `a` (`lda`) and `tau` (min(nq,k)), to the m×n `c` (`ldc`)
/// from `side`, transposed with `trans` 'T'; LWORK is `work.len()`.
/// Returns INFO.
pub(crate) fn ormbr<T: RealLapack>(
    l: &LapackSymbols,
    vect: u8,
    side: u8,
    trans: u8,
    m: lapack_int,
    n: lapack_int,
    k: lapack_int,
    a: &[T],
    lda: lapack_int,
    tau: &[T],
    c: &mut [T],
    ldc: lapack_int,
    work: &mut [T],
) -> lapack_int {
    let nq = if side == b'L' { m } else { n };
    let (rows, cols) = ormbr_reflectors(vect, nq, k);
    let a = matrix("ormbr", "a", a, rows, cols, lda);
    let tau = array("ormbr", "tau", tau, len("ormbr", "k", nq.min(k)));
    let c = matrix("ormbr", "c", c, m, n, ldc);
    let (work, lwork) = work_array("ormbr", work);
    // SAFETY: `a` holds the reflectors `vect` names at `lda`, `tau`
    // min(nq,k) scalars, `c` is m×n at `ldc` and `work` LWORK (checked).
    unsafe {
        T::ormbr(
            l, vect, side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork,
        )
    }
}
