//! Raw LAPACK and BLAS entry points of OpenBLAS, loaded at run time.
//!
//! Source: the Fortran interfaces of LAPACK 3.x (`SRC/?getrf.f`, ...) and
//! BLAS (`?trsm.f`) as OpenBLAS 0.3.x exports them. Debian's
//! `libopenblas.so.0` (0.3.21, `openblas-pthread`) is built with gfortran and
//! LP64 integers: `nm -D` lists `sgetrf_`, `dgeev_`, `zheevd_`, ... and the
//! library needs `libgfortran.so.5`. So the calling convention is gfortran's:
//!
//! * every argument is passed by reference (`INTEGER` = `i32`, `REAL` = `f32`,
//!   `COMPLEX*16` = two `f64`, laid out like `num_complex::Complex<f64>`);
//! * every `CHARACTER` argument adds a hidden `size_t` length, appended after
//!   all the declared arguments, in the order of the character arguments
//!   (gfortran ≥ 8). We always pass 1. Routines OpenBLAS reimplements in C
//!   (`?trsm`, `?getrf`, `?potrf`) ignore the extra arguments, which the C
//!   conventions of x86_64 (SysV) and aarch64 (AAPCS64) make harmless: the
//!   caller places and removes every argument, the callee reads only its own;
//! * `LOGICAL` is a 4-byte integer and a `LOGICAL FUNCTION` argument (the
//!   `SELECT` of `?gees`) is a function pointer, which may be NULL when
//!   `SORT = 'N'` because LAPACK never calls it then.
//!
//! Nothing here is linked: [`LapackSymbols::load`] resolves every symbol from
//! a [`libloading::Library`] and keeps the library alive beside the pointers,
//! under the library's name prefix ([`SYMBOL_PREFIXES`]: none, or `scipy_`
//! for the OpenBLAS that numpy and scipy wheels bundle, which has the same
//! gfortran LP64 interface).
//!
//! Each routine's parameters are written once, in the table of
//! `lapack_routines!`, from which the function-pointer types here
//! ([`RealRoutines`], [`ComplexRoutines`]) and the `LapackScalar` methods that
//! call them are generated.
#![expect(
    non_camel_case_types,
    reason = "raw C and Fortran types keep their C names"
)]

use std::ffi::c_char;

use libloading::Library;
use num_complex::Complex;

// Fortran `COMPLEX` / `COMPLEX*16` are two reals, real part first, aligned
// like one real: exactly `num_complex::Complex` (`#[repr(C)]`).
const _: () = assert!(size_of::<Complex<f32>>() == 8 && align_of::<Complex<f32>>() == 4);
const _: () = assert!(size_of::<Complex<f64>>() == 16 && align_of::<Complex<f64>>() == 8);
const _: () = assert!(size_of::<lapack_int>() == 4 && size_of::<fortran_charlen>() == 8);

/// LAPACK `INTEGER` in an LP64 build (Debian's OpenBLAS).
pub type lapack_int = i32;
/// gfortran's hidden length of a `CHARACTER` argument.
pub type fortran_charlen = usize;
/// `LOGICAL FUNCTION SELECT(...)` of `?gees`; never called with `SORT = 'N'`.
pub type lapack_select = Option<unsafe extern "C" fn() -> lapack_int>;

type I = *const lapack_int;
type IMut = *mut lapack_int;
type Ch = *const c_char;
type Len = fortran_charlen;

/// `void openblas_set_num_threads(int)` (OpenBLAS extension, optional).
pub type openblas_set_num_threads_t = unsafe extern "C" fn(i32);
/// `int openblas_get_num_threads(void)` (OpenBLAS extension, optional).
pub type openblas_get_num_threads_t = unsafe extern "C" fn() -> i32;
/// `int blas_thread_shutdown_(void)` (OpenBLAS's server, optional): ends its
/// worker threads; the next threaded call starts them again.
pub type blas_thread_shutdown_t = unsafe extern "C" fn() -> i32;
/// `char* openblas_get_config(void)` (OpenBLAS extension, optional).
pub type openblas_get_config_t = unsafe extern "C" fn() -> *const c_char;
/// `char* openblas_get_corename(void)` (OpenBLAS extension, optional).
pub type openblas_get_corename_t = unsafe extern "C" fn() -> *const c_char;

