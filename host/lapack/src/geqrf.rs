//! `lapack_?geqrf_ffi`: Householder QR.
//!
//! Contract: docs/lapack-targets.md, "lapack_?geqrf_ffi".

use crate::call::{Batched, Call, Ctx};
use crate::checked;
use crate::scalar::LapackScalar;
use plugin_glue::handler::HandlerError;

/// The handler: operand `a`; results `a_out` (alias ← a), `tau`. Factors
/// each `m×n` block of `a` in place and writes `tau` (`min(m,n)` per
/// element). There is no `info` output; LAPACK's is discarded as in jaxlib.
pub(crate) fn run<T: LapackScalar>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let ([a], [a_out, tau]) = call.operands(["a"], ["a_out", "tau"])?;
    let (batch_dims, m, n) = a.matrix_of(T::DTYPE)?;
    let k = m.min(n);
    tau.expect(T::DTYPE, batch_dims, &[k])?;
    // SAFETY: results are ours; the operand is not used after the alias step.
    let (a, tau) = unsafe { (a.alias_into::<T>(&a_out)?, tau.slice_mut()?) };
    if k == 0 {
        return Ok(());
    }
    let batch = a.len() / (m * n);
    let (mi, ni) = (ctx.int("m", m)?, ctx.int("n", n)?);
    let l = ctx.lib.symbols();
    let lwork = ctx.lwork(checked::lwork::geqrf::<T>(l, mi, ni, mi))?;
    let elements = (Batched::new(a, m * n, batch), Batched::new(tau, k, batch));
    let flops = 2.0 * (m * n * k) as f64;
    let init = || vec![T::default(); lwork];
    ctx.for_each_element(batch, flops, init, elements, |work, (a, t)| {
        checked::geqrf(l, mi, ni, a, mi, t, work);
    });
    Ok(())
}
