"""Plain JAX code on platform `cyxla`: custom calls served by sandboxed guests,
jnp.linalg on the native LAPACK targets. Nothing here knows about cyxla: run
it under the launcher, which configures the plugin and picks the platform:

    cyxla-host --allow rms_norm --allow rms_norm_fwd --allow rms_norm_bwd \\
        --allow trap -- python examples/jax_on_cyxla.py

(`scripts/demo.sh` does exactly that.)
"""

import jax
import jax.numpy as jnp
import numpy as np

EPS = np.float32(1e-5)


def rms_norm(x):
    # The JAX FFI tutorial's rms_norm, served by guests/out/rms_norm.wasm.
    return jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype), vmap_method="broadcast_all")(
        x, eps=EPS
    )


@jax.custom_vjp
def rms_norm_vjp(x):
    return rms_norm(x)


def rms_norm_fwd(x):
    y, res = jax.ffi.ffi_call(
        "rms_norm_fwd",
        (jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(x.shape[:-1], x.dtype)),
        vmap_method="broadcast_all",
    )(x, eps=EPS)
    return y, (res, x)


def rms_norm_bwd(residuals, ct):
    res, x = residuals
    return (
        jax.ffi.ffi_call("rms_norm_bwd", jax.ShapeDtypeStruct(x.shape, x.dtype), vmap_method="broadcast_all")(
            res, x, ct
        ),
    )


rms_norm_vjp.defvjp(rms_norm_fwd, rms_norm_bwd)


def reference(x):
    return x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + EPS)


def main():
    print("JAX platforms:", jax.config.jax_platforms, "| devices:", jax.devices())
    x = jnp.asarray(np.random.default_rng(0).normal(size=(4, 8)), dtype=jnp.float32)

    y = jax.jit(rms_norm)(x)
    print("rms_norm (guest) matches jnp:", bool(jnp.allclose(y, reference(x), rtol=1e-5, atol=1e-6)))

    g = jax.grad(lambda x: jnp.sum(rms_norm_vjp(x) * jnp.arange(8.0)))(x)
    g_ref = jax.grad(lambda x: jnp.sum(reference(x) * jnp.arange(8.0)))(x)
    print("grad through rms_norm_fwd/bwd (guests) matches jnp:", bool(jnp.allclose(g, g_ref, rtol=1e-4, atol=1e-5)))

    a = jnp.asarray([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]], dtype=jnp.float32)
    b = jnp.asarray([1.0, 2.0, 3.0], dtype=jnp.float32)
    sol = jnp.linalg.solve(a, b)
    w, v = jnp.linalg.eigh(a)
    print("jnp.linalg.solve (native LAPACK):", np.round(np.asarray(sol), 5), "| residual", float(jnp.abs(a @ sol - b).max()))
    print("jnp.linalg.eigh eigenvalues:", np.round(np.asarray(w), 5), "| det", float(jnp.linalg.det(a)))

    try:
        jax.ffi.ffi_call("trap", jax.ShapeDtypeStruct((1,), jnp.float32))(x).block_until_ready()
    except Exception as e:  # a guest that traps fails its own call, nothing else
        print("a trapping guest raised", type(e).__name__ + ":", str(e).splitlines()[0][:120])
    print("and the next call works:", bool(jnp.allclose(jax.jit(rms_norm)(x), y)))


if __name__ == "__main__":
    main()
