//! `lapack_?orgqr_ffi` / `lapack_?ungqr_ffi`: form Q from Householder
//! reflectors.
//!
//! Contract: docs/lapack-targets.md, "lapack_?orgqr_ffi".

use crate::call::{Batched, Call, Ctx, Shared};
use crate::checked;
use crate::scalar::LapackScalar;
use plugin_glue::handler::HandlerError;

/// The handler: operands `a`, `tau`; result `q` (alias ← a). Overwrites
/// each `m×n` block of `a` (reflectors, `m >= n`) with the first n columns of
/// Q = H(1)…H(t), where `t` is `tau`'s last dimension.
pub(crate) fn run<T: LapackScalar>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let ([a, tau], [q]) = call.operands(["a", "tau"], ["q"])?;
    let (batch_dims, m, n) = a.matrix_of(T::DTYPE)?;
    if m < n {
        return Err(a.err(format_args!(
            "must have at least as many rows as columns, got {m}×{n}"
        )));
    }
    let (_, t) = tau.vector()?;
    tau.expect(T::DTYPE, batch_dims, &[t])?;
    if t > n {
        return Err(tau.err(format_args!(
            "has {t} reflectors, more than the {n} columns of a"
        )));
    }
    // SAFETY: `tau` is a read-only operand that XLA does not alias with the
    // result; `q` is our result and `a` is not used after the alias step.
    let (tau, a) = unsafe { (tau.slice::<T>()?, a.alias_into::<T>(&q)?) };
    if n == 0 {
        return Ok(());
    }
    let batch = a.len() / (m * n);
    let (mi, ni, ti) = (ctx.int("m", m)?, ctx.int("n", n)?, ctx.int("k", t)?);
    let l = ctx.lib.symbols();
    let lwork = ctx.lwork(checked::lwork::orgqr::<T>(l, mi, ni, ti, mi))?;
    let elements = (Batched::new(a, m * n, batch), Shared::new(tau, t));
    let flops = 4.0 * (m * n * t) as f64;
    let init = || vec![T::default(); lwork];
    ctx.for_each_element(batch, flops, init, elements, |work, (a, tau)| {
        checked::orgqr(l, mi, ni, ti, a, mi, tau, work);
    });
    Ok(())
}
