//! `?syevd` with eigenvectors for small real symmetric matrices, in Rust.
//!
//! For `n ≤ 25` (`SMLSIZ`, LAPACK's divide-and-conquer cut-off) LAPACK's
//! `?syevd` with `JOBZ = 'V'` does not divide and conquer: it scales the
//! matrix if its norm is extreme, reduces it to tridiagonal form with the
//! unblocked `?sytd2`, runs the implicit QL/QR iteration `?steqr` on the
//! identity, applies the reflectors with the unblocked `?orm2r` / `?orm2l`
//! (`?ormtr`), copies the vectors back and scales the eigenvalues back. On an
//! 8×8 matrix that is about a hundred calls into BLAS level 1 and 2 and
//! LAPACK auxiliaries, each with its own checks (`lsame`, `ilaenv`, buffer
//! allocation), for a few thousand flops: about 10 µs through OpenBLAS.
//!
//! This module is a line-by-line port of that path (LAPACK 3.10+, whose
//! `?lartg` both the system OpenBLAS and the one jaxlib uses contain): the
//! same reflectors, the same shifts, splitting tests, 2×2 blocks
//! (`?laev2`), rotations (`?lartg`, `?lasr`), scaling (`?lanst`, `?lascl`),
//! iteration limit (30·n, then `info` > 0) and the selection sort at the
//! end. Eigenvalues, eigenvectors and `info` are LAPACK's; only the
//! rounding of the BLAS kernels (`?symv`, `?syr2`, `?nrm2`, `?dot`) differs,
//! as it does between OpenBLAS builds.
//!
//! Measured on 12 960 eigenvectors (orders 2–25, 20 random matrices each,
//! both triangles): in f64 the vectors equal those of Debian's OpenBLAS and
//! of the OpenBLAS jaxlib calls (scipy's) entry by entry, signs included. In
//! f32 some vectors come out with the other sign, because a sign in `?steqr`
//! follows the last bits of the tridiagonal form: 557 columns differ in sign
//! from Debian's OpenBLAS, 485 from scipy's — and 590 differ between those
//! two OpenBLAS builds themselves.

use crate::scalar::RealScalar;

/// Largest order handled here: LAPACK's `SMLSIZ` (`ilaenv(9, 'DSTEDC')`),
/// below which `?stedc` calls `?steqr`.
pub(crate) const MAX_N: usize = 25;

/// Scratch space for [`syevd`] of order up to `n`.
pub(crate) struct Work<T> {
    e: Vec<T>,
    tau: Vec<T>,
    z: Vec<T>,
    c: Vec<T>,
    s: Vec<T>,
    v: Vec<T>,
}

impl<T: RealScalar> Work<T> {
    /// Scratch for matrices of order up to `n`.
    pub(crate) fn new(n: usize) -> Self {
        Work {
            e: vec![T::ZERO; n],
            tau: vec![T::ZERO; n],
            z: vec![T::ZERO; n * n],
            c: vec![T::ZERO; n],
            s: vec![T::ZERO; n],
            v: vec![T::ZERO; n],
        }
    }
}

/// LAPACK's machine constants (`?lamch`).
#[derive(Clone, Copy)]
struct Consts<T> {
    /// `?lamch('E')`: half the machine epsilon (rounding to nearest).
    eps: T,
    /// `?lamch('S')`: the smallest normal number.
    safmin: T,
}

impl<T: RealScalar> Consts<T> {
    fn new() -> Self {
        let two = T::ONE + T::ONE;
        Consts {
            eps: T::EPSILON / two,
            safmin: T::MIN_POSITIVE,
        }
    }
}

fn two<T: RealScalar>() -> T {
    T::ONE + T::ONE
}

/// Fortran's `SIGN(a, b)`: |a| with the sign of b.
fn sign<T: RealScalar>(a: T, b: T) -> T {
    T::copysign(a.abs(), b)
}

/// `?lapy2`: sqrt(x² + y²) without needless overflow; NaN if either is.
fn lapy2<T: RealScalar>(x: T, y: T) -> T {
    if x.is_nan() {
        return x;
    }
    if y.is_nan() {
        return y;
    }
    let (xa, ya) = (x.abs(), y.abs());
    let (w, z) = if xa >= ya { (xa, ya) } else { (ya, xa) };
    if z == T::ZERO || w > T::MAX {
        w
    } else {
        let q = z / w;
        w * (T::ONE + q * q).sqrt()
    }
}

