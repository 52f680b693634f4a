//! The implementations of [`LapackScalar`], [`RealLapack`] and [`ComplexLapack`]
//! for `f32`, `f64`, `Complex<f32>` and `Complex<f64>`. The LAPACK methods
//! come from the table of [`lapack_routines!`](crate::ffi::lapack_routines):
//! each passes its arguments by reference to the matching routine of
//! [`LapackSymbols`](crate::ffi::LapackSymbols), adds gfortran's hidden
//! character lengths (all 1) and returns `INFO`.

use num_complex::Complex;

use super::{ComplexLapack, LapackScalar, RealLapack};

macro_rules! real_scalar {
    ($t:ty, $r:ident) => {
        impl LapackScalar for $t {
            type Real = $t;
            const IS_COMPLEX: bool = false;
            const ADJOINT: u8 = b'T';
            fn from_real(r: $t) -> $t {
                r
            }
            fn re(self) -> $t {
                self
            }
            fn abs(self) -> $t {
                <$t>::abs(self)
            }
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            fn scale(self, r: $t) -> $t {
                self * r
            }
            crate::ffi::lapack_routines!(impl common real $r);
        }

        impl RealLapack for $t {
            crate::ffi::lapack_routines!(impl only real $r);
        }
    };
}

macro_rules! complex_scalar {
    ($r:ty, $z:ident) => {
        impl LapackScalar for Complex<$r> {
            type Real = $r;
            const IS_COMPLEX: bool = true;
            const ADJOINT: u8 = b'C';
            fn from_real(r: $r) -> Self {
                Complex::new(r, 0.0)
            }
            fn re(self) -> $r {
                self.re
            }
            fn abs(self) -> $r {
                self.norm()
            }
            fn is_finite(self) -> bool {
                self.re.is_finite() && self.im.is_finite()
            }
            fn scale(self, r: $r) -> Self {
                Complex::new(self.re * r, self.im * r)
            }

            crate::ffi::lapack_routines!(impl common complex $z);
        }

        impl ComplexLapack for Complex<$r> {
            crate::ffi::lapack_routines!(impl only complex $z);
        }
    };
}

real_scalar!(f32, s);
real_scalar!(f64, d);
complex_scalar!(f32, c);
complex_scalar!(f64, z);
