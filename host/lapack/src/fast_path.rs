//! The Rust kernels and split drivers that serve some calls of the real
//! types instead of one LAPACK call, behind one trait the families
//! dispatch through.
//!
//! [`FastPath`] sits above [`LapackScalar`] and below the families: its real
//! implementations call down into [`small`], [`small_eigh`] and the
//! `split` drivers of `?syevd` and `?gesdd`; the complex types take its
//! defaults (nothing done: call LAPACK).

use num_complex::Complex;

use crate::call::Ctx;
use crate::scalar::LapackScalar;
use crate::small::Trsm;
use crate::small_eigh::Work;
use crate::{small, small_eigh, split};
use plugin_glue::handler::HandlerError;

/// An element type the families can dispatch to a faster path than one
/// LAPACK call: the Rust kernels for small matrices and the split drivers
/// for a single large one serve the real types.
pub(crate) trait FastPath: LapackScalar {
    /// Whether the Rust kernels for small matrices (`small`, `small_eigh`)
    /// serve this type (the real types).
    const RUST_KERNELS: bool = false;

    /// [`small::getrf`] for the real types; `None` (call LAPACK) for the
    /// complex ones.
    fn getrf_small(m: usize, n: usize, a: &mut [Self], ipiv: &mut [i32]) -> Option<i32> {
        let _ = (m, n, a, ipiv);
        None
    }

    /// [`small_eigh::syevd`] for the real types; `None` (call LAPACK) for
    /// the complex ones.
    fn syevd_small(
        uplo: u8,
        n: usize,
        a: &mut [Self],
        w: &mut [Self::Real],
        work: &mut Work<Self::Real>,
    ) -> Option<i32> {
        let _ = (uplo, n, a, w, work);
        None
    }

    /// [`split::syevd::syevd`] for the real types; `Ok(None)` (call
    /// `?heevd`) for the complex ones.
    fn syevd_split(
        ctx: &Ctx<'_>,
        uplo: u8,
        n: usize,
        a: &mut [Self],
        w: &mut [Self::Real],
    ) -> Result<Option<i32>, HandlerError> {
        let _ = (ctx, uplo, n, a, w);
        Ok(None)
    }

    /// [`split::gesdd::gesdd`] for the real types; `Ok(None)` (call
    /// `?gesdd`) for the complex ones.
    fn gesdd_split(
        ctx: &Ctx<'_>,
        n: usize,
        a: &mut [Self],
        s: &mut [Self::Real],
        u: &mut [Self],
        vt: &mut [Self],
    ) -> Result<Option<i32>, HandlerError> {
        let _ = (ctx, n, a, s, u, vt);
        Ok(None)
    }

    /// [`small::getrf_group`] for the real types (`true` when done);
    /// `false` (nothing done: factor one at a time) for the complex ones.
    fn getrf_small_group(n: usize, a: &mut [Self], ipiv: &mut [i32], info: &mut [i32]) -> bool {
        let _ = (n, a, ipiv, info);
        false
    }

    /// [`small::trsm`] for the real types (returns `true`); `false`
    /// (nothing done: call LAPACK) for the complex ones.
    fn trsm_small(args: Trsm, a: &[Self], b: &mut [Self]) -> bool {
        let _ = (args, a, b);
        false
    }
}

macro_rules! real_fast_path {
    ($t:ty) => {
        impl FastPath for $t {
            const RUST_KERNELS: bool = true;
            fn getrf_small(m: usize, n: usize, a: &mut [$t], ipiv: &mut [i32]) -> Option<i32> {
                Some(small::getrf(m, n, a, ipiv))
            }
            fn syevd_small(
                uplo: u8,
                n: usize,
                a: &mut [$t],
                w: &mut [$t],
                work: &mut Work<$t>,
            ) -> Option<i32> {
                Some(small_eigh::syevd(uplo, n, a, w, work))
            }
            fn syevd_split(
                ctx: &Ctx<'_>,
                uplo: u8,
                n: usize,
                a: &mut [$t],
                w: &mut [$t],
            ) -> Result<Option<i32>, HandlerError> {
                split::syevd::syevd(ctx, uplo, n, a, w)
            }
            fn gesdd_split(
                ctx: &Ctx<'_>,
                n: usize,
                a: &mut [$t],
                s: &mut [$t],
                u: &mut [$t],
                vt: &mut [$t],
            ) -> Result<Option<i32>, HandlerError> {
                split::gesdd::gesdd(ctx, n, a, s, u, vt)
            }
            fn getrf_small_group(
                n: usize,
                a: &mut [$t],
                ipiv: &mut [i32],
                info: &mut [i32],
            ) -> bool {
                small::getrf_group(n, a, ipiv, info)
            }
            fn trsm_small(args: Trsm, a: &[$t], b: &mut [$t]) -> bool {
                small::trsm(args, a, b);
                true
            }
        }
    };
}

real_fast_path!(f32);
real_fast_path!(f64);
impl FastPath for Complex<f32> {}
impl FastPath for Complex<f64> {}
