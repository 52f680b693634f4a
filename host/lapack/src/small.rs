//! Rust kernels for small real matrices: LU with partial pivoting and the
//! triangular solve, the steps of `solve`, `inv`, `det` and `lu_factor`.
//!
//! For a matrix of a few rows an OpenBLAS call costs its overhead, not its
//! arithmetic (argument checks, a buffer from OpenBLAS's shared memory pool,
//! packing for the level-3 kernels), and batches of such calls get slower,
//! not faster, on two threads (the pool is shared; measurements:
//! docs/performance.md, "Small matrices"). Up to
//! [`MAX_DIM`] rows and columns these kernels run instead, with the same
//! algorithms:
//!
//! * [`getrf`] is LAPACK's unblocked LU with partial pivoting (`?getf2`;
//!   OpenBLAS's `?getrf` runs a left-looking version of it at these sizes):
//!   for each column the pivot is the first entry of largest magnitude (as
//!   `i?amax`), the rows are swapped, the column below the diagonal is
//!   scaled by the pivot's reciprocal (divided by the pivot when that is
//!   subnormal) and the trailing matrix gets the rank-1 update. A zero pivot
//!   is recorded in `info` (the first one) and the factorisation continues,
//!   as LAPACK does. Pivots and factors are LAPACK's up to rounding.
//!   [`getrf_group`] factors [`LANES`] matrices of a batch together, one per
//!   lane, bit for bit as [`getrf`] would.
//! * [`trsm`] solves `op(A)·X = B` or `X·op(A) = B` by substitution,
//!   multiplying by the reciprocals of the diagonal as OpenBLAS does. Both
//!   sides reduce to solving `M·x = r` for [`LANES`] right-hand sides at a
//!   time (columns of B on the left, rows on the right), held in registers.
//!
//! Orders up to [`FIXED_MAX`] get kernels specialised for their size (loops
//! with constant bounds, unrolled by the compiler), compiled a second time
//! for AVX2 and chosen at run time when the CPU has it (a lane of 4 f64 in
//! one instruction; no FMA, so the results are the same bits).
//!
//! Complex types always call LAPACK (pivoting by |Re|+|Im| and robust
//! complex division are LAPACK's business).

use crate::scalar::RealScalar;

/// The BLAS arguments of one `?trsm` (alpha = 1), shared by every element
/// of a batch: `side`, `uplo`, `trans` and `diag` as BLAS takes them, and
/// B's `m×n` shape.
#[derive(Clone, Copy)]
pub(crate) struct Trsm {
    pub side: u8,
    pub uplo: u8,
    pub trans: u8,
    pub diag: u8,
    pub m: usize,
    pub n: usize,
}

impl Trsm {
    /// The order of the triangle A: m on the left, n on the right.
    pub fn order(&self) -> usize {
        if self.side == b'L' { self.m } else { self.n }
    }

    /// Number of right-hand sides: columns of B on the left, rows on the
    /// right.
    pub fn right_hand_sides(&self) -> usize {
        if self.side == b'L' { self.n } else { self.m }
    }
}

/// Largest number of rows and columns handled here: beyond it OpenBLAS's
/// blocked kernels catch up (at 24–32 the unblocked Rust LU and `dgetrf_`
/// take about as long).
pub(crate) const MAX_DIM: usize = 32;

/// Most right-hand sides [`trsm`] is used for: with many more, the cost of
/// a BLAS call is spread over them and its blocked kernels win.
pub(crate) const MAX_RHS: usize = 2 * MAX_DIM;

/// Largest order with size-specialised kernels.
pub(crate) const FIXED_MAX: usize = 8;

// `by_order!` lists the orders 1..=FIXED_MAX.
const _: () = assert!(FIXED_MAX == 8);

/// Right-hand sides solved together by [`trsm`].
pub(crate) const LANES: usize = 4;

