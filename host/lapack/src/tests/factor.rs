//! getrf, trsm, potrf, and the QR family (geqrf, orgqr, geqp3, ormqr).

use super::*;
use plugin_glue::handler::HandlerError;

// ------------------------------------------------------------------ getrf

#[test]
fn getrf_hand_checked_2x2() {
    // A = [[1, 2], [3, 4]]: pivot row 2, L = [[1, 0], [1/3, 1]], U = [[3, 4], [0, 2/3]].
    let mut a = Host::new(vec![1.0f64, 3.0, 2.0, 4.0], &[2, 2]);
    let mut lu = zeros::<f64>(&[2, 2]);
    let (mut ipiv, mut info) = (zeros::<i32>(&[2]), zeros::<i32>(&[]));
    let call = call_of(
        "t",
        vec![a.buf()],
        vec![lu.buf(), ipiv.buf(), info.buf()],
        vec![],
    );
    getrf::run::<f64>(&ctx("t"), &call).unwrap();
    assert_eq!(ipiv.data, [2, 2]);
    assert_eq!(info.data, [0]);
    let want = [3.0, 1.0 / 3.0, 4.0, 2.0 - 4.0 / 3.0];
    lu.data
        .iter()
        .zip(want)
        .for_each(|(g, w)| assert!((g - w).abs() < 1e-15, "{:?}", lu.data));
    assert_eq!(
        a.data,
        [1.0, 3.0, 2.0, 4.0],
        "the operand must stay untouched when the result is elsewhere"
    );
}

fn getrf_reconstructs<S: T>(p: &str) {
    let target = "getrf";
    for (batch, m, n) in [
        (3usize, 4usize, 4usize),
        (2, 5, 3),
        (2, 3, 5),
        (1, 1, 1),
        (0, 4, 4),
        (2, 0, 3),
    ] {
        let input = random::<S>(batch * m * n, 7);
        let mut a = Host::new(input.clone(), &[batch as i64, m as i64, n as i64]);
        let k = m.min(n);
        let (mut ipiv, mut info) = (
            zeros::<i32>(&[batch as i64, k as i64]),
            Host::new(vec![-99; batch], &[batch as i64]),
        );
        let lu_buf = a.buf();
        let call = call_of(
            target,
            vec![lu_buf],
            vec![lu_buf, ipiv.buf(), info.buf()],
            vec![],
        );
        getrf::run::<S>(&ctx(target), &call).unwrap();
        assert!(
            info.data.iter().all(|&i| i == 0),
            "{p} info {:?}",
            info.data
        );
        for b in 0..batch {
            let lu = Mat::from(m, n, &a.data[b * m * n..(b + 1) * m * n]);
            let mut l = lu.band(i64::MIN, -1).cols(k);
            (0..k).for_each(|i| l.d[i + i * m] = one());
            let u = lu.band(0, i64::MAX).rows(k);
            // P·A: apply the row swaps to A.
            let mut pa = Mat::from(m, n, &input[b * m * n..(b + 1) * m * n]);
            for (i, &piv) in ipiv.data[b * k..(b + 1) * k].iter().enumerate() {
                let r = (piv - 1) as usize;
                for j in 0..n {
                    pa.d.swap(i + j * m, r + j * m);
                }
            }
            assert_close(&l.mul(&u), &pa, &format!("{p}getrf {m}x{n} L·U = P·A"));
        }
    }
}
all_dtypes!(getrf_lu_equals_pa, getrf_reconstructs);

#[test]
fn getrf_singular_reports_positive_info() {
    let mut a = Host::new(vec![1.0f32, 2.0, 2.0, 4.0], &[2, 2]);
    let (mut ipiv, mut info) = (zeros::<i32>(&[2]), zeros::<i32>(&[]));
    let b = a.buf();
    let call = call_of("t", vec![b], vec![b, ipiv.buf(), info.buf()], vec![]);
    getrf::run::<f32>(&ctx("t"), &call).unwrap();
    assert_eq!(info.data, [2]);
}

