//! The implementations of [`Scalar`], [`RealLapack`] and [`ComplexLapack`]
//! for `f32`, `f64`, `Complex<f32>` and `Complex<f64>`: each method passes its
//! arguments by reference to the matching routine of [`LapackSymbols`],
//! adds gfortran's hidden character lengths (all 1) and returns `INFO`.

use std::ffi::c_char;

use num_complex::Complex;

use super::{ComplexLapack, RealLapack, RealScalar, Scalar};
use crate::ffi::{LapackSymbols, lapack_int};

/// Pointer to a character argument.
fn ch(c: &u8) -> *const c_char {
    (c as *const u8).cast()
}

macro_rules! common_routines {
    ($r:ident, $orgqr:ident, $ormqr:ident) => {
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
        ) {
            let one = Self::from_real(<Self::Real as RealScalar>::ONE);
            // SAFETY: the caller guarantees the matrices; the scalars are
            // locals that outlive the call.
            unsafe {
                (l.$r.trsm)(
                    ch(&side),
                    ch(&uplo),
                    ch(&trans),
                    ch(&diag),
                    &m,
                    &n,
                    &one,
                    a,
                    &lda,
                    b,
                    &ldb,
                    1,
                    1,
                    1,
                    1,
                )
            }
        }
        unsafe fn getrf(
            l: &LapackSymbols,
            m: lapack_int,
            n: lapack_int,
            a: *mut Self,
            lda: lapack_int,
            ipiv: *mut lapack_int,
        ) -> lapack_int {
            let mut info = 0;
            // SAFETY: the caller guarantees the arrays.
            unsafe { (l.$r.getrf)(&m, &n, a, &lda, ipiv, &mut info) };
            info
        }
        unsafe fn potrf(
            l: &LapackSymbols,
            uplo: u8,
            n: lapack_int,
            a: *mut Self,
            lda: lapack_int,
        ) -> lapack_int {
            let mut info = 0;
            // SAFETY: the caller guarantees the matrix.
            unsafe { (l.$r.potrf)(ch(&uplo), &n, a, &lda, &mut info, 1) };
            info
        }
        unsafe fn geqrf(
            l: &LapackSymbols,
            m: lapack_int,
            n: lapack_int,
            a: *mut Self,
            lda: lapack_int,
            tau: *mut Self,
            work: *mut Self,
            lwork: lapack_int,
        ) -> lapack_int {
            let mut info = 0;
            // SAFETY: the caller guarantees the arrays.
            unsafe { (l.$r.geqrf)(&m, &n, a, &lda, tau, work, &lwork, &mut info) };
            info
        }
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
        ) -> lapack_int {
            let mut info = 0;
            // SAFETY: the caller guarantees the arrays.
            unsafe { (l.$r.$orgqr)(&m, &n, &k, a, &lda, tau, work, &lwork, &mut info) };
            info
        }
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
        ) -> lapack_int {
            let mut info = 0;
            // SAFETY: the caller guarantees the arrays.
            unsafe {
                (l.$r.$ormqr)(
                    ch(&side),
                    ch(&trans),
                    &m,
                    &n,
                    &k,
                    a,
                    &lda,
                    tau,
                    c,
                    &ldc,
                    work,
                    &lwork,
                    &mut info,
                    1,
                    1,
                )
            };
            info
        }
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
        ) -> lapack_int {
            let mut info = 0;
            // SAFETY: the caller guarantees the arrays.
            unsafe { (l.$r.gehrd)(&n, &ilo, &ihi, a, &lda, tau, work, &lwork, &mut info) };
            info
        }
        unsafe fn gtsv(
            l: &LapackSymbols,
            n: lapack_int,
            nrhs: lapack_int,
            dl: *mut Self,
            d: *mut Self,
            du: *mut Self,
            b: *mut Self,
            ldb: lapack_int,
        ) -> lapack_int {
            let mut info = 0;
            // SAFETY: the caller guarantees the arrays.
            unsafe { (l.$r.gtsv)(&n, &nrhs, dl, d, du, b, &ldb, &mut info) };
            info
        }
    };
}