/// The LAPACK and BLAS routines cyxla calls, each written once: its
/// Fortran parameters in order, for each one how it is passed, and the
/// checks of the safe layer over it.
///
/// `lapack_routines!(MODE)` feeds this table to [`bind_routines!`], which
/// writes from it, for the mode asked:
///
/// * `struct real`, `struct complex`: [`RealRoutines`] and
///   [`ComplexRoutines`], the function-pointer types and their loader;
/// * `decl common`, `decl only real`, `decl only complex`: the methods of
///   `LapackScalar`, `RealLapack` and `ComplexLapack` (docs from the table);
/// * `impl common real s`, `impl only complex z`, …: their implementations
///   for one symbol set of [`LapackSymbols`];
/// * `checked`: the safe functions of `checked`, one a routine;
/// * `lwork`: the workspace queries of `checked::lwork`, one for each
///   routine with one workspace (`work: mat, lwork: len`), under the name
///   of its safe function.
///
/// An entry is `common NAME [REAL, COMPLEX]` (the real and complex routine
/// names, e.g. `[syevd, heevd]`), `real NAME [ROUTINE]` or
/// `complex NAME [ROUTINE]`, then the parameters. A parameter is one of:
///
/// | in the table | method parameter | Fortran argument | safe parameter |
/// | --- | --- | --- | --- |
/// | `x: char` | `x: u8` | `CHARACTER` (pointer, plus a hidden length 1) | `x: u8` |
/// | `x: int` | `x: lapack_int` | `INTEGER` (pointer to a copy) | `x: lapack_int` |
/// | `x: len` | `x: lapack_int` | `INTEGER`: the length of a workspace (−1 = query) | none: the workspace slice's length |
/// | `x: val` | `x: Self` | a scalar of the type (pointer to a copy) | `x: T` |
/// | `x: mat` / `x: cmat` | `*mut Self` / `*const Self` | array of the type | `&mut [T]` / `&[T]` |
/// | `x: reals` | `*mut Self::Real` | `REAL` / `DOUBLE PRECISION` array | `&mut [T::Real]` |
/// | `x: ints` | `*mut lapack_int` | `INTEGER` array | `&mut [lapack_int]` |
/// | `x: cx reals`, `x: cx len` | as without `cx` | complex routines only: the real ones take no such argument and ignore the method's | as without `cx` |
/// | `x: re mat` | as without `re` | real routines only: the complex ones take no such argument and ignore the method's | as without `re` |
/// | `x = char C` | none | the character `C` (or the parameter `C`) | none |
/// | `x = one` | none | the scalar 1 | none |
/// | `x = none` | none | a NULL `SELECT` function (`SORT = 'N'`) | none |
/// | `x = null` | none | a NULL `LOGICAL` array (`BWORK` with `SORT = 'N'`) | none |
/// | `x = scratch mat`, `x = scratch int` | none | an unreferenced element | none |
/// | `info` | none | `INFO`, which the method returns | none |
///
/// After the parameters, `checked NAME<T: BOUND> |r| { … }` gives the safe
/// function's name, its docs before it, and the statements that check its
/// slices (`r` is the routine's name, for the messages). Each array
/// parameter must be shadowed there by the pointer a check of `checked`
/// hands out (`matrix`, `array`, `work_array`, `or_dummy`, …), and each
/// `len` parameter bound beside its workspace's pointer: a slice is not a
/// pointer, so the call does not compile with an array left unchecked.
macro_rules! lapack_routines {
    ($($mode:tt)+) => {
        $crate::ffi::bind_routines!(@entries [$($mode)+] []
            /// `?trsm` with `alpha = 1`.
            ///
            /// # Safety
            ///
            /// The pointers and leading dimensions must describe valid matrices of
            /// the sizes `?trsm` reads and writes for these arguments.
            common trsm [trsm, trsm] (side: char, uplo: char, trans: char, diag: char,
                m: int, n: int, alpha = one, a: cmat, lda: int, b: mat, ldb: int,)
            /// `?trsm` with `alpha = 1`: solves op(A)·X = B (`side` 'L') or
            /// X·op(A) = B ('R') for the m×n `b` (`ldb`), A the k×k triangle of `a`
            /// (`lda`, k = m or n).
            checked trsm<T: LapackScalar> |r| {
                let k = if side == b'L' { m } else { n };
                let a = matrix(r, "a", a, k, k, lda);
                let b = matrix(r, "b", b, m, n, ldb);
            };
            /// `?getrf`; returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires: `a` holds `lda·n` elements, `ipiv` `min(m,n)`.
            common getrf [getrf, getrf] (m: int, n: int, a: mat, lda: int, ipiv: ints, info,)
            /// `?getrf` on the m×n `a` (`lda`), pivots into `ipiv` (min(m,n));
            /// returns INFO.
            checked getrf<T: LapackScalar> |r| {
                let a = matrix(r, "a", a, m, n, lda);
                let ipiv = array(r, "ipiv", ipiv, len(r, "m", m.min(n)));
            };
            /// `?potrf`; returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires: `a` holds `lda·n` elements.
            common potrf [potrf, potrf] (uplo: char, n: int, a: mat, lda: int, info,)
            /// `?potrf` on the n×n `a` (`lda`, the `uplo` triangle); returns INFO.
            checked potrf<T: LapackScalar> |r| {
                let a = matrix(r, "a", a, n, n, lda);
            };
            /// `?geqrf`; returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires for these dims and `lwork` (−1 = query).
            common geqrf [geqrf, geqrf] (m: int, n: int, a: mat, lda: int, tau: mat,
                work: mat, lwork: len, info,)
            /// `?geqrf` on the m×n `a` (`lda`), min(m,n) scalars into `tau`, LWORK =
            /// `work.len()`; returns INFO.
            checked geqrf<T: LapackScalar> |r| {
                let a = matrix(r, "a", a, m, n, lda);
                let tau = array(r, "tau", tau, len(r, "m", m.min(n)));
                let (work, lwork) = work_array(r, work);
            };
            /// `?geqp3` (`rwork`, 2n reals, is ignored for real types); returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires for these dims and `lwork` (−1 = query).
            common geqp3 [geqp3, geqp3] (m: int, n: int, a: mat, lda: int, jpvt: ints,
                tau: mat, work: mat, lwork: len, rwork: cx reals, info,)
            /// `?geqp3` on the m×n `a` (`lda`) with the column pivots `jpvt` (n, in
            /// and out), min(m,n) scalars into `tau`, LWORK = `work.len()` and, for
            /// the complex types, `rwork` (2n reals; ignored for the real ones);
            /// returns INFO.
            checked geqp3<T: LapackScalar> |r| {
                let nu = len(r, "n", n);
                let a = matrix(r, "a", a, m, n, lda);
                let jpvt = array(r, "jpvt", jpvt, nu);
                let tau = array(r, "tau", tau, len(r, "m", m.min(n)));
                let (work, lwork) = work_array(r, work);
                // The real types take no RWORK.
                let rwork = complex_rwork::<T>(r, rwork, 2 * nu);
            };
            /// `?orgqr` / `?ungqr`; returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires for these dims and `lwork` (−1 = query).
            common orgqr [orgqr, ungqr] (m: int, n: int, k: int, a: mat, lda: int,
                tau: cmat, work: mat, lwork: len, info,)
            /// `?orgqr` / `?ungqr`: the first n columns of Q = H(1)…H(k) over the m×n
            /// `a` (`lda`), from k reflectors and `tau` (k), LWORK = `work.len()`;
            /// returns INFO.
            checked orgqr<T: LapackScalar> |r| {
                let a = matrix(r, "a", a, m, n, lda);
                let tau = array(r, "tau", tau, len(r, "k", k));
                let (work, lwork) = work_array(r, work);
            };
            /// `?ormqr` / `?unmqr`; returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires for these dims and `lwork` (−1 = query). `a` is
            /// written to temporarily and restored.
            common ormqr [ormqr, unmqr] (side: char, trans: char, m: int, n: int, k: int,
                a: mat, lda: int, tau: cmat, c: mat, ldc: int, work: mat, lwork: len, info,)
            /// `?ormqr` / `?unmqr`: applies Q = H(1)…H(k) (or its adjoint, `trans`)
            /// from `side` to the m×n `c` (`ldc`), the k reflectors in the columns of
            /// `a` (`lda`; written to and restored by LAPACK) and `tau` (k), LWORK =
            /// `work.len()`; returns INFO.
            checked ormqr<T: LapackScalar> |r| {
                // `a` holds k reflectors of the order of Q.
                let order = if side == b'L' { m } else { n };
                let a = matrix(r, "a", a, order, k, lda);
                let tau = array(r, "tau", tau, len(r, "k", k));
                let c = matrix(r, "c", c, m, n, ldc);
                let (work, lwork) = work_array(r, work);
            };
            /// `?syevd` / `?heevd` (`rwork` ignored for real types); returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires for these dims and workspace sizes (−1 = query).
            common syevd [syevd, heevd] (jobz: char, uplo: char, n: int, a: mat, lda: int,
                w: reals, work: mat, lwork: len, rwork: cx reals, lrwork: cx len,
                iwork: ints, liwork: len, info,)
            /// `?syevd` / `?heevd` on the n×n `a` (`lda`, the `uplo` triangle): the
            /// eigenvalues into `w` (n) and, with `jobz` 'V', the eigenvectors over
            /// `a`; LWORK, LRWORK (complex types; 1 for the real ones) and LIWORK are
            /// the lengths of `work`, `rwork` and `iwork`. Returns INFO.
            checked syevd<T: LapackScalar> |r| {
                let a = matrix(r, "a", a, n, n, lda);
                let w = array(r, "w", w, len(r, "n", n));
                let (work, lwork) = work_array(r, work);
                let (rwork, lrwork) = work_array(r, rwork);
                let (iwork, liwork) = work_array(r, iwork);
            };
            /// `?gesdd` (`rwork` ignored for real types); returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires for these dims and workspace sizes (−1 = query).
            common gesdd [gesdd, gesdd] (jobz: char, m: int, n: int, a: mat, lda: int,
                s: reals, u: mat, ldu: int, vt: mat, ldvt: int, work: mat, lwork: len,
                rwork: cx reals, iwork: ints, info,)
            /// `?gesdd` on the m×n `a` (`lda`, destroyed): the singular values into
            /// `s` (min(m,n)) and, as `jobz` asks ('A', 'S'; none for 'N'), U into `u`
            /// (`ldu`) and Vᵀ into `vt` (`ldvt`); LWORK is `work.len()`, `rwork` holds
            /// [`gesdd_lrwork`] reals (complex types) and `iwork` 8·min(m,n). Returns
            /// INFO.
            checked gesdd<T: LapackScalar> |r| {
                let (mu, nu) = (len(r, "m", m), len(r, "n", n));
                let k = mu.min(nu);
                let a = matrix(r, "a", a, m, n, lda);
                let s = array(r, "s", s, k);
                let mut dummies = [[T::default()]; 2];
                let (u, vt) = svd_vectors(r, jobz, [m, n], (u, ldu), (vt, ldvt), &mut dummies);
                let (work, lwork) = work_array(r, work);
                let rwork = array(r, "rwork", rwork, gesdd_lrwork::<T>(jobz, mu, nu));
                let iwork = array(r, "iwork", iwork, 8 * k);
            };
            /// `?gesvd` with `jobu = jobvt = job` (`rwork` ignored for real types);
            /// returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires for these dims and workspace sizes (−1 = query).
            common gesvd [gesvd, gesvd] (job: char, jobvt = char job, m: int, n: int,
                a: mat, lda: int, s: reals, u: mat, ldu: int, vt: mat, ldvt: int,
                work: mat, lwork: len, rwork: cx reals, info,)
            /// `?gesvd` with JOBU = JOBVT = `job` on the m×n `a` (`lda`, destroyed):
            /// the singular values into `s` (min(m,n)) and, as `job` asks ('A', 'S';
            /// none for 'N'), U into `u` (`ldu`) and Vᵀ into `vt` (`ldvt`); LWORK is
            /// `work.len()` and `rwork` holds 5·min(m,n) reals (complex types).
            /// Returns INFO.
            checked gesvd<T: LapackScalar> |r| {
                let k = len(r, "m", m.min(n));
                let a = matrix(r, "a", a, m, n, lda);
                let s = array(r, "s", s, k);
                let mut dummies = [[T::default()]; 2];
                let (u, vt) = svd_vectors(r, job, [m, n], (u, ldu), (vt, ldvt), &mut dummies);
                let (work, lwork) = work_array(r, work);
                let rwork = complex_rwork::<T>(r, rwork, 5 * k);
            };
            /// `?geev` (`wi` ignored for complex types, `rwork` for real ones);
            /// returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires for these dims and `lwork` (−1 = query).
            common geev [geev, geev] (jobvl: char, jobvr: char, n: int, a: mat, lda: int,
                w: mat, wi: re mat, vl: mat, ldvl: int, vr: mat, ldvr: int, work: mat,
                lwork: len, rwork: cx reals, info,)
            /// `?geev` on the n×n `a` (`lda`, destroyed): eigenvalues into `w` (n;
            /// for real types their real parts, and the imaginary parts into `wi`),
            /// left and right eigenvectors (packed for real types) into `vl` and `vr`
            /// (n×n at `ldvl`, `ldvr`) when `jobvl`, `jobvr` are 'V'; LWORK is
            /// `work.len()`, `rwork` holds 2n reals (complex types). Returns INFO.
            checked geev<T: LapackScalar> |r| {
                let nu = len(r, "n", n);
                let a = matrix(r, "a", a, n, n, lda);
                let w = array(r, if T::IS_COMPLEX { "w" } else { "wr" }, w, nu);
                let wi = real_array::<T>(r, "wi", wi, nu);
                // LAPACK references `vl` and `vr` only for 'V': valid dummies otherwise.
                let (mut dl, mut dr) = ([T::default()], [T::default()]);
                let vl = vectors(r, "vl", jobvl, vl, n, ldvl, &mut dl);
                let vr = vectors(r, "vr", jobvr, vr, n, ldvr, &mut dr);
                let (work, lwork) = work_array(r, work);
                let rwork = complex_rwork::<T>(r, rwork, 2 * nu);
            };
            /// `?gees` with `SORT = 'N'` (`wi` ignored for complex types, `rwork`
            /// for real ones); returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires for these dims and `lwork` (−1 = query).
            common gees [gees, gees] (jobvs: char, sort = char b'N', select = none, n: int,
                a: mat, lda: int, sdim: ints, w: mat, wi: re mat, vs: mat, ldvs: int,
                work: mat, lwork: len, rwork: cx reals, bwork = null, info,)
            /// `?gees` (no sorting) on the n×n `a` (`lda`, overwritten by the Schur
            /// form): eigenvalues into `w` (n; for real types their real parts, and
            /// the imaginary parts into `wi`), the Schur vectors into `vs` (n×n at
            /// `ldvs`) when `jobvs` is 'V', 0 into `sdim` (one integer); LWORK is
            /// `work.len()`, `rwork` holds n reals (complex types). Returns INFO.
            checked gees<T: LapackScalar> |r| {
                let nu = len(r, "n", n);
                let a = matrix(r, "a", a, n, n, lda);
                let sdim = array(r, "sdim", sdim, 1);
                let w = array(r, if T::IS_COMPLEX { "w" } else { "wr" }, w, nu);
                let wi = real_array::<T>(r, "wi", wi, nu);
                // LAPACK references `vs` only for 'V': a valid dummy otherwise.
                let mut dummy = [T::default()];
                let vs = vectors(r, "vs", jobvs, vs, n, ldvs, &mut dummy);
                let (work, lwork) = work_array(r, work);
                let rwork = complex_rwork::<T>(r, rwork, nu);
            };
            /// `?gehrd`; returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires for these dims and `lwork` (−1 = query).
            common gehrd [gehrd, gehrd] (n: int, ilo: int, ihi: int, a: mat, lda: int,
                tau: mat, work: mat, lwork: len, info,)
            /// `?gehrd` on the n×n `a` (`lda`), n−1 scalars into `tau` (none for
            /// n = 1), LWORK = `work.len()`; returns INFO.
            checked gehrd<T: LapackScalar> |r| {
                let mut dummy = [T::default()];
                let a = matrix(r, "a", a, n, n, lda);
                // For n = 1 LAPACK writes nothing to `tau`: a valid dummy when empty.
                let reflectors = len(r, "n", n).saturating_sub(1);
                let tau = array_or_dummy(r, "tau", tau, reflectors, &mut dummy);
                let (work, lwork) = work_array(r, work);
            };
            /// `?sytrd` / `?hetrd`; returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires for these dims and `lwork` (−1 = query).
            common sytrd [sytrd, hetrd] (uplo: char, n: int, a: mat, lda: int, d: reals,
                e: reals, tau: mat, work: mat, lwork: len, info,)
            /// `?sytrd` / `?hetrd` on the n×n `a` (`lda`, the `uplo` triangle): the
            /// diagonal into `d` (n), the off-diagonal into `e` and the scalars into
            /// `tau` (n−1 each, none for n = 1), LWORK = `work.len()`; returns INFO.
            checked sytrd<T: LapackScalar> |r| {
                let nu = len(r, "n", n);
                let (mut de, mut dt) = ([<T::Real as Default>::default()], [T::default()]);
                let a = matrix(r, "a", a, n, n, lda);
                let d = array(r, "d", d, nu);
                // For n = 1 LAPACK writes nothing to `e` and `tau`: valid dummies.
                let e = array_or_dummy(r, "e", e, nu.saturating_sub(1), &mut de);
                let tau = array_or_dummy(r, "tau", tau, nu.saturating_sub(1), &mut dt);
                let (work, lwork) = work_array(r, work);
            };
            /// `?gtsv`; returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires: `dl`, `du` hold n−1 elements, `d` n, `b` `ldb·nrhs`.
            common gtsv [gtsv, gtsv] (n: int, nrhs: int, dl: mat, d: mat, du: mat, b: mat,
                ldb: int, info,)
            /// `?gtsv`: solves the n×n tridiagonal system with sub-diagonal `dl`,
            /// diagonal `d` and super-diagonal `du` (n−1, n, n−1) for the n×nrhs `b`
            /// (`ldb`), in place; returns INFO.
            checked gtsv<T: LapackScalar> |r| {
                let nu = len(r, "n", n);
                let dl = array(r, "dl", dl, nu.saturating_sub(1));
                let d = array(r, "d", d, nu);
                let du = array(r, "du", du, nu.saturating_sub(1));
                // With nrhs = 0 LAPACK reads no right-hand side: a valid dummy.
                need_matrix(r, "b", b.len(), n, nrhs, ldb);
                let mut dummy = [T::default()];
                let b = or_dummy(b, &mut dummy);
            };
            /// `?stedc` with `compz` 'I' (eigenvectors of the tridiagonal matrix
            /// into `z`); returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires for these dims, `lwork` and `liwork` (−1 = query).
            real stedc [stedc] (compz = char b'I', n: int, d: mat, e: mat, z: mat, ldz: int,
                work: mat, lwork: len, iwork: ints, liwork: len, info,)
            /// `?stedc` with `compz` 'I': the eigensystem of the n×n symmetric
            /// tridiagonal matrix with diagonal `d` (n, eigenvalues out) and
            /// off-diagonal `e` (n−1), eigenvectors into `z` (n×n at `ldz`); LWORK and
            /// LIWORK are the lengths of `work` and `iwork`. Returns INFO.
            checked stedc<T: RealLapack> |r| {
                let nu = len(r, "n", n);
                let d = array(r, "d", d, nu);
                let e = array(r, "e", e, nu.saturating_sub(1));
                let z = matrix(r, "z", z, n, n, ldz);
                let (work, lwork) = work_array(r, work);
                let (iwork, liwork) = work_array(r, iwork);
            };
            /// `?ormtr` with `SIDE = 'L'`, `TRANS = 'N'`: `c` := Q·`c` for the Q of
            /// `?sytrd`; returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires for these dims and `lwork` (−1 = query).
            real ormtr [ormtr] (side = char b'L', uplo: char, trans = char b'N', m: int,
                n: int, a: cmat, lda: int, tau: cmat, c: mat, ldc: int, work: mat,
                lwork: len, info,)
            /// `?ormtr` with SIDE = 'L', TRANS = 'N': `c` (m×n at `ldc`) := Q·`c` for
            /// the Q that `?sytrd` (`uplo`) left in `a` (m×m at `lda`) and `tau`
            /// (m−1); LWORK is `work.len()`. Returns INFO.
            checked ormtr<T: RealLapack> |r| {
                let a = matrix(r, "a", a, m, m, lda);
                let tau = array(r, "tau", tau, len(r, "m", m).saturating_sub(1));
                let c = matrix(r, "c", c, m, n, ldc);
                let (work, lwork) = work_array(r, work);
            };
            /// `?laed1`: the eigensystem of a block-diagonal tridiagonal matrix
            /// plus a rank-one term, from the eigensystems of its two blocks;
            /// returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires: `d` holds n, `q` is n×n (`ldq`), `indxq` n,
            /// `work` 4n + n², `iwork` 4n.
            real laed1 [laed1] (n: int, d: mat, q: mat, ldq: int, indxq: ints, rho: val,
                cutpnt: int, work: mat, iwork: ints, info,)
            /// `?laed1`: the eigensystem of the n×n block-diagonal tridiagonal matrix
            /// (blocks split at `cutpnt`, in 1..n) plus `rho` times a rank-one term,
            /// from its blocks' eigenvalues `d` (n) and eigenvectors `q` (n×n at
            /// `ldq`) with the permutation `indxq` (n); `work` holds 4n + n² and
            /// `iwork` 4n, as `?laed1` documents. Returns INFO.
            checked laed1<T: RealLapack> |r| {
                let nu = len(r, "n", n);
                assert!((1..n).contains(&cutpnt), "{r}: cutpnt {cutpnt} is not in 1..{n}");
                let d = array(r, "d", d, nu);
                let q = matrix(r, "q", q, n, n, ldq);
                let indxq = array(r, "indxq", indxq, nu);
                let work = array(r, "work", work, 4 * nu + nu * nu);
                let iwork = array(r, "iwork", iwork, 4 * nu);
            };
            /// `?gebrd`: reduces the m×n `a` to bidiagonal form QᵀAP; returns
            /// INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires for these dims and `lwork` (−1 = query).
            real gebrd [gebrd] (m: int, n: int, a: mat, lda: int, d: mat, e: mat,
                tauq: mat, taup: mat, work: mat, lwork: len, info,)
            /// `?gebrd` on the m×n `a` (`lda`): the bidiagonal's diagonal into `d`
            /// (min(m,n)) and off-diagonal into `e` (min(m,n) − 1), the scalars of Q
            /// and P into `tauq` and `taup` (min(m,n) each); LWORK is `work.len()`.
            /// Returns INFO.
            checked gebrd<T: RealLapack> |r| {
                let k = len(r, "m", m.min(n));
                let a = matrix(r, "a", a, m, n, lda);
                let d = array(r, "d", d, k);
                let e = array(r, "e", e, k.saturating_sub(1));
                let tauq = array(r, "tauq", tauq, k);
                let taup = array(r, "taup", taup, k);
                let (work, lwork) = work_array(r, work);
            };
            /// `?bdsdc` with `UPLO = 'U'`, `COMPQ = 'I'`: the SVD of an upper
            /// bidiagonal matrix, singular vectors into `u` and `vt`; returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires: `d` holds n, `e` n − 1, `u` and `vt` are n×n,
            /// `work` 3n² + 4n, `iwork` 8n.
            real bdsdc [bdsdc] (uplo = char b'U', compq = char b'I', n: int, d: mat,
                e: mat, u: mat, ldu: int, vt: mat, ldvt: int, q = scratch mat,
                iq = scratch int, work: mat, iwork: ints, info,)
            /// `?bdsdc` with UPLO = 'U', COMPQ = 'I': the SVD of the n×n upper
            /// bidiagonal matrix with diagonal `d` (n, singular values out) and
            /// superdiagonal `e` (n−1), singular vectors into `u` and `vt` (n×n at
            /// `ldu`, `ldvt`); `work` holds 3n² + 4n and `iwork` 8n. Returns INFO.
            checked bdsdc<T: RealLapack> |r| {
                let nu = len(r, "n", n);
                let d = array(r, "d", d, nu);
                let e = array(r, "e", e, nu.saturating_sub(1));
                let u = matrix(r, "u", u, n, n, ldu);
                let vt = matrix(r, "vt", vt, n, n, ldvt);
                let work = array(r, "work", work, 3 * nu * nu + 4 * nu);
                let iwork = array(r, "iwork", iwork, 8 * nu);
            };
            /// `?ormbr`: applies the Q (`vect` 'Q') or P (`vect` 'P') of `?gebrd`
            /// to `c` from `side`, transposed with `trans` 'T'; returns INFO.
            ///
            /// # Safety
            ///
            /// As LAPACK requires for these dims and `lwork` (−1 = query).
            real ormbr [ormbr] (vect: char, side: char, trans: char, m: int, n: int,
                k: int, a: cmat, lda: int, tau: cmat, c: mat, ldc: int, work: mat,
                lwork: len, info,)
            /// `?ormbr`: applies `?gebrd`'s Q (`vect` 'Q') or P ('P'), from the
            /// reflectors in `a` (`lda`) and `tau` (min(nq,k)), to the m×n `c` (`ldc`)
            /// from `side`, transposed with `trans` 'T'; LWORK is `work.len()`.
            /// Returns INFO.
            checked ormbr<T: RealLapack> |r| {
                // `a` holds the reflectors `vect` names.
                let nq = if side == b'L' { m } else { n };
                let (rows, cols) = ormbr_reflectors(vect, nq, k);
                let a = matrix(r, "a", a, rows, cols, lda);
                let tau = array(r, "tau", tau, len(r, "k", nq.min(k)));
                let c = matrix(r, "c", c, m, n, ldc);
                let (work, lwork) = work_array(r, work);
            };
        );
    };
}
pub(crate) use lapack_routines;

