use super::*;

/// A deterministic pseudo-random matrix in [-1, 1).
fn matrix(len: usize, seed: u64) -> Vec<f64> {
    let mut next = crate::tests::uniform(seed);
    (0..len).map(|_| next()).collect()
}

/// The size-specialised kernels compute exactly what the general ones do.
#[test]
fn fixed_kernels_equal_general_ones() {
    for n in 1..=FIXED_MAX {
        let data = matrix(n * n, n as u64);
        let (mut a, mut b) = (data.clone(), data);
        let (mut pa, mut pb) = (vec![0; n], vec![0; n]);
        assert_eq!(
            getrf(n, n, &mut a, &mut pa),
            getrf_any(n, n, &mut b, &mut pb)
        );
        assert_eq!((a, pa), (b, pb), "getrf {n}x{n}");
        let mut t = matrix(n * n, 3);
        (0..n).for_each(|i| t[i + i * n] += 2.0);
        for (side, rhs) in [(b'L', 6), (b'R', 6), (b'L', 1), (b'R', 1)] {
            for (uplo, trans) in [(b'L', b'N'), (b'L', b'T'), (b'U', b'N'), (b'U', b'T')] {
                let (m, k) = if side == b'L' { (n, rhs) } else { (rhs, n) };
                let b = matrix(m * k, 4);
                let (mut x, mut y) = (b.clone(), b);
                let args = Trsm {
                    side,
                    uplo,
                    trans,
                    diag: b'N',
                    m,
                    n: k,
                };
                trsm(args, &t, &mut x);
                trsm_order(args, n, &t, &mut y);
                assert_eq!(
                    x, y,
                    "trsm side {} uplo {} trans {} order {n}, {rhs} right-hand sides",
                    side as char, uplo as char, trans as char
                );
            }
        }
    }
}

/// The lane-interleaved LU computes bit for bit what [`getrf`] does, for
/// full and partial groups, with zero columns and subnormal pivots.
#[test]
fn getrf_group_equals_one_at_a_time() {
    for n in 1..=FIXED_MAX {
        for used in 1..=LANES {
            let mut data = matrix(n * n * used, (n * 10 + used) as u64);
            if used > 1 {
                // Matrix 1: first column zero (info 1), then a subnormal pivot.
                (0..n).for_each(|i| data[n * n + i] = 0.0);
                if n > 1 {
                    (0..n).for_each(|i| data[n * n + n + i] *= 1e-310);
                }
            }
            let (mut a, mut b) = (data.clone(), data);
            let (mut pa, mut pb) = (vec![0; n * used], vec![0; n * used]);
            let (mut ia, mut ib) = (vec![0; used], vec![0; used]);
            assert!(getrf_group(n, &mut a, &mut pa, &mut ia));
            for c in 0..used {
                ib[c] = getrf(
                    n,
                    n,
                    &mut b[c * n * n..(c + 1) * n * n],
                    &mut pb[c * n..(c + 1) * n],
                );
            }
            assert_eq!((a, pa, ia), (b, pb, ib), "{used} matrices of {n}x{n}");
        }
    }
    assert!(!getrf_group::<f64>(
        FIXED_MAX + 1,
        &mut [],
        &mut [],
        &mut []
    ));
}

#[test]
fn getrf_2x2_by_hand() {
    // A = [[1, 2], [3, 4]] (row-major) → pivot row 2; L = [[1, 0], [1/3, 1]],
    // U = [[3, 4], [0, 2/3]].
    let mut a: Vec<f64> = vec![1.0, 3.0, 2.0, 4.0];
    let mut ipiv = [0; 2];
    assert_eq!(getrf(2, 2, &mut a, &mut ipiv), 0);
    assert_eq!(ipiv, [2, 2]);
    let want: [f64; 4] = [3.0, 1.0 / 3.0, 4.0, 2.0 - 4.0 / 3.0];
    for (g, w) in a.iter().zip(want) {
        assert!((g - w).abs() < 1e-15, "{a:?}");
    }
}

#[test]
fn getrf_zero_column_sets_info_and_continues() {
    // Column 0 is zero: info = 1, no swap, the rest still factored.
    let mut a = vec![0.0, 0.0, 1.0, 2.0];
    let mut ipiv = [0; 2];
    assert_eq!(getrf(2, 2, &mut a, &mut ipiv), 1);
    assert_eq!(ipiv, [1, 2]);
    assert_eq!(a, [0.0, 0.0, 1.0, 2.0]);
}

