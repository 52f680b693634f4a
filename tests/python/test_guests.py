"""jax.ffi.ffi_call to the bundled wasm guests on platform cyxla, in process.

The cyxla backend of this process allows every bundled target
(CYXLA_ALLOW=*, support.py). The guests and their targets are described in
guests/README.md; the calls below are written as in tests/gen_guest_programs.py
(the JAX FFI tutorial's pattern, `eps=np.float32(1e-5)`).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

jax.config.update("jax_enable_x64", True)

EPS = np.float32(1e-5)
# the guest computes in f32; the reference is f64 rounded once
RMS_TOL = dict(rtol=2e-6, atol=1e-6)


def rms_norm(x, target="rms_norm"):
    return jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(x.shape, x.dtype), vmap_method="broadcast_all")(x, eps=EPS)


def rms_norm_fwd(x, target="rms_norm_fwd"):
    y, res = jax.ffi.ffi_call(
        target,
        (jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(x.shape[:-1], x.dtype)),
        vmap_method="broadcast_all",
    )(x, eps=EPS)
    return y, (res, x)


def rms_norm_bwd(residuals, ct, target="rms_norm_bwd"):
    res, x = residuals
    return (jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(ct.shape, ct.dtype), vmap_method="broadcast_all")(res, x, ct),)


@jax.custom_vjp
def rms_norm_vjp(x):
    return rms_norm(x)


rms_norm_vjp.defvjp(rms_norm_fwd, rms_norm_bwd)


def scale_any(x, factor, target="scale_any"):
    return jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(x.shape, x.dtype))(x, factor=np.float64(factor))


def jnp_rms_norm(x):
    """The tutorial's pure-JAX reference."""
    return x / jnp.sqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + EPS)


def np_rms_norm(x):
    x64 = x.astype(np.float64)
    return (x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + float(EPS))).astype(np.float32)


