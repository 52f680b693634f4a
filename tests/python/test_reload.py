"""Hot reload in a running JAX process on cyxla: the jitted program is
compiled once; the guest behind its target changes under it.

`hot` is served first by copy16's code (y = x), then by scale_any's (y =
factor * x, factor = 3): two modules that declare the same target (an extra
`cyxla.targets` record appended to a bundled module).
"""

from __future__ import annotations

import subprocess
import textwrap

from support import HOST, ROOT, VENV_PYTHON, clean_env
from support import with_target

GUESTS = ROOT / "guests" / "out"

SCRIPT = textwrap.dedent("""
    import os, sys, time, threading
    import numpy as np
    import jax
    folder = sys.argv[1]
    hot = os.path.join(folder, "hot.wasm")
    x = np.arange(16, dtype=np.float32)

    def call(x):
        return jax.ffi.ffi_call("hot", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, factor=3.0)

    f = jax.jit(call)
    def run():
        try:
            return np.asarray(f(x)).tolist()
        except Exception as e:
            return "error: " + str(e).splitlines()[0]

    def put(data, partial=False):
        # as an operator copies a file in: written in place
        with open(hot, "wb") as out:
            out.write(data)

    def until(want, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            got = run()
            if want(got):
                return got
            time.sleep(0.05)
        raise SystemExit(f"timed out waiting; last result {got}")

    A, B = open(sys.argv[2], "rb").read(), open(sys.argv[3], "rb").read()
    print("START", run()[:3])
    put(B)
    print("NEW", until(lambda r: isinstance(r, list) and r[1] == 3.0)[:3])
    # a broken version: rejected, B keeps serving
    put(b"\\0asm\\1\\0\\0\\0 this is not a module")
    time.sleep(1.0)
    print("BROKEN", run()[:3])
    # half a module, left for longer than the settling time, then completed
    put(A[: len(A) // 2])
    time.sleep(1.0)
    print("HALF", run()[:3])
    put(A)
    print("BACK", until(lambda r: isinstance(r, list) and r[1] == 1.0)[:3])
    # several devices calling while the file changes: each result is all
    # old or all new, never a mix, never a crash
    n = len(jax.devices())
    xs = np.tile(x, (n, 1))
    g = jax.pmap(call)
    stop = threading.Event()
    bad = []
    count = [0]
    def hammer():
        while not stop.is_set():
            rows = np.asarray(g(xs))
            for row in rows:
                if not (np.array_equal(row, x) or np.array_equal(row, 3 * x)):
                    bad.append(row.tolist())
            count[0] += 1
    t = threading.Thread(target=hammer)
    t.start()
    for i in range(6):
        put(B if i % 2 == 0 else A)
        time.sleep(0.4)
    stop.set()
    t.join()
    print("DEVICES", n, "ROUNDS", count[0], "MIXED", len(bad))
    # a new module with a new target: callable by programs compiled after it
    put(A)
    with open(os.path.join(folder, "fresh.wasm"), "wb") as out:
        out.write(open(sys.argv[4], "rb").read())
    time.sleep(1.0)
    y = jax.jit(lambda x: jax.ffi.ffi_call("fresh_target", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, factor=2.0))(x)
    print("FRESH", np.asarray(y).tolist()[:3])
    # removed: the call fails, naming the file
    os.remove(hot)
    print("REMOVED", until(lambda r: isinstance(r, str))[:200])
""")


def test_hot_reload_in_a_running_jax_process(tmp_path):
    folder = tmp_path / "guests"
    folder.mkdir()
    a = with_target((GUESTS / "copy16.wasm").read_bytes(), "hot", "copy16")
    b = with_target((GUESTS / "scale_any.wasm").read_bytes(), "hot", "scale_any")
    fresh = with_target((GUESTS / "scale_any.wasm").read_bytes(), "fresh_target", "scale_any")
    (folder / "hot.wasm").write_bytes(a)
    for name, data in (("a.bin", a), ("b.bin", b), ("fresh.bin", fresh)):
        (tmp_path / name).write_bytes(data)
    (tmp_path / "script.py").write_text(SCRIPT)
    argv = [str(HOST), "--guests", str(folder), "--allow-all", "--", str(VENV_PYTHON), str(tmp_path / "script.py"),
            str(folder), str(tmp_path / "a.bin"), str(tmp_path / "b.bin"), str(tmp_path / "fresh.bin")]
    r = subprocess.run(argv, env=clean_env({"CYXLA_LOG": "cyxla_sandbox=info"}), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr[-4000:]
    out = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    assert out["START"] == "[0.0, 1.0, 2.0]", r.stdout
    assert out["NEW"] == "[0.0, 3.0, 6.0]", r.stdout
    assert out["BROKEN"] == "[0.0, 3.0, 6.0]", r.stdout
    assert out["HALF"] == "[0.0, 3.0, 6.0]", r.stdout
    assert out["BACK"] == "[0.0, 1.0, 2.0]", r.stdout
    devices, rounds, mixed = out["DEVICES"].split()[0], out["DEVICES"].split()[2], out["DEVICES"].split()[4]
    assert devices == "4" and int(rounds) > 5 and mixed == "0", r.stdout
    assert out["FRESH"] == "[0.0, 2.0, 4.0]", r.stdout
    assert "hot.wasm was removed" in out["REMOVED"] and "UNAVAILABLE" in out["REMOVED"], r.stdout
    # the broken and the half-written versions were rejected with a log line naming the file
    rejected = [line for line in r.stderr.splitlines() if "hot.wasm: the new version is rejected" in line]
    assert len(rejected) >= 2, r.stderr[-4000:]


RELOADS = textwrap.dedent("""
    import json, os, sys, time
    import numpy as np
    import jax
    folder, metrics = sys.argv[1], sys.argv[2]
    x = np.arange(16, dtype=np.float32)
    jax.ffi.ffi_call("copy16", jax.ShapeDtypeStruct(x.shape, x.dtype))(x).block_until_ready()
    os.utime(os.path.join(folder, "copy16.wasm"))  # one change
    time.sleep(4)
    [name] = os.listdir(metrics)
    print("RELOADED", json.load(open(os.path.join(metrics, name)))["events"]["guests_reloaded"])
""")


def test_one_change_is_one_reload(tmp_path):
    """A reload reads the module; that read is not a change that reloads it
    again (it did: a guest touched once was reloaded every 300 ms, for as
    long as the process ran)."""
    folder, metrics = tmp_path / "guests", tmp_path / "metrics"
    folder.mkdir()
    metrics.mkdir()
    (folder / "copy16.wasm").write_bytes((GUESTS / "copy16.wasm").read_bytes())
    r = subprocess.run(
        [str(HOST), "--guests", str(folder), "--allow", "copy16", "--", str(VENV_PYTHON), "-c", RELOADS,
         str(folder), str(metrics)],
        env=clean_env({"CYXLA_METRICS": str(metrics), "CYXLA_STATS_INTERVAL": "100ms"}),
        capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert r.stdout.splitlines()[-1] == "RELOADED 1", r.stdout + r.stderr[-3000:]
