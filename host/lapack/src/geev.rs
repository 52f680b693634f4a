//! `lapack_?geev_ffi`: eigenvalues and eigenvectors of a general matrix.
//!
//! Contract: docs/lapack-targets.md, "lapack_?geev_ffi".

use num_complex::Complex;

use crate::call::{Batched, Call, Ctx, Operand, Shared};
use crate::checked;
use crate::ffi::LapackSymbols;
use crate::scalar::{ComplexLapack, Elem, LapackScalar, RealLapack, RealScalar};
use plugin_glue::handler::HandlerError;

/// `info` jaxlib reports for an input with NaN or infinite entries, which it
/// never hands to LAPACK.
pub(crate) const NON_FINITE_INFO: i32 = -4;

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

/// A worker's workspace for a complex `?geev` or any `?gees` (gees
/// borrows it): WORK of `lwork` elements, RWORK for `rwork_n` as
/// [`checked::rwork`] sizes it, and an `nn`-element scratch matrix (geev's
/// copy of A, gees's unwanted Schur vectors).
pub(crate) fn workspace<T: LapackScalar>(
    lwork: usize,
    rwork_n: usize,
    nn: usize,
) -> (Vec<T>, Vec<T::Real>, Vec<T>) {
    (
        vec![T::default(); lwork],
        checked::rwork::<T>(rwork_n),
        vec![T::default(); nn],
    )
}

/// What every element's `?geev` call shares: the library, the jobs and
/// the order as a LAPACK integer.
struct Geev<'l> {
    l: &'l LapackSymbols,
    jobvl: u8,
    jobvr: u8,
    ni: i32,
}