// ------------------------------------------------------------------- trsm

fn trsm_solves<S: T>(p: &str) {
    let (m, n, batch) = (4usize, 3usize, 2usize);
    for side in [b'L', b'R'] {
        for uplo in [b'L', b'U'] {
            for trans in [b'N', b'T', b'C'] {
                for diag in [b'N', b'U'] {
                    let k = if side == b'L' { m } else { n };
                    let mut a_data = random::<S>(batch * k * k, 3);
                    // Well-conditioned: a heavy diagonal.
                    for b in 0..batch {
                        (0..k).for_each(|i| {
                            a_data[b * k * k + i + i * k] =
                                a_data[b * k * k + i + i * k] + S::from_f64(4.0, 0.0)
                        });
                    }
                    let b_data = random::<S>(batch * m * n, 11);
                    let mut a = Host::new(a_data.clone(), &[batch as i64, k as i64, k as i64]);
                    let mut bb = Host::new(b_data.clone(), &[batch as i64, m as i64, n as i64]);
                    let mut x = zeros::<S>(&[batch as i64, m as i64, n as i64]);
                    let attrs = vec![
                        ch("diag", diag),
                        ch("side", side),
                        ch("trans_x", trans),
                        ch("uplo", uplo),
                        ch("extra", b'?'),
                    ];
                    let call = call_of("t", vec![a.buf(), bb.buf()], vec![x.buf()], attrs);
                    trsm::run::<S>(&ctx("t"), &call).unwrap();
                    for b in 0..batch {
                        let mut t = Mat::from(k, k, &a_data[b * k * k..(b + 1) * k * k]);
                        t = if uplo == b'L' {
                            t.band(i64::MIN, 0)
                        } else {
                            t.band(0, i64::MAX)
                        };
                        if diag == b'U' {
                            (0..k).for_each(|i| t.d[i + i * k] = one());
                        }
                        let op = match trans {
                            b'N' => t,
                            b'T' => t.adjoint().conj_all(),
                            _ => t.adjoint(),
                        };
                        let xm = Mat::from(m, n, &x.data[b * m * n..(b + 1) * m * n]);
                        let lhs = if side == b'L' {
                            op.mul(&xm)
                        } else {
                            xm.mul(&op)
                        };
                        let what = format!(
                            "{p}trsm side {} uplo {} trans {} diag {}",
                            side as char, uplo as char, trans as char, diag as char
                        );
                        assert_close(
                            &lhs,
                            &Mat::from(m, n, &b_data[b * m * n..(b + 1) * m * n]),
                            &what,
                        );
                    }
                }
            }
        }
    }
}
all_dtypes!(trsm_all_sides_and_transposes, trsm_solves);

impl<S: T> Mat<S> {
    fn conj_all(mut self) -> Self {
        self.d.iter_mut().for_each(|x| *x = x.conj());
        self
    }
}

/// Runs `lapack_dtrsm_ffi` with `attrs` on `a` and on `b`, solved in place.
fn run_dtrsm(
    a: &mut Host<f64>,
    b: &mut Host<f64>,
    attrs: Vec<(&'static [u8], AttrValue)>,
) -> Result<(), HandlerError> {
    let target = "lapack_dtrsm_ffi";
    let bb = b.buf();
    trsm::run::<f64>(
        &ctx(target),
        &call_of(target, vec![a.buf(), bb], vec![bb], attrs),
    )
}

#[test]
fn trsm_accepts_s8_chars_and_rejects_bad_ones() {
    let mut a = Host::new(vec![2.0f64], &[1, 1]);
    let mut b = Host::new(vec![4.0f64], &[1, 1]);
    let s8 = |n: &'static str, c: u8| {
        (
            n.as_bytes(),
            AttrValue::Scalar(Scalar::S8(i8::try_from(c).unwrap())),
        )
    };
    let attrs = [
        ("side", b'L'),
        ("uplo", b'L'),
        ("trans_x", b'N'),
        ("diag", b'N'),
    ];
    run_dtrsm(&mut a, &mut b, attrs.map(|(n, c)| s8(n, c)).to_vec()).unwrap();
    assert_eq!(b.data, [2.0]);
    let bad_side = [
        ("side", b'X'),
        ("uplo", b'L'),
        ("trans_x", b'N'),
        ("diag", b'N'),
    ];
    let e = run_dtrsm(&mut a, &mut b, bad_side.map(|(n, c)| ch(n, c)).to_vec()).unwrap_err();
    assert!(
        e.message.contains("lapack_dtrsm_ffi") && e.message.contains("side"),
        "{e}"
    );
    let e = run_dtrsm(&mut a, &mut b, vec![]).unwrap_err();
    assert!(e.message.contains("missing attribute `side`"), "{e}");
}

