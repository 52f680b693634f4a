//! `lapack_?syevd_ffi` / `lapack_?heevd_ffi`: Hermitian eigendecomposition
//! (divide and conquer).
//!
//! Contract: docs/lapack-targets.md, "lapack_?syevd_ffi".

use crate::call::{Batched, Call, Ctx};
use crate::checked;
use crate::fast_path::FastPath;
use crate::small_eigh;
use plugin_glue::handler::HandlerError;

/// The handler: operand `a`; results `v` (alias ← a), `w`, `info`;
/// attributes `uplo`, `mode`. For each `n×n` block of `a` (the `uplo`
/// triangle is read), writes the eigenvalues in ascending order to `w` (n per
/// element) and, with `jobz = 'V'`, the orthonormal eigenvectors over `a`.
/// Real matrices of order up to 25 with eigenvectors run LAPACK's own
/// algorithm for that case ported to Rust ([`small_eigh`]); a single large
/// real one runs `?syevd`'s steps with the last two split over threads
/// ([`split::syevd`](crate::split::syevd)); the others LAPACK.
pub(crate) fn run<T: FastPath>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let ([a], [v, w, info]) = call.operands(["a"], ["v", "w", "info"])?;
    let (batch_dims, n) = a.square(T::DTYPE)?;
    let uplo = call.char_attr("uplo", b"LU")?;
    let jobz = call.char_attr("mode", b"VN")?;
    w.expect(<T::Real as crate::scalar::Elem>::DTYPE, batch_dims, &[n])?;
    info.expect_scalars(batch_dims)?;
    // SAFETY: results are ours; the operand is not used after the alias step.
    let (a, w, info) = unsafe { (a.alias_into::<T>(&v)?, w.slice_mut()?, info.slice_mut()?) };
    let batch = info.len();
    let Some(ni) = ctx.order(n, info)? else {
        return Ok(());
    };
    let l = ctx.lib.symbols();
    let flops = 9.0 * (n * n * n) as f64;
    if T::RUST_KERNELS && jobz == b'V' && n <= small_eigh::MAX_N {
        let elements = (
            Batched::new(a, n * n, batch),
            Batched::new(w, n, batch),
            Batched::new(info, 1, batch),
        );
        let init = || small_eigh::Work::new(n);
        ctx.for_each_element(batch, flops, init, elements, |work, (a, w, i)| {
            // Real types always have the Rust kernel; -1 would be
            // reported as a bad argument if one ever did not.
            i[0] = T::syevd_small(uplo, n, a, w, work).unwrap_or(-1);
        });
        return Ok(());
    }
    if batch == 1
        && jobz == b'V'
        && let Some(i) = T::syevd_split(ctx, uplo, n, a, w)?
    {
        info[0] = i;
        return Ok(());
    }
    let (lwork, lrwork, liwork) = checked::syevd_lwork::<T>(l, jobz, uplo, ni, ni);
    ctx.int("lwork", lwork)?;
    ctx.int("lrwork", lrwork)?;
    ctx.int("liwork", liwork)?;
    let elements = (
        Batched::new(a, n * n, batch),
        Batched::new(w, n, batch),
        Batched::new(info, 1, batch),
    );
    let init = || {
        (
            vec![T::default(); lwork],
            checked::rwork::<T>(lrwork),
            vec![0i32; liwork],
        )
    };
    ctx.for_each_element(
        batch,
        flops,
        init,
        elements,
        |(work, rwork, iwork), (a, w, i)| {
            i[0] = checked::syevd(l, jobz, uplo, ni, a, ni, w, work, rwork, iwork);
        },
    );
    Ok(())
}
