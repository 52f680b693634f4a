//! The eigenproblems: `?gehrd`, `?sytrd`/`?hetrd`, `?syevd`/`?heevd`,
//! `?geev`, `?gees`, and the steps of the split `?syevd` (`?stedc`,
//! `?laed1`, `?ormtr`).

#![expect(
    clippy::too_many_arguments,
    reason = "each function mirrors its LAPACK routine"
)]

use super::{
    array, array_or_dummy, int_work_size, len, matrix, need_matrix, or_dummy, query_lwork,
    work_array,
};
use crate::ffi::{LapackSymbols, lapack_int};
use crate::scalar::{ComplexLapack, LapackScalar, RealLapack, RealScalar};

lwork_query! {
    /// The optimal LWORK of [`gehrd`] for these dims.
    fn gehrd_lwork<T: LapackScalar>(l, n, ilo, ihi, lda)
        |q, w| T::gehrd(l, n, ilo, ihi, q.t(0), lda, q.t(1), w, -1);
}

/// `?gehrd` on the n×n `a` (`lda`), n−1 scalars into `tau` (none for
/// n = 1), LWORK = `work.len()`; returns INFO.
pub(crate) fn gehrd<T: LapackScalar>(
    l: &LapackSymbols,
    n: lapack_int,
    ilo: lapack_int,
    ihi: lapack_int,
    a: &mut [T],
    lda: lapack_int,
    tau: &mut [T],
    work: &mut [T],
) -> lapack_int {
    let mut dummy = [T::default()];
    let a = matrix("gehrd", "a", a, n, n, lda);
    let reflectors = len("gehrd", "n", n).saturating_sub(1);
    let tau = array_or_dummy("gehrd", "tau", tau, reflectors, &mut dummy);
    let (work, lwork) = work_array("gehrd", work);
    // SAFETY: `a` is n×n at `lda`, `tau` holds n−1 (a valid dummy when
    // n = 1, where LAPACK writes nothing) and `work` LWORK (checked).
    unsafe { T::gehrd(l, n, ilo, ihi, a, lda, tau, work, lwork) }
}

lwork_query! {
    /// The optimal LWORK of [`sytrd`] for these dims.
    fn sytrd_lwork<T: LapackScalar>(l, uplo: u8, n, lda)
        |q, w| T::sytrd(l, uplo, n, q.t(0), lda, q.r(0), q.r(1), q.t(1), w, -1);
}

/// `?sytrd` / `?hetrd` on the n×n `a` (`lda`, the `uplo` triangle): the
/// diagonal into `d` (n), the off-diagonal into `e` and the scalars into
/// `tau` (n−1 each, none for n = 1), LWORK = `work.len()`; returns INFO.
pub(crate) fn sytrd<T: LapackScalar>(
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
    let (mut de, mut dt) = ([<T::Real as Default>::default()], [T::default()]);
    let a = matrix("sytrd", "a", a, n, n, lda);
    let d = array("sytrd", "d", d, nu);
    let e = array_or_dummy("sytrd", "e", e, nu.saturating_sub(1), &mut de);
    let tau = array_or_dummy("sytrd", "tau", tau, nu.saturating_sub(1), &mut dt);
    let (work, lwork) = work_array("sytrd", work);
    // SAFETY: `a` is n×n at `lda`, `d` holds n, `e` and `tau` n−1 (valid
    // dummies when n = 1, where LAPACK writes nothing to them) and `work`
    // LWORK (checked).
    unsafe { T::sytrd(l, uplo, n, a, lda, d, e, tau, work, lwork) }
}

/// The optimal (LWORK, LRWORK, LIWORK) of [`syevd`] for these dims, each at
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

/// `?syevd` / `?heevd` on the n×n `a` (`lda`, the `uplo` triangle): the
/// eigenvalues into `w` (n) and, with `jobz` 'V', the eigenvectors over
/// `a`; LWORK, LRWORK (complex types; 1 for the real ones) and LIWORK are
/// the lengths of `work`, `rwork` and `iwork`. Returns INFO.
pub(crate) fn syevd<T: LapackScalar>(
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
    let a = matrix("syevd", "a", a, n, n, lda);
    let w = array("syevd", "w", w, len("syevd", "n", n));
    let (work, lwork) = work_array("syevd", work);
    let (rwork, lrwork) = work_array("syevd", rwork);
    let (iwork, liwork) = work_array("syevd", iwork);
    // SAFETY: `a` is n×n at `lda`, `w` holds n, and `work`, `rwork` and
    // `iwork` the LWORK, LRWORK and LIWORK passed (checked).
    unsafe {
        T::syevd(
            l, jobz, uplo, n, a, lda, w, work, lwork, rwork, lrwork, iwork, liwork,
        )
    }
}