/// Calls `$f::<T, N>($args)` for the order `$n` in 1..=FIXED_MAX, or
/// evaluates `$otherwise`.
macro_rules! by_order {
    ($n:expr, $f:ident::<$t:ty>($($arg:expr),*), $otherwise:expr) => {
        match $n {
            1 => $f::<$t, 1>($($arg),*),
            2 => $f::<$t, 2>($($arg),*),
            3 => $f::<$t, 3>($($arg),*),
            4 => $f::<$t, 4>($($arg),*),
            5 => $f::<$t, 5>($($arg),*),
            6 => $f::<$t, 6>($($arg),*),
            7 => $f::<$t, 7>($($arg),*),
            8 => $f::<$t, 8>($($arg),*),
            _ => $otherwise,
        }
    };
}

/// LU factorisation with partial pivoting of the `m×n` column-major matrix
/// `a` (lda = m), in place; writes `min(m,n)` 1-based pivots and returns
/// LAPACK's INFO (0, or the 1-based index of the first zero pivot).
///
/// # Panics
///
/// If `a` has fewer than `m·n` elements or `ipiv` fewer than `min(m,n)`.
pub(crate) fn getrf<T: RealScalar>(m: usize, n: usize, a: &mut [T], ipiv: &mut [i32]) -> i32 {
    let k = m.min(n);
    assert!(a.len() >= m * n && ipiv.len() >= k, "getrf sizes");
    if m == n {
        by_order!(n, getrf_fixed::<T>(a, ipiv), getrf_any(m, n, a, ipiv))
    } else {
        getrf_any(m, n, a, ipiv)
    }
}

/// [`getrf`] of an `N×N` matrix, in a local copy. Every loop runs over the
/// whole column (constant bounds, so it unrolls and vectorises), keeping the
/// entries it must not touch by selection rather than by arithmetic.
fn getrf_fixed<T: RealScalar, const N: usize>(a: &mut [T], ipiv: &mut [i32]) -> i32 {
    let mut c = [[T::ZERO; N]; N];
    for (col, src) in c.iter_mut().zip(a.chunks_exact(N)) {
        col.copy_from_slice(src);
    }
    let ipiv = &mut ipiv[..N];
    let mut info = 0;
    for j in 0..N {
        let mut p = j;
        let mut best = c[j][j].abs();
        for (i, x) in c[j].iter().enumerate() {
            let v = x.abs();
            if i > j && v > best {
                best = v;
                p = i;
            }
        }
        ipiv[j] = (p + 1) as i32;
        let pivot = c[j][p];
        if pivot == T::ZERO {
            if info == 0 {
                info = (j + 1) as i32;
            }
        } else {
            if p != j {
                for col in c.iter_mut() {
                    col.swap(j, p);
                }
            }
            let col = &mut c[j];
            if pivot.abs() >= T::MIN_POSITIVE {
                let r = T::ONE / pivot;
                for (i, x) in col.iter_mut().enumerate() {
                    *x = if i > j { *x * r } else { *x };
                }
            } else {
                for (i, x) in col.iter_mut().enumerate() {
                    *x = if i > j { *x / pivot } else { *x };
                }
            }
        }
        let l = c[j];
        for col in c.iter_mut().skip(j + 1) {
            let u = col[j];
            for (i, (x, &lx)) in col.iter_mut().zip(&l).enumerate() {
                *x = if i > j { *x - lx * u } else { *x };
            }
        }
    }
    for (col, dst) in c.iter().zip(a.chunks_exact_mut(N)) {
        dst.copy_from_slice(col);
    }
    info
}

