"""XLA FFI API 0.5 (jaxlib 0.12): one C++ handler written against it
(tests/cpp/ffi_0_5.cc: buffer matching, ErrorOr from an Error, custom
options, error details, the invoke context) built natively against jaxlib
0.12's own headers and, unchanged, as a cyxla guest with guests/cpp/build.sh.

On JAX 0.12's own ``cpu`` platform (Python 3.12, in a venv made here as the
wheel tests make theirs: pyenv's 3.12 and ``pip install jax==0.12.0.1``),
the native build and the guest (``cyxla-host --platform cpu``) both give
JAX's results and the same buffer-matching error; on platform ``cyxla``
(the checkout's venv, JAX 0.10.2, the default plugin of XLA FFI runtime 0.4)
the guest does too, and the native 0.5 build is refused for the version its
metadata probe answers.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import tempfile

import pytest

from support import HOST, ROOT, VENV_PYTHON, assert_no_crash, clean_env, run
from test_wheel import find_python

SOURCE = ROOT / "tests" / "cpp" / "ffi_0_5.cc"
TARGET = "scale_rows_05"
SYMBOL = "ScaleRows05"
# What both builds say for a `scale` of 3 elements where x has 4 columns
# (XLA's message, byte for byte).
MISMATCH = (
    "Buffer 'scale' failed to match a buffer with dtype F32 with rank 1 with dimensions [4]: "
    "expected dimension 0 to be 4 but got 3"
)

SCRIPT = r"""
import ctypes, json, os, sys
import numpy as np
import jax, jax.numpy as jnp

targets = sys.argv[1].split(",")
native = os.environ.get("FFI05_NATIVE")
if native:
    lib = ctypes.cdll.LoadLibrary(native)
    jax.ffi.register_ffi_target(targets[-1], jax.ffi.pycapsule(lib.ScaleRows05), platform="cpu")

# The platform the launcher serves the guests on (JAX_PLATFORMS' first);
# cyxla's devices are the real plugin's CPU devices, so ask which backend
# the results live on.
platform = os.environ.get("JAX_PLATFORMS", "").split(",")[0] or jax.default_backend()
device = jax.devices(platform)[0]
x = (np.arange(12, dtype=np.float32) - 5).reshape(3, 4)
scale = np.array([0.5, -1.0, 2.0, 0.25], np.float32)

def call(target, x, s):
    f = lambda x, s: jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(x.shape, jnp.float32))(
        x, s, offset=np.float32(1.5))
    with jax.default_device(device):
        y = jax.jit(f)(jnp.asarray(x), jnp.asarray(s))
    assert set(y.devices()) <= set(jax.devices(platform)), (y.devices(), platform)
    return np.asarray(y)

# JAX's own result on the same platform (exact in f32: small integers times
# powers of two, plus 1.5).
with jax.default_device(device):
    want = np.asarray(jax.jit(lambda x, s: x * s + np.float32(1.5))(x, scale))
assert np.array_equal(want, x * scale + np.float32(1.5))
result = {"platform": platform, "jax": jax.__version__, "jaxlib": jax.lib.__version__}
for target in targets:
    got = call(target, x, scale)
    result[target] = {"equal": bool(np.array_equal(got, want)), "got": got.tolist()}
    try:
        call(target, x, scale[:3])
        result[target]["error"] = None
    except Exception as e:
        result[target]["error"] = str(e)