/// The pointer to an eigenvector array `v` once it holds an n×n matrix at
/// `ldv` when `job` is 'V' (LAPACK references it only then; `ldv >= 1`
/// always), or to `dummy` when `v` is empty.
fn vectors<T>(
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
    /// The optimal LWORK of [`geev_real`] for these dims.
    fn geev_real_lwork<T: RealLapack>(l, jobvl: u8, jobvr: u8, n, lda, ldvl, ldvr)
        |q, w| T::geev(l, jobvl, jobvr, n, q.t(0), lda, q.t(1), q.t(2), q.t(3), ldvl, q.t(4), ldvr,
            w, -1);
}

/// Real `?geev` on the n×n `a` (`lda`, destroyed): eigenvalues into `wr`
/// and `wi` (n each), left and right eigenvectors (packed) into `vl` and
/// `vr` (n×n at `ldvl`, `ldvr`) when `jobvl`, `jobvr` are 'V'; LWORK is
/// `work.len()`. Returns INFO.
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
    let a = matrix("geev", "a", a, n, n, lda);
    let wr = array("geev", "wr", wr, nu);
    let wi = array("geev", "wi", wi, nu);
    let (mut dl, mut dr) = ([T::default()], [T::default()]);
    let vl = vectors("geev", "vl", jobvl, vl, n, ldvl, &mut dl);
    let vr = vectors("geev", "vr", jobvr, vr, n, ldvr, &mut dr);
    let (work, lwork) = work_array("geev", work);
    // SAFETY: `a` is n×n at `lda`, `wr` and `wi` hold n, `vl` and `vr` n×n
    // at their leading dimensions when asked for (valid dummies otherwise:
    // LAPACK does not reference them), `work` LWORK (checked).
    unsafe {
        T::geev(
            l, jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr, work, lwork,
        )
    }
}

lwork_query! {
    /// The optimal LWORK of [`geev_complex`] for these dims.
    fn geev_complex_lwork<T: ComplexLapack>(l, jobvl: u8, jobvr: u8, n, lda, ldvl, ldvr)
        |q, w| T::geev(l, jobvl, jobvr, n, q.t(0), lda, q.t(1), q.t(2), ldvl, q.t(3), ldvr, w, -1,
            q.r(0));
}

/// Complex `?geev` on the n×n `a` (`lda`, destroyed): eigenvalues into `w`
/// (n), left and right eigenvectors into `vl` and `vr` (n×n at `ldvl`,
/// `ldvr`) when `jobvl`, `jobvr` are 'V'; LWORK is `work.len()`, `rwork`
/// holds 2n reals. Returns INFO.
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
    let a = matrix("geev", "a", a, n, n, lda);
    let w = array("geev", "w", w, nu);
    let (mut dl, mut dr) = ([T::default()], [T::default()]);
    let vl = vectors("geev", "vl", jobvl, vl, n, ldvl, &mut dl);
    let vr = vectors("geev", "vr", jobvr, vr, n, ldvr, &mut dr);
    let (work, lwork) = work_array("geev", work);
    let rwork = array("geev", "rwork", rwork, 2 * nu);
    // SAFETY: `a` is n×n at `lda`, `w` holds n, `vl` and `vr` n×n at their
    // leading dimensions when asked for (valid dummies otherwise: LAPACK
    // does not reference them), `work` LWORK and `rwork` 2n (checked).
    unsafe {
        T::geev(
            l, jobvl, jobvr, n, a, lda, w, vl, ldvl, vr, ldvr, work, lwork, rwork,
        )
    }
}

lwork_query! {
    /// The optimal LWORK of [`gees_real`] for these dims.
    fn gees_real_lwork<T: RealLapack>(l, jobvs: u8, n, lda, ldvs)
        |q, w| T::gees(l, jobvs, n, q.t(0), lda, q.i(0), q.t(1), q.t(2), q.t(3), ldvs, w, -1);
}

/// Real `?gees` (no sorting) on the n×n `a` (`lda`, overwritten by the
/// Schur form): eigenvalues into `wr` and `wi` (n each), the Schur vectors
/// into `vs` (n×n at `ldvs`) when `jobvs` is 'V', 0 into `sdim`; LWORK is
/// `work.len()`. Returns INFO.
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
    let a = matrix("gees", "a", a, n, n, lda);
    let wr = array("gees", "wr", wr, nu);
    let wi = array("gees", "wi", wi, nu);
    let mut dummy = [T::default()];
    let vs = vectors("gees", "vs", jobvs, vs, n, ldvs, &mut dummy);
    let (work, lwork) = work_array("gees", work);
    // SAFETY: `a` is n×n at `lda`, `sdim` one integer, `wr` and `wi` hold
    // n, `vs` n×n at `ldvs` when asked for (a valid array otherwise, not
    // referenced), `work` LWORK (checked).
    unsafe { T::gees(l, jobvs, n, a, lda, sdim, wr, wi, vs, ldvs, work, lwork) }
}

lwork_query! {
    /// The optimal LWORK of [`gees_complex`] for these dims.
    fn gees_complex_lwork<T: ComplexLapack>(l, jobvs: u8, n, lda, ldvs)
        |q, w| T::gees(l, jobvs, n, q.t(0), lda, q.i(0), q.t(1), q.t(3), ldvs, w, -1, q.r(0));
}

