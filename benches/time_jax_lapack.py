#!/usr/bin/env python3
"""Times the LAPACK bench programs on JAX's own CPU backend (jaxlib's LAPACK).

Started by benches/benches/lapack.rs as a subprocess, so that both sides are
measured in one run, interleaved:

    .venv/bin/python benches/time_jax_lapack.py DIR

DIR holds what ``benches/gen_lapack_bench_programs.py --out DIR`` wrote. For
every program of ``DIR/manifest.json`` this script exports the generator's
function again and checks that its StableHLO text is byte-identical to
``DIR/<name>.mlir`` (the file cyxla-host compiles), so both sides run the
same lowered program. It jits ``Exported.call``, puts the inputs (read from
the ``.npy`` files) on the CPU device, warms up (compile and two calls) and
prints one JSON line: ``{"ready": [names], "jax": version, "openblas":
description of scipy's OpenBLAS, which jaxlib's LAPACK calls, ...}``.

Then it answers requests on stdin, one per line:

* ``NAME ITERS``: runs the program ITERS times back to back, each call
  followed by ``block_until_ready`` on its outputs, and prints the mean
  seconds per call;
* ``quit`` (or end of input): exits.
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import pathlib
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import jax  # noqa: E402

import gen_lapack_bench_programs as gen  # noqa: E402


def openblas() -> str:
    """The OpenBLAS that jaxlib's LAPACK calls (scipy's), and its kernels."""
    import scipy
    libs = glob.glob(os.path.join(os.path.dirname(scipy.__file__), os.pardir, "scipy.libs",
                                  "libscipy_openblas*.so"))
    if not libs:
        return "unknown (no scipy.libs/libscipy_openblas*.so)"
    lib = ctypes.CDLL(libs[0])
    info = []
    for name in ("scipy_openblas_get_config", "scipy_openblas_get_corename"):
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = ctypes.c_char_p
            info.append(fn().decode())
    fn = getattr(lib, "scipy_openblas_get_num_threads", None)
    if fn is not None:
        info.append(f"{fn()} threads")
    return ", ".join(info)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = pathlib.Path(sys.argv[1])
    manifest = json.loads((out / "manifest.json").read_text())
    by_name = {p[0]: p for p in gen.programs(np.random.default_rng(gen.SEED))}
    device = jax.devices("cpu")[0]
    runs = {}
    for entry in manifest["programs"]:
        name = entry["name"]
        if name not in by_name:
            raise SystemExit(f"{name}: not a program of {gen.__file__}")
        fn = by_name[name][2]
        inputs = [np.load(out / t["file"]) for t in entry["inputs"]]
        exp = gen.export_program(fn, inputs)
        if exp.mlir_module() != (out / entry["mlir"]).read_text():
            raise SystemExit(
                f"{name}: the program exported here differs from {out / entry['mlir']}: "
                "regenerate it with the same JAX")
        call = jax.jit(exp.call)
        args = [jax.device_put(a, device) for a in inputs]
        for _ in range(3):
            jax.block_until_ready(call(*args))
        runs[name] = (call, args)
    print(json.dumps({
        "ready": list(runs),
        "jax": jax.__version__,
        "devices": [str(d) for d in jax.devices()],
        "openblas": openblas(),
    }), flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            break
        name, iters = words[0], int(words[1])
        call, args = runs[name]
        start = time.perf_counter()
        for _ in range(iters):
            jax.block_until_ready(call(*args))
        print(f"{(time.perf_counter() - start) / iters:.9f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
