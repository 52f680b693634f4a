//! `lapack_?gtsv_ffi`: general tridiagonal solve.
//!
//! Contract: docs/lapack-targets.md, "lapack_?gtsv_ffi".

use crate::call::{Batched, Call, Ctx};
use crate::checked;
use crate::scalar::LapackScalar;
use plugin_glue::handler::HandlerError;

/// The handler: operands `dl`, `d`, `du`, `b`; results `dl_out`, `d_out`,
/// `du_out`, `b_out` (aliases ← operands 0–3), `info`. `?gtsv` on every
/// element, in place: `dl` is the sub-diagonal (`dl[0]` ignored), `d` the
/// diagonal, `du` the super-diagonal (`du[n-1]` ignored), n per element; `b`
/// holds the right-hand sides in and the solution out (n×nrhs per element).
pub(crate) fn run<T: LapackScalar>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let ([dl, d, du, b], [dl_out, d_out, du_out, b_out, info]) = call.operands(
        ["dl", "d", "du", "b"],
        ["dl_out", "d_out", "du_out", "b_out", "info"],
    )?;
    let (batch_dims, n, nrhs) = b.matrix_of(T::DTYPE)?;
    for v in [&dl, &d, &du] {
        v.expect(T::DTYPE, batch_dims, &[n])?;
    }
    info.expect_scalars(batch_dims)?;
    // SAFETY: results are ours and distinct. Every copy happens before any
    // result slice exists, because two operands may share one buffer (e.g.
    // the same array passed as dl and du) that is also one of the results.
    let (dl, d, du, b, info) = unsafe {
        dl.copy_to::<T>(&dl_out)?;
        d.copy_to::<T>(&d_out)?;
        du.copy_to::<T>(&du_out)?;
        b.copy_to::<T>(&b_out)?;
        (
            dl_out.slice_mut::<T>()?,
            d_out.slice_mut::<T>()?,
            du_out.slice_mut::<T>()?,
            b_out.slice_mut::<T>()?,
            info.slice_mut()?,
        )
    };
    let batch = info.len();
    let Some(ni) = ctx.order(n, info)? else {
        return Ok(());
    };
    let nrhsi = ctx.int("nrhs", nrhs)?;
    let l = ctx.lib.symbols();
    let elements = (
        Batched::new(dl, n, batch),
        Batched::new(d, n, batch),
        Batched::new(du, n, batch),
        Batched::new(b, n * nrhs, batch),
        Batched::new(info, 1, batch),
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
