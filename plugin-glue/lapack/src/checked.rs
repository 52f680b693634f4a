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

use crate::call::{QueryArrays, workspace};
use crate::ffi::{LapackSymbols, lapack_int};
use crate::scalar::{ComplexLapack, RealLapack, RealScalar, Scalar};

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

/// `?trsm` with `alpha = 1`: solves op(A)·X = B (`side` 'L') or
/// X·op(A) = B ('R') for the m×n `b` (`ldb`), A the k×k triangle of `a`
/// (`lda`, k = m or n).
#[expect(clippy::too_many_arguments, reason = "mirrors the BLAS routine")]
pub(crate) fn trsm<T: Scalar>(
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
    need_matrix("trsm", "a", a.len(), k, k, lda);
    need_matrix("trsm", "b", b.len(), m, n, ldb);
    // SAFETY: `a` holds the k×k triangle and `b` the m×n matrix at their
    // leading dimensions (checked above), which is all `?trsm` references.
    unsafe {
        T::trsm(
            l,
            side,
            uplo,
            trans,
            diag,
            m,
            n,
            a.as_ptr(),
            lda,
            b.as_mut_ptr(),
            ldb,
        )
    }
}

/// `?getrf` on the m×n `a` (`lda`), pivots into `ipiv` (min(m,n)); returns
/// INFO.
pub(crate) fn getrf<T: Scalar>(
    l: &LapackSymbols,
    m: lapack_int,
    n: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    ipiv: &mut [lapack_int],
) -> lapack_int {
    need_matrix("getrf", "a", a.len(), m, n, lda);
    need("getrf", "ipiv", ipiv.len(), len("getrf", "m", m.min(n)));
    // SAFETY: `a` is m×n at `lda` and `ipiv` holds min(m,n) (checked).
    unsafe { T::getrf(l, m, n, a.as_mut_ptr(), lda, ipiv.as_mut_ptr()) }
}

/// `?potrf` on the n×n `a` (`lda`, the `uplo` triangle); returns INFO.
pub(crate) fn potrf<T: Scalar>(
    l: &LapackSymbols,
    uplo: u8,
    n: lapack_int,
    a: &mut [T],
    lda: lapack_int,
) -> lapack_int {
    need_matrix("potrf", "a", a.len(), n, n, lda);
    // SAFETY: `a` is n×n at `lda` (checked).
    unsafe { T::potrf(l, uplo, n, a.as_mut_ptr(), lda) }
}

/// The optimal LWORK of [`geqrf`] for these dims.
pub(crate) fn geqrf_lwork<T: Scalar>(
    l: &LapackSymbols,
    m: lapack_int,
    n: lapack_int,
    lda: lapack_int,
) -> usize {
    let mut q = QueryArrays::<T>::new();
    // SAFETY: a workspace query (lwork = -1) reads only the dims and writes
    // the first element of WORK; the stand-ins are valid arrays.
    workspace(|w: &mut T| unsafe { T::geqrf(l, m, n, q.t(0), lda, q.t(1), w, -1) })
}

/// `?geqrf` on the m×n `a` (`lda`), min(m,n) scalars into `tau`, LWORK =
/// `work.len()`; returns INFO.
pub(crate) fn geqrf<T: Scalar>(
    l: &LapackSymbols,
    m: lapack_int,
    n: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    tau: &mut [T],
    work: &mut [T],
) -> lapack_int {
    need_matrix("geqrf", "a", a.len(), m, n, lda);
    need("geqrf", "tau", tau.len(), len("geqrf", "m", m.min(n)));
    let lwork = lwork_of("geqrf", work);
    // SAFETY: `a` is m×n at `lda`, `tau` holds min(m,n) and `work` LWORK
    // (checked).
    unsafe {
        T::geqrf(
            l,
            m,
            n,
            a.as_mut_ptr(),
            lda,
            tau.as_mut_ptr(),
            work.as_mut_ptr(),
            lwork,
        )
    }
}

/// The optimal LWORK of [`orgqr`] for these dims.
pub(crate) fn orgqr_lwork<T: Scalar>(
    l: &LapackSymbols,
    m: lapack_int,
    n: lapack_int,
    k: lapack_int,
    lda: lapack_int,
) -> usize {
    let mut q = QueryArrays::<T>::new();
    // SAFETY: a workspace query (lwork = -1) reads only the dims and writes
    // the first element of WORK; the stand-ins are valid arrays.
    workspace(|w: &mut T| unsafe { T::orgqr(l, m, n, k, q.t(0), lda, q.t(5), w, -1) })
}

/// `?orgqr` / `?ungqr`: the first n columns of Q = H(1)…H(k) over the m×n
/// `a` (`lda`), from k reflectors and `tau` (k), LWORK = `work.len()`;
/// returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn orgqr<T: Scalar>(
    l: &LapackSymbols,
    m: lapack_int,
    n: lapack_int,
    k: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    tau: &[T],
    work: &mut [T],
) -> lapack_int {
    need_matrix("orgqr", "a", a.len(), m, n, lda);
    need("orgqr", "tau", tau.len(), len("orgqr", "k", k));
    let lwork = lwork_of("orgqr", work);
    // SAFETY: `a` is m×n at `lda`, `tau` holds k and `work` LWORK (checked).
    unsafe {
        T::orgqr(
            l,
            m,
            n,
            k,
            a.as_mut_ptr(),
            lda,
            tau.as_ptr(),
            work.as_mut_ptr(),
            lwork,
        )
    }
}

