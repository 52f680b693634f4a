"""Fixtures of the Python tests of the cyxla PJRT plugin (issue 12).

Run from the repository root, after ``scripts/setup.sh`` and ``cargo build
--workspace``:

    .venv/bin/python -m pytest tests/python -q

support.py (imported first, here) sets the environment of the in-process
cyxla backend before any test module imports JAX.
"""

from __future__ import annotations

import pytest

import support  # noqa: F401  (sets the environment before JAX is imported)
from support import MISSING


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


