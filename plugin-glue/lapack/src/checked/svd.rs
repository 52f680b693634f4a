//! What the checks of the singular value decompositions (`?gesdd`,
//! `?gesvd`, and `?ormbr` of the split `?gesdd`) compute from their dims.

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

/// The singular vectors' shapes `?gesdd` (and `?gesvd` with `job` for
/// both) writes: (U's columns, Vᵀ's rows) for 'A', 'S' and 'N' (none).
pub(super) fn svd_vectors(job: u8, m: lapack_int, n: lapack_int) -> (lapack_int, lapack_int) {
    match job {
        b'A' => (m, n),
        b'S' => (m.min(n), m.min(n)),
        b'N' => (0, 0),
        other => panic!("svd: job {} is not one of 'A', 'S', 'N'", char::from(other)),
    }
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
