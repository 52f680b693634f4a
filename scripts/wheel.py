"""Assembles the cyxla wheel from a release build (scripts/wheel.sh runs it).

The wheel holds the Python package ``jax_plugins.cyxla`` with, beside it, the
PJRT plugin library (``libcyxla_pjrt.so``), the bundled guests
(``guests/*.wasm``) and the guest SDK's C/C++ headers and runtime
(``sdk/``), and the ``cyxla-host`` executable as a script (pip puts it in the
environment's ``bin/``). Both binaries are copied without debug information,
so that nothing in them names the checkout they were built in; they find
what they need relative to where they are installed.

The binaries do not depend on Python's ABI: the wheel is ``py3-none``, for
Linux x86_64; ``auditwheel repair`` then gives it the manylinux tag its
symbols allow.

Usage: python scripts/wheel.py RELEASE_DIR OUT_DIR
"""

from __future__ import annotations

import base64
import hashlib
import os
import pathlib
import subprocess
import sys
import tempfile
import tomllib
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
NAME = "cyxla-jax-plugin"
DIST = NAME.replace("-", "_")
PACKAGE = "jax_plugins/cyxla"
TAG = "py3-none-linux_x86_64"

# What pip installs with the wheel: JAX, and the OpenBLAS the native LAPACK
# targets use. The real XLA CPU plugin that platform `cyxla` wraps is the
# extra `pjrt`: fastatomstruct-xla-cpu (PJRT 0.106), which pins no JAX and so
# installs beside every JAX. The default plugin of a checkout,
# lammps-jax-pjrt-cpu 0.11.2 (PJRT 0.115), declares jax<=0.11.2; where it is
# installed, cyxla prefers it. Without either, the guests run on JAX's own
# CPU backend (`cyxla-host --platform cpu`).
REQUIRES = [
    "jax>=0.10.2",
    "scipy-openblas32>=0.3.30",
    'fastatomstruct-xla-cpu; extra == "pjrt"',
]
REQUIRES_PYTHON = ">=3.11"


def version() -> str:
    with open(ROOT / "host/python/pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["version"]


def stripped(path: pathlib.Path, scratch: pathlib.Path) -> bytes:
    """The binary without debug information (it names source paths)."""
    out = scratch / path.name
    subprocess.run(["strip", "--strip-debug", "-o", str(out), str(path)], check=True)
    return out.read_bytes()


def files(release: pathlib.Path, scratch: pathlib.Path, ver: str) -> list[tuple[str, bytes, bool]]:
    """(path in the wheel, bytes, executable)."""
    out: list[tuple[str, bytes, bool]] = []
    init = ROOT / "host/python/jax_plugins/cyxla/__init__.py"
    out.append((f"{PACKAGE}/__init__.py", init.read_bytes(), False))
    out.append((f"{PACKAGE}/libcyxla_pjrt.so", stripped(release / "libcyxla_pjrt.so", scratch), True))
    out.append((f"{DIST}-{ver}.data/scripts/cyxla-host", stripped(release / "cyxla-host", scratch), True))
    guests = sorted((ROOT / "guests/out").glob("*.wasm"))
    if not guests:
        sys.exit("scripts/wheel.py: guests/out holds no guests: build them with scripts/setup.sh")
    for guest in guests:
        out.append((f"{PACKAGE}/guests/{guest.name}", guest.read_bytes(), False))
    sdk = ROOT / "guest-sdk"
    for folder in ("include", "c"):
        for path in sorted((sdk / folder).rglob("*")):
            if path.is_file():
                out.append((f"{PACKAGE}/sdk/{path.relative_to(sdk)}", path.read_bytes(), False))
    return out


def metadata(ver: str) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {ver}",
        "Summary: JAX platform `cyxla`: XLA custom-call kernels in WebAssembly sandboxes, "
        "native LAPACK",
        "License: Apache-2.0",
        f"Requires-Python: {REQUIRES_PYTHON}",
        "Provides-Extra: pjrt",
    ]
    lines += [f"Requires-Dist: {r}" for r in REQUIRES]
    readme = (ROOT / "host/python/README.md").read_text()
    return "\n".join(lines) + "\nDescription-Content-Type: text/markdown\n\n" + readme


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    release, out_dir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    for f in ("cyxla-host", "libcyxla_pjrt.so"):
        if not (release / f).is_file():
            sys.exit(f"scripts/wheel.py: {release / f} is missing: build it with "
                     "`cargo build --release -p cyxla-app -p cyxla-pjrt`")
    ver = version()
    out_dir.mkdir(parents=True, exist_ok=True)
    wheel = out_dir / f"{DIST}-{ver}-{TAG}.whl"
    info = f"{DIST}-{ver}.dist-info"
    with tempfile.TemporaryDirectory() as scratch:
        entries = files(release, pathlib.Path(scratch), ver)
    entries.append((f"{info}/METADATA", metadata(ver).encode(), False))
    wheel_text = (
        "Wheel-Version: 1.0\nGenerator: cyxla scripts/wheel.py\nRoot-Is-Purelib: false\n"
        f"Tag: {TAG}\n"
    )
    entries.append((f"{info}/WHEEL", wheel_text.encode(), False))
    entries.append((f"{info}/top_level.txt", b"jax_plugins\n", False))
    record = [record_line(n, d) for n, d, _ in entries] + [f"{info}/RECORD,,"]
    entries.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode(), False))
    tmp = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for name, data, executable in entries:
            entry = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = ((0o755 if executable else 0o644) | 0o100000) << 16
            z.writestr(entry, data)
    os.replace(tmp, wheel)
    print(wheel)


if __name__ == "__main__":
    main()