macro_rules! real_scalar {
    ($t:ty, $r:ident) => {
        impl Scalar for $t {
            type Real = $t;
            const IS_COMPLEX: bool = false;
            const ADJOINT: u8 = b'T';
            const RUST_KERNELS: bool = true;
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
            fn syevd_small(
                uplo: u8,
                n: usize,
                a: &mut [$t],
                w: &mut [$t],
                work: &mut crate::small_eigh::Work<$t>,
            ) -> Option<i32> {
                Some(crate::small_eigh::syevd(uplo, n, a, w, work))
            }
            fn syevd_split(
                ctx: &crate::call::Ctx<'_>,
                uplo: u8,
                n: usize,
                a: &mut [$t],
                w: &mut [$t],
            ) -> Result<Option<i32>, plugin_glue::handler::HandlerError> {
                crate::syevd::split::syevd(ctx, uplo, n, a, w)
            }
            fn gesdd_split(
                ctx: &crate::call::Ctx<'_>,
                n: usize,
                a: &mut [$t],
                s: &mut [$t],
                u: &mut [$t],
                vt: &mut [$t],
            ) -> Result<Option<i32>, plugin_glue::handler::HandlerError> {
                crate::gesdd::split::gesdd(ctx, n, a, s, u, vt)
            }
            fn getrf_small_group(
                n: usize,
                a: &mut [$t],
                ipiv: &mut [i32],
                info: &mut [i32],
            ) -> bool {
                crate::small::getrf_group(n, a, ipiv, info)
            }
            fn getrf_small(m: usize, n: usize, a: &mut [$t], ipiv: &mut [i32]) -> Option<i32> {
                Some(crate::small::getrf(m, n, a, ipiv))
            }
            fn trsm_small(
                side: u8,
                uplo: u8,
                trans: u8,
                diag: u8,
                m: usize,
                n: usize,
                a: &[$t],
                b: &mut [$t],
            ) -> bool {
                crate::small::trsm(side, uplo, trans, diag, m, n, a, b);
                true
            }

            common_routines!($r, orgqr, ormqr);

            unsafe fn geqp3(
                l: &LapackSymbols,
                m: lapack_int,
                n: lapack_int,
                a: *mut $t,
                lda: lapack_int,
                jpvt: *mut lapack_int,
                tau: *mut $t,
                work: *mut $t,
                lwork: lapack_int,
                _rwork: *mut $t,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays.
                unsafe { (l.$r.geqp3)(&m, &n, a, &lda, jpvt, tau, work, &lwork, &mut info) };
                info
            }
            unsafe fn syevd(
                l: &LapackSymbols,
                jobz: u8,
                uplo: u8,
                n: lapack_int,
                a: *mut $t,
                lda: lapack_int,
                w: *mut $t,
                work: *mut $t,
                lwork: lapack_int,
                _rwork: *mut $t,
                _lrwork: lapack_int,
                iwork: *mut lapack_int,
                liwork: lapack_int,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays.
                unsafe {
                    (l.$r.syevd)(
                        ch(&jobz),
                        ch(&uplo),
                        &n,
                        a,
                        &lda,
                        w,
                        work,
                        &lwork,
                        iwork,
                        &liwork,
                        &mut info,
                        1,
                        1,
                    )
                };
                info
            }
            unsafe fn gesdd(
                l: &LapackSymbols,
                jobz: u8,
                m: lapack_int,
                n: lapack_int,
                a: *mut $t,
                lda: lapack_int,
                s: *mut $t,
                u: *mut $t,
                ldu: lapack_int,
                vt: *mut $t,
                ldvt: lapack_int,
                work: *mut $t,
                lwork: lapack_int,
                _rwork: *mut $t,
                iwork: *mut lapack_int,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays.
                unsafe {
                    (l.$r.gesdd)(
                        ch(&jobz),
                        &m,
                        &n,
                        a,
                        &lda,
                        s,
                        u,
                        &ldu,
                        vt,
                        &ldvt,
                        work,
                        &lwork,
                        iwork,
                        &mut info,
                        1,
                    )
                };
                info
            }
            unsafe fn gesvd(
                l: &LapackSymbols,
                job: u8,
                m: lapack_int,
                n: lapack_int,
                a: *mut $t,
                lda: lapack_int,
                s: *mut $t,
                u: *mut $t,
                ldu: lapack_int,
                vt: *mut $t,
                ldvt: lapack_int,
                work: *mut $t,
                lwork: lapack_int,
                _rwork: *mut $t,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays.
                unsafe {
                    (l.$r.gesvd)(
                        ch(&job),
                        ch(&job),
                        &m,
                        &n,
                        a,
                        &lda,
                        s,
                        u,
                        &ldu,
                        vt,
                        &ldvt,
                        work,
                        &lwork,
                        &mut info,
                        1,
                        1,
                    )
                };
                info
            }
            unsafe fn sytrd(
                l: &LapackSymbols,
                uplo: u8,
                n: lapack_int,
                a: *mut $t,
                lda: lapack_int,
                d: *mut $t,
                e: *mut $t,
                tau: *mut $t,
                work: *mut $t,
                lwork: lapack_int,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays.
                unsafe {
                    (l.$r.sytrd)(
                        ch(&uplo),
                        &n,
                        a,
                        &lda,
                        d,
                        e,
                        tau,
                        work,
                        &lwork,
                        &mut info,
                        1,
                    )
                };
                info
            }
        }

        impl RealLapack for $t {
            unsafe fn stedc(
                l: &LapackSymbols,
                compz: u8,
                n: lapack_int,
                d: *mut $t,
                e: *mut $t,
                z: *mut $t,
                ldz: lapack_int,
                work: *mut $t,
                lwork: lapack_int,
                iwork: *mut lapack_int,
                liwork: lapack_int,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays.
                unsafe {
                    (l.$r.stedc)(
                        ch(&compz),
                        &n,
                        d,
                        e,
                        z,
                        &ldz,
                        work,
                        &lwork,
                        iwork,
                        &liwork,
                        &mut info,
                        1,
                    )
                };
                info
            }
            unsafe fn laed1(
                l: &LapackSymbols,
                n: lapack_int,
                d: *mut $t,
                q: *mut $t,
                ldq: lapack_int,
                indxq: *mut lapack_int,
                rho: $t,
                cutpnt: lapack_int,
                work: *mut $t,
                iwork: *mut lapack_int,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays; the scalars are
                // locals that outlive the call.
                unsafe {
                    (l.$r.laed1)(&n, d, q, &ldq, indxq, &rho, &cutpnt, work, iwork, &mut info)
                };
                info
            }
            unsafe fn gebrd(
                l: &LapackSymbols,
                m: lapack_int,
                n: lapack_int,
                a: *mut $t,
                lda: lapack_int,
                d: *mut $t,
                e: *mut $t,
                tauq: *mut $t,
                taup: *mut $t,
                work: *mut $t,
                lwork: lapack_int,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays.
                unsafe { (l.$r.gebrd)(&m, &n, a, &lda, d, e, tauq, taup, work, &lwork, &mut info) };
                info
            }
            unsafe fn bdsdc(
                l: &LapackSymbols,
                n: lapack_int,
                d: *mut $t,
                e: *mut $t,
                u: *mut $t,
                ldu: lapack_int,
                vt: *mut $t,
                ldvt: lapack_int,
                work: *mut $t,
                iwork: *mut lapack_int,
            ) -> lapack_int {
                let mut info = 0;
                // Not referenced with COMPQ = 'I'.
                let (mut q, mut iq) = (<$t>::default(), 0);
                // SAFETY: the caller guarantees the arrays; `q` and `iq` are
                // never read with COMPQ = 'I'.
                unsafe {
                    (l.$r.bdsdc)(
                        ch(&b'U'),
                        ch(&b'I'),
                        &n,
                        d,
                        e,
                        u,
                        &ldu,
                        vt,
                        &ldvt,
                        &mut q,
                        &mut iq,
                        work,
                        iwork,
                        &mut info,
                        1,
                        1,
                    )
                };
                info
            }
            unsafe fn ormbr(
                l: &LapackSymbols,
                vect: u8,
                side: u8,
                trans: u8,
                m: lapack_int,
                n: lapack_int,
                k: lapack_int,
                a: *const $t,
                lda: lapack_int,
                tau: *const $t,
                c: *mut $t,
                ldc: lapack_int,
                work: *mut $t,
                lwork: lapack_int,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays.
                unsafe {
                    (l.$r.ormbr)(
                        ch(&vect),
                        ch(&side),
                        ch(&trans),
                        &m,
                        &n,
                        &k,
                        a,
                        &lda,
                        tau,
                        c,
                        &ldc,
                        work,
                        &lwork,
                        &mut info,
                        1,
                        1,
                        1,
                    )
                };
                info
            }
            unsafe fn ormtr(
                l: &LapackSymbols,
                uplo: u8,
                m: lapack_int,
                n: lapack_int,
                a: *const $t,
                lda: lapack_int,
                tau: *const $t,
                c: *mut $t,
                ldc: lapack_int,
                work: *mut $t,
                lwork: lapack_int,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays.
                unsafe {
                    (l.$r.ormtr)(
                        ch(&b'L'),
                        ch(&uplo),
                        ch(&b'N'),
                        &m,
                        &n,
                        a,
                        &lda,
                        tau,
                        c,
                        &ldc,
                        work,
                        &lwork,
                        &mut info,
                        1,
                        1,
                        1,
                    )
                };
                info
            }
            unsafe fn geev(
                l: &LapackSymbols,
                jobvl: u8,
                jobvr: u8,
                n: lapack_int,
                a: *mut $t,
                lda: lapack_int,
                wr: *mut $t,
                wi: *mut $t,
                vl: *mut $t,
                ldvl: lapack_int,
                vr: *mut $t,
                ldvr: lapack_int,
                work: *mut $t,
                lwork: lapack_int,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays.
                unsafe {
                    (l.$r.geev)(
                        ch(&jobvl),
                        ch(&jobvr),
                        &n,
                        a,
                        &lda,
                        wr,
                        wi,
                        vl,
                        &ldvl,
                        vr,
                        &ldvr,
                        work,
                        &lwork,
                        &mut info,
                        1,
                        1,
                    )
                };
                info
            }
            unsafe fn gees(
                l: &LapackSymbols,
                jobvs: u8,
                n: lapack_int,
                a: *mut $t,
                lda: lapack_int,
                sdim: *mut lapack_int,
                wr: *mut $t,
                wi: *mut $t,
                vs: *mut $t,
                ldvs: lapack_int,
                work: *mut $t,
                lwork: lapack_int,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays; with SORT = 'N'
                // LAPACK references neither SELECT nor BWORK, so both are NULL.
                unsafe {
                    (l.$r.gees)(
                        ch(&jobvs),
                        ch(&b'N'),
                        None,
                        &n,
                        a,
                        &lda,
                        sdim,
                        wr,
                        wi,
                        vs,
                        &ldvs,
                        work,
                        &lwork,
                        std::ptr::null_mut(),
                        &mut info,
                        1,
                        1,
                    )
                };
                info
            }
        }
    };
}

