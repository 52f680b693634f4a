//! `lapack_?sytrd_ffi` / `lapack_?hetrd_ffi`: reduction of a Hermitian
//! matrix to real tridiagonal form.
//!
//! Contract: docs/lapack-targets.md, "lapack_?sytrd_ffi".

use crate::call::{Batched, Call, Ctx};
use crate::checked;
use crate::scalar::{Elem, LapackScalar};
use plugin_glue::handler::HandlerError;

/// Outputs of a sytrd call, batch-major.
pub(crate) struct SytrdOut<'a, T: LapackScalar> {
    /// Reflectors and the tridiagonal, over the input (n×n per element).
    pub a: &'a mut [T],
    /// Diagonal (n per element).
    pub d: &'a mut [T::Real],
    /// Off-diagonal (n−1 per element).
    pub e: &'a mut [T::Real],
    /// Reflector scalars (n−1 per element).
    pub tau: &'a mut [T],
    /// INFO per element.
    pub info: &'a mut [i32],
}

/// `?sytrd`/`?hetrd` on every `n×n` element (n ≥ 1), in place.
pub(crate) fn sytrd<T: LapackScalar>(
    ctx: &Ctx<'_>,
    uplo: u8,
    n: usize,
    out: SytrdOut<'_, T>,
) -> Result<(), HandlerError> {
    let batch = out.info.len();
    let ni = ctx.int("n", n)?;
    let l = ctx.lib.symbols();
    let lwork = ctx.lwork(checked::lwork::sytrd::<T>(l, uplo, ni, ni))?;
    let m1 = n.saturating_sub(1);
    let elements = (
        Batched::new(out.a, n * n, batch),
        Batched::new(out.d, n, batch),
        Batched::new(out.e, m1, batch),
        Batched::new(out.tau, m1, batch),
        Batched::new(out.info, 1, batch),
    );
    let flops = 4.0 / 3.0 * (n * n * n) as f64;
    let init = || vec![T::default(); lwork];
    ctx.for_each_element(batch, flops, init, elements, |work, (a, d, e, t, i)| {
        i[0] = checked::sytrd(l, uplo, ni, a, ni, d, e, t, work);
    });
    Ok(())
}

/// The handler: operand `a`; results `a_out` (alias ← a), `d`, `e`, `tau`,
/// `info`; attribute `uplo`.
pub(crate) fn run<T: LapackScalar>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let ([a], [a_out, d, e, tau, info]) =
        call.operands(["a"], ["a_out", "d", "e", "tau", "info"])?;
    let (batch, n) = a.square_nonempty(T::DTYPE)?;
    let uplo = call.char_attr("uplo", b"LU")?;
    let real = <T::Real as Elem>::DTYPE;
    d.expect(real, batch, &[n])?;
    e.expect(real, batch, &[n - 1])?;
    tau.expect(T::DTYPE, batch, &[n - 1])?;
    info.expect_scalars(batch)?;
    // SAFETY: results are ours and distinct; the operand is not used after
    // the alias step.
    let out = unsafe {
        SytrdOut {
            a: a.alias_into::<T>(&a_out)?,
            d: d.slice_mut()?,
            e: e.slice_mut()?,
            tau: tau.slice_mut()?,
            info: info.slice_mut()?,
        }
    };
    sytrd(ctx, uplo, n, out)
}
