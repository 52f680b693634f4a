"""The launcher: `cyxla-host [HOST OPTIONS] -- COMMAND ARGS...`.

Each test runs a subprocess whose environment has no CYXLA_* variables and
no JAX_PLATFORMS, so what the script sees is what the launcher set.
"""

from __future__ import annotations

import signal

import pytest

from support import HOST, REAL_PLUGIN, VENV_PYTHON, assert_no_crash, clean_env, run, run_launched

SCRIPT = """
import os, sys
import numpy as np
import jax, jax.numpy as jnp
print("JAX_PLATFORMS", os.environ.get("JAX_PLATFORMS"))
print("BACKEND", jax.default_backend())
d = jax.devices()[0]
print("DEVICE", d.platform, d.client.platform, len(jax.devices()))
print("NAMED", len(jax.devices("cyxla")))
x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
y = jax.jit(lambda x: jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, eps=np.float32(1e-5)))(x)
ref = x / np.sqrt(np.mean(x.astype(np.float64) ** 2, axis=-1, keepdims=True) + 1e-5)
assert np.allclose(np.asarray(y), ref, rtol=1e-5, atol=1e-6), (y, ref)
a = x[:, :3] + 4 * np.eye(3, dtype=np.float32)
inv = np.asarray(jax.jit(jnp.linalg.inv)(a))
assert np.allclose(inv @ a, np.eye(3), atol=1e-5), inv
print("OK")
"""


def test_runs_script_on_cyxla():
    r = run_launched(SCRIPT, ["--allow", "rms_norm"])
    assert_no_crash(r)
    assert r.returncode == 0, r.describe()
    out = r.stdout
    assert "JAX_PLATFORMS cyxla" in out, r.describe()
    # the devices are the real plugin's CPU devices, served through cyxla
    assert "DEVICE cpu" in out, r.describe()
    assert "NAMED " in out and "OK" in out, r.describe()


def test_keeps_jax_platforms_if_set():
    code = "import os, jax; print('JAX_PLATFORMS', os.environ['JAX_PLATFORMS']); print(sorted({d.client.platform for d in jax.devices()}))"
    r = run_launched(code, [], env={"JAX_PLATFORMS": "cpu"})
    assert r.returncode == 0, r.describe()
    assert "JAX_PLATFORMS cpu" in r.stdout, r.describe()


def test_allow_all_and_devices_and_limit():
    code = """
import numpy as np, jax
print("N", len(jax.devices()))
x = np.ones(16, np.float32)
y = jax.jit(lambda x: jax.ffi.ffi_call("copy16", jax.ShapeDtypeStruct(x.shape, x.dtype))(x))(x)
print("SUM", float(np.asarray(y).sum()))
"""
    r = run_launched(code, ["--allow-all", "--devices", "2", "--limit", "call_timeout=2s", "--limit", "memory=64MiB"])
    assert r.returncode == 0, r.describe()
    assert "N 2" in r.stdout and "SUM 16.0" in r.stdout, r.describe()


def test_not_allowed_target_fails_with_hint():
    code = """
import numpy as np, jax
x = np.ones(4, np.float32)
try:
    jax.jit(lambda x: jax.ffi.ffi_call("scale_any", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, factor=np.float64(2)))(x)
except Exception as e:
    print("ERROR", e)
"""
    r = run_launched(code, ["--allow", "rms_norm"])
    assert_no_crash(r)
    assert r.returncode == 0, r.describe()
    assert "ERROR" in r.stdout and "No FFI handler registered for scale_any" in r.stdout, r.describe()
    # XLA's error gains why: what is registered, and which module serves the target
    assert "hint: target `scale_any` has no handler; registered:" in r.stdout, r.describe()
    assert "scale_any.wasm but not allowed: add --allow scale_any" in r.stdout, r.describe()


def test_no_lapack():
    """--no-lapack with --deny-native: jaxlib's own LAPACK handlers, which the
    package forwards as client natives, are refused too."""
    code = """
import numpy as np, jax, jax.numpy as jnp
try:
    print("RESULT", np.asarray(jax.jit(jnp.linalg.inv)(np.eye(3, dtype=np.float32))))
except Exception as e:
    print("ERROR", e)
"""
    r = run_launched(code, ["--no-lapack", "--deny-native"])
    assert_no_crash(r)
    assert "ERROR" in r.stdout and "lapack_sgetrf_ffi" in r.stdout, r.describe()


def test_exit_code_passes_through():
    r = run_launched("import sys; print('hi'); sys.exit(7)")
    assert r.returncode == 7, r.describe()
    assert "hi" in r.stdout


def test_exit_code_after_jax_work():
    r = run_launched("import sys, jax, jax.numpy as jnp; jnp.ones(3).block_until_ready(); sys.exit(3)")
    assert r.returncode == 3, r.describe()


def test_signal_passes_through():
    r = run_launched("import os, signal; os.kill(os.getpid(), signal.SIGTERM)")
    assert r.returncode == -signal.SIGTERM, r.describe()


def test_exec_replaces_launcher():
    """The launcher execs COMMAND: the command's parent is the test, not a launcher process."""
    import os

    code = "import os; print('PPID', os.getppid())"
    r = run_launched(code)
    assert r.returncode == 0, r.describe()
    # subprocess.run's child is the launcher itself; after exec it is python,
    # whose parent is then this test process
    assert f"PPID {os.getpid()}" in r.stdout, r.describe()


def test_command_arguments_pass_through():
    argv = [HOST, "--", VENV_PYTHON, "-c", "import sys; print(sys.argv[1:])", "a b", "--allow", "-x"]
    r = run(argv, env=clean_env())
    assert r.returncode == 0, r.describe()
    assert "['a b', '--allow', '-x']" in r.stdout, r.describe()


def test_missing_command_is_usage_error():
    r = run([HOST, "--allow", "rms_norm", "--"], env=clean_env())
    assert r.returncode == 2, r.describe()
    assert r.stderr.strip(), r.describe()


@pytest.mark.parametrize(
    "args, words",
    [
        (["--plugin", "/nonexistent/pjrt_plugin.so"], ["/nonexistent/pjrt_plugin.so"]),
        (["--limit", "no_such_limit=3"], ["no_such_limit"]),
        (["--limit", "call_timeout=fast"], ["call_timeout"]),
        (["--allow", "no_guest_serves_this"], ["no_guest_serves_this"]),
        (["--guests", "/nonexistent/guests"], ["/nonexistent/guests"]),
        (["--native", "t=/nonexistent/lib.so:Sym"], ["/nonexistent/lib.so"]),
        (["--devices", "zero"], ["--devices"]),
        (["--no-such-option"], ["--no-such-option"]),
    ],
    ids=["missing-plugin", "unknown-limit", "bad-limit-value", "unserved-target", "missing-guests",
         "missing-native-lib", "bad-devices", "unknown-option"],
)
def test_bad_options_exit_2_before_command(tmp_path, args, words):
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').write('ran')"
    r = run_launched(code, args)
    assert r.returncode == 2, r.describe()
    for w in words:
        assert w in r.stderr, f"{w!r} not in stderr\n{r.describe()}"
    assert not marker.exists(), "the command ran despite the bad option"


def test_explicit_plugin_option():
    r = run_launched("import jax; print('N', len(jax.devices()))", ["--plugin", str(REAL_PLUGIN)])
    assert r.returncode == 0, r.describe()
    assert "N " in r.stdout
