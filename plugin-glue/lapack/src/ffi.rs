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
//!   (`?trsm`, `?getrf`, `?potrf`) ignore the extra arguments, which the
//!   x86_64 SysV convention makes harmless;
//! * `LOGICAL` is a 4-byte integer and a `LOGICAL FUNCTION` argument (the
//!   `SELECT` of `?gees`) is a function pointer, which may be NULL when
//!   `SORT = 'N'` because LAPACK never calls it then.
//!
//! Nothing here is linked: [`LapackSymbols::load`] resolves every symbol from
//! a [`libloading::Library`] and keeps the library alive beside the pointers,
//! under the library's name prefix ([`SYMBOL_PREFIXES`]: none, or `scipy_`
//! for the OpenBLAS that numpy and scipy wheels bundle, which has the same
//! gfortran LP64 interface).
#![expect(
    non_camel_case_types,
    reason = "raw Fortran routine types keep their LAPACK names"
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

/// `?TRSM(SIDE, UPLO, TRANSA, DIAG, M, N, ALPHA, A, LDA, B, LDB)`.
pub type trsm_t<T> = unsafe extern "C" fn(
    Ch,
    Ch,
    Ch,
    Ch,
    I,
    I,
    *const T,
    *const T,
    I,
    *mut T,
    I,
    Len,
    Len,
    Len,
    Len,
);
/// `?GETRF(M, N, A, LDA, IPIV, INFO)`.
pub type getrf_t<T> = unsafe extern "C" fn(I, I, *mut T, I, IMut, IMut);
/// `?POTRF(UPLO, N, A, LDA, INFO)`.
pub type potrf_t<T> = unsafe extern "C" fn(Ch, I, *mut T, I, IMut, Len);
/// `?GEQRF(M, N, A, LDA, TAU, WORK, LWORK, INFO)`.
pub type geqrf_t<T> = unsafe extern "C" fn(I, I, *mut T, I, *mut T, *mut T, I, IMut);
/// Real `?GEQP3(M, N, A, LDA, JPVT, TAU, WORK, LWORK, INFO)`.
pub type geqp3_real_t<T> = unsafe extern "C" fn(I, I, *mut T, I, IMut, *mut T, *mut T, I, IMut);
/// Complex `?GEQP3(M, N, A, LDA, JPVT, TAU, WORK, LWORK, RWORK, INFO)`.
pub type geqp3_complex_t<T, R> =
    unsafe extern "C" fn(I, I, *mut T, I, IMut, *mut T, *mut T, I, *mut R, IMut);
/// `?ORGQR` / `?UNGQR(M, N, K, A, LDA, TAU, WORK, LWORK, INFO)`.
pub type orgqr_t<T> = unsafe extern "C" fn(I, I, I, *mut T, I, *const T, *mut T, I, IMut);
/// `?ORMQR` / `?UNMQR(SIDE, TRANS, M, N, K, A, LDA, TAU, C, LDC, WORK, LWORK, INFO)`.
pub type ormqr_t<T> = unsafe extern "C" fn(
    Ch,
    Ch,
    I,
    I,
    I,
    *mut T,
    I,
    *const T,
    *mut T,
    I,
    *mut T,
    I,
    IMut,
    Len,
    Len,
);
/// `?SYEVD(JOBZ, UPLO, N, A, LDA, W, WORK, LWORK, IWORK, LIWORK, INFO)`.
pub type syevd_t<T> =
    unsafe extern "C" fn(Ch, Ch, I, *mut T, I, *mut T, *mut T, I, IMut, I, IMut, Len, Len);
