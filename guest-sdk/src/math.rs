//! Float functions that `core` lacks on stable Rust (`f32::sqrt` needs
//! `std`). On wasm32 with `simd128` they compile to the single wasm
//! instruction (`f32.sqrt`, `f64.sqrt`); elsewhere they use the `libm` crate.

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
}
