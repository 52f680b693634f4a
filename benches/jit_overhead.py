#!/usr/bin/env python3
"""What going through the cyxla PJRT plugin adds to one jax.jit call.

Run from the repository root, after scripts/setup.sh:

    .venv/bin/python benches/jit_overhead.py [--rounds 15] [--calls 300]
                                             [--library target/release/libcyxla_pjrt.so]

It builds what it loads first (`cargo build -p cyxla-pjrt -p cyxla-tests`:
the plugin library and the native test handlers).

In one process, JAX has two backends on the same real XLA CPU plugin:

* ``cyxla``   the plugin library (libcyxla_pjrt.so), wrapping the real plugin,
* ``realcpu`` the real plugin registered directly
              (``jax._src.xla_bridge.register_plugin``).

Variants, each a jitted function on a small array, its result blocked on:

* ``x + 1``                 on realcpu and on cyxla: the plugin's cost per call,
* ``copy16`` (guest)         on cyxla: ffi_call to the sandboxed copy16 guest,
* ``noop`` (guest)           on cyxla: a guest call that does nothing,
* ``copy16`` (native)        on cyxla: the same kernel as a trusted native
                             handler (tests/native/test_handlers.cc),
* ``x + 1``, ``copy16`` and ``noop`` (guests) on ``cpu``: JAX's own CPU
                             backend, the guests served on it
                             (``jax_plugins.cyxla.serve_on_cpu``).

The variants run interleaved in rounds (the machine is shared: compare
within one run); the table gives the median time per call over the rounds,
the difference with ``x + 1`` on realcpu and the ratio.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
REAL_PLUGIN = ROOT / ".venv/lib/python3.11/site-packages/lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so"


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--calls", type=int, default=300, help="calls per variant per round")
    p.add_argument("--library", default=None,
                   help="the cyxla plugin library; default: the debug build, built first")
    p.add_argument("--plugin", default=str(REAL_PLUGIN), help="the real XLA CPU plugin")
    return p.parse_args()


def build() -> tuple[str, str]:
    """Builds the plugin library and the native test handlers (debug profile);
    returns their paths as cargo reports them."""
    argv = ["cargo", "build", "-p", "cyxla-pjrt", "-p", "cyxla-tests", "--message-format=json"]
    r = subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"`{' '.join(argv)}` failed (exit code {r.returncode}); run scripts/setup.sh first")
    library = handlers = None
    for line in r.stdout.splitlines():
        msg = json.loads(line) if line.startswith("{") else {}
        if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "cyxla_pjrt":
            library = next(f for f in msg["filenames"] if f.endswith(".so"))
        if msg.get("reason") == "build-script-executed" and "#cyxla-tests@" in msg["package_id"]:
            handlers = os.path.join(msg["out_dir"], "libcyxla_test_handlers.so")
    if not library or not handlers or not os.path.exists(handlers):
        sys.exit(f"`{' '.join(argv)}` did not report the plugin library and the test handlers")
    return library, handlers


def main() -> int:
    args = parse()
    library, handlers = build()
    args.library = args.library or library
    for path in (args.library, args.plugin):
        if not os.path.exists(path):
            sys.exit(f"{path} is missing: run scripts/setup.sh")
    # before JAX is imported
    os.environ["CYXLA_PJRT_LIBRARY"] = args.library
    os.environ["CYXLA_PJRT_PLUGIN"] = args.plugin
    os.environ["CYXLA_ALLOW"] = "copy16,noop"
    os.environ["JAX_PLATFORMS"] = "cyxla,realcpu,cpu"
    os.environ.pop("CYXLA_CONFIG", None)

    import numpy as np
    import jax
    from jax._src import xla_bridge

    xla_bridge.register_plugin("realcpu", library_path=args.plugin)

    import jax_plugins.cyxla

    jax_plugins.cyxla.serve_on_cpu()
    cyxla = jax.devices("cyxla")[0]
    real = jax.devices("realcpu")[0]
    cpu = jax.devices("cpu")[0]

    native = handlers
    lib = ctypes.cdll.LoadLibrary(handlers)
    jax.ffi.register_ffi_target("bench_native_copy16", jax.ffi.pycapsule(lib.cyxla_test_copy16),
                                platform="cpu")

    x16 = np.arange(16, dtype=np.float32)
    spec = jax.ShapeDtypeStruct((16,), np.float32)

    add_one = jax.jit(lambda x: x + 1)
    copy16 = jax.jit(lambda x: jax.ffi.ffi_call("copy16", spec)(x))
    # noop writes nothing: its f32[16] result is whatever the buffer held
    # (not checked). Without a result XLA would need has_side_effect=True to
    # keep the call, and JAX's side-effect tokens cost more than the call.
    noop = jax.jit(lambda x: jax.ffi.ffi_call("noop", spec)(x))
    variants = {
        "x + 1 on realcpu": (add_one, jax.device_put(x16, real)),
        "x + 1 on cyxla": (add_one, jax.device_put(x16, cyxla)),
        "copy16 guest on cyxla": (copy16, jax.device_put(x16, cyxla)),
        "noop guest on cyxla": (noop, jax.device_put(x16, cyxla)),
    }
    nat = jax.jit(lambda x: jax.ffi.ffi_call("bench_native_copy16", spec)(x))
    variants["copy16 native on cyxla"] = (nat, jax.device_put(x16, cyxla))
    variants["x + 1 on cpu"] = (add_one, jax.device_put(x16, cpu))
    variants["copy16 guest on cpu"] = (copy16, jax.device_put(x16, cpu))
    variants["noop guest on cpu"] = (noop, jax.device_put(x16, cpu))

    # warm up: compile, check results
    for name, (f, x) in variants.items():
        for _ in range(20):
            y = f(x).block_until_ready()
        if "noop" not in name:
            want = x16 if "copy16" in name else x16 + 1
            assert np.array_equal(np.asarray(y), want), (name, y)

    times: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for r in range(args.rounds):
        order = names if r % 2 == 0 else names[::-1]
        for name in order:
            f, x = variants[name]
            t0 = time.perf_counter()
            for _ in range(args.calls):
                f(x).block_until_ready()
            times[name].append((time.perf_counter() - t0) / args.calls)

    base = statistics.median(times["x + 1 on realcpu"])
    print(f"jit call overhead: {args.rounds} rounds x {args.calls} calls, load {os.getloadavg()[0]:.2f}")
    print(f"library {args.library}")
    print(f"real plugin {args.plugin}")
    print(f"native handlers {native}")
    print()
    print(f"{'variant':<30} {'median us/call':>15} {'min':>8} {'max':>8} {'- realcpu us':>13} {'ratio':>7}")
    for name in names:
        t = times[name]
        med = statistics.median(t)
        print(f"{name:<30} {med * 1e6:>15.1f} {min(t) * 1e6:>8.1f} {max(t) * 1e6:>8.1f} "
              f"{(med - base) * 1e6:>13.1f} {med / base:>7.2f}")
    cy = statistics.median(times["x + 1 on cyxla"])
    g = statistics.median(times["copy16 guest on cyxla"])
    print()
    print(f"plugin overhead per jit call: {(cy - base) * 1e6:.1f} us ({cy / base:.2f}x)")
    n = statistics.median(times["noop guest on cyxla"])
    print(f"guest copy16 call vs x + 1 on cyxla: +{(g - cy) * 1e6:.1f} us; noop guest: +{(n - cy) * 1e6:.1f} us")
    c = statistics.median(times["x + 1 on cpu"])
    gc = statistics.median(times["copy16 guest on cpu"])
    nc = statistics.median(times["noop guest on cpu"])
    print(f"guest copy16 call vs x + 1 on cpu: +{(gc - c) * 1e6:.1f} us; noop guest: +{(nc - c) * 1e6:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
