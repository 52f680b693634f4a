//! `lapack_?getrf_ffi`: LU factorisation with partial pivoting. Reference §3.2.

use crate::dtype::DType;
use crate::handler::HandlerError;
use crate::lapack::call::{Batched, Call, Ctx};
use crate::lapack::scalar::Scalar;
use crate::lapack::small;

/// Factors each `m×n` block of `a` in place; writes 1-based pivots (`k =
/// min(m,n)` per element) and `info` (one per element). Small real matrices
/// use the Rust LU of [`small`], the others LAPACK.
pub(crate) fn getrf<T: Scalar>(
    ctx: &Ctx<'_>,
    m: usize,
    n: usize,
    a: &mut [T],
    ipiv: &mut [i32],
    info: &mut [i32],
) -> Result<(), HandlerError> {
    let batch = info.len();
    let k = m.min(n);
    if k == 0 {
        info.fill(0);
        return Ok(());
    }
    let (mi, ni) = (ctx.int("m", m)?, ctx.int("n", n)?);
    let (ab, pb, ib) = (
        Batched::new(a, m * n, batch),
        Batched::new(ipiv, k, batch),
        Batched::new(info, 1, batch),
    );
    let flops = (m * n * k) as f64;
    let rust_kernel = m.max(n) <= small::MAX_DIM;
    ctx.for_each(
        batch,
        flops,
        || (),
        |(), b| {
            // SAFETY: each batch index is handed to one worker only.
            let (a, p, i) = unsafe { (ab.get(b), pb.get(b), ib.get(b)) };
            if let Some(info) = rust_kernel.then(|| T::getrf_small(m, n, a, p)).flatten() {
                i[0] = info;
                return;
            }
            // SAFETY: `a` is m×n with lda = m, `p` holds min(m,n) pivots.
            i[0] = unsafe {
                T::getrf(
                    ctx.lib.symbols(),
                    mi,
                    ni,
                    a.as_mut_ptr(),
                    mi,
                    p.as_mut_ptr(),
                )
            };
        },
    );
    Ok(())
}

/// The handler: operand `a`; results `lu` (alias ← a), `ipiv`, `info`.
pub(crate) fn run<T: Scalar>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    call.arity(1, 3)?;
    let (a, lu, ipiv, info) = (
        call.arg(0, "a")?,
        call.ret(0, "lu")?,
        call.ret(1, "ipiv")?,
        call.ret(2, "info")?,
    );
    a.dtype(T::DTYPE)?;
    let (batch, m, n) = a.matrix()?;
    ipiv.expect(DType::S32, batch, &[m.min(n)])?;
    info.expect(DType::S32, batch, &[])?;
    // SAFETY: results are ours; the operand is not used after the alias step.
    let (lu, ipiv, info) = unsafe {
        (
            a.alias_into::<T>(&lu)?,
            ipiv.slice_mut()?,
            info.slice_mut()?,
        )
    };
    getrf(ctx, m, n, lu, ipiv, info)
}