/// The optimal LWORK of [`gehrd`] for these dims.
pub(crate) fn gehrd_lwork<T: Scalar>(
    l: &LapackSymbols,
    n: lapack_int,
    ilo: lapack_int,
    ihi: lapack_int,
    lda: lapack_int,
) -> usize {
    let mut q = QueryArrays::<T>::new();
    // SAFETY: a workspace query (lwork = -1) reads only the dims and writes
    // the first element of WORK; the stand-ins are valid arrays.
    workspace(|w: &mut T| unsafe { T::gehrd(l, n, ilo, ihi, q.t(0), lda, q.t(1), w, -1) })
}

/// `?gehrd` on the n×n `a` (`lda`), n−1 scalars into `tau` (none for
/// n = 1), LWORK = `work.len()`; returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn gehrd<T: Scalar>(
    l: &LapackSymbols,
    n: lapack_int,
    ilo: lapack_int,
    ihi: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    tau: &mut [T],
    work: &mut [T],
) -> lapack_int {
    need_matrix("gehrd", "a", a.len(), n, n, lda);
    need(
        "gehrd",
        "tau",
        tau.len(),
        len("gehrd", "n", n).saturating_sub(1),
    );
    let lwork = lwork_of("gehrd", work);
    let mut dummy = [T::default()];
    let tau = or_dummy(tau, &mut dummy);
    // SAFETY: `a` is n×n at `lda`, `tau` holds n−1 (a valid dummy when
    // n = 1, where LAPACK writes nothing) and `work` LWORK (checked).
    unsafe {
        T::gehrd(
            l,
            n,
            ilo,
            ihi,
            a.as_mut_ptr(),
            lda,
            tau.as_mut_ptr(),
            work.as_mut_ptr(),
            lwork,
        )
    }
}

/// The optimal LWORK of [`sytrd`] for these dims.
pub(crate) fn sytrd_lwork<T: Scalar>(
    l: &LapackSymbols,
    uplo: u8,
    n: lapack_int,
    lda: lapack_int,
) -> usize {
    let mut q = QueryArrays::<T>::new();
    // SAFETY: a workspace query (lwork = -1) reads only the dims and writes
    // the first element of WORK; the stand-ins are valid arrays.
    workspace(|w: &mut T| unsafe {
        T::sytrd(l, uplo, n, q.t(0), lda, q.r(0), q.r(1), q.t(1), w, -1)
    })
}

/// `?sytrd` / `?hetrd` on the n×n `a` (`lda`, the `uplo` triangle): the
/// diagonal into `d` (n), the off-diagonal into `e` and the scalars into
/// `tau` (n−1 each, none for n = 1), LWORK = `work.len()`; returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn sytrd<T: Scalar>(
    l: &LapackSymbols,
    uplo: u8,
    n: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    d: &mut [T::Real],
    e: &mut [T::Real],
    tau: &mut [T],
    work: &mut [T],
) -> lapack_int {
    let nu = len("sytrd", "n", n);
    need_matrix("sytrd", "a", a.len(), n, n, lda);
    need("sytrd", "d", d.len(), nu);
    need("sytrd", "e", e.len(), nu.saturating_sub(1));
    need("sytrd", "tau", tau.len(), nu.saturating_sub(1));
    let lwork = lwork_of("sytrd", work);
    let (mut de, mut dt) = ([<T::Real as Default>::default()], [T::default()]);
    let (e, tau) = (or_dummy(e, &mut de), or_dummy(tau, &mut dt));
    // SAFETY: `a` is n×n at `lda`, `d` holds n, `e` and `tau` n−1 (valid
    // dummies when n = 1, where LAPACK writes nothing to them) and `work`
    // LWORK (checked).
    unsafe {
        T::sytrd(
            l,
            uplo,
            n,
            a.as_mut_ptr(),
            lda,
            d.as_mut_ptr(),
            e.as_mut_ptr(),
            tau.as_mut_ptr(),
            work.as_mut_ptr(),
            lwork,
        )
    }
}

/// `?gtsv`: solves the n×n tridiagonal system with sub-diagonal `dl`,
/// diagonal `d` and super-diagonal `du` (n−1, n, n−1) for the n×nrhs `b`
/// (`ldb`), in place; returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn gtsv<T: Scalar>(
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
    need("gtsv", "dl", dl.len(), nu.saturating_sub(1));
    need("gtsv", "d", d.len(), nu);
    need("gtsv", "du", du.len(), nu.saturating_sub(1));
    need_matrix("gtsv", "b", b.len(), n, nrhs, ldb);
    let mut dummy = [T::default()];
    let b = or_dummy(b, &mut dummy);
    // SAFETY: `dl`, `d`, `du` hold n−1, n, n−1 and `b` is n×nrhs at `ldb`
    // (a valid dummy when nrhs = 0, where LAPACK reads no right-hand side)
    // (checked).
    unsafe {
        T::gtsv(
            l,
            n,
            nrhs,
            dl.as_mut_ptr(),
            d.as_mut_ptr(),
            du.as_mut_ptr(),
            b.as_mut_ptr(),
            ldb,
        )
    }
}

/// The optimal LWORK of [`ormqr`] for these dims.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn ormqr_lwork<T: Scalar>(
    l: &LapackSymbols,
    side: u8,
    trans: u8,
    m: lapack_int,
    n: lapack_int,
    k: lapack_int,
    lda: lapack_int,
    ldc: lapack_int,
) -> usize {
    let mut q = QueryArrays::<T>::new();
    // SAFETY: a workspace query (lwork = -1) reads only the dims and writes
    // the first element of WORK; the stand-ins are valid arrays.
    workspace(|w: &mut T| unsafe {
        T::ormqr(
            l,
            side,
            trans,
            m,
            n,
            k,
            q.t(0),
            lda,
            q.t(1),
            q.t(2),
            ldc,
            w,
            -1,
        )
    })
}