/// The Euclidean norm of `x`, scaled when the plain sum of squares would
/// overflow or lose precision to underflow.
fn nrm2<T: RealScalar>(x: &[T], k: Consts<T>) -> T {
    let ss = x.iter().fold(T::ZERO, |s, &v| s + v * v);
    if ss.is_finite() && ss >= k.safmin / k.eps {
        return ss.sqrt();
    }
    let (mut scale, mut ssq) = (T::ZERO, T::ONE);
    for &v in x {
        if v != T::ZERO {
            let a = v.abs();
            if scale < a {
                let r = scale / a;
                ssq = T::ONE + ssq * r * r;
                scale = a;
            } else {
                let r = a / scale;
                ssq = ssq + r * r;
            }
        }
    }
    scale * ssq.sqrt()
}

/// `?larfg`: the reflector H with H·(alpha, x) = (beta, 0); overwrites
/// alpha with beta and x with v (v₁ = 1 implicit), returns tau.
fn larfg<T: RealScalar>(alpha: &mut T, x: &mut [T], k: Consts<T>) -> T {
    if x.is_empty() {
        return T::ZERO;
    }
    let mut xnorm = nrm2(x, k);
    if xnorm == T::ZERO {
        return T::ZERO;
    }
    let mut beta = -sign(lapy2(*alpha, xnorm), *alpha);
    let safmin = k.safmin / k.eps;
    let mut knt = 0;
    if beta.abs() < safmin {
        let rsafmn = T::ONE / safmin;
        loop {
            knt += 1;
            x.iter_mut().for_each(|v| *v = *v * rsafmn);
            beta = beta * rsafmn;
            *alpha = *alpha * rsafmn;
            if !(beta.abs() < safmin && knt < 20) {
                break;
            }
        }
        xnorm = nrm2(x, k);
        beta = -sign(lapy2(*alpha, xnorm), *alpha);
    }
    let tau = (beta - *alpha) / beta;
    let r = T::ONE / (*alpha - beta);
    x.iter_mut().for_each(|v| *v = *v * r);
    for _ in 0..knt {
        beta = beta * safmin;
    }
    *alpha = beta;
    tau
}

/// `?lascl` multipliers: the factors, applied in turn, that multiply by
/// `cto / cfrom` without overflow or underflow.
fn lascl_factors<T: RealScalar>(cfrom: T, cto: T, k: Consts<T>) -> Vec<T> {
    let smlnum = k.safmin;
    let bignum = T::ONE / smlnum;
    let (mut cfromc, mut ctoc) = (cfrom, cto);
    let mut out = Vec::new();
    loop {
        let cfrom1 = cfromc * smlnum;
        let (mul, done);
        if cfrom1 == cfromc {
            // cfromc is infinite.
            mul = ctoc / cfromc;
            done = true;
        } else {
            let cto1 = ctoc / bignum;
            if cto1 == ctoc {
                // ctoc is 0 or infinite.
                mul = ctoc;
                done = true;
                cfromc = T::ONE;
            } else if cfrom1.abs() > ctoc.abs() && ctoc != T::ZERO {
                mul = smlnum;
                done = false;
                cfromc = cfrom1;
            } else if cto1.abs() > cfromc.abs() {
                mul = bignum;
                done = false;
                ctoc = cto1;
            } else {
                mul = ctoc / cfromc;
                done = true;
                if mul == T::ONE {
                    return out;
                }
            }
        }
        out.push(mul);
        if done {
            return out;
        }
    }
}

/// `?lascl('G', ...)` on a vector.
fn lascl<T: RealScalar>(cfrom: T, cto: T, x: &mut [T], k: Consts<T>) {
    for mul in lascl_factors(cfrom, cto, k) {
        x.iter_mut().for_each(|v| *v = *v * mul);
    }
}

