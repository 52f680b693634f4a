//! The factorisations, QR and solves: `?trsm`, `?getrf`, `?potrf`,
//! `?geqrf`, `?orgqr`/`?ungqr`, `?ormqr`/`?unmqr`, `?geqp3`, `?gtsv`.

#![expect(
    clippy::too_many_arguments,
    reason = "each function mirrors its LAPACK or BLAS routine"
)]

use crate::scalar::LapackScalar;

lwork_query! {
    /// The optimal LWORK of [`geqrf`](super::geqrf) for these dims.
    fn geqrf_lwork<T: LapackScalar>(l, m, n, lda)
        |q, w| T::geqrf(l, m, n, q.t(0), lda, q.t(1), w, -1);
}

lwork_query! {
    /// The optimal LWORK of [`orgqr`](super::orgqr) for these dims.
    fn orgqr_lwork<T: LapackScalar>(l, m, n, k, lda)
        |q, w| T::orgqr(l, m, n, k, q.t(0), lda, q.t(5), w, -1);
}

lwork_query! {
    /// The optimal LWORK of [`ormqr`](super::ormqr) for these dims.
    fn ormqr_lwork<T: LapackScalar>(l, side: u8, trans: u8, m, n, k, lda, ldc)
        |q, w| T::ormqr(l, side, trans, m, n, k, q.t(0), lda, q.t(1), q.t(2), ldc, w, -1);
}

lwork_query! {
    /// The optimal LWORK of [`geqp3`](super::geqp3) for these dims.
    fn geqp3_lwork<T: LapackScalar>(l, m, n, lda)
        |q, w| T::geqp3(l, m, n, q.t(0), lda, q.i(0), q.t(1), w, -1, q.r(0));
}