/// `?ormqr` / `?unmqr`: applies Q = H(1)…H(k) (or its adjoint, `trans`)
/// from `side` to the m×n `c` (`ldc`), the k reflectors in the columns of
/// `a` (`lda`; written to and restored by LAPACK) and `tau` (k), LWORK =
/// `work.len()`; returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn ormqr<T: Scalar>(
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
    need_matrix("ormqr", "a", a.len(), order, k, lda);
    need("ormqr", "tau", tau.len(), len("ormqr", "k", k));
    need_matrix("ormqr", "c", c.len(), m, n, ldc);
    let lwork = lwork_of("ormqr", work);
    // SAFETY: `a` holds k reflectors of the order of Q at `lda`, `tau` k
    // scalars, `c` is m×n at `ldc` and `work` LWORK (checked).
    unsafe {
        T::ormqr(
            l,
            side,
            trans,
            m,
            n,
            k,
            a.as_mut_ptr(),
            lda,
            tau.as_ptr(),
            c.as_mut_ptr(),
            ldc,
            work.as_mut_ptr(),
            lwork,
        )
    }
}

/// The optimal LWORK of [`geqp3`] for these dims.
pub(crate) fn geqp3_lwork<T: Scalar>(
    l: &LapackSymbols,
    m: lapack_int,
    n: lapack_int,
    lda: lapack_int,
) -> usize {
    let mut q = QueryArrays::<T>::new();
    // SAFETY: a workspace query (lwork = -1) reads only the dims and writes
    // the first element of WORK; the stand-ins are valid arrays.
    workspace(|w: &mut T| unsafe { T::geqp3(l, m, n, q.t(0), lda, q.i(0), q.t(1), w, -1, q.r(0)) })
}

/// `?geqp3` on the m×n `a` (`lda`) with the column pivots `jpvt` (n, in
/// and out), min(m,n) scalars into `tau`, LWORK = `work.len()` and, for
/// the complex types, `rwork` (2n reals; ignored for the real ones);
/// returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn geqp3<T: Scalar>(
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
    need_matrix("geqp3", "a", a.len(), m, n, lda);
    need("geqp3", "jpvt", jpvt.len(), nu);
    need("geqp3", "tau", tau.len(), len("geqp3", "m", m.min(n)));
    let lwork = lwork_of("geqp3", work);
    need(
        "geqp3",
        "rwork",
        rwork.len(),
        if T::IS_COMPLEX { 2 * nu } else { 1 },
    );
    // SAFETY: `a` is m×n at `lda`, `jpvt` holds n, `tau` min(m,n), `work`
    // LWORK and `rwork` 2n reals for the complex types (checked; the real
    // ones take no RWORK).
    unsafe {
        T::geqp3(
            l,
            m,
            n,
            a.as_mut_ptr(),
            lda,
            jpvt.as_mut_ptr(),
            tau.as_mut_ptr(),
            work.as_mut_ptr(),
            lwork,
            rwork.as_mut_ptr(),
        )
    }
}

/// The optimal (LWORK, LRWORK, LIWORK) of [`syevd`] for these dims, each at
/// least 1 (LRWORK is the complex types' RWORK).
pub(crate) fn syevd_lwork<T: Scalar>(
    l: &LapackSymbols,
    jobz: u8,
    uplo: u8,
    n: lapack_int,
    lda: lapack_int,
) -> (usize, usize, usize) {
    let mut q = QueryArrays::<T>::new();
    let (mut qw, mut qrw, mut qiw) = (T::default(), <T::Real as RealScalar>::ZERO, 0);
    // SAFETY: a workspace query (lwork = lrwork = liwork = -1) reads only
    // the dims and writes the three optimal sizes; the stand-ins are valid
    // arrays.
    unsafe {
        T::syevd(
            l,
            jobz,
            uplo,
            n,
            q.t(0),
            lda,
            q.r(0),
            &mut qw,
            -1,
            &mut qrw,
            -1,
            &mut qiw,
            -1,
        )
    };
    (
        qw.work_size().max(1),
        qrw.real_work_size().max(1),
        usize::try_from(qiw).unwrap_or(0).max(1),
    )
}

/// `?syevd` / `?heevd` on the n×n `a` (`lda`, the `uplo` triangle): the
/// eigenvalues into `w` (n) and, with `jobz` 'V', the eigenvectors over
/// `a`; LWORK, LRWORK (complex types; 1 for the real ones) and LIWORK are
/// the lengths of `work`, `rwork` and `iwork`. Returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn syevd<T: Scalar>(
    l: &LapackSymbols,
    jobz: u8,
    uplo: u8,
    n: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    w: &mut [T::Real],
    work: &mut [T],
    rwork: &mut [T::Real],
    iwork: &mut [lapack_int],
) -> lapack_int {
    need_matrix("syevd", "a", a.len(), n, n, lda);
    need("syevd", "w", w.len(), len("syevd", "n", n));
    let lwork = lwork_of("syevd", work);
    let lrwork = lwork_of("syevd", rwork);
    let liwork = lwork_of("syevd", iwork);
    // SAFETY: `a` is n×n at `lda`, `w` holds n, and `work`, `rwork` and
    // `iwork` the LWORK, LRWORK and LIWORK passed (checked).
    unsafe {
        T::syevd(
            l,
            jobz,
            uplo,
            n,
            a.as_mut_ptr(),
            lda,
            w.as_mut_ptr(),
            work.as_mut_ptr(),
            lwork,
            rwork.as_mut_ptr(),
            lrwork,
            iwork.as_mut_ptr(),
            liwork,
        )
    }
}