/// `?laev2`: eigenvalues rt1 (larger magnitude), rt2 and the rotation
/// (cs1, sn1) of the symmetric 2×2 matrix [[a, b], [b, c]].
fn laev2<T: RealScalar>(a: T, b: T, c: T) -> (T, T, T, T) {
    let half = T::ONE / two::<T>();
    let sm = a + c;
    let df = a - c;
    let adf = df.abs();
    let tb = b + b;
    let ab = tb.abs();
    let (acmx, acmn) = if a.abs() > c.abs() { (a, c) } else { (c, a) };
    let rt = if adf > ab {
        let q = ab / adf;
        adf * (T::ONE + q * q).sqrt()
    } else if adf < ab {
        let q = adf / ab;
        ab * (T::ONE + q * q).sqrt()
    } else {
        ab * two::<T>().sqrt()
    };
    let (rt1, rt2, sgn1) = if sm < T::ZERO {
        let rt1 = half * (sm - rt);
        (rt1, (acmx / rt1) * acmn - (b / rt1) * b, -1)
    } else if sm > T::ZERO {
        let rt1 = half * (sm + rt);
        (rt1, (acmx / rt1) * acmn - (b / rt1) * b, 1)
    } else {
        (half * rt, -half * rt, 1)
    };
    let (cs, sgn2) = if df >= T::ZERO {
        (df + rt, 1)
    } else {
        (df - rt, -1)
    };
    let (mut cs1, mut sn1);
    if cs.abs() > ab {
        let ct = -tb / cs;
        sn1 = T::ONE / (T::ONE + ct * ct).sqrt();
        cs1 = ct * sn1;
    } else if ab == T::ZERO {
        cs1 = T::ONE;
        sn1 = T::ZERO;
    } else {
        let tn = -cs / tb;
        cs1 = T::ONE / (T::ONE + tn * tn).sqrt();
        sn1 = tn * cs1;
    }
    if sgn1 == sgn2 {
        let tn = cs1;
        cs1 = -sn1;
        sn1 = tn;
    }
    (rt1, rt2, cs1, sn1)
}

/// `?lartg` (LAPACK 3.10+): the rotation (c, s, r) with
/// [c s; −s c]·(f, g) = (r, 0), c ≥ 0 and r carrying the sign of f.
fn lartg<T: RealScalar>(f: T, g: T, k: Consts<T>) -> (T, T, T) {
    let safmin = k.safmin;
    let safmax = T::ONE / safmin;
    let rtmin = safmin.sqrt();
    let rtmax = (safmax / two::<T>()).sqrt();
    let (f1, g1) = (f.abs(), g.abs());
    if g == T::ZERO {
        (T::ONE, T::ZERO, f)
    } else if f == T::ZERO {
        (T::ZERO, sign(T::ONE, g), g1)
    } else if f1 > rtmin && f1 < rtmax && g1 > rtmin && g1 < rtmax {
        let d = (f * f + g * g).sqrt();
        let c = f1 / d;
        let r = sign(d, f);
        (c, g / r, r)
    } else {
        let mut u = f1.max(g1).max(safmin);
        if u > safmax {
            u = safmax;
        }
        let (fs, gs) = (f / u, g / u);
        let d = (fs * fs + gs * gs).sqrt();
        let c = fs.abs() / d;
        let r = sign(d, f);
        (c, gs / r, r * u)
    }
}

/// `?lasr('R', 'V', direct, n, mm, c, s, Z(:, l..l+mm))`: the rotations of
/// planes (j, j+1) applied to columns `l..l+mm` of the n×n `z` from the
/// right, forward or backward.
fn lasr<T: RealScalar>(
    forward: bool,
    n: usize,
    l: usize,
    mm: usize,
    c: &[T],
    s: &[T],
    z: &mut [T],
) {
    let mut rotate = |j: usize| {
        let (ct, st) = (c[j], s[j]);
        if ct != T::ONE || st != T::ZERO {
            let (lo, hi) = z.split_at_mut((l + j + 1) * n);
            let zj = &mut lo[(l + j) * n..];
            let zj1 = &mut hi[..n];
            for (a, b) in zj.iter_mut().zip(zj1.iter_mut()) {
                let temp = *b;
                *b = ct * temp - st * *a;
                *a = st * temp + ct * *a;
            }
        }
    };
    if forward {
        (0..mm - 1).for_each(&mut rotate);
    } else {
        (0..mm - 1).rev().for_each(&mut rotate);
    }
}