/// What an m×n matrix was before `?getrf` factored it into `f` (L below
/// the diagonal with its unit diagonal implied, U on and above it,
/// column-major) with the row interchanges `ipiv` (1-based): `P^T L U`.
fn unfactor<T: RealScalar>(m: usize, n: usize, f: &[T], ipiv: &[i32]) -> Vec<f64> {
    let k = m.min(n);
    let at = |i: usize, j: usize| f[i + j * m].to_f64();
    let mut lu = vec![0.0; m * n];
    for j in 0..n {
        for i in 0..m {
            // L[i][p] is 1 at p = i and 0 past it; U[p][j] is 0 past p = j.
            lu[i + j * m] = (0..=i.min(j).min(k - 1))
                .map(|p| {
                    if p == i {
                        at(p, j)
                    } else {
                        at(i, p) * at(p, j)
                    }
                })
                .sum();
        }
    }
    for r in (0..k).rev() {
        let q = ipiv[r] as usize - 1;
        (0..n).for_each(|j| lu.swap(r + j * m, q + j * m));
    }
    lu
}

fn lapack() -> &'static crate::ffi::LapackSymbols {
    crate::library().unwrap_or_else(|e| panic!("{e}")).symbols()
}

/// Same pivots as LAPACK and the same factors up to rounding, for every
/// shape up to `MAX_DIM` × `MAX_DIM` (square, tall and wide), in f64 and
/// f32, plus rank-deficient matrices (compared up to their first pivot of
/// rounding size); and factors that give the matrix back.
#[test]
fn getrf_matches_lapack() {
    fn check<T: RealScalar + From<f32>>(m: usize, n: usize, data: &[f64], tol: f64) {
        let a: Vec<T> = data.iter().map(|&x| T::from(x as f32)).collect();
        let k = m.min(n);
        let (mut ours, mut theirs) = (a.clone(), a.clone());
        let (mut p_ours, mut p_theirs) = (vec![0; k], vec![0; k]);
        let info_ours = getrf(m, n, &mut ours, &mut p_ours);
        let (mi, ni) = (m as i32, n as i32);
        let _gate = crate::library::shared_gate();
        // SAFETY: `theirs` is m×n with lda = m and `p_theirs` holds min(m,n).
        let info_theirs = unsafe {
            T::getrf(
                lapack(),
                mi,
                ni,
                theirs.as_mut_ptr(),
                mi,
                p_theirs.as_mut_ptr(),
            )
        };
        let scale = theirs.iter().fold(1.0, |s: f64, x| s.max(x.abs().to_f64()));
        // Each side's factors give the matrix back: P^T L U = A.
        for (side, f, p) in [("ours", &ours, &p_ours), ("LAPACK's", &theirs, &p_theirs)] {
            for (g, w) in unfactor(m, n, f, p).iter().zip(&a) {
                assert!(
                    (g - w.to_f64()).abs() <= tol * scale,
                    "{m}x{n}: {side} P^T L U gives {g}, A holds {w:?}"
                );
            }
        }
        // A pivot that is zero in exact arithmetic (the rank-deficient
        // matrices below) comes out as 0 or as a rounding-sized value
        // depending on how the updates are rounded: aarch64's OpenBLAS
        // kernels fuse the multiply and the add, this code does not. Past
        // such a step the factors follow rounding (which tiny value is the
        // pivot, multipliers of tiny by tiny), and so may `info` (k, a later
        // one, or 0). So the two sides are compared up to the first step
        // where either met a pivot of rounding size: there both pivots must
        // be of rounding size, and the rows factored before it (untouched by
        // the later interchanges) must agree; both sides' factors give the
        // matrix back (above) whatever came after.
        let tiny = tol * scale;
        let singular_at = |f: &[T], info: i32| {
            let first_tiny = (0..k).find(|&p| f[p + p * m].to_f64().abs() <= tiny);
            let reported = (info > 0).then(|| info as usize - 1);
            first_tiny.into_iter().chain(reported).min()
        };
        let until = singular_at(&ours, info_ours)
            .into_iter()
            .chain(singular_at(&theirs, info_theirs))
            .min();
        let rows = until.unwrap_or(m);
        if let Some(s) = until {
            for (side, f) in [("ours", &ours), ("LAPACK's", &theirs)] {
                let pivot = f[s + s * m].to_f64().abs();
                assert!(
                    pivot <= tiny,
                    "{m}x{n}: info {info_ours} (ours) vs {info_theirs} (LAPACK's): \
                     {side} pivot {s} is {pivot}, not of rounding size"
                );
            }
        } else {
            assert_eq!(info_ours, info_theirs, "info of {m}x{n}");
        }
        assert_eq!(
            p_ours[..rows.min(k)],
            p_theirs[..rows.min(k)],
            "pivots of {m}x{n}"
        );
        for j in 0..n {
            for i in 0..rows {
                let (g, w) = (ours[i + j * m], theirs[i + j * m]);
                assert!(
                    (g.to_f64() - w.to_f64()).abs() <= tiny,
                    "{m}x{n}, row {i} column {j}: {g:?} vs {w:?}"
                );
            }
        }
    }
    for m in 1..=MAX_DIM {
        for n in [1, 2, 3, m.saturating_sub(1).max(1), m, m + 1, MAX_DIM] {
            if n > MAX_DIM {
                continue;
            }
            let data = matrix(m * n, (m * 100 + n) as u64);
            check::<f64>(m, n, &data, 1e-12);
            check::<f32>(m, n, &data, 1e-4);
            // Rank-deficient: column 1 repeats column 0, row 2 is zero.
            let mut data = data;
            if n > 1 {
                let (c0, c1) = data.split_at_mut(m);
                c1[..m].copy_from_slice(&c0[..m]);
            }
            if m > 2 {
                (0..n).for_each(|j| data[2 + j * m] = 0.0);
            }
            check::<f64>(m, n, &data, 1e-12);
        }
    }
}

