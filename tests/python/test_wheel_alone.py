"""The wheel installed without its extra ``pjrt``: no real XLA CPU PJRT
plugin in the environment, so platform ``cyxla`` cannot start. JAX must
still work there: ``jax_plugins.cyxla`` leaves the platform out and warns
once, naming what to install, unless ``JAX_PLATFORMS`` asks for ``cyxla``,
where the error stays. The guests run on JAX's own ``cpu`` platform, from
docs/using-jax.md's ``serve_on_cpu`` example and under ``cyxla-host --platform
cpu``, as the README's install without the extra and its first script show.

One venv outside the checkout (Python 3.12, JAX 0.12.0.1, the wheel and
nothing else), an environment clean of cyxla's and JAX's configuration.
"""

from __future__ import annotations

import pathlib
import re
import shutil
import tempfile

import pytest

from support import ROOT, clean, doc_section, find_python, run
from test_wheel import run_readme_first_script

PYTHON = "3.12"
JAX = "jax==0.12.0.1"
TIMEOUT = 600
# The real plugins the plugin library looks for (host/setup/src/process.rs,
# PLUGIN_PACKAGES): none may be installed here.
REAL_PLUGINS = ("lammps_jax_pjrt_cpu", "fastatomstruct_xla_cpu")
WARNING = "platform `cyxla` is not registered"

PLAIN_JAX = "import jax, jax.numpy as jnp; print(jnp.ones(3).sum(), jax.default_backend())"

GUEST_ON_CPU = """
import numpy as np
import jax
x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
y = jax.jit(lambda x: jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, eps=np.float32(1e-5)))(x)
ref = x / np.sqrt(np.mean(x.astype(np.float64) ** 2, axis=-1, keepdims=True) + 1e-5)
assert np.allclose(np.asarray(y), ref, rtol=1e-5, atol=1e-6)
print("OK", jax.default_backend(), y.devices())
"""


class Alone:
    """A venv with the wheel and JAX only."""

    def __init__(self, wheel: pathlib.Path):
        python = find_python(PYTHON)
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="cyxla-wheel-alone-"))
        assert ROOT not in self.dir.parents
        self.bin = self.dir / "venv" / "bin"
        try:
            self._install(python, wheel)
        except BaseException:
            # A failed install would leave its half-installed packages behind.
            shutil.rmtree(self.dir, ignore_errors=True)
            raise

    def _install(self, python: str, wheel: pathlib.Path) -> None:
        r = run([python, "-m", "venv", self.dir / "venv"], env=clean({}, self.bin), cwd=self.dir)
        assert r.returncode == 0, r.describe()
        r = run([self.bin / "pip", "install", "-q", "--disable-pip-version-check", wheel, JAX],
                env=clean({}, self.bin), cwd=self.dir, timeout=TIMEOUT)
        assert r.returncode == 0, f"pip install of the wheel alone failed\n{r.describe()}"
        self.site = next((self.dir / "venv" / "lib").glob("python3.*/site-packages"))
        installed = [p for p in REAL_PLUGINS if (self.site / p).exists()]
        assert not installed, f"a real PJRT plugin came with the wheel alone: {installed}"

    def run(self, argv, extra: dict[str, str] | None = None):
        return run(argv, env=clean(extra or {}, self.bin), cwd=self.dir, timeout=TIMEOUT)

    def python(self, code: str, extra: dict[str, str] | None = None):
        return self.run([self.bin / "python", "-c", code], extra)


@pytest.fixture(scope="module")
def alone(wheel):
    venv = Alone(wheel)
    yield venv
    shutil.rmtree(venv.dir, ignore_errors=True)


def test_plain_jax_runs_on_cpu_and_warns_once_what_to_install(alone, wheel):
    # initialize() again, as a second discovery would: still one warning.
    r = alone.python(PLAIN_JAX + "; import jax_plugins.cyxla as c; c.initialize(); print(jax.devices())")
    assert r.returncode == 0, r.describe()
    assert r.stdout.splitlines()[0] == "3.0 cpu", r.describe()
    assert "CpuDevice" in r.stdout and "cyxla" not in r.stdout, r.describe()
    assert r.stderr.count(WARNING) == 1, r.describe()
    warning = next(line for line in r.stderr.splitlines() if WARNING in line)
    assert f'pip install "{wheel.name}[pjrt]"' in warning, warning
    assert "lammps-jax-pjrt-cpu==0.11.2" in warning, warning
    assert str(alone.site) in warning, warning
    assert "cyxla-host --platform cpu" in warning, warning
    # The very command of the issue.
    r = alone.python(PLAIN_JAX)
    assert r.returncode == 0 and r.stdout.strip() == "3.0 cpu", r.describe()
    assert r.stderr.count(WARNING) == 1, r.describe()


