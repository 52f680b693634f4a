"""Assembles the cyxla wheel from a release build (scripts/wheel.sh runs it).

The wheel holds the Python package ``jax_plugins.cyxla`` with, beside it, the
PJRT plugin library (``libcyxla_pjrt.so``), the bundled guests
(``guests/*.wasm``), the guest SDK (``sdk/``: the C/C++ headers, runtime and
CMake toolchain file, and the sources of the Rust crate ``cyxla-guest-sdk``
and the crates it depends on by path, with standalone manifests: see
``sdk_files``), and the ``cyxla-host`` executable as a script (pip puts it
in the environment's ``bin/``). ``cyxla-host new`` scaffolds projects on that
SDK. Both binaries are copied without debug information,
so that nothing in them names the checkout they were built in; they find
what they need relative to where they are installed.

The binaries do not depend on Python's ABI: the wheel is ``py3-none``, for
Linux on the machine the binaries were built for (``--arch``: x86_64, the
default, or aarch64); ``auditwheel repair`` then gives it the manylinux tag
its symbols allow. Every ELF file in the wheel must be built for that
machine (``check_machine``, which ``--check WHEEL`` runs on a finished,
repaired wheel): a wheel tagged aarch64 with x86-64 binaries inside fails.

Usage: python scripts/wheel.py [--arch x86_64|aarch64] RELEASE_DIR OUT_DIR
       python scripts/wheel.py --check WHEEL
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
NAME = "cyxla-jax-plugin"
DIST = NAME.replace("-", "_")
PACKAGE = "jax_plugins/cyxla"
# The machines a wheel may be built for: each one's ELF `e_machine`
# (EM_X86_64, EM_AARCH64 in the System V ABI's <elf.h>). The wheel's
# platform tag names the machine as Python's `sysconfig.get_platform()` does.
MACHINES = {"x86_64": 62, "aarch64": 183}
DEFAULT_ARCH = "x86_64"
# The binaries the wheel must hold, as paths inside it (the version is
# between the name and `.data`).
PLUGIN = f"{PACKAGE}/libcyxla_pjrt.so"
PROGRAM = ".data/scripts/cyxla-host"


def tag(arch: str) -> str:
    """The raw wheel's tag; auditwheel replaces `linux` by the manylinux
    policy the binaries meet."""
    return f"py3-none-linux_{arch}"

# What pip installs with the wheel: JAX, and the OpenBLAS the native LAPACK
# targets use. The real XLA CPU plugin that platform `cyxla` wraps is the
# extra `pjrt`: fastatomstruct-xla-cpu (PJRT 0.106), which pins no JAX and so
# installs beside every JAX. The default plugin of a checkout,
# lammps-jax-pjrt-cpu 0.11.2 (PJRT 0.115), declares jax<=0.11.2; where it is
# installed, cyxla prefers it. Without either, the guests run on JAX's own
# CPU backend (`cyxla-host --platform cpu`). Neither plugin publishes an
# aarch64 build, so on aarch64 the extra has nothing to install (pip would
# fail on it): there the guests run on JAX's own CPU backend only.
#
# The OpenBLAS is pinned below 0.3.34: scipy-openblas32 0.3.34 is built
# without a Fortran compiler (no libgfortran in the wheel), so its LAPACK is
# the C translation, and its `?syevd` measured slower than JAX's (scipy's
# bundled OpenBLAS, which is built with gfortran): docs/performance.md,
# "LAPACK library". `scripts/bench.sh --lapack wheel P5` measures this pin.
# The same pin serves both machines: scipy-openblas32 0.3.30 to 0.3.33
# publish manylinux_2_27/2_28 wheels for x86_64 and aarch64 alike.
OPENBLAS_REQUIREMENT = "scipy-openblas32>=0.3.30,<0.3.34"
REQUIRES = [
    "jax>=0.10.2",
    OPENBLAS_REQUIREMENT,
    'fastatomstruct-xla-cpu; extra == "pjrt" and platform_machine == "x86_64"',
]
REQUIRES_PYTHON = ">=3.11"


def version() -> str:
    with open(ROOT / "host/python/pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["version"]


# The strip program for each machine's binaries, first found first: the
# machine's binutils `strip` is x86-64's own; for aarch64, the cross
# binutils' or LLVM's (which knows every target).
STRIP = {"x86_64": ("strip",), "aarch64": ("aarch64-linux-gnu-strip", "llvm-strip")}


def strip_program(arch: str) -> str:
    for name in STRIP[arch]:
        if shutil.which(name):
            return name
    sys.exit(f"scripts/wheel.py: no strip program for {arch} binaries: install one of {', '.join(STRIP[arch])} "
             "(apt-get install binutils-aarch64-linux-gnu, or llvm)")


def stripped(path: pathlib.Path, scratch: pathlib.Path, strip: str) -> bytes:
    """The binary without debug information (it names source paths)."""
    out = scratch / path.name
    subprocess.run([strip, "--strip-debug", "-o", str(out), str(path)], check=True)
    return out.read_bytes()


def elf_machine(data: bytes) -> int | None:
    """The `e_machine` of a 64-bit little-endian ELF file, None if `data`
    is not ELF at all. Fails on an ELF file of another class or byte order
    (neither machine of MACHINES has one)."""
    if data[:4] != b"\x7fELF":
        return None
    if len(data) < 20 or data[4] != 2 or data[5] != 1:
        raise ValueError("an ELF file that is not 64-bit little-endian")
    return int.from_bytes(data[18:20], "little")


def check_machine(entries: list[tuple[str, bytes]], arch: str) -> None:
    """Fails unless every ELF file among `entries` (path in the wheel,
    bytes) is built for `arch`, the plugin library and the program among
    them."""
    want = MACHINES[arch]
    names = {v: k for k, v in MACHINES.items()}
    binaries = {PLUGIN: "the plugin library", PROGRAM: "the cyxla-host program"}
    missing = dict(binaries)
    for name, data in entries:
        binary = PLUGIN if name == PLUGIN else PROGRAM if name.endswith(PROGRAM) else None
        try:
            machine = elf_machine(data)
        except ValueError as e:
            sys.exit(f"scripts/wheel.py: {name} in the {arch} wheel is {e}")
        if machine is None:
            if binary:
                sys.exit(f"scripts/wheel.py: {name} in the {arch} wheel is not an ELF file")
            continue
        if machine != want:
            sys.exit(f"scripts/wheel.py: {name} in the {arch} wheel is built for "
                     f"{names.get(machine, f'ELF machine {machine}')}, not {arch} (ELF machine {want})")
        missing.pop(binary, None)
    if missing:
        sys.exit(f"scripts/wheel.py: the {arch} wheel lacks {' and '.join(missing.values())}")


def check_wheel(wheel: pathlib.Path) -> str:
    """Checks a finished wheel: one machine in all its platform tags (its
    WHEEL file's), and every ELF file in it built for that machine
    (check_machine). Returns the machine."""
    with zipfile.ZipFile(wheel) as z:
        wheel_files = [n for n in z.namelist() if re.fullmatch(r"[^/]+\.dist-info/WHEEL", n)]
        if len(wheel_files) != 1:
            sys.exit(f"scripts/wheel.py: {wheel} has {len(wheel_files)} .dist-info/WHEEL files, not one")
        tags = re.findall(r"^Tag: (\S+)$", z.read(wheel_files[0]).decode(), re.MULTILINE)
        arches = {next((a for a in MACHINES if t.endswith(f"_{a}")), t) for t in tags}
        if len(arches) != 1 or not arches <= MACHINES.keys():
            sys.exit(f"scripts/wheel.py: {wheel}'s tags {tags} do not name one machine of {sorted(MACHINES)}")
        arch = arches.pop()
        if not wheel.name.endswith(f"_{arch}.whl"):
            sys.exit(f"scripts/wheel.py: {wheel.name} does not end in its machine's tag ({arch})")
        check_machine([(n, z.read(n)) for n in z.namelist() if not n.endswith("/")], arch)
    return arch


def files(release: pathlib.Path, scratch: pathlib.Path, ver: str, arch: str) -> list[tuple[str, bytes, bool]]:
    """(path in the wheel, bytes, executable)."""
    out: list[tuple[str, bytes, bool]] = []
    init = ROOT / "host/python/jax_plugins/cyxla/__init__.py"
    out.append((f"{PACKAGE}/__init__.py", init.read_bytes(), False))
    strip = strip_program(arch)
    out.append((PLUGIN, stripped(release / "libcyxla_pjrt.so", scratch, strip), True))
    out.append((f"{DIST}-{ver}{PROGRAM}", stripped(release / "cyxla-host", scratch, strip), True))
    guests = sorted((ROOT / "guests/out").glob("*.wasm"))
    if not guests:
        sys.exit("scripts/wheel.py: guests/out holds no guests: build them with scripts/setup.sh")
    for guest in guests:
        out.append((f"{PACKAGE}/guests/{guest.name}", guest.read_bytes(), False))
    out += [(f"{PACKAGE}/sdk/{rel}", data, False) for rel, data in sdk_files()]
    return out


SDK = ROOT / "guest-sdk"
# The guest ABI's crates (the contract between host and guests, at the
# root of the checkout): the wheel's SDK folder holds them in its abi/, so
# that the installed SDK is one folder.
ABI = ROOT / "abi"


def placed(crate: pathlib.Path) -> pathlib.PurePath:
    """Where a crate of the checkout stands in the wheel's SDK folder."""
    if crate.is_relative_to(SDK):
        return crate.relative_to(SDK)
    if crate.is_relative_to(ABI):
        return "abi" / crate.relative_to(ABI)
    sys.exit(f"scripts/wheel.py: the SDK depends on {crate.relative_to(ROOT)}, outside guest-sdk and abi: "
             "the wheel's SDK folder cannot hold it")
# What the SDK folder ships besides its crates: the C/C++ headers, runtime
# and CMake toolchain file.
SDK_C_FOLDERS = ("include", "c", "cmake")
# What a crate ships: its sources, build script and README (the SDK's docs
# include it); not its tests, benches or examples, which need the workspace.
CRATE_ITEMS = ("src", "build.rs", "README.md")
# Sections of a manifest that are for developing the crate in the workspace.
DEV_ONLY = ("dev-dependencies", "lints", "test", "bench", "example", "badges")
DEPENDENCY_TABLES = ("dependencies", "build-dependencies")


def workspace_manifest() -> dict:
    with open(ROOT / "Cargo.toml", "rb") as f:
        return tomllib.load(f)["workspace"]


def standalone(manifest: dict, crate: pathlib.Path, workspace: dict) -> tuple[dict, list[pathlib.Path]]:
    """The crate's manifest without the workspace: `x.workspace = true`
    fields and dependencies take the workspace's values, and the sections
    for developing it (dev-dependencies, lints, tests) go. Also the crates
    it depends on by path (which the SDK folder must then hold too)."""
    out: dict = {}
    paths: list[pathlib.Path] = []
    for key, value in manifest.items():
        if key in DEV_ONLY:
            continue
        if key == "package":
            value = {
                k: workspace["package"][k] if isinstance(v, dict) and v.get("workspace") else v
                for k, v in value.items()
            }
            # No workspace around it: its tests/, benches/ are not shipped.
            value["autotests"] = value["autobenches"] = value["autoexamples"] = False
        elif key == "target":
            value = {
                cfg: {
                    k: deps(v, crate, workspace, paths) if k in DEPENDENCY_TABLES else v
                    for k, v in tables.items()
                    if k not in DEV_ONLY
                }
                for cfg, tables in value.items()
            }
        elif key in DEPENDENCY_TABLES:
            value = deps(value, crate, workspace, paths)
        elif key == "workspace":
            sys.exit(f"scripts/wheel.py: {crate}/Cargo.toml has a [workspace] table; the SDK crates cannot")
        out[key] = value
    return out, paths


def deps(table: dict, crate: pathlib.Path, workspace: dict, paths: list[pathlib.Path]) -> dict:
    out = {}
    for name, spec in table.items():
        if isinstance(spec, dict) and spec.get("workspace"):
            inherited = workspace["dependencies"][name]
            inherited = dict(inherited) if isinstance(inherited, dict) else {"version": inherited}
            if "path" in inherited:
                inherited["path"] = os.path.relpath(ROOT / inherited["path"], crate)
            features = inherited.get("features", []) + spec.get("features", [])
            rest = {k: v for k, v in spec.items() if k not in ("workspace", "features")}
            spec = {**inherited, **rest}
            if features:
                spec["features"] = features
        if isinstance(spec, dict) and "path" in spec:
            target = (crate / spec["path"]).resolve()
            spec = {**spec, "path": os.path.relpath(placed(target), placed(crate))}
            paths.append(target)
        out[name] = spec
    return out


def toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {value!r} as TOML")


def toml(manifest: dict) -> str:
    """A manifest as TOML: tables for its sections, inline tables for
    dependency specifications."""
    lines: list[str] = []

    def table(path: list[str], body: dict) -> None:
        scalars = {k: v for k, v in body.items() if not isinstance(v, dict) or path[-1] in DEPENDENCY_TABLES}
        if scalars or not body:
            lines.append("[" + ".".join(toml_key(p) for p in path) + "]")
            lines.extend(f"{toml_key(k)} = {toml_value(v)}" for k, v in scalars.items())
            lines.append("")
        for k, v in body.items():
            if k not in scalars:
                table(path + [k], v)

    for key, body in manifest.items():
        table([key], body)
    return "\n".join(lines)


def sdk_files() -> list[tuple[str, bytes]]:
    """The SDK folder: guest-sdk's C/C++ files, and each crate from
    cyxla-guest-sdk down its path dependencies, at its place under
    guest-sdk (the ABI's crates under abi/), with a manifest that builds
    outside the workspace (so a project `cyxla-host new --rust` scaffolds
    depends on the installed SDK by path). Fails on a path dependency
    outside guest-sdk and abi."""
    out: list[tuple[str, bytes]] = []
    for folder in SDK_C_FOLDERS:
        out += [(str(p.relative_to(SDK)), p.read_bytes()) for p in sorted((SDK / folder).rglob("*")) if p.is_file()]
    workspace = workspace_manifest()
    todo, done = [SDK], set()
    while todo:
        crate = todo.pop()
        if crate in done:
            continue
        done.add(crate)
        with open(crate / "Cargo.toml", "rb") as f:
            manifest, paths = standalone(tomllib.load(f), crate, workspace)
        todo += paths
        text = (f"# {crate.relative_to(ROOT)}/Cargo.toml as the wheel ships it (scripts/wheel.py): without\n"
                "# the workspace, its dev-dependencies and lints.\n\n" + toml(manifest))
        prefix = placed(crate)
        out.append((str(prefix / "Cargo.toml"), text.encode()))
        for item in CRATE_ITEMS:
            path = crate / item
            files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path] * path.is_file()
            out += [(str(prefix / p.relative_to(crate)), p.read_bytes()) for p in files]
    names = [n for n, _ in out]
    assert len(names) == len(set(names)), sorted(names)
    return sorted(out)


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
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--check":
        arch = check_wheel(pathlib.Path(args[1]))
        print(f"scripts/wheel.py: {args[1]}: every ELF file in it is built for {arch}", file=sys.stderr)
        return
    arch = DEFAULT_ARCH
    if args[:1] == ["--arch"] and len(args) >= 2:
        arch, args = args[1], args[2:]
    if len(args) != 2 or arch not in MACHINES:
        sys.exit(__doc__[__doc__.index("Usage:"):].strip())
    release, out_dir = pathlib.Path(args[0]), pathlib.Path(args[1])
    for f in ("cyxla-host", "libcyxla_pjrt.so"):
        if not (release / f).is_file():
            sys.exit(f"scripts/wheel.py: {release / f} is missing: build it with "
                     "`cargo build --release -p cyxla-host -p cyxla-pjrt`")
    ver = version()
    out_dir.mkdir(parents=True, exist_ok=True)
    wheel = out_dir / f"{DIST}-{ver}-{tag(arch)}.whl"
    info = f"{DIST}-{ver}.dist-info"
    with tempfile.TemporaryDirectory() as scratch:
        entries = files(release, pathlib.Path(scratch), ver, arch)
    check_machine([(n, d) for n, d, _ in entries], arch)
    entries.append((f"{info}/METADATA", metadata(ver).encode(), False))
    wheel_text = (
        "Wheel-Version: 1.0\nGenerator: cyxla scripts/wheel.py\nRoot-Is-Purelib: false\n"
        f"Tag: {tag(arch)}\n"
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