/// `?HEEVD(JOBZ, UPLO, N, A, LDA, W, WORK, LWORK, RWORK, LRWORK, IWORK, LIWORK, INFO)`.
pub type heevd_t<T, R> = unsafe extern "C" fn(
    Ch,
    Ch,
    I,
    *mut T,
    I,
    *mut R,
    *mut T,
    I,
    *mut R,
    I,
    IMut,
    I,
    IMut,
    Len,
    Len,
);
/// Real `?GESDD(JOBZ, M, N, A, LDA, S, U, LDU, VT, LDVT, WORK, LWORK, IWORK, INFO)`.
pub type gesdd_real_t<T> = unsafe extern "C" fn(
    Ch,
    I,
    I,
    *mut T,
    I,
    *mut T,
    *mut T,
    I,
    *mut T,
    I,
    *mut T,
    I,
    IMut,
    IMut,
    Len,
);
/// Complex `?GESDD(JOBZ, M, N, A, LDA, S, U, LDU, VT, LDVT, WORK, LWORK, RWORK, IWORK, INFO)`.
pub type gesdd_complex_t<T, R> = unsafe extern "C" fn(
    Ch,
    I,
    I,
    *mut T,
    I,
    *mut R,
    *mut T,
    I,
    *mut T,
    I,
    *mut T,
    I,
    *mut R,
    IMut,
    IMut,
    Len,
);
/// Real `?GESVD(JOBU, JOBVT, M, N, A, LDA, S, U, LDU, VT, LDVT, WORK, LWORK, INFO)`.
pub type gesvd_real_t<T> = unsafe extern "C" fn(
    Ch,
    Ch,
    I,
    I,
    *mut T,
    I,
    *mut T,
    *mut T,
    I,
    *mut T,
    I,
    *mut T,
    I,
    IMut,
    Len,
    Len,
);
/// Complex `?GESVD(JOBU, JOBVT, M, N, A, LDA, S, U, LDU, VT, LDVT, WORK, LWORK, RWORK, INFO)`.
pub type gesvd_complex_t<T, R> = unsafe extern "C" fn(
    Ch,
    Ch,
    I,
    I,
    *mut T,
    I,
    *mut R,
    *mut T,
    I,
    *mut T,
    I,
    *mut T,
    I,
    *mut R,
    IMut,
    Len,
    Len,
);
/// Real `?GEEV(JOBVL, JOBVR, N, A, LDA, WR, WI, VL, LDVL, VR, LDVR, WORK, LWORK, INFO)`.
pub type geev_real_t<T> = unsafe extern "C" fn(
    Ch,
    Ch,
    I,
    *mut T,
    I,
    *mut T,
    *mut T,
    *mut T,
    I,
    *mut T,
    I,
    *mut T,
    I,
    IMut,
    Len,
    Len,
);
/// Complex `?GEEV(JOBVL, JOBVR, N, A, LDA, W, VL, LDVL, VR, LDVR, WORK, LWORK, RWORK, INFO)`.
pub type geev_complex_t<T, R> = unsafe extern "C" fn(
    Ch,
    Ch,
    I,
    *mut T,
    I,
    *mut T,
    *mut T,
    I,
    *mut T,
    I,
    *mut T,
    I,
    *mut R,
    IMut,
    Len,
    Len,
);
/// Real `?GEES(JOBVS, SORT, SELECT, N, A, LDA, SDIM, WR, WI, VS, LDVS, WORK, LWORK, BWORK, INFO)`.
pub type gees_real_t<T> = unsafe extern "C" fn(
    Ch,
    Ch,
    lapack_select,
    I,
    *mut T,
    I,
    IMut,
    *mut T,
    *mut T,
    *mut T,
    I,
    *mut T,
    I,
    IMut,
    IMut,
    Len,
    Len,
);
/// Complex `?GEES(JOBVS, SORT, SELECT, N, A, LDA, SDIM, W, VS, LDVS, WORK, LWORK, RWORK, BWORK, INFO)`.
pub type gees_complex_t<T, R> = unsafe extern "C" fn(
    Ch,
    Ch,
    lapack_select,
    I,
    *mut T,
    I,
    IMut,
    *mut T,
    *mut T,
    I,
    *mut T,
    I,
    *mut R,
    IMut,
    IMut,
    Len,
    Len,
);
/// `?GEHRD(N, ILO, IHI, A, LDA, TAU, WORK, LWORK, INFO)`.
pub type gehrd_t<T> = unsafe extern "C" fn(I, I, I, *mut T, I, *mut T, *mut T, I, IMut);
/// `?SYTRD` / `?HETRD(UPLO, N, A, LDA, D, E, TAU, WORK, LWORK, INFO)`.
pub type sytrd_t<T, R> =
    unsafe extern "C" fn(Ch, I, *mut T, I, *mut R, *mut R, *mut T, *mut T, I, IMut, Len);