def normal(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def on(device, *xs):
    return [jax.device_put(x, device) for x in xs]


def assert_on(device, *arrays):
    for a in arrays:
        assert a.devices() == {device}, f"result on {a.devices()}, not {device}"


# --------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["rms_norm", "rms_norm_cpp"])
@pytest.mark.parametrize("shape", [(8,), (3, 16), (2, 3, 8)], ids=str)
def test_rms_norm(cyxla, cpu, target, shape):
    x = normal(shape, seed=len(shape))
    (xd,) = on(cyxla, x)
    got = jax.jit(lambda x: rms_norm(x, target))(xd)
    assert_on(cyxla, got)
    np.testing.assert_allclose(np.asarray(got), np_rms_norm(x), **RMS_TOL)
    # the jnp reference, on JAX's own CPU backend
    want = jax.jit(jnp_rms_norm)(jax.device_put(x, cpu))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


def test_rms_norm_eager(cyxla):
    """ffi_call outside jit (JAX compiles a one-op program)."""
    x = normal((4, 8), seed=1)
    with jax.default_device(cyxla):
        got = rms_norm(jnp.asarray(x))
    assert_on(cyxla, got)
    np.testing.assert_allclose(np.asarray(got), np_rms_norm(x), **RMS_TOL)


@pytest.mark.parametrize("target", ["scale_any", "scale_any_cpp"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_scale_any(cyxla, target, dtype):
    x = (normal((3, 5), seed=2) * 100).astype(dtype)
    (xd,) = on(cyxla, x)
    got = jax.jit(lambda x: scale_any(x, -1.75, target))(xd)
    assert_on(cyxla, got)
    assert got.dtype == dtype
    np.testing.assert_array_equal(np.asarray(got), (x.astype(np.float64) * -1.75).astype(dtype))


def test_two_guests_in_one_program(cyxla):
    x = normal((4, 8), seed=3)
    (xd,) = on(cyxla, x)
    got = jax.jit(lambda x: scale_any(rms_norm(x), 3.0) + 1)(xd)
    np.testing.assert_allclose(np.asarray(got), np_rms_norm(x).astype(np.float64) * 3 + 1, rtol=1e-5)


def test_vmap(cyxla):
    x = normal((4, 3, 8), seed=4)
    (xd,) = on(cyxla, x)
    got = jax.jit(jax.vmap(rms_norm))(xd)
    np.testing.assert_allclose(np.asarray(got), np_rms_norm(x), **RMS_TOL)
    got = jax.jit(jax.vmap(rms_norm, in_axes=1, out_axes=1))(xd)
    np.testing.assert_allclose(np.asarray(got), np_rms_norm(x), **RMS_TOL)


def test_grad_custom_vjp(cyxla, cpu):
    x, w = normal((3, 16), seed=5), normal((3, 16), seed=6)
    xd, wd = on(cyxla, x, w)

    def loss(x, w):
        return jnp.sum(rms_norm_vjp(x) * w)

    def ref_loss(x, w):
        return jnp.sum(jnp_rms_norm(x) * w)

    got = jax.jit(jax.grad(loss))(xd, wd)
    assert_on(cyxla, got)
    want = jax.jit(jax.grad(ref_loss))(*on(cpu, x.astype(np.float64), w.astype(np.float64)))
    scale = float(np.abs(np.asarray(want)).max())
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6 * scale)
    # value_and_grad: the forward through rms_norm_fwd
    v, _ = jax.jit(jax.value_and_grad(loss))(xd, wd)
    np.testing.assert_allclose(float(v), float(ref_loss(x.astype(np.float64), w.astype(np.float64))), rtol=1e-5)


def test_tridiag_solve_guest(cyxla, cpu):
    rng = np.random.default_rng(7)
    dl, d, du = (rng.standard_normal((2, 6)) for _ in range(3))
    d += 4
    b = rng.standard_normal((2, 6, 3))

    def guest(dl, d, du, b):
        return jax.ffi.ffi_call("tridiag_solve", jax.ShapeDtypeStruct(b.shape, b.dtype))(dl, d, du, b)

    got = jax.jit(guest)(*on(cyxla, dl, d, du, b))
    want = jax.jit(jax.lax.linalg.tridiagonal_solve)(*on(cpu, dl, d, du, b))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-10, atol=1e-12)


def test_copy16_and_noop(cyxla):
    x = normal((16,), seed=8)
    (xd,) = on(cyxla, x)
    got = jax.jit(lambda x: jax.ffi.ffi_call("copy16", jax.ShapeDtypeStruct((16,), np.float32))(x))(xd)
    np.testing.assert_array_equal(np.asarray(got), x)
    # noop has no results: keep it with has_side_effect
    f = jax.jit(lambda x: (jax.ffi.ffi_call("noop", (), has_side_effect=True)(x), x + 1)[1])
    np.testing.assert_array_equal(np.asarray(f(xd)), x + 1)


def test_guest_with_linalg(cyxla):
    """A guest and a LAPACK target in one program."""
    a = normal((4, 4), seed=9) + 4 * np.eye(4, dtype=np.float32)
    b = normal((4, 8), seed=10)
    ad, bd = on(cyxla, a, b)
    got = jax.jit(lambda a, b: jnp.linalg.solve(a, rms_norm(b)))(ad, bd)
    want = np.linalg.solve(a.astype(np.float64), np_rms_norm(b).astype(np.float64))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------
# Several devices
# --------------------------------------------------------------------------


def test_several_devices(cyxla_devices):
    assert len(cyxla_devices) >= 2, cyxla_devices
    assert all(d.platform == "cpu" for d in cyxla_devices)


def test_pmap(cyxla_devices):
    n = len(cyxla_devices)
    x = normal((n, 3, 8), seed=11)
    got = jax.pmap(rms_norm, devices=cyxla_devices)(x)
    np.testing.assert_allclose(np.asarray(got), np_rms_norm(x), **RMS_TOL)
    assert {s.device for s in got.addressable_shards} == set(cyxla_devices)


def test_shard_map_calls_each_device(cyxla_devices):
    """Each shard's call runs on its own device: frame_info reports the ordinal."""
    n = len(cyxla_devices)
    mesh = Mesh(np.array(cyxla_devices), ("d",))
    x = normal((n * 2, 8), seed=12)

    def per_shard(x):
        info = jax.ffi.ffi_call("frame_info", jax.ShapeDtypeStruct((2,), np.int64))()
        return rms_norm(x), info[None, :]

    f = jax.jit(jax.shard_map(per_shard, mesh=mesh, in_specs=P("d"), out_specs=(P("d"), P("d"))))
    y, info = f(jax.device_put(x, NamedSharding(mesh, P("d"))))
    np.testing.assert_allclose(np.asarray(y), np_rms_norm(x), **RMS_TOL)
    info = np.asarray(info)
    assert info.shape == (n, 2)
    ordinals = sorted(info[:, 0].tolist())
    assert ordinals == sorted(d.local_hardware_id for d in cyxla_devices) or ordinals == list(range(n)), info
    assert len(set(info[:, 1].tolist())) == 1, f"one run id for one launch: {info}"


def test_sharded_jit(cyxla_devices):
    """jit over an array sharded across the cyxla devices, no shard_map: XLA
    places the guest call (a custom call without a sharding rule) itself."""
    n = len(cyxla_devices)
    mesh = Mesh(np.array(cyxla_devices), ("d",))
    x = normal((n * 3, 16), seed=13)
    xs = jax.device_put(x, NamedSharding(mesh, P("d")))
    got = jax.jit(lambda x: rms_norm(x) * 2)(xs)
    np.testing.assert_allclose(np.asarray(got), np_rms_norm(x) * 2, rtol=1e-5, atol=1e-6)
    assert {s.device for s in got.addressable_shards} <= set(cyxla_devices)


# --------------------------------------------------------------------------
# Guest errors
# --------------------------------------------------------------------------

ERRORS = (jax.errors.JaxRuntimeError,)


def call(target, x, **attrs):
    return jax.jit(lambda x: jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(x.shape, x.dtype))(x, **attrs))(x)