/// `?steqr('I', ...)`: eigenvalues (ascending, in `d`) and eigenvectors (in
/// the n×n `z`) of the symmetric tridiagonal matrix with diagonal `d` and
/// off-diagonal `e` (n−1 entries, destroyed). Returns INFO: 0, or the
/// number of off-diagonal entries that did not converge in 30·n sweeps.
fn steqr<T: RealScalar>(
    n: usize,
    d: &mut [T],
    e: &mut [T],
    z: &mut [T],
    wc: &mut [T],
    ws: &mut [T],
    k: Consts<T>,
) -> i32 {
    z[..n * n].fill(T::ZERO);
    (0..n).for_each(|i| z[i + i * n] = T::ONE);
    if n <= 1 {
        return 0;
    }
    let three = two::<T>() + T::ONE;
    let eps = k.eps;
    let eps2 = eps * eps;
    let safmin = k.safmin;
    let safmax = T::ONE / safmin;
    let ssfmax = safmax.sqrt() / three;
    let ssfmin = safmin.sqrt() / eps2;
    let nmaxit = n * 30;
    let mut jtot = 0;
    // 1-based indices as in LAPACK: D(i) = d[i-1], E(i) = e[i-1].
    let mut l1 = 1;
    let nm1 = n - 1;
    loop {
        // Label 10: find the next unreduced block L..LEND.
        if l1 > n {
            break;
        }
        if l1 > 1 {
            e[l1 - 2] = T::ZERO;
        }
        let mut m = n;
        if l1 <= nm1 {
            for mm in l1..=nm1 {
                let tst = e[mm - 1].abs();
                if tst == T::ZERO {
                    m = mm;
                    break;
                }
                if tst <= (d[mm - 1].abs().sqrt() * d[mm].abs().sqrt()) * eps {
                    e[mm - 1] = T::ZERO;
                    m = mm;
                    break;
                }
            }
        }
        let mut l = l1;
        let lsv = l;
        let mut lend = m;
        let lendsv = lend;
        l1 = m + 1;
        if lend == l {
            continue;
        }
        // Scale the block.
        let block = l - 1..lend;
        let eblock = l - 1..lend - 1;
        let anorm = d[block.clone()]
            .iter()
            .chain(&e[eblock.clone()])
            .fold(T::ZERO, |acc, &v| {
                let a = v.abs();
                if acc < a || a.is_nan() { a } else { acc }
            });
        let mut iscale = 0;
        if anorm == T::ZERO {
            continue;
        }
        if anorm > ssfmax {
            iscale = 1;
            lascl(anorm, ssfmax, &mut d[block.clone()], k);
            lascl(anorm, ssfmax, &mut e[eblock.clone()], k);
        } else if anorm < ssfmin {
            iscale = 2;
            lascl(anorm, ssfmin, &mut d[block.clone()], k);
            lascl(anorm, ssfmin, &mut e[eblock.clone()], k);
        }
        // QL or QR: start at the end with the smaller diagonal entry.
        if d[lend - 1].abs() < d[l - 1].abs() {
            lend = lsv;
            l = lendsv;
        }
        if lend > l {
            // QL iteration.
            'ql: loop {
                // Label 40: look for a small subdiagonal element.
                let mut m = lend;
                if l != lend {
                    for mm in l..lend {
                        let tst = e[mm - 1].abs() * e[mm - 1].abs();
                        if tst <= (eps2 * d[mm - 1].abs()) * d[mm].abs() + safmin {
                            m = mm;
                            break;
                        }
                    }
                }
                if m < lend {
                    e[m - 1] = T::ZERO;
                }
                let mut p = d[l - 1];
                if m != l {
                    if m == l + 1 {
                        // A 2×2 block.
                        let (rt1, rt2, c, s) = laev2(d[l - 1], e[l - 1], d[l]);
                        wc[l - 1] = c;
                        ws[l - 1] = s;
                        lasr(false, n, l - 1, 2, &wc[l - 1..], &ws[l - 1..], z);
                        d[l - 1] = rt1;
                        d[l] = rt2;
                        e[l - 1] = T::ZERO;
                        l += 2;
                        if l <= lend {
                            continue 'ql;
                        }
                        break 'ql;
                    }
                    if jtot == nmaxit {
                        break 'ql;
                    }
                    jtot += 1;
                    // Shift.
                    let mut g = (d[l] - p) / (two::<T>() * e[l - 1]);
                    let mut r = lapy2(g, T::ONE);
                    g = d[m - 1] - p + (e[l - 1] / (g + sign(r, g)));
                    let (mut s, mut c) = (T::ONE, T::ONE);
                    p = T::ZERO;
                    for i in (l..m).rev() {
                        let f = s * e[i - 1];
                        let b = c * e[i - 1];
                        (c, s, r) = lartg(g, f, k);
                        if i != m - 1 {
                            e[i] = r;
                        }
                        g = d[i] - p;
                        r = (d[i - 1] - g) * s + two::<T>() * c * b;
                        p = s * r;
                        d[i] = g + p;
                        g = c * r - b;
                        wc[i - 1] = c;
                        ws[i - 1] = -s;
                    }
                    let mm = m - l + 1;
                    lasr(false, n, l - 1, mm, &wc[l - 1..], &ws[l - 1..], z);
                    d[l - 1] = d[l - 1] - p;
                    e[l - 1] = g;
                    continue 'ql;
                }
                // Label 80: an eigenvalue has converged.
                d[l - 1] = p;
                l += 1;
                if l <= lend {
                    continue 'ql;
                }
                break 'ql;
            }
        } else {
            // QR iteration.
            'qr: loop {
                // Label 90: look for a small superdiagonal element.
                let mut m = lend;
                if l != lend {
                    for mm in (lend + 1..=l).rev() {
                        let tst = e[mm - 2].abs() * e[mm - 2].abs();
                        if tst <= (eps2 * d[mm - 1].abs()) * d[mm - 2].abs() + safmin {
                            m = mm;
                            break;
                        }
                    }
                }
                if m > lend {
                    e[m - 2] = T::ZERO;
                }
                let mut p = d[l - 1];
                if m != l {
                    if m + 1 == l {
                        // A 2×2 block.
                        let (rt1, rt2, c, s) = laev2(d[l - 2], e[l - 2], d[l - 1]);
                        wc[m - 1] = c;
                        ws[m - 1] = s;
                        lasr(true, n, l - 2, 2, &wc[m - 1..], &ws[m - 1..], z);
                        d[l - 2] = rt1;
                        d[l - 1] = rt2;
                        e[l - 2] = T::ZERO;
                        if l < lend + 2 {
                            break 'qr;
                        }
                        l -= 2;
                        continue 'qr;
                    }
                    if jtot == nmaxit {
                        break 'qr;
                    }
                    jtot += 1;
                    // Shift.
                    let mut g = (d[l - 2] - p) / (two::<T>() * e[l - 2]);
                    let mut r = lapy2(g, T::ONE);
                    g = d[m - 1] - p + (e[l - 2] / (g + sign(r, g)));
                    let (mut s, mut c) = (T::ONE, T::ONE);
                    p = T::ZERO;
                    for i in m..l {
                        let f = s * e[i - 1];
                        let b = c * e[i - 1];
                        (c, s, r) = lartg(g, f, k);
                        if i != m {
                            e[i - 2] = r;
                        }
                        g = d[i - 1] - p;
                        r = (d[i] - g) * s + two::<T>() * c * b;
                        p = s * r;
                        d[i - 1] = g + p;
                        g = c * r - b;
                        wc[i - 1] = c;
                        ws[i - 1] = s;
                    }
                    let mm = l - m + 1;
                    lasr(true, n, m - 1, mm, &wc[m - 1..], &ws[m - 1..], z);
                    d[l - 1] = d[l - 1] - p;
                    e[l - 2] = g;
                    continue 'qr;
                }
                // Label 130: an eigenvalue has converged.
                d[l - 1] = p;
                if l < lend + 1 {
                    break 'qr;
                }
                l -= 1;
            }
        }
        // Label 140: undo the scaling.
        let block = lsv - 1..lendsv;
        let eblock = lsv - 1..lendsv - 1;
        if iscale == 1 {
            lascl(ssfmax, anorm, &mut d[block], k);
            lascl(ssfmax, anorm, &mut e[eblock], k);
        } else if iscale == 2 {
            lascl(ssfmin, anorm, &mut d[block], k);
            lascl(ssfmin, anorm, &mut e[eblock], k);
        }
        if jtot >= nmaxit {
            return e[..n - 1].iter().filter(|&&v| v != T::ZERO).count() as i32;
        }
    }
    // Label 160: selection sort, swapping eigenvector columns.
    for ii in 2..=n {
        let i = ii - 1;
        let mut kk = i;
        let mut p = d[i - 1];
        for j in ii..=n {
            if d[j - 1] < p {
                kk = j;
                p = d[j - 1];
            }
        }
        if kk != i {
            d[kk - 1] = d[i - 1];
            d[i - 1] = p;
            for r in 0..n {
                z.swap(r + (i - 1) * n, r + (kk - 1) * n);
            }
        }
    }
    0
}