/// The optimal LWORK of [`gesdd`] for these dims.
pub(crate) fn gesdd_lwork<T: Scalar>(
    l: &LapackSymbols,
    jobz: u8,
    m: lapack_int,
    n: lapack_int,
    lda: lapack_int,
    ldu: lapack_int,
    ldvt: lapack_int,
) -> usize {
    let mut q = QueryArrays::<T>::new();
    // SAFETY: a workspace query (lwork = -1) reads only the dims and writes
    // the first element of WORK (and of RWORK and IWORK); the stand-ins
    // are valid arrays.
    workspace(|w: &mut T| unsafe {
        T::gesdd(
            l,
            jobz,
            m,
            n,
            q.t(0),
            lda,
            q.r(0),
            q.t(1),
            ldu,
            q.t(2),
            ldvt,
            w,
            -1,
            q.r(1),
            q.i(0),
        )
    })
}

/// The RWORK `?gesdd` needs: none for the real types (1), else 7k for
/// `jobz` 'N' and max(5k² + 5k, 2·max(m,n)·k + 2k² + k) otherwise
/// (k = min(m,n)).
pub(crate) fn gesdd_lrwork<T: Scalar>(jobz: u8, m: usize, n: usize) -> usize {
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
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn gesdd<T: Scalar>(
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
    need_matrix("gesdd", "a", a.len(), m, n, lda);
    need("gesdd", "s", s.len(), k);
    if jobz != b'N' {
        need_matrix("gesdd", "u", u.len(), m, ucols, ldu);
        need_matrix("gesdd", "vt", vt.len(), vrows, n, ldvt);
    }
    let lwork = lwork_of("gesdd", work);
    need(
        "gesdd",
        "rwork",
        rwork.len(),
        gesdd_lrwork::<T>(jobz, mu, nu),
    );
    need("gesdd", "iwork", iwork.len(), 8 * k);
    let (mut du, mut dvt) = ([T::default()], [T::default()]);
    let (u, vt) = (or_dummy(u, &mut du), or_dummy(vt, &mut dvt));
    // SAFETY: `a` is m×n at `lda`, `s` holds min(m,n), `u` and `vt` the
    // vectors `jobz` asks for at `ldu` and `ldvt` (valid dummies when empty:
    // 'N', where LAPACK never touches them), `work` LWORK, `rwork` and
    // `iwork` what LAPACK needs (checked).
    unsafe {
        T::gesdd(
            l,
            jobz,
            m,
            n,
            a.as_mut_ptr(),
            lda,
            s.as_mut_ptr(),
            u.as_mut_ptr(),
            ldu,
            vt.as_mut_ptr(),
            ldvt,
            work.as_mut_ptr(),
            lwork,
            rwork.as_mut_ptr(),
            iwork.as_mut_ptr(),
        )
    }
}

/// The optimal LWORK of [`gesvd`] for these dims.
pub(crate) fn gesvd_lwork<T: Scalar>(
    l: &LapackSymbols,
    job: u8,
    m: lapack_int,
    n: lapack_int,
    lda: lapack_int,
    ldu: lapack_int,
    ldvt: lapack_int,
) -> usize {
    let mut q = QueryArrays::<T>::new();
    // SAFETY: a workspace query (lwork = -1) reads only the dims and writes
    // the first element of WORK; the stand-ins are valid arrays.
    workspace(|w: &mut T| unsafe {
        T::gesvd(
            l,
            job,
            m,
            n,
            q.t(0),
            lda,
            q.r(0),
            q.t(1),
            ldu,
            q.t(2),
            ldvt,
            w,
            -1,
            q.r(1),
        )
    })
}

/// `?gesvd` with JOBU = JOBVT = `job` on the m×n `a` (`lda`, destroyed):
/// the singular values into `s` (min(m,n)) and, as `job` asks ('A', 'S';
/// none for 'N'), U into `u` (`ldu`) and Vᵀ into `vt` (`ldvt`); LWORK is
/// `work.len()` and `rwork` holds 5·min(m,n) reals (complex types).
/// Returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn gesvd<T: Scalar>(
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
    need_matrix("gesvd", "a", a.len(), m, n, lda);
    need("gesvd", "s", s.len(), k);
    if job != b'N' {
        need_matrix("gesvd", "u", u.len(), m, ucols, ldu);
        need_matrix("gesvd", "vt", vt.len(), vrows, n, ldvt);
    }
    let lwork = lwork_of("gesvd", work);
    need(
        "gesvd",
        "rwork",
        rwork.len(),
        if T::IS_COMPLEX { 5 * k } else { 1 },
    );
    let (mut du, mut dvt) = ([T::default()], [T::default()]);
    let (u, vt) = (or_dummy(u, &mut du), or_dummy(vt, &mut dvt));
    // SAFETY: `a` is m×n at `lda`, `s` holds min(m,n), `u` and `vt` the
    // vectors `job` asks for at `ldu` and `ldvt` (valid dummies when empty:
    // 'N', where LAPACK never touches them), `work` LWORK and `rwork`
    // 5·min(m,n) for the complex types (checked).
    unsafe {
        T::gesvd(
            l,
            job,
            m,
            n,
            a.as_mut_ptr(),
            lda,
            s.as_mut_ptr(),
            u.as_mut_ptr(),
            ldu,
            vt.as_mut_ptr(),
            ldvt,
            work.as_mut_ptr(),
            lwork,
            rwork.as_mut_ptr(),
        )
    }
}