impl Geev<'_> {
    /// What both variants do before their loop: the shared arguments and
    /// the optimal LWORK, or `None` when n is 0 (every INFO 0, nothing to do).
    fn start<'l, T: LapackScalar>(
        ctx: &Ctx<'l>,
        [jobvl, jobvr]: [u8; 2],
        n: usize,
        info: &mut [i32],
    ) -> Result<Option<(Geev<'l>, usize)>, HandlerError> {
        let Some(ni) = ctx.order(n, info)? else {
            return Ok(None);
        };
        let l = ctx.lib.symbols();
        let lwork = ctx.lwork(checked::lwork::geev::<T>(l, jobvl, jobvr, ni, ni, ni, ni))?;
        Ok(Some((
            Geev {
                l,
                jobvl,
                jobvr,
                ni,
            },
            lwork,
        )))
    }

    /// One element: `?geev` on a copy of `input` in `scratch` (LAPACK
    /// destroys its A), with the outputs [`checked::geev`] describes; returns
    /// INFO. An input with NaN or infinite entries never reaches LAPACK, as
    /// in jaxlib: its eigenvalues are NaN and its INFO [`NON_FINITE_INFO`].
    fn element<T: LapackScalar>(
        &self,
        input: &[T],
        scratch: &mut [T],
        (w, wi): (&mut [T], &mut [T]),
        (vl, vr): (&mut [T], &mut [T]),
        work: &mut [T],
        rwork: &mut [T::Real],
    ) -> i32 {
        if !input.iter().all(|x| x.is_finite()) {
            let nan = T::from_real(<T::Real as RealScalar>::NAN);
            w.fill(nan);
            wi.fill(nan);
            return NON_FINITE_INFO;
        }
        scratch.copy_from_slice(input);
        let (jobvl, jobvr, ni) = (self.jobvl, self.jobvr, self.ni);
        checked::geev(
            self.l, jobvl, jobvr, ni, scratch, ni, w, wi, vl, ni, vr, ni, work, rwork,
        )
    }
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
/// `info`; attributes `compute_left`, `compute_right`. `?geev` on every
/// `n×n` element of `a` (left untouched): the real and imaginary parts of
/// the eigenvalues to `wr` and `wi` (n per element), the eigenvectors
/// unpacked to complex columns in `vl` and `vr` (n×n per element).
pub(crate) fn run_real<T: RealLapack>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError>
where
    Complex<T>: Elem,
{
    let ([a], [wr, wi, vl, vr, info]) = call.operands(["a"], ["wr", "wi", "vl", "vr", "info"])?;
    let (batch_dims, n, jobvl, jobvr) = common::<T>(call, &a)?;
    wr.expect(T::DTYPE, batch_dims, &[n])?;
    wi.expect(T::DTYPE, batch_dims, &[n])?;
    vl.expect(<Complex<T> as Elem>::DTYPE, batch_dims, &[n, n])?;
    vr.expect(<Complex<T> as Elem>::DTYPE, batch_dims, &[n, n])?;
    info.expect_scalars(batch_dims)?;
    // SAFETY: `a` is a read-only operand that XLA does not alias with any
    // result (geev declares no alias); the results are ours and distinct.
    let (a, wr, wi, vl, vr, info) = unsafe {
        (
            a.slice::<T>()?,
            wr.slice_mut()?,
            wi.slice_mut()?,
            vl.slice_mut()?,
            vr.slice_mut()?,
            info.slice_mut()?,
        )
    };
    let batch = info.len();
    let zero = Complex {
        re: T::ZERO,
        im: T::ZERO,
    };
    vl.fill(zero);
    vr.fill(zero);
    let Some((geev, lwork)) = Geev::start::<T>(ctx, [jobvl, jobvr], n, info)? else {
        return Ok(());
    };
    let nn = n * n;
    let elements = (
        Shared::new(a, nn),
        Batched::new(wr, n, batch),
        Batched::new(wi, n, batch),
        Batched::new(vl, nn, batch),
        Batched::new(vr, nn, batch),
        Batched::new(info, 1, batch),
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
            i[0] = geev.element(input, scratch, (wr, wi), (pl, pr), work, &mut [T::ZERO]);
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

/// The complex handler: operand `a`; results `w`, `vl`, `vr`, `info`;
/// attributes `compute_left`, `compute_right`. `?geev` on every `n×n`
/// element of `a` (left untouched): the eigenvalues to `w` (n per element),
/// the eigenvectors to `vl` and `vr` (n×n per element).
pub(crate) fn run_complex<T: ComplexLapack>(
    ctx: &Ctx<'_>,
    call: &Call<'_>,
) -> Result<(), HandlerError> {
    let ([a], [w, vl, vr, info]) = call.operands(["a"], ["w", "vl", "vr", "info"])?;
    let (batch_dims, n, jobvl, jobvr) = common::<T>(call, &a)?;
    w.expect(T::DTYPE, batch_dims, &[n])?;
    vl.expect(T::DTYPE, batch_dims, &[n, n])?;
    vr.expect(T::DTYPE, batch_dims, &[n, n])?;
    info.expect_scalars(batch_dims)?;
    // SAFETY: as in `run_real`.
    let (a, w, vl, vr, info) = unsafe {
        (
            a.slice::<T>()?,
            w.slice_mut()?,
            vl.slice_mut()?,
            vr.slice_mut()?,
            info.slice_mut()?,
        )
    };
    let batch = info.len();
    if jobvl != b'V' || n == 0 {
        vl.fill(T::default());
    }
    if jobvr != b'V' || n == 0 {
        vr.fill(T::default());
    }
    let Some((geev, lwork)) = Geev::start::<T>(ctx, [jobvl, jobvr], n, info)? else {
        return Ok(());
    };
    let nn = n * n;
    let elements = (
        Shared::new(a, nn),
        Batched::new(w, n, batch),
        Batched::new(vl, nn, batch),
        Batched::new(vr, nn, batch),
        Batched::new(info, 1, batch),
    );
    let flops = 100.0 * (nn * n) as f64;
    let init = || workspace::<T>(lwork, 2 * n, nn);
    ctx.for_each_element(
        batch,
        flops,
        init,
        elements,
        |(work, rwork, scratch), (input, w, vl, vr, i)| {
            i[0] = geev.element(input, scratch, (w, &mut []), (vl, vr), work, rwork);
        },
    );
    Ok(())
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
