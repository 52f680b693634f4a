//! The four LAPACK element types (`s`, `d`, `c`, `z`) behind one trait.
//!
//! [`Scalar`] gives the kernels a dtype-independent view of the routines in
//! [`LapackSymbols`]: one method per routine, taking raw pointers exactly as
//! LAPACK does and returning `INFO`. Real and complex routines differ only
//! by their `RWORK` arrays, which the real versions ignore. `?geev` and
//! `?gees` return different outputs for real and complex types and live on
//! [`RealLapack`] and [`ComplexLapack`].

use std::fmt::Debug;
use std::ops::{Add, Div, Mul, Neg, Sub};

use num_complex::Complex;

use crate::ffi::{LapackSymbols, lapack_int};
use plugin_glue::dtype::DType;

/// An element type with a fixed XLA dtype, so a buffer can be viewed as
/// `[Self]` after a dtype check.
pub(crate) trait Elem: Copy + Send + Sync + 'static {
    /// The XLA dtype of `Self`.
    const DTYPE: DType;
}

macro_rules! elem {
    ($($t:ty => $d:ident),*) => { $(impl Elem for $t { const DTYPE: DType = DType::$d; })* };
}
elem!(i32 => S32, i64 => S64, f32 => F32, f64 => F64, Complex<f32> => C64, Complex<f64> => C128);

