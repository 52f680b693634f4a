"""The bundled guests on JAX's own ``cpu`` platform (jaxlib's CPU client),
configured as platform ``cyxla`` is: through ``jax_plugins.cyxla.serve_on_cpu``
or ``cyxla-host --platform cpu``.

Each check runs in a subprocess (JAX's platforms are set at import time;
this process's in-process tests run on ``cyxla``), compares with JAX's own
reference code in the same process, and reports one line per check.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from support import GUESTS, LIBRARY, ROOT, assert_no_crash, run_launched, run_python
from support import with_target

# The guest checks: each prints `CHECK name ok` or `CHECK name FAILED: why`.
CHECKS = textwrap.dedent(r"""
    import json, traceback
    import numpy as np
    import jax, jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)

    EPS = np.float32(1e-5)
    results = {}

    def check(fn):
        try:
            fn()
            results[fn.__name__] = "ok"
        except Exception:
            results[fn.__name__] = "FAILED: " + traceback.format_exc()[-3000:]
        return fn

    def rms_norm(x):
        return jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype),
                                vmap_method="broadcast_all")(x, eps=EPS)

    def rms_norm_fwd(x):
        y, res = jax.ffi.ffi_call("rms_norm_fwd", (jax.ShapeDtypeStruct(x.shape, x.dtype),
                                  jax.ShapeDtypeStruct(x.shape[:-1], x.dtype)), vmap_method="broadcast_all")(x, eps=EPS)
        return y, (res, x)

    def rms_norm_bwd(residuals, ct):
        res, x = residuals
        return (jax.ffi.ffi_call("rms_norm_bwd", jax.ShapeDtypeStruct(ct.shape, ct.dtype),
                                 vmap_method="broadcast_all")(res, x, ct),)

    @jax.custom_vjp
    def rms_norm_vjp(x):
        return rms_norm(x)

    rms_norm_vjp.defvjp(rms_norm_fwd, rms_norm_bwd)

    def jnp_rms_norm(x):
        return x / jnp.sqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + EPS)

    def normal(shape, seed):
        return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

    @check
    def platform():
        assert jax.default_backend() == "cpu", jax.default_backend()
        assert all(d.platform == "cpu" for d in jax.devices()), jax.devices()

    @check
    def results_equal_reference():
        x = normal((3, 16), 1)
        got = np.asarray(jax.jit(rms_norm)(x))
        want = np.asarray(jax.jit(jnp_rms_norm)(x.astype(np.float64)))
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)

    @check
    def vmap():
        x = normal((4, 3, 8), 2)
        want = np.asarray(jax.jit(jax.vmap(jnp_rms_norm))(x.astype(np.float64)))
        np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(rms_norm))(x)), want, rtol=2e-6, atol=1e-6)
        got = jax.jit(jax.vmap(rms_norm, in_axes=1, out_axes=1))(x)
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=1e-6)

    @check
    def grad_custom_vjp():
        x, w = normal((3, 16), 5), normal((3, 16), 6)
        got = jax.jit(jax.grad(lambda x, w: jnp.sum(rms_norm_vjp(x) * w)))(x, w)
        want = jax.jit(jax.grad(lambda x, w: jnp.sum(jnp_rms_norm(x) * w)))(x.astype(np.float64), w.astype(np.float64))
        scale = float(np.abs(np.asarray(want)).max())
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6 * scale)

    def set0(x, alias=True):
        return jax.ffi.ffi_call("inplace_set0", jax.ShapeDtypeStruct(x.shape, x.dtype),
                                input_output_aliases={0: 0} if alias else {})(x, value=np.float64(42.0))

    def set0_ref(x):
        return x.at[..., 0].set(42.0)

    @check
    def aliasing():
        x = (np.arange(12).reshape(3, 4) * 2 + 1).astype(np.float32)
        got = jax.jit(set0)(x)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(jax.jit(set0_ref)(x)))
        # without the alias the guest writes a fresh result: only y[..., 0] is set
        got = jax.jit(lambda x: set0(x, alias=False))(x)
        np.testing.assert_array_equal(np.asarray(got)[..., 0], np.full(3, 42.0, np.float32))

    @check
    def donation():
        x = np.linspace(-3, 3, 24, dtype=np.float64).reshape(4, 6)
        got = jax.jit(lambda x: set0(x * 2), donate_argnums=0)(jnp.asarray(x))
        np.testing.assert_array_equal(np.asarray(got), np.asarray(jax.jit(lambda x: set0_ref(x * 2))(x)))

    def call(target, x, **attrs):
        return jax.jit(lambda x: jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(x.shape, x.dtype))(x, **attrs))(x)

    def next_call_works():
        x = normal((2, 8), 14)
        want = np.asarray(jax.jit(jnp_rms_norm)(x.astype(np.float64)))
        np.testing.assert_allclose(np.asarray(jax.jit(rms_norm)(x)), want, rtol=2e-6, atol=1e-6)

    def fails(target, fragments, **attrs):
        try:
            np.asarray(call(target, normal((4,), 0), **attrs))
        except jax.errors.JaxRuntimeError as e:
            for f in fragments:
                assert f in str(e), str(e)
        else:
            raise AssertionError(f"{target} did not fail")
        next_call_works()

    @check
    def guest_error_then_working_call():
        fails("fail", ["target `fail` (guest trap.wasm): tenant quota exceeded", "RESOURCE_EXHAUSTED"],
              code=np.int32(8), message="tenant quota exceeded")

    @check
    def trap_then_working_call():
        for _ in range(3):
            fails("trap", ["target `trap` (guest trap.wasm)", "unreachable"])

    @check
    def lapack_is_jaxlibs():
        a = normal((4, 4), 9) + 4 * np.eye(4, dtype=np.float32)
        b = normal((4, 3), 10)
        got = jax.jit(jnp.linalg.solve)(a, b)
        np.testing.assert_allclose(np.asarray(got), np.linalg.solve(a.astype(np.float64), b), rtol=1e-4, atol=1e-5)
        text = jax.jit(jnp.linalg.solve).lower(a, b).compile().as_text()
        assert "lapack_sgetrf_ffi" in text, text[:2000]

    print("REPORT " + json.dumps(results), flush=True)
