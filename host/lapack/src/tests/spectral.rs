//! syevd/heevd, gesdd, gesvd, geev, gees, gehrd and sytrd/hetrd.

use super::*;
use crate::scalar::RealLapack;
use plugin_glue::handler::HandlerError;

// ------------------------------------------------------------------ syevd

fn hermitian<S: T>(n: usize, seed: u64) -> Mat<S> {
    let g = Mat::from(n, n, &random::<S>(n * n, seed));
    let h = g.adjoint();
    let mut s = g.clone();
    s.d.iter_mut().zip(&h.d).for_each(|(x, y)| *x = *x + *y);
    s
}

fn syevd_reconstructs<S: T>(p: &str) {
    let (batch, n) = (2usize, 5usize);
    let mut input = Vec::new();
    (0..batch).for_each(|b| input.extend(hermitian::<S>(n, 30 + b as u64).d));
    for uplo in [b'L', b'U'] {
        let mut a = Host::new(input.clone(), &[batch as i64, n as i64, n as i64]);
        let mut w = zeros::<S::Real>(&[batch as i64, n as i64]);
        let mut info = zeros::<i32>(&[batch as i64]);
        let ab = a.buf();
        let call = call_of(
            "syevd",
            vec![ab],
            vec![ab, w.buf(), info.buf()],
            vec![ch("mode", b'V'), ch("uplo", uplo)],
        );
        syevd::run::<S>(&ctx("syevd"), &call).unwrap();
        assert_eq!(info.data, vec![0; batch]);
        for b in 0..batch {
            let v = Mat::from(n, n, &a.data[b * n * n..(b + 1) * n * n]);
            let ws = &w.data[b * n..(b + 1) * n];
            assert!(
                ws.windows(2).all(|x| x[0] <= x[1]),
                "{p}syevd ascending {ws:?}"
            );
            let vl = v.scale_cols(|j| S::from_real(ws[j]));
            let am = Mat::from(n, n, &input[b * n * n..(b + 1) * n * n]);
            assert_close(
                &am.mul(&v),
                &vl,
                &format!("{p}syevd A·V = V·Λ (uplo {})", uplo as char),
            );
            assert_close(
                &v.adjoint().mul(&v),
                &Mat::eye(n),
                &format!("{p}syevd VᴴV = I"),
            );
        }
    }
}
all_dtypes!(syevd_av_equals_v_lambda, syevd_reconstructs);

