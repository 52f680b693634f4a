//! One large real symmetric matrix with eigenvectors, split over threads of
//! our own where OpenBLAS's threads do not help.
//!
//! `?syevd` runs three steps: `?sytrd` (reduce A to a tridiagonal T =
//! QᵀAQ), `?stedc` (the eigensystem T = ZΛZᵀ, divide and conquer) and
//! `?ormtr` (the eigenvectors of A, Q·Z). [`syevd`] runs the same steps
//! itself and splits the last two over threads of its own, OpenBLAS on one
//! thread:
//!
//! * **`?stedc`, top split.** T is split as LAPACK's divide and conquer
//!   does (`?laed0`): the two halves, less the rank-one term that couples
//!   them, are solved at once by `?stedc` in two threads, and `?laed1`
//!   merges them. `?stedc`'s own threads share its tree poorly.
//! * **`?ormtr` by column blocks.** Q·[Z₁ Z₂] = [Q·Z₁ Q·Z₂]: each thread
//!   applies Q to its own columns. `?ormtr` applies Q in blocks of 32
//!   reflectors, calls too small for OpenBLAS's threads to share.
//!
//! `?sytrd` stays whole, on one thread, or on OpenBLAS's threads from
//! [`MIN_N_OPENBLAS_THREADS`] on when the call has more than two
//! ([`Exclusive::openblas_threads_before_split`](crate::library::Exclusive::openblas_threads_before_split));
//! their idle workers are then ended, as they would spin on the cores the
//! next steps need. Each new thread leaves the caller's CPU and is waited
//! for before the work starts: otherwise it was often queued behind the
//! busy caller and ran only once the caller had finished its own part
//! (module docs of [`crate::library`]).
//!
//! Measurements: docs/performance.md, "Split LAPACK calls".
//!
//! The results are those of `?syevd` up to rounding: the same routines on
//! the same data, eigenvalues in the same ascending order. A half or merge
//! that fails (INFO ≠ 0) runs `?stedc` whole instead, so INFO means what
//! it means for `?syevd`.

use crate::call::{Ctx, norm_within};
use crate::checked;
use crate::own_threads::{Job, run_together};
use crate::scalar::{RealLapack, RealScalar};
use plugin_glue::handler::HandlerError;

/// Smallest order that is split: from here the split beat `?syevd` on one
/// thread (what it runs below [`MIN_N_OPENBLAS_THREADS`]) in the LAPACK
/// bench (docs/performance.md, "Split LAPACK calls").
pub(crate) const MIN_N: usize = 320;

/// Smallest order whose `?sytrd` runs on OpenBLAS's threads, when the call
/// has more than two.
pub(crate) const MIN_N_OPENBLAS_THREADS: usize = 480;

/// Least number of columns worth a thread of its own in `?ormtr`.
const MIN_COLUMNS_PER_THREAD: usize = 64;

/// `?syevd` with `JOBZ = 'V'` on one `n×n` matrix `a` (column-major, the
/// `uplo` triangle read), split as the module docs say: eigenvalues into `w`,
/// eigenvectors over `a`, INFO returned. `None` when the call is not split
/// (too small, OpenBLAS threads disabled, another LAPACK call holding the
/// threads, or a matrix `?syevd` would scale first, NaN and ±∞ included):
/// nothing has been touched then, and the caller runs `?syevd`.
pub(crate) fn syevd<T: RealLapack>(
    ctx: &Ctx<'_>,
    uplo: u8,
    n: usize,
    a: &mut [T],
    w: &mut [T],
) -> Result<Option<i32>, HandlerError> {
    if n < MIN_N || needs_scaling(uplo, n, a) {
        return Ok(None);
    }
    let Some(exclusive) = ctx.lib.exclusive() else {
        return Ok(None);
    };
    let l = ctx.lib.symbols();
    let ni = ctx.int("n", n)?;
    let (mut e, mut tau) = (vec![T::ZERO; n], vec![T::ZERO; n]);
    let mut work = vec![T::ZERO; checked::lwork::sytrd::<T>(l, uplo, ni, ni)];
    let openblas_threads = n >= MIN_N_OPENBLAS_THREADS && exclusive.openblas_threads_before_split();
    if openblas_threads {
        exclusive.set_openblas_threads(exclusive.threads());
    }
    checked::sytrd(l, uplo, ni, a, ni, w, &mut e, &mut tau, &mut work);
    drop(work);
    if openblas_threads {
        exclusive.end_openblas_workers();
    }
    let mut z = vec![T::ZERO; n * n];
    let (info, order) = tridiagonal_eigensystem(ctx, n, w, &mut e, &mut z)?;
    // As in `?syevd`, Q is applied and the result copied whatever INFO says.
    let parts = exclusive.threads().min(n / MIN_COLUMNS_PER_THREAD).max(1);
    apply_q(ctx, uplo, n, a, &tau, &mut z, parts)?;
    match order {
        None => a.copy_from_slice(&z),
        Some(order) => {
            for (column, &from) in a.chunks_exact_mut(n).zip(&order) {
                column.copy_from_slice(&z[from * n..(from + 1) * n]);
            }
        }
    }
    Ok(Some(info))
}