/// One of LAPACK's four element types.
pub(crate) trait Scalar:
    Elem
    + Default
    + Debug
    + PartialEq
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// The real counterpart (`Self` for real types).
    type Real: RealScalar;
    /// Whether the type is complex.
    const IS_COMPLEX: bool;
    /// The `TRANS` character that selects Qᵀ (real) or Qᴴ (complex).
    const ADJOINT: u8;
    /// Whether the Rust kernels for small matrices (`small`, `small_eigh`)
    /// serve this type (the real types).
    const RUST_KERNELS: bool = false;
    /// What one flop of this type costs relative to an f64 flop, for the
    /// estimates that decide on threads: single precision runs about twice
    /// as fast, and a complex flop is about four real ones.
    const FLOP_COST: f64 =
        std::mem::size_of::<Self>() as f64 / 8.0 * if Self::IS_COMPLEX { 2.0 } else { 1.0 };

    /// `r + 0i`.
    fn from_real(r: Self::Real) -> Self;
    /// The real part.
    fn re(self) -> Self::Real;
    /// |self| (the modulus for complex types).
    fn abs(self) -> Self::Real;
    /// Whether every component is finite.
    fn is_finite(self) -> bool;
    /// `self · r` for a real `r` (componentwise for complex types).
    fn scale(self, r: Self::Real) -> Self;
    /// The value LAPACK writes as a workspace size, as an element count.
    fn work_size(self) -> usize {
        self.re().real_work_size()
    }

    /// [`small::getrf`](crate::small::getrf) for the real types;
    /// `None` (call LAPACK) for the complex ones.
    fn getrf_small(m: usize, n: usize, a: &mut [Self], ipiv: &mut [i32]) -> Option<i32> {
        let _ = (m, n, a, ipiv);
        None
    }

    /// [`small_eigh::syevd`](crate::small_eigh::syevd) for the real
    /// types; `None` (call LAPACK) for the complex ones.
    fn syevd_small(
        uplo: u8,
        n: usize,
        a: &mut [Self],
        w: &mut [Self::Real],
        work: &mut crate::small_eigh::Work<Self::Real>,
    ) -> Option<i32> {
        let _ = (uplo, n, a, w, work);
        None
    }

    /// [`split::syevd`](crate::syevd::split::syevd) for the real
    /// types; `Ok(None)` (call `?heevd`) for the complex ones.
    fn syevd_split(
        ctx: &crate::call::Ctx<'_>,
        uplo: u8,
        n: usize,
        a: &mut [Self],
        w: &mut [Self::Real],
    ) -> Result<Option<i32>, plugin_glue::handler::HandlerError> {
        let _ = (ctx, uplo, n, a, w);
        Ok(None)
    }

    /// [`split::gesdd`](crate::gesdd::split::gesdd) for the real
    /// types; `Ok(None)` (call `?gesdd`) for the complex ones.
    fn gesdd_split(
        ctx: &crate::call::Ctx<'_>,
        n: usize,
        a: &mut [Self],
        s: &mut [Self::Real],
        u: &mut [Self],
        vt: &mut [Self],
    ) -> Result<Option<i32>, plugin_glue::handler::HandlerError> {
        let _ = (ctx, n, a, s, u, vt);
        Ok(None)
    }

    /// [`small::getrf_group`](crate::small::getrf_group) for the
    /// real types (`true` when done); `false` (nothing done: factor one at a
    /// time) for the complex ones.
    fn getrf_small_group(n: usize, a: &mut [Self], ipiv: &mut [i32], info: &mut [i32]) -> bool {
        let _ = (n, a, ipiv, info);
        false
    }

    /// [`small::trsm`](crate::small::trsm) for the real types
    /// (returns `true`); `false` (nothing done: call LAPACK) for the complex
    /// ones.
    #[expect(clippy::too_many_arguments, reason = "mirrors the BLAS routine")]
    fn trsm_small(
        side: u8,
        uplo: u8,
        trans: u8,
        diag: u8,
        m: usize,
        n: usize,
        a: &[Self],
        b: &mut [Self],
    ) -> bool {
        let _ = (side, uplo, trans, diag, m, n, a, b);
        false
    }

    /// `?trsm` with `alpha = 1`.
    ///
    /// # Safety
    ///
    /// The pointers and leading dimensions must describe valid matrices of
    /// the sizes `?trsm` reads and writes for these arguments.
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn trsm(
        l: &LapackSymbols,
        side: u8,
        uplo: u8,
        trans: u8,
        diag: u8,
        m: lapack_int,
        n: lapack_int,
        a: *const Self,
        lda: lapack_int,
        b: *mut Self,
        ldb: lapack_int,
    );
    /// `?getrf`; returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires: `a` holds `lda·n` elements, `ipiv` `min(m,n)`.
    unsafe fn getrf(
        l: &LapackSymbols,
        m: lapack_int,
        n: lapack_int,
        a: *mut Self,
        lda: lapack_int,
        ipiv: *mut lapack_int,
    ) -> lapack_int;
    /// `?potrf`; returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires: `a` holds `lda·n` elements.
    unsafe fn potrf(
        l: &LapackSymbols,
        uplo: u8,
        n: lapack_int,
        a: *mut Self,
        lda: lapack_int,
    ) -> lapack_int;
    /// `?geqrf`; returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires for these dims and `lwork` (−1 = query).
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn geqrf(
        l: &LapackSymbols,
        m: lapack_int,
        n: lapack_int,
        a: *mut Self,
        lda: lapack_int,
        tau: *mut Self,
        work: *mut Self,
        lwork: lapack_int,
    ) -> lapack_int;
    /// `?geqp3` (`rwork`, 2n reals, is ignored for real types); returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires for these dims and `lwork` (−1 = query).
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn geqp3(
        l: &LapackSymbols,
        m: lapack_int,
        n: lapack_int,
        a: *mut Self,
        lda: lapack_int,
        jpvt: *mut lapack_int,
        tau: *mut Self,
        work: *mut Self,
        lwork: lapack_int,
        rwork: *mut Self::Real,
    ) -> lapack_int;
    /// `?orgqr` / `?ungqr`; returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires for these dims and `lwork` (−1 = query).
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn orgqr(
        l: &LapackSymbols,
        m: lapack_int,
        n: lapack_int,
        k: lapack_int,
        a: *mut Self,
        lda: lapack_int,
        tau: *const Self,
        work: *mut Self,
        lwork: lapack_int,
    ) -> lapack_int;
    /// `?ormqr` / `?unmqr`; returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires for these dims and `lwork` (−1 = query). `a` is
    /// written to temporarily and restored.
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn ormqr(
        l: &LapackSymbols,
        side: u8,
        trans: u8,
        m: lapack_int,
        n: lapack_int,
        k: lapack_int,
        a: *mut Self,
        lda: lapack_int,
        tau: *const Self,
        c: *mut Self,
        ldc: lapack_int,
        work: *mut Self,
        lwork: lapack_int,
    ) -> lapack_int;
    /// `?syevd` / `?heevd` (`rwork` ignored for real types); returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires for these dims and workspace sizes (−1 = query).
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn syevd(
        l: &LapackSymbols,
        jobz: u8,
        uplo: u8,
        n: lapack_int,
        a: *mut Self,
        lda: lapack_int,
        w: *mut Self::Real,
        work: *mut Self,
        lwork: lapack_int,
        rwork: *mut Self::Real,
        lrwork: lapack_int,
        iwork: *mut lapack_int,
        liwork: lapack_int,
    ) -> lapack_int;
    /// `?gesdd` (`rwork` ignored for real types); returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires for these dims and workspace sizes (−1 = query).
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn gesdd(
        l: &LapackSymbols,
        jobz: u8,
        m: lapack_int,
        n: lapack_int,
        a: *mut Self,
        lda: lapack_int,
        s: *mut Self::Real,
        u: *mut Self,
        ldu: lapack_int,
        vt: *mut Self,
        ldvt: lapack_int,
        work: *mut Self,
        lwork: lapack_int,
        rwork: *mut Self::Real,
        iwork: *mut lapack_int,
    ) -> lapack_int;
    /// `?gesvd` with `jobu = jobvt = job` (`rwork` ignored for real types);
    /// returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires for these dims and workspace sizes (−1 = query).
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn gesvd(
        l: &LapackSymbols,
        job: u8,
        m: lapack_int,
        n: lapack_int,
        a: *mut Self,
        lda: lapack_int,
        s: *mut Self::Real,
        u: *mut Self,
        ldu: lapack_int,
        vt: *mut Self,
        ldvt: lapack_int,
        work: *mut Self,
        lwork: lapack_int,
        rwork: *mut Self::Real,
    ) -> lapack_int;
    /// `?gehrd`; returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires for these dims and `lwork` (−1 = query).
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn gehrd(
        l: &LapackSymbols,
        n: lapack_int,
        ilo: lapack_int,
        ihi: lapack_int,
        a: *mut Self,
        lda: lapack_int,
        tau: *mut Self,
        work: *mut Self,
        lwork: lapack_int,
    ) -> lapack_int;
    /// `?sytrd` / `?hetrd`; returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires for these dims and `lwork` (−1 = query).
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn sytrd(
        l: &LapackSymbols,
        uplo: u8,
        n: lapack_int,
        a: *mut Self,
        lda: lapack_int,
        d: *mut Self::Real,
        e: *mut Self::Real,
        tau: *mut Self,
        work: *mut Self,
        lwork: lapack_int,
    ) -> lapack_int;
    /// `?gtsv`; returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires: `dl`, `du` hold n−1 elements, `d` n, `b` `ldb·nrhs`.
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn gtsv(
        l: &LapackSymbols,
        n: lapack_int,
        nrhs: lapack_int,
        dl: *mut Self,
        d: *mut Self,
        du: *mut Self,
        b: *mut Self,
        ldb: lapack_int,
    ) -> lapack_int;
}