/// [`getrf`] of `info.len()` (at most [`LANES`]) consecutive `n×n` matrices
/// of `a` (pivots consecutive in `ipiv`), factored together: returns `false`
/// (nothing done) unless `n ≤ FIXED_MAX`.
///
/// Each matrix takes one lane of every operation, so the divisions and the
/// long chain of dependent steps of an LU (pivot, scale, update, next
/// pivot) are shared by the group instead of repeated per matrix. Every
/// lane performs exactly the operations of [`getrf`] on its matrix, in the
/// same order: the results are bit for bit the same.
///
/// # Panics
///
/// If `info` has more than [`LANES`] entries, or `a` or `ipiv` is too short.
pub(crate) fn getrf_group<T: RealScalar>(
    n: usize,
    a: &mut [T],
    ipiv: &mut [i32],
    info: &mut [i32],
) -> bool {
    assert!(
        info.len() <= LANES && a.len() >= info.len() * n * n && ipiv.len() >= info.len() * n,
        "getrf_group sizes"
    );
    if n == 0 || n > FIXED_MAX {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, detected just above.
        unsafe { getrf_group_avx2(n, a, ipiv, info) };
        return true;
    }
    by_order!(n, getrf_lanes::<T>(a, ipiv, info), ());
    true
}

/// [`getrf_group`] compiled for AVX2: the [`LANES`] lanes of an f64
/// operation fit one instruction. Without FMA contraction (Rust never
/// fuses), every lane computes exactly what SSE2 code computes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn getrf_group_avx2<T: RealScalar>(n: usize, a: &mut [T], ipiv: &mut [i32], info: &mut [i32]) {
    by_order!(n, getrf_lanes::<T>(a, ipiv, info), ());
}

/// [`getrf_group`] for order `N`: `x[k][i][c]` is entry (i, k) of matrix c.
/// Always inlined, so that it takes the instruction set of its caller.
#[inline(always)]
fn getrf_lanes<T: RealScalar, const N: usize>(a: &mut [T], ipiv: &mut [i32], info: &mut [i32]) {
    let used = info.len();
    let mut x = [[[T::ZERO; LANES]; N]; N];
    for (c, m) in a.chunks_exact(N * N).take(used).enumerate() {
        for (k, col) in m.chunks_exact(N).enumerate() {
            for (i, &v) in col.iter().enumerate() {
                x[k][i][c] = v;
            }
        }
    }
    // Unused lanes factor the identity.
    for c in used..LANES {
        for (k, col) in x.iter_mut().enumerate() {
            col[k][c] = T::ONE;
        }
    }
    let mut infos = [0i32; LANES];
    let mut pivots = [[0usize; LANES]; N];
    for j in 0..N {
        // Pivot of each lane: the first entry of largest magnitude.
        let mut best = x[j][j].map(|v| v.abs());
        let mut p = [j; LANES];
        for (i, row) in x[j].iter().enumerate().skip(j + 1) {
            for c in 0..LANES {
                let v = row[c].abs();
                if v > best[c] {
                    best[c] = v;
                    p[c] = i;
                }
            }
        }
        pivots[j] = p;
        let mut pivot = [T::ONE; LANES];
        let mut subnormal = false;
        for c in 0..LANES {
            let v = x[j][p[c]][c];
            if v == T::ZERO {
                if infos[c] == 0 {
                    infos[c] = (j + 1) as i32;
                }
                continue;
            }
            if p[c] != j {
                for col in x.iter_mut() {
                    let t = col[j][c];
                    col[j][c] = col[p[c]][c];
                    col[p[c]][c] = t;
                }
            }
            pivot[c] = v;
            subnormal |= v.abs() < T::MIN_POSITIVE;
        }
        // Lanes with a zero pivot keep pivot 1: their column is zero below
        // the diagonal, which scaling by 1 leaves as it is.
        let r = pivot.map(|v| T::ONE / v);
        let below = x[j].iter_mut().skip(j + 1);
        if subnormal {
            // Divide where the pivot is subnormal, as the scalar kernel does.
            for row in below {
                for c in 0..LANES {
                    row[c] = if pivot[c].abs() < T::MIN_POSITIVE {
                        row[c] / pivot[c]
                    } else {
                        row[c] * r[c]
                    };
                }
            }
        } else {
            for row in below {
                for c in 0..LANES {
                    row[c] = row[c] * r[c];
                }
            }
        }
        let l = x[j];
        for col in x.iter_mut().skip(j + 1) {
            let u = col[j];
            for (row, lr) in col.iter_mut().zip(&l).skip(j + 1) {
                for c in 0..LANES {
                    row[c] = row[c] - lr[c] * u[c];
                }
            }
        }
    }
    for (c, m) in a.chunks_exact_mut(N * N).take(used).enumerate() {
        for (k, col) in m.chunks_exact_mut(N).enumerate() {
            for (i, v) in col.iter_mut().enumerate() {
                *v = x[k][i][c];
            }
        }
    }
    for (c, piv) in ipiv.chunks_exact_mut(N).take(used).enumerate() {
        for (j, v) in piv.iter_mut().enumerate() {
            *v = (pivots[j][c] + 1) as i32;
        }
    }
    info.copy_from_slice(&infos[..used]);
}

