"""Configuration of the plugin by environment variables and CYXLA_CONFIG.

Each case is a plain `python -c` (no launcher) with JAX_PLATFORMS=cyxla and
the variables under test. A bad configuration must fail the creation of the
client with a message naming what is wrong, as a Python exception; the
process must never abort.
"""

from __future__ import annotations

import pytest

from support import GUESTS, LIBRARY, REAL_PLUGIN, assert_no_crash, run_python

# Creates the client and reports, in one line each, what happened.
PROBE = """
import jax
try:
    devs = jax.devices("cyxla")
except Exception as e:
    print("EXCEPTION", type(e).__name__, e)
    raise
print("DEVICES", len(devs), devs[0].platform)
"""

RUN_GUEST = PROBE + """
import numpy as np
x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
f = lambda x: jax.ffi.ffi_call("scale_any", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, factor=np.float64(2))
print("SCALED", np.asarray(jax.jit(f)(x)).ravel().tolist())
"""


def base_env(**extra: str) -> dict[str, str]:
    return {"CYXLA_PJRT_LIBRARY": str(LIBRARY), "JAX_PLATFORMS": "cyxla", **extra}


def assert_client_error(r, *words: str) -> None:
    assert_no_crash(r)
    assert r.returncode == 1, f"expected a Python exception (exit 1)\n{r.describe()}"
    assert "EXCEPTION" in r.stdout, r.describe()
    assert not any(line.startswith("DEVICES ") for line in r.stdout.splitlines()), r.describe()
    line = next(line for line in r.stdout.splitlines() if line.startswith("EXCEPTION"))
    for w in words:
        assert w in line, f"{w!r} not in the exception: {line}\n{r.describe()}"


def write(tmp_path, text: str):
    p = tmp_path / "cyxla.toml"
    p.write_text(text)
    return str(p)


BAD_ENV = {
    "missing-plugin": ({"CYXLA_PJRT_PLUGIN": "/nonexistent/plugin.so"}, ["/nonexistent/plugin.so"]),
    "missing-guests": ({"CYXLA_GUESTS": "/nonexistent/guests"}, ["/nonexistent/guests"]),
    "unknown-target": ({"CYXLA_ALLOW": "rms_norm,no_guest_serves_this"}, ["no_guest_serves_this"]),
    "unknown-limit": ({"CYXLA_LIMITS": "no_such_limit=3"}, ["no_such_limit"]),
    "bad-limit-value": ({"CYXLA_LIMITS": "call_timeout=soon"}, ["call_timeout"]),
    "removed-interrupt": ({"CYXLA_LIMITS": "interrupt=signal"}, ["interrupt=signal", "`signal` was removed"]),
    "replaced-interrupt": ({"CYXLA_LIMITS": "interrupt=epoch"}, ["interrupt=epoch", "`epoch` was replaced by `poll`"]),
    "bad-devices": ({"CYXLA_DEVICES": "many"}, ["CYXLA_DEVICES"]),
    "missing-native": ({"CYXLA_NATIVE": "t=/nonexistent/lib.so:Sym"}, ["/nonexistent/lib.so"]),
}


@pytest.mark.parametrize("case", list(BAD_ENV))
def test_bad_environment(case):
    env, words = BAD_ENV[case]
    assert_client_error(run_python(PROBE, env=base_env(**env)), *words)


def test_unreadable_guests_folder(tmp_path):
    """A file where the guests folder should be."""
    f = tmp_path / "not_a_folder"
    f.write_text("")
    assert_client_error(run_python(PROBE, env=base_env(CYXLA_GUESTS=str(f))), str(f))


BAD_TOML = {
    "malformed": ('allow = ["rms_norm"\nlapack = true\n', ["cyxla.toml"]),
    "unknown-key": ('allow = ["rms_norm"]\nno_such_key = 1\n', ["no_such_key"]),
    # file, line and column locate the key
    "wrong-type": ('allow = "rms_norm"\n', ["cyxla.toml", "line 1"]),
    "bad-limit": ('allow = ["rms_norm"]\n[limits]\ncall_timeout = "soon"\n', ["cyxla.toml", "line 3", "soon"]),
    "unknown-limit": ('[limits]\nno_such_limit = "1s"\n', ["no_such_limit"]),
    "removed-interrupt": ('[limits]\ninterrupt = "signal"\n', ["cyxla.toml", "interrupt `signal` was removed"]),
    "replaced-interrupt": ('[limits]\ninterrupt = "epoch"\n', ["cyxla.toml", "interrupt `epoch` was replaced by `poll`"]),
    "unknown-target": ('allow = ["no_guest_serves_this"]\n', ["no_guest_serves_this"]),
    "missing-plugin": ('plugin = "/nonexistent/plugin.so"\n', ["/nonexistent/plugin.so"]),
}