/// `f32` or `f64`.
pub(crate) trait RealScalar: Scalar<Real = Self> + PartialOrd {
    /// Machine epsilon.
    const EPSILON: Self;
    /// The smallest positive normal number.
    const MIN_POSITIVE: Self;
    /// The largest finite number.
    const MAX: Self;
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// NaN.
    const NAN: Self;
    /// As `f64`, exactly.
    fn to_f64(self) -> f64;
    /// A workspace size LAPACK reported in this type, rounded up so that an
    /// `f32` that lost low bits never makes the workspace too small.
    fn real_work_size(self) -> usize;
    /// The square root.
    fn sqrt(self) -> Self;
    /// |self| with the sign (bit) of `sign`.
    fn copysign(self, sign: Self) -> Self;
    /// Whether `self` is NaN.
    fn is_nan(self) -> bool;
    /// The larger of the two (the other one if either is NaN).
    fn max(self, other: Self) -> Self;
}

impl RealScalar for f32 {
    const EPSILON: f32 = f32::EPSILON;
    const MIN_POSITIVE: f32 = f32::MIN_POSITIVE;
    const MAX: f32 = f32::MAX;
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    const NAN: f32 = f32::NAN;
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn real_work_size(self) -> usize {
        work_size_f64(f64::from(self) * (1.0 + f64::from(f32::EPSILON)))
    }
    fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }
    fn copysign(self, sign: f32) -> f32 {
        f32::copysign(self, sign)
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    fn max(self, other: f32) -> f32 {
        f32::max(self, other)
    }
}

