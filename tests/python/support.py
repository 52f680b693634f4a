"""Paths, environment and subprocess helpers of the Python tests (issue 12).

Imported by conftest.py before any test module, so the environment below is
set before JAX is imported. Test modules import helpers from here.

Run from the repository root, after ``scripts/setup.sh`` and ``cargo build
--workspace``:

    .venv/bin/python -m pytest tests/python -q

In-process tests (test_linalg, test_guests, test_native) use JAX with two
backends: ``cyxla`` (the plugin library, configured by the environment set
below before JAX is imported) and JAX's own ``cpu`` backend, the reference.
Everything that needs another configuration (the launcher, bad
configurations, other processes) runs in a subprocess through the helpers
here.

Nothing is skipped: a missing library, binary or Python package is an error
of every test, with the command that fixes it.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap
from typing import Iterable, Mapping

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGET_DIR = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
HOST = TARGET_DIR / "debug" / "cyxla-host"
LIBRARY = TARGET_DIR / "debug" / "libcyxla_pjrt.so"
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
GUESTS = ROOT / "guests" / "out"
SITE = ROOT / ".venv" / "lib" / "python3.11" / "site-packages"
# The default real plugin (PJRT 0.115) and the compatibility set.
REAL_PLUGIN = SITE / "lammps_jax_pjrt_cpu" / "pjrt_c_api_cpu_plugin.so"
COMPAT_PLUGINS = {
    "fastatomstruct_xla_cpu": SITE / "fastatomstruct_xla_cpu" / "libpjrt_cpu.so",
    "xla_cpu_pjrt": SITE / "xla_plugins" / "xla_cpu_pjrt" / "xla_cpu_pjrt.so",
}

# Generous: a subprocess imports JAX (~2 s), creates a client (compiles every
# guest) and compiles programs, on a shared 2-core machine.
SUBPROCESS_TIMEOUT = 240

# The configuration of the in-process cyxla backend: every bundled target,
# a call timeout short enough that a stuck call fails the test.
IN_PROCESS_ENV = {
    "CYXLA_PJRT_LIBRARY": str(LIBRARY),
    "CYXLA_ALLOW": "*",
    "CYXLA_LIMITS": "call_timeout=5s",
    "JAX_PLATFORMS": "cyxla,cpu",
    "JAX_ENABLE_X64": "1",
}

# Variables a subprocess must not inherit from this process: they would
# configure its plugin behind the test's back.
CONFIG_VARS = (
    "CYXLA_PJRT_LIBRARY",
    "CYXLA_PJRT_PLUGIN",
    "CYXLA_GUESTS",
    "CYXLA_ALLOW",
    "CYXLA_LIMITS",
    "CYXLA_NO_LAPACK",
    "CYXLA_ALLOW_NATIVE",
    "CYXLA_DEVICES",
    "CYXLA_NATIVE",
    "CYXLA_CONFIG",
    "CYXLA_RECORD",
    "JAX_PLATFORMS",
    "JAX_ENABLE_X64",
    "XLA_FLAGS",
)


def _missing() -> list[str]:
    problems = []
    if not VENV_PYTHON.exists():
        problems.append(f"{VENV_PYTHON} is missing: run scripts/setup.sh")
    for path in (HOST, LIBRARY):
        if not path.exists():
            problems.append(
                f"{path} is missing: run `cargo build --workspace` (after scripts/setup.sh)"
            )
    if not GUESTS.is_dir() or not any(GUESTS.glob("*.wasm")):
        problems.append(f"{GUESTS} has no guests: run scripts/setup.sh (guests/build.sh)")
    try:
        found = importlib.util.find_spec("jax_plugins.cyxla") is not None
    except ModuleNotFoundError:  # no jax_plugins package at all
        found = False
    if not found:
        problems.append(
            "the Python package jax_plugins.cyxla is not installed in this Python "
            f"({sys.executable}): run scripts/setup.sh"
        )
    return problems


MISSING = _missing()

# Before JAX is imported anywhere (test modules import it at their top).
os.environ.update(IN_PROCESS_ENV)


# --------------------------------------------------------------------------
# Subprocesses
# --------------------------------------------------------------------------


@dataclasses.dataclass
class Result:
    """What a subprocess did."""

    returncode: int
    stdout: str
    stderr: str
    argv: list[str]

    def describe(self) -> str:
        return (
            f"command: {self.argv}\nexit code: {self.returncode}\n"
            f"--- stdout ---\n{self.stdout[-6000:]}\n--- stderr ---\n{self.stderr[-6000:]}"
        )


def clean_env(extra: Mapping[str, str] | None = None, *, drop: Iterable[str] = ()) -> dict[str, str]:
    """This process's environment without any cyxla/JAX configuration, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in CONFIG_VARS and k not in drop}
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def run(argv: list[str], *, env: Mapping[str, str], timeout: float = SUBPROCESS_TIMEOUT,
        cwd: pathlib.Path | str | None = None) -> Result:
    try:
        p = subprocess.run(
            [str(a) for a in argv],
            env=dict(env),
            cwd=str(cwd or ROOT),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        pytest.fail(f"timed out after {timeout} s: {argv}\n--- stdout ---\n{out}\n--- stderr ---\n{err}")
    return Result(p.returncode, p.stdout, p.stderr, [str(a) for a in argv])


def doc_section(path: pathlib.Path, heading: str) -> str:
    """The section of Markdown file `path` under `heading` (a whole heading
    line, e.g. "## Benchmarks"), up to the next heading of its level or
    higher; a `#` line inside a code block is no heading."""
    lines = path.read_text().splitlines()
    assert heading in lines, f"{path.relative_to(ROOT)} has no heading {heading!r}"
    level = len(heading) - len(heading.lstrip("#"))
    start = lines.index(heading)
    out, fenced = [], False
    for line in lines[start + 1 :]:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#") and len(line) - len(line.lstrip("#")) <= level:
            break
        out.append(line)
    return "\n".join(out) + "\n"


def documented_command(path: pathlib.Path, heading: str, program: str) -> list[str]:
    """The one line of a code block in `path`'s section `heading` that runs
    `program`, split into words, without its `#` comment: the command a
    test runs as the documentation shows it."""
    section = doc_section(path, heading)
    lines = [line.split("#")[0].split() for block in re.findall(r"```[a-z]*\n(.*?)```", section, re.S)
             for line in block.splitlines()]
    found = [line for line in lines if line and line[0] == program]
    assert len(found) == 1, f"{path.relative_to(ROOT)}, {heading!r}, shows no single {program} line: {found}"
    return found[0]


def run_python(code: str, *, env: Mapping[str, str] | None = None, timeout: float = SUBPROCESS_TIMEOUT) -> Result:
    """`python -c code` with a clean environment plus `env` (no launcher)."""
    return run([VENV_PYTHON, "-c", textwrap.dedent(code)], env=clean_env(env), timeout=timeout)


def run_launched(code: str, host_args: Iterable[str] = (), *, env: Mapping[str, str] | None = None,
                 timeout: float = SUBPROCESS_TIMEOUT) -> Result:
    """`cyxla-host HOST_ARGS -- python -c code` with a clean environment plus `env`."""
    argv = [HOST, *host_args, "--", VENV_PYTHON, "-c", textwrap.dedent(code)]
    return run(argv, env=clean_env(env), timeout=timeout)


def assert_no_crash(r: Result) -> None:
    """The process ended by itself: no signal, no abort, no core dump."""
    assert r.returncode >= 0, f"killed by signal {-r.returncode}\n{r.describe()}"
    for word in ("Aborted", "core dumped", "Segmentation fault", "panicked at", "Fatal Python error"):
        assert word not in r.stderr, f"{word!r} in stderr\n{r.describe()}"


def leb(n: int) -> bytes:
    """`n` as unsigned LEB128 (wasm's integer encoding)."""
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def with_target(module: bytes, target: str, export: str) -> bytes:
    """`module` with one more `cyxla.targets` record: `target` served by `export`."""
    name = b"cyxla.targets"
    payload = leb(len(name)) + name + f"cyxla-target v1 {target} {export}\n".encode()
    return module + b"\x00" + leb(len(payload)) + payload


def find_python(version: str) -> str:
    """An interpreter of `version`: pyenv's, else one on PATH (pyenv's shims
    answer only for the selected versions, so each is asked)."""
    pyenv = pathlib.Path.home() / ".pyenv" / "versions"
    candidates = [c / "bin" / f"python{version}" for c in sorted(pyenv.glob(f"{version}.*"), reverse=True)]
    on_path = shutil.which(f"python{version}")
    if on_path:
        candidates.append(pathlib.Path(on_path))
    for exe in candidates:
        if not exe.is_file():
            continue
        r = subprocess.run([str(exe), "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])"],
                           capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip() == version:
            return str(exe)
    pytest.fail(
        f"Python {version} is needed to test the wheel on its JAX and was not found in {pyenv} "
        f"or on PATH: install it (e.g. `pyenv install {version}`)",
        pytrace=False,
    )


def clean(extra: dict[str, str], bin_dir: pathlib.Path) -> dict[str, str]:
    """An environment with nothing of the checkout and nothing of cyxla's
    or JAX's configuration: the venv's bin/ and the system's on PATH."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CYXLA_", "JAX_", "XLA_", "PYTHON", "VIRTUAL_ENV", "CARGO", "RUST"))
        and k not in ("PWD", "OLDPWD")
    }
    env["PATH"] = f"{bin_dir}:/usr/local/bin:/usr/bin:/bin"
    env.update(extra)
    return env