/// Writes what [`lapack_routines!`] describes; see there.
macro_rules! bind_routines {
    // ---- Picking the table's entries for a mode, under the routine's name.
    (@entries $mode:tt [$($acc:tt)*]) => {
        $crate::ffi::bind_routines!(@emit $mode $($acc)*);
    };
    (@entries $mode:tt $acc:tt $(#[$doc:meta])* $tag:ident $method:ident [$($sym:ident),+]
        ($($p:tt)*) $(#[$cdoc:meta])* checked $checked:ident<T: $bound:ident> |$r:ident| $body:tt;
        $($rest:tt)*) => {
        $crate::ffi::bind_routines!(@take $mode $tag [$($sym),+] $acc
            [[$(#[$doc])*] $method ($($p)*) [[$(#[$cdoc])*] $checked $bound $r $body]]
            $($rest)*);
    };
    (@take [struct real] common [$s:ident, $c:ident] [$($acc:tt)*] [$($e:tt)*] $($rest:tt)*) => {
        $crate::ffi::bind_routines!(@entries [struct real] [$($acc)* {$s $($e)*}] $($rest)*);
    };
    (@take [struct real] real [$s:ident] [$($acc:tt)*] [$($e:tt)*] $($rest:tt)*) => {
        $crate::ffi::bind_routines!(@entries [struct real] [$($acc)* {$s $($e)*}] $($rest)*);
    };
    (@take [struct complex] common [$s:ident, $c:ident] [$($acc:tt)*] [$($e:tt)*] $($rest:tt)*) => {
        $crate::ffi::bind_routines!(@entries [struct complex] [$($acc)* {$c $($e)*}] $($rest)*);
    };
    (@take [struct complex] complex [$c:ident] [$($acc:tt)*] [$($e:tt)*] $($rest:tt)*) => {
        $crate::ffi::bind_routines!(@entries [struct complex] [$($acc)* {$c $($e)*}] $($rest)*);
    };
    (@take [decl common] common [$s:ident, $c:ident] [$($acc:tt)*] [$($e:tt)*] $($rest:tt)*) => {
        $crate::ffi::bind_routines!(@entries [decl common] [$($acc)* {$s $($e)*}] $($rest)*);
    };
    (@take [decl only real] real [$s:ident] [$($acc:tt)*] [$($e:tt)*] $($rest:tt)*) => {
        $crate::ffi::bind_routines!(@entries [decl only real] [$($acc)* {$s $($e)*}] $($rest)*);
    };
    (@take [decl only complex] complex [$c:ident] [$($acc:tt)*] [$($e:tt)*] $($rest:tt)*) => {
        $crate::ffi::bind_routines!(@entries [decl only complex] [$($acc)* {$c $($e)*}] $($rest)*);
    };
    (@take [impl common real $set:ident] common [$s:ident, $c:ident] [$($acc:tt)*] [$($e:tt)*]
        $($rest:tt)*) => {
        $crate::ffi::bind_routines!(@entries [impl common real $set] [$($acc)* {$s $($e)*}]
            $($rest)*);
    };
    (@take [impl common complex $set:ident] common [$s:ident, $c:ident] [$($acc:tt)*]
        [$($e:tt)*] $($rest:tt)*) => {
        $crate::ffi::bind_routines!(@entries [impl common complex $set] [$($acc)* {$c $($e)*}]
            $($rest)*);
    };
    (@take [impl only real $set:ident] real [$s:ident] [$($acc:tt)*] [$($e:tt)*] $($rest:tt)*) => {
        $crate::ffi::bind_routines!(@entries [impl only real $set] [$($acc)* {$s $($e)*}]
            $($rest)*);
    };
    (@take [impl only complex $set:ident] complex [$c:ident] [$($acc:tt)*] [$($e:tt)*]
        $($rest:tt)*) => {
        $crate::ffi::bind_routines!(@entries [impl only complex $set] [$($acc)* {$c $($e)*}]
            $($rest)*);
    };
    (@take [lwork] $tag:ident $syms:tt [$($acc:tt)*] [$($e:tt)*] $($rest:tt)*) => {
        $crate::ffi::bind_routines!(@entries [lwork] [$($acc)* {$tag $($e)*}] $($rest)*);
    };
    (@take [checked] $tag:ident $syms:tt [$($acc:tt)*] [$($e:tt)*] $($rest:tt)*) => {
        $crate::ffi::bind_routines!(@entries [checked] [$($acc)* {$tag $($e)*}] $($rest)*);
    };
    (@take $mode:tt $tag:ident $syms:tt $acc:tt $e:tt $($rest:tt)*) => {
        $crate::ffi::bind_routines!(@entries $mode $acc $($rest)*);
    };

    // ---- What each mode writes from its entries.
    (@emit [struct real] $({$sym:ident $docs:tt $method:ident ($($p:tt)*) $chk:tt})*) => {
        /// The routines of one real type (`s` or `d`).
        pub struct RealRoutines<T> {
            $(
                #[doc = concat!("`?", stringify!($sym), "_`")]
                pub $sym: $crate::ffi::bind_routines!(@p [fn_type] real [] [] [] [] [] [] [] $($p)*),
            )*
        }
        $crate::ffi::bind_routines!(@load RealRoutines<T> $($sym)*);
    };
    (@emit [struct complex] $({$sym:ident $docs:tt $method:ident ($($p:tt)*) $chk:tt})*) => {
        /// The routines of one complex type (`c` or `z`); `R` is its real part.
        pub struct ComplexRoutines<T, R> {
            $(
                #[doc = concat!("`?", stringify!($sym), "_`")]
                pub $sym: $crate::ffi::bind_routines!(@p [fn_type] complex [] [] [] [] [] [] [] $($p)*),
            )*
        }
        $crate::ffi::bind_routines!(@load ComplexRoutines<T, R> $($sym)*);
    };
    (@load $name:ident<$($g:ident),+> $($sym:ident)*) => {
        // Written out: `derive` cannot see through the fields' type macros.
        impl<$($g),+> Clone for $name<$($g),+> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<$($g),+> Copy for $name<$($g),+> {}
        impl<$($g),+> $name<$($g),+> {
            /// Resolves every routine as `{prefix}{p}{routine}_` (`p` is `s`,
            /// `d`, `c` or `z`), in the table's order.
            ///
            /// # Safety
            ///
            /// As [`LapackSymbols::load`], for the element types `p` names;
            /// the pointers must not outlive `library`.
            unsafe fn load(
                library: &Library,
                prefix: &str,
                p: &str,
            ) -> Result<Self, (String, libloading::Error)> {
                // SAFETY: each field's type is the Fortran interface of the
                // routine of its name (the table), for the element type of `p`
                // (the caller's promise); the caller keeps `library` alive.
                unsafe {
                    Ok(Self {
                        $($sym: symbol(library, &format!("{prefix}{p}{}_", stringify!($sym)))?,)*
                    })
                }
            }
        }
    };
    (@emit [decl $($group:ident)+]
        $({$sym:ident [$(#[$doc:meta])*] $method:ident ($($p:tt)*) $chk:tt})*) => {
        $($crate::ffi::bind_routines!(@p [decl [$(#[$doc])*] $method] complex
            [] [] [] [] [] [] [] $($p)*);)*
    };
    (@emit [impl $group:ident $variant:ident $set:ident]
        $({$sym:ident $docs:tt $method:ident ($($p:tt)*) $chk:tt})*) => {
        $($crate::ffi::bind_routines!(@p [impl $set $method $sym] $variant
            [] [] [] [] [] [] [] $($p)*);)*
    };
    (@emit [checked] $({$tag:ident $docs:tt $method:ident ($($p:tt)*) $chk:tt})*) => {
        $($crate::ffi::bind_routines!(@c [$method $chk] [] [] [] $($p)*);)*
    };
    (@emit [lwork] $({$tag:ident $docs:tt $method:ident ($($p:tt)*)
        [$cdocs:tt $checked:ident $bound:ident $r:ident $body:tt]})*) => {
        $($crate::ffi::bind_routines!(@q [$method $checked $bound] {q w} [] [] [] $($p)*);)*
    };

    // ---- One routine's workspace query, its parameters munched into: the
    // function's parameters (the dims), the call's arguments (stand-ins
    // for the arrays, −1 for the lengths), the lengths.
    (@q [$method:ident $checked:ident $bound:ident] {$q:ident $w:ident} [$($s:tt)*] [$($a:tt)*]
        [$lwork:ident]) => {
        #[doc = concat!("The optimal LWORK of [`", stringify!($checked), "`](super::",
            stringify!($checked), ") for these dims, at least 1.")]
        pub(crate) fn $checked<T: $bound>(l: &$crate::ffi::LapackSymbols, $($s)*) -> usize {
            // SAFETY: a workspace query (LWORK = −1) reads only the dims and
            // writes the first element of WORK (and of RWORK and IWORK where
            // the routine has them); every other array is a stand-in of
            // `QueryArrays`, a valid array of its own.
            query_lwork(|$q, $w| unsafe { T::$method(l, $($a)*) })
        }
    };
    (@q $h:tt {$q:ident $w:ident} $s:tt $a:tt $lens:tt) => {};
    (@q $h:tt {$q:ident $w:ident} $s:tt [$($a:tt)*] [$($l:tt)*]
        work: mat, $n:ident: len, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@q $h {$q $w} $s [$($a)* $w, -1,] [$($l)* $n] $($rest)*}
    };
    (@q $h:tt {$q:ident $w:ident} [$($s:tt)*] [$($a:tt)*] $l:tt $n:ident: char, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@q $h {$q $w} [$($s)* $n: u8,] [$($a)* $n,] $l $($rest)*}
    };
    (@q $h:tt {$q:ident $w:ident} [$($s:tt)*] [$($a:tt)*] $l:tt $n:ident: int, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@q $h {$q $w} [$($s)* $n: $crate::ffi::lapack_int,]
            [$($a)* $n,] $l $($rest)*}
    };
    (@q $h:tt {$q:ident $w:ident} $s:tt [$($a:tt)*] [$($l:tt)*]
        $n:ident: $(cx)? len, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@q $h {$q $w} $s [$($a)* -1,] [$($l)* $n] $($rest)*}
    };
    (@q $h:tt {$q:ident $w:ident} $s:tt [$($a:tt)*] $l:tt $n:ident: val, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@q $h {$q $w} $s [$($a)* T::default(),] $l $($rest)*}
    };
    (@q $h:tt {$q:ident $w:ident} $s:tt [$($a:tt)*] $l:tt $n:ident: $(re)? mat, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@q $h {$q $w} $s [$($a)* $q.t(),] $l $($rest)*}
    };
    (@q $h:tt {$q:ident $w:ident} $s:tt [$($a:tt)*] $l:tt $n:ident: cmat, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@q $h {$q $w} $s [$($a)* $q.t(),] $l $($rest)*}
    };
    (@q $h:tt {$q:ident $w:ident} $s:tt [$($a:tt)*] $l:tt $n:ident: $(cx)? reals, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@q $h {$q $w} $s [$($a)* $q.r(),] $l $($rest)*}
    };
    (@q $h:tt {$q:ident $w:ident} $s:tt [$($a:tt)*] $l:tt $n:ident: ints, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@q $h {$q $w} $s [$($a)* $q.i(),] $l $($rest)*}
    };
    (@q $h:tt {$q:ident $w:ident} $s:tt $a:tt $l:tt $n:ident = $kind:ident, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@q $h {$q $w} $s $a $l $($rest)*}
    };
    (@q $h:tt {$q:ident $w:ident} $s:tt $a:tt $l:tt $n:ident = $kind:ident $c:tt, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@q $h {$q $w} $s $a $l $($rest)*}
    };
    (@q $h:tt {$q:ident $w:ident} $s:tt $a:tt $l:tt $info:ident, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@q $h {$q $w} $s $a $l $($rest)*}
    };

    // ---- One routine's safe function, its parameters munched into: the
    // function's parameters, the call's arguments, INFO.
    (@c $h:tt $s:tt $a:tt []) => {
        $crate::ffi::bind_routines! {@c_fn $h $s $a []}
    };
    (@c $h:tt $s:tt $a:tt [$info:ident]) => {
        $crate::ffi::bind_routines! {@c_fn $h $s $a [-> $crate::ffi::lapack_int]}
    };
    (@c_fn [$method:ident [[$(#[$doc:meta])*] $checked:ident $bound:ident $r:ident {$($body:tt)*}]]
        [$($s:tt)*] [$($a:tt)*] [$($ret:tt)*]) => {
        $(#[$doc])*
        pub(crate) fn $checked<T: $bound>(l: &$crate::ffi::LapackSymbols, $($s)*) $($ret)* {
            let $r = stringify!($method);
            $($body)*
            // SAFETY: every array argument is a pointer that a check of the
            // table's entry handed out (a slice is not a pointer, so none is
            // passed unchecked): `matrix`, `array` and `work_array` only once
            // the slice holds what the routine references for these dims and
            // options, `or_dummy` a valid element where it references none;
            // every `len` argument is its workspace's length.
            unsafe { T::$method(l, $($a)*) }
        }
    };
    (@c $h:tt [$($s:tt)*] [$($a:tt)*] $i:tt $n:ident: char, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@c $h [$($s)* $n: u8,] [$($a)* $n,] $i $($rest)*}
    };
    (@c $h:tt [$($s:tt)*] [$($a:tt)*] $i:tt $n:ident: int, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@c $h [$($s)* $n: $crate::ffi::lapack_int,] [$($a)* $n,] $i
            $($rest)*}
    };
    (@c $h:tt $s:tt [$($a:tt)*] $i:tt $n:ident: $(cx)? len, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@c $h $s [$($a)* $n,] $i $($rest)*}
    };
    (@c $h:tt [$($s:tt)*] [$($a:tt)*] $i:tt $n:ident: val, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@c $h [$($s)* $n: T,] [$($a)* $n,] $i $($rest)*}
    };
    (@c $h:tt [$($s:tt)*] [$($a:tt)*] $i:tt $n:ident: $(re)? mat, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@c $h [$($s)* $n: &mut [T],] [$($a)* $n,] $i $($rest)*}
    };
    (@c $h:tt [$($s:tt)*] [$($a:tt)*] $i:tt $n:ident: cmat, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@c $h [$($s)* $n: &[T],] [$($a)* $n,] $i $($rest)*}
    };
    (@c $h:tt [$($s:tt)*] [$($a:tt)*] $i:tt $n:ident: $(cx)? reals, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@c $h [$($s)* $n: &mut [T::Real],] [$($a)* $n,] $i
            $($rest)*}
    };
    (@c $h:tt [$($s:tt)*] [$($a:tt)*] $i:tt $n:ident: ints, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@c $h [$($s)* $n: &mut [$crate::ffi::lapack_int],]
            [$($a)* $n,] $i $($rest)*}
    };
    (@c $h:tt $s:tt $a:tt $i:tt $n:ident = $kind:ident, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@c $h $s $a $i $($rest)*}
    };
    (@c $h:tt $s:tt $a:tt $i:tt $n:ident = $kind:ident $c:tt, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@c $h $s $a $i $($rest)*}
    };
    (@c $h:tt $s:tt $a:tt [] $info:ident, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@c $h $s $a [$info] $($rest)*}
    };

    // ---- One routine's parameters, munched into: method parameters,
    // Fortran argument types, call arguments, hidden length types and
    // values, method parameters the routine ignores, INFO.
    (@p [fn_type] $v:ident $d:tt [$($f:tt)*] $a:tt [$($lt:tt)*] $la:tt $u:tt $r:tt) => {
        unsafe extern "C" fn($($f)* $($lt)*)
    };
    (@p [decl [$(#[$doc:meta])*] $method:ident] $v:ident [$($d:tt)*] $f:tt $a:tt $lt:tt $la:tt
        $u:tt []) => {
        $(#[$doc])*
        unsafe fn $method(l: &$crate::ffi::LapackSymbols, $($d)*);
    };
    (@p [decl [$(#[$doc:meta])*] $method:ident] $v:ident [$($d:tt)*] $f:tt $a:tt $lt:tt $la:tt
        $u:tt [$info:ident]) => {
        $(#[$doc])*
        unsafe fn $method(l: &$crate::ffi::LapackSymbols, $($d)*) -> $crate::ffi::lapack_int;
    };
    (@p [impl $set:ident $method:ident $sym:ident] $v:ident [$($d:tt)*] $f:tt [$($a:tt)*] $lt:tt
        [$($la:tt)*] [$($u:ident)*] []) => {
        unsafe fn $method(l: &$crate::ffi::LapackSymbols, $($d)*) {
            $(let _ = $u;)*
            // SAFETY: the caller guarantees the arrays, as the method's
            // `# Safety` asks; scalars and characters are locals or constants
            // that outlive the call.
            unsafe { (l.$set.$sym)($($a)* $($la)*) }
        }
    };
    (@p [impl $set:ident $method:ident $sym:ident] $v:ident [$($d:tt)*] $f:tt [$($a:tt)*] $lt:tt
        [$($la:tt)*] [$($u:ident)*] [$info:ident]) => {
        unsafe fn $method(l: &$crate::ffi::LapackSymbols, $($d)*) -> $crate::ffi::lapack_int {
            $(let _ = $u;)*
            let mut $info = 0;
            // SAFETY: the caller guarantees the arrays, as the method's
            // `# Safety` asks; scalars, characters and INFO are locals or
            // constants that outlive the call; what the routine does not
            // reference with these options (`?gees`' SELECT and BWORK with
            // SORT = 'N', `?bdsdc`'s Q and IQ with COMPQ = 'I') is NULL or a
            // scratch element.
            unsafe { (l.$set.$sym)($($a)* $($la)*) };
            $info
        }
    };
    (@p $o:tt real $d:tt $f:tt $a:tt $lt:tt $la:tt $u:tt $r:tt $n:ident: re mat, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o real $d $f $a $lt $la $u $r $n: mat, $($rest)*}
    };
    (@p $o:tt complex [$($d:tt)*] $f:tt $a:tt $lt:tt $la:tt [$($u:tt)*] $r:tt
        $n:ident: re mat, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o complex [$($d)* $n: *mut Self,] $f $a $lt $la
            [$($u)* $n] $r $($rest)*}
    };
    (@p $o:tt $v:ident $d:tt $f:tt $a:tt $lt:tt $la:tt $u:tt $r:tt $n:ident: len, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o $v $d $f $a $lt $la $u $r $n: int, $($rest)*}
    };
    (@p $o:tt $v:ident $d:tt $f:tt $a:tt $lt:tt $la:tt $u:tt $r:tt
        $n:ident: cx len, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o $v $d $f $a $lt $la $u $r $n: cx int, $($rest)*}
    };
    (@p $o:tt $v:ident [$($d:tt)*] [$($f:tt)*] [$($a:tt)*] [$($lt:tt)*] [$($la:tt)*] $u:tt $r:tt
        $n:ident: char, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o $v [$($d)* $n: u8,] [$($f)* Ch,]
            [$($a)* $crate::ffi::ch(&$n),] [$($lt)* Len,] [$($la)* 1,] $u $r $($rest)*}
    };
    (@p $o:tt $v:ident [$($d:tt)*] [$($f:tt)*] [$($a:tt)*] $lt:tt $la:tt $u:tt $r:tt
        $n:ident: int, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o $v [$($d)* $n: $crate::ffi::lapack_int,] [$($f)* I,]
            [$($a)* &$n,] $lt $la $u $r $($rest)*}
    };
    (@p $o:tt $v:ident [$($d:tt)*] [$($f:tt)*] [$($a:tt)*] $lt:tt $la:tt $u:tt $r:tt
        $n:ident: val, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o $v [$($d)* $n: Self,] [$($f)* *const T,]
            [$($a)* &$n,] $lt $la $u $r $($rest)*}
    };
    (@p $o:tt $v:ident [$($d:tt)*] [$($f:tt)*] [$($a:tt)*] $lt:tt $la:tt $u:tt $r:tt
        $n:ident: mat, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o $v [$($d)* $n: *mut Self,] [$($f)* *mut T,]
            [$($a)* $n,] $lt $la $u $r $($rest)*}
    };
    (@p $o:tt $v:ident [$($d:tt)*] [$($f:tt)*] [$($a:tt)*] $lt:tt $la:tt $u:tt $r:tt
        $n:ident: cmat, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o $v [$($d)* $n: *const Self,] [$($f)* *const T,]
            [$($a)* $n,] $lt $la $u $r $($rest)*}
    };
    (@p $o:tt real [$($d:tt)*] [$($f:tt)*] [$($a:tt)*] $lt:tt $la:tt $u:tt $r:tt
        $n:ident: reals, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o real [$($d)* $n: *mut Self::Real,] [$($f)* *mut T,]
            [$($a)* $n,] $lt $la $u $r $($rest)*}
    };
    (@p $o:tt complex [$($d:tt)*] [$($f:tt)*] [$($a:tt)*] $lt:tt $la:tt $u:tt $r:tt
        $n:ident: reals, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o complex [$($d)* $n: *mut Self::Real,] [$($f)* *mut R,]
            [$($a)* $n,] $lt $la $u $r $($rest)*}
    };
    (@p $o:tt $v:ident [$($d:tt)*] [$($f:tt)*] [$($a:tt)*] $lt:tt $la:tt $u:tt $r:tt
        $n:ident: ints, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o $v [$($d)* $n: *mut $crate::ffi::lapack_int,]
            [$($f)* IMut,] [$($a)* $n,] $lt $la $u $r $($rest)*}
    };
    (@p $o:tt real [$($d:tt)*] $f:tt $a:tt $lt:tt $la:tt [$($u:tt)*] $r:tt
        $n:ident: cx reals, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o real [$($d)* $n: *mut Self::Real,] $f $a $lt $la
            [$($u)* $n] $r $($rest)*}
    };
    (@p $o:tt real [$($d:tt)*] $f:tt $a:tt $lt:tt $la:tt [$($u:tt)*] $r:tt
        $n:ident: cx int, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o real [$($d)* $n: $crate::ffi::lapack_int,] $f $a $lt
            $la [$($u)* $n] $r $($rest)*}
    };
    (@p $o:tt complex $d:tt $f:tt $a:tt $lt:tt $la:tt $u:tt $r:tt
        $n:ident: cx $kind:ident, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o complex $d $f $a $lt $la $u $r $n: $kind, $($rest)*}
    };
    (@p $o:tt $v:ident $d:tt [$($f:tt)*] [$($a:tt)*] [$($lt:tt)*] [$($la:tt)*] $u:tt $r:tt
        $n:ident = char $c:tt, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o $v $d [$($f)* Ch,] [$($a)* $crate::ffi::ch(&$c),]
            [$($lt)* Len,] [$($la)* 1,] $u $r $($rest)*}
    };
    (@p $o:tt $v:ident $d:tt [$($f:tt)*] [$($a:tt)*] $lt:tt $la:tt $u:tt $r:tt
        $n:ident = one, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o $v $d [$($f)* *const T,]
            [$($a)* &Self::from_real(1.0),] $lt $la $u $r $($rest)*}
    };
    (@p $o:tt $v:ident $d:tt [$($f:tt)*] [$($a:tt)*] $lt:tt $la:tt $u:tt $r:tt
        $n:ident = none, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o $v $d [$($f)* lapack_select,] [$($a)* None,]
            $lt $la $u $r $($rest)*}
    };
    (@p $o:tt $v:ident $d:tt [$($f:tt)*] [$($a:tt)*] $lt:tt $la:tt $u:tt $r:tt
        $n:ident = null, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o $v $d [$($f)* IMut,]
            [$($a)* ::std::ptr::null_mut(),] $lt $la $u $r $($rest)*}
    };
    (@p $o:tt $v:ident $d:tt [$($f:tt)*] [$($a:tt)*] $lt:tt $la:tt $u:tt $r:tt
        $n:ident = scratch mat, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o $v $d [$($f)* *mut T,]
            [$($a)* &mut Self::default(),] $lt $la $u $r $($rest)*}
    };
    (@p $o:tt $v:ident $d:tt [$($f:tt)*] [$($a:tt)*] $lt:tt $la:tt $u:tt $r:tt
        $n:ident = scratch int, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o $v $d [$($f)* IMut,] [$($a)* &mut 0,]
            $lt $la $u $r $($rest)*}
    };
    (@p $o:tt $v:ident $d:tt [$($f:tt)*] [$($a:tt)*] $lt:tt $la:tt $u:tt []
        $info:ident, $($rest:tt)*) => {
        $crate::ffi::bind_routines! {@p $o $v $d [$($f)* IMut,] [$($a)* &mut $info,]
            $lt $la $u [$info] $($rest)*}
    };
}
pub(crate) use bind_routines;

