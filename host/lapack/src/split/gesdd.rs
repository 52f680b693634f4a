//! One large square real matrix with singular vectors: `?gesdd`'s steps
//! called one by one, the last two at once on threads of our own.
//!
//! For a square matrix, `?gesdd` reduces A to bidiagonal form B = QᵀAP
//! (`?gebrd`), takes the SVD B = U_B·Σ·V_Bᵀ (`?bdsdc`), then forms
//! U = Q·U_B and Vᵀ = V_Bᵀ·Pᵀ (`?ormbr` twice). Those two products are
//! independent, each as costly as the other, and apply their reflectors in
//! blocks too small for OpenBLAS's threads to share, so [`gesdd`] runs them
//! at once, one thread each, OpenBLAS on one thread
//! ([`run_together`]). The first two steps stay whole, on OpenBLAS's
//! threads when the call has more than two
//! ([`Exclusive::openblas_threads_before_split`](crate::library::Exclusive::openblas_threads_before_split))
//! and the thread policy gives a call this large more than one
//! ([`crate::library`], "Threads"), whose idle workers are then ended.
//!
//! The results are `?gesdd`'s up to rounding: the same routines on the same
//! data in the same order (path 5 of `?gesdd`, "M ≥ N, but not much
//! larger", with JOBZ 'S' or 'A', which agree for square matrices), INFO
//! from `?bdsdc` as in `?gesdd`. Matrices `?gesdd` would scale first (or
//! reject: NaN) are left to it.

use crate::call::{Ctx, norm_within};
use crate::checked;
use crate::own_threads::{Job, run_together};
use crate::scalar::{RealLapack, RealScalar};
use plugin_glue::handler::HandlerError;

/// Estimated flops of one `?gesdd` of an m×n matrix, in its element type.
pub(crate) fn flops(m: usize, n: usize) -> f64 {
    14.0 * (m * n * m.min(n)) as f64
}

/// Smallest order that is split: from here the split beat `?gesdd` on one
/// OpenBLAS thread in the LAPACK bench
/// (docs/performance.md, "Split LAPACK calls").
pub(crate) const MIN_N: usize = 320;

/// `?gesdd` with JOBZ 'S' or 'A' on one `n×n` matrix `a` (column-major,
/// destroyed): singular values into `s` (descending), U into the n×n `u`
/// and Vᵀ into the n×n `vt`, INFO returned. `None` when the call is not
/// split (too small, OpenBLAS threads disabled, another LAPACK call holding
/// the threads, or a matrix `?gesdd` would scale or reject): nothing has
/// been touched then, and the caller runs `?gesdd`.
pub(crate) fn gesdd<T: RealLapack>(
    ctx: &Ctx<'_>,
    n: usize,
    a: &mut [T],
    s: &mut [T],
    u: &mut [T],
    vt: &mut [T],
) -> Result<Option<i32>, HandlerError> {
    assert!(
        a.len() == n * n && s.len() == n && u.len() == n * n && vt.len() == n * n,
        "gesdd split sizes"
    );
    if n < MIN_N || needs_scaling(a) {
        return Ok(None);
    }
    let Some(exclusive) = ctx.lib.exclusive() else {
        return Ok(None);
    };
    let l = ctx.lib.symbols();
    let ni = ctx.int("n", n)?;
    let (mut e, mut tauq, mut taup) = (vec![T::ZERO; n], vec![T::ZERO; n], vec![T::ZERO; n]);
    let query = checked::lwork::gebrd::<T>(l, ni, ni, ni);
    // Also `?bdsdc`'s workspace.
    let mut work = vec![T::ZERO; query.max(3 * n * n + 4 * n)];
    let mut iwork = vec![0i32; 8 * n];
    let openblas_threads = exclusive.openblas_threads_before_split()
        && exclusive.raise_for(flops(n, n) * ctx.flop_cost);
    checked::gebrd(l, ni, ni, a, ni, s, &mut e, &mut tauq, &mut taup, &mut work);
    // As `?gesdd` does before `?bdsdc`.
    u.fill(T::ZERO);
    let info = checked::bdsdc(l, ni, s, &mut e, u, ni, vt, ni, &mut work, &mut iwork);
    drop((work, iwork));
    if openblas_threads {
        exclusive.end_openblas_workers();
    }
    // As in `?gesdd`, the vectors are formed whatever INFO says.
    let a = &*a;
    run_together(vec![
        ormbr_job(ctx, b'Q', n, a, &tauq, u)?,
        ormbr_job(ctx, b'P', n, a, &taup, vt)?,
    ]);
    Ok(Some(info))
}

/// The job that applies `?gebrd`'s Q (`vect` 'Q': `c` := Q·`c`) or Pᵀ
/// (`vect` 'P': `c` := `c`·Pᵀ), stored in the n×n `a` and `tau`, to the
/// n×n `c`, with the workspace it needs.
fn ormbr_job<'a, T: RealLapack>(
    ctx: &Ctx<'a>,
    vect: u8,
    n: usize,
    a: &'a [T],
    tau: &'a [T],
    c: &'a mut [T],
) -> Result<Job<'a>, HandlerError> {
    let l = ctx.lib.symbols();
    let ni = ctx.int("n", n)?;
    let (side, trans) = if vect == b'Q' {
        (b'L', b'N')
    } else {
        (b'R', b'T')
    };
    let lwork = checked::lwork::ormbr::<T>(l, vect, side, trans, ni, ni, ni, ni, ni);
    let ormbr = move |c: &mut [T], work: &mut [T]| {
        // `?ormbr`'s INFO can only flag a bad argument, which these are not
        // (`?gesdd` ignores it too).
        checked::ormbr(l, vect, side, trans, ni, ni, ni, a, ni, tau, c, ni, work);
    };
    Ok(Box::new(move || ormbr(c, &mut vec![T::ZERO; lwork])))
}

/// Whether `?gesdd` would scale `a` first (its largest element outside
/// [smlnum, 1/smlnum], smlnum = √safmin/eps) or reject it (NaN), or it
/// holds ±∞: such calls are left to `?gesdd`. The bounds are taken a factor
/// 2 inside LAPACK's, so borderline norms go to `?gesdd` too.
fn needs_scaling<T: RealScalar>(a: &[T]) -> bool {
    let two = T::ONE + T::ONE;
    let smlnum = T::MIN_POSITIVE.sqrt() / T::EPSILON;
    !norm_within(a, smlnum * two, T::ONE / smlnum / two)
}

#[cfg(test)]
mod tests {
    use super::needs_scaling;

    #[test]
    fn only_matrices_gesdd_would_scale_or_reject_are_left_to_it() {
        let plain: Vec<f64> = (0..9).map(|i| f64::from(i) - 4.0).collect();
        assert!(!needs_scaling(&plain));
        assert!(!needs_scaling(&[0.0f64; 9]), "zero is not scaled");
        assert!(needs_scaling(&[1e-140f64; 9]), "f64 norm 1e-140");
        assert!(!needs_scaling(&[1e-100f64; 9]), "f64 norm 1e-100");
        assert!(needs_scaling(&[1e-20f32; 9]), "f32 norm 1e-20");
        assert!(!needs_scaling(&[1e-10f32; 9]), "f32 norm 1e-10");
        for bad in [f64::NAN, f64::INFINITY, -f64::INFINITY, 1e140] {
            let mut a = plain.clone();
            a[5] = bad;
            assert!(needs_scaling(&a), "{bad:e}");
        }
    }
}