/// The eigensystem of the symmetric tridiagonal matrix with diagonal `d`
/// and off-diagonal `e[..n − 1]` (both overwritten): eigenvalues into `d`
/// in ascending order, eigenvectors into the n×n `z`, whose column
/// `order[j]` belongs to `d[j]` (`None`: column j). Split in two halves
/// merged by `?laed1` (module docs); `?stedc` whole if a step fails.
fn tridiagonal_eigensystem<T: RealLapack>(
    ctx: &Ctx<'_>,
    n: usize,
    d: &mut [T],
    e: &mut [T],
    z: &mut [T],
) -> Result<(i32, Option<Vec<usize>>), HandlerError> {
    let (d0, e0) = (d.to_vec(), e.to_vec());
    let norm = d
        .iter()
        .chain(&e[..n - 1])
        .fold(T::ZERO, |m, x| m.max(x.abs()));
    if norm > T::ZERO
        && let Some(order) = split_eigensystem(ctx, n, norm, d, e, z)?
    {
        return Ok((0, Some(order)));
    }
    d.copy_from_slice(&d0);
    e.copy_from_slice(&e0);
    let info = Block { d, e, z }.stedc(ctx, n)?;
    Ok((info, None))
}

/// [`tridiagonal_eigensystem`] split at n/2, the matrix scaled to a largest
/// element of 1 first, as `?stedc` does. `None` if a half or the merge
/// failed.
fn split_eigensystem<T: RealLapack>(
    ctx: &Ctx<'_>,
    n: usize,
    norm: T,
    d: &mut [T],
    e: &mut [T],
    z: &mut [T],
) -> Result<Option<Vec<usize>>, HandlerError> {
    let scale = T::ONE / norm;
    d.iter_mut()
        .chain(&mut e[..n - 1])
        .for_each(|x| *x = *x * scale);
    // T = diag(T₁, T₂) + ρ·v·vᵀ with v = e_m + sign(ρ)·e_{m+1} (`?laed0`).
    let m = n / 2;
    let rho = e[m - 1];
    d[m - 1] = d[m - 1] - rho.abs();
    d[m] = d[m] - rho.abs();
    // Each half's eigenvectors go to its diagonal block of z (ldz = n).
    let (d1, d2) = d.split_at_mut(m);
    let (e1, e2) = e.split_at_mut(m);
    let (z1, z2) = z.split_at_mut(m * n + m);
    let (h1, h2) = (
        Block {
            d: d1,
            e: e1,
            z: z1,
        },
        Block {
            d: d2,
            e: e2,
            z: z2,
        },
    );
    let mut infos = [Ok(0), Ok(0)];
    let [i1, i2] = &mut infos;
    run_together(vec![
        Box::new(move || *i1 = h1.stedc(ctx, n)) as Job<'_>,
        Box::new(move || *i2 = h2.stedc(ctx, n)),
    ]);
    for info in infos {
        if info? != 0 {
            return Ok(None);
        }
    }
    let ni = ctx.int("n", n)?;
    let mut indxq: Vec<i32> = (1..=m).chain(1..=n - m).map(|i| i as i32).collect();
    let mut work = vec![T::ZERO; 4 * n + n * n];
    let mut iwork = vec![0i32; 4 * n];
    let info = checked::laed1(
        ctx.lib.symbols(),
        ni,
        d,
        z,
        ni,
        &mut indxq,
        rho,
        ctx.int("cutpnt", m)?,
        &mut work,
        &mut iwork,
    );
    if info != 0 {
        return Ok(None);
    }
    // `indxq` now sorts the eigenvalues (1-based).
    let order: Vec<usize> = indxq.iter().map(|&i| i as usize - 1).collect();
    let sorted: Vec<T> = order.iter().map(|&i| d[i] * norm).collect();
    d.copy_from_slice(&sorted);
    Ok(Some(order))
}

