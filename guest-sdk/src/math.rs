//! Float functions for `no_std` guests: `core` has no `f32::exp`, `ln`,
//! `sin`, ... on stable Rust (they need `std`), so the SDK offers them as
//! free functions named `<function>_f32` / `<function>_f64`, from the `libm`
//! crate (a port of musl's libm: the same results on wasm32 and natively, so
//! a kernel's native unit tests see the bits its guest computes).
//!
//! [`sqrt_f32`] and [`sqrt_f64`] compile to the single wasm instruction
//! (`f32.sqrt`, `f64.sqrt`) on wasm32 with `simd128`; both ways they are
//! correctly rounded, as IEEE 754 requires.
//!
//! ```
//! use cyxla_guest_sdk::math::{erf_f64, exp_f32, log1p_f64, powf_f32, tanh_f32};
//!
//! // GELU, exact form: x/2 * (1 + erf(x / sqrt(2))).
//! let x = 1.5_f64;
//! let gelu = 0.5 * x * (1.0 + erf_f64(x / core::f64::consts::SQRT_2));
//! assert!((gelu - 1.399_789_198).abs() < 1e-8);
//! assert_eq!(exp_f32(0.0), 1.0);
//! assert_eq!(tanh_f32(0.0), 0.0);
//! assert_eq!(powf_f32(2.0, 10.0), 1024.0);
//! assert!((log1p_f64(1e-20) - 1e-20).abs() < 1e-35);
//! ```
//!
//! With `std` (a guest built with `default-features = false`; see the crate
//! docs) the inherent methods (`x.exp()`) are available too, but their
//! implementation may differ from `libm` in the last bit.

/// Square root of `x` (IEEE 754, correctly rounded).
#[inline]
pub fn sqrt_f32(x: f32) -> f32 {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::{f32x4_extract_lane, f32x4_splat, f32x4_sqrt};
        f32x4_extract_lane::<0>(f32x4_sqrt(f32x4_splat(x)))
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        libm::sqrtf(x)
    }
}

/// Square root of `x` (IEEE 754, correctly rounded).
#[inline]
pub fn sqrt_f64(x: f64) -> f64 {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::{f64x2_extract_lane, f64x2_splat, f64x2_sqrt};
        f64x2_extract_lane::<0>(f64x2_sqrt(f64x2_splat(x)))
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        libm::sqrt(x)
    }
}

macro_rules! unary {
    ($($name32:ident $name64:ident $f32:ident $f64:ident $doc:literal;)*) => {$(
        #[doc = concat!("f32: ", $doc, " (`libm::", stringify!($f32), "`).")]
        #[inline]
        pub fn $name32(x: f32) -> f32 {
            libm::$f32(x)
        }

        #[doc = concat!("f64: ", $doc, " (`libm::", stringify!($f64), "`).")]
        #[inline]
        pub fn $name64(x: f64) -> f64 {
            libm::$f64(x)
        }
    )*};
}

macro_rules! binary {
    ($($name32:ident $name64:ident $f32:ident $f64:ident $doc:literal;)*) => {$(
        #[doc = concat!("f32: ", $doc, " (`libm::", stringify!($f32), "`).")]
        #[inline]
        pub fn $name32(x: f32, y: f32) -> f32 {
            libm::$f32(x, y)
        }

        #[doc = concat!("f64: ", $doc, " (`libm::", stringify!($f64), "`).")]
        #[inline]
        pub fn $name64(x: f64, y: f64) -> f64 {
            libm::$f64(x, y)
        }
    )*};
}

unary! {
    exp_f32 exp_f64 expf exp "`e^x`";
    exp2_f32 exp2_f64 exp2f exp2 "`2^x`";
    exp10_f32 exp10_f64 exp10f exp10 "`10^x`";
    expm1_f32 expm1_f64 expm1f expm1 "`e^x - 1`, accurate near 0";
    ln_f32 ln_f64 logf log "the natural logarithm of `x`";
    log2_f32 log2_f64 log2f log2 "the base-2 logarithm of `x`";
    log10_f32 log10_f64 log10f log10 "the base-10 logarithm of `x`";
    log1p_f32 log1p_f64 log1pf log1p "`ln(1 + x)`, accurate near 0";
    cbrt_f32 cbrt_f64 cbrtf cbrt "the cube root of `x`";
    sin_f32 sin_f64 sinf sin "the sine of `x` (radians)";
    cos_f32 cos_f64 cosf cos "the cosine of `x` (radians)";
    tan_f32 tan_f64 tanf tan "the tangent of `x` (radians)";
    asin_f32 asin_f64 asinf asin "the arcsine of `x` (radians)";
    acos_f32 acos_f64 acosf acos "the arccosine of `x` (radians)";
    atan_f32 atan_f64 atanf atan "the arctangent of `x` (radians)";
    sinh_f32 sinh_f64 sinhf sinh "the hyperbolic sine of `x`";
    cosh_f32 cosh_f64 coshf cosh "the hyperbolic cosine of `x`";
    tanh_f32 tanh_f64 tanhf tanh "the hyperbolic tangent of `x`";
    asinh_f32 asinh_f64 asinhf asinh "the inverse hyperbolic sine of `x`";
    acosh_f32 acosh_f64 acoshf acosh "the inverse hyperbolic cosine of `x`";
    atanh_f32 atanh_f64 atanhf atanh "the inverse hyperbolic tangent of `x`";
    erf_f32 erf_f64 erff erf "the error function of `x`";
    erfc_f32 erfc_f64 erfcf erfc "`1 - erf(x)`, accurate for large `x`";
    tgamma_f32 tgamma_f64 tgammaf tgamma "the gamma function of `x`";
    lgamma_f32 lgamma_f64 lgammaf lgamma "`ln|gamma(x)|`";
    floor_f32 floor_f64 floorf floor "the largest integer not above `x`";
    ceil_f32 ceil_f64 ceilf ceil "the smallest integer not below `x`";
    round_f32 round_f64 roundf round "`x` rounded to the nearest integer, halves away from 0";
    trunc_f32 trunc_f64 truncf trunc "`x` rounded towards 0";
    abs_f32 abs_f64 fabsf fabs "the absolute value of `x`";
}

