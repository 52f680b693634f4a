//! gtsv, the perturbed tridiagonal solve and the CSR product.

use super::*;
use plugin_glue::handler::HandlerError;

// ------------------------------------------------------------------- gtsv

fn tridiag_residual<S: T>(dl: &[S], d: &[S], du: &[S], b: &[S], x: &[S], what: &str) {
    let n = d.len();
    let k = b.len() / n;
    for j in 0..k {
        for i in 0..n {
            let mut ax = d[i] * x[i + j * n];
            if i > 0 {
                ax = ax + dl[i] * x[i - 1 + j * n];
            }
            if i + 1 < n {
                ax = ax + du[i] * x[i + 1 + j * n];
            }
            assert!(
                (ax - b[i + j * n]).mag() < S::tol() * 100.0,
                "{what}: row {i} rhs {j}"
            );
        }
    }
}

/// [`tridiag_residual`] for each order-`n` system of a batch.
fn tridiag_residuals<S: T>(n: usize, dl: &[S], d: &[S], du: &[S], b: &[S], x: &[S], what: &str) {
    let nk = n * (b.len() / d.len());
    for e in 0..d.len() / n {
        let (r, rk) = (e * n..(e + 1) * n, e * nk..(e + 1) * nk);
        tridiag_residual(
            &dl[r.clone()],
            &d[r.clone()],
            &du[r],
            &b[rk.clone()],
            &x[rk],
            what,
        );
    }
}

fn gtsv_solves<S: T>(p: &str) {
    let (batch, n, k) = (2usize, 6usize, 3usize);
    let (dl0, du0) = (random::<S>(batch * n, 90), random::<S>(batch * n, 91));
    let d0: Vec<S> = random::<S>(batch * n, 92)
        .into_iter()
        .map(|x| x + S::from_f64(3.0, 0.0))
        .collect();
    let b0 = random::<S>(batch * n * k, 93);
    let (mut dl, mut d, mut du) = (
        Host::new(dl0.clone(), &[2, 6]),
        Host::new(d0.clone(), &[2, 6]),
        Host::new(du0.clone(), &[2, 6]),
    );
    let mut b = Host::new(b0.clone(), &[2, 6, 3]);
    let mut info = zeros::<i32>(&[2]);
    let (dlb, db, dub, bb) = (dl.buf(), d.buf(), du.buf(), b.buf());
    let call = call_of(
        "gtsv",
        vec![dlb, db, dub, bb],
        vec![dlb, db, dub, bb, info.buf()],
        vec![],
    );
    gtsv::run::<S>(&ctx("gtsv"), &call).unwrap();
    assert_eq!(info.data, [0, 0]);
    tridiag_residuals(n, &dl0, &d0, &du0, &b0, &b.data, &format!("{p}gtsv"));
}
all_dtypes!(gtsv_residual_is_small, gtsv_solves);

/// Runs `tridiagonal_solve_perturbed_ffi` on `dl`, `d`, `du`, `b` into `x`.
fn run_perturbed([dl, d, du, b]: [Buf<'_>; 4], x: Buf<'_>) -> Result<(), HandlerError> {
    let call = call_of(
        "tridiagonal_solve_perturbed_ffi",
        vec![dl, d, du, b],
        vec![x],
        vec![],
    );
    tridiagonal::run(&call)
}

fn perturbed_solves<S: T>(p: &str) {
    let (batch, n, k) = (2usize, 6usize, 2usize);
    let (dl0, du0) = (random::<S>(batch * n, 94), random::<S>(batch * n, 95));
    let d0: Vec<S> = random::<S>(batch * n, 96)
        .into_iter()
        .map(|x| {
            x.scale(
                <S::Real as RealScalar>::ONE
                    / (<S::Real as RealScalar>::ONE + <S::Real as RealScalar>::ONE),
            )
        })
        .collect();
    let b0 = random::<S>(batch * n * k, 97);
    let (mut dl, mut d, mut du, mut b) = (
        Host::new(dl0.clone(), &[2, 6]),
        Host::new(d0.clone(), &[2, 6]),
        Host::new(du0.clone(), &[2, 6]),
        Host::new(b0.clone(), &[2, 6, 2]),
    );
    let mut x = zeros::<S>(&[2, 6, 2]);
    run_perturbed([dl.buf(), d.buf(), du.buf(), b.buf()], x.buf()).unwrap();
    assert_eq!(b.data, b0, "{p}: b is read-only");
    tridiag_residuals(n, &dl0, &d0, &du0, &b0, &x.data, &format!("{p}perturbed"));
}
all_dtypes!(perturbed_tridiagonal_residual_is_small, perturbed_solves);

#[test]
fn perturbed_tridiagonal_rejects_mixed_types() {
    let (mut dl, mut d, mut du) = (zeros::<f32>(&[2]), zeros::<f64>(&[2]), zeros::<f32>(&[2]));
    let (mut b, mut x) = (zeros::<f32>(&[2, 1]), zeros::<f32>(&[2, 1]));
    let e = run_perturbed([dl.buf(), d.buf(), du.buf(), b.buf()], x.buf()).unwrap_err();
    assert!(e.message.contains("operand 1 (d) has element type"), "{e}");
}

// ----------------------------------------------------------------- sparse

#[test]
fn csr_handler_checks_indices() {
    let mut data = Host::new(vec![1.0f32, 2.0], &[2]);
    let mut indptr = Host::new(vec![0i32, 1, 2], &[3]);
    let mut indices = Host::new(vec![1i32, 5], &[2]);
    let mut rhs = Host::new(vec![1.0f32, 2.0], &[2]);
    let mut out = zeros::<f32>(&[2]);
    let mut run = |indices: &mut Host<i32>| {
        let args = vec![data.buf(), indptr.buf(), indices.buf(), rhs.buf()];
        sparse::run(&call_of(
            "cpu_csr_sparse_dense_ffi",
            args,
            vec![out.buf()],
            vec![],
        ))
    };
    let e = run(&mut indices).unwrap_err();
    assert!(
        e.message.contains("indices[1] = 5 (row 1) is outside 0..2"),
        "{e}"
    );
    indices.data[1] = 0;
    run(&mut indices).unwrap();
    assert_eq!(out.data, [2.0, 2.0]);
}
