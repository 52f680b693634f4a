//! `lapack_?sytrd_ffi` / `lapack_?hetrd_ffi`: reduction of a Hermitian
//! matrix to real tridiagonal form.
//!
//! Contract: docs/lapack-targets.md, "lapack_?sytrd_ffi".

use crate::call::{Batched, Call, Ctx};
use crate::checked;
use crate::scalar::{Elem, LapackScalar};
use plugin_glue::handler::HandlerError;

/// The handler: operand `a`; results `a_out` (alias ← a), `d`, `e`, `tau`,
/// `info`; attribute `uplo`. `?sytrd`/`?hetrd` on every `n×n` element
/// (n ≥ 1), in place: the reflectors and the tridiagonal over `a`, its
/// diagonal in `d` (n per element), its off-diagonal in `e` and the reflector
/// scalars in `tau` (n−1 per element).
pub(crate) fn run<T: LapackScalar>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let ([a], [a_out, d, e, tau, info]) =
        call.operands(["a"], ["a_out", "d", "e", "tau", "info"])?;
    let (batch_dims, n) = a.square_nonempty(T::DTYPE)?;
    let uplo = call.char_attr("uplo", b"LU")?;
    let real = <T::Real as Elem>::DTYPE;
    d.expect(real, batch_dims, &[n])?;
    e.expect(real, batch_dims, &[n - 1])?;
    tau.expect(T::DTYPE, batch_dims, &[n - 1])?;
    info.expect_scalars(batch_dims)?;
    // SAFETY: results are ours and distinct; the operand is not used after
    // the alias step.
    let (a, d, e, tau, info) = unsafe {
        (
            a.alias_into::<T>(&a_out)?,
            d.slice_mut()?,
            e.slice_mut()?,
            tau.slice_mut()?,
            info.slice_mut()?,
        )
    };
    let batch = info.len();
    let ni = ctx.int("n", n)?;
    let l = ctx.lib.symbols();
    let lwork = ctx.lwork(checked::lwork::sytrd::<T>(l, uplo, ni, ni))?;
    let m1 = n.saturating_sub(1);
    let elements = (
        Batched::new(a, n * n, batch),
        Batched::new(d, n, batch),
        Batched::new(e, m1, batch),
        Batched::new(tau, m1, batch),
        Batched::new(info, 1, batch),
    );
    let flops = 4.0 / 3.0 * (n * n * n) as f64;
    let init = || vec![T::default(); lwork];
    ctx.for_each_element(batch, flops, init, elements, |work, (a, d, e, t, i)| {
        i[0] = checked::sytrd(l, uplo, ni, a, ni, d, e, t, work);
    });
    Ok(())
}
