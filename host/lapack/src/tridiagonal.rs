//! `tridiagonal_solve_perturbed_ffi`: tridiagonal solve that perturbs tiny
//! pivots instead of failing. No LAPACK routine: Gaussian elimination with
//! adjacent-row partial pivoting in the manner of xLAGTF/xLAGTS, ported from
//! the description of the target's contract:
//! docs/lapack-targets.md, "tridiagonal_solve_perturbed_ffi".

use num_complex::Complex;

use crate::call::{Batched, Call, Operand, for_each_batch, piece};
use crate::scalar::{LapackScalar, RealScalar};
use plugin_glue::dtype::DType;
use plugin_glue::handler::HandlerError;

/// LAPACK's safe minimum (`xLAMCH('S')`): the smallest normal number, or
/// 1/max·(1+eps) if that is larger.
fn safe_min<R: RealScalar>() -> R {
    let small = R::ONE / R::MAX;
    if small >= R::MIN_POSITIVE {
        small * (R::ONE + R::EPSILON)
    } else {
        R::MIN_POSITIVE
    }
}

/// Division as the C++ original performs it. For complex types that is
/// `std::complex` division, which clang and gcc lower to the C99 Annex G
/// routine (`__divsc3`/`__divdc3`): scale the divisor by a power of two so
/// that |c|² + |d|² cannot overflow or underflow, divide, scale back. The
/// textbook formula would turn the tiny pivots this solver perturbs into
/// NaN.
pub(crate) trait Quotient: LapackScalar {
    /// `self / d`.
    fn quotient(self, d: Self) -> Self;
}

impl Quotient for f32 {
    fn quotient(self, d: f32) -> f32 {
        self / d
    }
}

impl Quotient for f64 {
    fn quotient(self, d: f64) -> f64 {
        self / d
    }
}

impl Quotient for Complex<f32> {
    fn quotient(self, d: Self) -> Self {
        // In f64, every f32 product and the scaling are exact, so this
        // matches `__divsc3` up to the final rounding to f32.
        let q = complex_div(
            f64::from(self.re),
            f64::from(self.im),
            f64::from(d.re),
            f64::from(d.im),
        );
        Complex::new(q.re as f32, q.im as f32)
    }
}

impl Quotient for Complex<f64> {
    fn quotient(self, d: Self) -> Self {
        complex_div(self.re, self.im, d.re, d.im)
    }
}

