//! `lapack_?gees_ffi`: Schur decomposition. Reference §3.12.

use crate::call::{Batched, Call, Ctx, Operand};
use crate::checked;
use crate::scalar::{ComplexLapack, LapackScalar, RealLapack, RealScalar};
use plugin_glue::dtype::DType;
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

/// What distinguishes the real and complex `?gees`.
pub(crate) trait Gees: LapackScalar {
    /// Length of the real workspace (`n` for complex types, 0 for real).
    fn rwork_len(n: usize) -> usize;
    /// The optimal LWORK of [`Gees::call`] for these dims.
    fn lwork(ctx: &Ctx<'_>, jobvs: u8, n: i32) -> usize;
    /// One `?gees` call on the n×n `a` (`wi` and `rwork` unused by the
    /// variant that has none).
    #[expect(clippy::too_many_arguments, reason = "mirrors the LAPACK routine")]
    fn call(
        ctx: &Ctx<'_>,
        jobvs: u8,
        n: i32,
        a: &mut [Self],
        sdim: &mut [i32],
        w: &mut [Self],
        wi: &mut [Self],
        vs: &mut [Self],
        work: &mut [Self],
        rwork: &mut [Self::Real],
    ) -> i32;
}

impl<T: RealLapack> Gees for T {
    fn rwork_len(_: usize) -> usize {
        0
    }
    fn lwork(ctx: &Ctx<'_>, jobvs: u8, n: i32) -> usize {
        checked::lwork::gees_real::<T>(ctx.lib.symbols(), jobvs, n, n, n)
    }
    fn call(
        ctx: &Ctx<'_>,
        jobvs: u8,
        n: i32,
        a: &mut [T],
        sdim: &mut [i32],
        w: &mut [T],
        wi: &mut [T],
        vs: &mut [T],
        work: &mut [T],
        _rwork: &mut [T],
    ) -> i32 {
        checked::gees_real(ctx.lib.symbols(), jobvs, n, a, n, sdim, w, wi, vs, n, work)
    }
}

/// Complex element types, wrapped so the blanket real impl does not clash.
macro_rules! complex_gees {
    ($t:ty) => {
        impl Gees for $t {
            fn rwork_len(n: usize) -> usize {
                n
            }
            fn lwork(ctx: &Ctx<'_>, jobvs: u8, n: i32) -> usize {
                checked::lwork::gees_complex::<$t>(ctx.lib.symbols(), jobvs, n, n, n)
            }
            fn call(
                ctx: &Ctx<'_>,
                jobvs: u8,
                n: i32,
                a: &mut [Self],
                sdim: &mut [i32],
                w: &mut [Self],
                _wi: &mut [Self],
                vs: &mut [Self],
                work: &mut [Self],
                rwork: &mut [Self::Real],
            ) -> i32 {
                checked::gees_complex(
                    ctx.lib.symbols(),
                    jobvs,
                    n,
                    a,
                    n,
                    sdim,
                    w,
                    vs,
                    n,
                    work,
                    rwork,
                )
            }
        }
    };
}
complex_gees!(num_complex::Complex<f32>);
complex_gees!(num_complex::Complex<f64>);

/// `?gees` (no sorting) on every `n×n` element of `out.t`, in place.
pub(crate) fn gees<T: Gees>(
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
    if n == 0 {
        out.info.fill(0);
        return Ok(());
    }
    let ni = ctx.int("n", n)?;
    let lwork = T::lwork(ctx, jobvs, ni);
    ctx.int("lwork", lwork)?;
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
            vec![<T::Real as RealScalar>::ZERO; T::rwork_len(n).max(1)],
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
            i[0] = T::call(ctx, jobvs, ni, t, s, w, wi, vs, work, rwork);
        },
    );
    Ok(())
}

fn common<'a, T: LapackScalar>(
    call: &Call<'a>,
    a: &Operand<'a>,
) -> Result<(&'a [i64], usize, u8), HandlerError> {
    a.dtype(T::DTYPE)?;
    let (batch, m, n) = a.matrix()?;
    if m != n {
        return Err(a.err(format_args!("must be square, got {m}×{n}")));
    }
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

/// The real handler: operand `a`; results `t` (alias ← a), `z`, `wr`, `wi`,
/// `sdim`, `info`; attributes `mode`, `sort`.
pub(crate) fn run_real<T: RealLapack>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let ([a], [t, z, wr, wi, sdim, info]) =
        call.operands(["a"], ["t", "z", "wr", "wi", "sdim", "info"])?;
    let (batch, n, jobvs) = common::<T>(call, &a)?;
    z.expect(T::DTYPE, batch, &[n, n])?;
    wr.expect(T::DTYPE, batch, &[n])?;
    wi.expect(T::DTYPE, batch, &[n])?;
    sdim.expect(DType::S32, batch, &[])?;
    info.expect(DType::S32, batch, &[])?;
    // SAFETY: results are ours and distinct; the operand is not used after
    // the alias step.
    let out = unsafe {
        GeesOut {
            t: a.alias_into::<T>(&t)?,
            z: z.slice_mut()?,
            w: wr.slice_mut()?,
            wi: wi.slice_mut()?,
            sdim: sdim.slice_mut()?,
            info: info.slice_mut()?,
        }
    };
    gees(ctx, jobvs, n, out)
}

/// The complex handler: operand `a`; results `t` (alias ← a), `z`, `w`,
/// `sdim`, `info`; attributes `mode`, `sort`.
pub(crate) fn run_complex<T: Gees + ComplexLapack>(
    ctx: &Ctx<'_>,
    call: &Call<'_>,
) -> Result<(), HandlerError> {
    let ([a], [t, z, w, sdim, info]) = call.operands(["a"], ["t", "z", "w", "sdim", "info"])?;
    let (batch, n, jobvs) = common::<T>(call, &a)?;
    z.expect(T::DTYPE, batch, &[n, n])?;
    w.expect(T::DTYPE, batch, &[n])?;
    sdim.expect(DType::S32, batch, &[])?;
    info.expect(DType::S32, batch, &[])?;
    // SAFETY: as in `run_real`.
    let out = unsafe {
        GeesOut {
            t: a.alias_into::<T>(&t)?,
            z: z.slice_mut()?,
            w: w.slice_mut()?,
            wi: &mut [],
            sdim: sdim.slice_mut()?,
            info: info.slice_mut()?,
        }
    };
    gees(ctx, jobvs, n, out)
}
