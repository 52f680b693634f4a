//! What the checks of the singular value decompositions (`?gesdd`,
//! `?gesvd`, and `?ormbr` of the split `?gesdd`) compute from their dims.

use super::{need_matrix, or_dummy};
use crate::ffi::lapack_int;
use crate::scalar::LapackScalar;

/// The RWORK `?gesdd` needs: none for the real types (1), else 7k for
/// `jobz` 'N' and max(5k² + 5k, 2·max(m,n)·k + 2k² + k) otherwise
/// (k = min(m,n)).
pub(crate) fn gesdd_lrwork<T: LapackScalar>(jobz: u8, m: usize, n: usize) -> usize {
    let k = m.min(n);
    if !T::IS_COMPLEX {
        1
    } else if jobz == b'N' {
        7 * k
    } else {
        (5 * k * k + 5 * k).max(2 * m.max(n) * k + 2 * k * k + k)
    }
}

/// The pointers to `u` and `vt` (at `ldu` and `ldvt`) once they hold the
/// singular vectors of the m×n matrix that `?gesdd` (and `?gesvd` with
/// `job` for both) writes: U's columns and Vᵀ's rows are m and n for 'A',
/// min(m,n) for 'S'. With 'N' LAPACK never touches them, and an empty one
/// is replaced by its element of `dummies`.
pub(super) fn svd_vectors<T>(
    routine: &str,
    job: u8,
    [m, n]: [lapack_int; 2],
    (u, ldu): (&mut [T], lapack_int),
    (vt, ldvt): (&mut [T], lapack_int),
    dummies: &mut [[T; 1]; 2],
) -> (*mut T, *mut T) {
    let (ucols, vrows) = match job {
        b'A' => (m, n),
        b'S' => (m.min(n), m.min(n)),
        b'N' => (0, 0),
        other => panic!("svd: job {} is not one of 'A', 'S', 'N'", char::from(other)),
    };
    if job != b'N' {
        need_matrix(routine, "u", u.len(), m, ucols, ldu);
        need_matrix(routine, "vt", vt.len(), vrows, n, ldvt);
    }
    let [du, dvt] = dummies;
    (or_dummy(u, du), or_dummy(vt, dvt))
}

/// The rows and columns of `?gebrd`'s reflectors that `?ormbr` reads for
/// `vect` ('Q' or 'P'), Q or P being of order `nq`, from k columns or rows.
pub(super) fn ormbr_reflectors(
    vect: u8,
    nq: lapack_int,
    k: lapack_int,
) -> (lapack_int, lapack_int) {
    if vect == b'Q' {
        (nq, nq.min(k))
    } else {
        (nq.min(k), nq)
    }
}
