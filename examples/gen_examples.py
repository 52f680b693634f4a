#!/usr/bin/env python3
"""Generates the bundled examples that scripts/demo.sh runs with cyxla-host.

Run from the workspace root:

    .venv/bin/python examples/gen_examples.py

Writes, next to this script:

* ``linalg.mlir``: ``f(a, b) = (jnp.linalg.solve(a, b), jnp.linalg.det(a),
  jnp.linalg.inv(a))`` on a 4×4 float64 matrix, lowered by ``jax.export``
  for the CPU platform. Its StableHLO calls jaxlib's LAPACK targets
  ``lapack_dgetrf_ffi`` and ``lapack_dtrsm_ffi``, which a bare XLA CPU
  plugin does not have and cyxla-host serves natively;
* ``linalg.a.npy``, ``linalg.b.npy``: the inputs, chosen so that the
  results are easy to read: x = [1, 2, 3, 4] and det(a) = 209;
* ``linalg.out0.npy`` ... ``linalg.out2.npy``: JAX's own results on its CPU
  backend, for comparison.
"""

from __future__ import annotations

import os
import pathlib
import re
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import export  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_traceback_in_locations_limit", 0)

HERE = pathlib.Path(__file__).resolve().parent


def linalg(a, b):
    return jnp.linalg.solve(a, b), jnp.linalg.det(a), jnp.linalg.inv(a)


def main() -> int:
    a = np.array([[4.0, 1.0, 0.0, 0.0],
                  [1.0, 4.0, 1.0, 0.0],
                  [0.0, 1.0, 4.0, 1.0],
                  [0.0, 0.0, 1.0, 4.0]])
    x = np.array([1.0, 2.0, 3.0, 4.0])
    b = a @ x
    exp = export.export(jax.jit(linalg), platforms=["cpu"])(a, b)
    text = exp.mlir_module()
    (HERE / "linalg.mlir").write_text(text)
    np.save(HERE / "linalg.a.npy", a)
    np.save(HERE / "linalg.b.npy", b)
    for k, r in enumerate(jax.jit(linalg)(a, b)):
        np.save(HERE / f"linalg.out{k}.npy", np.asarray(r))
    targets = sorted(set(re.findall(r"stablehlo\.custom_call @([A-Za-z0-9_]+)", text)))
    print(f"linalg.mlir: {', '.join(targets)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