/// Pointer to a character argument.
pub(crate) fn ch(c: &u8) -> *const c_char {
    (c as *const u8).cast()
}

lapack_routines!(struct real);
lapack_routines!(struct complex);

/// Every symbol cyxla uses, resolved from one library that stays loaded.
pub struct LapackSymbols {
    /// `s*` routines (f32).
    pub s: RealRoutines<f32>,
    /// `d*` routines (f64).
    pub d: RealRoutines<f64>,
    /// `c*` routines (complex f32).
    pub c: ComplexRoutines<Complex<f32>, f32>,
    /// `z*` routines (complex f64).
    pub z: ComplexRoutines<Complex<f64>, f64>,
    /// `openblas_set_num_threads`, when the library is OpenBLAS.
    pub openblas_set_num_threads: Option<openblas_set_num_threads_t>,
    /// `openblas_get_num_threads`, when the library is OpenBLAS.
    pub openblas_get_num_threads: Option<openblas_get_num_threads_t>,
    /// `blas_thread_shutdown_`, when the library is OpenBLAS with its own
    /// thread server (never prefixed).
    pub blas_thread_shutdown: Option<blas_thread_shutdown_t>,
    /// `openblas_get_config`, when the library is OpenBLAS.
    pub openblas_get_config: Option<openblas_get_config_t>,
    /// `openblas_get_corename`, when the library is OpenBLAS.
    pub openblas_get_corename: Option<openblas_get_corename_t>,
    /// Keeps every pointer above valid: the library is never unloaded while
    /// this struct lives.
    _library: Library,
}