/// [`getrf`] of any shape, in place.
fn getrf_any<T: RealScalar>(m: usize, n: usize, a: &mut [T], ipiv: &mut [i32]) -> i32 {
    let k = m.min(n);
    let a = &mut a[..m * n];
    let mut info = 0;
    for j in 0..k {
        // Pivot: the first entry of largest magnitude on or below the diagonal.
        let col = &a[j * m..(j + 1) * m];
        let mut p = j;
        let mut best = col[j].abs();
        for (i, x) in col.iter().enumerate().skip(j + 1) {
            let v = x.abs();
            if v > best {
                best = v;
                p = i;
            }
        }
        ipiv[j] = (p + 1) as i32;
        let pivot = col[p];
        if pivot == T::ZERO {
            // The column is zero from the diagonal down: nothing to scale.
            if info == 0 {
                info = (j + 1) as i32;
            }
        } else {
            if p != j {
                for c in a.chunks_exact_mut(m) {
                    c.swap(j, p);
                }
            }
            let below = &mut a[j * m + j + 1..(j + 1) * m];
            if pivot.abs() >= T::MIN_POSITIVE {
                let r = T::ONE / pivot;
                below.iter_mut().for_each(|x| *x = *x * r);
            } else {
                below.iter_mut().for_each(|x| *x = *x / pivot);
            }
        }
        // Rank-1 update of the trailing columns.
        let (head, tail) = a.split_at_mut((j + 1) * m);
        let l = &head[j * m + j + 1..];
        for c in tail.chunks_exact_mut(m) {
            let u = c[j];
            for (x, &lx) in c[j + 1..].iter_mut().zip(l) {
                *x = *x - lx * u;
            }
        }
    }
    info
}

/// Solves `op(A)·X = B` (`side = 'L'`, A is m×m) or `X·op(A) = B` (`side =
/// 'R'`, A is n×n) in place in the `m×n` column-major `b` (ldb = m), where
/// A (lda = its order, at most [`MAX_DIM`]) is lower (`uplo = 'L'`) or upper
/// triangular, `op` is the identity (`trans = 'N'`) or the transpose (`'T'`,
/// `'C'`), and the diagonal is A's or all ones (`diag = 'U'`).
///
/// # Panics
///
/// If A's order exceeds [`MAX_DIM`], or `a` or `b` is too short.
pub(crate) fn trsm<T: RealScalar>(args: Trsm, a: &[T], b: &mut [T]) {
    let (m, n, ord) = (args.m, args.n, args.order());
    assert!(
        ord <= MAX_DIM && a.len() >= ord * ord && b.len() >= m * n,
        "trsm sizes"
    );
    if m == 0 || n == 0 {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if ord <= FIXED_MAX && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, detected just above.
        unsafe { trsm_fixed_avx2(args, ord, a, b) };
        return;
    }
    by_order!(
        ord,
        trsm_fixed::<T>(args, a, b),
        trsm_order(args, ord, a, b)
    )
}

