//! The split drivers: one large real matrix whose LAPACK driver's steps are
//! called one by one, the ones OpenBLAS's threads share poorly on threads
//! of our own ([`syevd`], [`gesdd`]), with LAPACK's results up to rounding.

pub(crate) mod gesdd;
pub(crate) mod syevd;
