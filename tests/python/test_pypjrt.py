"""pypjrt 0.1.1, a second real PJRT client, on libcyxla_pjrt.so.

The programs are lowered here by JAX (StableHLO text, platform cpu) and
handed to a subprocess that loads a plugin with pypjrt, runs them and prints
a JSON report. The same report is made with the real XLA plugin loaded
directly by pypjrt; apart from what only cyxla serves (guest and LAPACK
targets), the two must behave alike.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import jax
import jax.numpy as jnp

from support import LIBRARY, REAL_PLUGIN, assert_no_crash, run_python

jax.config.update("jax_enable_x64", True)

EPS = np.float32(1e-5)


def lower(fn, *shapes) -> str:
    specs = [jax.ShapeDtypeStruct(s, d) for s, d in shapes]
    return jax.jit(fn).lower(*specs).as_text()


def plain(x, y):
    return x * 2 + y


def guest_and_lapack(a, b):
    y = jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(b.shape, b.dtype))(b, eps=EPS)
    return jnp.linalg.solve(a, y), y


def trap(x):
    return jax.ffi.ffi_call("trap", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


SCRIPT = r"""
import json, sys
import numpy as np
import pypjrt
from pypjrt import typing as T

plugin_path, programs_path = sys.argv[1], sys.argv[2]
programs = json.load(open(programs_path))
report = {}

def err(e):
    return {"class": type(e).__name__, "code": getattr(e, "code", None), "message": str(e)}

client = pypjrt.Client.create(plugin_path)
report["platform_name"] = client.platform_name
report["process_index"] = client.process_index
report["device_count"] = client.device_count

with client.devices() as devs:
    report["devices"] = [[d.id, d.kind, d.process_index, d.local_hardware_id] for d in devs]
    dev = devs[0]

    def put(x):
        code = {"float32": T.F32.code, "float64": T.F64.code, "int32": T.S32.code, "bool": T.PRED.code}[x.dtype.name]
        return client.buffer_from_host(np.ascontiguousarray(x), code, x.shape, dev)

    def get(buf, dtype):
        return np.frombuffer(buf.to_host(), dtype).reshape(buf.dimensions)

    # buffers: a round trip per dtype, device copies
    rt = {}
    for name, x in [("float32", np.arange(12, dtype=np.float32).reshape(3, 4) / 7),
                    ("float64", np.linspace(-1, 1, 5)),
                    ("int32", np.array([[1, -2], [3, 2**31 - 1]], np.int32)),
                    ("bool", np.array([True, False, True]))]:
        b = put(x)
        back = get(b, x.dtype)
        rt[name] = {"equal": bool(np.array_equal(back, x)), "dims": list(b.dimensions),
                    "element_type": b.element_type, "nbytes": b.nbytes}
    report["roundtrip"] = rt
    if len(devs) > 1:
        c = put(np.arange(4, dtype=np.float32)).copy_to_device(devs[1])
        report["copy_to_device"] = get(c, np.float32).tolist()

    # a program without custom calls
    exe = client.compile(programs["plain"])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.full((2, 3), 0.5, np.float32)
    out = exe(put(x), put(y))
    report["plain"] = {"result": get(out[0], np.float32).tolist(), "num_outputs": exe.num_outputs}

    # a bad program
    try:
        client.compile("this is not a program")
        report["bad_program"] = None
    except pypjrt.errors.PjrtError as e:
        report["bad_program"] = err(e)

    # guest + LAPACK targets, then a trapping guest, then the first again
    for name in ("guest_and_lapack", "trap", "guest_and_lapack_again"):
        key = name.replace("_again", "")
        try:
            exe = client.compile(programs[key])
        except pypjrt.errors.PjrtError as e:
            report[name] = {"compile_error": err(e)}
            continue
        try:
            if key == "trap":
                out = exe(put(np.ones(4, np.float32)))
                get(out[0], np.float32)
                report[name] = {"result": "no error"}
            else:
                a = np.array(programs["a"], np.float32)
                b = np.array(programs["b"], np.float32)
                out = exe(put(a), put(b))
                report[name] = {"result": [get(o, np.float32).tolist() for o in out]}
        except pypjrt.errors.PjrtError as e:
            report[name] = {"execute_error": err(e)}