/// [`trsm_fixed`] compiled for AVX2 (bit for bit the same results, as for
/// [`getrf_group_avx2`]); `ord` is at most [`FIXED_MAX`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn trsm_fixed_avx2<T: RealScalar>(args: Trsm, ord: usize, a: &[T], b: &mut [T]) {
    by_order!(ord, trsm_fixed::<T>(args, a, b), ());
}

/// [`trsm`] with A of order `N`: M (see [`trsm_order`]) is copied into a
/// local matrix, so that every loop has constant bounds. Always inlined, so
/// that it takes the instruction set of its caller.
#[inline(always)]
fn trsm_fixed<T: RealScalar, const N: usize>(args: Trsm, a: &[T], b: &mut [T]) {
    let (direct, lower) = args.shape();
    let a = &a[..N * N];
    let mut inv = [T::ONE; N];
    if args.diag != b'U' {
        for (i, r) in inv.iter_mut().enumerate() {
            *r = T::ONE / a[i + i * N];
        }
    }
    if args.right_hand_sides() == 1 {
        trsm_fixed_one::<T, N>(args, direct, lower, a, &inv, b);
        return;
    }
    // mm[k][i] = M(i, k): the columns of M.
    let mut mm = [[T::ZERO; N]; N];
    for (k, col) in mm.iter_mut().enumerate() {
        for (i, v) in col.iter_mut().enumerate() {
            *v = if direct { a[i + k * N] } else { a[k + i * N] };
        }
    }
    let mut x = [[T::ZERO; LANES]; N];
    args.for_each_group(b, N, &mut x, |x| {
        if lower {
            for k in 0..N {
                let xk = x[k].map(|v| v * inv[k]);
                x[k] = xk;
                for (i, xi) in x.iter_mut().enumerate() {
                    if i > k {
                        let f = mm[k][i];
                        for (v, &y) in xi.iter_mut().zip(&xk) {
                            *v = *v - f * y;
                        }
                    }
                }
            }
        } else {
            for k in (0..N).rev() {
                let xk = x[k].map(|v| v * inv[k]);
                x[k] = xk;
                for (i, xi) in x.iter_mut().enumerate() {
                    if i < k {
                        let f = mm[k][i];
                        for (v, &y) in xi.iter_mut().zip(&xk) {
                            *v = *v - f * y;
                        }
                    }
                }
            }
        }
    });
}

/// [`trsm_fixed`] with one right-hand side x (a column of B on the left, a
/// row on the right), solved in place with A read where it lies: by columns
/// of M = A (axpy updates) or by rows of M = Aᵀ (dot products), both
/// contiguous in A.
#[inline(always)]
fn trsm_fixed_one<T: RealScalar, const N: usize>(
    args: Trsm,
    direct: bool,
    lower: bool,
    a: &[T],
    inv: &[T; N],
    b: &mut [T],
) {
    let stride = if args.side == b'L' { 1 } else { args.m };
    let b = &mut b[..args.m * args.n];
    let mut x = [T::ZERO; N];
    for (i, v) in x.iter_mut().enumerate() {
        *v = b[i * stride];
    }
    let order = |step: usize| if lower { step } else { N - 1 - step };
    for step in 0..N {
        let k = order(step);
        let col: &[T; N] = a[k * N..(k + 1) * N].try_into().expect("a column of A");
        if direct {
            // Column k of M: eliminate x[k] from the entries after it.
            let xk = x[k] * inv[k];
            x[k] = xk;
            for (i, (v, &f)) in x.iter_mut().zip(col).enumerate() {
                let after = if lower { i > k } else { i < k };
                *v = if after { *v - f * xk } else { *v };
            }
        } else {
            // Row k of M: subtract the entries solved before it, in the
            // order they were solved (as the column form would).
            let mut s = x[k];
            if lower {
                for (&v, &f) in x.iter().zip(col).take(k) {
                    s = s - f * v;
                }
            } else {
                for (&v, &f) in x.iter().zip(col).skip(k + 1).rev() {
                    s = s - f * v;
                }
            }
            x[k] = s * inv[k];
        }
    }
    for (i, &v) in x.iter().enumerate() {
        b[i * stride] = v;
    }
}