/// Panics unless an eigenvector array `v` holds an n×n matrix at `ldv`
/// when `job` is 'V' (LAPACK references it only then; `ldv >= 1` always).
fn need_vectors(routine: &str, what: &str, job: u8, v: usize, n: lapack_int, ldv: lapack_int) {
    if job == b'V' {
        need_matrix(routine, what, v, n, n, ldv);
    } else {
        need_matrix(routine, what, v, 0, 0, ldv);
    }
}

/// The optimal LWORK of [`geev_real`] for these dims.
pub(crate) fn geev_real_lwork<T: RealLapack>(
    l: &LapackSymbols,
    jobvl: u8,
    jobvr: u8,
    n: lapack_int,
    lda: lapack_int,
    ldvl: lapack_int,
    ldvr: lapack_int,
) -> usize {
    let mut q = QueryArrays::<T>::new();
    // SAFETY: a workspace query (lwork = -1) reads only the dims and writes
    // the first element of WORK; the stand-ins are valid arrays.
    workspace(|w: &mut T| unsafe {
        T::geev(
            l,
            jobvl,
            jobvr,
            n,
            q.t(0),
            lda,
            q.t(1),
            q.t(2),
            q.t(3),
            ldvl,
            q.t(4),
            ldvr,
            w,
            -1,
        )
    })
}

/// Real `?geev` on the n×n `a` (`lda`, destroyed): eigenvalues into `wr`
/// and `wi` (n each), left and right eigenvectors (packed) into `vl` and
/// `vr` (n×n at `ldvl`, `ldvr`) when `jobvl`, `jobvr` are 'V'; LWORK is
/// `work.len()`. Returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn geev_real<T: RealLapack>(
    l: &LapackSymbols,
    jobvl: u8,
    jobvr: u8,
    n: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    wr: &mut [T],
    wi: &mut [T],
    vl: &mut [T],
    ldvl: lapack_int,
    vr: &mut [T],
    ldvr: lapack_int,
    work: &mut [T],
) -> lapack_int {
    let nu = len("geev", "n", n);
    need_matrix("geev", "a", a.len(), n, n, lda);
    need("geev", "wr", wr.len(), nu);
    need("geev", "wi", wi.len(), nu);
    need_vectors("geev", "vl", jobvl, vl.len(), n, ldvl);
    need_vectors("geev", "vr", jobvr, vr.len(), n, ldvr);
    let lwork = lwork_of("geev", work);
    let (mut dl, mut dr) = ([T::default()], [T::default()]);
    let (vl, vr) = (or_dummy(vl, &mut dl), or_dummy(vr, &mut dr));
    // SAFETY: `a` is n×n at `lda`, `wr` and `wi` hold n, `vl` and `vr` n×n
    // at their leading dimensions when asked for (valid dummies otherwise:
    // LAPACK does not reference them), `work` LWORK (checked).
    unsafe {
        T::geev(
            l,
            jobvl,
            jobvr,
            n,
            a.as_mut_ptr(),
            lda,
            wr.as_mut_ptr(),
            wi.as_mut_ptr(),
            vl.as_mut_ptr(),
            ldvl,
            vr.as_mut_ptr(),
            ldvr,
            work.as_mut_ptr(),
            lwork,
        )
    }
}

/// The optimal LWORK of [`geev_complex`] for these dims.
pub(crate) fn geev_complex_lwork<T: ComplexLapack>(
    l: &LapackSymbols,
    jobvl: u8,
    jobvr: u8,
    n: lapack_int,
    lda: lapack_int,
    ldvl: lapack_int,
    ldvr: lapack_int,
) -> usize {
    let mut q = QueryArrays::<T>::new();
    // SAFETY: a workspace query (lwork = -1) reads only the dims and writes
    // the first element of WORK and RWORK; the stand-ins are valid arrays.
    workspace(|w: &mut T| unsafe {
        T::geev(
            l,
            jobvl,
            jobvr,
            n,
            q.t(0),
            lda,
            q.t(1),
            q.t(2),
            ldvl,
            q.t(3),
            ldvr,
            w,
            -1,
            q.r(0),
        )
    })
}

/// Complex `?geev` on the n×n `a` (`lda`, destroyed): eigenvalues into `w`
/// (n), left and right eigenvectors into `vl` and `vr` (n×n at `ldvl`,
/// `ldvr`) when `jobvl`, `jobvr` are 'V'; LWORK is `work.len()`, `rwork`
/// holds 2n reals. Returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn geev_complex<T: ComplexLapack>(
    l: &LapackSymbols,
    jobvl: u8,
    jobvr: u8,
    n: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    w: &mut [T],
    vl: &mut [T],
    ldvl: lapack_int,
    vr: &mut [T],
    ldvr: lapack_int,
    work: &mut [T],
    rwork: &mut [T::Real],
) -> lapack_int {
    let nu = len("geev", "n", n);
    need_matrix("geev", "a", a.len(), n, n, lda);
    need("geev", "w", w.len(), nu);
    need_vectors("geev", "vl", jobvl, vl.len(), n, ldvl);
    need_vectors("geev", "vr", jobvr, vr.len(), n, ldvr);
    let lwork = lwork_of("geev", work);
    need("geev", "rwork", rwork.len(), 2 * nu);
    let (mut dl, mut dr) = ([T::default()], [T::default()]);
    let (vl, vr) = (or_dummy(vl, &mut dl), or_dummy(vr, &mut dr));
    // SAFETY: `a` is n×n at `lda`, `w` holds n, `vl` and `vr` n×n at their
    // leading dimensions when asked for (valid dummies otherwise: LAPACK
    // does not reference them), `work` LWORK and `rwork` 2n (checked).
    unsafe {
        T::geev(
            l,
            jobvl,
            jobvr,
            n,
            a.as_mut_ptr(),
            lda,
            w.as_mut_ptr(),
            vl.as_mut_ptr(),
            ldvl,
            vr.as_mut_ptr(),
            ldvr,
            work.as_mut_ptr(),
            lwork,
            rwork.as_mut_ptr(),
        )
    }
}