binary! {
    powf_f32 powf_f64 powf pow "`x^y`";
    atan2_f32 atan2_f64 atan2f atan2 "the angle of the point `(y, x)` (argument order as `f32::atan2`: `atan2(y, x)`)";
    hypot_f32 hypot_f64 hypotf hypot "`sqrt(x² + y²)` without undue overflow";
    fmod_f32 fmod_f64 fmodf fmod "the remainder of `x / y`, with the sign of `x` (C's `fmod`, Rust's `%`)";
    min_f32 min_f64 fminf fmin "the smaller of `x` and `y`, ignoring a NaN";
    max_f32 max_f64 fmaxf fmax "the larger of `x` and `y`, ignoring a NaN";
    copysign_f32 copysign_f64 copysignf copysign "`x` with the sign of `y`";
}

/// f32: `x * y + z` rounded once (fused multiply-add, `libm::fmaf`).
#[inline]
pub fn mul_add_f32(x: f32, y: f32, z: f32) -> f32 {
    libm::fmaf(x, y, z)
}

/// f64: `x * y + z` rounded once (fused multiply-add, `libm::fma`).
#[inline]
pub fn mul_add_f64(x: f64, y: f64, z: f64) -> f64 {
    libm::fma(x, y, z)
}

/// f32: `x^n` for an integer `n` (by `libm::powf`, exact for small powers).
#[inline]
pub fn powi_f32(x: f32, n: i32) -> f32 {
    libm::powf(x, n as f32)
}

/// f64: `x^n` for an integer `n` (by `libm::pow`, exact for small powers).
#[inline]
pub fn powi_f64(x: f64, n: i32) -> f64 {
    libm::pow(x, f64::from(n))
}

/// f32: `(sin x, cos x)` (`libm::sincosf`).
#[inline]
pub fn sin_cos_f32(x: f32) -> (f32, f32) {
    libm::sincosf(x)
}

/// f64: `(sin x, cos x)` (`libm::sincos`).
#[inline]
pub fn sin_cos_f64(x: f64) -> (f64, f64) {
    libm::sincos(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_roots() {
        assert_eq!(sqrt_f32(4.0), 2.0);
        assert_eq!(sqrt_f64(2.0), core::f64::consts::SQRT_2);
        assert!(sqrt_f32(-1.0).is_nan());
        assert_eq!(sqrt_f64(0.0), 0.0);
    }

    #[test]
    fn the_usual_functions() {
        assert_eq!(exp_f64(0.0), 1.0);
        assert_eq!(ln_f64(1.0), 0.0);
        assert_eq!(ln_f32(core::f32::consts::E), 1.0);
        assert_eq!(expm1_f64(0.0), 0.0);
        assert_eq!(log1p_f32(0.0), 0.0);
        assert_eq!(tanh_f64(f64::INFINITY), 1.0);
        assert_eq!(erf_f32(0.0), 0.0);
        assert!((erf_f64(1.0) - 0.842_700_792_949_714_9).abs() < 1e-15);
        assert_eq!(powf_f64(3.0, 4.0), 81.0);
        assert_eq!(powi_f32(2.0, -2), 0.25);
        assert_eq!(sin_f64(0.0), 0.0);
        assert_eq!(cos_f32(0.0), 1.0);
        assert_eq!(sin_cos_f64(0.0), (0.0, 1.0));
        assert_eq!(atan2_f64(1.0, 1.0), core::f64::consts::FRAC_PI_4);
        assert_eq!(hypot_f32(3.0, 4.0), 5.0);
        assert_eq!(floor_f64(-1.5), -2.0);
        assert_eq!(round_f32(2.5), 3.0);
        assert_eq!(abs_f32(-0.0).to_bits(), 0);
        assert_eq!(mul_add_f64(2.0, 3.0, 1.0), 7.0);
        assert_eq!(max_f32(f32::NAN, 1.0), 1.0);
        // The same bits as std where both are correctly rounded.
        assert_eq!(sqrt_f64(2.0), 2.0_f64.sqrt());
    }
}