/// [`trsm`] with A of order `ord` (any, up to [`MAX_DIM`]).
fn trsm_order<T: RealScalar>(args: Trsm, ord: usize, a: &[T], b: &mut [T]) {
    let (direct, lower) = args.shape();
    let a = &a[..ord * ord];
    let mij = |i: usize, k: usize| {
        if direct {
            a[i + k * ord]
        } else {
            a[k + i * ord]
        }
    };
    let mut inv = [T::ONE; MAX_DIM];
    let inv = &mut inv[..ord];
    if args.diag != b'U' {
        for (i, r) in inv.iter_mut().enumerate() {
            *r = T::ONE / mij(i, i);
        }
    }
    let mut x = [[T::ZERO; LANES]; MAX_DIM];
    args.for_each_group(b, ord, &mut x[..ord], |x| {
        if lower {
            for k in 0..ord {
                let xk = x[k].map(|v| v * inv[k]);
                x[k] = xk;
                for (i, xi) in x.iter_mut().enumerate().skip(k + 1) {
                    let f = mij(i, k);
                    for (v, &y) in xi.iter_mut().zip(&xk) {
                        *v = *v - f * y;
                    }
                }
            }
        } else {
            for k in (0..ord).rev() {
                let xk = x[k].map(|v| v * inv[k]);
                x[k] = xk;
                for (i, xi) in x.iter_mut().enumerate().take(k) {
                    let f = mij(i, k);
                    for (v, &y) in xi.iter_mut().zip(&xk) {
                        *v = *v - f * y;
                    }
                }
            }
        }
    });
}

impl Trsm {
    /// `(direct, lower)`: the system solved for each right-hand side is
    /// `M·x = r` with M = op(A) on the left (x a column of X) and M = op(A)ᵀ
    /// on the right (x a row: x·op(A) = r is op(A)ᵀ·xᵀ = rᵀ). `direct`: M
    /// is A rather than Aᵀ; `lower`: M is lower triangular.
    fn shape(&self) -> (bool, bool) {
        let direct = (self.side == b'L') == (self.trans == b'N');
        (direct, (self.uplo == b'L') == direct)
    }

    /// Runs `solve` on the right-hand sides of `b` (columns on the left,
    /// rows on the right), [`LANES`] at a time: `x[i][c]` is element i of
    /// right-hand side c (unused lanes are zero), written back afterwards.
    #[inline(always)]
    fn for_each_group<T: RealScalar>(
        &self,
        b: &mut [T],
        ord: usize,
        x: &mut [[T; LANES]],
        mut solve: impl FnMut(&mut [[T; LANES]]),
    ) {
        let (m, n) = (self.m, self.n);
        let b = &mut b[..m * n];
        let (count, rhs_stride, elem_stride) = if self.side == b'L' {
            (n, m, 1)
        } else {
            (m, 1, m)
        };
        let x = &mut x[..ord];
        for first in (0..count).step_by(LANES) {
            let lanes = (count - first).min(LANES);
            for (i, xi) in x.iter_mut().enumerate() {
                for (c, v) in xi.iter_mut().enumerate() {
                    *v = if c < lanes {
                        b[(first + c) * rhs_stride + i * elem_stride]
                    } else {
                        T::ZERO
                    };
                }
            }
            solve(x);
            for (i, xi) in x.iter().enumerate() {
                for (c, &v) in xi.iter().enumerate().take(lanes) {
                    b[(first + c) * rhs_stride + i * elem_stride] = v;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
