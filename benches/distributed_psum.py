#!/usr/bin/env python3
"""Time of one cross-process psum on JAX's cpu platform (gloo), with and
without a guest call in the same step.

Run from the repository root, after scripts/setup.sh and `cargo build
--workspace`:

    .venv/bin/python benches/distributed_psum.py [--processes 2] [--calls 200]

Starts N processes on localhost under `cyxla-host --platform cpu`, joined
by jax.distributed (gloo), one device each. Each step is a jitted shard_map
over the global mesh: `psum(x)`, or `psum(rms_norm(x))` with the rms_norm
guest. Process 0 prints the median time per step over rounds.
"""

from __future__ import annotations

import argparse
import pathlib
import socket
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

WORKER = r"""
import statistics, sys, time
import numpy as np
import jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
port, n, pid, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=n, process_id=pid,
                           initialization_timeout=120, heartbeat_timeout_seconds=30, shutdown_timeout_seconds=60)
mesh = Mesh(np.array(jax.devices()), ("d",))
def rms_norm(x):
    return jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, eps=np.float32(1e-5))
def make(body):
    return jax.jit(jax.shard_map(lambda x: jax.lax.psum(body(x), "d"), mesh=mesh, in_specs=P("d"),
                                 out_specs=P(), check_vma=False))
x = np.ones((len(jax.devices()) * 4, 64), np.float32)
xs = jax.make_array_from_callback(x.shape, NamedSharding(mesh, P("d")), lambda i: x[i])
variants = {"psum": make(lambda x: x), "rms_norm guest + psum": make(rms_norm)}
times = {k: [] for k in variants}
for f in variants.values():
    for _ in range(20):
        f(xs).block_until_ready()
for r in range(7):
    for name, f in variants.items():
        t0 = time.perf_counter()
        for _ in range(calls):
            f(xs).block_until_ready()
        times[name].append((time.perf_counter() - t0) / calls)
if pid == 0:
    for name, t in times.items():
        print(f"{name:<24} {statistics.median(t) * 1e6:8.1f} us/step (min {min(t) * 1e6:.1f})", flush=True)
"""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--processes", type=int, default=2)
    p.add_argument("--calls", type=int, default=200)
    args = p.parse_args()
    host = ROOT / "target" / "debug" / "cyxla-host"
    python = ROOT / ".venv" / "bin" / "python"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [
        subprocess.Popen([str(host), "--platform", "cpu", "--devices", "1", "--allow", "rms_norm", "--",
                          str(python), "-c", WORKER, str(port), str(args.processes), str(i), str(args.calls)],
                         stdout=subprocess.PIPE if i else None, stderr=subprocess.DEVNULL)
        for i in range(args.processes)
    ]
    try:
        codes = [p.wait(timeout=600) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    print(f"{args.processes} processes on localhost, gloo, one cpu device each; exit codes {codes}")
    return max(codes)


if __name__ == "__main__":
    sys.exit(main())
