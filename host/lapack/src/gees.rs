//! `lapack_?gees_ffi`: Schur decomposition.
//!
//! Contract: docs/lapack-targets.md, "lapack_?gees_ffi".

use crate::call::{Batched, Call, Ctx, Operand};
use crate::checked;
use crate::geev::workspace;
use crate::scalar::{ComplexLapack, LapackScalar, RealLapack};
use plugin_glue::handler::{ErrorCode, HandlerError};

fn common<'a, T: LapackScalar>(
    call: &Call<'a>,
    a: &Operand<'a>,
) -> Result<(&'a [i64], usize, u8), HandlerError> {
    let (batch, n) = a.square(T::DTYPE)?;
    let jobvs = call.char_attr("mode", b"VN")?;
    if call.char_attr("sort", b"NS")? == b'S' {
        return Err(HandlerError::new(
            ErrorCode::Unimplemented,
            format!(
                "{}: sort = 'S' (sorted Schur form) is not implemented, as in jaxlib",
                call.target
            ),
        ));
    }
    Ok((batch, n, jobvs))
}

/// Both handlers once their operands are named: `?gees` (no sorting) on
/// every `n×n` element of `a`, in place. The Schur form T goes over `a` (into
/// `t`), the Schur vectors to `z` (zero-filled in mode 'N'), the eigenvalues
/// to `w` (their real parts for the real types) and `wi`, the real types'
/// only, their imaginary parts; `sdim` (always 0: no sorting) and `info` get
/// one per element.
fn run_with<'a, T: LapackScalar>(
    ctx: &Ctx<'_>,
    call: &Call<'a>,
    a: Operand<'a>,
    [t, z, w]: [Operand<'a>; 3],
    wi: Option<Operand<'a>>,
    [sdim, info]: [Operand<'a>; 2],
) -> Result<(), HandlerError> {
    let (batch_dims, n, jobvs) = common::<T>(call, &a)?;
    z.expect(T::DTYPE, batch_dims, &[n, n])?;
    for w in std::iter::once(&w).chain(&wi) {
        w.expect(T::DTYPE, batch_dims, &[n])?;
    }
    sdim.expect_scalars(batch_dims)?;
    info.expect_scalars(batch_dims)?;
    // SAFETY: results are ours and distinct; the operand is not used after
    // the alias step.
    let (t, z, w, wi, sdim, info) = unsafe {
        (
            a.alias_into::<T>(&t)?,
            z.slice_mut()?,
            w.slice_mut()?,
            match wi {
                Some(wi) => wi.slice_mut()?,
                None => &mut [],
            },
            sdim.slice_mut()?,
            info.slice_mut()?,
        )
    };
    let batch = info.len();
    sdim.fill(0);
    if jobvs != b'V' || n == 0 {
        z.fill(T::default());
    }
    let Some(ni) = ctx.order(n, info)? else {
        return Ok(());
    };
    let lwork = ctx.lwork(checked::lwork::gees::<T>(
        ctx.lib.symbols(),
        jobvs,
        ni,
        ni,
        ni,
    ))?;
    let nn = n * n;
    let wi_stride = if wi.is_empty() { 0 } else { n };
    let elements = (
        Batched::new(t, nn, batch),
        Batched::new(z, nn, batch),
        Batched::new(w, n, batch),
        Batched::new(wi, wi_stride, batch),
        Batched::new(sdim, 1, batch),
        Batched::new(info, 1, batch),
    );
    let flops = 25.0 * (nn * n) as f64;
    let init = || workspace::<T>(lwork, n, nn);
    ctx.for_each_element(
        batch,
        flops,
        init,
        elements,
        |(work, rwork, zscratch), (t, z, w, wi, s, i)| {
            let vs: &mut [T] = if jobvs == b'V' { z } else { zscratch };
            i[0] = checked::gees(
                ctx.lib.symbols(),
                jobvs,
                ni,
                t,
                ni,
                s,
                w,
                wi,
                vs,
                ni,
                work,
                rwork,
            );
        },
    );
    Ok(())
}

/// The real handler: operand `a`; results `t` (alias ← a), `z`, `wr`, `wi`,
/// `sdim`, `info`; attributes `mode`, `sort`.
pub(crate) fn run_real<T: RealLapack>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let ([a], [t, z, wr, wi, sdim, info]) =
        call.operands(["a"], ["t", "z", "wr", "wi", "sdim", "info"])?;
    run_with::<T>(ctx, call, a, [t, z, wr], Some(wi), [sdim, info])
}

/// The complex handler: operand `a`; results `t` (alias ← a), `z`, `w`,
/// `sdim`, `info`; attributes `mode`, `sort`.
pub(crate) fn run_complex<T: ComplexLapack>(
    ctx: &Ctx<'_>,
    call: &Call<'_>,
) -> Result<(), HandlerError> {
    let ([a], [t, z, w, sdim, info]) = call.operands(["a"], ["t", "z", "w", "sdim", "info"])?;
    run_with::<T>(ctx, call, a, [t, z, w], None, [sdim, info])
}