/// Real `?STEDC(COMPZ, N, D, E, Z, LDZ, WORK, LWORK, IWORK, LIWORK, INFO)`.
pub type stedc_real_t<T> =
    unsafe extern "C" fn(Ch, I, *mut T, *mut T, *mut T, I, *mut T, I, IMut, I, IMut, Len);
/// Real `?GEBRD(M, N, A, LDA, D, E, TAUQ, TAUP, WORK, LWORK, INFO)`.
pub type gebrd_real_t<T> =
    unsafe extern "C" fn(I, I, *mut T, I, *mut T, *mut T, *mut T, *mut T, *mut T, I, IMut);
/// Real `?BDSDC(UPLO, COMPQ, N, D, E, U, LDU, VT, LDVT, Q, IQ, WORK, IWORK, INFO)`.
pub type bdsdc_t<T> = unsafe extern "C" fn(
    Ch,
    Ch,
    I,
    *mut T,
    *mut T,
    *mut T,
    I,
    *mut T,
    I,
    *mut T,
    IMut,
    *mut T,
    IMut,
    IMut,
    Len,
    Len,
);
/// `?ORMBR(VECT, SIDE, TRANS, M, N, K, A, LDA, TAU, C, LDC, WORK, LWORK, INFO)`.
pub type ormbr_t<T> = unsafe extern "C" fn(
    Ch,
    Ch,
    Ch,
    I,
    I,
    I,
    *const T,
    I,
    *const T,
    *mut T,
    I,
    *mut T,
    I,
    IMut,
    Len,
    Len,
    Len,
);
/// Real `?LAED1(N, D, Q, LDQ, INDXQ, RHO, CUTPNT, WORK, IWORK, INFO)`.
pub type laed1_t<T> =
    unsafe extern "C" fn(I, *mut T, *mut T, I, IMut, *const T, I, *mut T, IMut, IMut);
/// `?ORMTR(SIDE, UPLO, TRANS, M, N, A, LDA, TAU, C, LDC, WORK, LWORK, INFO)`.
pub type ormtr_t<T> = unsafe extern "C" fn(
    Ch,
    Ch,
    Ch,
    I,
    I,
    *const T,
    I,
    *const T,
    *mut T,
    I,
    *mut T,
    I,
    IMut,
    Len,
    Len,
    Len,
);
/// `?GTSV(N, NRHS, DL, D, DU, B, LDB, INFO)`.
pub type gtsv_t<T> = unsafe extern "C" fn(I, I, *mut T, *mut T, *mut T, *mut T, I, IMut);
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

/// The routines of one real type (`s` or `d`).
#[derive(Clone, Copy)]
pub struct RealRoutines<T> {
    /// `?trsm_`
    pub trsm: trsm_t<T>,
    /// `?getrf_`
    pub getrf: getrf_t<T>,
    /// `?potrf_`
    pub potrf: potrf_t<T>,
    /// `?geqrf_`
    pub geqrf: geqrf_t<T>,
    /// `?geqp3_`
    pub geqp3: geqp3_real_t<T>,
    /// `?orgqr_`
    pub orgqr: orgqr_t<T>,
    /// `?ormqr_`
    pub ormqr: ormqr_t<T>,
    /// `?syevd_`
    pub syevd: syevd_t<T>,
    /// `?gesdd_`
    pub gesdd: gesdd_real_t<T>,
    /// `?gesvd_`
    pub gesvd: gesvd_real_t<T>,
    /// `?geev_`
    pub geev: geev_real_t<T>,
    /// `?gees_`
    pub gees: gees_real_t<T>,
    /// `?gehrd_`
    pub gehrd: gehrd_t<T>,
    /// `?sytrd_`
    pub sytrd: sytrd_t<T, T>,
    /// `?gtsv_`
    pub gtsv: gtsv_t<T>,
    /// `?stedc_`
    pub stedc: stedc_real_t<T>,
    /// `?ormtr_`
    pub ormtr: ormtr_t<T>,
    /// `?laed1_`
    pub laed1: laed1_t<T>,
    /// `?gebrd_`
    pub gebrd: gebrd_real_t<T>,
    /// `?bdsdc_`
    pub bdsdc: bdsdc_t<T>,
    /// `?ormbr_`
    pub ormbr: ormbr_t<T>,
}

