//! `lapack_?gtsv_ffi`: general tridiagonal solve.
//!
//! Contract: docs/lapack-targets.md, "lapack_?gtsv_ffi".

use crate::call::{Batched, Call, Ctx};
use crate::checked;
use crate::scalar::LapackScalar;
use plugin_glue::handler::HandlerError;

/// Outputs of a gtsv call (all in place), batch-major.
pub(crate) struct GtsvOut<'a, T> {
    /// Sub-diagonal, `dl[0]` ignored (n per element).
    pub dl: &'a mut [T],
    /// Diagonal (n per element).
    pub d: &'a mut [T],
    /// Super-diagonal, `du[n-1]` ignored (n per element).
    pub du: &'a mut [T],
    /// Right-hand sides in, solution out (n×nrhs per element).
    pub b: &'a mut [T],
    /// INFO per element.
    pub info: &'a mut [i32],
}

/// `?gtsv` on every element, in place.
pub(crate) fn gtsv<T: LapackScalar>(
    ctx: &Ctx<'_>,
    n: usize,
    nrhs: usize,
    out: GtsvOut<'_, T>,
) -> Result<(), HandlerError> {
    let batch = out.info.len();
    let Some(ni) = ctx.order(n, out.info)? else {
        return Ok(());
    };
    let nrhsi = ctx.int("nrhs", nrhs)?;
    let l = ctx.lib.symbols();
    let elements = (
        Batched::new(out.dl, n, batch),
        Batched::new(out.d, n, batch),
        Batched::new(out.du, n, batch),
        Batched::new(out.b, n * nrhs, batch),
        Batched::new(out.info, 1, batch),
    );
    let flops = 8.0 * (n * (nrhs + 1)) as f64;
    ctx.for_each_element(
        batch,
        flops,
        || (),
        elements,
        |(), (dl, d, du, x, i)| {
            i[0] = checked::gtsv(l, ni, nrhsi, &mut dl[1..], d, du, x, ni);
        },
    );
    Ok(())
}

/// The handler: operands `dl`, `d`, `du`, `b`; results `dl_out`, `d_out`,
/// `du_out`, `b_out` (aliases ← operands 0–3), `info`.
pub(crate) fn run<T: LapackScalar>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let ([dl, d, du, b], [dl_out, d_out, du_out, b_out, info]) = call.operands(
        ["dl", "d", "du", "b"],
        ["dl_out", "d_out", "du_out", "b_out", "info"],
    )?;
    let (batch, n, nrhs) = b.matrix_of(T::DTYPE)?;
    for v in [&dl, &d, &du] {
        v.expect(T::DTYPE, batch, &[n])?;
    }
    info.expect_scalars(batch)?;
    // SAFETY: results are ours and distinct. Every copy happens before any
    // result slice exists, because two operands may share one buffer (e.g.
    // the same array passed as dl and du) that is also one of the results.
    let out = unsafe {
        dl.copy_to::<T>(&dl_out)?;
        d.copy_to::<T>(&d_out)?;
        du.copy_to::<T>(&du_out)?;
        b.copy_to::<T>(&b_out)?;
        GtsvOut {
            dl: dl_out.slice_mut::<T>()?,
            d: d_out.slice_mut::<T>()?,
            du: du_out.slice_mut::<T>()?,
            b: b_out.slice_mut::<T>()?,
            info: info.slice_mut()?,
        }
    };
    gtsv(ctx, n, nrhs, out)
}
