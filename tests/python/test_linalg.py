"""jnp.linalg / jax.scipy.linalg on platform cyxla against JAX's own CPU backend.

Both backends live in this process (JAX_PLATFORMS=cyxla,cpu, see support.py).
Each case lowers the same function once per backend, runs it on the same
inputs (a batch of 3 small matrices) and compares. On cyxla the LAPACK
custom calls are served by cyxla-host's native OpenBLAS handlers; on JAX's
CPU backend by jaxlib's own.

Results that are unique (inverse, solve, determinants, Cholesky factor,
eigen- and singular values, least-squares solution, tridiagonal solve) are
compared element-wise. Factors that are unique only up to signs or phases
(eigenvectors, singular vectors, Q of QR, Schur vectors, ...) or up to
pivoting choices are checked by reconstruction and structure on cyxla, and
their unique parts (|R|, |H|, eigenvalues) are compared with the CPU
backend's.
"""

from __future__ import annotations

import numpy as np
import pytest

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl

jax.config.update("jax_enable_x64", True)

N = 5
BATCH = 3
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
# Relative tolerances by precision: the two backends run the same LAPACK
# algorithms but not the same library builds (blocking, kernels, threads).
TOL = {np.float32: 2e-4, np.complex64: 2e-4, np.float64: 1e-10, np.complex128: 1e-10}


def tol(dtype) -> float:
    return TOL[np.dtype(dtype).type]


def rand(shape, dtype, seed) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def general(dtype, seed=0, n=N) -> np.ndarray:
    """A batch of well-conditioned square matrices."""
    return (rand((BATCH, n, n), dtype, seed) + 2 * n * np.eye(n)).astype(dtype)


def hermitian_pd(dtype, seed=1, n=N) -> np.ndarray:
    a = rand((BATCH, n, n), dtype, seed)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def H(x):
    return np.conj(np.swapaxes(x, -1, -2))


def run_on(device, fn, *args):
    """jit(fn) on `device`: the arguments are put there, the computation follows."""
    placed = [jax.device_put(a, device) for a in args]
    out = jax.jit(fn)(*placed)
    for leaf in jax.tree.leaves(out):
        assert leaf.devices() == {device}, f"result on {leaf.devices()}, not {device}"
    return jax.tree.map(np.asarray, out)


def both(cyxla, cpu, fn, *args):
    return run_on(cyxla, fn, *args), run_on(cpu, fn, *args)


def close(got, want, dtype, *, scale=None, what=""):
    """Element-wise comparison, with an absolute floor relative to `scale`."""
    got, want = np.asarray(got), np.asarray(want)
    t = tol(dtype)
    scale = float(np.max(np.abs(want))) if scale is None else scale
    np.testing.assert_allclose(got, want, rtol=t, atol=t * max(scale, 1.0), err_msg=what)


def near_identity(x, dtype, what):
    n = x.shape[-1]
    close(x, np.broadcast_to(np.eye(n), x.shape), dtype, scale=1.0, what=what)


def match_eigenvalues(got, want, dtype, what):
    """Equal as multisets, per batch element (order is not specified)."""
    t = tol(dtype)
    for g, w in zip(got.reshape(-1, got.shape[-1]), want.reshape(-1, want.shape[-1])):
        left = list(w)
        for value in g:
            d = [abs(value - x) for x in left]
            i = int(np.argmin(d))
            assert d[i] <= t * 10 * max(1.0, abs(left[i])), f"{what}: {value} not in {w}"
            left.pop(i)


ids = [np.dtype(d).name for d in DTYPES]