client.close()
print("REPORT " + json.dumps(report))
"""


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((4, 4)) + 4 * np.eye(4)).astype(np.float32)
    b = rng.standard_normal((4, 6)).astype(np.float32)
    progs = {
        "plain": lower(plain, ((2, 3), np.float32), ((2, 3), np.float32)),
        "guest_and_lapack": lower(guest_and_lapack, ((4, 4), np.float32), ((4, 6), np.float32)),
        "trap": lower(trap, ((4,), np.float32)),
        "a": a.tolist(),
        "b": b.tolist(),
    }
    assert "lapack_sgetrf_ffi" in progs["guest_and_lapack"] and "@rms_norm" in progs["guest_and_lapack"]
    d = tmp_path_factory.mktemp("pypjrt")
    script, data = d / "client.py", d / "programs.json"
    script.write_text(SCRIPT)
    data.write_text(json.dumps(progs))
    return script, data, a, b


def report(programs, plugin, env):
    script, data, _, _ = programs
    from support import VENV_PYTHON, clean_env, run

    r = run([VENV_PYTHON, script, plugin, data], env=clean_env(env))
    assert_no_crash(r)
    assert r.returncode == 0, r.describe()
    line = next((l for l in r.stdout.splitlines() if l.startswith("REPORT ")), None)
    assert line, r.describe()
    return json.loads(line[len("REPORT "):])


@pytest.fixture(scope="module")
def reports(programs):
    cyxla = report(programs, str(LIBRARY), {"CYXLA_ALLOW": "rms_norm,trap", "CYXLA_LIMITS": "call_timeout=5s"})
    real = report(programs, str(REAL_PLUGIN), {})
    return cyxla, real


def np_rms_norm(x):
    x64 = x.astype(np.float64)
    return x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + float(EPS))


def test_guest_and_lapack_on_cyxla(programs, reports):
    cyxla, _ = reports
    _, _, a, b = programs
    got = cyxla["guest_and_lapack"]
    assert "result" in got, got
    x, y = (np.array(v) for v in got["result"])
    np.testing.assert_allclose(y, np_rms_norm(b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x, np.linalg.solve(a.astype(np.float64), np_rms_norm(b)), rtol=1e-4, atol=1e-5)


def test_guest_error_then_recovery(reports):
    cyxla, _ = reports
    e = cyxla["trap"].get("execute_error")
    assert e, cyxla["trap"]
    assert "target `trap` (guest trap.wasm)" in e["message"], e
    assert "result" in cyxla["guest_and_lapack_again"], cyxla["guest_and_lapack_again"]
    assert cyxla["guest_and_lapack_again"] == cyxla["guest_and_lapack"]


def test_real_plugin_lacks_the_targets(reports):
    """Sanity of the comparison: the real plugin alone serves neither target."""
    _, real = reports
    assert "compile_error" in real["guest_and_lapack"], real["guest_and_lapack"]


@pytest.mark.parametrize("key", ["platform_name", "process_index", "device_count", "devices", "roundtrip",
                                 "copy_to_device", "plain"])
def test_same_as_real_plugin(reports, key):
    cyxla, real = reports
    assert key in real, real
    assert cyxla.get(key) == real[key]


def test_plain_result(reports):
    cyxla, _ = reports
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert cyxla["plain"]["result"] == (x * 2 + 0.5).tolist()
    assert all(v["equal"] for v in cyxla["roundtrip"].values()), cyxla["roundtrip"]


def test_bad_program_error_like_real_plugin(reports):
    cyxla, real = reports
    assert real["bad_program"] is not None and cyxla["bad_program"] is not None
    assert cyxla["bad_program"]["class"] == real["bad_program"]["class"]
    assert cyxla["bad_program"]["code"] == real["bad_program"]["code"]