/// Resolves `name` from `library` as a `T`.
///
/// # Safety
///
/// `T` must be the exact function-pointer type of the symbol `name`, and the
/// returned pointer must not outlive `library`.
unsafe fn symbol<T: Copy>(library: &Library, name: &str) -> Result<T, (String, libloading::Error)> {
    // SAFETY: the caller guarantees `T` is the symbol's type; the pointer is
    // copied out of the `Symbol` and its lifetime is the caller's concern.
    unsafe { library.get::<T>(name).map(|s| *s) }.map_err(|e| (name.to_owned(), e))
}

/// Prefixes that OpenBLAS builds put before every exported name: none
/// (Debian's and OpenBLAS's default), and `scipy_` (the `scipy-openblas32`
/// wheel that numpy and scipy bundle, e.g. `scipy_dgetrf_`,
/// `scipy_openblas_set_num_threads`).
pub const SYMBOL_PREFIXES: [&str; 2] = ["", "scipy_"];

/// The prefix of `library`'s names: the first of [`SYMBOL_PREFIXES`] under
/// which it exports `dgetrf_` (none if it exports none: the load then fails
/// naming the unprefixed routine).
fn symbol_prefix(library: &Library) -> &'static str {
    SYMBOL_PREFIXES
        .into_iter()
        .find(|prefix| {
            // SAFETY: only looked up, never called.
            unsafe { symbol::<unsafe extern "C" fn()>(library, &format!("{prefix}dgetrf_")) }
                .is_ok()
        })
        .unwrap_or("")
}

