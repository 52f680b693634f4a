//! `lapack_?getrf_ffi`: LU factorisation with partial pivoting.
//!
//! Contract: docs/lapack-targets.md, "lapack_?getrf_ffi".

use crate::call::{Batched, Call, Ctx};
use crate::checked;
use crate::fast_path::FastPath;
use crate::small;
use plugin_glue::dtype::DType;
use plugin_glue::handler::HandlerError;

/// The handler: operand `a`; results `lu` (alias ← a), `ipiv`, `info`.
/// Factors each `m×n` block of `a` in place; writes 1-based pivots (`k =
/// min(m,n)` per element) and `info` (one per element). Small real matrices
/// use the Rust LU of [`small`], the others LAPACK.
pub(crate) fn run<T: FastPath>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let ([a], [lu, ipiv, info]) = call.operands(["a"], ["lu", "ipiv", "info"])?;
    let (batch_dims, m, n) = a.matrix_of(T::DTYPE)?;
    let k = m.min(n);
    ipiv.expect(DType::S32, batch_dims, &[k])?;
    info.expect_scalars(batch_dims)?;
    // SAFETY: results are ours; the operand is not used after the alias step.
    let (a, ipiv, info) = unsafe {
        (
            a.alias_into::<T>(&lu)?,
            ipiv.slice_mut()?,
            info.slice_mut()?,
        )
    };
    let batch = info.len();
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
    // One matrix: the Rust LU when small, else LAPACK.
    let one = |a: &mut [T], p: &mut [i32]| -> i32 {
        if let Some(info) = rust_kernel.then(|| T::getrf_small(m, n, a, p)).flatten() {
            return info;
        }
        checked::getrf(ctx.lib.symbols(), mi, ni, a, mi, p)
    };
    if T::RUST_KERNELS && m == n && n <= small::FIXED_MAX && batch > 1 {
        // Tiny square matrices: factored small::LANES at a time.
        let lanes = small::LANES;
        ctx.for_each(
            batch.div_ceil(lanes),
            flops * lanes as f64,
            || (),
            |(), g| {
                // SAFETY: each group index is handed to one worker only, and
                // groups are disjoint ranges of batch elements.
                let (a, p, i) = unsafe {
                    (
                        ab.get_range(g * lanes, lanes),
                        pb.get_range(g * lanes, lanes),
                        ib.get_range(g * lanes, lanes),
                    )
                };
                if !T::getrf_small_group(n, a, p, i) {
                    for ((a, p), i) in a.chunks_exact_mut(n * n).zip(p.chunks_exact_mut(n)).zip(i) {
                        *i = one(a, p);
                    }
                }
            },
        );
        return Ok(());
    }
    let elements = (ab, pb, ib);
    ctx.for_each_element(
        batch,
        flops,
        || (),
        elements,
        |(), (a, p, i)| {
            i[0] = one(a, p);
        },
    );
    Ok(())
}
