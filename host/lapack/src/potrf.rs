//! `lapack_?potrf_ffi`: Cholesky factorisation.
//!
//! Contract: docs/lapack-targets.md, "lapack_?potrf_ffi".

use crate::call::{Batched, Call, Ctx};
use crate::checked;
use crate::scalar::LapackScalar;
use plugin_glue::handler::HandlerError;

/// The handler: operand `a`; results `l` (alias ← a), `info`; attribute
/// `uplo`. Factors each `n×n` block of `a` in place (only the `uplo` triangle
/// is read and written); writes `info` per element.
pub(crate) fn run<T: LapackScalar>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let ([a], [l, info]) = call.operands(["a"], ["l", "info"])?;
    let (batch_dims, n) = a.square(T::DTYPE)?;
    let uplo = call.char_attr("uplo", b"LU")?;
    info.expect_scalars(batch_dims)?;
    // SAFETY: results are ours; the operand is not used after the alias step.
    let (a, info) = unsafe { (a.alias_into::<T>(&l)?, info.slice_mut()?) };
    let batch = info.len();
    let Some(ni) = ctx.order(n, info)? else {
        return Ok(());
    };
    let elements = (Batched::new(a, n * n, batch), Batched::new(info, 1, batch));
    let flops = (n * n * n) as f64 / 3.0;
    ctx.for_each_element(
        batch,
        flops,
        || (),
        elements,
        |(), (a, i)| {
            i[0] = checked::potrf(ctx.lib.symbols(), uplo, ni, a, ni);
        },
    );
    Ok(())
}
