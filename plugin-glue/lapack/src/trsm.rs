//! `lapack_?trsm_ffi`: triangular solve with many right-hand sides (BLAS
//! `?trsm`, alpha = 1). Reference §3.1.

use crate::call::{Batched, Call, Ctx, piece};
use crate::checked;
use crate::fast_path::FastPath;
use crate::small;
use plugin_glue::handler::HandlerError;

/// The arguments of one [`small::trsm`].
#[derive(Clone, Copy)]
pub(crate) struct Trsm {
    pub side: u8,
    pub uplo: u8,
    pub trans: u8,
    pub diag: u8,
    pub m: usize,
    pub n: usize,
}

/// Solves `op(A)·X = B` (`side = 'L'`) or `X·op(A) = B` (`side = 'R'`) for
/// each batch element, in place in `x` (which holds B on entry). `a` holds
/// the `p×p` triangular matrices (p = m or n), `x` the `m×n` blocks. Small
/// real triangles use the Rust solve of [`small`], the others BLAS.
#[expect(clippy::too_many_arguments, reason = "mirrors the BLAS routine")]
pub(crate) fn trsm<T: FastPath>(
    ctx: &Ctx<'_>,
    side: u8,
    uplo: u8,
    trans: u8,
    diag: u8,
    m: usize,
    n: usize,
    a: &[T],
    x: &mut [T],
) -> Result<(), HandlerError> {
    if m == 0 || n == 0 {
        return Ok(());
    }
    let p = if side == b'L' { m } else { n };
    let batch = x.len() / (m * n);
    let (mi, ni, pi) = (ctx.int("m", m)?, ctx.int("n", n)?, ctx.int("p", p)?);
    let xb = Batched::new(x, m * n, batch);
    let flops = (p * p) as f64 * if side == b'L' { n } else { m } as f64;
    let rhs = if side == b'L' { n } else { m };
    let rust_kernel = p <= small::MAX_DIM && rhs <= small::MAX_RHS;
    ctx.for_each(
        batch,
        flops,
        || (),
        |(), b| {
            let ab = piece(a, p * p, b);
            // SAFETY: each batch index is handed to one worker only.
            let xb = unsafe { xb.get(b) };
            if rust_kernel && T::trsm_small(side, uplo, trans, diag, m, n, ab, xb) {
                return;
            }
            checked::trsm(
                ctx.lib.symbols(),
                side,
                uplo,
                trans,
                diag,
                mi,
                ni,
                ab,
                pi,
                xb,
                mi,
            );
        },
    );
    Ok(())
}

/// The handler: operands `a`, `b`; result `x` (alias ← b); attributes
/// `side`, `uplo`, `trans_x`, `diag`.
pub(crate) fn run<T: FastPath>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let ([a, b], [x]) = call.operands(["a", "b"], ["x"])?;
    b.dtype(T::DTYPE)?;
    let (batch, m, n) = b.matrix()?;
    let side = call.char_attr("side", b"LR")?;
    let uplo = call.char_attr("uplo", b"LU")?;
    let trans = call.char_attr("trans_x", b"NTC")?;
    let diag = call.char_attr("diag", b"NU")?;
    let p = if side == b'L' { m } else { n };
    a.expect(T::DTYPE, batch, &[p, p])?;
    // SAFETY: `a` is a read-only operand that XLA does not alias with the
    // result; `x` is our result and `b` is not used after the alias step.
    let (a, x) = unsafe { (a.slice::<T>()?, b.alias_into::<T>(&x)?) };
    trsm(ctx, side, uplo, trans, diag, m, n, a, x)
}