/// `logb(x)`: the unbiased exponent of a finite non-zero `x` (subnormals
/// included), −∞ for 0, +∞ for ±∞, NaN for NaN.
fn logb(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.is_infinite() {
        return f64::INFINITY;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    let bits = x.abs().to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    if exp == 0 {
        // Subnormal: normalise by 2^54 first.
        let scaled = (x.abs() * f64::from_bits(0x4350_0000_0000_0000)).to_bits();
        (((scaled >> 52) & 0x7ff) as i64 - 1023 - 54) as f64
    } else {
        (exp - 1023) as f64
    }
}

/// `scalbn(x, n)` = x·2ⁿ, in steps that stay within the exponent range.
fn scalbn(mut x: f64, mut n: i32) -> f64 {
    let two_to = |e: i32| f64::from_bits(((e + 1023) as u64) << 52);
    while n > 1023 {
        x *= two_to(1023);
        n -= 1023;
    }
    while n < -1022 {
        x *= two_to(-1022);
        n += 1022;
    }
    x * two_to(n)
}

/// (a + bi) / (c + di), C99 Annex G style (compiler-rt's `__divdc3`).
fn complex_div(a: f64, b: f64, mut c: f64, mut d: f64) -> Complex<f64> {
    let logbw = logb(c.abs().max(d.abs()));
    let mut ilogbw = 0;
    if logbw.is_finite() {
        ilogbw = logbw as i32;
        c = scalbn(c, -ilogbw);
        d = scalbn(d, -ilogbw);
    }
    let denom = c * c + d * d;
    let mut re = scalbn((a * c + b * d) / denom, -ilogbw);
    let mut im = scalbn((b * c - a * d) / denom, -ilogbw);
    if re.is_nan() && im.is_nan() {
        if denom == 0.0 && (!a.is_nan() || !b.is_nan()) {
            re = f64::INFINITY.copysign(c) * a;
            im = f64::INFINITY.copysign(c) * b;
        } else if (a.is_infinite() || b.is_infinite()) && c.is_finite() && d.is_finite() {
            let a = (if a.is_infinite() { 1.0f64 } else { 0.0 }).copysign(a);
            let b = (if b.is_infinite() { 1.0f64 } else { 0.0 }).copysign(b);
            re = f64::INFINITY * (a * c + b * d);
            im = f64::INFINITY * (b * c - a * d);
        } else if logbw.is_infinite() && logbw > 0.0 && a.is_finite() && b.is_finite() {
            let c = (if c.is_infinite() { 1.0f64 } else { 0.0 }).copysign(c);
            let d = (if d.is_infinite() { 1.0f64 } else { 0.0 }).copysign(d);
            re = 0.0 * (a * c + b * d);
            im = 0.0 * (b * c - a * d);
        }
    }
    Complex::new(re, im)
}

/// `|r_j|` maximum over the row.
fn max_abs<T: LapackScalar>(row: impl Iterator<Item = T>) -> T::Real {
    row.map(T::abs).fold(
        <T::Real as RealScalar>::ZERO,
        |m, v| if v > m { v } else { m },
    )
}

/// Moves a pivot `p` with |p| < 1 away from zero so that `row / p` cannot
/// overflow: adds a growing real perturbation (signed like Re(p)) while p is
/// too small for the row, or rescales p and the row when p is subnormal.
fn adjust_pivot<T: LapackScalar>(p: &mut T, row: &mut [T], perturb: T::Real) {
    let one = <T::Real as RealScalar>::ONE;
    if p.abs() >= one {
        return;
    }
    let safemin = safe_min::<T::Real>();
    let bignum = one / safemin;
    let mag = if perturb.abs() > safemin {
        perturb.abs()
    } else {
        safemin
    };
    let mut perturb = if p.re().to_f64().is_sign_negative() {
        -mag
    } else {
        mag
    };
    let m = max_abs(row.iter().copied());
    while p.abs() < one {
        let ap = p.abs();
        if ap < safemin {
            if *p == T::default() || m * safemin > ap {
                *p = *p + T::from_real(perturb);
                perturb = perturb * (one + one);
            } else {
                *p = p.scale(bignum);
                row.iter_mut().for_each(|r| *r = r.scale(bignum));
                break;
            }
        } else if m > ap * bignum {
            *p = *p + T::from_real(perturb);
            perturb = perturb * (one + one);
        } else {
            break;
        }
    }
}

/// Solves one `n×k` system (column-major `b` and `x`, ld = n) given the
/// three diagonals (`dl[0]`, `du[n-1]` unused). `u` (3n) and `row` (k) are
/// scratch.
pub(crate) fn solve_one<T: Quotient>(
    dl: &[T],
    d: &[T],
    du: &[T],
    b: &[T],
    x: &mut [T],
    u: &mut [T],
    row: &mut [T],
) {
    let n = d.len();
    if n == 0 {
        return;
    }
    let k = b.len() / n;
    let eps = <T::Real as RealScalar>::EPSILON;
    let at = |i: usize, j: usize| i + j * n;
    if n == 1 {
        let mut p = d[0];
        row.copy_from_slice(&b[..k]);
        adjust_pivot(&mut p, row, eps * d[0].abs());
        let inv = T::from_real(<T::Real as RealScalar>::ONE).quotient(p);
        (0..k).for_each(|j| x[at(0, j)] = row[j] * inv);
        return;
    }
    let zero = T::default();
    u.fill(zero);
    let uu = |i: usize, c: usize| 3 * i + c;
    let bigger = |a: T::Real, b: T::Real| if b > a { b } else { a };
    u[uu(0, 0)] = d[0];
    u[uu(0, 1)] = du[0];
    (0..k).for_each(|j| x[at(0, j)] = b[at(0, j)]);
    let mut scale1 = d[0].abs() + du[0].abs();
    let mut max_abs_u = bigger(d[0].abs(), du[0].abs());
    for i in 0..n - 1 {
        u[uu(i + 1, 0)] = d[i + 1];
        let mut scale2 = dl[i + 1].abs() + d[i + 1].abs();
        if i < n - 2 {
            scale2 = scale2 + du[i + 1].abs();
        }
        if dl[i + 1] == zero {
            u[uu(i + 1, 1)] = du[i + 1];
            u[uu(i, 2)] = zero;
            (0..k).for_each(|j| x[at(i + 1, j)] = b[at(i + 1, j)]);
            scale1 = scale2;
        } else {
            let piv1 = if u[uu(i, 0)] == zero {
                <T::Real as RealScalar>::ZERO
            } else {
                u[uu(i, 0)].abs() / scale1
            };
            let piv2 = dl[i + 1].abs() / scale2;
            if piv2 <= piv1 {
                let f = dl[i + 1].quotient(u[uu(i, 0)]);
                u[uu(i + 1, 0)] = u[uu(i + 1, 0)] - f * u[uu(i, 1)];
                u[uu(i + 1, 1)] = du[i + 1];
                u[uu(i, 2)] = zero;
                (0..k).for_each(|j| x[at(i + 1, j)] = b[at(i + 1, j)] - f * x[at(i, j)]);
                scale1 = scale2;
            } else {
                let f = u[uu(i, 0)].quotient(dl[i + 1]);
                u[uu(i, 0)] = dl[i + 1];
                u[uu(i + 1, 0)] = u[uu(i, 1)] - f * d[i + 1];
                u[uu(i, 1)] = d[i + 1];
                if i < n - 2 {
                    u[uu(i, 2)] = du[i + 1];
                    u[uu(i + 1, 1)] = -(f * du[i + 1]);
                }
                for j in 0..k {
                    let xi = x[at(i, j)];
                    x[at(i + 1, j)] = xi - f * b[at(i + 1, j)];
                    x[at(i, j)] = b[at(i + 1, j)];
                }
                scale1 = u[uu(i + 1, 0)].abs() + u[uu(i + 1, 1)].abs();
            }
        }
        if i < n - 2 {
            for c in 0..3 {
                max_abs_u = bigger(max_abs_u, u[uu(i, c)].abs());
            }
        }
    }
    max_abs_u = bigger(max_abs_u, u[uu(n - 1, 0)].abs());
    let perturb = eps * max_abs_u;
    let one = T::from_real(<T::Real as RealScalar>::ONE);
    for i in (0..n).rev() {
        for (j, r) in row.iter_mut().enumerate() {
            let mut v = x[at(i, j)];
            if i + 1 < n {
                v = v - u[uu(i, 1)] * x[at(i + 1, j)];
            }
            if i + 2 < n {
                v = v - u[uu(i, 2)] * x[at(i + 2, j)];
            }
            *r = v;
        }
        let mut p = u[uu(i, 0)];
        adjust_pivot(&mut p, row, perturb);
        let inv = one.quotient(p);
        (0..k).for_each(|j| x[at(i, j)] = row[j] * inv);
    }
}

/// Solves every element: diagonals `n` per element, `b` and `x` `n×k`.
pub(crate) fn solve<T: Quotient>(
    n: usize,
    k: usize,
    dl: &[T],
    d: &[T],
    du: &[T],
    b: &[T],
    x: &mut [T],
) {
    if n == 0 || k == 0 {
        return;
    }
    let batch = x.len() / (n * k);
    let xb = Batched::new(x, n * k, batch);
    let init = || (vec![T::default(); 3 * n], vec![T::default(); k]);
    for_each_batch(batch, 20.0 * (n * k) as f64, init, |(u, row), e| {
        // SAFETY: each batch index is handed to one worker only.
        let x = unsafe { xb.get(e) };
        solve_one(
            piece(dl, n, e),
            piece(d, n, e),
            piece(du, n, e),
            piece(b, n * k, e),
            x,
            u,
            row,
        );
    });
}

fn run_typed<T: Quotient>(
    [dl, d, du, b]: [Operand<'_>; 4],
    x: Operand<'_>,
) -> Result<(), HandlerError> {
    let (batch, n, k) = b.matrix()?;
    for v in [&dl, &d, &du] {
        v.expect(T::DTYPE, batch, &[n])?;
    }
    x.expect(T::DTYPE, batch, &[n, k])?;
    // SAFETY: the operands are read-only and XLA does not alias them with
    // the result (the target declares no alias); `x` is ours.
    let (dl, d, du, b, x) = unsafe {
        (
            dl.slice::<T>()?,
            d.slice::<T>()?,
            du.slice::<T>()?,
            b.slice::<T>()?,
            x.slice_mut::<T>()?,
        )
    };
    solve(n, k, dl, d, du, b, x);
    Ok(())
}

/// The handler: operands `dl`, `d`, `du`, `b`; result `x`; the element type
/// (f32, f64, c64 or c128) comes from the buffers.
pub(crate) fn run(call: &Call<'_>) -> Result<(), HandlerError> {
    let (args, [x]) = call.operands(["dl", "d", "du", "b"], ["x"])?;
    let dtype = args[3].buf.dtype;
    match dtype {
        DType::F32 => run_typed::<f32>(args, x),
        DType::F64 => run_typed::<f64>(args, x),
        DType::C64 => run_typed::<Complex<f32>>(args, x),
        DType::C128 => run_typed::<Complex<f64>>(args, x),
        other => Err(call.err(format_args!(
            "unsupported element type {} (expected f32, f64, c64 or c128)",
            other.name()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use num_complex::Complex;

    use super::{Quotient, complex_div, logb, scalbn, solve_one};

    #[test]
    fn complex_division_survives_tiny_and_huge_divisors() {
        let one = Complex::new(1.0f32, 0.0);
        let q = one.quotient(Complex::new(-1e-30, 0.0));
        assert_eq!(q, Complex::new(-1e30, -0.0));
        // Subnormal divisor: |c|² + |d|² would underflow to 0 unscaled.
        let q = Complex::new(1e-300f64, 2e-300).quotient(Complex::new(1e-310, 1e-310));
        assert!(
            (q.re / 1.5e10 - 1.0).abs() < 1e-12 && (q.im / 0.5e10 - 1.0).abs() < 1e-12,
            "{q}"
        );
        let q = complex_div(3.0, 4.0, 1e300, 1e300);
        assert!(
            (q.re - 3.5e-300).abs() < 1e-313 && (q.im - 0.5e-300).abs() < 1e-313,
            "{q}"
        );
        assert_eq!(complex_div(1.0, 0.0, 0.0, 0.0).re, f64::INFINITY);
        assert_eq!(logb(1e-310), -1030.0);
        assert_eq!(logb(8.0), 3.0);
        assert_eq!(scalbn(1.0, -1074), f64::from_bits(1));
    }

    fn residual(dl: &[f64], d: &[f64], du: &[f64], b: &[f64], x: &[f64]) -> f64 {
        let n = d.len();
        (0..n)
            .map(|i| {
                let mut ax = d[i] * x[i];
                if i > 0 {
                    ax += dl[i] * x[i - 1];
                }
                if i + 1 < n {
                    ax += du[i] * x[i + 1];
                }
                (ax - b[i]).abs()
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn solves_a_well_conditioned_system_with_and_without_swaps() {
        // Row 1 has a large sub-diagonal entry, which forces a row swap.
        let dl = [9.0, 10.0, 0.5, 1.0];
        let d = [1.0, 2.0, 5.0, 4.0];
        let du = [3.0, 1.0, 1.0, 7.0];
        let b = [1.0, 2.0, 3.0, 4.0];
        let mut x = [0.0; 4];
        solve_one(&dl, &d, &du, &b, &mut x, &mut [0.0; 12], &mut [0.0; 1]);
        assert!(residual(&dl, &d, &du, &b, &x) < 1e-12, "{x:?}");
    }

    #[test]
    fn singular_pivot_is_perturbed_not_infinite() {
        let (dl, d, du, b) = ([0.0, 0.0], [0.0, 1.0], [0.0, 0.0], [1.0, 1.0]);
        let mut x = [0.0f64; 2];
        solve_one(&dl, &d, &du, &b, &mut x, &mut [0.0; 6], &mut [0.0; 1]);
        assert!(x.iter().all(|v| v.is_finite()), "{x:?}");
        assert_eq!(x[1], 1.0);
    }
}
