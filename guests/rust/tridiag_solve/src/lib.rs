//! Batched tridiagonal solver, as a cyxla guest: target `tridiag_solve`.
//!
//! Operands follow `jax.lax.linalg.tridiagonal_solve`: `dl`, `d`, `du` of
//! shape `[B..., n]` (sub-, main and super-diagonal; `dl[..., 0]` and
//! `du[..., n-1]` are ignored) and the right-hand side `b` of shape
//! `[B..., n]` (one right-hand side) or `[B..., n, k]`. The result `x` has
//! `b`'s shape and solves `A x = b` for each batch element. All four operands
//! and the result are f32, or all f64 (dispatched on `d`'s dtype).
//!
//! The algorithm is LAPACK's `gtsv`: Gaussian elimination with partial
//! pivoting (row interchanges), so no diagonal dominance is assumed. A
//! singular matrix (a zero pivot) is not an error: its solution contains
//! infinities or NaNs, as IEEE division by zero gives.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use alloc::format;
use alloc::vec::Vec;
use core::ops::{Add, Div, Mul, Neg, Sub};

use cyxla_guest_sdk::{CallFrame, DataType, Element, Error, Result, target};

target!("tridiag_solve", tridiag_solve, tridiag_solve_handler);

/// The float types the solver runs on.
trait Real:
    Element
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    const ZERO: Self;
    fn abs(self) -> Self;
}

impl Real for f32 {
    const ZERO: f32 = 0.0;
    fn abs(self) -> f32 {
        f32::from_bits(self.to_bits() & 0x7fff_ffff)
    }
}

impl Real for f64 {
    const ZERO: f64 = 0.0;
    fn abs(self) -> f64 {
        f64::from_bits(self.to_bits() & 0x7fff_ffff_ffff_ffff)
    }
}

fn tridiag_solve_handler(frame: &CallFrame<'_>) -> Result<()> {
    frame.expect_arity(4, 1)?;
    match frame.any_arg(1)?.dtype() {
        DataType::F32 => solve_all::<f32>(frame),
        DataType::F64 => solve_all::<f64>(frame),
        other => Err(Error::unimplemented(format!(
            "unsupported dtype {other}; expected f32 or f64"
        ))),
    }
}

fn solve_all<T: Real>(frame: &CallFrame<'_>) -> Result<()> {
    let dl = frame.arg::<T>(0)?;
    let d = frame.arg::<T>(1)?;
    let du = frame.arg::<T>(2)?;
    let b = frame.arg::<T>(3)?;
    let mut x = frame.ret::<T>(0)?;
    let n = d
        .last_dim()
        .ok_or_else(|| Error::invalid_argument("d must have rank >= 1, got a rank-0 d"))?;
    for (name, diag) in [("dl", &dl), ("du", &du)] {
        if diag.dims() != d.dims() {
            return Err(Error::invalid_argument(format!(
                "{name} has shape {:?}, expected d's shape {:?}",
                diag.dims(),
                d.dims()
            )));
        }
    }
    let k = if b.dims() == d.dims() {
        1
    } else if b.rank() == d.rank() + 1 && &b.dims()[..d.rank()] == d.dims() {
        b.last_dim().unwrap_or(1)
    } else {
        return Err(Error::invalid_argument(format!(
            "b has shape {:?}, expected {:?} or {:?} + [k]",
            b.dims(),
            d.dims(),
            d.dims()
        )));
    };
    if x.dims() != b.dims() {
        return Err(Error::invalid_argument(format!(
            "x has shape {:?}, expected b's shape {:?}",
            x.dims(),
            b.dims()
        )));
    }
    x.copy_from_slice(&b);
    if n == 0 || k == 0 {
        return Ok(());
    }
    let mut work = Work::new(n);
    let systems = dl
        .chunks_exact(n)
        .zip(d.chunks_exact(n))
        .zip(du.chunks_exact(n))
        .zip(x.chunks_exact_mut(n * k));
    for (((dl, d), du), x) in systems {
        work.solve(dl, d, du, x, k);
    }
    Ok(())
}

