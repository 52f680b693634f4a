//! `lapack_?gesdd_ffi`: singular value decomposition, divide and conquer.
//!
//! Contract: docs/lapack-targets.md, "lapack_?gesdd_ffi". The checks and the
//! loop over the batch serve `lapack_?gesvd_ffi` too, with `?gesvd` as the
//! [`Driver`].

use crate::call::{Batched, Call, Ctx, Operand};
use crate::checked;
use crate::fast_path::FastPath;
use crate::scalar::{Elem, LapackScalar, RealScalar};
use crate::split;
use plugin_glue::handler::{ErrorCode, HandlerError};

/// Outputs of one SVD call (gesdd or gesvd), all batch-major.
pub(crate) struct SvdOut<'a, T: LapackScalar> {
    /// Destroyed input (`m×n` per element).
    pub a: &'a mut [T],
    /// Singular values, descending (`k` per element).
    pub s: &'a mut [T::Real],
    /// Left singular vectors (`m×uc` per element).
    pub u: &'a mut [T],
    /// Right singular vectors, conjugate-transposed (`vr×n` per element).
    pub vt: &'a mut [T],
    /// LAPACK's INFO per element.
    pub info: &'a mut [i32],
}

/// [`SvdOut`] split per batch element: `a`, `s`, `u`, `vt`, `info`.
type SvdElements<'a, T> = (
    Batched<'a, T>,
    Batched<'a, <T as LapackScalar>::Real>,
    Batched<'a, T>,
    Batched<'a, T>,
    Batched<'a, i32>,
);

impl<'a, T: LapackScalar> SvdOut<'a, T> {
    /// The outputs split per batch element, for [`Ctx::for_each_element`].
    pub fn elements(self, d: SvdDims) -> SvdElements<'a, T> {
        let batch = self.info.len();
        (
            Batched::new(self.a, d.m * d.n, batch),
            Batched::new(self.s, d.m.min(d.n), batch),
            Batched::new(self.u, d.m * d.uc, batch),
            Batched::new(self.vt, d.vr * d.n, batch),
            Batched::new(self.info, 1, batch),
        )
    }

    /// What every SVD call does first: for empty matrices, fills the
    /// outputs ([`empty_svd`]) and returns `None`; else zero-fills u and vt
    /// in mode 'N', where LAPACK writes neither, and hands the outputs back.
    pub fn start(self, mode: u8, d: SvdDims) -> Option<Self> {
        if d.m.min(d.n) == 0 {
            empty_svd(mode, d, self);
            return None;
        }
        if mode == b'N' {
            self.u.fill(T::default());
            self.vt.fill(T::default());
        }
        Some(self)
    }
}

/// Shapes of one SVD call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SvdDims {
    /// Rows.
    pub m: usize,
    /// Columns.
    pub n: usize,
    /// Columns of u.
    pub uc: usize,
    /// Rows of vt.
    pub vr: usize,
}

impl SvdDims {
    /// m, n and vt's leading dimension (its rows, at least 1) as LAPACK
    /// integers.
    pub fn ints(self, ctx: &Ctx<'_>) -> Result<[i32; 3], HandlerError> {
        Ok([
            ctx.int("m", self.m)?,
            ctx.int("n", self.n)?,
            ctx.int("vt rows", self.vr.max(1))?,
        ])
    }
}

/// Fills the outputs when the matrices are empty (JAX never emits that
/// call): no singular values, u and vt are identities (zeros in mode 'N').
fn empty_svd<T: LapackScalar>(mode: u8, d: SvdDims, out: SvdOut<'_, T>) {
    out.info.fill(0);
    for (buf, rows, cols) in [(out.u, d.m, d.uc), (out.vt, d.vr, d.n)] {
        buf.fill(T::default());
        if mode != b'N' && rows * cols > 0 {
            for mat in buf.chunks_mut(rows * cols) {
                (0..rows.min(cols))
                    .for_each(|i| mat[i + i * rows] = T::from_real(<T::Real as RealScalar>::ONE));
            }
        }
    }
}

/// The LAPACK routine an SVD call runs on its elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Driver {
    /// `?gesdd`, divide and conquer (split for one large square matrix).
    Gesdd,
    /// `?gesvd` with JOBU = JOBVT = `mode`, QR iteration.
    Gesvd,
}