/// A diagonal block of a symmetric tridiagonal matrix, the whole matrix or
/// one half of a split: its diagonal and off-diagonal (the last element of
/// `e` unused), and `z` starting at its diagonal block of the n×n
/// eigenvector matrix.
struct Block<'a, T> {
    d: &'a mut [T],
    e: &'a mut [T],
    z: &'a mut [T],
}

impl<T: RealLapack> Block<'_, T> {
    /// `?stedc` with `COMPZ = 'I'` on this block, eigenvectors into its
    /// part of `z` with leading dimension `ldz`; returns INFO.
    fn stedc(self, ctx: &Ctx<'_>, ldz: usize) -> Result<i32, HandlerError> {
        let Block { d, e, z } = self;
        let k = d.len();
        assert!(
            e.len() >= k.saturating_sub(1) && z.len() >= (k.max(1) - 1) * ldz + k,
            "stedc sizes"
        );
        let l = ctx.lib.symbols();
        let (ki, ldzi) = (ctx.int("n", k)?, ctx.int("ldz", ldz)?);
        let (lwork, liwork) = checked::stedc_lwork::<T>(l, ki, ldzi);
        let (mut work, mut iwork) = (vec![T::ZERO; lwork], vec![0i32; liwork]);
        Ok(checked::stedc(l, ki, d, e, z, ldzi, &mut work, &mut iwork))
    }
}

