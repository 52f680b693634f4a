"""Issue 33: a guest fails its own call whatever else the JAX process does
with fault handlers and forks (items 1 and 2).

Each case runs a child JAX process on ``cyxla`` with the real plugin: a
failure there kills the process (a fault handler) or hangs it (a fork).
"""

from __future__ import annotations

import pytest

from support import GUESTS, LIBRARY, run_python

# What each child starts with: JAX on cyxla, a call that works, a trap.
PRELUDE = """
import faulthandler, os, signal, sys, time
import numpy as np
import jax, jax.numpy as jnp

def call(target, x):
    return np.asarray(jax.jit(
        lambda x: jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(x.shape, x.dtype))(x))(x))

_rms_norm = jax.jit(lambda x: jax.ffi.ffi_call(
    "rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, eps=np.float32(1e-6)))

def works():
    x = jax.device_put(jnp.ones((4, 16), jnp.float32), jax.devices("cyxla")[0])
    y = np.asarray(_rms_norm(x))
    assert np.allclose(y, 1.0, atol=1e-3), y

def trap_fails():
    x = jax.device_put(jnp.ones((4,), jnp.float32), jax.devices("cyxla")[0])
    try:
        call("trap", x)
    except jax.errors.JaxRuntimeError as e:
        assert "target `trap` (guest trap.wasm)" in str(e), str(e)
        print("TRAP FAILED ITS CALL", flush=True)
    else:
        raise AssertionError("the trap call succeeded")
"""


def env(limits: str = "call_timeout=5s") -> dict[str, str]:
    return {
        "CYXLA_PJRT_LIBRARY": str(LIBRARY),
        "CYXLA_GUESTS": str(GUESTS),
        "CYXLA_ALLOW": "*",
        "CYXLA_LIMITS": limits,
        "JAX_PLATFORMS": "cyxla",
    }


def assert_clean_exit(r, traps: int) -> None:
    assert r.returncode == 0, r.describe()
    assert "Fatal Python error" not in r.stderr, r.describe()
    assert r.stdout.count("TRAP FAILED ITS CALL") == traps, r.describe()
    assert "DONE" in r.stdout, r.describe()


def test_trap_under_faulthandler_enabled_after_the_backend_started():
    r = run_python(PRELUDE + """
works()
trap_fails()
faulthandler.enable()
trap_fails()
works()
trap_fails()
print("DONE")
""", env=env())
    assert_clean_exit(r, 3)


def test_trap_under_faulthandler_enabled_before_the_backend_started():
    r = run_python("import faulthandler; faulthandler.enable()\n" + PRELUDE + """
works()
trap_fails()
works()
print("DONE")
""", env=env())
    assert_clean_exit(r, 1)


def test_trap_under_faulthandler_enabled_disabled_and_enabled_again():
    r = run_python(PRELUDE + """
works()
faulthandler.enable()
trap_fails()
faulthandler.disable()
trap_fails()
faulthandler.enable()
trap_fails()
works()
print("DONE")
""", env=env())
    assert_clean_exit(r, 3)


def test_a_segfault_outside_guests_still_reaches_faulthandler():
    """faulthandler enabled after cyxla's handler still reports a real crash
    of the process (and the process still dies of it)."""
    r = run_python(PRELUDE + """
import ctypes
works()
trap_fails()
faulthandler.enable()
trap_fails()
print("CRASHING", flush=True)
ctypes.string_at(0)
""", env=env())
    assert r.returncode == -11, r.describe()
    assert "CRASHING" in r.stdout, r.describe()
    assert "Fatal Python error: Segmentation fault" in r.stderr, r.describe()
    assert "string_at" in r.stderr, r.describe()


@pytest.mark.parametrize("how", ["multiprocessing", "os.fork"])
def test_a_looping_guest_in_a_forked_child_meets_its_deadline(how):
    """The parent ran guests (its deadline threads exist); a forked child's
    looping guest still ends with DEADLINE_EXCEEDED, and the next call works.
    The child only runs programs the parent compiled: XLA's compiler is not
    fork-safe (JAX warns), whatever the guests do."""
    r = run_python(PRELUDE + f"""
import multiprocessing as mp

spin = jax.jit(lambda x: jax.ffi.ffi_call("spin", jax.ShapeDtypeStruct(x.shape, x.dtype))(x))
x = jax.device_put(jnp.ones((4,), jnp.float32), jax.devices("cyxla")[0])

def child(q=None):
    t = time.monotonic()
    try:
        np.asarray(spin(x))
        outcome = "returned"
    except jax.errors.JaxRuntimeError as e:
        outcome = "DEADLINE_EXCEEDED" if "DEADLINE_EXCEEDED" in str(e) else str(e)[:500]
    took = time.monotonic() - t
    works()
    if q is not None:
        q.put((outcome, took))
    return outcome, took

works()
print("PARENT", child(), flush=True)
if {how!r} == "multiprocessing":
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    outcome, took = q.get(timeout=60)
    p.join(60)
    assert p.exitcode == 0, p.exitcode
    print("CHILD", outcome, took, flush=True)
    assert outcome == "DEADLINE_EXCEEDED", outcome
else:
    pid = os.fork()
    if pid == 0:
        outcome, took = child()
        print("CHILD", outcome, took, flush=True)
        os._exit(0 if outcome == "DEADLINE_EXCEEDED" else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, status
print("DONE")
""", env=env("call_timeout=300ms"), timeout=120)
    assert r.returncode == 0, r.describe()
    assert "DONE" in r.stdout and "CHILD DEADLINE_EXCEEDED" in r.stdout, r.describe()
    assert "Fatal Python error" not in r.stderr, r.describe()