# --------------------------------------------------------------------------
# Unique results: compared element-wise
# --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_inv(cyxla, cpu, dtype):
    a = general(dtype)
    got, want = both(cyxla, cpu, jnp.linalg.inv, a)
    close(got, want, dtype)
    near_identity(got @ a, dtype, "inv(a) @ a")


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_solve(cyxla, cpu, dtype):
    a, b = general(dtype), rand((BATCH, N, 2), dtype, 7)
    got, want = both(cyxla, cpu, jnp.linalg.solve, a, b)
    close(got, want, dtype)
    close(a @ got, b, dtype, what="a @ x = b")


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_det(cyxla, cpu, dtype):
    a = general(dtype)
    got, want = both(cyxla, cpu, jnp.linalg.det, a)
    np.testing.assert_allclose(got, want, rtol=tol(dtype) * 10)
    np.testing.assert_allclose(got, np.linalg.det(a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)),
                               rtol=tol(dtype) * 10)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_slogdet(cyxla, cpu, dtype):
    a = general(dtype)
    a[1] *= -1  # a negative determinant for the real case (N is odd)
    (gs, gl), (ws, wl) = both(cyxla, cpu, lambda a: tuple(jnp.linalg.slogdet(a)), a)
    close(gs, ws, dtype, scale=1.0, what="sign")
    close(gl, wl, dtype, what="logabsdet")


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_cholesky(cyxla, cpu, dtype):
    a = hermitian_pd(dtype)
    got, want = both(cyxla, cpu, jnp.linalg.cholesky, a)
    close(got, want, dtype)
    close(got @ H(got), a, dtype, what="L L^H = a")
    assert np.all(np.triu(got, 1) == 0)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_tridiagonal_solve(cyxla, cpu, dtype):
    dl, du = rand((BATCH, N), dtype, 2), rand((BATCH, N), dtype, 3)
    d = (rand((BATCH, N), dtype, 4) + 4).astype(dtype)
    dl[:, 0] = 0
    du[:, -1] = 0
    b = rand((BATCH, N, 2), dtype, 5)
    got, want = both(cyxla, cpu, jax.lax.linalg.tridiagonal_solve, dl, d, du, b)
    close(got, want, dtype)
    dense = np.zeros((BATCH, N, N), dtype)
    for i in range(N):
        dense[:, i, i] = d[:, i]
        if i > 0:
            dense[:, i, i - 1] = dl[:, i]
        if i < N - 1:
            dense[:, i, i + 1] = du[:, i]
    close(dense @ got, b, dtype, what="T x = b")


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_lstsq(cyxla, cpu, dtype):
    a = rand((BATCH, 7, 4), dtype, 8)
    b = rand((BATCH, 7, 2), dtype, 9)
    fn = jax.vmap(lambda a, b: tuple(jnp.linalg.lstsq(a, b)))
    (gx, gres, grank, gsv), (wx, wres, wrank, wsv) = both(cyxla, cpu, fn, a, b)
    close(gx, wx, dtype, what="solution")
    close(gsv, wsv, dtype, what="singular values")
    np.testing.assert_array_equal(grank, wrank)
    assert np.all(grank == 4)
    close(gres, wres, dtype, what="residuals")
    # normal equations: a^H (a x - b) = 0
    close(H(a) @ (a @ gx - b), np.zeros((BATCH, 4, 2)), dtype, scale=float(np.abs(a).max() ** 2 * np.abs(b).max()),
          what="normal equations")