/// `?sytd2`: reduces the symmetric n×n `a` (the `uplo` triangle) to
/// tridiagonal form: diagonal `d`, off-diagonal `e`, reflectors in `a` and
/// `tau`.
fn sytd2<T: RealScalar>(
    upper: bool,
    n: usize,
    a: &mut [T],
    d: &mut [T],
    e: &mut [T],
    tau: &mut [T],
    k: Consts<T>,
) {
    let at = |i: usize, j: usize| i + j * n;
    if upper {
        for i in (0..n - 1).rev() {
            // Reflector H(i) annihilating A(0..i, i+1).
            let (col, rest) = a[(i + 1) * n..].split_at_mut(i);
            let taui = larfg(&mut rest[0], col, k);
            e[i] = a[at(i, i + 1)];
            if taui != T::ZERO {
                a[at(i, i + 1)] = T::ONE;
                let kk = i + 1;
                // tau[0..kk] = taui · A(0..kk, 0..kk) · v (upper triangle).
                let (head, vcol) = a.split_at_mut((i + 1) * n);
                let v = &vcol[..kk];
                let y = &mut tau[..kk];
                y.fill(T::ZERO);
                for j in 0..kk {
                    let temp1 = taui * v[j];
                    let mut temp2 = T::ZERO;
                    for r in 0..j {
                        y[r] = y[r] + temp1 * head[at(r, j)];
                        temp2 = temp2 + head[at(r, j)] * v[r];
                    }
                    y[j] = y[j] + temp1 * head[at(j, j)] + taui * temp2;
                }
                syr2_step(true, n, head, v, y, taui);
                a[at(i, i + 1)] = e[i];
            }
            d[i + 1] = a[at(i + 1, i + 1)];
            tau[i] = taui;
        }
        d[0] = a[0];
    } else {
        for i in 0..n - 1 {
            // Reflector H(i) annihilating A(i+2..n, i).
            let (alpha, x) = a[at(i + 1, i)..(i + 1) * n].split_at_mut(1);
            let taui = larfg(&mut alpha[0], x, k);
            e[i] = a[at(i + 1, i)];
            if taui != T::ZERO {
                a[at(i + 1, i)] = T::ONE;
                let kk = n - i - 1;
                // tau[i..n-1] = taui · A(i+1.., i+1..) · v (lower triangle).
                let (vcol, tail) = a.split_at_mut((i + 1) * n);
                let v = &vcol[at(i + 1, i)..];
                let sub = |r: usize, c: usize| (i + 1 + r) + c * n;
                let y = &mut tau[i..i + kk];
                y.fill(T::ZERO);
                for j in 0..kk {
                    let temp1 = taui * v[j];
                    let mut temp2 = T::ZERO;
                    y[j] = y[j] + temp1 * tail[sub(j, j)];
                    for r in j + 1..kk {
                        y[r] = y[r] + temp1 * tail[sub(r, j)];
                        temp2 = temp2 + tail[sub(r, j)] * v[r];
                    }
                    y[j] = y[j] + taui * temp2;
                }
                syr2_step(false, n, &mut tail[i + 1..], v, y, taui);
                a[at(i + 1, i)] = e[i];
            }
            d[i] = a[at(i, i)];
            tau[i] = taui;
        }
        d[n - 1] = a[at(n - 1, n - 1)];
    }
}

