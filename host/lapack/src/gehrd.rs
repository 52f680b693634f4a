//! `lapack_?gehrd_ffi`: Hessenberg reduction.
//!
//! Contract: docs/lapack-targets.md, "lapack_?gehrd_ffi".

use crate::call::{Batched, Call, Ctx};
use crate::checked;
use crate::scalar::LapackScalar;
use plugin_glue::handler::HandlerError;

/// LAPACK's argument checks on ILO and IHI: `Some(info)` when they are
/// illegal (−2 for ilo, −3 for ihi), checked before LAPACK is called so that
/// its error handler never prints.
fn check_range(n: usize, ilo: i64, ihi: i64) -> Option<i32> {
    let n = i64::try_from(n).unwrap_or(i64::MAX);
    if ilo < 1 || ilo > n.max(1) {
        Some(-2)
    } else if ihi < ilo.min(n) || ihi > n {
        Some(-3)
    } else {
        None
    }
}

/// The handler: operand `a`; results `a_out` (alias ← a), `tau`, `info`;
/// attributes `low`, `high` (LAPACK's 1-based ILO/IHI). Reduces each `n×n`
/// block of `a` to upper Hessenberg form in place; writes `tau` (n−1 per
/// element) and `info`.
pub(crate) fn run<T: LapackScalar>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let ([a], [a_out, tau, info]) = call.operands(["a"], ["a_out", "tau", "info"])?;
    let (batch_dims, n) = a.square_nonempty(T::DTYPE)?;
    let (ilo, ihi) = (call.int_attr("low")?, call.int_attr("high")?);
    tau.expect(T::DTYPE, batch_dims, &[n - 1])?;
    info.expect_scalars(batch_dims)?;
    // SAFETY: results are ours; the operand is not used after the alias step.
    let (a, tau, info) = unsafe {
        (
            a.alias_into::<T>(&a_out)?,
            tau.slice_mut()?,
            info.slice_mut()?,
        )
    };
    let batch = info.len();
    if let Some(bad) = check_range(n, ilo, ihi) {
        tau.fill(T::default());
        info.fill(bad);
        return Ok(());
    }
    let Some(ni) = ctx.order(n, info)? else {
        return Ok(());
    };
    let (iloi, ihii) = (
        ctx.int("low", ilo as usize)?,
        ctx.int("high", ihi as usize)?,
    );
    let l = ctx.lib.symbols();
    let lwork = ctx.lwork(checked::lwork::gehrd::<T>(l, ni, iloi, ihii, ni))?;
    let elements = (
        Batched::new(a, n * n, batch),
        Batched::new(tau, n - 1, batch),
        Batched::new(info, 1, batch),
    );
    let flops = 10.0 / 3.0 * (n * n * n) as f64;
    let init = || vec![T::default(); lwork];
    ctx.for_each_element(batch, flops, init, elements, |work, (a, t, i)| {
        i[0] = checked::gehrd(l, ni, iloi, ihii, a, ni, t, work);
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_range;

    #[test]
    fn ilo_ihi_follow_lapack_checks() {
        assert_eq!(check_range(4, 1, 4), None);
        assert_eq!(check_range(4, 0, 4), Some(-2));
        assert_eq!(check_range(4, 5, 4), Some(-2));
        assert_eq!(check_range(4, 3, 2), Some(-3));
        assert_eq!(check_range(4, 1, 5), Some(-3));
        assert_eq!(check_range(0, 1, 0), None);
    }
}
