"""jax.distributed on JAX's own ``cpu`` platform with gloo collectives, on
localhost: every process serves its guests on its local devices (under
``cyxla-host --platform cpu``), and one jitted computation over the global
mesh calls a guest on every shard and combines the shards with ``psum`` and
``all_gather`` across processes. Results equal the same program in one
process, and JAX's reference code.

A guest that traps on one process: that process's call raises the usual
JaxRuntimeError at once; the others wait in the collective for it. Nothing
in gloo ends that wait; what ends it is jax.distributed: when the trapping
process exits, its shutdown barrier times out after
``shutdown_timeout_seconds`` (300 s by default; 20 s here) and the
coordination service terminates every process ("Terminating process because
the JAX distributed service detected fatal errors"); a process that dies
without shutting down is declared dead after ``heartbeat_timeout_seconds``
(100 s by default; 10 s here), with the same outcome.
"""

from __future__ import annotations

import json
import socket
import subprocess
import textwrap
import time

import numpy as np
import pytest

from support import HOST, VENV_PYTHON, clean_env

# Bounds of the test (generous): every process of a run must have ended by then.
RUN_TIMEOUT = 300

WORKER = textwrap.dedent(r"""
    import json, sys, time
    import numpy as np
    import jax, jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    port, nproc, pid, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    if nproc > 1:
        jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=nproc,
                                   process_id=pid, initialization_timeout=120,
                                   heartbeat_timeout_seconds=10, shutdown_timeout_seconds=20)
    EPS = np.float32(1e-5)

    def rms_norm(x):
        return jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, eps=EPS)

    def trap(x):
        return jax.ffi.ffi_call("trap", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    devices = jax.devices()
    mesh = Mesh(np.array(devices), ("d",))
    x = np.random.default_rng(0).standard_normal((2 * len(devices), 8)).astype(np.float32)

    def step(x):
        if mode == "trap":  # the guest traps on device 0 (process 0's) only
            y = jax.lax.cond(jax.lax.axis_index("d") == 0, trap, rms_norm, x)
        else:
            y = rms_norm(x)
        return jax.lax.psum(jnp.sum(y, axis=0), "d"), jax.lax.all_gather(y, "d", tiled=True)

    f = jax.jit(jax.shard_map(step, mesh=mesh, in_specs=P("d"), out_specs=(P(), P()), check_vma=False))
    xs = jax.make_array_from_callback(x.shape, NamedSharding(mesh, P("d")), lambda idx: x[idx])
    report = {"process_index": jax.process_index(), "process_count": jax.process_count(),
              "devices": len(devices), "local_devices": len(jax.local_devices()),
              "platforms": sorted({d.platform for d in devices}), "x": x.tolist()}
    print("STEP", flush=True)
    try:
        s, g = f(xs)
        report["psum"] = np.asarray(s.addressable_data(0)).tolist()
        report["all_gather"] = np.asarray(g.addressable_data(0)).tolist()
    except Exception as e:
        report["error_type"] = type(e).__name__
        report["error"] = str(e)[:2000]
    print("REPORT " + json.dumps(report), flush=True)
""")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_processes(tmp_path, nproc: int, mode: str, devices_per_process: int = 2):
    """Starts `nproc` workers under `cyxla-host --platform cpu`; returns each
    one's (exit code, stdout, stderr, seconds), all bounded by RUN_TIMEOUT."""
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    port = free_port()
    start = time.monotonic()
    procs = [
        subprocess.Popen(
            [str(HOST), "--platform", "cpu", "--allow", "rms_norm,trap", "--devices", str(devices_per_process),
             "--limit", "call_timeout=5s", "--", str(VENV_PYTHON), str(script), str(port), str(nproc), str(i),
             mode],
            env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            stdin=subprocess.DEVNULL,
        )
        for i in range(nproc)
    ]
    outs = []
    try:
        for p in procs:
            try:
                out, err = p.communicate(timeout=max(1.0, start + RUN_TIMEOUT - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
                pytest.fail(f"a process outlived {RUN_TIMEOUT} s:\n{out[-3000:]}\n{err[-3000:]}")
            outs.append((p.returncode, out, err, time.monotonic() - start))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return outs


def reports(outs):
    found = []
    for i, (rc, out, err, _) in enumerate(outs):
        line = next((l for l in out.splitlines() if l.startswith("REPORT ")), None)
        assert line and rc == 0, f"process {i}: exit {rc}\n{out[-3000:]}\n{err[-5000:]}"
        found.append(json.loads(line[len("REPORT "):]))
    return found


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    """The reference: the same program in one process, 8 devices."""
    return reports(run_processes(tmp_path_factory.mktemp("one"), 1, "ok", devices_per_process=8))[0]


def np_rms_norm(x):
    x64 = x.astype(np.float64)
    return x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + 1e-5)


@pytest.mark.parametrize("nproc", [2, 4])
def test_global_mesh_guest_psum_all_gather(tmp_path, one_process, nproc):
    got = reports(run_processes(tmp_path, nproc, "ok", devices_per_process=8 // nproc))
    for i, r in enumerate(got):
        assert "error" not in r, r.get("error")
        assert (r["process_index"], r["process_count"]) == (i, nproc), r
        assert r["devices"] == 8 and r["local_devices"] == 8 // nproc and r["platforms"] == ["cpu"], r
        # every process holds the same combined result, equal to one process's
        np.testing.assert_array_equal(np.asarray(r["all_gather"], np.float32), np.asarray(one_process["all_gather"], np.float32))
        np.testing.assert_allclose(r["psum"], one_process["psum"], rtol=1e-5, atol=1e-5)
    # and to JAX-free reference code
    x = np.asarray(one_process["x"], np.float32)
    np.testing.assert_allclose(one_process["all_gather"], np_rms_norm(x), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(one_process["psum"], np_rms_norm(x).sum(axis=0), rtol=1e-5, atol=1e-5)


def test_trap_on_one_process(tmp_path):
    outs = run_processes(tmp_path, 2, "trap")
    (rc0, out0, err0, t0), (rc1, out1, err1, t1) = outs
    desc = "\n".join(f"process {i}: exit {o[0]} after {o[3]:.0f} s\n{o[1][-2000:]}\n{o[2][-3000:]}"
                     for i, o in enumerate(outs))
    # The trapping process: the usual JaxRuntimeError, naming target and guest.
    line = next((l for l in out0.splitlines() if l.startswith("REPORT ")), None)
    assert line, desc
    r0 = json.loads(line[len("REPORT "):])
    assert r0.get("error_type") == "JaxRuntimeError", desc
    assert "target `trap` (guest trap.wasm)" in r0["error"] and "unreachable" in r0["error"], desc
    # The other: reached the step, and waited in the collective (no result).
    assert "STEP" in out1 and "REPORT" not in out1, desc
    # Nobody hangs: when process 0 exits, its shutdown barrier times out
    # (shutdown_timeout_seconds=20) and jax.distributed terminates both.
    assert max(t0, t1) < 20 + 10 + 120, desc
    assert "JAX distributed service detected fatal errors" in err1, desc
