"""Fixtures of the Python tests of the cyxla PJRT plugin (issue 12).

Run from the repository root, after ``scripts/setup.sh`` and ``cargo build
--workspace``:

    .venv/bin/python -m pytest tests/python -q

support.py (imported first, here) sets the environment of the in-process
cyxla backend before any test module imports JAX.
"""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

import support  # noqa: F401  (sets the environment before JAX is imported)
from support import MISSING, ROOT


@pytest.fixture(autouse=True, scope="session")
def _built() -> None:
    """Every test errors (never skips) when something it needs was not built."""
    if MISSING:
        pytest.fail("cannot test the cyxla plugin:\n  " + "\n  ".join(MISSING), pytrace=False)


@pytest.fixture(scope="session")
def cyxla_devices():
    """The devices of the in-process cyxla backend."""
    import jax

    return jax.devices("cyxla")


@pytest.fixture(scope="session")
def cyxla(cyxla_devices):
    """The first device of the in-process cyxla backend."""
    return cyxla_devices[0]


@pytest.fixture(scope="session")
def cpu():
    """The first device of JAX's own CPU backend (the reference)."""
    import jax

    return jax.devices("cpu")[0]


@pytest.fixture(scope="session")
def wheel() -> pathlib.Path:
    """The wheel scripts/wheel.sh builds, or the one `CYXLA_TEST_WHEEL` names
    (built already, e.g. when the tree does not build at the moment)."""
    given = os.environ.get("CYXLA_TEST_WHEEL")
    if given:
        path = pathlib.Path(given).resolve()
        assert path.is_file() and path.suffix == ".whl", f"CYXLA_TEST_WHEEL={given} is not a wheel file"
        return path
    r = subprocess.run(["scripts/wheel.sh"], env=dict(os.environ), cwd=ROOT, capture_output=True, text=True,
                       timeout=3600)
    assert r.returncode == 0, f"scripts/wheel.sh failed:\n{r.stdout}\n{r.stderr}"
    path = pathlib.Path(r.stdout.strip().splitlines()[-1])
    if not path.is_absolute():
        path = ROOT / path
    assert path.is_file(), r.stdout + r.stderr
    return path
