//! RMS normalization over the last axis, forward and backward, as in JAX's
//! FFI tutorial (`rms_norm.cc`), as a cyxla guest.
//!
//! | target | attributes | operands | results |
//! |---|---|---|---|
//! | `rms_norm` | `eps: f32` | `x: f32[..., n]` | `y: f32[..., n]` |
//! | `rms_norm_fwd` | `eps: f32` | `x: f32[..., n]` | `y: f32[..., n]`, `res: f32[...]` |
//! | `rms_norm_bwd` | — | `res: f32[...]`, `x: f32[..., n]`, `ct_y: f32[..., n]` | `ct_x: f32[..., n]` |
//!
//! `y = x * res` with `res = 1 / sqrt(mean(x²) + eps)` per row (all leading
//! axes are batch axes); `ct_x = res * ct_y - (Σ x·ct_y) * res³ / n * x`.
//! A rank-0 `x` is an `INVALID_ARGUMENT` error ("input must be an array");
//! size-zero axes work (`n = 0` gives `res = NaN`, the mean of nothing, like
//! the jnp reference).
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use cyxla_guest_sdk::math::sqrt_f32;
use cyxla_guest_sdk::{Buffer, CallFrame, Error, Result, target};

target!("rms_norm", rms_norm, rms_norm_handler);
target!("rms_norm_fwd", rms_norm_fwd, rms_norm_fwd_handler);
target!("rms_norm_bwd", rms_norm_bwd, rms_norm_bwd_handler);

/// Σ x², with 8 independent partial sums so wasm SIMD can vectorise it.
fn sum_squares(x: &[f32]) -> f32 {
    dot(x, x)
}

/// Σ a·b, with 8 independent partial sums.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (a, b) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] += a[k] * b[k];
        }
    }
    let mut s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (a, b) in ra.iter().zip(rb) {
        s += a * b;
    }
    s
}

/// Normalises one row; returns its `1 / rms`.
fn compute_rms_norm(eps: f32, x: &[f32], y: &mut [f32]) -> f32 {
    let scale = 1.0 / sqrt_f32(sum_squares(x) / x.len() as f32 + eps);
    for (y, x) in y.iter_mut().zip(x) {
        *y = x * scale;
    }
    scale
}

/// One row of the backward pass.
fn compute_rms_norm_bwd(res: f32, x: &[f32], ct_y: &[f32], ct_x: &mut [f32]) {
    let factor = dot(x, ct_y) * res * res * res / x.len() as f32;
    for ((ct_x, ct_y), x) in ct_x.iter_mut().zip(ct_y).zip(x) {
        *ct_x = res * ct_y - factor * x;
    }
}

/// `(rows, n)` of an input whose last axis is normalised.
fn rows_and_n(x: &Buffer<'_, f32>) -> Result<(usize, usize)> {
    let n = x.last_dim().ok_or_else(|| {
        Error::invalid_argument("input must be an array (rank >= 1), got a rank-0 x")
    })?;
    let dims = x.dims();
    let rows = dims[..dims.len() - 1].iter().map(|&d| d as usize).product();
    Ok((rows, n))
}

fn same_dims(name: &str, got: &[i64], want: &[i64]) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::invalid_argument(alloc::format!(
            "{name} has shape {got:?}, expected {want:?}"
        )))
    }
}

fn rms_norm_handler(frame: &CallFrame<'_>) -> Result<()> {
    frame.expect_arity(1, 1)?;
    let eps: f32 = frame.attr("eps")?;
    let x = frame.arg::<f32>(0)?;
    let (_, n) = rows_and_n(&x)?;
    let mut y = frame.ret::<f32>(0)?;
    same_dims("y", y.dims(), x.dims())?;
    if n > 0 {
        for (x, y) in x.chunks_exact(n).zip(y.chunks_exact_mut(n)) {
            compute_rms_norm(eps, x, y);
        }
    }
    Ok(())
}

fn rms_norm_fwd_handler(frame: &CallFrame<'_>) -> Result<()> {
    frame.expect_arity(1, 2)?;
    let eps: f32 = frame.attr("eps")?;
    let x = frame.arg::<f32>(0)?;
    let (_, n) = rows_and_n(&x)?;
    let mut y = frame.ret::<f32>(0)?;
    let mut res = frame.ret::<f32>(1)?;
    same_dims("y", y.dims(), x.dims())?;
    same_dims("res", res.dims(), &x.dims()[..x.rank() - 1])?;
    if n == 0 {
        // Mean of no elements: NaN, as jnp.mean.
        res.fill(f32::NAN);
        return Ok(());
    }
    for ((x, y), r) in x
        .chunks_exact(n)
        .zip(y.chunks_exact_mut(n))
        .zip(res.iter_mut())
    {
        *r = compute_rms_norm(eps, x, y);
    }
    Ok(())
}