impl RealScalar for f64 {
    const EPSILON: f64 = f64::EPSILON;
    const MIN_POSITIVE: f64 = f64::MIN_POSITIVE;
    const MAX: f64 = f64::MAX;
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    const NAN: f64 = f64::NAN;
    fn to_f64(self) -> f64 {
        self
    }
    fn real_work_size(self) -> usize {
        work_size_f64(self)
    }
    fn sqrt(self) -> f64 {
        f64::sqrt(self)
    }
    fn copysign(self, sign: f64) -> f64 {
        f64::copysign(self, sign)
    }
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    fn max(self, other: f64) -> f64 {
        f64::max(self, other)
    }
}

/// `ceil(w)`, at least 1; NaN or negative give 1.
fn work_size_f64(w: f64) -> usize {
    if w.is_finite() && w >= 1.0 {
        // Saturating float-to-int cast; a size beyond `lapack_int` is caught
        // when the workspace length is converted back.
        w.ceil() as usize
    } else {
        1
    }
}

/// `?geev` and `?gees` of the real types (`wr` and `wi` outputs).
pub(crate) trait RealLapack: RealScalar {
    /// `?geev`; returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires for these dims and `lwork` (−1 = query).
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn geev(
        l: &LapackSymbols,
        jobvl: u8,
        jobvr: u8,
        n: lapack_int,
        a: *mut Self,
        lda: lapack_int,
        wr: *mut Self,
        wi: *mut Self,
        vl: *mut Self,
        ldvl: lapack_int,
        vr: *mut Self,
        ldvr: lapack_int,
        work: *mut Self,
        lwork: lapack_int,
    ) -> lapack_int;
    /// `?gees` with `SORT = 'N'`; returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires for these dims and `lwork` (−1 = query).
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn gees(
        l: &LapackSymbols,
        jobvs: u8,
        n: lapack_int,
        a: *mut Self,
        lda: lapack_int,
        sdim: *mut lapack_int,
        wr: *mut Self,
        wi: *mut Self,
        vs: *mut Self,
        ldvs: lapack_int,
        work: *mut Self,
        lwork: lapack_int,
    ) -> lapack_int;
    /// `?stedc` (`compz` 'I': eigenvectors of the tridiagonal matrix into
    /// `z`); returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires for these dims, `lwork` and `liwork` (−1 = query).
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn stedc(
        l: &LapackSymbols,
        compz: u8,
        n: lapack_int,
        d: *mut Self,
        e: *mut Self,
        z: *mut Self,
        ldz: lapack_int,
        work: *mut Self,
        lwork: lapack_int,
        iwork: *mut lapack_int,
        liwork: lapack_int,
    ) -> lapack_int;
    /// `?laed1`: the eigensystem of a block-diagonal tridiagonal matrix
    /// plus a rank-one term, from the eigensystems of its two blocks;
    /// returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires: `d` holds n, `q` is n×n (`ldq`), `indxq` n,
    /// `work` 4n + n², `iwork` 4n.
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn laed1(
        l: &LapackSymbols,
        n: lapack_int,
        d: *mut Self,
        q: *mut Self,
        ldq: lapack_int,
        indxq: *mut lapack_int,
        rho: Self,
        cutpnt: lapack_int,
        work: *mut Self,
        iwork: *mut lapack_int,
    ) -> lapack_int;
    /// `?gebrd`: reduces the m×n `a` to bidiagonal form QᵀAP; returns
    /// INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires for these dims and `lwork` (−1 = query).
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn gebrd(
        l: &LapackSymbols,
        m: lapack_int,
        n: lapack_int,
        a: *mut Self,
        lda: lapack_int,
        d: *mut Self,
        e: *mut Self,
        tauq: *mut Self,
        taup: *mut Self,
        work: *mut Self,
        lwork: lapack_int,
    ) -> lapack_int;
    /// `?bdsdc` with `UPLO = 'U'`, `COMPQ = 'I'`: the SVD of an upper
    /// bidiagonal matrix, singular vectors into `u` and `vt`; returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires: `d` holds n, `e` n − 1, `u` and `vt` are n×n,
    /// `work` 3n² + 4n, `iwork` 8n.
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn bdsdc(
        l: &LapackSymbols,
        n: lapack_int,
        d: *mut Self,
        e: *mut Self,
        u: *mut Self,
        ldu: lapack_int,
        vt: *mut Self,
        ldvt: lapack_int,
        work: *mut Self,
        iwork: *mut lapack_int,
    ) -> lapack_int;
    /// `?ormbr`: applies the Q (`vect` 'Q') or P (`vect` 'P') of `?gebrd`
    /// to `c` from `side`, transposed with `trans` 'T'; returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires for these dims and `lwork` (−1 = query).
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn ormbr(
        l: &LapackSymbols,
        vect: u8,
        side: u8,
        trans: u8,
        m: lapack_int,
        n: lapack_int,
        k: lapack_int,
        a: *const Self,
        lda: lapack_int,
        tau: *const Self,
        c: *mut Self,
        ldc: lapack_int,
        work: *mut Self,
        lwork: lapack_int,
    ) -> lapack_int;
    /// `?ormtr` with `SIDE = 'L'`, `TRANS = 'N'`: `c` := Q·`c` for the Q of
    /// `?sytrd`; returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires for these dims and `lwork` (−1 = query).
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn ormtr(
        l: &LapackSymbols,
        uplo: u8,
        m: lapack_int,
        n: lapack_int,
        a: *const Self,
        lda: lapack_int,
        tau: *const Self,
        c: *mut Self,
        ldc: lapack_int,
        work: *mut Self,
        lwork: lapack_int,
    ) -> lapack_int;
}