/// The end of one [`sytd2`] step, once `y` holds τ·A·v (`?symv`): w := y −
/// ½·τ·(yᵀv)·v over `y` (`?dot`, `?axpy`), then A −= v·wᵀ + w·vᵀ (`?syr2`)
/// on the upper or lower triangle of the `v.len()`-square block of `a`
/// whose entry (r, c) is `a[r + c·n]`.
fn syr2_step<T: RealScalar>(upper: bool, n: usize, a: &mut [T], v: &[T], y: &mut [T], tau: T) {
    let half = T::ONE / two::<T>();
    let dot = y.iter().zip(v).fold(T::ZERO, |s, (&w, &x)| s + w * x);
    let alpha = -half * tau * dot;
    y.iter_mut().zip(v).for_each(|(w, &x)| *w = *w + alpha * x);
    let kk = v.len();
    for j in 0..kk {
        if v[j] != T::ZERO || y[j] != T::ZERO {
            let (t1, t2) = (-y[j], -v[j]);
            let rows = if upper { 0..j + 1 } else { j..kk };
            for r in rows {
                a[r + j * n] = a[r + j * n] + v[r] * t1 + y[r] * t2;
            }
        }
    }
}

/// `?ormtr('L', uplo, 'N')` unblocked (`?orm2l` / `?orm2r`): Z := Q·Z with
/// Q the product of the reflectors [`sytd2`] left in `a` and `tau`.
fn ormtr<T: RealScalar>(upper: bool, n: usize, a: &[T], tau: &[T], z: &mut [T], v: &mut [T]) {
    // H = I − τ·v·vᵀ applied to rows `rows` of z, all n columns.
    let mut apply = |tau: T, v: &[T], first_row: usize| {
        if tau == T::ZERO {
            return;
        }
        for col in z.chunks_exact_mut(n) {
            let c = &mut col[first_row..first_row + v.len()];
            let w = c.iter().zip(v).fold(T::ZERO, |s, (&x, &y)| s + x * y);
            let f = -tau * w;
            c.iter_mut().zip(v).for_each(|(x, &y)| *x = *x + y * f);
        }
    };
    if upper {
        // ?orm2l: H(1), ..., H(n−1) in turn; H(i) acts on rows 0..i, its
        // vector is A(0..i−1, i) followed by 1.
        for i in 1..n {
            v[..i - 1].copy_from_slice(&a[i * n..i * n + i - 1]);
            v[i - 1] = T::ONE;
            apply(tau[i - 1], &v[..i], 0);
        }
    } else {
        // ?orm2r: H(n−1), ..., H(1) in turn; H(i) acts on rows i..n, its
        // vector is 1 followed by A(i+1..n, i−1).
        for i in (1..n).rev() {
            let len = n - i;
            v[0] = T::ONE;
            v[1..len].copy_from_slice(&a[(i - 1) * n + i + 1..i * n]);
            apply(tau[i - 1], &v[..len], i);
        }
    }
}