/// The routines of one complex type (`c` or `z`); `R` is its real part.
#[derive(Clone, Copy)]
pub struct ComplexRoutines<T, R> {
    /// `?trsm_`
    pub trsm: trsm_t<T>,
    /// `?getrf_`
    pub getrf: getrf_t<T>,
    /// `?potrf_`
    pub potrf: potrf_t<T>,
    /// `?geqrf_`
    pub geqrf: geqrf_t<T>,
    /// `?geqp3_`
    pub geqp3: geqp3_complex_t<T, R>,
    /// `?ungqr_`
    pub ungqr: orgqr_t<T>,
    /// `?unmqr_`
    pub unmqr: ormqr_t<T>,
    /// `?heevd_`
    pub heevd: heevd_t<T, R>,
    /// `?gesdd_`
    pub gesdd: gesdd_complex_t<T, R>,
    /// `?gesvd_`
    pub gesvd: gesvd_complex_t<T, R>,
    /// `?geev_`
    pub geev: geev_complex_t<T, R>,
    /// `?gees_`
    pub gees: gees_complex_t<T, R>,
    /// `?gehrd_`
    pub gehrd: gehrd_t<T>,
    /// `?hetrd_`
    pub hetrd: sytrd_t<T, R>,
    /// `?gtsv_`
    pub gtsv: gtsv_t<T>,
}

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
            // SAFETY: only looked up, never called; the type is the
            // routine's.
            unsafe { symbol::<getrf_t<f64>>(library, &format!("{prefix}dgetrf_")) }.is_ok()
        })
        .unwrap_or("")
}

macro_rules! load_routines {
    ($lib:expr, $prefix:expr, $p:literal, { $($field:ident = $name:literal),* $(,)? }) => {
        // SAFETY: each field's type is the Fortran interface of the routine
        // named `$prefix$p$name_` (see the type aliases above); the library
        // outlives the pointers because it is stored in the same
        // `LapackSymbols`.
        unsafe {
            Ok::<_, (String, libloading::Error)>(($(
                symbol(&$lib, &format!("{}{}", $prefix, concat!($p, $name, "_")))?,
            )*))
        }
    };
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
        macro_rules! real {
            ($p:literal) => {{
                let (trsm, getrf, potrf, geqrf, geqp3, orgqr, ormqr, syevd, gesdd, gesvd, geev, gees, gehrd, sytrd, gtsv, stedc, ormtr, laed1, gebrd, bdsdc, ormbr) =
                    load_routines!(library, prefix, $p, {
                        trsm = "trsm", getrf = "getrf", potrf = "potrf", geqrf = "geqrf",
                        geqp3 = "geqp3", orgqr = "orgqr", ormqr = "ormqr", syevd = "syevd",
                        gesdd = "gesdd", gesvd = "gesvd", geev = "geev", gees = "gees",
                        gehrd = "gehrd", sytrd = "sytrd", gtsv = "gtsv", stedc = "stedc",
                        ormtr = "ormtr", laed1 = "laed1", gebrd = "gebrd", bdsdc = "bdsdc",
                        ormbr = "ormbr",
                    })?;
                RealRoutines {
                    trsm, getrf, potrf, geqrf, geqp3, orgqr, ormqr, syevd, gesdd, gesvd, geev, gees,
                    gehrd, sytrd, gtsv, stedc, ormtr, laed1, gebrd, bdsdc, ormbr,
                }
            }};
        }
        macro_rules! complex {
            ($p:literal) => {{
                let (trsm, getrf, potrf, geqrf, geqp3, ungqr, unmqr, heevd, gesdd, gesvd, geev, gees, gehrd, hetrd, gtsv) =
                    load_routines!(library, prefix, $p, {
                        trsm = "trsm", getrf = "getrf", potrf = "potrf", geqrf = "geqrf",
                        geqp3 = "geqp3", ungqr = "ungqr", unmqr = "unmqr", heevd = "heevd",
                        gesdd = "gesdd", gesvd = "gesvd", geev = "geev", gees = "gees",
                        gehrd = "gehrd", hetrd = "hetrd", gtsv = "gtsv",
                    })?;
                ComplexRoutines { trsm, getrf, potrf, geqrf, geqp3, ungqr, unmqr, heevd, gesdd, gesvd, geev, gees, gehrd, hetrd, gtsv }
            }};
        }
        let s = real!("s");
        let d = real!("d");
        let c = complex!("c");
        let z = complex!("z");
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