/// The optimal LWORK of [`gees_real`] for these dims.
pub(crate) fn gees_real_lwork<T: RealLapack>(
    l: &LapackSymbols,
    jobvs: u8,
    n: lapack_int,
    lda: lapack_int,
    ldvs: lapack_int,
) -> usize {
    let mut q = QueryArrays::<T>::new();
    // SAFETY: a workspace query (lwork = -1) reads only the dims and writes
    // the first element of WORK; the stand-ins are valid arrays.
    workspace(|w: &mut T| unsafe {
        T::gees(
            l,
            jobvs,
            n,
            q.t(0),
            lda,
            q.i(0),
            q.t(1),
            q.t(2),
            q.t(3),
            ldvs,
            w,
            -1,
        )
    })
}

/// Real `?gees` (no sorting) on the n×n `a` (`lda`, overwritten by the
/// Schur form): eigenvalues into `wr` and `wi` (n each), the Schur vectors
/// into `vs` (n×n at `ldvs`) when `jobvs` is 'V', 0 into `sdim`; LWORK is
/// `work.len()`. Returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn gees_real<T: RealLapack>(
    l: &LapackSymbols,
    jobvs: u8,
    n: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    sdim: &mut lapack_int,
    wr: &mut [T],
    wi: &mut [T],
    vs: &mut [T],
    ldvs: lapack_int,
    work: &mut [T],
) -> lapack_int {
    let nu = len("gees", "n", n);
    need_matrix("gees", "a", a.len(), n, n, lda);
    need("gees", "wr", wr.len(), nu);
    need("gees", "wi", wi.len(), nu);
    need_vectors("gees", "vs", jobvs, vs.len(), n, ldvs);
    let lwork = lwork_of("gees", work);
    let mut dummy = [T::default()];
    let vs = or_dummy(vs, &mut dummy);
    // SAFETY: `a` is n×n at `lda`, `sdim` one integer, `wr` and `wi` hold
    // n, `vs` n×n at `ldvs` when asked for (a valid array otherwise, not
    // referenced), `work` LWORK (checked).
    unsafe {
        T::gees(
            l,
            jobvs,
            n,
            a.as_mut_ptr(),
            lda,
            sdim,
            wr.as_mut_ptr(),
            wi.as_mut_ptr(),
            vs.as_mut_ptr(),
            ldvs,
            work.as_mut_ptr(),
            lwork,
        )
    }
}

/// The optimal LWORK of [`gees_complex`] for these dims.
pub(crate) fn gees_complex_lwork<T: ComplexLapack>(
    l: &LapackSymbols,
    jobvs: u8,
    n: lapack_int,
    lda: lapack_int,
    ldvs: lapack_int,
) -> usize {
    let mut q = QueryArrays::<T>::new();
    // SAFETY: a workspace query (lwork = -1) reads only the dims and writes
    // the first element of WORK and RWORK; the stand-ins are valid arrays.
    workspace(|w: &mut T| unsafe {
        T::gees(
            l,
            jobvs,
            n,
            q.t(0),
            lda,
            q.i(0),
            q.t(1),
            q.t(3),
            ldvs,
            w,
            -1,
            q.r(0),
        )
    })
}

/// Complex `?gees` (no sorting) on the n×n `a` (`lda`, overwritten by the
/// Schur form): eigenvalues into `w` (n), the Schur vectors into `vs` (n×n
/// at `ldvs`) when `jobvs` is 'V', 0 into `sdim`; LWORK is `work.len()`,
/// `rwork` holds n reals. Returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn gees_complex<T: ComplexLapack>(
    l: &LapackSymbols,
    jobvs: u8,
    n: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    sdim: &mut lapack_int,
    w: &mut [T],
    vs: &mut [T],
    ldvs: lapack_int,
    work: &mut [T],
    rwork: &mut [T::Real],
) -> lapack_int {
    let nu = len("gees", "n", n);
    need_matrix("gees", "a", a.len(), n, n, lda);
    need("gees", "w", w.len(), nu);
    need_vectors("gees", "vs", jobvs, vs.len(), n, ldvs);
    let lwork = lwork_of("gees", work);
    need("gees", "rwork", rwork.len(), nu);
    let mut dummy = [T::default()];
    let vs = or_dummy(vs, &mut dummy);
    // SAFETY: `a` is n×n at `lda`, `sdim` one integer, `w` holds n, `vs`
    // n×n at `ldvs` when asked for (a valid array otherwise, not
    // referenced), `work` LWORK and `rwork` n (checked).
    unsafe {
        T::gees(
            l,
            jobvs,
            n,
            a.as_mut_ptr(),
            lda,
            sdim,
            w.as_mut_ptr(),
            vs.as_mut_ptr(),
            ldvs,
            work.as_mut_ptr(),
            lwork,
            rwork.as_mut_ptr(),
        )
    }
}

