use super::*;
use crate::scalar::LapackScalar;

fn lapack() -> &'static crate::ffi::LapackSymbols {
    crate::library().unwrap_or_else(|e| panic!("{e}")).symbols()
}

/// A deterministic pseudo-random symmetric matrix (both triangles).
fn symmetric(n: usize, seed: u64) -> Vec<f64> {
    let mut next = crate::tests::uniform(seed);
    let mut a = vec![0.0; n * n];
    for j in 0..n {
        for i in j..n {
            let x = next();
            a[i + j * n] = x;
            a[j + i * n] = x;
        }
    }
    a
}

/// LAPACK's ?syevd('V') on a copy of `a`: eigenvectors, eigenvalues,
/// INFO.
pub(crate) fn reference<T: RealScalar>(uplo: u8, n: usize, a: &[T]) -> (Vec<T>, Vec<T>, i32) {
    let mut a = a.to_vec();
    let mut w = vec![T::ZERO; n];
    let lwork = 1 + 6 * n + 2 * n * n;
    let liwork = 3 + 5 * n;
    let (mut work, mut rwork, mut iwork) =
        (vec![T::ZERO; lwork], vec![T::ZERO; 1], vec![0; liwork]);
    let ni = n as i32;
    let _gate = crate::library::shared_gate();
    // SAFETY: a is n×n (lda = n), w holds n, the workspaces have
    // LAPACK's minimum sizes for JOBZ = 'V'.
    let info = unsafe {
        <T as LapackScalar>::syevd(
            lapack(),
            b'V',
            uplo,
            ni,
            a.as_mut_ptr(),
            ni,
            w.as_mut_ptr(),
            work.as_mut_ptr(),
            lwork as i32,
            rwork.as_mut_ptr(),
            1,
            iwork.as_mut_ptr(),
            liwork as i32,
        )
    };
    (a, w, info)
}

fn ours<T: RealScalar>(uplo: u8, n: usize, a: &[T]) -> (Vec<T>, Vec<T>, i32) {
    let mut a = a.to_vec();
    let mut w = vec![T::ZERO; n];
    let info = syevd(uplo, n, &mut a, &mut w, &mut Work::new(n));
    (a, w, info)
}

/// Eigenvalues and eigenvectors as LAPACK's, for every order up to
/// MAX_N and both triangles: in f64 entry by entry, signs included; in
/// f32 up to the sign of a column (see the module docs: f32 eigenvector
/// signs follow the last bits of the tridiagonal form).
#[test]
fn syevd_matches_lapack() {
    fn check<T: RealScalar + From<f32>>(uplo: u8, n: usize, data: &[f64], tol: f64) {
        let a: Vec<T> = data.iter().map(|&x| T::from(x as f32)).collect();
        let (va, wa, ia) = ours(uplo, n, &a);
        let (vb, wb, ib) = reference(uplo, n, &a);
        assert_eq!(ia, ib, "info, n = {n}");
        let scale = wb.iter().fold(1.0, |s: f64, x| s.max(x.abs().to_f64()));
        for (g, w) in wa.iter().zip(&wb) {
            assert!(
                (g.to_f64() - w.to_f64()).abs() <= tol * scale,
                "eigenvalues, n = {n}, uplo {}: {wa:?} vs {wb:?}",
                uplo as char
            );
        }
        let strict = T::EPSILON.to_f64() < 1e-10;
        for c in 0..n {
            let col = |v: &[T]| -> Vec<f64> {
                v[c * n..(c + 1) * n].iter().map(|x| x.to_f64()).collect()
            };
            let (g, w) = (col(&va), col(&vb));
            let dist = |sgn: f64| {
                g.iter()
                    .zip(&w)
                    .map(|(a, b)| (a - sgn * b).abs())
                    .fold(0.0, f64::max)
            };
            let d = if strict {
                dist(1.0)
            } else {
                dist(1.0).min(dist(-1.0))
            };
            assert!(
                d <= tol * 1000.0,
                "eigenvector {c}, n = {n}, uplo {}: {g:?} vs {w:?}",
                uplo as char
            );
        }
    }
    for n in 1..=MAX_N {
        for seed in 0..4 {
            let data = symmetric(n, (n * 10 + seed) as u64);
            for uplo in [b'L', b'U'] {
                check::<f64>(uplo, n, &data, 1e-12);
                check::<f32>(uplo, n, &data, 2e-5);
            }
        }
    }
}

/// Diagonal, zero, identity, extreme magnitudes (the scaling paths) and
/// NaN behave as in LAPACK.
#[test]
fn special_matrices_match_lapack() {
    let n = 6;
    let diag: Vec<f64> = (0..n * n)
        .map(|k| {
            if k % (n + 1) == 0 {
                (k % 5) as f64 - 2.0
            } else {
                0.0
            }
        })
        .collect();
    let zero = vec![0.0; n * n];
    let ident: Vec<f64> = (0..n * n)
        .map(|k| if k % (n + 1) == 0 { 1.0 } else { 0.0 })
        .collect();
    let huge: Vec<f64> = symmetric(n, 1).iter().map(|x| x * 1e300).collect();
    let tiny: Vec<f64> = symmetric(n, 2).iter().map(|x| x * 1e-300).collect();
    for (what, a) in [
        ("diagonal", &diag),
        ("zero", &zero),
        ("identity", &ident),
        ("huge", &huge),
        ("tiny", &tiny),
    ] {
        for uplo in [b'L', b'U'] {
            let (va, wa, ia) = ours(uplo, n, a);
            let (vb, wb, ib) = reference(uplo, n, a);
            assert_eq!(ia, ib, "{what}");
            let scale = wb.iter().fold(f64::MIN_POSITIVE, |s, x| s.max(x.abs()));
            for (g, w) in wa.iter().zip(&wb) {
                assert!((g - w).abs() <= 1e-12 * scale, "{what}: {wa:?} vs {wb:?}");
            }
            for (g, w) in va.iter().zip(&vb) {
                assert!((g - w).abs() <= 1e-10, "{what}: {va:?} vs {vb:?}");
            }
        }
    }
    // NaN: LAPACK's QL iteration does not converge, INFO > 0 (JAX then
    // returns NaN). The reference is not called here: with its generic
    // `Prescott` kernels, OpenBLAS 0.3.21 lets a `dsymv` on a vector
    // holding NaN poison later `ssymv` calls in any thread (see
    // `library`'s docs), which would break the f32 comparisons of the
    // tests running concurrently.
    let mut nan = symmetric(n, 3);
    nan[2 + 3 * n] = f64::NAN;
    nan[3 + 2 * n] = f64::NAN;
    for uplo in [b'L', b'U'] {
        let (_, wa, ia) = ours(uplo, n, &nan);
        assert!(ia > 0, "NaN input: info {ia}, eigenvalues {wa:?}");
    }
}
