"""The aarch64 JAX smoke test's program (issue 44), run by
scripts/aarch64_jax.sh in an aarch64 Python under qemu-aarch64 user
emulation. Prints one JSON line of results, which the shell script checks.

Two modes:

* ``--plain``: JAX alone (no cyxla): the environment works on aarch64:
  jitted jnp operations, ``jnp.linalg.solve`` and ``eigh`` on JAX's own CPU
  backend.
* default, under the aarch64 wheel's launcher,
  ``cyxla-host --platform cpu --allow rms_norm --allow trap --limit
  call_timeout=... -- python jax_smoke.py``: the same, and the bundled
  guests served on JAX's ``cpu`` platform: ``rms_norm`` through
  ``jax.ffi.ffi_call`` (jitted and under ``vmap``), ``trap`` (a wasm trap)
  and ``spin`` (a loop that only its deadline ends), each of these two
  raising the usual ``JaxRuntimeError``, with a call that works after each.

Every result is compared in the same emulated process with a computation
that does not go through cyxla: jnp on JAX's own CPU backend (the
``rms_norm`` formula; ``A @ x`` and ``A @ v`` for the solve and the
eigenvectors) and numpy in float64 (numpy's own aarch64 LAPACK). Wall times
are those of an emulated process: they say nothing about aarch64's speed.
"""

import json
import logging
import os
import platform
import sys
import time

# What jax_plugins.cyxla warns while JAX discovers its platforms (the first
# jax.devices()): on aarch64, with no real PJRT plugin, what to do instead.
WARNINGS: list[str] = []


class _Collect(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        WARNINGS.append(record.getMessage())


logging.getLogger("jax_plugins.cyxla").addHandler(_Collect(logging.WARNING))

import jax  # noqa: E402 (after the handler: discovery may warn on import)
import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402
import numpy as np  # noqa: E402

# The guest call and its formula, as the x86-64 wheel's test program has them.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from wheel_script import rms_norm, reference  # noqa: E402


def first_line(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:400]


def failing_call(name: str, x) -> tuple[str | None, float]:
    """Calls target `name`; returns the exception's first line (None when it
    returned) and the call's wall time."""
    f = jax.jit(lambda x: jax.ffi.ffi_call(name, jax.ShapeDtypeStruct(x.shape, x.dtype))(x))
    t = time.monotonic()
    try:
        np.asarray(f(x))
        outcome = None
    except jax.errors.JaxRuntimeError as e:
        outcome = first_line(e)
    except Exception as e:  # reported as is: the shell script checks the type
        outcome = first_line(e)
    return outcome, round(time.monotonic() - t, 3)


def linalg(results: dict) -> None:
    rng = np.random.default_rng(1)
    m = rng.normal(size=(6, 6))
    a64 = m @ m.T + 6 * np.eye(6)  # symmetric positive definite
    b64 = rng.normal(size=(6, 2))
    a, b = jnp.asarray(a64, jnp.float32), jnp.asarray(b64, jnp.float32)
    x = jax.jit(jnp.linalg.solve)(a, b)
    w, v = jax.jit(jnp.linalg.eigh)(a)
    # numpy in float64, and jnp residuals (matmuls, no LAPACK).
    results["solve"] = bool(
        np.allclose(np.asarray(x), np.linalg.solve(a64, b64), rtol=1e-4, atol=1e-5)
        and np.allclose(np.asarray(a @ x), b64, rtol=1e-4, atol=1e-4)
    )
    results["eigh"] = bool(
        np.allclose(np.asarray(w), np.linalg.eigvalsh(a64), rtol=1e-4, atol=1e-4)
        and np.allclose(np.asarray(a @ v), np.asarray(v * w), rtol=1e-4, atol=1e-3)
    )
    # jnp on its own: jit, reductions, a matmul, elementwise math, against numpy.
    y = jax.jit(lambda t: jnp.tanh(t @ t.T).sum(axis=0))(a)
    results["jnp"] = bool(np.allclose(np.asarray(y), np.tanh(a64 @ a64.T).sum(axis=0), rtol=1e-4, atol=1e-4))


def main() -> None:
    plain = "--plain" in sys.argv[1:]
    started = time.monotonic()
    results: dict = {
        "mode": "plain" if plain else "launcher",
        "machine": platform.machine(),
        "python": "%d.%d.%d" % sys.version_info[:3],
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "backend": jax.default_backend(),
        "platforms": sorted({d.platform for d in jax.devices()}),
        "cyxla_warnings": WARNINGS,
    }
    cpu = jax.devices("cpu")[0]
    with jax.default_device(cpu):
        linalg(results)
        if not plain:
            results["library"] = os.environ.get("CYXLA_PJRT_LIBRARY")
            results["jax_platforms"] = os.environ.get("JAX_PLATFORMS")
            x_host = np.random.default_rng(0).normal(size=(4, 8)).astype(np.float32)
            x = jnp.asarray(x_host)
            t = time.monotonic()
            y_dev = jax.jit(rms_norm)(x)
            y = np.asarray(y_dev)
            results["first_guest_call_wall_s"] = round(time.monotonic() - t, 3)
            y_ref = np.asarray(jax.jit(reference)(x))
            results["rms_norm"] = bool(np.allclose(y, y_ref, rtol=1e-5, atol=1e-6))
            results["rms_norm_on_cpu"] = set(y_dev.devices()) <= set(jax.devices("cpu"))
            batch = np.asarray(jax.jit(jax.vmap(rms_norm))(jnp.stack([x, 2 * x])))
            results["rms_norm_vmap"] = bool(
                np.allclose(batch[0], y_ref, rtol=1e-5, atol=1e-6)
                and np.allclose(batch[1], np.asarray(reference(2 * x)), rtol=1e-5, atol=1e-6)
            )
            results["trap"], results["trap_wall_s"] = failing_call("trap", x)
            results["after_trap"] = bool(np.array_equal(np.asarray(jax.jit(rms_norm)(x)), y))
            results["spin"], results["spin_wall_s"] = failing_call("spin", x)
            results["after_spin"] = bool(np.array_equal(np.asarray(jax.jit(rms_norm)(x)), y))
    results["script_wall_s"] = round(time.monotonic() - started, 3)
    print(json.dumps(results), flush=True)


if __name__ == "__main__":
    main()