macro_rules! complex_scalar {
    ($r:ty, $z:ident) => {
        impl Scalar for Complex<$r> {
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

            common_routines!($z, ungqr, unmqr);

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
                rwork: *mut $r,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays.
                unsafe { (l.$z.geqp3)(&m, &n, a, &lda, jpvt, tau, work, &lwork, rwork, &mut info) };
                info
            }
            unsafe fn syevd(
                l: &LapackSymbols,
                jobz: u8,
                uplo: u8,
                n: lapack_int,
                a: *mut Self,
                lda: lapack_int,
                w: *mut $r,
                work: *mut Self,
                lwork: lapack_int,
                rwork: *mut $r,
                lrwork: lapack_int,
                iwork: *mut lapack_int,
                liwork: lapack_int,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays.
                unsafe {
                    (l.$z.heevd)(
                        ch(&jobz),
                        ch(&uplo),
                        &n,
                        a,
                        &lda,
                        w,
                        work,
                        &lwork,
                        rwork,
                        &lrwork,
                        iwork,
                        &liwork,
                        &mut info,
                        1,
                        1,
                    )
                };
                info
            }
            unsafe fn gesdd(
                l: &LapackSymbols,
                jobz: u8,
                m: lapack_int,
                n: lapack_int,
                a: *mut Self,
                lda: lapack_int,
                s: *mut $r,
                u: *mut Self,
                ldu: lapack_int,
                vt: *mut Self,
                ldvt: lapack_int,
                work: *mut Self,
                lwork: lapack_int,
                rwork: *mut $r,
                iwork: *mut lapack_int,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays.
                unsafe {
                    (l.$z.gesdd)(
                        ch(&jobz),
                        &m,
                        &n,
                        a,
                        &lda,
                        s,
                        u,
                        &ldu,
                        vt,
                        &ldvt,
                        work,
                        &lwork,
                        rwork,
                        iwork,
                        &mut info,
                        1,
                    )
                };
                info
            }
            unsafe fn gesvd(
                l: &LapackSymbols,
                job: u8,
                m: lapack_int,
                n: lapack_int,
                a: *mut Self,
                lda: lapack_int,
                s: *mut $r,
                u: *mut Self,
                ldu: lapack_int,
                vt: *mut Self,
                ldvt: lapack_int,
                work: *mut Self,
                lwork: lapack_int,
                rwork: *mut $r,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays.
                unsafe {
                    (l.$z.gesvd)(
                        ch(&job),
                        ch(&job),
                        &m,
                        &n,
                        a,
                        &lda,
                        s,
                        u,
                        &ldu,
                        vt,
                        &ldvt,
                        work,
                        &lwork,
                        rwork,
                        &mut info,
                        1,
                        1,
                    )
                };
                info
            }
            unsafe fn sytrd(
                l: &LapackSymbols,
                uplo: u8,
                n: lapack_int,
                a: *mut Self,
                lda: lapack_int,
                d: *mut $r,
                e: *mut $r,
                tau: *mut Self,
                work: *mut Self,
                lwork: lapack_int,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays.
                unsafe {
                    (l.$z.hetrd)(
                        ch(&uplo),
                        &n,
                        a,
                        &lda,
                        d,
                        e,
                        tau,
                        work,
                        &lwork,
                        &mut info,
                        1,
                    )
                };
                info
            }
        }

        impl ComplexLapack for Complex<$r> {
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
                rwork: *mut $r,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays.
                unsafe {
                    (l.$z.geev)(
                        ch(&jobvl),
                        ch(&jobvr),
                        &n,
                        a,
                        &lda,
                        w,
                        vl,
                        &ldvl,
                        vr,
                        &ldvr,
                        work,
                        &lwork,
                        rwork,
                        &mut info,
                        1,
                        1,
                    )
                };
                info
            }
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
                rwork: *mut $r,
            ) -> lapack_int {
                let mut info = 0;
                // SAFETY: the caller guarantees the arrays; with SORT = 'N'
                // LAPACK references neither SELECT nor BWORK, so both are NULL.
                unsafe {
                    (l.$z.gees)(
                        ch(&jobvs),
                        ch(&b'N'),
                        None,
                        &n,
                        a,
                        &lda,
                        sdim,
                        w,
                        vs,
                        &ldvs,
                        work,
                        &lwork,
                        rwork,
                        std::ptr::null_mut(),
                        &mut info,
                        1,
                        1,
                    )
                };
                info
            }
        }
    };
}

real_scalar!(f32, s);
real_scalar!(f64, d);
complex_scalar!(f32, c);
complex_scalar!(f64, z);