print(json.dumps(result))
"""


def need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} is needed to build the 0.5 handler: install it with scripts/setup.sh",
                    pytrace=False)
    return path


@pytest.fixture(scope="module")
def work():
    d = pathlib.Path(tempfile.mkdtemp(prefix="cyxla-ffi05-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def jax012(work) -> pathlib.Path:
    """A Python 3.12 venv with jax 0.12.0.1 (and so jaxlib 0.12, XLA FFI 0.5)."""
    python = find_python("3.12")
    venv = work / "venv312"
    r = run([python, "-m", "venv", venv], env=clean_env(), cwd=work)
    assert r.returncode == 0, r.describe()
    r = run([venv / "bin" / "pip", "install", "-q", "--disable-pip-version-check", "jax==0.12.0.1"],
            env=clean_env(), cwd=work, timeout=1200)
    assert r.returncode == 0, f"pip install jax==0.12.0.1 failed:\n{r.describe()}"
    return venv


def jaxlib_include(venv: pathlib.Path) -> pathlib.Path:
    (include,) = list((venv / "lib").glob("python3.*/site-packages/jaxlib/include"))
    header = include / "xla" / "ffi" / "api" / "c_api.h"
    assert "#define XLA_FFI_API_MINOR 5" in header.read_text(), f"{header} is not XLA FFI 0.5"
    return include


@pytest.fixture(scope="module")
def builds(work, jax012) -> dict[str, pathlib.Path]:
    """The handler built natively against jaxlib 0.12's headers and as a guest."""
    need("clang++-19")
    native = work / "libffi_0_5_cpp.so"
    r = run(["clang++-19", "-std=c++17", "-O2", "-ffp-contract=off", "-fPIC", "-shared",
             "-Wall", "-Werror", "-I", jaxlib_include(jax012), "-idirafter", ROOT / "guest-sdk" / "include",
             "-include", "cyxla/target.h", SOURCE, "-o", native], env=clean_env(), cwd=work)
    assert r.returncode == 0, f"native build against jaxlib 0.12's headers failed:\n{r.describe()}"
    guests = work / "guests"
    r = run([ROOT / "guests" / "cpp" / "build.sh", "--out", guests, SOURCE], env=clean_env(), cwd=ROOT)
    assert r.returncode == 0, f"guests/cpp/build.sh failed:\n{r.describe()}"
    guest = guests / "ffi_0_5_cpp.wasm"
    assert guest.is_file(), r.describe()
    r = run([HOST, "check", guest], env=clean_env(), cwd=work)
    assert r.returncode == 0 and TARGET in r.stdout, r.describe()
    return {"native": native, "guests": guests}


def script_result(r) -> dict:
    assert_no_crash(r)
    assert r.returncode == 0, r.describe()
    return json.loads(r.stdout.strip().splitlines()[-1])


def check_target(result: dict, target: str, prefix: str) -> None:
    entry = result[target]
    assert entry["equal"], (target, entry)
    assert entry["error"] is not None, f"{target}: a mismatched scale was accepted"
    assert f"{prefix}{MISMATCH}" in entry["error"], (target, entry["error"])


def test_native_and_guest_agree_on_jax_0_12_cpu(work, jax012, builds):
    script = work / "script.py"
    script.write_text(SCRIPT)
    native_target = f"{TARGET}_native"
    argv = [HOST, "--platform", "cpu", "--guests", builds["guests"], "--allow", TARGET, "--",
            jax012 / "bin" / "python", script, f"{TARGET},{native_target}"]
    # The venv has JAX 0.12 but not the wheel: the checkout's JAX plugin
    # package, which serves the guests on `cpu` under the launcher.
    env = {"FFI05_NATIVE": str(builds["native"]), "PYTHONPATH": str(ROOT / "host" / "python")}
    r = run(argv, env=clean_env(env), cwd=work)
    result = script_result(r)
    assert result["platform"] == "cpu" and result["jax"] == "0.12.0.1", result
    check_target(result, native_target, "")
    check_target(result, TARGET, f"target `{TARGET}` (guest ffi_0_5_cpp.wasm): ")
    assert result[TARGET]["got"] == result[native_target]["got"]


def test_guest_runs_on_cyxla_and_the_native_0_5_build_is_refused(work, builds):
    script = work / "script.py"
    script.write_text(SCRIPT)
    argv = [HOST, "--guests", builds["guests"], "--allow", TARGET, "--", VENV_PYTHON, script, TARGET]
    result = script_result(run(argv, env=clean_env(), cwd=work))
    assert result["platform"] == "cyxla", result
    check_target(result, TARGET, f"target `{TARGET}` (guest ffi_0_5_cpp.wasm): ")
    # The same source built against jaxlib 0.12's headers answers XLA's
    # metadata probe with 0.5, which the default plugin (runtime 0.4) refuses.
    argv = [HOST, "--native", f"{TARGET}={builds['native']}:{SYMBOL}", "--", VENV_PYTHON, script, TARGET]
    r = run(argv, env=clean_env(), cwd=work)
    assert_no_crash(r)
    assert r.returncode != 0, r.describe()
    assert "its metadata probe answered version 0.5 (expected 0.1..=0.4)" in r.stderr, r.describe()