/// `z` := Q·`z` for the Q that `?sytrd` left in `a` and `tau`, over
/// `parts` column blocks of `z` at once. Each block but the first is given
/// a copy of `a` of its own: `?ormtr` reads the reflectors from `a`, and
/// some LAPACK builds write into them while they apply them, so calls at
/// once on one copy can go wrong. With three or four blocks on one `a`,
/// Debian's OpenBLAS 0.3.21 and the OpenBLAS 0.3.30 that scipy bundles
/// returned wrong columns in up to a third of the runs (a C program calling
/// the libraries alone; docs/performance.md, "Split LAPACK calls"); with a
/// copy each, none did.
fn apply_q<T: RealLapack>(
    ctx: &Ctx<'_>,
    uplo: u8,
    n: usize,
    a: &[T],
    tau: &[T],
    z: &mut [T],
    parts: usize,
) -> Result<(), HandlerError> {
    let l = ctx.lib.symbols();
    let ni = ctx.int("n", n)?;
    let width = n.div_ceil(parts);
    let columns = |c: usize| i32::try_from(c).expect("at most n columns");
    // The first block is the widest.
    let lwork = checked::lwork::ormtr::<T>(l, uplo, ni, columns(width), ni, ni);
    let ormtr = move |a: &[T], c: &mut [T], work: &mut [T]| {
        // `?ormtr`'s INFO can only flag a bad argument, which these are not
        // (`?syevd` ignores it too).
        checked::ormtr(l, uplo, ni, columns(c.len() / n), a, ni, tau, c, ni, work);
    };
    // Copied before any block starts: the first block's `?ormtr` may
    // write into `a` while it runs.
    let copies: Vec<Vec<T>> = (1..n.div_ceil(width)).map(|_| a.to_vec()).collect();
    let reflectors = std::iter::once(a).chain(copies.iter().map(Vec::as_slice));
    let jobs = z
        .chunks_mut(width * n)
        .zip(reflectors)
        .map(|(block, a)| Box::new(move || ormtr(a, block, &mut vec![T::ZERO; lwork])) as Job<'_>)
        .collect();
    run_together(jobs);
    Ok(())
}

/// Whether `?syevd` would scale the matrix before reducing it (its largest
/// element outside [√smlnum, √(1/smlnum)], smlnum = safmin/eps), or the
/// matrix holds NaN or ±∞: such calls are left to `?syevd`. The bounds are
/// taken a factor 2 inside LAPACK's, so borderline norms go to `?syevd` too.
fn needs_scaling<T: RealScalar>(uplo: u8, n: usize, a: &[T]) -> bool {
    let smlnum = T::MIN_POSITIVE / T::EPSILON;
    let two = T::ONE + T::ONE;
    let triangle = a.chunks_exact(n).enumerate().flat_map(|(j, column)| {
        if uplo == b'L' {
            &column[j..]
        } else {
            &column[..=j]
        }
    });
    !norm_within(
        triangle,
        smlnum.sqrt() * two,
        (T::ONE / smlnum).sqrt() / two,
    )
}

#[cfg(test)]
mod tests {
    use super::{Block, needs_scaling, tridiagonal_eigensystem};
    use crate::call::Ctx;
    use crate::library;

    /// The split eigensystem of tridiagonal matrices (one with a zero
    /// coupling at the split, one of odd order) against `?stedc` whole: the
    /// same eigenvalues, and T·z = λz, zᵀz = 1 for every column.
    #[test]
    fn the_split_tridiagonal_eigensystem_is_stedcs() {
        let ctx = Ctx {
            lib: library().unwrap_or_else(|e| panic!("{e}")),
            target: "test",
            flop_cost: 1.0,
        };
        for (n, zero_coupling) in [(400, false), (401, false), (400, true)] {
            let mut state = n as u64;
            let mut next = || {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            };
            let d0: Vec<f64> = (0..n).map(|_| next()).collect();
            let mut e0: Vec<f64> = (0..n).map(|_| next()).collect();
            if zero_coupling {
                e0[n / 2 - 1] = 0.0;
            }
            let (mut d, mut e, mut z) = (d0.clone(), e0.clone(), vec![0.0; n * n]);
            let (info, order) = tridiagonal_eigensystem(&ctx, n, &mut d, &mut e, &mut z).unwrap();
            assert_eq!(info, 0);
            let order = order.expect("the split ran");
            let (mut w, mut e1, mut z1) = (d0.clone(), e0.clone(), vec![0.0; n * n]);
            let whole = Block {
                d: &mut w,
                e: &mut e1,
                z: &mut z1,
            };
            assert_eq!(whole.stedc(&ctx, n).unwrap(), 0);
            for j in 0..n {
                assert!(
                    (d[j] - w[j]).abs() < 1e-13,
                    "n={n}: λ{j} {} vs {}",
                    d[j],
                    w[j]
                );
                let v = &z[order[j] * n..(order[j] + 1) * n];
                let norm: f64 = v.iter().map(|x| x * x).sum();
                assert!((norm - 1.0).abs() < 1e-13, "n={n}: |v{j}|² = {norm}");
                for i in 0..n {
                    let mut tv = d0[i] * v[i];
                    if i > 0 {
                        tv += e0[i - 1] * v[i - 1];
                    }
                    if i + 1 < n {
                        tv += e0[i] * v[i + 1];
                    }
                    assert!(
                        (tv - d[j] * v[i]).abs() < 1e-13,
                        "n={n}: (Tv - λv)[{i}] for λ{j}"
                    );
                }
            }
        }
    }

    #[test]
    fn only_matrices_syevd_would_scale_or_non_finite_ones_are_left_to_it() {
        let plain: Vec<f64> = (0..9).map(|i| f64::from(i) - 4.0).collect();
        for uplo in [b'L', b'U'] {
            assert!(!needs_scaling(uplo, 3, &plain));
            assert!(!needs_scaling(uplo, 3, &[0.0; 9]), "zero is not scaled");
            let tiny: Vec<f64> = plain.iter().map(|x| x * 1e-200).collect();
            assert!(needs_scaling(uplo, 3, &tiny), "norm 4e-200");
            assert!(needs_scaling(uplo, 3, &[1e-30f32; 9]), "f32 norm 1e-30");
            assert!(!needs_scaling(uplo, 3, &[1e-10f32; 9]), "f32 norm 1e-10");
        }
        for bad in [f64::NAN, f64::INFINITY, -f64::INFINITY, 1e200] {
            let mut a = plain.clone();
            a[2] = bad; // row 2, column 0: read with 'L' only
            assert!(needs_scaling(b'L', 3, &a), "{bad:e} in the lower triangle");
            assert!(!needs_scaling(b'U', 3, &a), "{bad:e} outside the upper one");
        }
    }
}