/// The test context for the split paths, which need two threads or more.
fn split_ctx(target: &'static str) -> Ctx<'static> {
    let ctx = ctx(target);
    assert!(
        ctx.lib.threads_for_big_calls() >= 2,
        "the split runs on two or more threads: run on a machine with two cores or more, or set CYXLA_LAPACK_THREADS=2"
    );
    ctx
}

/// Columns 0, n/16, 2n/16, ... and n − 1: some from every thread's block.
fn sampled_columns(n: usize) -> impl Iterator<Item = usize> {
    (0..n).step_by(n / 16).chain([n - 1])
}

/// Column `j` of `m`.
fn column<S: T>(m: &Mat<S>, j: usize) -> Mat<S> {
    Mat::from(m.m, 1, &m.d[j * m.m..(j + 1) * m.m])
}

/// The unit vector e_j of length n.
fn unit<S: T>(n: usize, j: usize) -> Mat<S> {
    let mut e = vec![S::default(); n];
    e[j] = one();
    Mat::from(n, 1, &e)
}

/// The split path ([`split::syevd`]) on single matrices at its two
/// thresholds (with more than two threads the larger one also puts OpenBLAS
/// threads on `?sytrd`: [`splits_on_three_threads_match_the_plain_routines`]):
/// the eigenvalues of plain `?syevd`, and eigenvector columns sampled from
/// every thread's block of columns with A·v = λv and Vᵀv = e.
fn split_syevd_matches_syevd<S: T + RealLapack>(p: &str) {
    let ctx = split_ctx("syevd");
    for (n, uplo) in [
        (split::syevd::MIN_N, b'U'),
        (split::syevd::MIN_N_OPENBLAS_THREADS, b'L'),
    ] {
        let a0 = hermitian::<S>(n, 70 + n as u64);
        let (_, expected, info) = small_eigh::tests::reference(uplo, n, &a0.d);
        assert_eq!(info, 0, "{p}syevd n={n}");
        let mut w = vec![S::ZERO; n];
        let mut v = a0.d.clone();
        let info = retry_split(&format!("{p}syevd n={n}"), || {
            split::syevd::syevd(&ctx, uplo, n, &mut v, &mut w).unwrap()
        });
        assert_eq!(info, 0, "{p}syevd n={n} split");
        let what = format!("{p}syevd n={n} uplo {} split", uplo as char);
        check_values("w", &w, &expected, &what);
        let v = Mat::from(n, n, &v);
        check_columns(&a0, &w, (&v, &v), "A·v = λv", &[("Vᵀv = e", &v)], &what);
    }
}

/// Checks the values (`name`) of a split decomposition against the plain
/// one's.
fn check_values<S: T>(name: &str, values: &[S], expected: &[S], what: &str) {
    let n = values.len();
    assert_close(
        &Mat::from(n, 1, values),
        &Mat::from(n, 1, expected),
        &format!("{what}: {name}"),
    );
}

/// Checks, on columns sampled from every thread's block, a split
/// decomposition of `a0`: A·v_j = values[j]·u_j (`relation`) and, for each
/// `(relation, b)` of `orthonormal`, Bᵀb_j = e_j.
fn check_columns<S: T>(
    a0: &Mat<S>,
    values: &[S],
    (u, v): (&Mat<S>, &Mat<S>),
    relation: &str,
    orthonormal: &[(&str, &Mat<S>)],
    what: &str,
) {
    let n = values.len();
    let adjoints: Vec<Mat<S>> = orthonormal.iter().map(|(_, b)| b.adjoint()).collect();
    for j in sampled_columns(n) {
        let (uj, vj) = (column(u, j), column(v, j));
        assert_close(
            &a0.mul(&vj),
            &uj.scale_cols(|_| values[j]),
            &format!("{what}: {relation}, column {j}"),
        );
        for ((check, b), bt) in orthonormal.iter().zip(&adjoints) {
            assert_close(
                &bt.mul(&column(b, j)),
                &unit(n, j),
                &format!("{what}: {check}, column {j}"),
            );
        }
    }
}

#[test]
fn split_syevd_matches_plain_syevd() {
    split_syevd_matches_syevd::<f32>("s");
    split_syevd_matches_syevd::<f64>("d");
}

/// Runs `split` until it gets the threads (other tests' LAPACK calls may
/// hold them for a while), failing after a minute.
fn retry_split<R>(what: &str, mut split: impl FnMut() -> Option<R>) -> R {
    let start = std::time::Instant::now();
    loop {
        if let Some(r) = split() {
            return r;
        }
        assert!(
            start.elapsed().as_secs() < 60,
            "{what}: the split never got the threads"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// `?gesdd` itself ('S'), unsplit: singular values and INFO.
fn plain_gesdd<S: T + RealLapack>(n: usize, a: &mut [S]) -> (Vec<S>, i32) {
    let _gate = crate::library::shared_gate();
    let l = lib().symbols();
    let ni = n as i32;
    let (mut s, mut u, mut vt) = (vec![S::ZERO; n], vec![S::ZERO; n * n], vec![S::ZERO; n * n]);
    let lwork = crate::checked::lwork::gesdd::<S>(l, b'S', ni, ni, ni, ni, ni);
    let (mut work, mut rwork, mut iwork) = (vec![S::ZERO; lwork], [S::ZERO], vec![0; 8 * n]);
    let info = crate::checked::gesdd(
        l, b'S', ni, ni, a, ni, &mut s, &mut u, ni, &mut vt, ni, &mut work, &mut rwork, &mut iwork,
    );
    (s, info)
}

/// The split SVD ([`split::gesdd`]) of single square matrices, below and at
/// the size whose first steps get OpenBLAS threads when the call has more
/// than two threads: the singular values of plain `?gesdd`, and sampled
/// columns of V with A·v = σu, Uᵀu = e and Vᵀv = e.
fn split_gesdd_matches_gesdd<S: T + RealLapack>(p: &str) {
    let ctx = split_ctx("gesdd");
    // The test context counts every flop as an f64 one: 416 reaches
    // BIG_CALL_FLOPS (OpenBLAS threads for ?gebrd and ?bdsdc, with more
    // than two threads for the call), 320 not.
    for n in [split::gesdd::MIN_N, 416] {
        let a0 = Mat::from(n, n, &random::<S>(n * n, 90 + n as u64));
        let (expected, info) = plain_gesdd(n, &mut a0.d.clone());
        assert_eq!(info, 0, "{p}gesdd n={n}");
        let (mut s, mut u, mut vt) = (vec![S::ZERO; n], vec![S::ZERO; n * n], vec![S::ZERO; n * n]);
        let mut a = a0.d.clone();
        let what = format!("{p}gesdd n={n} split");
        let info = retry_split(&what, || {
            split::gesdd::gesdd(&ctx, n, &mut a, &mut s, &mut u, &mut vt).unwrap()
        });
        assert_eq!(info, 0, "{what}");
        check_values("s", &s, &expected, &what);
        let (u, v) = (Mat::from(n, n, &u), Mat::from(n, n, &vt).adjoint());
        let orthonormal = [("Uᵀu = e", &u), ("Vᵀv = e", &v)];
        check_columns(&a0, &s, (&u, &v), "A·v = σu", &orthonormal, &what);
    }
}

#[test]
fn split_gesdd_matches_plain_gesdd() {
    split_gesdd_matches_gesdd::<f32>("s");
    split_gesdd_matches_gesdd::<f64>("d");
}

/// The two split tests above again, in a process of this test binary whose
/// library has three threads for a big call, as on a machine with three
/// cores or more: `?syevd`'s last step then runs in three column blocks at
/// once, where a two-core machine runs two, and the first steps of both
/// splits run on OpenBLAS's threads, which they do not on two (nor in the
/// other tests on a two-core machine). Three blocks sharing one copy
/// of the reflectors returned wrong eigenvectors with Debian's OpenBLAS
/// 0.3.21 (this test failed 9 runs of 10 so; `split::syevd`'s `apply_q`).
#[test]
fn splits_on_three_threads_match_the_plain_routines() {
    let tests = [
        "tests::spectral::split_syevd_matches_plain_syevd",
        "tests::spectral::split_gesdd_matches_plain_gesdd",
    ];
    let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", "--test-threads=1"])
        .args(tests)
        .env(crate::library::THREADS_ENV, "3")
        .output()
        .expect("run the test binary again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("2 passed"),
        "the split tests with {}=3: {}\n{stdout}\n{}",
        crate::library::THREADS_ENV,
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

// ------------------------------------------------------------------- SVD

/// Runs the SVD handler `run` (gesdd's or gesvd's) in `mode` on `a`,
/// into `s`, `u`, `vt` and `info`.
fn run_svd<S: T>(
    run: fn(&Ctx<'_>, &Call<'_>) -> Result<(), HandlerError>,
    a: &mut Host<S>,
    (s, u, vt): (&mut Host<S::Real>, &mut Host<S>, &mut Host<S>),
    info: &mut Host<i32>,
    mode: u8,
) -> Result<(), HandlerError> {
    let ab = a.buf();
    let rets = vec![ab, s.buf(), u.buf(), vt.buf(), info.buf()];
    run(
        &ctx("svd"),
        &call_of("svd", vec![ab], rets, vec![ch("mode", mode)]),
    )
}

fn svd_reconstructs<S: T>(p: &str) {
    for gesvd in [false, true] {
        for (batch, m, n) in [(2usize, 5usize, 3usize), (1, 3, 4), (1, 1, 1)] {
            let k = m.min(n);
            let input = random::<S>(batch * m * n, 40);
            for mode in [b'A', b'S', b'N'] {
                let (uc, vr) = if mode == b'S' { (k, k) } else { (m, n) };
                let mut a = Host::new(input.clone(), &[batch as i64, m as i64, n as i64]);
                let mut s = zeros::<S::Real>(&[batch as i64, k as i64]);
                let mut u = Host::new(
                    vec![S::from_f64(9.0, 9.0); batch * m * uc],
                    &[batch as i64, m as i64, uc as i64],
                );
                let mut vt = Host::new(
                    vec![S::from_f64(9.0, 9.0); batch * vr * n],
                    &[batch as i64, vr as i64, n as i64],
                );
                let mut info = zeros::<i32>(&[batch as i64]);
                let run = if gesvd {
                    gesvd::run::<S>
                } else {
                    gesdd::run::<S>
                };
                run_svd(run, &mut a, (&mut s, &mut u, &mut vt), &mut info, mode).unwrap();
                let what = format!(
                    "{p}{} mode {} {m}x{n}",
                    if gesvd { "gesvd" } else { "gesdd" },
                    mode as char
                );
                assert_eq!(info.data, vec![0; batch], "{what}");
                for b in 0..batch {
                    let sv = &s.data[b * k..(b + 1) * k];
                    assert!(sv.windows(2).all(|x| x[0] >= x[1]), "{what}: descending");
                    if mode == b'N' {
                        assert!(
                            u.data.iter().chain(&vt.data).all(|x| *x == S::default()),
                            "{what}: u/vt zero-filled"
                        );
                        continue;
                    }
                    let um = Mat::from(m, uc, &u.data[b * m * uc..(b + 1) * m * uc]).cols(k);
                    let vm = Mat::from(vr, n, &vt.data[b * vr * n..(b + 1) * vr * n]).rows(k);
                    let us = um.scale_cols(|j| S::from_real(sv[j]));
                    assert_close(
                        &us.mul(&vm),
                        &Mat::from(m, n, &input[b * m * n..(b + 1) * m * n]),
                        &format!("{what}: U·S·Vᴴ = A"),
                    );
                    let full_u = Mat::from(m, uc, &u.data[b * m * uc..(b + 1) * m * uc]);
                    assert_close(
                        &full_u.adjoint().mul(&full_u),
                        &Mat::eye(uc),
                        &format!("{what}: UᴴU = I"),
                    );
                }
            }
        }
    }
    // Mode 'O' is UNIMPLEMENTED, as in jaxlib.
    let mut a = zeros::<S>(&[2, 2]);
    let (mut s, mut u, mut vt, mut info) = (
        zeros::<S::Real>(&[2]),
        zeros::<S>(&[2, 2]),
        zeros::<S>(&[2, 2]),
        zeros::<i32>(&[]),
    );
    let outs = (&mut s, &mut u, &mut vt);
    assert_eq!(
        run_svd(gesdd::run::<S>, &mut a, outs, &mut info, b'O')
            .unwrap_err()
            .code,
        plugin_glue::handler::ErrorCode::Unimplemented
    );
}
all_dtypes!(svd_u_s_vh_equals_a, svd_reconstructs);

#[test]
fn svd_mode_n_accepts_reduced_shapes_too() {
    let (m, n) = (4usize, 2usize);
    let mut a = Host::new(random::<f64>(m * n, 1), &[m as i64, n as i64]);
    let (mut s, mut u, mut vt, mut info) = (
        zeros::<f64>(&[2]),
        zeros::<f64>(&[4, 2]),
        zeros::<f64>(&[2, 2]),
        zeros::<i32>(&[]),
    );
    run_svd(
        gesdd::run::<f64>,
        &mut a,
        (&mut s, &mut u, &mut vt),
        &mut info,
        b'N',
    )
    .unwrap();
    assert!(s.data[0] >= s.data[1] && s.data[1] > 0.0);
}

// ------------------------------------------------------------------- geev

fn check_eigenpairs<S: T>(
    a: &Mat<Complex<f64>>,
    w: &[Complex<f64>],
    v: &Mat<Complex<f64>>,
    left: bool,
    what: &str,
) {
    let n = a.m;
    // Right: A·v = w·v. Left: vᴴ·A = w·vᴴ, i.e. Aᴴ·v = conj(w)·v.
    let op = if left { a.adjoint() } else { a.clone() };
    let av = op.mul(v);
    let vw = v.scale_cols(|j| if left { w[j].conj() } else { w[j] });
    let scale = a.d.iter().map(|x| x.norm()).fold(1.0, f64::max);
    let diff =
        av.d.iter()
            .zip(&vw.d)
            .map(|(x, y)| (x - y).norm())
            .fold(0.0, f64::max);
    assert!(diff < S::tol() * 100.0 * scale, "{what}: residual {diff:e}");
    for j in 0..n {
        let norm: f64 = (0..n).map(|i| v.at(i, j).norm_sqr()).sum::<f64>().sqrt();
        assert!(
            (norm - 1.0).abs() < S::tol() * 100.0,
            "{what}: column {j} norm {norm}"
        );
    }
}

/// Runs a geev handler (`run_real` or `run_complex`) on `a` into `rets`,
/// with `jobs` as `(compute_left, compute_right)`.
fn run_geev<'a, S: T>(
    run: fn(&Ctx<'_>, &Call<'_>) -> Result<(), HandlerError>,
    a: &'a mut Host<S>,
    rets: Vec<Buf<'a>>,
    (left, right): (u8, u8),
) -> Result<(), HandlerError> {
    let attrs = vec![ch("compute_left", left), ch("compute_right", right)];
    run(&ctx("geev"), &call_of("geev", vec![a.buf()], rets, attrs))
}

fn geev_real<S: T + scalar::RealLapack>(p: &str)
where
    Complex<S>: Elem,
{
    let (batch, n) = (2usize, 4usize);
    let input = random::<S>(batch * n * n, 50);
    let mut a = Host::new(input.clone(), &[batch as i64, n as i64, n as i64]);
    let (mut wr, mut wi) = (
        zeros::<S>(&[batch as i64, n as i64]),
        zeros::<S>(&[batch as i64, n as i64]),
    );
    let (mut vl, mut vr) = (
        zeros::<Complex<S>>(&[batch as i64, n as i64, n as i64]),
        zeros::<Complex<S>>(&[batch as i64, n as i64, n as i64]),
    );
    let mut info = zeros::<i32>(&[batch as i64]);
    let rets = vec![wr.buf(), wi.buf(), vl.buf(), vr.buf(), info.buf()];
    run_geev(geev::run_real::<S>, &mut a, rets, (b'V', b'V')).unwrap();
    assert_eq!(a.data, input, "{p}geev leaves a untouched");
    assert_eq!(info.data, vec![0; batch]);
    let mut saw_pair = false;
    for b in 0..batch {
        let am = Mat::<Complex<f64>>::from(
            n,
            n,
            &input[b * n * n..(b + 1) * n * n]
                .iter()
                .map(|&x| x.to_c64())
                .collect::<Vec<_>>(),
        );
        let w: Vec<_> = (0..n)
            .map(|j| Complex::new(wr.data[b * n + j].to_f64(), wi.data[b * n + j].to_f64()))
            .collect();
        saw_pair |= w.iter().any(|x| x.im != 0.0);
        for (left, v) in [(false, &vr), (true, &vl)] {
            let vm = Mat::from(
                n,
                n,
                &v.data[b * n * n..(b + 1) * n * n]
                    .iter()
                    .map(|x| Complex::new(x.re.to_f64(), x.im.to_f64()))
                    .collect::<Vec<_>>(),
            );
            check_eigenpairs::<S>(&am, &w, &vm, left, &format!("{p}geev left={left}"));
        }
    }
    assert!(saw_pair, "{p}geev test matrix should have a complex pair");
    // (N, N): vectors zero-filled; NaN input: info -4.
    let mut bad = input.clone();
    bad[3] = S::from_f64(f64::NAN, 0.0);
    let mut a = Host::new(bad, &[batch as i64, n as i64, n as i64]);
    let rets = vec![wr.buf(), wi.buf(), vl.buf(), vr.buf(), info.buf()];
    run_geev(geev::run_real::<S>, &mut a, rets, (b'N', b'N')).unwrap();
    assert_eq!(info.data, [-4, 0]);
    assert!(
        vl.data
            .iter()
            .chain(&vr.data)
            .all(|x| x.re == S::default() && x.im == S::default())
    );
}

fn geev_complex<S: T + scalar::ComplexLapack>(p: &str) {
    let (batch, n) = (2usize, 4usize);
    let input = random::<S>(batch * n * n, 51);
    let mut a = Host::new(input.clone(), &[batch as i64, n as i64, n as i64]);
    let mut w = zeros::<S>(&[batch as i64, n as i64]);
    let (mut vl, mut vr) = (
        zeros::<S>(&[batch as i64, n as i64, n as i64]),
        zeros::<S>(&[batch as i64, n as i64, n as i64]),
    );
    let mut info = zeros::<i32>(&[batch as i64]);
    let rets = vec![w.buf(), vl.buf(), vr.buf(), info.buf()];
    run_geev(geev::run_complex::<S>, &mut a, rets, (b'V', b'V')).unwrap();
    assert_eq!(info.data, vec![0; batch]);
    for b in 0..batch {
        let c = |v: &[S]| v.iter().map(|&x| x.to_c64()).collect::<Vec<_>>();
        let am = Mat::from(n, n, &c(&input[b * n * n..(b + 1) * n * n]));
        let ws = c(&w.data[b * n..(b + 1) * n]);
        check_eigenpairs::<S>(
            &am,
            &ws,
            &Mat::from(n, n, &c(&vr.data[b * n * n..(b + 1) * n * n])),
            false,
            &format!("{p}geev right"),
        );
        check_eigenpairs::<S>(
            &am,
            &ws,
            &Mat::from(n, n, &c(&vl.data[b * n * n..(b + 1) * n * n])),
            true,
            &format!("{p}geev left"),
        );
    }
}

#[test]
fn geev_eigenpairs() {
    geev_real::<f32>("s");
    geev_real::<f64>("d");
    geev_complex::<Complex<f32>>("c");
    geev_complex::<Complex<f64>>("z");
}

// ------------------------------------------------------------------- gees

type Run = fn(&Ctx<'_>, &Call<'_>) -> Result<(), plugin_glue::handler::HandlerError>;

fn gees_reconstructs<S: T>(p: &str, run: Run) {
    let (batch, n) = (2usize, 4usize);
    let input = random::<S>(batch * n * n, 60);
    for mode in [b'V', b'N'] {
        let mut a = Host::new(input.clone(), &[batch as i64, n as i64, n as i64]);
        let mut t = zeros::<S>(&[batch as i64, n as i64, n as i64]);
        let mut z = Host::new(
            vec![S::from_f64(5.0, 0.0); batch * n * n],
            &[batch as i64, n as i64, n as i64],
        );
        let (mut wr, mut wi) = (
            zeros::<S>(&[batch as i64, n as i64]),
            zeros::<S>(&[batch as i64, n as i64]),
        );
        let (mut sdim, mut info) = (
            Host::new(vec![3; batch], &[batch as i64]),
            zeros::<i32>(&[batch as i64]),
        );
        let mut rets = vec![t.buf(), z.buf(), wr.buf()];
        if !S::IS_COMPLEX {
            rets.push(wi.buf());
        }
        rets.extend([sdim.buf(), info.buf()]);
        let call = call_of(
            "gees",
            vec![a.buf()],
            rets,
            vec![ch("mode", mode), ch("sort", b'N')],
        );
        run(&ctx("gees"), &call).unwrap();
        assert_eq!(info.data, vec![0; batch]);
        assert_eq!(sdim.data, vec![0; batch]);
        for b in 0..batch {
            let tm = Mat::from(n, n, &t.data[b * n * n..(b + 1) * n * n]);
            let lower = if S::IS_COMPLEX { -1 } else { -2 };
            assert_close(
                &tm.band(i64::MIN, lower),
                &Mat::from(n, n, &vec![S::default(); n * n]),
                &format!("{p}gees T is (quasi-)triangular"),
            );
            if mode == b'N' {
                assert!(
                    z.data.iter().all(|x| *x == S::default()),
                    "{p}gees Z zero-filled in mode N"
                );
                continue;
            }
            let zm = Mat::from(n, n, &z.data[b * n * n..(b + 1) * n * n]);
            let am = Mat::from(n, n, &input[b * n * n..(b + 1) * n * n]);
            assert_close(
                &zm.mul(&tm).mul(&zm.adjoint()),
                &am,
                &format!("{p}gees Z·T·Zᴴ = A"),
            );
        }
    }
}
#[test]
fn gees_z_t_zh_equals_a() {
    gees_reconstructs::<f32>("s", gees::run_real::<f32>);
    gees_reconstructs::<f64>("d", gees::run_real::<f64>);
    gees_reconstructs::<Complex<f32>>("c", gees::run_complex::<Complex<f32>>);
    gees_reconstructs::<Complex<f64>>("z", gees::run_complex::<Complex<f64>>);
}

// ------------------------------------------------------ gehrd and sytrd

/// Q = diag(1, orgqr(refl[1:, :-1], tau)) as JAX's hessenberg(calc_q) forms it.
fn q_from_subdiagonal<S: T>(a: &Mat<S>, tau: &[S]) -> Mat<S> {
    let n = a.m;
    let mut sub = Vec::new();
    for j in 0..n - 1 {
        sub.extend_from_slice(&a.d[j * n + 1..(j + 1) * n]);
    }
    let q1 = form_q(&Mat::from(n - 1, n - 1, &sub), tau, n - 1);
    let mut q = Mat::eye(n);
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            q.d[(i + 1) + (j + 1) * n] = q1.at(i, j);
        }
    }
    q
}

/// Runs the gehrd handler on the n×n matrices of `a` with `low` and
/// `high` = n, into `tau` and `info`.
fn run_gehrd<S: T>(a: &mut Host<S>, tau: &mut Host<S>, info: &mut Host<i32>, low: i64) {
    let n = *a.dims.last().unwrap();
    let int = |name: &'static str, v: i64| {
        (
            name.as_bytes(),
            AttrValue::Scalar(Scalar::S32(i32::try_from(v).unwrap())),
        )
    };
    let ab = a.buf();
    let attrs = vec![int("high", n), int("low", low)];
    let call = call_of("gehrd", vec![ab], vec![ab, tau.buf(), info.buf()], attrs);
    gehrd::run::<S>(&ctx("gehrd"), &call).unwrap();
}

fn gehrd_reconstructs<S: T>(p: &str) {
    let (batch, n) = (2usize, 5usize);
    let input = random::<S>(batch * n * n, 70);
    let mut a = Host::new(input.clone(), &[batch as i64, n as i64, n as i64]);
    let mut tau = zeros::<S>(&[batch as i64, n as i64 - 1]);
    let mut info = zeros::<i32>(&[batch as i64]);
    run_gehrd(&mut a, &mut tau, &mut info, 1);
    assert_eq!(info.data, vec![0; batch]);
    for b in 0..batch {
        let out = Mat::from(n, n, &a.data[b * n * n..(b + 1) * n * n]);
        let h = out.band(-1, i64::MAX);
        let q = q_from_subdiagonal(&out, &tau.data[b * (n - 1)..(b + 1) * (n - 1)]);
        assert_close(
            &q.mul(&h).mul(&q.adjoint()),
            &Mat::from(n, n, &input[b * n * n..(b + 1) * n * n]),
            &format!("{p}gehrd Q·H·Qᴴ = A"),
        );
    }
    // Illegal ilo → info -2 without calling LAPACK.
    run_gehrd(&mut a, &mut tau, &mut info, 0);
    assert_eq!(info.data, vec![-2; batch]);
}
all_dtypes!(gehrd_q_h_qh_equals_a, gehrd_reconstructs);

fn sytrd_reconstructs<S: T>(p: &str) {
    let n = 5usize;
    let input = hermitian::<S>(n, 80).d;
    let mut a = Host::new(input.clone(), &[n as i64, n as i64]);
    let (mut d, mut e) = (
        zeros::<S::Real>(&[n as i64]),
        zeros::<S::Real>(&[n as i64 - 1]),
    );
    let (mut tau, mut info) = (zeros::<S>(&[n as i64 - 1]), zeros::<i32>(&[]));
    let ab = a.buf();
    let call = call_of(
        "sytrd",
        vec![ab],
        vec![ab, d.buf(), e.buf(), tau.buf(), info.buf()],
        vec![ch("uplo", b'L')],
    );
    sytrd::run::<S>(&ctx("sytrd"), &call).unwrap();
    assert_eq!(info.data, [0]);
    let mut t = Mat::from(n, n, &vec![S::default(); n * n]);
    for i in 0..n {
        t.d[i + i * n] = S::from_real(d.data[i]);
        if i + 1 < n {
            t.d[(i + 1) + i * n] = S::from_real(e.data[i]);
            t.d[i + (i + 1) * n] = S::from_real(e.data[i]);
        }
    }
    let q = q_from_subdiagonal(&Mat::from(n, n, &a.data), &tau.data);
    assert_close(
        &q.mul(&t).mul(&q.adjoint()),
        &Mat::from(n, n, &input),
        &format!("{p}sytrd Q·T·Qᴴ = A"),
    );
}
all_dtypes!(sytrd_q_t_qh_equals_a, sytrd_reconstructs);
