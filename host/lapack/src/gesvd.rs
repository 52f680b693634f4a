//! `lapack_?gesvd_ffi`: singular value decomposition by QR iteration.
//!
//! Contract: docs/lapack-targets.md, "lapack_?gesvd_ffi" (operands, results
//! and checks as gesdd).

use crate::call::{Call, Ctx};
use crate::fast_path::FastPath;
use crate::gesdd::{Driver, svd, svd_call};
use plugin_glue::handler::HandlerError;

/// The handler: as gesdd, with `?gesvd` (jobu = jobvt = `mode`; 'N'
/// zero-fills u and vt).
pub(crate) fn run<T: FastPath>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let (mode, dims, out) = svd_call::<T>(call)?;
    svd(ctx, mode, dims, out, Driver::Gesvd)
}