#[test]
fn shape_and_dtype_mismatches_are_invalid_argument() {
    let mut a = Host::new(vec![1.0f32; 4], &[2, 2]);
    let mut ipiv = zeros::<i32>(&[3]);
    let mut info = zeros::<i32>(&[]);
    let b = a.buf();
    let call = call_of(
        "lapack_sgetrf_ffi",
        vec![b],
        vec![b, ipiv.buf(), info.buf()],
        vec![],
    );
    let e = getrf::run::<f32>(&ctx("lapack_sgetrf_ffi"), &call).unwrap_err();
    assert_eq!(e.code, plugin_glue::handler::ErrorCode::InvalidArgument);
    assert!(
        e.message
            .contains("result 1 (ipiv) has shape [3], expected [2]"),
        "{e}"
    );
    let e = getrf::run::<f64>(&ctx("lapack_dgetrf_ffi"), &call).unwrap_err();
    assert!(e.message.contains("element type"), "{e}");
    let call = call_of("lapack_sgetrf_ffi", vec![b], vec![b], vec![]);
    let e = getrf::run::<f32>(&ctx("lapack_sgetrf_ffi"), &call).unwrap_err();
    assert!(
        e.message.contains("expected 1 operands and 3 results"),
        "{e}"
    );
}

// ------------------------------------------------------------------ potrf

fn potrf_reconstructs<S: T>(p: &str) {
    let (n, batch) = (4usize, 3usize);
    let mut input = Vec::new();
    for b in 0..batch {
        let g = Mat::from(n, n, &random::<S>(n * n, 20 + b as u64));
        let mut spd = g.mul(&g.adjoint());
        (0..n).for_each(|i| spd.d[i + i * n] = spd.d[i + i * n] + S::from_f64(n as f64, 0.0));
        input.extend(spd.d);
    }
    let mut a = Host::new(input.clone(), &[batch as i64, n as i64, n as i64]);
    let mut l = zeros::<S>(&[batch as i64, n as i64, n as i64]);
    let mut info = zeros::<i32>(&[batch as i64]);
    let call = call_of(
        "t",
        vec![a.buf()],
        vec![l.buf(), info.buf()],
        vec![ch("uplo", b'L')],
    );
    potrf::run::<S>(&ctx("t"), &call).unwrap();
    assert_eq!(info.data, vec![0; batch]);
    for b in 0..batch {
        let lm = Mat::from(n, n, &l.data[b * n * n..(b + 1) * n * n]);
        let upper = lm.band(1, i64::MAX);
        let orig_upper = Mat::from(n, n, &input[b * n * n..(b + 1) * n * n]).band(1, i64::MAX);
        assert_close(
            &upper,
            &orig_upper,
            &format!("{p}potrf keeps the other triangle"),
        );
        let low = lm.band(i64::MIN, 0);
        assert_close(
            &low.mul(&low.adjoint()),
            &Mat::from(n, n, &input[b * n * n..(b + 1) * n * n]),
            &format!("{p}potrf L·Lᴴ = A"),
        );
    }
    // Not positive definite → info > 0; empty → info 0.
    let info_of = |mut a: Host<S>, mut info: Host<i32>| {
        let buf = a.buf();
        let call = call_of(
            "t",
            vec![buf],
            vec![buf, info.buf()],
            vec![ch("uplo", b'L')],
        );
        potrf::run::<S>(&ctx("t"), &call).unwrap();
        info.data
    };
    let not_positive = Host::new(vec![S::from_f64(-1.0, 0.0)], &[1, 1]);
    assert_eq!(info_of(not_positive, zeros(&[])), [1]);
    assert_eq!(info_of(zeros(&[0, 0]), Host::new(vec![7], &[])), [0]);
}
all_dtypes!(potrf_llh_equals_a, potrf_reconstructs);