""")

ALLOW = "rms_norm,rms_norm_fwd,rms_norm_bwd,inplace_set0,trap,fail"

NAMES = [
    "platform",
    "results_equal_reference",
    "vmap",
    "grad_custom_vjp",
    "aliasing",
    "donation",
    "guest_error_then_working_call",
    "trap_then_working_call",
    "lapack_is_jaxlibs",
]


def report(r) -> dict:
    assert_no_crash(r)
    line = next((l for l in r.stdout.splitlines() if l.startswith("REPORT ")), None)
    assert line and r.returncode == 0, r.describe()
    return json.loads(line[len("REPORT "):])


@pytest.fixture(scope="module")
def api_report():
    """serve_on_cpu in a program started without the launcher."""
    code = (
        "import jax_plugins.cyxla as cyxla\n"
        f"served = cyxla.serve_on_cpu(allow={ALLOW.split(',')!r}, guests={str(GUESTS)!r}, "
        "limits={'call_timeout': '5s'})\n"
        f"assert served == sorted({ALLOW.split(',')!r}), served\n"
        + CHECKS
    )
    return report(run_python(code, env={"CYXLA_PJRT_LIBRARY": str(LIBRARY), "JAX_PLATFORMS": "cpu"}))


@pytest.fixture(scope="module")
def launcher_report():
    """`cyxla-host --platform cpu --allow ... -- python`."""
    return report(run_launched(CHECKS, ["--platform", "cpu", "--allow", ALLOW, "--limit", "call_timeout=5s"]))


@pytest.mark.parametrize("name", NAMES)
def test_serve_on_cpu(api_report, name):
    assert api_report.get(name) == "ok", api_report.get(name, api_report)


@pytest.mark.parametrize("name", NAMES)
def test_launcher_platform_cpu(launcher_report, name):
    assert launcher_report.get(name) == "ok", launcher_report.get(name, launcher_report)


def test_launcher_refuses_cpu_without_native_code():
    r = run_launched("print('ran')", ["--platform", "cpu", "--deny-native", "--allow", "rms_norm"])
    assert r.returncode == 2 and "ran" not in r.stdout, r.describe()
    assert "refused" in r.stderr and "use platform `cyxla`" in r.stderr, r.describe()


def test_serve_on_cpu_refuses_without_native_code(tmp_path):
    config = tmp_path / "cyxla.toml"
    config.write_text('allow = ["rms_norm"]\nallow_native = false\n')
    code = f"""
        import jax_plugins.cyxla as cyxla
        try:
            cyxla.serve_on_cpu(config={str(config)!r})
        except RuntimeError as e:
            print("REFUSED", e)
        else:
            print("SERVED")
    """
    r = run_python(code, env={"CYXLA_PJRT_LIBRARY": str(LIBRARY), "JAX_PLATFORMS": "cpu"})
    assert_no_crash(r)
    assert "REFUSED" in r.stdout and "use platform `cyxla`" in r.stdout, r.describe()
    assert "allow_native = false" in r.stdout, r.describe()


def test_launcher_platform_cpu_devices():
    r = run_launched(
        "import jax; print('DEVICES', jax.device_count(), jax.default_backend())",
        ["--platform", "cpu", "--devices", "3", "--allow", "rms_norm"],
    )
    assert "DEVICES 3 cpu" in r.stdout, r.describe()


RELOAD = textwrap.dedent(r"""
    import os, sys, time
    import numpy as np
    import jax
    import jax_plugins.cyxla as cyxla
    folder, b, fresh = sys.argv[1:4]
    print("SERVED", cyxla.serve_on_cpu(allow="*", guests=folder, reload=True))
    x = np.arange(16, dtype=np.float32)
    f = jax.jit(lambda x: jax.ffi.ffi_call("hot", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, factor=3.0))
    print("START", np.asarray(f(x)).tolist()[:3])
    open(os.path.join(folder, "hot.wasm"), "wb").write(open(b, "rb").read())
    deadline = time.time() + 30
    while time.time() < deadline and np.asarray(f(x))[1] != 3.0:
        time.sleep(0.05)
    print("NEW", np.asarray(f(x)).tolist()[:3])
    open(os.path.join(folder, "fresh.wasm"), "wb").write(open(fresh, "rb").read())
    deadline = time.time() + 30
    while time.time() < deadline:
        time.sleep(0.2)
        served = cyxla.serve_on_cpu()
        if "fresh_target" in served:
            break
    print("SERVED", served)
    g = jax.jit(lambda x: jax.ffi.ffi_call("fresh_target", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, factor=2.0))
    print("FRESH", np.asarray(g(x)).tolist()[:3])