/// Complex `?gees` (no sorting) on the n×n `a` (`lda`, overwritten by the
/// Schur form): eigenvalues into `w` (n), the Schur vectors into `vs` (n×n
/// at `ldvs`) when `jobvs` is 'V', 0 into `sdim`; LWORK is `work.len()`,
/// `rwork` holds n reals. Returns INFO.
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
    let a = matrix("gees", "a", a, n, n, lda);
    let w = array("gees", "w", w, nu);
    let mut dummy = [T::default()];
    let vs = vectors("gees", "vs", jobvs, vs, n, ldvs, &mut dummy);
    let (work, lwork) = work_array("gees", work);
    let rwork = array("gees", "rwork", rwork, nu);
    // SAFETY: `a` is n×n at `lda`, `sdim` one integer, `w` holds n, `vs`
    // n×n at `ldvs` when asked for (a valid array otherwise, not
    // referenced), `work` LWORK and `rwork` n (checked).
    unsafe { T::gees(l, jobvs, n, a, lda, sdim, w, vs, ldvs, work, lwork, rwork) }
}

/// The optimal (LWORK, LIWORK) of [`stedc`] for these dims, at least 1
/// each.
pub(crate) fn stedc_lwork<T: RealLapack>(
    l: &LapackSymbols,
    compz: u8,
    n: lapack_int,
    ldz: lapack_int,
) -> (usize, usize) {
    let mut qiw = 0;
    // SAFETY: a workspace query (LWORK = LIWORK = −1) reads only the dims
    // and writes the two optimal sizes; the stand-ins are valid arrays.
    let lwork = query_lwork(|q, w| unsafe {
        T::stedc(
            l,
            compz,
            n,
            q.t(0),
            q.t(1),
            q.t(2),
            ldz,
            w,
            -1,
            &mut qiw,
            -1,
        )
    });
    (lwork, int_work_size(qiw))
}

/// `?stedc` with `compz` 'I': the eigensystem of the n×n symmetric
/// tridiagonal matrix with diagonal `d` (n, eigenvalues out) and
/// off-diagonal `e` (n−1), eigenvectors into `z` (n×n at `ldz`); LWORK and
/// LIWORK are the lengths of `work` and `iwork`. Returns INFO.
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
    let d = array("stedc", "d", d, nu);
    let e = array("stedc", "e", e, nu.saturating_sub(1));
    let z = matrix("stedc", "z", z, n, n, ldz);
    let (work, lwork) = work_array("stedc", work);
    let (iwork, liwork) = work_array("stedc", iwork);
    // SAFETY: `d` holds n, `e` n−1, `z` is n×n at `ldz`, and `work` and
    // `iwork` LWORK and LIWORK (checked).
    unsafe { T::stedc(l, b'I', n, d, e, z, ldz, work, lwork, iwork, liwork) }
}

/// `?laed1`: the eigensystem of the n×n block-diagonal tridiagonal matrix
/// (blocks split at `cutpnt`, in 1..n) plus `rho` times a rank-one term,
/// from its blocks' eigenvalues `d` (n) and eigenvectors `q` (n×n at
/// `ldq`) with the permutation `indxq` (n); `work` holds 4n + n² and
/// `iwork` 4n. Returns INFO.
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
    let d = array("laed1", "d", d, nu);
    let q = matrix("laed1", "q", q, n, n, ldq);
    let indxq = array("laed1", "indxq", indxq, nu);
    let work = array("laed1", "work", work, 4 * nu + nu * nu);
    let iwork = array("laed1", "iwork", iwork, 4 * nu);
    // SAFETY: `d` holds n, `q` is n×n at `ldq`, `indxq` holds n, `work`
    // 4n + n² and `iwork` 4n, as `?laed1` documents (checked).
    unsafe { T::laed1(l, n, d, q, ldq, indxq, rho, cutpnt, work, iwork) }
}

lwork_query! {
    /// The optimal LWORK of [`ormtr`] for these dims.
    fn ormtr_lwork<T: RealLapack>(l, uplo: u8, m, n, lda, ldc)
        |q, w| T::ormtr(l, uplo, m, n, q.t(0), lda, q.t(1), q.t(2), ldc, w, -1);
}

/// `?ormtr` with SIDE = 'L', TRANS = 'N': `c` (m×n at `ldc`) := Q·`c` for
/// the Q that `?sytrd` (`uplo`) left in `a` (m×m at `lda`) and `tau`
/// (m−1); LWORK is `work.len()`. Returns INFO.
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
    let a = matrix("ormtr", "a", a, m, m, lda);
    let tau = array("ormtr", "tau", tau, len("ormtr", "m", m).saturating_sub(1));
    let c = matrix("ormtr", "c", c, m, n, ldc);
    let (work, lwork) = work_array("ormtr", work);
    // SAFETY: `a` is m×m at `lda`, `tau` holds m−1, `c` is m×n at `ldc` and
    // `work` LWORK (checked).
    unsafe { T::ormtr(l, uplo, m, n, a, lda, tau, c, ldc, work, lwork) }
}