/// `?syevd('V', uplo, n, a, n, w, ...)` for `n ≤ MAX_N`: eigenvalues
/// ascending in `w`, orthonormal eigenvectors over `a`; returns INFO.
///
/// # Panics
///
/// If `n > MAX_N`, or a buffer or `work` is too small.
pub(crate) fn syevd<T: RealScalar>(
    uplo: u8,
    n: usize,
    a: &mut [T],
    w: &mut [T],
    work: &mut Work<T>,
) -> i32 {
    assert!(
        n <= MAX_N && a.len() >= n * n && w.len() >= n && work.z.len() >= n * n,
        "syevd sizes"
    );
    if n == 0 {
        return 0;
    }
    if n == 1 {
        w[0] = a[0];
        a[0] = T::ONE;
        return 0;
    }
    let k = Consts::<T>::new();
    let upper = uplo == b'U';
    let a = &mut a[..n * n];
    // Scale the matrix to a safe range (?lansy('M'), ?lascl(uplo)); here
    // EPS is ?lamch('P'), the full machine epsilon.
    let smlnum = k.safmin / T::EPSILON;
    let bignum = T::ONE / smlnum;
    let (rmin, rmax) = (smlnum.sqrt(), bignum.sqrt());
    let mut anrm = T::ZERO;
    for j in 0..n {
        let rows = if upper { 0..j + 1 } else { j..n };
        for v in &a[j * n + rows.start..j * n + rows.end] {
            let s = v.abs();
            if anrm < s || s.is_nan() {
                anrm = s;
            }
        }
    }
    let sigma = if anrm > T::ZERO && anrm < rmin {
        Some(rmin / anrm)
    } else if anrm > rmax {
        Some(rmax / anrm)
    } else {
        None
    };
    if let Some(sigma) = sigma {
        for mul in lascl_factors(T::ONE, sigma, k) {
            for j in 0..n {
                let rows = if upper { 0..j + 1 } else { j..n };
                for v in &mut a[j * n + rows.start..j * n + rows.end] {
                    *v = *v * mul;
                }
            }
        }
    }
    let Work { e, tau, z, c, s, v } = work;
    sytd2(upper, n, a, w, e, tau, k);
    let info = steqr(n, w, e, z, c, s, k);
    ormtr(upper, n, a, tau, z, v);
    a.copy_from_slice(&z[..n * n]);
    if let Some(sigma) = sigma {
        let r = T::ONE / sigma;
        w[..n].iter_mut().for_each(|x| *x = *x * r);
    }
    info
}

#[cfg(test)]
pub(crate) mod tests;