def assert_next_call_works(cyxla):
    x = normal((2, 8), seed=14)
    got = jax.jit(rms_norm)(jax.device_put(x, cyxla))
    np.testing.assert_allclose(np.asarray(got), np_rms_norm(x), **RMS_TOL)


def assert_call_fails(cyxla, target, fragments, **attrs):
    """A call to ``target`` raises an error whose message holds each of
    ``fragments``, and the next call works."""
    (x,) = on(cyxla, normal((4,)))
    with pytest.raises(ERRORS) as e:
        np.asarray(call(target, x, **attrs))
    msg = str(e.value)
    for fragment in fragments:
        assert fragment in msg, msg
    assert_next_call_works(cyxla)


def test_trap(cyxla):
    assert_call_fails(cyxla, "trap", ["target `trap` (guest trap.wasm)", "unreachable"])


def test_fail_with_code_and_message(cyxla):
    assert_call_fails(
        cyxla,
        "fail",
        ["target `fail` (guest trap.wasm): tenant quota exceeded", "RESOURCE_EXHAUSTED"],
        code=np.int32(8),
        message="tenant quota exceeded",
    )


def test_fail_default(cyxla):
    assert_call_fails(cyxla, "fail", ["the `fail` target always fails"])


def test_panic(cyxla):
    assert_call_fails(
        cyxla, "panic", ["target `panic` (guest trap.wasm)", "deliberate panic: oh no"], message="oh no"
    )


def test_guest_argument_error(cyxla):
    """The guest's own INVALID_ARGUMENT (rank-0 input)."""
    (x,) = on(cyxla, np.float32(1.5))
    with pytest.raises(ERRORS) as e:
        np.asarray(jax.jit(rms_norm)(x))
    msg = str(e.value)
    assert "target `rms_norm` (guest rms_norm.wasm)" in msg and "rank-0" in msg, msg
    assert_next_call_works(cyxla)


def test_errors_repeat_and_recover(cyxla):
    """Many failing calls in a row (trapped instances are replaced), then good ones."""
    (x,) = on(cyxla, normal((4,)))
    for _ in range(10):
        with pytest.raises(ERRORS, match=re.escape("target `trap` (guest trap.wasm)")):
            np.asarray(call("trap", x))
    for _ in range(3):
        assert_next_call_works(cyxla)


def test_unknown_target_fails_to_compile(cyxla):
    (x,) = on(cyxla, normal((4,)))
    with pytest.raises(ERRORS) as e:
        np.asarray(call("no_such_target_anywhere", x))
    assert "no_such_target_anywhere" in str(e.value)
    assert_next_call_works(cyxla)
