"""The JAX program test_wheel.py runs in a fresh venv with the cyxla wheel
installed: jitted guest ``ffi_call``s, ``grad`` through guests and
``jnp.linalg``, on the platform the environment picks (``cyxla``, or JAX's
``cpu`` with the guests served there), each result checked against the same
computation without cyxla: jnp on JAX's own CPU backend. Prints one JSON
line. It is copied out of the checkout before it runs: nothing of the
repository is on the venv's paths. tests/aarch64/jax_smoke.py imports its
guest call and formula (``rms_norm``, ``reference``).
"""

import json
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

EPS = np.float32(1e-5)


def rms_norm(x):
    return jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype), vmap_method="broadcast_all")(
        x, eps=EPS
    )


def reference(x):
    return x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + EPS)


def main():
    started = float(sys.argv[1]) if len(sys.argv) > 1 else time.time()
    # The first platform JAX_PLATFORMS names (the launcher sets it): where
    # the guests are served.
    platform = os.environ.get("JAX_PLATFORMS", "").split(",")[0] or jax.default_backend()
    device = jax.devices(platform)[0]
    cpu = jax.devices("cpu")[0]
    x_host = np.random.default_rng(0).normal(size=(4, 8)).astype(np.float32)
    with jax.default_device(device):
        x = jnp.asarray(x_host)
        y_dev = jax.jit(rms_norm)(x)
        y = np.asarray(y_dev)
        first_call = time.time() - started
        # cyxla's devices are the real plugin's CPU devices (their
        # `platform` says cpu): ask the backend whose devices they are.
        on_platform = set(y_dev.devices()) <= set(jax.devices(platform))
    with jax.default_device(cpu):
        y_ref = np.asarray(jax.jit(reference)(jnp.asarray(x_host)))
        a_host = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]], np.float32)
        b_host = np.array([1.0, 2.0, 3.0], np.float32)
        sol_ref = np.asarray(jnp.linalg.solve(jnp.asarray(a_host), jnp.asarray(b_host)))
        w_ref = np.asarray(jnp.linalg.eigh(jnp.asarray(a_host))[0])
    with jax.default_device(device):
        a, b = jnp.asarray(a_host), jnp.asarray(b_host)
        sol = np.asarray(jax.jit(jnp.linalg.solve)(a, b))
        w = np.asarray(jax.jit(lambda m: jnp.linalg.eigh(m)[0])(a))
        batch = np.asarray(jax.jit(jax.vmap(rms_norm))(jnp.stack([x, 2 * x])))
        try:
            jax.ffi.ffi_call("trap", jax.ShapeDtypeStruct((1,), jnp.float32))(x).block_until_ready()
            trap = None
        except Exception as e:  # the guest's trap fails its own call
            trap = str(e).splitlines()[0]
        again = np.asarray(jax.jit(rms_norm)(x))
    print(
        json.dumps(
            {
                "platform": platform if on_platform else f"not {platform}",
                "devices": [d.platform for d in jax.devices()],
                "jax": jax.__version__,
                "python": "%d.%d" % sys.version_info[:2],
                "library": os.environ.get("CYXLA_PJRT_LIBRARY"),
                "first_call_s": round(first_call, 3),
                "rms_norm": bool(np.allclose(y, y_ref, rtol=1e-5, atol=1e-6)),
                "rms_norm_batch": bool(np.allclose(batch[1], reference(2 * x_host), rtol=1e-5, atol=1e-6)),
                "solve": bool(np.allclose(sol, sol_ref, rtol=1e-5, atol=1e-6)),
                "eigh": bool(np.allclose(w, w_ref, rtol=1e-5, atol=1e-5)),
                "trap": trap,
                "after_trap": bool(np.array_equal(again, y)),
                "sys_path": sys.path,
            }
        )
    )


if __name__ == "__main__":
    main()
