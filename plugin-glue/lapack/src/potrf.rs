//! `lapack_?potrf_ffi`: Cholesky factorisation. Reference §3.3.

use crate::call::{Batched, Call, Ctx};
use crate::checked;
use crate::scalar::LapackScalar;
use plugin_glue::dtype::DType;
use plugin_glue::handler::HandlerError;

/// Factors each `n×n` block of `a` in place (only the `uplo` triangle is
/// read and written); writes `info` per element.
pub(crate) fn potrf<T: LapackScalar>(
    ctx: &Ctx<'_>,
    uplo: u8,
    n: usize,
    a: &mut [T],
    info: &mut [i32],
) -> Result<(), HandlerError> {
    let batch = info.len();
    if n == 0 {
        info.fill(0);
        return Ok(());
    }
    let ni = ctx.int("n", n)?;
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

/// The handler: operand `a`; results `l` (alias ← a), `info`; attribute `uplo`.
pub(crate) fn run<T: LapackScalar>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let ([a], [l, info]) = call.operands(["a"], ["l", "info"])?;
    a.dtype(T::DTYPE)?;
    let (batch, m, n) = a.matrix()?;
    if m != n {
        return Err(a.err(format_args!("must be square, got {m}×{n}")));
    }
    let uplo = call.char_attr("uplo", b"LU")?;
    info.expect(DType::S32, batch, &[])?;
    // SAFETY: results are ours; the operand is not used after the alias step.
    let (l, info) = unsafe { (a.alias_into::<T>(&l)?, info.slice_mut()?) };
    potrf(ctx, uplo, n, l, info)
}