/// `?geev` and `?gees` of the complex types (`w` output, `rwork`).
pub(crate) trait ComplexLapack: Scalar {
    /// `?geev`; `rwork` holds 2n reals. Returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires for these dims and `lwork` (−1 = query).
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn geev(
        l: &LapackSymbols,
        jobvl: u8,
        jobvr: u8,
        n: lapack_int,
        a: *mut Self,
        lda: lapack_int,
        w: *mut Self,
        vl: *mut Self,
        ldvl: lapack_int,
        vr: *mut Self,
        ldvr: lapack_int,
        work: *mut Self,
        lwork: lapack_int,
        rwork: *mut Self::Real,
    ) -> lapack_int;
    /// `?gees` with `SORT = 'N'`; `rwork` holds n reals. Returns INFO.
    ///
    /// # Safety
    ///
    /// As LAPACK requires for these dims and `lwork` (−1 = query).
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    unsafe fn gees(
        l: &LapackSymbols,
        jobvs: u8,
        n: lapack_int,
        a: *mut Self,
        lda: lapack_int,
        sdim: *mut lapack_int,
        w: *mut Self,
        vs: *mut Self,
        ldvs: lapack_int,
        work: *mut Self,
        lwork: lapack_int,
        rwork: *mut Self::Real,
    ) -> lapack_int;
}

mod routines;
