#!/usr/bin/env python3
"""Generates the LAPACK end-to-end programs of plugin-glue's native handlers.

Run from the workspace root:

    .venv/bin/python tests/gen_lapack_programs.py [--out DIR] [--only SUBSTR]

Every program is a JAX function on the CPU platform (jnp.linalg.inv, solve,
cholesky, det, qr, eigh, svd, eig, schur, ...) lowered with ``jax.export``,
so its StableHLO contains jaxlib's ``lapack_*_ffi`` (and tridiagonal / CSR)
custom calls exactly as JAX emits them. For each program DIR (default
``tests/programs/lapack`` next to this script) receives:

* ``<name>.mlir``        StableHLO text (``Exported.mlir_module()``),
* ``<name>.in<k>.npy``   the k-th input (fixed seeds),
* ``<name>.out<k>.npy``  the k-th output as JAX's own CPU backend (jaxlib's
                         LAPACK handlers) computes it,

and ``manifest.json``: per program its targets, inputs, outputs and how each
output is compared (``plugin-glue/tests/lapack.rs`` reads it):

* ``close``      |got - want| <= tol * max(1, max|want|), NaN where want is NaN;
* ``exact``      bit-identical (pivots, permutations);
* ``cols_phase`` like ``close`` after scaling each column of ``got`` by the
                 unit factor that best aligns it with ``want`` (eigenvectors and
                 singular vectors are unique only up to sign or phase);
* ``rows_phase`` the same for rows (V^H of an SVD).

Outputs whose content is unique only as a whole (Schur vectors) are checked
through invariants that the program itself computes (Z T Z^H).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys

# Sets JAX up (CPU, 64-bit types, no source locations): before jax is imported.
from programs_common import XLA_DTYPE_NAMES

import numpy as np  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
from jax import export, lax  # noqa: E402
from jax.experimental import sparse  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "programs" / "lapack"
SEED = 20260808

# Targets outside jax.export's stable list: allowed explicitly.
UNSTABLE = [
    f"lapack_{p}{f}_ffi"
    for p in "sdcz"
    for f in ("geqp3", "gesvd")
] + [
    "lapack_sormqr_ffi", "lapack_dormqr_ffi", "lapack_cunmqr_ffi", "lapack_zunmqr_ffi",
    "tridiagonal_solve_perturbed_ffi", "cpu_csr_sparse_dense_ffi",
]
DISABLED = [export.DisabledSafetyCheck.custom_call(t) for t in UNSTABLE]

DTYPES = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}
# Relative tolerance by precision: f32/c64 and f64/c128.
TOL = {"s": 2e-4, "d": 1e-10, "c": 2e-4, "z": 1e-10}


class Rng:
    def __init__(self, seed: int):
        self.g = np.random.default_rng(seed)

    def general(self, dt, shape):
        x = self.g.standard_normal(shape)
        if np.issubdtype(dt, np.complexfloating):
            x = x + 1j * self.g.standard_normal(shape)
        return x.astype(dt)

    def wellcond(self, dt, shape):
        x = self.general(dt, shape)
        n = shape[-1]
        return (x + 2 * n * np.eye(n)).astype(dt) if shape[-1] == shape[-2] else x

    def spd(self, dt, shape):
        g = self.general(dt, shape)
        n = shape[-1]
        return (g @ np.conj(np.swapaxes(g, -1, -2)) + n * np.eye(n)).astype(dt)

    def herm(self, dt, shape):
        g = self.general(dt, shape)
        return ((g + np.conj(np.swapaxes(g, -1, -2))) / 2).astype(dt)


class Program:
    def __init__(self, name, fn, args, modes, description, tol=None):
        self.name, self.fn, self.args, self.modes = name, fn, args, modes
        self.description, self.tol = description, tol


def programs_for(p: str, rng: Rng) -> list[Program]:
    dt = DTYPES[p]
    real = np.dtype(dt).kind == "f"
    out: list[Program] = []

    def add(name, fn, args, modes, description, tol=None):
        out.append(Program(f"{name}_{p}", fn, args, modes, description, tol))

    # ---- trsm (solve_triangular, triangular_solve)
    add("trsm_lower", lambda a, b: jsl.solve_triangular(a, b, lower=True),
        [rng.wellcond(dt, (2, 4, 4)), rng.general(dt, (2, 4, 3))], ["close"],
        "solve_triangular lower, batched")
    add("trsm_upper_trans", lambda a, b: jsl.solve_triangular(a, b, lower=False, trans=1),
        [rng.wellcond(dt, (4, 4)), rng.general(dt, (4, 2))], ["close"],
        "solve_triangular upper, trans=T")
    add("trsm_conj_unit", lambda a, b: jsl.solve_triangular(a, b, lower=True, trans=2, unit_diagonal=True),
        [rng.wellcond(dt, (3, 3)) / 4, rng.general(dt, (3, 5))], ["close"],
        "solve_triangular lower, trans=C, unit diagonal")
    add("trsm_right", lambda a, b: lax.linalg.triangular_solve(a, b, left_side=False, lower=True),
        [rng.wellcond(dt, (2, 4, 4)), rng.general(dt, (2, 3, 4))], ["close"],
        "triangular_solve right side (side R)")

    # ---- getrf (+ trsm)
    add("getrf_lu_factor", lambda a: jsl.lu_factor(a), [rng.general(dt, (3, 4, 4))],
        ["close", "exact"], "lu_factor batched: packed LU and 0-based pivots")
    add("getrf_lu_wide", lambda a: lax.linalg.lu(a), [rng.general(dt, (2, 3, 5))],
        ["close", "exact", "exact"], "lax.linalg.lu on 3x5 (lu, pivots, permutation)")
    add("getrf_lu_tall", lambda a: lax.linalg.lu(a), [rng.general(dt, (5, 3))],
        ["close", "exact", "exact"], "lax.linalg.lu on 5x3")
    add("getrf_1x1", lambda a: jsl.lu_factor(a), [rng.general(dt, (1, 1))],
        ["close", "exact"], "lu_factor of a 1x1 matrix")
    sing = rng.general(dt, (4, 4))
    sing[:, 3] = sing[:, 0] + sing[:, 1]
    add("getrf_singular", lambda a: (jsl.lu_factor(a)[0], jnp.linalg.det(a)), [sing],
        ["close", "close"], "singular matrix: finite LU (info > 0 is not an error), det ~ 0",
        tol=TOL[p] * 100)
    add("getrf_det", lambda a: jnp.linalg.det(a), [rng.general(dt, (3, 5, 5))], ["close"],
        "det of a batch of 5x5 (getrf)")
    add("getrf_slogdet", lambda a: jnp.linalg.slogdet(a), [rng.general(dt, (2, 4, 4))],
        ["close", "close"], "slogdet (getrf)")
    add("getrf_inv", lambda a: jnp.linalg.inv(a), [rng.wellcond(dt, (2, 4, 4))], ["close"],
        "inv (getrf + trsm)")
    add("getrf_solve", lambda a, b: jnp.linalg.solve(a, b),
        [rng.wellcond(dt, (6, 6)), rng.general(dt, (6, 2))], ["close"], "solve (getrf + trsm)")
    add("getrf_inv_empty", lambda a: jnp.linalg.inv(a), [np.zeros((0, 0), dt)], ["close"],
        "inv of a 0x0 matrix (calls on empty matrices)")
    add("getrf_inv_batch0", lambda a: jnp.linalg.inv(a), [np.zeros((0, 4, 4), dt)], ["close"],
        "inv of a batch of zero 4x4 matrices")

    # ---- potrf (+ trsm)
    add("potrf_cholesky", lambda a: jnp.linalg.cholesky(a), [rng.spd(dt, (3, 4, 4))], ["close"],
        "cholesky, batched")
    notpd = rng.herm(dt, (2, 3, 3))
    notpd[0] = -rng.spd(dt, (3, 3))
    notpd[1] = rng.spd(dt, (3, 3))
    add("potrf_not_pd", lambda a: jnp.linalg.cholesky(a), [notpd], ["close"],
        "cholesky of a batch with one non-positive-definite matrix (NaN there)")
    add("potrf_cho_solve", lambda a, b: jsl.cho_solve(jsl.cho_factor(a), b),
        [rng.spd(dt, (5, 5)), rng.general(dt, (5, 3))], ["close"], "cho_factor + cho_solve")
    add("potrf_1x1", lambda a: jnp.linalg.cholesky(a), [rng.spd(dt, (1, 1))], ["close"],
        "cholesky of a 1x1 matrix")
    add("potrf_empty", lambda a: jnp.linalg.cholesky(a), [np.zeros((0, 0), dt)], ["close"],
        "cholesky of a 0x0 matrix")

    # ---- geqrf + orgqr/ungqr, geqp3, ormqr/unmqr
    add("qr_reduced", lambda a: jnp.linalg.qr(a), [rng.general(dt, (2, 5, 3))],
        ["close", "close"], "qr reduced, batched 5x3")
    add("qr_complete", lambda a: jnp.linalg.qr(a, mode="complete"), [rng.general(dt, (5, 3))],
        ["close", "close"], "qr complete 5x3")
    add("qr_wide", lambda a: jnp.linalg.qr(a), [rng.general(dt, (3, 5))],
        ["close", "close"], "qr of a wide 3x5 matrix")
    add("qr_raw", lambda a: jnp.linalg.qr(a, mode="raw"), [rng.general(dt, (4, 3))],
        ["close", "close"], "qr mode raw: geqrf's reflectors and tau")
    add("geqp3_qr_pivoting", lambda a: jsl.qr(a, pivoting=True), [rng.general(dt, (5, 4))],
        ["close", "close", "exact"], "scipy qr with column pivoting (geqp3 + orgqr)")
    add("geqp3_qr_pivoting_wide", lambda a: jsl.qr(a, pivoting=True, mode="economic"),
        [rng.general(dt, (2, 3, 5))], ["close", "close", "exact"], "pivoted QR of 3x5, batched")
    add("ormqr_qr_multiply", lambda a, c: jsl.qr_multiply(a, c), [rng.general(dt, (5, 3)), rng.general(dt, (4, 5))],
        ["close", "close"], "qr_multiply (geqrf + ormqr, right side)")

    def ormqr_left(x, c):
        raw, taus = jnp.linalg.qr(x, mode="raw")
        return lax.linalg.ormqr(jnp.swapaxes(raw, -1, -2), taus, c, left=True, transpose=True)
    add("ormqr_left_adjoint", ormqr_left, [rng.general(dt, (2, 5, 3)), rng.general(dt, (2, 5, 2))],
        ["close"], "lax.linalg.ormqr left, transpose (Q^H C), batched")
    add("orgqr_householder_product", lambda x: lax.linalg.householder_product(*_raw_qr(x)),
        [rng.general(dt, (2, 6, 4))], ["close"], "householder_product (orgqr) on geqrf output")

    # ---- syevd/heevd
    add("eigh", lambda a: jnp.linalg.eigh(a), [rng.herm(dt, (3, 5, 5))],
        ["close", "cols_phase"], "eigh lower, batched")
    add("eigh_upper", lambda a: jnp.linalg.eigh(a, UPLO="U"), [rng.herm(dt, (4, 4))],
        ["close", "cols_phase"], "eigh UPLO=U")
    add("eigvalsh", lambda a: jnp.linalg.eigvalsh(a), [rng.herm(dt, (2, 6, 6))], ["close"], "eigvalsh")
    add("eigh_empty", lambda a: jnp.linalg.eigh(a), [np.zeros((0, 0), dt)],
        ["close", "close"], "eigh of a 0x0 matrix")
    add("eigh_1x1", lambda a: jnp.linalg.eigh(a), [rng.herm(dt, (1, 1))],
        ["close", "cols_phase"], "eigh of a 1x1 matrix")

    # ---- gesdd
    add("svd_full", lambda a: jnp.linalg.svd(a), [rng.general(dt, (2, 5, 3))],
        ["cols_phase", "close", "rows_phase"], "svd full_matrices, batched 5x3")
    add("svd_reduced_wide", lambda a: jnp.linalg.svd(a, full_matrices=False), [rng.general(dt, (3, 5))],
        ["cols_phase", "close", "rows_phase"], "svd reduced 3x5")
    add("svdvals", lambda a: jnp.linalg.svd(a, compute_uv=False), [rng.general(dt, (2, 4, 6))],
        ["close"], "singular values only (mode N)")
    add("svd_pinv", lambda a: jnp.linalg.pinv(a), [rng.general(dt, (4, 3))], ["close"], "pinv (gesdd S)")
    add("svd_norm2", lambda a: jnp.linalg.norm(a, ord=2), [rng.general(dt, (5, 5))], ["close"], "2-norm")
    add("svd_1x1", lambda a: jnp.linalg.svd(a), [rng.general(dt, (1, 1))],
        ["cols_phase", "close", "rows_phase"], "svd of a 1x1 matrix")

    # ---- gesvd
    qr_alg = lax.linalg.SvdAlgorithm.QR
    add("gesvd_full", lambda a: lax.linalg.svd(a, algorithm=qr_alg), [rng.general(dt, (2, 4, 3))],
        ["cols_phase", "close", "rows_phase"], "lax svd algorithm=QR (gesvd A)")
    add("gesvd_reduced", lambda a: lax.linalg.svd(a, full_matrices=False, algorithm=qr_alg),
        [rng.general(dt, (3, 5))], ["cols_phase", "close", "rows_phase"], "gesvd S")
    add("gesvd_values", lambda a: lax.linalg.svd(a, compute_uv=False, algorithm=qr_alg),
        [rng.general(dt, (4, 4))], ["close"], "gesvd N")

    # ---- geev
    add("eig", lambda a: jnp.linalg.eig(a), [rng.general(dt, (2, 4, 4))],
        ["close", "cols_phase"], "eig (right vectors), batched")
    add("eigvals", lambda a: jnp.linalg.eigvals(a), [rng.general(dt, (5, 5))], ["close"], "eigvals")
    add("eig_left", lambda a: tuple(lax.linalg.eig(a, compute_left_eigenvectors=True)),
        [rng.general(dt, (3, 3))], ["close", "cols_phase", "cols_phase"], "lax eig with left vectors")
    nan_in = rng.general(dt, (2, 3, 3))
    nan_in[1, 0, 2] = np.nan
    add("eig_nonfinite", lambda a: jnp.linalg.eig(a), [nan_in], ["close", "close"],
        "eig of a batch with a NaN entry: NaN outputs for that element only")
    add("eig_empty", lambda a: jnp.linalg.eig(a), [np.zeros((0, 0), dt)], ["close", "close"],
        "eig of a 0x0 matrix")

    # ---- gees
    def schur_invariants(a):
        t, z = jsl.schur(a)
        zh = jnp.conj(jnp.swapaxes(z, -1, -2))
        return z @ t @ zh, zh @ z, jnp.diagonal(t, axis1=-2, axis2=-1) if not real else t
    add("schur", schur_invariants, [rng.general(dt, (4, 4))], ["close", "close", "close"],
        "schur: Z T Z^H, Z^H Z and the Schur form (its diagonal for complex)")
    def schur_novec(a):
        # T alone is not unique (its strict upper part depends on rounding
        # along the QR iteration); its diagonal (eigenvalues, or the real
        # parts shared by a standardized 2x2 block) and its zero part are.
        t = lax.linalg.schur(a, compute_schur_vectors=False)[0]
        return jnp.diagonal(t, axis1=-2, axis2=-1), jnp.tril(t, -2 if real else -1)
    add("schur_novec", schur_novec, [rng.general(dt, (2, 3, 3)) @ rng.general(dt, (3, 3))],
        ["close", "close"], "schur without vectors (mode N): diag T and its zero part")
    add("schur_empty", lambda a: jsl.schur(a), [np.zeros((0, 0), dt)], ["close", "close"],
        "schur of a 0x0 matrix")
    add("sqrtm", lambda a: jsl.sqrtm(a), [rng.spd(dt, (4, 4))], ["close"],
        "sqrtm (complex gees)", tol=TOL[p] * 50)

    # ---- gehrd
    add("hessenberg", lambda a: jsl.hessenberg(a, calc_q=True), [rng.general(dt, (5, 5))],
        ["close", "close"], "scipy hessenberg with Q (gehrd + orgqr)")
    add("hessenberg_raw", lambda a: lax.linalg.hessenberg(a), [rng.general(dt, (2, 4, 4))],
        ["close", "close"], "lax hessenberg raw (reflectors, tau), batched")

    # ---- sytrd/hetrd
    add("tridiagonal_lower", lambda a: lax.linalg.tridiagonal(a), [rng.herm(dt, (2, 5, 5))],
        ["close"] * 4, "lax tridiagonal lower, batched")
    add("tridiagonal_upper", lambda a: lax.linalg.tridiagonal(a, lower=False), [rng.herm(dt, (4, 4))],
        ["close"] * 4, "lax tridiagonal upper")

    # ---- gtsv and the perturbed solve
    dl, du = rng.general(dt, (3, 5)), rng.general(dt, (3, 5))
    d = rng.general(dt, (3, 5)) + 4
    add("gtsv", lambda dl, d, du, b: lax.linalg.tridiagonal_solve(dl, d, du, b),
        [dl, d, du, rng.general(dt, (3, 5, 2))], ["close"], "tridiagonal_solve (gtsv), batched")
    sdl, sd, sdu = rng.general(dt, (2, 6)), rng.general(dt, (2, 6)), rng.general(dt, (2, 6))
    # Element 1 is exactly singular: two equal rows.
    sd[1, 0], sdu[1, 0], sdl[1, 1], sd[1, 1], sdu[1, 1] = 1, 2, 1, 2, 0
    sdl[1, 2] = 0
    add("tridiagonal_perturbed", lambda dl, d, du, b: lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True),
        [sdl, sd, sdu, rng.general(dt, (2, 6, 3))], ["close"],
        "tridiagonal_solve(perturb_singular=True), one exactly singular element", tol=TOL[p] * 10)
    zdl, zdu = rng.general(dt, (3, 5)), rng.general(dt, (3, 5))
    zd = np.zeros((3, 5), dt)
    zd[1] = -1e-30  # tiny negative pivots: perturbed towards -inf along the real axis
    zd[2, ::2] = 1e-41 if p in "sc" else 1e-310  # subnormal pivots: the rescaling path
    zdl[2] = 0
    zdu[2] = 0
    add("tridiagonal_perturbed_degenerate", lambda dl, d, du, b: lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True),
        [zdl, zd, zdu, rng.general(dt, (3, 5, 2))], ["close"],
        "perturbed solve: zero, tiny negative and subnormal pivots", tol=TOL[p] * 10)
    pdl, pd, pdu = rng.general(dt, (4,)), rng.general(dt, (4,)) + 3, rng.general(dt, (4,))
    add("tridiagonal_perturbed_wellcond", lambda dl, d, du, b: lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True),
        [pdl, pd, pdu, rng.general(dt, (4, 1))], ["close"], "perturbed solve of a regular system")
    if real:
        add("eigh_tridiagonal", lambda d, e: jsl.eigh_tridiagonal(d, e),
            [rng.general(dt, (6,)), rng.general(dt, (5,))], ["close", "cols_phase"],
            "eigh_tridiagonal with eigenvectors (perturbed solve + QR)", tol=TOL[p] * 10)

    # ---- CSR x dense
    dense = rng.general(dt, (5, 4))
    dense[np.abs(dense) < 0.8] = 0
    for idx in (np.int32, np.int64):
        m = sparse.BCSR.fromdense(jnp.asarray(dense), index_dtype=idx)
        tag = "i32" if idx == np.int32 else "i64"
        add(f"csr_matvec_{tag}", lambda data, indices, indptr, x: sparse.BCSR(
            (data, indices, indptr), shape=(5, 4)) @ x,
            [np.asarray(m.data), np.asarray(m.indices), np.asarray(m.indptr), rng.general(dt, (4,))],
            ["close"], f"BCSR ({tag} indices) @ vector")
        add(f"csr_matmat_{tag}", lambda data, indices, indptr, x: sparse.BCSR(
            (data, indices, indptr), shape=(5, 4)) @ x,
            [np.asarray(m.data), np.asarray(m.indices), np.asarray(m.indptr), rng.general(dt, (4, 3))],
            ["close"], f"BCSR ({tag} indices) @ matrix")
    return out


def _raw_qr(x):
    raw, taus = jnp.linalg.qr(x, mode="raw")
    return jnp.swapaxes(raw, -1, -2), taus


def integer_csr_programs(rng: Rng) -> list[Program]:
    out = []
    for dt, tag in ((np.int32, "s32"), (np.int64, "s64")):
        dense = rng.g.integers(-3, 4, size=(4, 6)).astype(dt)
        dense[rng.g.random((4, 6)) < 0.5] = 0
        m = sparse.BCSR.fromdense(jnp.asarray(dense))
        out.append(Program(
            f"csr_matmat_{tag}",
            lambda data, indices, indptr, x: sparse.BCSR((data, indices, indptr), shape=(4, 6)) @ x,
            [np.asarray(m.data), np.asarray(m.indices), np.asarray(m.indptr),
             rng.g.integers(-5, 6, size=(6, 2)).astype(dt)],
            ["exact"], f"BCSR with {tag} values @ matrix", None))
    return out


def large_programs(rng: Rng) -> list[Program]:
    """Single real matrices of order well above the ones the Rust kernels
    serve, so eigh runs LAPACK's own syevd (sytrd, stedc, ormtr) and svd
    gesdd. The matrix is made in the program (uniform bits from a fixed key,
    the same on any XLA), so the files stay small; the vectors are checked
    through invariants computed in the program (max |A V - V diag(w)|,
    max |V^T V - I|, ...), zero up to rounding, whatever the ties and
    signs."""
    del rng  # the programs draw their own matrices
    out = []
    for p in "sd":
        dt = DTYPES[p]
        # 200 and 193 run syevd whole; 352 and 512 run plugin-glue's split
        # syevd (lapack::syevd::split) when no other LAPACK call holds the
        # threads, 512 with dsytrd on OpenBLAS threads.
        for uplo, n in (("L", 200), ("U", 193), ("U", 352), ("L", 512)):
            def eigh_invariants(scale, uplo=uplo, n=n, dt=dt):
                g = jax.random.uniform(jax.random.key(n), (n, n), dtype=dt, minval=-1, maxval=1)
                a = scale * (g + g.T) / 2
                w, v = jnp.linalg.eigh(a, UPLO=uplo)
                return (w, jnp.max(jnp.abs(a @ v - v * w)),
                        jnp.max(jnp.abs(v.T @ v - jnp.eye(n, dtype=dt))))
            size = "" if n < 300 else f"_{n}"
            out.append(Program(
                f"eigh_large{size}_{uplo.lower()}_{p}", eigh_invariants, [np.asarray(1.0, dt)],
                ["close", "close", "close"],
                f"eigh UPLO={uplo} of one {n}x{n} matrix, by its invariants", tol=TOL[p] * 5))
        # Square SVDs of the size plugin-glue's split gesdd (lapack::gesdd::
        # split) takes, in both modes: max |A V - U diag(s)|, max |U^T U - I|
        # and max |V^T V - I|.
        for full, n in ((True, 352), (False, 512)):
            def svd_invariants(scale, full=full, n=n, dt=dt):
                a = scale * jax.random.uniform(jax.random.key(n + 1), (n, n), dtype=dt,
                                               minval=-1, maxval=1)
                u, s, vt = jnp.linalg.svd(a, full_matrices=full)
                eye = jnp.eye(n, dtype=dt)
                return (s, jnp.max(jnp.abs(a @ vt.T - u * s)),
                        jnp.max(jnp.abs(u.T @ u - eye)), jnp.max(jnp.abs(vt @ vt.T - eye)))
            out.append(Program(
                f"svd_large_{n}_{'a' if full else 's'}_{p}", svd_invariants, [np.asarray(1.0, dt)],
                ["close"] * 4,
                f"svd (full_matrices={full}) of one {n}x{n} matrix, by its invariants",
                tol=TOL[p] * 5))
    return out


def sequence_programs(rng: Rng) -> list[Program]:
    """Programs whose LAPACK calls must run in a fixed order; the CLI test
    (host/app/tests/cli_lapack.rs) runs them, each in a process of its own."""
    n = 48  # above the order up to which real eigh bypasses OpenBLAS
    a64 = rng.herm(np.float64, (n, n))
    a64[3, 5] = a64[5, 3] = np.nan
    a32 = rng.herm(np.float32, (n, n))

    def nan_f64_then_f32(a64, a32):
        w64 = jnp.linalg.eigvalsh(a64)
        # The barrier orders the f32 call after the f64 one.
        w64, a32 = lax.optimization_barrier((w64, a32))
        return w64, jnp.linalg.eigvalsh(a32)

    return [Program("cli_eigvalsh_nan_f64_then_f32", nan_f64_then_f32, [a64, a32],
                    ["close", "close"],
                    "eigvalsh of an f64 matrix holding NaN, then of a clean f32 one", None)]


def describe(arr: np.ndarray, file: str) -> dict:
    return {"file": file, "dtype": str(arr.dtype), "xla_dtype": XLA_DTYPE_NAMES[str(arr.dtype)],
            "shape": list(arr.shape)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT)
    ap.add_argument("--only", default="", help="only programs whose name contains this")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    rng = Rng(SEED)
    progs = []
    for p in "sdcz":
        progs += [(p, prog) for prog in programs_for(p, rng)]
    progs += [("d" if "s64" in prog.name else "s", prog) for prog in integer_csr_programs(rng)]
    progs += [("s", prog) for prog in sequence_programs(rng)]
    progs += [(prog.name[-1], prog) for prog in large_programs(rng)]

    manifest = {
        "generator": "tests/gen_lapack_programs.py",
        "regenerate": ".venv/bin/python tests/gen_lapack_programs.py",
        "jax_version": jax.__version__,
        "programs": [],
    }
    for p, prog in progs:
        if args.only and args.only not in prog.name:
            continue
        jargs = [jnp.asarray(a) for a in prog.args]
        exp = export.export(jax.jit(prog.fn), platforms=["cpu"], disabled_checks=DISABLED)(*jargs)
        text = exp.mlir_module()
        targets = sorted(set(re.findall(r"stablehlo\.custom_call @([A-Za-z0-9_]+)", text)))
        results = jax.jit(prog.fn)(*jargs)
        results = results if isinstance(results, (tuple, list)) else (results,)
        results = [np.asarray(r) for r in results]
        if len(results) != len(prog.modes):
            raise SystemExit(f"{prog.name}: {len(results)} outputs but {len(prog.modes)} modes")
        (args.out / f"{prog.name}.mlir").write_text(text)
        entry = {
            "name": prog.name,
            "description": prog.description,
            "mlir": f"{prog.name}.mlir",
            "targets": targets,
            "tolerance": prog.tol if prog.tol is not None else TOL[p],
            "inputs": [],
            "outputs": [],
        }
        for k, a in enumerate(prog.args):
            f = f"{prog.name}.in{k}.npy"
            np.save(args.out / f, np.asarray(a))
            entry["inputs"].append(describe(np.asarray(a), f))
        for k, (r, mode) in enumerate(zip(results, prog.modes)):
            f = f"{prog.name}.out{k}.npy"
            np.save(args.out / f, r)
            entry["outputs"].append(describe(r, f) | {"compare": mode})
        manifest["programs"].append(entry)
        print(f"{prog.name}: {', '.join(targets) or '(no custom call)'}", file=sys.stderr)
    if not args.only:
        (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
        written = {e["mlir"] for e in manifest["programs"]}
        written |= {f["file"] for e in manifest["programs"] for f in e["inputs"] + e["outputs"]}
        for stale in list(args.out.glob("*.mlir")) + list(args.out.glob("*.npy")):
            if stale.name not in written:
                stale.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