""")


def test_hot_reload_on_cpu(tmp_path):
    """A new version of a served target's guest serves the next call of the
    same compiled program; a new target is registered by the next
    serve_on_cpu()."""
    folder = tmp_path / "guests"
    folder.mkdir()
    (folder / "hot.wasm").write_bytes(with_target((GUESTS / "copy16.wasm").read_bytes(), "hot", "copy16"))
    b = tmp_path / "b.bin"
    b.write_bytes(with_target((GUESTS / "scale_any.wasm").read_bytes(), "hot", "scale_any"))
    fresh = tmp_path / "fresh.bin"
    fresh.write_bytes(with_target((GUESTS / "scale_any.wasm").read_bytes(), "fresh_target", "scale_any"))
    script = tmp_path / "reload.py"
    script.write_text(RELOAD)
    from support import VENV_PYTHON, clean_env, run

    r = run([VENV_PYTHON, script, folder, b, fresh], env=clean_env({"CYXLA_PJRT_LIBRARY": str(LIBRARY),
                                                                     "JAX_PLATFORMS": "cpu"}))
    assert_no_crash(r)
    assert r.returncode == 0, r.describe()
    out = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    assert out["START"] == "[0.0, 1.0, 2.0]", r.describe()
    assert out["NEW"] == "[0.0, 3.0, 6.0]", r.describe()
    assert "fresh_target" in out["SERVED"], r.describe()
    assert out["FRESH"] == "[0.0, 2.0, 4.0]", r.describe()
