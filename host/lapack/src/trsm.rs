//! `lapack_?trsm_ffi`: triangular solve with many right-hand sides (BLAS
//! `?trsm`, alpha = 1).
//!
//! Contract: docs/lapack-targets.md, "lapack_?trsm_ffi".

use crate::call::{Batched, Call, Ctx, Shared};
use crate::checked;
use crate::fast_path::FastPath;
use crate::ffi::LapackSymbols;
use crate::scalar::LapackScalar;
use crate::small::{self, Trsm};
use plugin_glue::handler::HandlerError;

impl Trsm {
    /// BLAS `?trsm` on one batch element: the triangle A in `a`
    /// ([`Trsm::order`] square) and B in `b` (m×n), solved in place; `ints`
    /// holds m, n and the order as BLAS integers.
    pub fn blas<T: LapackScalar>(
        &self,
        l: &LapackSymbols,
        [m, n, order]: [i32; 3],
        a: &[T],
        b: &mut [T],
    ) {
        let (side, uplo, trans, diag) = (self.side, self.uplo, self.trans, self.diag);
        checked::trsm(l, side, uplo, trans, diag, m, n, a, order, b, m);
    }
}

/// Solves `op(A)·X = B` (`side = 'L'`) or `X·op(A) = B` (`side = 'R'`) for
/// each batch element, in place in `x` (which holds B on entry). `a` holds
/// the `p×p` triangular matrices (p = m or n), `x` the `m×n` blocks. Small
/// real triangles use the Rust solve of [`small`], the others BLAS.
pub(crate) fn trsm<T: FastPath>(
    ctx: &Ctx<'_>,
    args: Trsm,
    a: &[T],
    x: &mut [T],
) -> Result<(), HandlerError> {
    let (m, n) = (args.m, args.n);
    if m == 0 || n == 0 {
        return Ok(());
    }
    let p = args.order();
    let batch = x.len() / (m * n);
    let ints = [ctx.int("m", m)?, ctx.int("n", n)?, ctx.int("p", p)?];
    let elements = (Shared::new(a, p * p), Batched::new(x, m * n, batch));
    let rhs = args.right_hand_sides();
    let flops = (p * p) as f64 * rhs as f64;
    let rust_kernel = p <= small::MAX_DIM && rhs <= small::MAX_RHS;
    ctx.for_each_element(
        batch,
        flops,
        || (),
        elements,
        |(), (ab, xb)| {
            if rust_kernel && T::trsm_small(args, ab, xb) {
                return;
            }
            args.blas(ctx.lib.symbols(), ints, ab, xb);
        },
    );
    Ok(())
}

/// The handler: operands `a`, `b`; result `x` (alias ← b); attributes
/// `side`, `uplo`, `trans_x`, `diag`.
pub(crate) fn run<T: FastPath>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let ([a, b], [x]) = call.operands(["a", "b"], ["x"])?;
    let (batch, m, n) = b.matrix_of(T::DTYPE)?;
    let args = Trsm {
        side: call.char_attr("side", b"LR")?,
        uplo: call.char_attr("uplo", b"LU")?,
        trans: call.char_attr("trans_x", b"NTC")?,
        diag: call.char_attr("diag", b"NU")?,
        m,
        n,
    };
    let p = args.order();
    a.expect(T::DTYPE, batch, &[p, p])?;
    // SAFETY: `a` is a read-only operand that XLA does not alias with the
    // result; `x` is our result and `b` is not used after the alias step.
    let (a, x) = unsafe { (a.slice::<T>()?, b.alias_into::<T>(&x)?) };
    trsm(ctx, args, a, x)
}
