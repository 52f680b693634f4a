//! `lapack_?ormqr_ffi` / `lapack_?unmqr_ffi`: apply Q from Householder
//! reflectors to a matrix.
//!
//! Contract: docs/lapack-targets.md, "lapack_?ormqr_ffi".

use crate::call::{Batched, Call, Ctx, Shared};
use crate::checked;
use crate::scalar::LapackScalar;
use plugin_glue::handler::HandlerError;

/// Shapes of one ormqr call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OrmqrDims {
    /// Rows of the reflector matrix `a` (the order of Q).
    pub m: usize,
    /// Columns of `a`.
    pub r: usize,
    /// Number of reflectors (tau's length).
    pub t: usize,
    /// Rows of `c`.
    pub p: usize,
    /// Columns of `c`.
    pub q: usize,
}

/// Overwrites each `p×q` block of `c` with `Q·C`, `Qᴴ·C` (`left`) or `C·Q`,
/// `C·Qᴴ`, Q given by the reflectors in `a` (`m×r`, read-only: LAPACK's
/// temporary writes go to a private copy) and `tau`.
pub(crate) fn ormqr<T: LapackScalar>(
    ctx: &Ctx<'_>,
    left: bool,
    transpose: bool,
    d: OrmqrDims,
    a: &[T],
    tau: &[T],
    c: &mut [T],
) -> Result<(), HandlerError> {
    let OrmqrDims { m, r, t, p, q } = d;
    if p == 0 || q == 0 {
        return Ok(());
    }
    let batch = c.len() / (p * q);
    let side = if left { b'L' } else { b'R' };
    let trans = if transpose { T::ADJOINT } else { b'N' };
    let (mi, ti, pi, qi) = (
        ctx.int("m", m)?,
        ctx.int("k", t)?,
        ctx.int("p", p)?,
        ctx.int("q", q)?,
    );
    let lda = mi.max(1);
    let l = ctx.lib.symbols();
    let lwork = ctx.lwork(checked::lwork::ormqr::<T>(
        l, side, trans, pi, qi, ti, lda, pi,
    ))?;
    let elements = (
        Batched::new(c, p * q, batch),
        Shared::new(a, m * r),
        Shared::new(tau, t),
    );
    let flops = 4.0 * (p * q * t) as f64;
    let init = || {
        (
            vec![T::default(); lwork],
            vec![T::default(); (m * r).max(1)],
        )
    };
    ctx.for_each_element(
        batch,
        flops,
        init,
        elements,
        |(work, scratch), (c, a, tau)| {
            scratch[..m * r].copy_from_slice(a);
            checked::ormqr(l, side, trans, pi, qi, ti, scratch, lda, tau, c, pi, work);
        },
    );
    Ok(())
}

/// The handler: operands `a`, `tau`, `c`; result `c_out` (alias ← c);
/// attributes `left`, `transpose` (booleans).
pub(crate) fn run<T: LapackScalar>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let ([a, tau, c], [c_out]) = call.operands(["a", "tau", "c"], ["c_out"])?;
    let left = call.bool_attr("left")?;
    let transpose = call.bool_attr("transpose")?;
    let (batch, p, q) = c.matrix_of(T::DTYPE)?;
    let (_, m, r) = a.matrix()?;
    a.expect(T::DTYPE, batch, &[m, r])?;
    let (_, t) = tau.vector()?;
    tau.expect(T::DTYPE, batch, &[t])?;
    let nq = if left { p } else { q };
    if nq != m {
        return Err(a.err(format_args!(
            "has {m} rows but Q must be {nq}×{nq} to multiply c ({p}×{q}) from the {}",
            if left { "left" } else { "right" }
        )));
    }
    if t > m || t > r {
        return Err(tau.err(format_args!("has {t} reflectors, but a is {m}×{r}")));
    }
    // SAFETY: `a` and `tau` are read-only operands that XLA does not alias
    // with the result; `c_out` is ours and `c` is not used after the alias.
    let (a, tau, c) = unsafe {
        (
            a.slice::<T>()?,
            tau.slice::<T>()?,
            c.alias_into::<T>(&c_out)?,
        )
    };
    ormqr(ctx, left, transpose, OrmqrDims { m, r, t, p, q }, a, tau, c)
}
