//! `lapack_?gees_ffi`: Schur decomposition.
//!
//! Contract: docs/lapack-targets.md, "lapack_?gees_ffi".

use crate::call::{Batched, Call, Ctx, Operand};
use crate::checked;
use crate::scalar::{ComplexLapack, LapackScalar, RealLapack, RealScalar};
use plugin_glue::handler::{ErrorCode, HandlerError};

/// Outputs of a gees call, batch-major. For real types `w` holds the real
/// parts of the eigenvalues and `wi` the imaginary parts; for complex types
/// `w` holds the eigenvalues and `wi` is empty.
pub(crate) struct GeesOut<'a, T> {
    /// The Schur form T, over the input (n×n per element).
    pub t: &'a mut [T],
    /// Schur vectors Z (n×n per element; zero-filled in mode 'N').
    pub z: &'a mut [T],
    /// Eigenvalues (real parts for real types), n per element.
    pub w: &'a mut [T],
    /// Imaginary parts for real types, n per element; empty for complex.
    pub wi: &'a mut [T],
    /// Number of selected eigenvalues (always 0: no sorting).
    pub sdim: &'a mut [i32],
    /// INFO per element.
    pub info: &'a mut [i32],
}

/// `?gees` (no sorting) on every `n×n` element of `out.t`, in place.
pub(crate) fn gees<T: LapackScalar>(
    ctx: &Ctx<'_>,
    jobvs: u8,
    n: usize,
    out: GeesOut<'_, T>,
) -> Result<(), HandlerError> {
    let batch = out.info.len();
    out.sdim.fill(0);
    if jobvs != b'V' || n == 0 {
        out.z.fill(T::default());
    }
    let Some(ni) = ctx.order(n, out.info)? else {
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
    let wi_stride = if out.wi.is_empty() { 0 } else { n };
    let elements = (
        Batched::new(out.t, nn, batch),
        Batched::new(out.z, nn, batch),
        Batched::new(out.w, n, batch),
        Batched::new(out.wi, wi_stride, batch),
        Batched::new(out.sdim, 1, batch),
        Batched::new(out.info, 1, batch),
    );
    let flops = 25.0 * (nn * n) as f64;
    let init = || {
        (
            vec![T::default(); lwork],
            vec![<T::Real as RealScalar>::ZERO; if T::IS_COMPLEX { n } else { 1 }],
            vec![T::default(); nn],
        )
    };
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

/// Both handlers once their operands are named: `w` holds the eigenvalues
/// (their real parts for the real types) and `wi`, the real types' only,
/// their imaginary parts.
fn run_with<'a, T: LapackScalar>(
    ctx: &Ctx<'_>,
    call: &Call<'a>,
    a: Operand<'a>,
    [t, z, w]: [Operand<'a>; 3],
    wi: Option<Operand<'a>>,
    [sdim, info]: [Operand<'a>; 2],
) -> Result<(), HandlerError> {
    let (batch, n, jobvs) = common::<T>(call, &a)?;
    z.expect(T::DTYPE, batch, &[n, n])?;
    for w in std::iter::once(&w).chain(&wi) {
        w.expect(T::DTYPE, batch, &[n])?;
    }
    sdim.expect_scalars(batch)?;
    info.expect_scalars(batch)?;
    // SAFETY: results are ours and distinct; the operand is not used after
    // the alias step.
    let out = unsafe {
        GeesOut {
            t: a.alias_into::<T>(&t)?,
            z: z.slice_mut()?,
            w: w.slice_mut()?,
            wi: match wi {
                Some(wi) => wi.slice_mut()?,
                None => &mut [],
            },
            sdim: sdim.slice_mut()?,
            info: info.slice_mut()?,
        }
    };
    gees(ctx, jobvs, n, out)
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
