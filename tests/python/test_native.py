"""Native XLA FFI handlers registered by client code (jax.ffi.register_ffi_target)
and by the operator (--native), on platform cyxla.

A tiny handler `AddOne` (y = x + 1, f32) is compiled with g++ against
jaxlib's `xla/ffi/api/ffi.h`, exactly as a JAX user would build one.
"""

from __future__ import annotations

import ctypes
import pathlib
import subprocess

import numpy as np
import pytest

import jax

from support import LIBRARY, assert_no_crash, run_launched, run_python

SOURCE = r"""
#include <cstddef>
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

static ffi::Error AddOneImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (size_t i = 0; i < x.element_count(); ++i) out[i] = in[i] + 1.0f;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(AddOne, AddOneImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());
"""


@pytest.fixture(scope="session")
def add_one_lib(tmp_path_factory) -> pathlib.Path:
    d = tmp_path_factory.mktemp("native")
    src, lib = d / "add_one.cc", d / "libadd_one.so"
    src.write_text(SOURCE)
    include = jax.ffi.include_dir()
    p = subprocess.run(
        ["g++", "-shared", "-fPIC", "-O2", "-std=c++17", f"-I{include}", str(src), "-o", str(lib)],
        capture_output=True, text=True, timeout=300,
    )
    assert p.returncode == 0, f"g++ failed:\n{p.stderr}"
    return lib


def add_one(name, x):
    return jax.ffi.ffi_call(name, jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def test_register_native_in_process(cyxla, cpu, add_one_lib):
    """Registered after the cyxla backend exists; served on cyxla and on JAX's CPU."""
    lib = ctypes.cdll.LoadLibrary(str(add_one_lib))
    jax.ffi.register_ffi_target("add_one_native", jax.ffi.pycapsule(lib.AddOne), platform="cpu")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    f = jax.jit(lambda x: add_one("add_one_native", x) * 2)
    got = f(jax.device_put(x, cyxla))
    assert got.devices() == {cyxla}
    np.testing.assert_array_equal(np.asarray(got), (x + 1) * 2)
    ref = f(jax.device_put(x, cpu))
    np.testing.assert_array_equal(np.asarray(ref), (x + 1) * 2)


SCRIPT = """
import ctypes, sys
import numpy as np
import jax
lib = ctypes.cdll.LoadLibrary({lib!r})
x = np.arange(4, dtype=np.float32)
if {late}:
    print("DEVICES", len(jax.devices()))  # the backend exists before the registration
def call():
    return np.asarray(jax.jit(lambda x: jax.ffi.ffi_call("add_one_native", jax.ShapeDtypeStruct(x.shape, x.dtype))(x))(x))
try:
    jax.ffi.register_ffi_target("add_one_native", jax.ffi.pycapsule(lib.AddOne), platform="cpu")
except Exception as e:
    print("REGISTER-ERROR", type(e).__name__, e)
else:
    print("REGISTERED")
print("BACKEND", jax.default_backend(), jax.devices()[0].platform)
try:
    print("RESULT", call().tolist())
except Exception as e:
    print("CALL-ERROR", type(e).__name__, e)
"""


def script(lib, *, late: bool) -> str:
    return SCRIPT.format(lib=str(lib), late=late)


@pytest.mark.parametrize("late", [False, True], ids=["before-backend", "after-backend"])
def test_register_native_under_launcher(add_one_lib, late):
    r = run_launched(script(add_one_lib, late=late))
    assert_no_crash(r)
    assert r.returncode == 0, r.describe()
    assert "REGISTERED" in r.stdout and "RESULT [1.0, 2.0, 3.0, 4.0]" in r.stdout, r.describe()


def assert_refused(r, *, late: bool = True) -> None:
    """Refused: after the backend exists, the registration raises; before it
    (the plugin is not loaded yet, nothing can raise), the refusal is logged
    when the backend starts. Either way the target's calls on cyxla fail with
    PERMISSION_DENIED naming the target and the setting."""
    assert_no_crash(r)
    assert r.returncode == 0, r.describe()
    lines = [line for line in r.stdout.splitlines() if line.startswith("REGISTER-ERROR")]
    if late:
        assert lines, f"registration did not raise\n{r.describe()}"
        assert "add_one_native" in lines[0] and "CYXLA_ALLOW_NATIVE" in lines[0], r.describe()
    else:
        assert "REGISTERED" in r.stdout, r.describe()
        logged = [line for line in r.stderr.splitlines() if "add_one_native" in line and "refused" in line]
        assert logged and "CYXLA_ALLOW_NATIVE" in logged[0], r.describe()
    call = [line for line in r.stdout.splitlines() if line.startswith("CALL-ERROR")]
    assert call, f"the call to the refused target did not fail\n{r.describe()}"
    assert "PERMISSION_DENIED" in call[0] and "CYXLA_ALLOW_NATIVE" in call[0], r.describe()
    assert "RESULT" not in r.stdout, r.describe()


@pytest.mark.parametrize("late", [False, True], ids=["before-backend", "after-backend"])
def test_deny_native(add_one_lib, late):
    """--deny-native: the registration is refused, naming the target and the setting.

    before-backend is the usual order in a script (register, then compute).
    """
    assert_refused(
        run_launched(script(add_one_lib, late=late), ["--deny-native", "--allow", "rms_norm"]), late=late
    )


def test_deny_native_by_environment(add_one_lib):
    """CYXLA_ALLOW_NATIVE=0 without the launcher (plain python, JAX_PLATFORMS=cyxla)."""
    env = {"CYXLA_PJRT_LIBRARY": str(LIBRARY), "JAX_PLATFORMS": "cyxla", "CYXLA_ALLOW_NATIVE": "0"}
    assert_refused(run_python(script(add_one_lib, late=True), env=env))


def test_operator_native_option(add_one_lib):
    """--native TARGET=LIBRARY:SYMBOL: the operator's trusted handler, no registration in the script."""
    code = """
import numpy as np, jax
x = np.arange(4, dtype=np.float32)
y = jax.jit(lambda x: jax.ffi.ffi_call("op_add_one", jax.ShapeDtypeStruct(x.shape, x.dtype))(x))(x)
print("RESULT", np.asarray(y).tolist())
"""
    r = run_launched(code, ["--native", f"op_add_one={add_one_lib}:AddOne", "--deny-native"])
    assert_no_crash(r)
    assert r.returncode == 0, r.describe()
    assert "RESULT [1.0, 2.0, 3.0, 4.0]" in r.stdout, r.describe()