@pytest.mark.parametrize("case", list(BAD_TOML))
def test_bad_config_file(tmp_path, case):
    text, words = BAD_TOML[case]
    path = write(tmp_path, text)
    assert_client_error(run_python(PROBE, env=base_env(CYXLA_CONFIG=path)), *words)


def test_missing_config_file(tmp_path):
    path = str(tmp_path / "absent.toml")
    assert_client_error(run_python(PROBE, env=base_env(CYXLA_CONFIG=path)), path)


def test_good_config_file(tmp_path):
    path = write(
        tmp_path,
        f'plugin = "{REAL_PLUGIN}"\nguests = "{GUESTS}"\nallow = ["scale_any"]\nlapack = true\n'
        'allow_native = true\ndevices = 3\n[limits]\ncall_timeout = "2s"\nmemory = "64MiB"\n',
    )
    r = run_python(RUN_GUEST, env=base_env(CYXLA_CONFIG=path))
    assert_no_crash(r)
    assert r.returncode == 0, r.describe()
    assert "DEVICES 3 cpu" in r.stdout, r.describe()
    assert "SCALED [2.0, 4.0, 6.0, 8.0, 10.0, 12.0]" in r.stdout, r.describe()


def test_config_file_allow_all(tmp_path):
    path = write(tmp_path, 'allow = ["*"]\n')
    r = run_python(RUN_GUEST, env=base_env(CYXLA_CONFIG=path))
    assert r.returncode == 0, r.describe()
    assert "SCALED [2.0" in r.stdout, r.describe()


def test_environment_wins_over_file(tmp_path):
    path = write(tmp_path, 'allow = ["rms_norm"]\ndevices = 3\n')
    r = run_python(RUN_GUEST, env=base_env(CYXLA_CONFIG=path, CYXLA_ALLOW="scale_any", CYXLA_DEVICES="2"))
    assert r.returncode == 0, r.describe()
    assert "DEVICES 2 cpu" in r.stdout and "SCALED [2.0" in r.stdout, r.describe()


def test_devices_2():
    r = run_python(PROBE, env=base_env(CYXLA_DEVICES="2"))
    assert r.returncode == 0, r.describe()
    assert "DEVICES 2 cpu" in r.stdout, r.describe()


def test_nothing_allowed_by_default():
    r = run_python(RUN_GUEST, env=base_env())
    assert_no_crash(r)
    assert r.returncode == 1, r.describe()
    assert "scale_any" in r.stderr, r.describe()


def test_no_lapack_env():
    code = PROBE + """
import numpy as np, jax.numpy as jnp
try:
    jax.jit(jnp.linalg.inv)(np.eye(3, dtype=np.float32)).block_until_ready()
    print("INV-OK")
except Exception as e:
    print("INV-ERROR", e)
"""
    # jaxlib's LAPACK handlers would be forwarded as client natives: refuse those too
    r = run_python(code, env=base_env(CYXLA_NO_LAPACK="1", CYXLA_ALLOW_NATIVE="0"))
    assert_no_crash(r)
    assert "INV-ERROR" in r.stdout and "lapack_sgetrf_ffi" in r.stdout, r.describe()
    # cyxla's own LAPACK targets serve without any client native
    r = run_python(code, env=base_env(CYXLA_ALLOW_NATIVE="0"))
    assert "INV-OK" in r.stdout, r.describe()


@pytest.mark.parametrize("name", ["fastatomstruct_xla_cpu", "xla_cpu_pjrt"])
def test_compatibility_plugins(name):
    """The plugin wraps the older real plugins of the compatibility set too."""
    from support import COMPAT_PLUGINS

    r = run_python(RUN_GUEST, env=base_env(CYXLA_PJRT_PLUGIN=str(COMPAT_PLUGINS[name]), CYXLA_ALLOW="scale_any"))
    assert_no_crash(r)
    assert r.returncode == 0, r.describe()
    assert "SCALED [2.0, 4.0" in r.stdout, r.describe()