impl LapackSymbols {
    /// Resolves every routine from `library` and takes ownership of it.
    ///
    /// # Errors
    ///
    /// The first symbol that is missing, with libloading's error.
    ///
    /// # Safety
    ///
    /// `library` must export the LAPACK and BLAS routines with the gfortran,
    /// LP64 interface described in the module docs (any OpenBLAS or
    /// reference LAPACK built with gfortran without `-fdefault-integer-8`).
    pub unsafe fn load(library: Library) -> Result<LapackSymbols, (String, libloading::Error)> {
        let prefix = symbol_prefix(&library);
        // SAFETY: the caller's promise covers every routine of the table;
        // the library outlives the pointers because it is stored in the same
        // `LapackSymbols`.
        let (s, d, c, z) = unsafe {
            (
                RealRoutines::load(&library, prefix, "s")?,
                RealRoutines::load(&library, prefix, "d")?,
                ComplexRoutines::load(&library, prefix, "c")?,
                ComplexRoutines::load(&library, prefix, "z")?,
            )
        };
        // SAFETY: these are OpenBLAS's C extensions with the declared
        // prototypes (`cblas.h`); absent from other LAPACKs, hence optional.
        let (
            openblas_set_num_threads,
            openblas_get_num_threads,
            openblas_get_config,
            openblas_get_corename,
        ) = unsafe {
            (
                symbol::<openblas_set_num_threads_t>(
                    &library,
                    &format!("{prefix}openblas_set_num_threads"),
                )
                .ok(),
                symbol::<openblas_get_num_threads_t>(
                    &library,
                    &format!("{prefix}openblas_get_num_threads"),
                )
                .ok(),
                symbol::<openblas_get_config_t>(&library, &format!("{prefix}openblas_get_config"))
                    .ok(),
                symbol::<openblas_get_corename_t>(
                    &library,
                    &format!("{prefix}openblas_get_corename"),
                )
                .ok(),
            )
        };
        Ok(LapackSymbols {
            s,
            d,
            c,
            z,
            openblas_set_num_threads,
            openblas_get_num_threads,
            // SAFETY: OpenBLAS's `int blas_thread_shutdown_(void)`.
            blas_thread_shutdown: unsafe {
                symbol::<blas_thread_shutdown_t>(&library, "blas_thread_shutdown_")
            }
            .ok(),
            openblas_get_config,
            openblas_get_corename,
            _library: library,
        })
    }
}
