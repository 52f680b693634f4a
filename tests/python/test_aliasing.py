"""Aliased and donated buffers through the plugin, in JAX on cyxla: an
in-place guest (Rust `inplace_set0`, C++ `inplace_set0_cpp`) writes only
y[..., 0]; the rest of the result must be the operand's values, as with a
native handler. JAX's aliasing example (`aliasing_cpp`) sees one data
pointer only when the call declares the alias."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

VALUE = 42.0


def set0(target, x, *, alias=True):
    return jax.ffi.ffi_call(
        target, jax.ShapeDtypeStruct(x.shape, x.dtype), input_output_aliases={0: 0} if alias else {}
    )(x, value=np.float64(VALUE))


def expected(x):
    y = np.array(x, copy=True)
    y[..., 0] = VALUE
    return y


@pytest.fixture(autouse=True, scope="module")
def _x64():
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)


@pytest.mark.parametrize("target", ["inplace_set0", "inplace_set0_cpp"])
@pytest.mark.parametrize("dtype,shape", [(np.float32, (3, 4)), (np.float64, (2, 3, 5)), (np.float32, (7,))])
def test_input_output_aliases(cyxla, target, dtype, shape):
    x = (np.arange(np.prod(shape)).reshape(shape) * 2 + 1).astype(dtype)
    y = jax.jit(lambda x: set0(target, x))(jax.device_put(x, cyxla))
    assert y.dtype == dtype
    np.testing.assert_array_equal(np.asarray(y), expected(x))


@pytest.mark.parametrize("target", ["inplace_set0", "inplace_set0_cpp"])
def test_donate_argnums(cyxla, target):
    x = np.linspace(-3, 3, 24, dtype=np.float64).reshape(4, 6)
    f = jax.jit(lambda x: set0(target, x * 2), donate_argnums=0)
    y = f(jax.device_put(x, cyxla))
    np.testing.assert_array_equal(np.asarray(y), expected(x * 2))


def test_aliased_calls_on_every_device(cyxla_devices):
    n = len(cyxla_devices)
    assert n >= 2, cyxla_devices
    x = np.arange(n * 3 * 5, dtype=np.float32).reshape(n, 3, 5)
    y = jax.pmap(lambda x: set0("inplace_set0", x), devices=cyxla_devices)(x)
    np.testing.assert_array_equal(np.asarray(y), expected(x))


def test_jax_aliasing_example_sees_one_pointer_only_when_aliased(cyxla):
    x = jax.device_put(jnp.arange(16, dtype=jnp.float32).reshape(2, 8), cyxla)

    def check(x, alias):
        return jax.ffi.ffi_call(
            "aliasing_cpp", jax.ShapeDtypeStruct(x.shape, x.dtype), input_output_aliases={0: 0} if alias else {}
        )(x)

    y = jax.jit(lambda x: check(x, True))(x)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    with pytest.raises(Exception, match="When aliased, the input and output buffers should point to the same data"):
        jax.jit(lambda x: check(x, False))(x).block_until_ready()