// ------------------------------------------------------- geqrf and orgqr

fn qr_reconstructs<S: T>(p: &str) {
    for (batch, m, n) in [(2usize, 5usize, 3usize), (1, 3, 5), (3, 4, 4), (1, 1, 1)] {
        let k = m.min(n);
        let input = random::<S>(batch * m * n, 5);
        let mut a = Host::new(input.clone(), &[batch as i64, m as i64, n as i64]);
        let mut out = zeros::<S>(&[batch as i64, m as i64, n as i64]);
        let mut tau = zeros::<S>(&[batch as i64, k as i64]);
        let call = call_of("geqrf", vec![a.buf()], vec![out.buf(), tau.buf()], vec![]);
        geqrf::run::<S>(&ctx("geqrf"), &call).unwrap();
        for b in 0..batch {
            let refl = Mat::from(m, n, &out.data[b * m * n..(b + 1) * m * n]);
            let r = refl.band(0, i64::MAX).rows(k);
            let q = form_q(&refl, &tau.data[b * k..(b + 1) * k], k);
            assert_close(
                &q.mul(&r),
                &Mat::from(m, n, &input[b * m * n..(b + 1) * m * n]),
                &format!("{p} Q·R = A ({m}x{n})"),
            );
            assert_close(&q.adjoint().mul(&q), &Mat::eye(k), &format!("{p} QᴴQ = I"));
            // Complete Q (m×m) from the padded reflectors.
            let qf = form_q(&refl, &tau.data[b * k..(b + 1) * k], m);
            assert_close(
                &qf.adjoint().mul(&qf),
                &Mat::eye(m),
                &format!("{p} complete QᴴQ = I"),
            );
        }
    }
}
all_dtypes!(geqrf_orgqr_q_times_r_equals_a, qr_reconstructs);

fn geqp3_reconstructs<S: T>(p: &str) {
    let (batch, m, n) = (2usize, 4usize, 5usize);
    let k = m.min(n);
    let input = random::<S>(batch * m * n, 9);
    let mut a = Host::new(input.clone(), &[batch as i64, m as i64, n as i64]);
    let mut jpvt = zeros::<i32>(&[batch as i64, n as i64]);
    let mut tau = zeros::<S>(&[batch as i64, k as i64]);
    let (ab, jb) = (a.buf(), jpvt.buf());
    let call = call_of("geqp3", vec![ab, jb], vec![ab, jb, tau.buf()], vec![]);
    geqp3::run::<S>(&ctx("geqp3"), &call).unwrap();
    for b in 0..batch {
        let refl = Mat::from(m, n, &a.data[b * m * n..(b + 1) * m * n]);
        let q = form_q(&refl.cols(k), &tau.data[b * k..(b + 1) * k], k);
        let r = refl.band(0, i64::MAX).rows(k);
        let orig = Mat::from(m, n, &input[b * m * n..(b + 1) * m * n]);
        let perm = &jpvt.data[b * n..(b + 1) * n];
        let mut sorted = perm.to_vec();
        sorted.sort();
        assert_eq!(
            sorted,
            (1..=n as i32).collect::<Vec<_>>(),
            "{p}geqp3 jpvt is a 1-based permutation"
        );
        let mut ap = Mat::from(m, n, &vec![S::default(); m * n]);
        for (j, &c) in perm.iter().enumerate() {
            ap.d[j * m..(j + 1) * m].copy_from_slice(&orig.d[(c as usize - 1) * m..c as usize * m]);
        }
        assert_close(&q.mul(&r), &ap, &format!("{p}geqp3 Q·R = A·P"));
        // Pivoting puts the largest remaining column first: |R| diagonal decreases.
        assert!(
            (0..k - 1).all(|i| r.at(i, i).mag() >= r.at(i + 1, i + 1).mag() * (1.0 - 1e-3)),
            "{p}geqp3 R diagonal"
        );
    }
}
all_dtypes!(geqp3_q_times_r_equals_a_p, geqp3_reconstructs);