# --------------------------------------------------------------------------
# Decompositions unique up to signs/phases/pivots: invariants
# --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_qr(cyxla, cpu, dtype):
    a = rand((BATCH, 6, 4), dtype, 10)
    (gq, gr), (wq, wr) = both(cyxla, cpu, lambda a: tuple(jnp.linalg.qr(a)), a)
    assert gq.shape == (BATCH, 6, 4) and gr.shape == (BATCH, 4, 4)
    close(gq @ gr, a, dtype, what="Q R = a")
    near_identity(H(gq) @ gq, dtype, "Q^H Q")
    assert np.all(np.tril(gr, -1) == 0), "R is upper triangular"
    close(np.abs(gr), np.abs(wr), dtype, what="|R|")


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_qr_complete(cyxla, cpu, dtype):
    a = rand((BATCH, 6, 4), dtype, 11)
    (gq, gr), (wq, wr) = both(cyxla, cpu, lambda a: tuple(jnp.linalg.qr(a, mode="complete")), a)
    assert gq.shape == (BATCH, 6, 6) and gr.shape == (BATCH, 6, 4)
    close(gq @ gr, a, dtype, what="Q R = a")
    near_identity(H(gq) @ gq, dtype, "Q^H Q")
    close(np.abs(gr), np.abs(wr), dtype, what="|R|")


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(cyxla, cpu, dtype, uplo):
    a = hermitian_pd(dtype, seed=12)
    (gw, gv), (ww, wv) = both(cyxla, cpu, lambda a: tuple(jnp.linalg.eigh(a, UPLO=uplo)), a)
    close(gw, ww, dtype, what="eigenvalues")
    close(gw, np.linalg.eigvalsh(a.astype(np.complex128)), dtype, what="eigenvalues vs numpy")
    close(a @ gv, gv * gw[..., None, :], dtype, scale=float(np.abs(ww).max()), what="A V = V diag(w)")
    near_identity(H(gv) @ gv, dtype, "V^H V")


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_eig(cyxla, cpu, dtype):
    a = rand((BATCH, N, N), dtype, 13)
    (gw, gv), (ww, wv) = both(cyxla, cpu, lambda a: tuple(jnp.linalg.eig(a)), a)
    assert np.iscomplexobj(gw) and np.iscomplexobj(gv)
    match_eigenvalues(gw, ww, dtype, "eigenvalues vs JAX CPU")
    match_eigenvalues(gw, np.linalg.eigvals(a.astype(np.complex128)), dtype, "eigenvalues vs numpy")
    scale = float(np.abs(ww).max())
    close(a @ gv, gv * gw[..., None, :], dtype, scale=scale, what="A v = lambda v")
    close(np.linalg.norm(gv, axis=-2), np.ones((BATCH, N)), dtype, scale=1.0, what="unit eigenvectors")


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_eigvals_only(cyxla, cpu, dtype):
    a = rand((BATCH, N, N), dtype, 14)
    got, want = both(cyxla, cpu, jnp.linalg.eigvals, a)
    match_eigenvalues(got, want, dtype, "eigvals")


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("shape", [(5, 5), (6, 4), (4, 6)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_svd(cyxla, cpu, dtype, shape):
    a = rand((BATCH, *shape), dtype, 15)
    (gu, gs, gvh), (wu, ws, wvh) = both(cyxla, cpu, lambda a: tuple(jnp.linalg.svd(a, full_matrices=False)), a)
    k = min(shape)
    assert gu.shape == (BATCH, shape[0], k) and gvh.shape == (BATCH, k, shape[1])
    close(gs, ws, dtype, what="singular values")
    close(gs, np.linalg.svd(a.astype(np.complex128), compute_uv=False), dtype, what="singular values vs numpy")
    close((gu * gs[..., None, :]) @ gvh, a, dtype, what="U S V^H = a")
    near_identity(H(gu) @ gu, dtype, "U^H U")
    near_identity(gvh @ H(gvh), dtype, "V^H V")


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_svd_full_and_values_only(cyxla, cpu, dtype):
    a = rand((BATCH, 6, 4), dtype, 16)
    (gu, gs, gvh), (wu, ws, wvh) = both(cyxla, cpu, lambda a: tuple(jnp.linalg.svd(a, full_matrices=True)), a)
    assert gu.shape == (BATCH, 6, 6) and gvh.shape == (BATCH, 4, 4)
    near_identity(H(gu) @ gu, dtype, "U^H U")
    close((gu[..., :4] * gs[..., None, :]) @ gvh, a, dtype, what="U S V^H = a")
    got, want = both(cyxla, cpu, lambda a: jnp.linalg.svd(a, compute_uv=False), a)
    close(got, want, dtype, what="singular values only")
    close(got, gs, dtype, what="values-only vs with vectors")


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_lu(cyxla, cpu, dtype):
    a = rand((BATCH, N, N), dtype, 17)
    (gp, gl, gu), (wp, wl, wu) = both(cyxla, cpu, jax.vmap(jsl.lu), a)
    close(gp @ gl @ gu, a, dtype, what="P L U = a")
    assert np.all(np.triu(gl, 1) == 0) and np.allclose(np.diagonal(gl, axis1=-2, axis2=-1), 1)
    assert np.all(np.tril(gu, -1) == 0)
    # partial pivoting: |L| <= 1; P is a permutation matrix
    assert np.all(np.abs(gl) <= 1 + tol(dtype))
    np.testing.assert_array_equal(np.sort(gp, axis=-1)[..., -1], np.ones((BATCH, N)))
    np.testing.assert_array_equal(gp.sum(axis=-1), np.ones((BATCH, N)))
    # U's diagonal product is det(a) up to the permutation's sign
    close(np.abs(np.prod(np.diagonal(gu, axis1=-2, axis2=-1), axis=-1)),
          np.abs(np.prod(np.diagonal(wu, axis1=-2, axis2=-1), axis=-1)), dtype, what="|det U|")


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_lu_pivots(cyxla, cpu, dtype):
    a = rand((BATCH, N, N), dtype, 18)
    (glu, gpiv, gperm), (wlu, wpiv, wperm) = both(cyxla, cpu, lambda a: tuple(jax.lax.linalg.lu(a)), a)
    # rebuild P A = L U from the packed factor and the permutation
    lower = np.tril(glu, -1) + np.eye(N)
    upper = np.triu(glu)
    pa = np.take_along_axis(a, gperm[..., :, None].astype(np.int64), axis=-2)
    close(lower @ upper, pa, dtype, what="L U = P a")
    np.testing.assert_array_equal(np.sort(gperm, axis=-1), np.broadcast_to(np.arange(N), (BATCH, N)))
    assert gpiv.dtype == wpiv.dtype and gperm.dtype == wperm.dtype
    # random Gaussian matrices: no near-ties, so both pick the same pivots
    np.testing.assert_array_equal(gpiv, wpiv)
    close(glu, wlu, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_schur(cyxla, cpu, dtype):
    a = rand((BATCH, N, N), dtype, 19)
    (gt, gz), (wt, wz) = both(cyxla, cpu, lambda a: tuple(jsl.schur(a)), a)
    close(gz @ gt @ H(gz), a, dtype, what="Z T Z^H = a")
    near_identity(H(gz) @ gz, dtype, "Z^H Z")
    if np.iscomplexobj(a):
        assert np.all(np.tril(gt, -1) == 0), "T is upper triangular"
    else:
        assert np.all(np.tril(gt, -2) == 0), "T is quasi upper triangular"
    match_eigenvalues(np.linalg.eigvals(gt.astype(np.complex128)), np.linalg.eigvals(wt.astype(np.complex128)),
                      dtype, "eigenvalues of T")


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_hessenberg(cyxla, cpu, dtype):
    a = rand((BATCH, N, N), dtype, 20)
    (gh, gq), (wh, wq) = both(cyxla, cpu, lambda a: tuple(jsl.hessenberg(a, calc_q=True)), a)
    close(gq @ gh @ H(gq), a, dtype, what="Q H Q^H = a")
    near_identity(H(gq) @ gq, dtype, "Q^H Q")
    assert np.all(np.tril(gh, -2) == 0), "H is upper Hessenberg"
    # Q e1 = e1 (gehrd): the implicit Q theorem makes |H| and |Q| unique
    close(np.abs(gh), np.abs(wh), dtype, what="|H|")
    close(np.abs(gq), np.abs(wq), dtype, scale=1.0, what="|Q|")