/// The optimal (LWORK, LIWORK) of [`stedc`] for these dims, at least 1
/// each.
pub(crate) fn stedc_lwork<T: RealLapack>(
    l: &LapackSymbols,
    compz: u8,
    n: lapack_int,
    ldz: lapack_int,
) -> (usize, usize) {
    let mut q = QueryArrays::<T>::new();
    let (mut qw, mut qiw) = (T::ZERO, 0);
    // SAFETY: a workspace query (lwork = liwork = -1) reads only the dims
    // and writes the two optimal sizes; the stand-ins are valid arrays.
    unsafe {
        T::stedc(
            l,
            compz,
            n,
            q.t(0),
            q.t(1),
            q.t(2),
            ldz,
            &mut qw,
            -1,
            &mut qiw,
            -1,
        )
    };
    (
        qw.work_size().max(1),
        usize::try_from(qiw).unwrap_or(0).max(1),
    )
}

/// `?stedc` with `compz` 'I': the eigensystem of the n×n symmetric
/// tridiagonal matrix with diagonal `d` (n, eigenvalues out) and
/// off-diagonal `e` (n−1), eigenvectors into `z` (n×n at `ldz`); LWORK and
/// LIWORK are the lengths of `work` and `iwork`. Returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn stedc<T: RealLapack>(
    l: &LapackSymbols,
    n: lapack_int,
    d: &mut [T],
    e: &mut [T],
    z: &mut [T],
    ldz: lapack_int,
    work: &mut [T],
    iwork: &mut [lapack_int],
) -> lapack_int {
    let nu = len("stedc", "n", n);
    need("stedc", "d", d.len(), nu);
    need("stedc", "e", e.len(), nu.saturating_sub(1));
    need_matrix("stedc", "z", z.len(), n, n, ldz);
    let (lwork, liwork) = (lwork_of("stedc", work), lwork_of("stedc", iwork));
    // SAFETY: `d` holds n, `e` n−1, `z` is n×n at `ldz`, and `work` and
    // `iwork` LWORK and LIWORK (checked).
    unsafe {
        T::stedc(
            l,
            b'I',
            n,
            d.as_mut_ptr(),
            e.as_mut_ptr(),
            z.as_mut_ptr(),
            ldz,
            work.as_mut_ptr(),
            lwork,
            iwork.as_mut_ptr(),
            liwork,
        )
    }
}

/// `?laed1`: the eigensystem of the n×n block-diagonal tridiagonal matrix
/// (blocks split at `cutpnt`, in 1..n) plus `rho` times a rank-one term,
/// from its blocks' eigenvalues `d` (n) and eigenvectors `q` (n×n at
/// `ldq`) with the permutation `indxq` (n); `work` holds 4n + n² and
/// `iwork` 4n. Returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn laed1<T: RealLapack>(
    l: &LapackSymbols,
    n: lapack_int,
    d: &mut [T],
    q: &mut [T],
    ldq: lapack_int,
    indxq: &mut [lapack_int],
    rho: T,
    cutpnt: lapack_int,
    work: &mut [T],
    iwork: &mut [lapack_int],
) -> lapack_int {
    let nu = len("laed1", "n", n);
    assert!(
        (1..n).contains(&cutpnt),
        "laed1: cutpnt {cutpnt} is not in 1..{n}"
    );
    need("laed1", "d", d.len(), nu);
    need_matrix("laed1", "q", q.len(), n, n, ldq);
    need("laed1", "indxq", indxq.len(), nu);
    need("laed1", "work", work.len(), 4 * nu + nu * nu);
    need("laed1", "iwork", iwork.len(), 4 * nu);
    // SAFETY: `d` holds n, `q` is n×n at `ldq`, `indxq` holds n, `work`
    // 4n + n² and `iwork` 4n, as `?laed1` documents (checked).
    unsafe {
        T::laed1(
            l,
            n,
            d.as_mut_ptr(),
            q.as_mut_ptr(),
            ldq,
            indxq.as_mut_ptr(),
            rho,
            cutpnt,
            work.as_mut_ptr(),
            iwork.as_mut_ptr(),
        )
    }
}

/// The optimal LWORK of [`ormtr`] for these dims.
pub(crate) fn ormtr_lwork<T: RealLapack>(
    l: &LapackSymbols,
    uplo: u8,
    m: lapack_int,
    n: lapack_int,
    lda: lapack_int,
    ldc: lapack_int,
) -> usize {
    let mut q = QueryArrays::<T>::new();
    // SAFETY: a workspace query (lwork = -1) reads only the dims and writes
    // the first element of WORK; the stand-ins are valid arrays.
    workspace(|w: &mut T| unsafe {
        T::ormtr(l, uplo, m, n, q.t(0), lda, q.t(1), q.t(2), ldc, w, -1)
    })
}

/// `?ormtr` with SIDE = 'L', TRANS = 'N': `c` (m×n at `ldc`) := Q·`c` for
/// the Q that `?sytrd` (`uplo`) left in `a` (m×m at `lda`) and `tau`
/// (m−1); LWORK is `work.len()`. Returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn ormtr<T: RealLapack>(
    l: &LapackSymbols,
    uplo: u8,
    m: lapack_int,
    n: lapack_int,
    a: &[T],
    lda: lapack_int,
    tau: &[T],
    c: &mut [T],
    ldc: lapack_int,
    work: &mut [T],
) -> lapack_int {
    need_matrix("ormtr", "a", a.len(), m, m, lda);
    need(
        "ormtr",
        "tau",
        tau.len(),
        len("ormtr", "m", m).saturating_sub(1),
    );
    need_matrix("ormtr", "c", c.len(), m, n, ldc);
    let lwork = lwork_of("ormtr", work);
    // SAFETY: `a` is m×m at `lda`, `tau` holds m−1, `c` is m×n at `ldc` and
    // `work` LWORK (checked).
    unsafe {
        T::ormtr(
            l,
            uplo,
            m,
            n,
            a.as_ptr(),
            lda,
            tau.as_ptr(),
            c.as_mut_ptr(),
            ldc,
            work.as_mut_ptr(),
            lwork,
        )
    }
}

