//! `lapack_?geqp3_ffi`: QR with column pivoting.
//!
//! Contract: docs/lapack-targets.md, "lapack_?geqp3_ffi".

use crate::call::{Batched, Call, Ctx};
use crate::checked;
use crate::scalar::LapackScalar;
use plugin_glue::dtype::DType;
use plugin_glue::handler::HandlerError;

/// The handler: operands `a`, `jpvt`; results `a_out` (alias ← a),
/// `jpvt_out` (alias ← jpvt), `tau`. Factors each `m×n` block of `a` in place
/// with column pivoting. `jpvt` holds LAPACK's input (0 = free column) and
/// receives the 1-based permutation; `tau` receives `min(m,n)` scalars per
/// element.
pub(crate) fn run<T: LapackScalar>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let ([a, jpvt], [a_out, jpvt_out, tau]) =
        call.operands(["a", "jpvt"], ["a_out", "jpvt_out", "tau"])?;
    let (batch_dims, m, n) = a.matrix_of(T::DTYPE)?;
    let k = m.min(n);
    jpvt.expect(DType::S32, batch_dims, &[n])?;
    tau.expect(T::DTYPE, batch_dims, &[k])?;
    // SAFETY: results are ours; the operands are not used after the alias step.
    let (a, jpvt, tau) = unsafe {
        (
            a.alias_into::<T>(&a_out)?,
            jpvt.alias_into::<i32>(&jpvt_out)?,
            tau.slice_mut()?,
        )
    };
    if n == 0 {
        return Ok(());
    }
    if m == 0 {
        // LAPACK needs lda >= 1; with no rows the only effect is on jpvt:
        // fixed columns (jpvt != 0) move to the front, in order.
        jpvt.chunks_mut(n).for_each(order_fixed_columns);
        return Ok(());
    }
    let batch = a.len() / (m * n);
    let (mi, ni) = (ctx.int("m", m)?, ctx.int("n", n)?);
    let l = ctx.lib.symbols();
    let lwork = ctx.lwork(checked::lwork::geqp3::<T>(l, mi, ni, mi))?;
    let elements = (
        Batched::new(a, m * n, batch),
        Batched::new(jpvt, n, batch),
        Batched::new(tau, k, batch),
    );
    let flops = 4.0 * (m * n * k) as f64;
    let init = || (vec![T::default(); lwork], checked::rwork::<T>(2 * n));
    ctx.for_each_element(batch, flops, init, elements, |(work, rwork), (a, j, t)| {
        checked::geqp3(l, mi, ni, a, mi, j, t, work, rwork);
    });
    Ok(())
}

/// What `?geqp3` does to JPVT before factoring (LAPACK's "move initial
/// columns up front"), which is all it does when the matrix has no rows.
fn order_fixed_columns(jpvt: &mut [i32]) {
    let mut nfxd = 0;
    for j in 0..jpvt.len() {
        let one_based = i32::try_from(j + 1).unwrap_or(i32::MAX);
        if jpvt[j] != 0 {
            if j != nfxd {
                jpvt[j] = jpvt[nfxd];
                jpvt[nfxd] = one_based;
            } else {
                jpvt[j] = one_based;
            }
            nfxd += 1;
        } else {
            jpvt[j] = one_based;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::order_fixed_columns;

    #[test]
    fn fixed_columns_move_to_the_front() {
        let mut free = [0, 0, 0];
        order_fixed_columns(&mut free);
        assert_eq!(free, [1, 2, 3]);
        let mut fixed = [0, 1, 0, 1];
        order_fixed_columns(&mut fixed);
        assert_eq!(fixed, [2, 4, 3, 1]);
    }
}
