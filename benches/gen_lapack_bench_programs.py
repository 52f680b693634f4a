#!/usr/bin/env python3
"""Generates the programs of the LAPACK bench (benches/benches/lapack.rs).

Run from the workspace root (the bench runs it itself, into a temporary
directory):

    .venv/bin/python benches/gen_lapack_bench_programs.py --out DIR

Every program is a JAX function on the CPU platform lowered once with
``jax.export``; both sides of the bench run that one lowering: cyxla-host
compiles its StableHLO text on the bare XLA CPU plugin with the native LAPACK
handlers, and ``benches/time_jax_lapack.py`` exports the same functions again
(checking that the StableHLO text is byte-identical to the file) and runs the
``Exported`` on JAX's own CPU backend (jaxlib's LAPACK). For each program DIR
receives:

* ``<name>.mlir``        StableHLO text (``Exported.mlir_module()``),
* ``<name>.in<k>.npy``   the k-th input (fixed seed),
* ``<name>.out<k>.npy``  the k-th output as JAX's CPU backend computes it,

and ``manifest.json``: per program its description, targets, goal (the
largest acceptable time ratio cyxla-host / JAX), inputs, outputs and which
outputs are unique enough to be compared (``check``: eigenvalues and
singular values, not the vectors).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
from jax import export  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_traceback_in_locations_limit", 0)

SEED = 20260809
# Size of the single-matrix programs and of the batched ones.
N_BIG = 512
BATCH, N_SMALL = 4096, 8
# Goals: time on cyxla-host's natives / time on JAX's CPU backend.
GOAL_BIG = 1.0
GOAL_BATCHED = 0.6
# Relative tolerance of the output check, by dtype.
TOL = {"float32": 1e-3, "float64": 1e-9}


def general(g, dt, shape):
    return g.standard_normal(shape).astype(dt)


def wellcond(g, dt, shape):
    n = shape[-1]
    return (g.standard_normal(shape) + n * np.eye(n)).astype(dt)


def spd(g, dt, shape):
    x = g.standard_normal(shape)
    n = shape[-1]
    return (x @ np.swapaxes(x, -1, -2) / n + np.eye(n)).astype(dt)


def sym(g, dt, shape):
    x = g.standard_normal(shape)
    return ((x + np.swapaxes(x, -1, -2)) / 2).astype(dt)


def programs(g):
    """(name, description, function, inputs, outputs to check, goal)."""
    out = []
    for dt, tag in ((np.float32, "f32"), (np.float64, "f64")):
        big = (N_BIG, N_BIG)
        out += [
            (f"getrf_{tag}_{N_BIG}", f"lu_factor of one {N_BIG}x{N_BIG} {tag} matrix",
             jsl.lu_factor, [general(g, dt, big)], [0, 1], GOAL_BIG),
            (f"potrf_{tag}_{N_BIG}", f"cholesky of one {N_BIG}x{N_BIG} {tag} matrix",
             jnp.linalg.cholesky, [spd(g, dt, big)], [0], GOAL_BIG),
            (f"gesdd_{tag}_{N_BIG}", f"svd of one {N_BIG}x{N_BIG} {tag} matrix",
             lambda a: jnp.linalg.svd(a, full_matrices=False), [general(g, dt, big)], [1],
             GOAL_BIG),
            (f"syevd_{tag}_{N_BIG}", f"eigh of one {N_BIG}x{N_BIG} {tag} matrix",
             jnp.linalg.eigh, [sym(g, dt, big)], [0], GOAL_BIG),
        ]
    for dt, tag in ((np.float32, "f32"), (np.float64, "f64")):
        small = (BATCH, N_SMALL, N_SMALL)
        out += [
            (f"solve_{tag}_{BATCH}x{N_SMALL}", f"solve of {BATCH} {N_SMALL}x{N_SMALL} {tag} systems",
             jnp.linalg.solve, [wellcond(g, dt, small), general(g, dt, (BATCH, N_SMALL, 1))],
             [0], GOAL_BATCHED),
            (f"inv_{tag}_{BATCH}x{N_SMALL}", f"inv of {BATCH} {N_SMALL}x{N_SMALL} {tag} matrices",
             jnp.linalg.inv, [wellcond(g, dt, small)], [0], GOAL_BATCHED),
            (f"eigh_{tag}_{BATCH}x{N_SMALL}", f"eigh of {BATCH} {N_SMALL}x{N_SMALL} {tag} matrices",
             jnp.linalg.eigh, [sym(g, dt, small)], [0], GOAL_BATCHED),
        ]
    return out


def export_program(fn, inputs):
    """``fn`` lowered for the CPU platform with ``jax.export`` on ``inputs``."""
    return export.export(jax.jit(fn), platforms=["cpu"])(*[jnp.asarray(a) for a in inputs])


def describe(arr: np.ndarray, file: str) -> dict:
    return {"file": file, "dtype": str(arr.dtype), "shape": list(arr.shape)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=pathlib.Path, required=True)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    g = np.random.default_rng(SEED)
    manifest = {
        "generator": "benches/gen_lapack_bench_programs.py",
        "jax_version": jax.__version__,
        "programs": [],
    }
    for name, description, fn, inputs, check, goal in programs(g):
        jargs = [jnp.asarray(a) for a in inputs]
        exp = export_program(fn, inputs)
        text = exp.mlir_module()
        targets = sorted(set(re.findall(r"stablehlo\.custom_call @([A-Za-z0-9_]+)", text)))
        results = exp.call(*jargs)
        results = results if isinstance(results, (tuple, list)) else (results,)
        (args.out / f"{name}.mlir").write_text(text)
        entry = {
            "name": name,
            "description": description,
            "mlir": f"{name}.mlir",
            "targets": targets,
            "goal": goal,
            "tolerance": TOL[str(inputs[0].dtype)],
            "check": check,
            "inputs": [],
            "outputs": [],
        }
        for k, a in enumerate(inputs):
            f = f"{name}.in{k}.npy"
            np.save(args.out / f, a)
            entry["inputs"].append(describe(a, f))
        for k, r in enumerate(results):
            r = np.asarray(r)
            f = f"{name}.out{k}.npy"
            np.save(args.out / f, r)
            entry["outputs"].append(describe(r, f))
        manifest["programs"].append(entry)
        print(f"{name}: {', '.join(targets)}", file=sys.stderr)
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
