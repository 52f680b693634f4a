//! `lapack_?gesvd_ffi`: singular value decomposition by QR iteration.
//! Reference §3.10 (operands, results and checks as gesdd, §3.9).

use crate::call::{Call, Ctx};
use crate::checked;
use crate::fast_path::FastPath;
use crate::gesdd::{SvdDims, SvdOut, svd_call};
use crate::scalar::RealScalar;
use plugin_glue::handler::HandlerError;

/// `?gesvd` (jobu = jobvt = `mode`) on every element; `mode` 'N' zero-fills
/// u and vt.
pub(crate) fn gesvd<T: FastPath>(
    ctx: &Ctx<'_>,
    mode: u8,
    d: SvdDims,
    out: SvdOut<'_, T>,
) -> Result<(), HandlerError> {
    let Some(out) = out.start(mode, d) else {
        return Ok(());
    };
    let SvdDims { m, n, .. } = d;
    let k = m.min(n);
    let batch = out.info.len();
    let [mi, ni, ldvt] = d.ints(ctx)?;
    let l = ctx.lib.symbols();
    let lwork = ctx.lwork(checked::lwork::gesvd::<T>(l, mode, mi, ni, mi, mi, ldvt))?;
    let lrwork = if T::IS_COMPLEX { 5 * k } else { 1 };
    let flops = 20.0 * (m * n * k) as f64;
    let init = || {
        (
            vec![T::default(); lwork],
            vec![<T::Real as RealScalar>::ZERO; lrwork],
        )
    };
    let elements = out.elements(d);
    ctx.for_each_element(
        batch,
        flops,
        init,
        elements,
        |(work, rwork), (a, s, u, vt, i)| {
            i[0] = checked::gesvd(l, mode, mi, ni, a, mi, s, u, mi, vt, ldvt, work, rwork);
        },
    );
    Ok(())
}

/// The handler: as gesdd.
pub(crate) fn run<T: FastPath>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let (mode, dims, out) = svd_call::<T>(call)?;
    gesvd(ctx, mode, dims, out)
}