/// The optimal LWORK of [`gebrd`] for these dims.
pub(crate) fn gebrd_lwork<T: RealLapack>(
    l: &LapackSymbols,
    m: lapack_int,
    n: lapack_int,
    lda: lapack_int,
) -> usize {
    let mut q = QueryArrays::<T>::new();
    // SAFETY: a workspace query (lwork = -1) reads only the dims and writes
    // the first element of WORK; the stand-ins are valid arrays.
    workspace(|w: &mut T| unsafe {
        T::gebrd(l, m, n, q.t(0), lda, q.t(1), q.t(2), q.t(3), q.t(4), w, -1)
    })
}

/// `?gebrd` on the m×n `a` (`lda`): the bidiagonal's diagonal into `d`
/// (min(m,n)) and off-diagonal into `e` (min(m,n) − 1), the scalars of Q
/// and P into `tauq` and `taup` (min(m,n) each); LWORK is `work.len()`.
/// Returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
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
    need_matrix("gebrd", "a", a.len(), m, n, lda);
    need("gebrd", "d", d.len(), k);
    need("gebrd", "e", e.len(), k.saturating_sub(1));
    need("gebrd", "tauq", tauq.len(), k);
    need("gebrd", "taup", taup.len(), k);
    let lwork = lwork_of("gebrd", work);
    // SAFETY: `a` is m×n at `lda`, `d`, `tauq` and `taup` hold min(m,n),
    // `e` one fewer, and `work` LWORK (checked).
    unsafe {
        T::gebrd(
            l,
            m,
            n,
            a.as_mut_ptr(),
            lda,
            d.as_mut_ptr(),
            e.as_mut_ptr(),
            tauq.as_mut_ptr(),
            taup.as_mut_ptr(),
            work.as_mut_ptr(),
            lwork,
        )
    }
}

/// `?bdsdc` with UPLO = 'U', COMPQ = 'I': the SVD of the n×n upper
/// bidiagonal matrix with diagonal `d` (n, singular values out) and
/// superdiagonal `e` (n−1), singular vectors into `u` and `vt` (n×n at
/// `ldu`, `ldvt`); `work` holds 3n² + 4n and `iwork` 8n. Returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
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
    need("bdsdc", "d", d.len(), nu);
    need("bdsdc", "e", e.len(), nu.saturating_sub(1));
    need_matrix("bdsdc", "u", u.len(), n, n, ldu);
    need_matrix("bdsdc", "vt", vt.len(), n, n, ldvt);
    need("bdsdc", "work", work.len(), 3 * nu * nu + 4 * nu);
    need("bdsdc", "iwork", iwork.len(), 8 * nu);
    // SAFETY: `d` holds n, `e` n−1, `u` and `vt` are n×n at `ldu` and
    // `ldvt`, `work` 3n² + 4n and `iwork` 8n (checked).
    unsafe {
        T::bdsdc(
            l,
            n,
            d.as_mut_ptr(),
            e.as_mut_ptr(),
            u.as_mut_ptr(),
            ldu,
            vt.as_mut_ptr(),
            ldvt,
            work.as_mut_ptr(),
            iwork.as_mut_ptr(),
        )
    }
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

/// The optimal LWORK of [`ormbr`] for these dims.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
pub(crate) fn ormbr_lwork<T: RealLapack>(
    l: &LapackSymbols,
    vect: u8,
    side: u8,
    trans: u8,
    m: lapack_int,
    n: lapack_int,
    k: lapack_int,
    lda: lapack_int,
    ldc: lapack_int,
) -> usize {
    let mut q = QueryArrays::<T>::new();
    // SAFETY: a workspace query (lwork = -1) reads only the dims and writes
    // the first element of WORK; the stand-ins are valid arrays.
    workspace(|w: &mut T| unsafe {
        T::ormbr(
            l,
            vect,
            side,
            trans,
            m,
            n,
            k,
            q.t(0),
            lda,
            q.t(1),
            q.t(2),
            ldc,
            w,
            -1,
        )
    })
}

/// `?ormbr`: applies `?gebrd`'s Q (`vect` 'Q') or P ('P'), from the
/// reflectors in `a` (`lda`) and `tau` (min(nq,k)), to the m×n `c` (`ldc`)
/// from `side`, transposed with `trans` 'T'; LWORK is `work.len()`.
/// Returns INFO.
#[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
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
    need_matrix("ormbr", "a", a.len(), rows, cols, lda);
    need("ormbr", "tau", tau.len(), len("ormbr", "k", nq.min(k)));
    need_matrix("ormbr", "c", c.len(), m, n, ldc);
    let lwork = lwork_of("ormbr", work);
    // SAFETY: `a` holds the reflectors `vect` names at `lda`, `tau`
    // min(nq,k) scalars, `c` is m×n at `ldc` and `work` LWORK (checked).
    unsafe {
        T::ormbr(
            l,
            vect,
            side,
            trans,
            m,
            n,
            k,
            a.as_ptr(),
            lda,
            tau.as_ptr(),
            c.as_mut_ptr(),
            ldc,
            work.as_mut_ptr(),
            lwork,
        )
    }
}
