//! `lapack_?geev_ffi`: eigenvalues and eigenvectors of a general matrix.
//!
//! Contract: docs/lapack-targets.md, "lapack_?geev_ffi".

use num_complex::Complex;

use crate::call::{Batched, Call, Ctx, Operand, Shared};
use crate::checked;
use crate::scalar::{ComplexLapack, Elem, LapackScalar, RealLapack, RealScalar};
use plugin_glue::handler::HandlerError;

/// `info` jaxlib reports for an input with NaN or infinite entries, which it
/// never hands to LAPACK.
pub(crate) const NON_FINITE_INFO: i32 = -4;

/// Outputs of a real geev call, batch-major.
pub(crate) struct RealGeevOut<'a, T> {
    /// Real parts of the eigenvalues (n per element).
    pub wr: &'a mut [T],
    /// Imaginary parts (n per element).
    pub wi: &'a mut [T],
    /// Left eigenvectors, unpacked to complex (n×n per element).
    pub vl: &'a mut [Complex<T>],
    /// Right eigenvectors, unpacked to complex (n×n per element).
    pub vr: &'a mut [Complex<T>],
    /// INFO per element.
    pub info: &'a mut [i32],
}

/// Expands LAPACK's packed real eigenvectors into complex columns: a real
/// eigenvalue (wi = 0 or NaN) owns one real column; a conjugate pair owns
/// columns j (real part) and j+1 (imaginary part).
pub(crate) fn unpack_eigenvectors<T: RealScalar>(
    n: usize,
    wi: &[T],
    packed: &[T],
    out: &mut [Complex<T>],
) {
    let mut j = 0;
    while j < n {
        let col = |c: usize| &packed[c * n..(c + 1) * n];
        if wi[j] == T::ZERO || wi[j].to_f64().is_nan() || j + 1 == n {
            for (o, &p) in out[j * n..(j + 1) * n].iter_mut().zip(col(j)) {
                *o = Complex { re: p, im: T::ZERO };
            }
            j += 1;
        } else {
            let (re, im) = (col(j), col(j + 1));
            for i in 0..n {
                out[j * n + i] = Complex {
                    re: re[i],
                    im: im[i],
                };
                out[(j + 1) * n + i] = Complex {
                    re: re[i],
                    im: -im[i],
                };
            }
            j += 2;
        }
    }
}

/// What both variants do before their loop: n as a LAPACK integer and the
/// optimal LWORK, or `None` when n is 0 (every INFO 0, nothing to do).
fn start<T: LapackScalar>(
    ctx: &Ctx<'_>,
    [jobvl, jobvr]: [u8; 2],
    n: usize,
    info: &mut [i32],
) -> Result<Option<(i32, usize)>, HandlerError> {
    let Some(ni) = ctx.order(n, info)? else {
        return Ok(None);
    };
    let l = ctx.lib.symbols();
    let lwork = ctx.lwork(checked::lwork::geev::<T>(l, jobvl, jobvr, ni, ni, ni, ni))?;
    Ok(Some((ni, lwork)))
}

/// `?geev` on every real `n×n` element of `a` (left untouched).
pub(crate) fn geev_real<T: RealLapack>(
    ctx: &Ctx<'_>,
    jobvl: u8,
    jobvr: u8,
    n: usize,
    a: &[T],
    out: RealGeevOut<'_, T>,
) -> Result<(), HandlerError> {
    let batch = out.info.len();
    let zero = Complex {
        re: T::ZERO,
        im: T::ZERO,
    };
    out.vl.fill(zero);
    out.vr.fill(zero);
    let Some((ni, lwork)) = start::<T>(ctx, [jobvl, jobvr], n, out.info)? else {
        return Ok(());
    };
    let l = ctx.lib.symbols();
    let nn = n * n;
    let elements = (
        Shared::new(a, nn),
        Batched::new(out.wr, n, batch),
        Batched::new(out.wi, n, batch),
        Batched::new(out.vl, nn, batch),
        Batched::new(out.vr, nn, batch),
        Batched::new(out.info, 1, batch),
    );
    let flops = 25.0 * (nn * n) as f64;
    let init = || {
        (
            vec![T::default(); lwork],
            vec![T::ZERO; nn],
            vec![T::ZERO; nn],
            vec![T::ZERO; nn],
        )
    };
    ctx.for_each_element(
        batch,
        flops,
        init,
        elements,
        |(work, scratch, pl, pr), (input, wr, wi, vl, vr, i)| {
            if !input.iter().all(|x| x.is_finite()) {
                wr.fill(T::NAN);
                wi.fill(T::NAN);
                i[0] = NON_FINITE_INFO;
                return;
            }
            scratch.copy_from_slice(input);
            i[0] = checked::geev(
                l,
                jobvl,
                jobvr,
                ni,
                scratch,
                ni,
                wr,
                wi,
                pl,
                ni,
                pr,
                ni,
                work,
                &mut [T::ZERO],
            );
            if i[0] == 0 {
                if jobvl == b'V' {
                    unpack_eigenvectors(n, wi, pl, vl);
                }
                if jobvr == b'V' {
                    unpack_eigenvectors(n, wi, pr, vr);
                }
            }
        },
    );
    Ok(())
}

/// Outputs of a complex geev call, batch-major.
pub(crate) struct ComplexGeevOut<'a, T> {
    /// Eigenvalues (n per element).
    pub w: &'a mut [T],
    /// Left eigenvectors (n×n per element).
    pub vl: &'a mut [T],
    /// Right eigenvectors (n×n per element).
    pub vr: &'a mut [T],
    /// INFO per element.
    pub info: &'a mut [i32],
}

