//! `lapack_?gesvd_ffi`: singular value decomposition by QR iteration.
//! Reference §3.10 (operands, results and checks as gesdd, §3.9).

use crate::call::{Batched, Call, Ctx, QueryArrays, workspace};
use crate::fast_path::FastPath;
use crate::gesdd::{SvdDims, SvdOut, svd_call};
use crate::scalar::RealScalar;
use plugin_glue::handler::HandlerError;

/// `?gesvd` (jobu = jobvt = `mode`) on every element; `mode` 'N' zero-fills
/// u and vt.
pub(crate) fn gesvd<T: FastPath>(
    ctx: &Ctx<'_>,
    mode: u8,
    d: SvdDims,
    out: SvdOut<'_, T>,
) -> Result<(), HandlerError> {
    let SvdDims { m, n, uc, vr } = d;
    let k = m.min(n);
    if k == 0 {
        // Same convention as gesdd for empty matrices.
        return crate::gesdd::gesdd(ctx, mode, d, out);
    }
    let batch = out.info.len();
    if mode == b'N' {
        out.u.fill(T::default());
        out.vt.fill(T::default());
    }
    let (mi, ni, ldvt) = (
        ctx.int("m", m)?,
        ctx.int("n", n)?,
        ctx.int("vt rows", vr.max(1))?,
    );
    let l = ctx.lib.symbols();
    let mut q = QueryArrays::<T>::new();
    // SAFETY: a workspace query (lwork = -1) reads only the dims and
    // writes the first element of the work arrays.
    let lwork = workspace(|w: &mut T| unsafe {
        T::gesvd(
            l,
            mode,
            mi,
            ni,
            q.t(0),
            mi,
            q.r(0),
            q.t(1),
            mi,
            q.t(2),
            ldvt,
            w,
            -1,
            q.r(1),
        )
    });
    let lworki = ctx.int("lwork", lwork)?;
    let lrwork = if T::IS_COMPLEX { 5 * k } else { 1 };
    let (ab, sb, ib) = (
        Batched::new(out.a, m * n, batch),
        Batched::new(out.s, k, batch),
        Batched::new(out.info, 1, batch),
    );
    let (ub, vb) = (
        Batched::new(out.u, m * uc, batch),
        Batched::new(out.vt, vr * n, batch),
    );
    let flops = 20.0 * (m * n * k) as f64;
    let init = || {
        (
            vec![T::default(); lwork],
            vec![<T::Real as RealScalar>::ZERO; lrwork],
        )
    };
    ctx.for_each(batch, flops, init, |(work, rwork), b| {
        // SAFETY: each batch index is handed to one worker only.
        let (a, s, u, vt, i) = unsafe { (ab.get(b), sb.get(b), ub.get(b), vb.get(b), ib.get(b)) };
        let (mut du, mut dvt) = ([T::default()], [T::default()]);
        let up = if u.is_empty() {
            du.as_mut_ptr()
        } else {
            u.as_mut_ptr()
        };
        let vtp = if vt.is_empty() {
            dvt.as_mut_ptr()
        } else {
            vt.as_mut_ptr()
        };
        // SAFETY: as in gesdd: the buffers have the shapes the mode needs
        // (checked by `svd_call`) and the workspaces the queried sizes.
        i[0] = unsafe {
            T::gesvd(
                l,
                mode,
                mi,
                ni,
                a.as_mut_ptr(),
                mi,
                s.as_mut_ptr(),
                up,
                mi,
                vtp,
                ldvt,
                work.as_mut_ptr(),
                lworki,
                rwork.as_mut_ptr(),
            )
        };
    });
    Ok(())
}

/// The handler: as gesdd.
pub(crate) fn run<T: FastPath>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let (mode, dims, out) = svd_call::<T>(call)?;
    gesvd(ctx, mode, dims, out)
}