def test_the_warning_on_a_machine_pypi_has_no_plugin_for(alone, wheel):
    # The extra's plugin is built for x86-64 only (the wheel's marker leaves
    # it out elsewhere, e.g. on aarch64, whose wheel tests/aarch64 tests
    # under qemu): on any other machine the warning must not say to install
    # it. The machine Python reports is what the package reads.
    code = 'import platform; platform.machine = lambda: "riscv64"; ' + PLAIN_JAX
    r = alone.python(code)
    assert r.returncode == 0 and r.stdout.strip() == "3.0 cpu", r.describe()
    assert r.stderr.count(WARNING) == 1, r.describe()
    warning = next(line for line in r.stderr.splitlines() if WARNING in line)
    assert "for this machine, riscv64 (PyPI has none" in warning, warning
    assert "CYXLA_PJRT_PLUGIN" in warning and "cyxla-host --platform cpu" in warning, warning
    assert "[pjrt]" not in warning and "lammps" not in warning, warning


def test_no_warning_where_jax_is_asked_for_cpu_only(alone):
    r = alone.python(PLAIN_JAX, {"JAX_PLATFORMS": "cpu"})
    assert r.returncode == 0 and r.stdout.strip() == "3.0 cpu", r.describe()
    assert WARNING not in r.stderr, r.describe()


def serve_on_cpu_example() -> str:
    """The first ```python block of docs/using-jax.md's "JAX's own `cpu`
    platform" (as tests/python/test_readme.py takes it)."""
    section = doc_section(ROOT / "docs" / "using-jax.md", "## JAX's own `cpu` platform, across processes and machines")
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks and "serve_on_cpu" in blocks[0], blocks
    return blocks[0]


def test_the_serve_on_cpu_example_as_a_plain_script(alone):
    (alone.dir / "example.py").write_text(serve_on_cpu_example())
    r = alone.run([alone.bin / "python", "example.py"])
    assert r.returncode == 0, r.describe()
    # rms_norm of ones is 1 / sqrt(1 + eps)
    assert r.stdout.startswith("cpu [0.999995 0.999995 0.999995]"), r.describe()
    # The program serves the guests on cpu: nothing to tell it.
    assert WARNING not in r.stderr, r.describe()


def test_jax_platforms_cyxla_still_raises_naming_the_missing_plugin(alone):
    r = alone.python(PLAIN_JAX, {"JAX_PLATFORMS": "cyxla"})
    assert r.returncode != 0, r.describe()
    assert "Unable to initialize backend 'cyxla'" in r.stderr, r.describe()
    assert f"no PJRT plugin found (looked in {alone.site})" in r.stderr, r.describe()
    assert "fastatomstruct-xla-cpu" in r.stderr and "lammps-jax-pjrt-cpu==0.11.2" in r.stderr, r.describe()
    assert WARNING not in r.stderr, r.describe()
    # The launcher's platform cyxla (the default) refuses before the program starts.
    r = alone.run([alone.bin / "cyxla-host", "--allow", "rms_norm", "--", "python", "-c", PLAIN_JAX])
    assert r.returncode == 2, r.describe()
    assert f"no PJRT plugin found (looked in {alone.site})" in r.stderr, r.describe()
    assert "3.0" not in r.stdout, r.describe()


def test_the_launcher_serves_the_guests_on_cpu(alone):
    (alone.dir / "guest_on_cpu.py").write_text(GUEST_ON_CPU)
    r = alone.run([alone.bin / "cyxla-host", "--platform", "cpu", "--allow", "rms_norm", "--",
                   "python", "guest_on_cpu.py"])
    assert r.returncode == 0, r.describe()
    assert "OK cpu {CpuDevice(id=0)}" in r.stdout, r.describe()
    assert WARNING not in r.stderr, r.describe()


def test_the_readme_install_and_first_script_without_the_extra(alone, wheel):
    """The README's "Install" without the extra and its first script on JAX's
    own `cpu` platform, printing what the README shows."""
    run_readme_first_script(alone.bin, alone.dir, wheel, "", ["cpu"])