/// `?geev` on every complex `n×n` element of `a` (left untouched).
pub(crate) fn geev_complex<T: ComplexLapack>(
    ctx: &Ctx<'_>,
    jobvl: u8,
    jobvr: u8,
    n: usize,
    a: &[T],
    out: ComplexGeevOut<'_, T>,
) -> Result<(), HandlerError> {
    let batch = out.info.len();
    if jobvl != b'V' || n == 0 {
        out.vl.fill(T::default());
    }
    if jobvr != b'V' || n == 0 {
        out.vr.fill(T::default());
    }
    let Some((ni, lwork)) = start::<T>(ctx, [jobvl, jobvr], n, out.info)? else {
        return Ok(());
    };
    let l = ctx.lib.symbols();
    let nn = n * n;
    let elements = (
        Shared::new(a, nn),
        Batched::new(out.w, n, batch),
        Batched::new(out.vl, nn, batch),
        Batched::new(out.vr, nn, batch),
        Batched::new(out.info, 1, batch),
    );
    let flops = 100.0 * (nn * n) as f64;
    let init = || {
        (
            vec![T::default(); lwork],
            vec![<T::Real as RealScalar>::ZERO; 2 * n],
            vec![T::default(); nn],
        )
    };
    ctx.for_each_element(
        batch,
        flops,
        init,
        elements,
        |(work, rwork, scratch), (input, w, vl, vr, i)| {
            if !input.iter().all(|x| x.is_finite()) {
                w.fill(T::from_real(<T::Real as RealScalar>::NAN));
                i[0] = NON_FINITE_INFO;
                return;
            }
            scratch.copy_from_slice(input);
            i[0] = checked::geev(
                l,
                jobvl,
                jobvr,
                ni,
                scratch,
                ni,
                w,
                &mut [],
                vl,
                ni,
                vr,
                ni,
                work,
                rwork,
            );
        },
    );
    Ok(())
}

/// Checks operand `a` (square) and the jobs; returns `(batch, n, jobvl, jobvr)`.
fn common<'a, T: LapackScalar>(
    call: &Call<'a>,
    a: &Operand<'a>,
) -> Result<(&'a [i64], usize, u8, u8), HandlerError> {
    let (batch, n) = a.square(T::DTYPE)?;
    Ok((
        batch,
        n,
        call.char_attr("compute_left", b"VN")?,
        call.char_attr("compute_right", b"VN")?,
    ))
}

/// The real handler: operand `a`; results `wr`, `wi`, `vl`, `vr` (complex),
/// `info`; attributes `compute_left`, `compute_right`.
pub(crate) fn run_real<T: RealLapack>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError>
where
    Complex<T>: Elem,
{
    let ([a], [wr, wi, vl, vr, info]) = call.operands(["a"], ["wr", "wi", "vl", "vr", "info"])?;
    let (batch, n, jobvl, jobvr) = common::<T>(call, &a)?;
    wr.expect(T::DTYPE, batch, &[n])?;
    wi.expect(T::DTYPE, batch, &[n])?;
    vl.expect(<Complex<T> as Elem>::DTYPE, batch, &[n, n])?;
    vr.expect(<Complex<T> as Elem>::DTYPE, batch, &[n, n])?;
    info.expect_scalars(batch)?;
    // SAFETY: `a` is a read-only operand that XLA does not alias with any
    // result (geev declares no alias); the results are ours and distinct.
    let (a, out) = unsafe {
        (
            a.slice::<T>()?,
            RealGeevOut {
                wr: wr.slice_mut()?,
                wi: wi.slice_mut()?,
                vl: vl.slice_mut()?,
                vr: vr.slice_mut()?,
                info: info.slice_mut()?,
            },
        )
    };
    geev_real(ctx, jobvl, jobvr, n, a, out)
}

/// The complex handler: operand `a`; results `w`, `vl`, `vr`, `info`.
pub(crate) fn run_complex<T: ComplexLapack>(
    ctx: &Ctx<'_>,
    call: &Call<'_>,
) -> Result<(), HandlerError> {
    let ([a], [w, vl, vr, info]) = call.operands(["a"], ["w", "vl", "vr", "info"])?;
    let (batch, n, jobvl, jobvr) = common::<T>(call, &a)?;
    w.expect(T::DTYPE, batch, &[n])?;
    vl.expect(T::DTYPE, batch, &[n, n])?;
    vr.expect(T::DTYPE, batch, &[n, n])?;
    info.expect_scalars(batch)?;
    // SAFETY: as in `run_real`.
    let (a, out) = unsafe {
        (
            a.slice::<T>()?,
            ComplexGeevOut {
                w: w.slice_mut()?,
                vl: vl.slice_mut()?,
                vr: vr.slice_mut()?,
                info: info.slice_mut()?,
            },
        )
    };
    geev_complex(ctx, jobvl, jobvr, n, a, out)
}

#[cfg(test)]
mod tests {
    use num_complex::Complex;

    use super::unpack_eigenvectors;

    #[test]
    fn conjugate_pairs_unpack_into_two_columns() {
        // Columns: real eigenvector [1, 2], then a pair (re [3, 4], im [5, 6]).
        let n = 3;
        let packed = [1.0, 2.0, 0.0, 3.0, 4.0, 0.0, 5.0, 6.0, 0.0];
        let wi = [0.0, 1.5, -1.5];
        let mut out = [Complex::new(0.0, 0.0); 9];
        unpack_eigenvectors(n, &wi, &packed, &mut out);
        assert_eq!(out[0], Complex::new(1.0, 0.0));
        assert_eq!(out[3], Complex::new(3.0, 5.0));
        assert_eq!(out[6], Complex::new(3.0, -5.0));
        assert_eq!(out[7], Complex::new(4.0, -6.0));
    }
}
