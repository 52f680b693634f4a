"""A Jupyter kernel started under the launcher, driven by nbclient.

The kernel spec's argv starts ipykernel through `cyxla-host --allow rms_norm
--allow trap -- python -m ipykernel_launcher -f {connection_file}`, as an
operator of a notebook server would. One kernel runs a guest, survives a
trapping guest (the error is the cell's output) and runs the guest again.
"""

from __future__ import annotations

import json

import nbformat
from nbclient import NotebookClient

from support import HOST, LIBRARY, VENV_PYTHON, clean_env

SETUP = """
import numpy as np
import jax, jax.numpy as jnp
print("BACKEND", jax.default_backend(), jax.devices()[0].platform, len(jax.devices("cyxla")))

def rms_norm(x):
    return jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, eps=np.float32(1e-5))

def reference(x):
    return x / jnp.sqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + np.float32(1e-5))
"""

GUEST = """
x = jnp.asarray(np.random.default_rng({seed}).standard_normal((4, 16)).astype(np.float32))
y = jax.jit(rms_norm)(x)
assert np.allclose(np.asarray(y), np.asarray(reference(x)), rtol=1e-5, atol=1e-6)
print("GUEST OK {seed}")
"""

TRAP = """
jax.jit(lambda x: jax.ffi.ffi_call("trap", jax.ShapeDtypeStruct(x.shape, x.dtype))(x))(jnp.ones(4, jnp.float32)).block_until_ready()
print("NOT REACHED")
"""

LINALG = """
a = jnp.asarray(np.random.default_rng(5).standard_normal((5, 5)) + 5 * np.eye(5), dtype=jnp.float32)
assert np.allclose(np.asarray(jnp.linalg.inv(a) @ a), np.eye(5), atol=1e-4)
print("LINALG OK")
"""


def text_of(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def errors_of(cell) -> list:
    return [o for o in cell.outputs if o.output_type == "error"]


def run_notebook(tmp_path, monkeypatch, name, display_name, argv, first_cell, env):
    """Runs the notebook (`first_cell`, a guest call, a trap, the guest again,
    linalg) on a kernel spec `name` with `argv`, headless, in an environment
    of nothing but `env` and the kernel spec's path."""
    kernels = tmp_path / "jupyter" / "kernels" / name
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps(
        {"argv": argv, "display_name": display_name, "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in
                (first_cell, GUEST.format(seed=1), TRAP, GUEST.format(seed=2), LINALG)]
    client = NotebookClient(nb, kernel_name=name, timeout=180, startup_timeout=120, allow_errors=True)
    client.execute(env=clean_env({"JUPYTER_PATH": str(tmp_path / "jupyter"), **env}))
    return nb


def check_cells(nb) -> str:
    """Asserts what every run of the notebook shows: the guest ran twice,
    the trap failed its cell naming the target and its guest and the
    kernel lived on, linalg worked. Returns the first cell's text."""
    setup, first, trap, again, linalg = nb.cells
    for cell in (setup, first, again, linalg):
        assert not errors_of(cell), f"cell failed:\n{cell.source}\n{cell.outputs}"
    assert "GUEST OK 1" in text_of(first), first.outputs
    errs = errors_of(trap)
    assert errs, f"the trap cell did not fail: {trap.outputs}"
    assert "target `trap` (guest trap.wasm)" in errs[0]["evalue"], errs[0]
    assert "NOT REACHED" not in text_of(trap)
    assert "GUEST OK 2" in text_of(again), again.outputs
    assert "LINALG OK" in text_of(linalg), linalg.outputs
    return text_of(setup)


def test_notebook_under_launcher(tmp_path, monkeypatch):
    argv = [str(HOST), "--allow", "rms_norm", "--allow", "trap", "--limit", "call_timeout=5s", "--",
            str(VENV_PYTHON), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    # the kernel's environment: nothing of this process's cyxla/JAX set-up
    nb = run_notebook(tmp_path, monkeypatch, "cyxla", "Python (cyxla)", argv, SETUP, {})
    backend = check_cells(nb)
    assert "BACKEND cpu cpu" in backend or "BACKEND cyxla cpu" in backend, backend


SERVE_ON_CPU = """
import jax_plugins.cyxla as cyxla
print("SERVED", cyxla.serve_on_cpu(allow=["rms_norm", "trap"], limits={"call_timeout": "5s"}))
""" + SETUP.replace('len(jax.devices("cyxla"))', "len(jax.devices())")


def test_notebook_serving_on_cpu(tmp_path, monkeypatch):
    """A plain kernel (no launcher) that serves the guests on JAX's own
    ``cpu`` platform with ``serve_on_cpu`` in its first cell."""
    argv = [str(VENV_PYTHON), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    nb = run_notebook(tmp_path, monkeypatch, "plain", "Python", argv, SERVE_ON_CPU,
                      {"CYXLA_PJRT_LIBRARY": str(LIBRARY), "JAX_PLATFORMS": "cpu"})
    text = check_cells(nb)
    assert "SERVED ['rms_norm', 'trap']" in text and "BACKEND cpu cpu" in text, text