/// Every variant of the solve agrees with BLAS `?trsm`.
#[test]
fn trsm_matches_blas() {
    let shapes = [
        (1, 1),
        (8, 8),
        (8, 1),
        (3, 7),
        (MAX_DIM, 5),
        (4, MAX_DIM),
        (3, 70),
        (70, 3),
        (1, 8),
        (5, 1),
        (1, 5),
        (12, 1),
        (1, 12),
    ];
    for (m, n) in shapes {
        for args in trsm_variants(m, n).filter(|t| t.order() <= MAX_DIM) {
            let p = args.order();
            let mut a = matrix(p * p, 3);
            (0..p).for_each(|i| a[i + i * p] += 2.0);
            let b = matrix(m * n, 5);
            let (mut ours, mut theirs) = (b.clone(), b);
            trsm(args, &a, &mut ours);
            {
                let _gate = crate::library::shared_gate();
                args.blas(lapack(), [m, n, p].map(|v| v as i32), &a, &mut theirs);
            }
            for (g, w) in ours.iter().zip(&theirs) {
                assert!(
                    (g - w).abs() <= 1e-12 * w.abs().max(1.0),
                    "{m}x{n} {}: {g} vs {w}",
                    variant(args)
                );
            }
        }
    }
}

#[test]
fn trsm_every_variant_inverts_its_product() {
    let (m, n) = (5, 3);
    for args in trsm_variants(m, n) {
        let p = args.order();
        let mut a = matrix(p * p, 7);
        for i in 0..p {
            a[i + i * p] += 4.0;
        }
        let x = matrix(m * n, 11);
        // op(A) with the triangle and diagonal the routine reads.
        let op = |i: usize, k: usize| {
            let (r, c) = if args.trans == b'N' { (i, k) } else { (k, i) };
            let inside = if args.uplo == b'L' { r >= c } else { r <= c };
            match (r == c, args.diag == b'U', inside) {
                (true, true, _) => 1.0,
                (_, _, true) => a[r + c * p],
                _ => 0.0,
            }
        };
        let mut b = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                b[i + j * m] = if args.side == b'L' {
                    (0..m).map(|k| op(i, k) * x[k + j * m]).sum()
                } else {
                    (0..n).map(|k| x[i + k * m] * op(k, j)).sum()
                };
            }
        }
        trsm(args, &a, &mut b);
        for (g, w) in b.iter().zip(&x) {
            assert!((g - w).abs() < 1e-12, "{}: {b:?} vs {x:?}", variant(args));
        }
    }
}

/// Every `?trsm` variant (side, uplo, trans, diag) for an m×n B.
fn trsm_variants(m: usize, n: usize) -> impl Iterator<Item = Trsm> {
    [b'L', b'R'].into_iter().flat_map(move |side| {
        [b'L', b'U'].into_iter().flat_map(move |uplo| {
            [b'N', b'T', b'C'].into_iter().flat_map(move |trans| {
                [b'N', b'U'].into_iter().map(move |diag| Trsm {
                    side,
                    uplo,
                    trans,
                    diag,
                    m,
                    n,
                })
            })
        })
    })
}

/// A `?trsm` variant for messages.
fn variant(t: Trsm) -> String {
    format!(
        "side {} uplo {} trans {} diag {}",
        char::from(t.side),
        char::from(t.uplo),
        char::from(t.trans),
        char::from(t.diag)
    )
}