fn rms_norm_bwd_handler(frame: &CallFrame<'_>) -> Result<()> {
    frame.expect_arity(3, 1)?;
    let res = frame.arg::<f32>(0)?;
    let x = frame.arg::<f32>(1)?;
    let ct_y = frame.arg::<f32>(2)?;
    let (_, n) = rows_and_n(&x)?;
    let mut ct_x = frame.ret::<f32>(0)?;
    same_dims("res", res.dims(), &x.dims()[..x.rank() - 1])?;
    same_dims("ct_y", ct_y.dims(), x.dims())?;
    same_dims("ct_x", ct_x.dims(), x.dims())?;
    if n > 0 {
        let rows = x
            .chunks_exact(n)
            .zip(ct_y.chunks_exact(n))
            .zip(ct_x.chunks_exact_mut(n));
        for (((x, ct_y), ct_x), &r) in rows.zip(res.iter()) {
            compute_rms_norm_bwd(r, x, ct_y, ct_x);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cyxla_guest_sdk::testing::FrameBuilder;
    use cyxla_guest_sdk::{DataType, ErrorCode};

    fn reference(eps: f32, x: &[f32], n: usize) -> (Vec<f32>, Vec<f32>) {
        let mut y = Vec::new();
        let mut res = Vec::new();
        for row in x.chunks(n) {
            let mean = row
                .iter()
                .map(|v| f64::from(*v) * f64::from(*v))
                .sum::<f64>()
                / n as f64;
            let r = 1.0 / (mean + f64::from(eps)).sqrt();
            res.push(r as f32);
            y.extend(row.iter().map(|v| (f64::from(*v) * r) as f32));
        }
        (y, res)
    }

    fn close(a: &[f32], b: &[f32]) {
        assert_eq!(a.len(), b.len());
        for (i, (a, b)) in a.iter().zip(b).enumerate() {
            assert!(
                (a - b).abs() <= 1e-5 * b.abs().max(1.0),
                "element {i}: {a} vs {b}"
            );
        }
    }

    fn input(len: usize) -> Vec<f32> {
        (0..len)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) * 0.37)
            .collect()
    }

    #[test]
    fn forward_matches_reference() {
        let x = input(3 * 21);
        let mut call = FrameBuilder::new()
            .arg(&[3, 21], &x)
            .ret(DataType::F32, &[3, 21])
            .attr("eps", 1e-5f32)
            .build();
        call.call(rms_norm_handler).unwrap();
        close(&call.ret::<f32>(0), &reference(1e-5, &x, 21).0);
    }

    #[test]
    fn fwd_returns_residuals() {
        let x = input(2 * 2 * 5);
        let mut call = FrameBuilder::new()
            .arg(&[2, 2, 5], &x)
            .ret(DataType::F32, &[2, 2, 5])
            .ret(DataType::F32, &[2, 2])
            .attr("eps", 0.5f32)
            .build();
        call.call(rms_norm_fwd_handler).unwrap();
        let (y, res) = reference(0.5, &x, 5);
        close(&call.ret::<f32>(0), &y);
        close(&call.ret::<f32>(1), &res);
    }

    #[test]
    fn bwd_matches_finite_differences() {
        let (n, eps) = (6usize, 1e-3f32);
        let x: Vec<f32> = input(n);
        let ct: Vec<f32> = (0..n).map(|i| 0.3 * i as f32 - 0.7).collect();
        let (_, res) = reference(eps, &x, n);
        let mut call = FrameBuilder::new()
            .arg(&[], &res)
            .arg(&[n as i64], &x)
            .arg(&[n as i64], &ct)
            .ret(DataType::F32, &[n as i64])
            .build();
        call.call(rms_norm_bwd_handler).unwrap();
        let got = call.ret::<f32>(0);
        // d/dx_i of Σ_j ct_j y_j by central differences in f64.
        let f = |x: &[f64]| {
            let mean = x.iter().map(|v| v * v).sum::<f64>() / n as f64;
            let r = 1.0 / (mean + f64::from(eps)).sqrt();
            x.iter()
                .zip(&ct)
                .map(|(x, c)| x * r * f64::from(*c))
                .sum::<f64>()
        };
        let x64: Vec<f64> = x.iter().map(|v| f64::from(*v)).collect();
        for i in 0..n {
            let h = 1e-6;
            let (mut p, mut m) = (x64.clone(), x64.clone());
            p[i] += h;
            m[i] -= h;
            let want = (f(&p) - f(&m)) / (2.0 * h);
            assert!(
                (f64::from(got[i]) - want).abs() < 1e-4,
                "ct_x[{i}]: {} vs {want}",
                got[i]
            );
        }
    }

    #[test]
    fn rank_zero_is_invalid_argument() {
        let mut call = FrameBuilder::new()
            .arg(&[], &[1.0f32])
            .ret(DataType::F32, &[])
            .attr("eps", 1e-5f32)
            .build();
        let e = call.call(rms_norm_handler).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(
            e.message.contains("input must be an array"),
            "{}",
            e.message
        );
    }

    #[test]
    fn size_zero_dims_work() {
        // (input shape, rows): no rows, then rows of no elements.
        for (dims, rows) in [([0, 4], [0]), ([3, 0], [3])] {
            let mut call = FrameBuilder::new()
                .arg::<f32>(&dims, &[])
                .ret(DataType::F32, &dims)
                .ret(DataType::F32, &rows)
                .attr("eps", 1e-5f32)
                .build();
            call.call(rms_norm_fwd_handler).unwrap();
            // An empty row has no RMS.
            assert!(call.ret::<f32>(1).iter().all(|r| r.is_nan()));
        }
    }

    #[test]
    fn wrong_inputs_are_named() {
        let cases = [
            (
                FrameBuilder::new()
                    .arg(&[2], &[1.0f64, 2.0])
                    .ret(DataType::F32, &[2])
                    .attr("eps", 1e-5f32),
                "argument 0: expected a f32 buffer, got f64 [2]",
            ),
            (
                FrameBuilder::new()
                    .arg(&[2], &[1.0f32, 2.0])
                    .ret(DataType::F32, &[2])
                    .attr("eps", 1e-5f64),
                "attribute `eps`: expected a f32 scalar, got a f64 scalar",
            ),
            (
                FrameBuilder::new()
                    .arg(&[2], &[1.0f32, 2.0])
                    .ret(DataType::F32, &[3])
                    .attr("eps", 1e-5f32),
                "y has shape [3], expected [2]",
            ),
        ];
        for (frame, message) in cases {
            let e = frame.build().call(rms_norm_handler).unwrap_err();
            assert_eq!(e.message, message);
        }
    }
}
