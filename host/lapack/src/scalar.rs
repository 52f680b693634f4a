//! The four LAPACK element types (`s`, `d`, `c`, `z`) behind one trait.
//!
//! [`LapackScalar`] gives the kernels a dtype-independent view of the routines in
//! [`LapackSymbols`](crate::ffi::LapackSymbols), generated from the table of
//! [`lapack_routines!`](crate::ffi::lapack_routines): one method per routine, taking raw pointers exactly as
//! LAPACK does and returning `INFO`. Real and complex routines differ only
//! by their `RWORK` arrays, which the real versions ignore, and `?geev`'s
//! and `?gees`' `WI`, which the complex versions ignore. The routines only
//! the real types have live on [`RealLapack`].

use std::fmt::Debug;
use std::ops::{Add, Div, Mul, Neg, Sub};

use num_complex::Complex;

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
#[expect(
    clippy::too_many_arguments,
    reason = "each method mirrors its LAPACK routine"
)]
pub(crate) trait LapackScalar:
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

    crate::ffi::lapack_routines!(decl common);
}

/// `f32` or `f64`.
pub(crate) trait RealScalar: LapackScalar<Real = Self> + PartialOrd {
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

/// `RealScalar` for a float type, whose constants and methods are the
/// type's own; `real_work_size` reads a LAPACK workspace size written as
/// `$t` (`|$w| body`).
macro_rules! float_scalar {
    ($t:ident, real_work_size: |$w:ident| $work_size:expr) => {
        impl RealScalar for $t {
            const EPSILON: $t = $t::EPSILON;
            const MIN_POSITIVE: $t = $t::MIN_POSITIVE;
            const MAX: $t = $t::MAX;
            const ZERO: $t = 0.0;
            const ONE: $t = 1.0;
            const NAN: $t = $t::NAN;
            fn to_f64(self) -> f64 {
                f64::from(self)
            }
            fn real_work_size(self) -> usize {
                let $w = self;
                $work_size
            }
            fn sqrt(self) -> $t {
                $t::sqrt(self)
            }
            fn copysign(self, sign: $t) -> $t {
                $t::copysign(self, sign)
            }
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            fn max(self, other: $t) -> $t {
                $t::max(self, other)
            }
        }
    };
}

float_scalar!(f32, real_work_size: |w| work_size_f64(f64::from(w) * (1.0 + f64::from(f32::EPSILON))));
float_scalar!(f64, real_work_size: |w| work_size_f64(w));

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

/// The routines only the real types have: the steps of `?syevd` and
/// `?gesdd` that `split::syevd` and `split::gesdd` call one by one.
#[expect(
    clippy::too_many_arguments,
    reason = "each method mirrors its LAPACK routine"
)]
pub(crate) trait RealLapack: RealScalar {
    crate::ffi::lapack_routines!(decl only real);
}

/// The complex types, for the handlers whose outputs differ from the real
/// types' (`?geev`, `?gees`), and the routines only they have (none yet).
pub(crate) trait ComplexLapack: LapackScalar {
    crate::ffi::lapack_routines!(decl only complex);
}

mod routines;
