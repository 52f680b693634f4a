//! `lapack_?sytrd_ffi` / `lapack_?hetrd_ffi`: reduction of a Hermitian
//! matrix to real tridiagonal form. Reference §3.14.

use crate::call::{Batched, Call, Ctx, QueryArrays, workspace};
use crate::scalar::{Elem, Scalar};
use plugin_glue::dtype::DType;
use plugin_glue::handler::HandlerError;

/// Outputs of a sytrd call, batch-major.
pub(crate) struct SytrdOut<'a, T: Scalar> {
    /// Reflectors and the tridiagonal, over the input (n×n per element).
    pub a: &'a mut [T],
    /// Diagonal (n per element).
    pub d: &'a mut [T::Real],
    /// Off-diagonal (n−1 per element).
    pub e: &'a mut [T::Real],
    /// Reflector scalars (n−1 per element).
    pub tau: &'a mut [T],
    /// INFO per element.
    pub info: &'a mut [i32],
}

/// `?sytrd`/`?hetrd` on every `n×n` element (n ≥ 1), in place.
pub(crate) fn sytrd<T: Scalar>(
    ctx: &Ctx<'_>,
    uplo: u8,
    n: usize,
    out: SytrdOut<'_, T>,
) -> Result<(), HandlerError> {
    let batch = out.info.len();
    let ni = ctx.int("n", n)?;
    let l = ctx.lib.symbols();
    let mut q = QueryArrays::<T>::new();
    // SAFETY: a workspace query (lwork = -1) reads only the dims and
    // writes the first element of the work arrays.
    let lwork = workspace(|w: &mut T| unsafe {
        T::sytrd(l, uplo, ni, q.t(0), ni, q.r(0), q.r(1), q.t(1), w, -1)
    });
    let lworki = ctx.int("lwork", lwork)?;
    let m1 = n.saturating_sub(1);
    let (ab, db, ib) = (
        Batched::new(out.a, n * n, batch),
        Batched::new(out.d, n, batch),
        Batched::new(out.info, 1, batch),
    );
    let (eb, tb) = (
        Batched::new(out.e, m1, batch),
        Batched::new(out.tau, m1, batch),
    );
    let flops = 4.0 / 3.0 * (n * n * n) as f64;
    ctx.for_each(
        batch,
        flops,
        || vec![T::default(); lwork],
        |work, b| {
            // SAFETY: each batch index is handed to one worker only.
            let (a, d, e, t, i) =
                unsafe { (ab.get(b), db.get(b), eb.get(b), tb.get(b), ib.get(b)) };
            let (mut de, mut dt) = ([<T::Real as Default>::default()], [T::default()]);
            let ep = if e.is_empty() {
                de.as_mut_ptr()
            } else {
                e.as_mut_ptr()
            };
            let tp = if t.is_empty() {
                dt.as_mut_ptr()
            } else {
                t.as_mut_ptr()
            };
            // SAFETY: `a` is n×n (lda = n), `d` holds n reals, `e` and `tau`
            // n−1 (dummies when n = 1, where LAPACK writes nothing to them).
            i[0] = unsafe {
                T::sytrd(
                    l,
                    uplo,
                    ni,
                    a.as_mut_ptr(),
                    ni,
                    d.as_mut_ptr(),
                    ep,
                    tp,
                    work.as_mut_ptr(),
                    lworki,
                )
            };
        },
    );
    Ok(())
}

/// The handler: operand `a`; results `a_out` (alias ← a), `d`, `e`, `tau`,
/// `info`; attribute `uplo`.
pub(crate) fn run<T: Scalar>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    call.arity(1, 5)?;
    let a = call.arg(0, "a")?;
    let (a_out, d, e, tau, info) = (
        call.ret(0, "a_out")?,
        call.ret(1, "d")?,
        call.ret(2, "e")?,
        call.ret(3, "tau")?,
        call.ret(4, "info")?,
    );
    a.dtype(T::DTYPE)?;
    let (batch, m, n) = a.matrix()?;
    if m != n || n == 0 {
        return Err(a.err(format_args!("must be square with n >= 1, got {m}×{n}")));
    }
    let uplo = call.char_attr("uplo", b"LU")?;
    let real = <T::Real as Elem>::DTYPE;
    d.expect(real, batch, &[n])?;
    e.expect(real, batch, &[n - 1])?;
    tau.expect(T::DTYPE, batch, &[n - 1])?;
    info.expect(DType::S32, batch, &[])?;
    // SAFETY: results are ours and distinct; the operand is not used after
    // the alias step.
    let out = unsafe {
        SytrdOut {
            a: a.alias_into::<T>(&a_out)?,
            d: d.slice_mut()?,
            e: e.slice_mut()?,
            tau: tau.slice_mut()?,
            info: info.slice_mut()?,
        }
    };
    sytrd(ctx, uplo, n, out)
}