fn ormqr_matches_explicit_q<S: T>(p: &str) {
    let (m, n) = (5usize, 3usize);
    let input = random::<S>(m * n, 13);
    let mut a = Host::new(input, &[m as i64, n as i64]);
    let mut tau = zeros::<S>(&[n as i64]);
    let ab = a.buf();
    let call = call_of("geqrf", vec![ab], vec![ab, tau.buf()], vec![]);
    geqrf::run::<S>(&ctx("geqrf"), &call).unwrap();
    let refl = Mat::from(m, n, &a.data);
    let q = form_q(&refl, &tau.data, m);
    for (left, transpose) in [(true, false), (true, true), (false, false), (false, true)] {
        let (pr, qc) = if left { (m, 2) } else { (2, m) };
        let c0 = random::<S>(pr * qc, 17);
        let mut c = Host::new(c0.clone(), &[pr as i64, qc as i64]);
        let mut out = zeros::<S>(&[pr as i64, qc as i64]);
        let before = a.data.clone();
        let attrs = vec![
            (b"left".as_slice(), AttrValue::Scalar(Scalar::Pred(left))),
            (
                b"transpose".as_slice(),
                AttrValue::Scalar(Scalar::Pred(transpose)),
            ),
        ];
        let call = call_of(
            "ormqr",
            vec![a.buf(), tau.buf(), c.buf()],
            vec![out.buf()],
            attrs,
        );
        ormqr::run::<S>(&ctx("ormqr"), &call).unwrap();
        assert_eq!(a.data, before, "{p}ormqr must not modify a");
        let op = if transpose { q.adjoint() } else { q.clone() };
        let cm = Mat::from(pr, qc, &c0);
        let want = if left { op.mul(&cm) } else { cm.mul(&op) };
        assert_close(
            &Mat::from(pr, qc, &out.data),
            &want,
            &format!("{p}ormqr left={left} transpose={transpose}"),
        );
    }
}
all_dtypes!(ormqr_applies_q, ormqr_matches_explicit_q);

#[test]
fn parallel_batches_match_one_matrix_at_a_time() {
    // 64 matrices of 24×24: above PARALLEL_FLOPS, so the batch is spread over
    // rayon's workers (each with its own workspace).
    let (batch, n) = (64usize, 24usize);
    assert!((n * n * n * batch) as f64 >= crate::call::PARALLEL_FLOPS);
    let input = random::<f64>(batch * n * n, 77);
    let mut a = Host::new(input.clone(), &[batch as i64, n as i64, n as i64]);
    let mut tau = zeros::<f64>(&[batch as i64, n as i64]);
    let ab = a.buf();
    let call = call_of("geqrf", vec![ab], vec![ab, tau.buf()], vec![]);
    geqrf::run::<f64>(&ctx("geqrf"), &call).unwrap();
    for b in [0, 31, 63] {
        let mut one = Host::new(
            input[b * n * n..(b + 1) * n * n].to_vec(),
            &[n as i64, n as i64],
        );
        let mut t1 = zeros::<f64>(&[n as i64]);
        let ob = one.buf();
        let call = call_of("geqrf", vec![ob], vec![ob, t1.buf()], vec![]);
        geqrf::run::<f64>(&ctx("geqrf"), &call).unwrap();
        assert_eq!(one.data, a.data[b * n * n..(b + 1) * n * n], "element {b}");
        assert_eq!(t1.data, tau.data[b * n..(b + 1) * n], "element {b}");
    }
}