/// Scratch for one system, reused across the batch.
struct Work<T> {
    /// Sub-diagonal `A[i+1][i]`, then the second super-diagonal after pivoting.
    l: Vec<T>,
    d: Vec<T>,
    /// Super-diagonal `A[i][i+1]`.
    u: Vec<T>,
}

impl<T: Real> Work<T> {
    fn new(n: usize) -> Work<T> {
        Work {
            l: Vec::with_capacity(n),
            d: Vec::with_capacity(n),
            u: Vec::with_capacity(n),
        }
    }

    /// Solves one system in place: `x` holds `b` (n rows of k) on entry.
    fn solve(&mut self, dl: &[T], d: &[T], du: &[T], x: &mut [T], k: usize) {
        let n = d.len();
        self.l.clear();
        self.l.extend_from_slice(&dl[1..]);
        self.l.push(T::ZERO);
        self.d.clear();
        self.d.extend_from_slice(d);
        self.u.clear();
        self.u.extend_from_slice(du);
        let (l, d, u) = (&mut self.l[..], &mut self.d[..], &mut self.u[..]);
        // Forward elimination with partial pivoting (LAPACK dgtsv, NRHS >= 1).
        for i in 0..n - 1 {
            let (rows_i, rows_next) = x.split_at_mut((i + 1) * k);
            let xi = &mut rows_i[i * k..];
            let xn = &mut rows_next[..k];
            if d[i].abs() >= l[i].abs() {
                // No interchange; a zero pivot here propagates NaN/inf.
                let fact = l[i] / d[i];
                d[i + 1] = d[i + 1] - fact * u[i];
                for (xn, xi) in xn.iter_mut().zip(xi.iter()) {
                    *xn = *xn - fact * *xi;
                }
                l[i] = T::ZERO;
            } else {
                // Interchange rows i and i+1.
                let fact = d[i] / l[i];
                d[i] = l[i];
                let temp = d[i + 1];
                d[i + 1] = u[i] - fact * temp;
                if i + 2 < n {
                    l[i] = u[i + 1];
                    u[i + 1] = -fact * l[i];
                } else {
                    l[i] = T::ZERO;
                }
                u[i] = temp;
                for (xn, xi) in xn.iter_mut().zip(xi.iter_mut()) {
                    let t = *xi;
                    *xi = *xn;
                    *xn = t - fact * *xn;
                }
            }
        }
        // Back substitution: row i has d[i], u[i] and (second super-diagonal) l[i].
        for j in 0..k {
            let last = (n - 1) * k + j;
            x[last] = x[last] / d[n - 1];
            if n > 1 {
                let r = (n - 2) * k + j;
                x[r] = (x[r] - u[n - 2] * x[r + k]) / d[n - 2];
            }
            for i in (0..n.saturating_sub(2)).rev() {
                let r = i * k + j;
                x[r] = (x[r] - u[i] * x[r + k] - l[i] * x[r + 2 * k]) / d[i];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cyxla_guest_sdk::testing::FrameBuilder;

    /// A x for one system (x: n rows of k).
    fn apply(dl: &[f64], d: &[f64], du: &[f64], x: &[f64], k: usize) -> Vec<f64> {
        let n = d.len();
        (0..n * k)
            .map(|r| {
                let (i, j) = (r / k, r % k);
                let mut v = d[i] * x[i * k + j];
                if i > 0 {
                    v += dl[i] * x[(i - 1) * k + j];
                }
                if i + 1 < n {
                    v += du[i] * x[(i + 1) * k + j];
                }
                v
            })
            .collect()
    }

    fn pseudo(len: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..len)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 33) as f64 / (1u64 << 31) as f64) * 2.0 - 1.0
            })
            .collect()
    }

    #[test]
    fn solves_batches_f64_with_pivoting() {
        let (batch, n, k) = (3usize, 7usize, 2usize);
        let dl = pseudo(batch * n, 1);
        // Small diagonal: forces row interchanges.
        let d: Vec<f64> = pseudo(batch * n, 2).iter().map(|v| v * 0.1).collect();
        let du = pseudo(batch * n, 3);
        let b = pseudo(batch * n * k, 4);
        let dims = [batch as i64, n as i64];
        let bdims = [batch as i64, n as i64, k as i64];
        let mut call = FrameBuilder::new()
            .arg(&dims, &dl)
            .arg(&dims, &d)
            .arg(&dims, &du)
            .arg(&bdims, &b)
            .ret(DataType::F64, &bdims)
            .build();
        call.call(tridiag_solve_handler).unwrap();
        let x = call.ret::<f64>(0);
        for s in 0..batch {
            let r = s * n..(s + 1) * n;
            let rb = s * n * k..(s + 1) * n * k;
            let ax = apply(&dl[r.clone()], &d[r.clone()], &du[r], &x[rb.clone()], k);
            for (a, b) in ax.iter().zip(&b[rb]) {
                assert!((a - b).abs() < 1e-9, "system {s}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn solves_f32_single_rhs() {
        let n = 5;
        let dl = [0.0f32, 1.0, 1.0, 1.0, 1.0];
        let d = [4.0f32; 5];
        let du = [1.0f32, 1.0, 1.0, 1.0, 0.0];
        let b = [1.0f32, 2.0, 3.0, 4.0, 5.0];
        let mut call = FrameBuilder::new()
            .arg(&[n], &dl)
            .arg(&[n], &d)
            .arg(&[n], &du)
            .arg(&[n], &b)
            .ret(DataType::F32, &[n])
            .build();
        call.call(tridiag_solve_handler).unwrap();
        let x: Vec<f64> = call.ret::<f32>(0).iter().map(|v| f64::from(*v)).collect();
        let to64 = |v: &[f32]| v.iter().map(|v| f64::from(*v)).collect::<Vec<_>>();
        let ax = apply(&to64(&dl), &to64(&d), &to64(&du), &x, 1);
        for (a, b) in ax.iter().zip(b) {
            assert!((a - f64::from(b)).abs() < 1e-5);
        }
    }

    #[test]
    fn n_one_and_zero() {
        let mut call = FrameBuilder::new()
            .arg(&[1], &[0.0f64])
            .arg(&[1], &[2.0f64])
            .arg(&[1], &[0.0f64])
            .arg(&[1], &[3.0f64])
            .ret(DataType::F64, &[1])
            .build();
        call.call(tridiag_solve_handler).unwrap();
        assert_eq!(call.ret::<f64>(0), [1.5]);
        let mut call = FrameBuilder::new()
            .arg::<f64>(&[2, 0], &[])
            .arg::<f64>(&[2, 0], &[])
            .arg::<f64>(&[2, 0], &[])
            .arg::<f64>(&[2, 0], &[])
            .ret(DataType::F64, &[2, 0])
            .build();
        call.call(tridiag_solve_handler).unwrap();
    }

    #[test]
    fn singular_gives_non_finite() {
        let mut call = FrameBuilder::new()
            .arg(&[2], &[0.0f64, 0.0])
            .arg(&[2], &[0.0f64, 0.0])
            .arg(&[2], &[0.0f64, 0.0])
            .arg(&[2], &[1.0f64, 1.0])
            .ret(DataType::F64, &[2])
            .build();
        call.call(tridiag_solve_handler).unwrap();
        assert!(call.ret::<f64>(0).iter().all(|v| !v.is_finite()));
    }

    #[test]
    fn bad_dtype_and_shapes() {
        let mut call = FrameBuilder::new()
            .arg(&[1], &[0i32])
            .arg(&[1], &[1i32])
            .arg(&[1], &[0i32])
            .arg(&[1], &[1i32])
            .ret(DataType::S32, &[1])
            .build();
        assert_eq!(
            call.call(tridiag_solve_handler),
            Err(Error::unimplemented(
                "unsupported dtype s32; expected f32 or f64"
            ))
        );
        let mut call = FrameBuilder::new()
            .arg(&[2], &[0.0f32; 2])
            .arg(&[2], &[1.0f32; 2])
            .arg(&[2], &[0.0f32; 2])
            .arg(&[3], &[1.0f32; 3])
            .ret(DataType::F32, &[3])
            .build();
        let e = call.call(tridiag_solve_handler).unwrap_err();
        assert_eq!(e.message, "b has shape [3], expected [2] or [2] + [k]");
    }
}