/// `driver` on every element: `mode` 'A' (full u, vt), 'S' (reduced) or 'N'
/// (singular values only; u and vt are zero-filled).
pub(crate) fn svd<T: FastPath>(
    ctx: &Ctx<'_>,
    mode: u8,
    d: SvdDims,
    out: SvdOut<'_, T>,
    driver: Driver,
) -> Result<(), HandlerError> {
    let Some(out) = out.start(mode, d) else {
        return Ok(());
    };
    let SvdDims { m, n, .. } = d;
    let k = m.min(n);
    let batch = out.info.len();
    if driver == Driver::Gesdd
        && batch == 1
        && m == n
        && matches!(mode, b'A' | b'S')
        && let Some(info) = T::gesdd_split(ctx, n, out.a, out.s, out.u, out.vt)?
    {
        out.info[0] = info;
        return Ok(());
    }
    let [mi, ni, ldvt] = d.ints(ctx)?;
    let l = ctx.lib.symbols();
    // LWORK, the complex types' RWORK, IWORK and the flops of one element.
    let (lwork, lrwork, liwork, flops) = match driver {
        Driver::Gesdd => (
            ctx.lwork(checked::lwork::gesdd::<T>(l, mode, mi, ni, mi, mi, ldvt))?,
            checked::gesdd_lrwork::<T>(mode, m, n),
            8 * k,
            split::gesdd::flops(m, n),
        ),
        Driver::Gesvd => (
            ctx.lwork(checked::lwork::gesvd::<T>(l, mode, mi, ni, mi, mi, ldvt))?,
            checked::rwork_len::<T>(5 * k),
            0,
            20.0 * (m * n * k) as f64,
        ),
    };
    let init = || {
        (
            vec![T::default(); lwork],
            vec![<T::Real as RealScalar>::ZERO; lrwork],
            vec![0i32; liwork],
        )
    };
    let elements = out.elements(d);
    ctx.for_each_element(
        batch,
        flops,
        init,
        elements,
        |(work, rwork, iwork), (a, s, u, vt, i)| {
            i[0] = match driver {
                Driver::Gesdd => checked::gesdd(
                    l, mode, mi, ni, a, mi, s, u, mi, vt, ldvt, work, rwork, iwork,
                ),
                Driver::Gesvd => {
                    checked::gesvd(l, mode, mi, ni, a, mi, s, u, mi, vt, ldvt, work, rwork)
                }
            };
        },
    );
    Ok(())
}

/// Validates an SVD call (gesdd and gesvd share it) and returns its mode,
/// dims and output slices.
pub(crate) fn svd_call<'a, T: LapackScalar>(
    call: &Call<'a>,
) -> Result<(u8, SvdDims, SvdOut<'a, T>), HandlerError> {
    let ([a], [a_out, s, u, vt, info]) = call.operands(["a"], ["a_out", "s", "u", "vt", "info"])?;
    let (batch, m, n) = a.matrix_of(T::DTYPE)?;
    let k = m.min(n);
    let mode = call.char_attr("mode", b"ASNO")?;
    if mode == b'O' {
        return Err(HandlerError::new(
            ErrorCode::Unimplemented,
            format!(
                "{}: mode 'O' (overwrite a with u or vt) is not implemented, as in jaxlib",
                call.target
            ),
        ));
    }
    s.expect(<T::Real as Elem>::DTYPE, batch, &[k])?;
    info.expect_scalars(batch)?;
    let (uc, vr) = match mode {
        b'A' => (m, n),
        b'S' => (k, k),
        // 'N': u and vt are still there, shaped by full_matrices.
        _ => (
            u.dims()
                .last()
                .map_or(0, |&c| usize::try_from(c).unwrap_or(0)),
            vt.dims()
                .iter()
                .rev()
                .nth(1)
                .map_or(0, |&r| usize::try_from(r).unwrap_or(0)),
        ),
    };
    let shape_ok =
        |o: &Operand<'_>, full: [usize; 2], reduced: [usize; 2]| -> Result<(), HandlerError> {
            if mode == b'N' && o.expect(T::DTYPE, batch, &reduced).is_ok() {
                return Ok(());
            }
            o.expect(T::DTYPE, batch, &if mode == b'S' { reduced } else { full })
        };
    shape_ok(&u, [m, m], [m, k])?;
    shape_ok(&vt, [n, n], [k, n])?;
    // SAFETY: results are ours and distinct; the operand is not used after
    // the alias step.
    let out = unsafe {
        SvdOut {
            a: a.alias_into::<T>(&a_out)?,
            s: s.slice_mut()?,
            u: u.slice_mut()?,
            vt: vt.slice_mut()?,
            info: info.slice_mut()?,
        }
    };
    Ok((mode, SvdDims { m, n, uc, vr }, out))
}

/// The handler: operand `a`; results `a_out` (alias ← a), `s`, `u`, `vt`,
/// `info`; attribute `mode`.
pub(crate) fn run<T: FastPath>(ctx: &Ctx<'_>, call: &Call<'_>) -> Result<(), HandlerError> {
    let (mode, dims, out) = svd_call::<T>(call)?;
    svd(ctx, mode, dims, out, Driver::Gesdd)
}
