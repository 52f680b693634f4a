"""The wheel (issue 30): scripts/wheel.sh builds it from the release build;
it is installed into fresh venvs outside the checkout with nothing but PyPI
packages and the wheel, and JAX code with guests runs there, under the
installed ``cyxla-host`` and with only the environment configured.

Three venvs: the oldest supported JAX (0.10.2, Python 3.11) with the default
real XLA CPU plugin (lammps-jax-pjrt-cpu 0.11.2, PJRT 0.115), on platform
``cyxla``; and the newest (0.12.0.1, Python 3.12) with the wheel's extra
``pjrt`` (fastatomstruct-xla-cpu, PJRT 0.106, which pins no JAX), on
platform ``cyxla`` and with the guests on JAX's own CPU backend
(``--platform cpu``); and JAX 0.12.0.1 on Python 3.13 with the extra, on
platform ``cyxla``. Each result is checked against jnp on JAX's own CPU
backend (wheel_script.py).

In the newest venv, ``cyxla-host new NAME --cpp`` and ``--rust`` scaffold
projects on the SDK the wheel installs; each is built as its README says
(Debian's clang-19 for C++, the author's rustup toolchain for Rust) and its
target called from JAX under the installed launcher.

The Pythons are looked up in pyenv (``~/.pyenv/versions``), then on PATH; a
missing one fails the test, naming it.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile

import pytest

from support import ROOT, VENV_PYTHON, clean, doc_section, find_python

# Python, what pip installs beside the wheel, the wheel's extras.
VENVS = {
    "oldest": ("3.11", ["jax==0.10.2", "lammps-jax-pjrt-cpu==0.11.2"], ""),
    "newest": ("3.12", ["jax==0.12.0.1"], "[pjrt]"),
    "newest-3.13": ("3.13", ["jax==0.12.0.1"], "[pjrt]"),
}
# (venv, platform the guests are served on).
CASES = [("oldest", "cyxla"), ("newest", "cyxla"), ("newest", "cpu"), ("newest-3.13", "cyxla")]
SCRIPT = pathlib.Path(__file__).with_name("wheel_script.py")
TIMEOUT = 600


def run(argv, env, cwd, timeout=TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


class Venv:
    def __init__(self, name: str, wheel: pathlib.Path):
        version, packages, extras = VENVS[name]
        python = find_python(version)
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix=f"cyxla-wheel-{name}-"))
        assert ROOT not in self.dir.parents
        self.bin = self.dir / "venv" / "bin"
        try:
            self._install(python, f"{wheel}{extras}", packages)
        except BaseException:
            # Nothing else would remove it: a failed install leaves up to a
            # GiB of half-installed packages behind in the temporary folder.
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        self.script = self.dir / "script.py"
        shutil.copy(SCRIPT, self.script)

    def _install(self, python: str, wheel: str, packages: list[str]) -> None:
        env = clean({}, self.bin)
        r = run([python, "-m", "venv", str(self.dir / "venv")], env, self.dir)
        assert r.returncode == 0, r.stderr
        started = time.time()
        r = run([str(self.bin / "pip"), "install", "-q", "--disable-pip-version-check", wheel, *packages], env, self.dir)
        self.install_s = time.time() - started
        assert r.returncode == 0, f"pip install of the wheel failed:\n{r.stdout}\n{r.stderr}"

    def python(self) -> str:
        return str(self.bin / "python")


@pytest.fixture(scope="module")
def venvs(wheel):
    made: dict[str, Venv] = {}

    def get(name: str) -> Venv:
        if name not in made:
            made[name] = Venv(name, wheel)
        return made[name]

    yield get
    # A venv whose install failed was removed by Venv itself.
    for v in made.values():
        shutil.rmtree(v.dir, ignore_errors=True)


def check(r: subprocess.CompletedProcess, platform: str) -> dict:
    assert r.returncode == 0, r.stdout + r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["platform"] == platform, result
    for key in ("rms_norm", "rms_norm_batch", "solve", "eigh", "after_trap"):
        assert result[key] is True, (key, result, r.stderr)
    assert result["trap"] and "trap.wasm" in result["trap"], result
    for entry in result["sys_path"]:
        assert not pathlib.Path(entry or ".").resolve().is_relative_to(ROOT), entry
    return result


def workspace_keys(table) -> list[str]:
    """`workspace` keys anywhere in a manifest (`x.workspace = true`, `[lints] workspace = true`)."""
    if isinstance(table, dict):
        return [k for k in table if k == "workspace"] + [k for v in table.values() for k in workspace_keys(v)]
    return []


def test_auditwheel_names_a_manylinux_tag_and_the_wheel_holds_everything(wheel):
    assert "manylinux_" in wheel.name and wheel.name.endswith("_x86_64.whl"), wheel.name
    auditwheel = VENV_PYTHON.parent / "auditwheel"
    r = run([str(auditwheel), "show", str(wheel)], dict(os.environ), ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    text = " ".join(r.stdout.split())
    tag = wheel.name.split("-")[-1].removesuffix(".whl").split(".")[0]
    assert f'is consistent with the following platform tag: "{tag}"' in text, text
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        binaries = [n for n in names if n.endswith(("libcyxla_pjrt.so", "scripts/cyxla-host"))]
        assert len(binaries) == 2, sorted(names)
        guests = [n for n in names if n.startswith("jax_plugins/cyxla/guests/") and n.endswith(".wasm")]
        assert len(guests) >= 10, sorted(names)
        for name in binaries + guests:
            data = z.read(name)
            assert b".venv/lib/python" not in data, f"{name} names the checkout's venv"
            # No folder of the building machine: scripts/wheel.sh remaps the
            # checkout (its target folder among it) and cargo's sources in
            # the binaries, guests/build.sh in the guests.
            cargo_home = os.environ.get("CARGO_HOME") or str(pathlib.Path.home() / ".cargo")
            for folder in (str(ROOT), cargo_home):
                at = data.find(folder.encode())
                assert at == -1, f"{name} names {folder}: {data[max(at - 100, 0):at + 200]!r}"
    for needed in (
        "jax_plugins/cyxla/__init__.py",
        "jax_plugins/cyxla/guests/rms_norm.wasm",
        "jax_plugins/cyxla/guests/trap.wasm",
        "jax_plugins/cyxla/sdk/include/xla/ffi/api/ffi.h",
        "jax_plugins/cyxla/sdk/c/cyxla_runtime.cc",
        "jax_plugins/cyxla/sdk/cmake/wasm32-cyxla.cmake",
        "jax_plugins/cyxla/sdk/Cargo.toml",
        "jax_plugins/cyxla/sdk/src/lib.rs",
        # The guest SDK's guide (guest-sdk/README.md; lib.rs includes it).
        "jax_plugins/cyxla/sdk/" + "README.md",
    ):
        assert needed in names, (needed, sorted(names))
    with zipfile.ZipFile(wheel) as z:
        # The SDK's crates build outside the workspace.
        for name in sorted(n for n in names if n.startswith("jax_plugins/cyxla/sdk/") and n.endswith("Cargo.toml")):
            manifest = tomllib.loads(z.read(name).decode())
            assert not workspace_keys(manifest), (name, manifest)
            assert not {"lints", "dev-dependencies"} & manifest.keys(), (name, manifest)
    print(f"wheel {wheel.name}: {wheel.stat().st_size / 2**20:.1f} MiB")


@pytest.mark.parametrize("name,platform", CASES)
def test_under_the_installed_launcher(venvs, name, platform):
    venv = venvs(name)
    argv = [str(venv.bin / "cyxla-host"), "--allow", "rms_norm", "--allow", "trap"]
    extra = {}
    if platform == "cpu":
        argv += ["--platform", "cpu"]
    else:
        # Both platforms, so that the script has JAX's CPU backend to compare with.
        extra["JAX_PLATFORMS"] = "cyxla,cpu"
    argv += ["--", "python", str(venv.script), repr(time.time())]
    started = time.time()
    r = run(argv, clean(extra, venv.bin), venv.dir)
    result = check(r, platform)
    if platform == "cyxla":
        assert pathlib.Path(result["library"]).is_relative_to(venv.dir), result
    print(
        f"{platform} JAX {result['jax']} Python {result['python']}: pip install {venv.install_s:.1f} s, "
        f"then the first jitted guest call {result['first_call_s']:.1f} s after the launcher started "
        f"({time.time() - started:.1f} s for the whole script)"
    )


@pytest.mark.parametrize("name,platform", CASES)
def test_with_only_the_environment(venvs, name, platform):
    venv = venvs(name)
    extra = {"CYXLA_ALLOW": "rms_norm,trap"}
    if platform == "cpu":
        extra.update(CYXLA_PLATFORM="cpu", JAX_PLATFORMS="cpu")
    else:
        extra.update(JAX_PLATFORMS="cyxla,cpu")
    r = run([venv.python(), str(venv.script)], clean(extra, venv.bin), venv.dir)
    check(r, platform)


@pytest.mark.parametrize("name", sorted(VENVS))
def test_the_installed_host_finds_its_guests_and_openblas(venvs, name):
    venv = venvs(name)
    r = run([str(venv.bin / "cyxla-host"), "list"], clean({}, venv.bin), venv.dir)
    assert r.returncode == 0, r.stdout + r.stderr
    site = next((venv.dir / "venv" / "lib").glob("python3.*/site-packages"))
    assert str(site / "jax_plugins" / "cyxla" / "guests") in r.stdout, r.stdout
    assert str(site / "scipy_openblas32" / "lib" / "libscipy_openblas.so") in r.stdout, r.stdout
    # The wheel pins scipy-openblas32 below 0.3.34, whose build has no
    # Fortran LAPACK and ran ?syevd slower than JAX (docs/performance.md,
    # "LAPACK library").
    loaded = re.search(r"libscipy_openblas\.so \(OpenBLAS (\d+)\.(\d+)\.(\d+)", r.stdout)
    assert loaded, r.stdout
    assert (0, 3, 30) <= tuple(int(x) for x in loaded.groups()) < (0, 3, 34), loaded.group(0)
    assert "rms_norm" in r.stdout, r.stdout
    # Debian's OpenBLAS (scripts/setup.sh installs it) stays selectable.
    r = run([str(venv.bin / "cyxla-host"), "list"], clean({"CYXLA_LAPACK": "libopenblas.so.0"}, venv.bin), venv.dir)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "targets on libopenblas.so.0 (OpenBLAS" in r.stdout, r.stdout


INSTALL = doc_section(ROOT / "README.md", "## Install")
FIRST = doc_section(ROOT / "README.md", "## A first script")


def readme_blocks(section: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", section, re.S)


def readme_pip_lines(wheel: pathlib.Path) -> dict[str, str]:
    """The README's two pip lines, by the extras they install: each names the
    wheel scripts/wheel.sh builds."""
    import shlex

    blocks = [b.strip() for b in readme_blocks(INSTALL, "sh")]
    assert len(blocks) == 2, f"the README's 'Install' shows two pip lines: {blocks}"
    lines = {}
    for line, extras in zip(blocks, ("[pjrt]", "")):
        assert shlex.split(line) == ["pip", "install", f"{wheel.name}{extras}"], line
        lines[extras] = line
    return lines


def run_readme_first_script(venv_bin: pathlib.Path, work: pathlib.Path, wheel: pathlib.Path, extras: str,
                            platforms: list[str]) -> None:
    """The README's "Install" and "A first script" in a venv that has the wheel
    (with `extras`) already: its pip line (the wheel beside it, as a user has
    it), first.py, and the launcher commands for `platforms` ("cyxla": with
    the extra; "cpu": either way), each printing the output the README shows;
    on `cyxla`, also the environment alone. Used by test_wheel_alone.py for
    the wheel without the extra."""
    import shlex

    pip_line = readme_pip_lines(wheel)[extras]
    if not (work / wheel.name).exists():
        (work / wheel.name).symlink_to(wheel)
    r = run(shlex.split(pip_line), clean({}, venv_bin), work)
    assert r.returncode == 0, f"`{pip_line}`:\n{r.stdout}\n{r.stderr}"
    (script,) = readme_blocks(FIRST, "python")
    (work / "first.py").write_text(script)
    commands = [b.strip() for b in readme_blocks(FIRST, "sh")]
    outputs = [b.strip() for b in readme_blocks(FIRST, "text")]
    assert len(commands) == len(outputs) == 2, (commands, outputs)
    assert commands[0] == "cyxla-host --allow rms_norm -- python first.py", commands
    assert commands[1] == "cyxla-host --platform cpu --allow rms_norm -- python first.py", commands
    assert outputs[0].startswith("cyxla ") and outputs[1].startswith("cpu "), outputs
    for command, output in zip(commands, outputs):
        platform = output.split()[0]
        if platform not in platforms:
            continue
        r = run(shlex.split(command), clean({}, venv_bin), work)
        assert r.returncode == 0, f"`{command}`:\n{r.stdout}\n{r.stderr}"
        assert r.stdout.strip().splitlines()[-1] == output, f"`{command}`:\n{r.stdout}\n{r.stderr}"
    if "cyxla" in platforms:
        env_line = re.search(r"`(JAX_PLATFORMS=cyxla [^`]*)`", FIRST.replace("\n", " ")).group(1)
        words = shlex.split(env_line)
        settings = dict(w.split("=", 1) for w in words if "=" in w)
        r = run([w for w in words if "=" not in w], clean(settings, venv_bin), work)
        assert r.returncode == 0, f"`{env_line}`:\n{r.stdout}\n{r.stderr}"
        assert r.stdout.strip().splitlines()[-1] == outputs[0], f"`{env_line}`:\n{r.stdout}\n{r.stderr}"


def test_the_readme_install_and_first_script_with_the_extra(venvs, wheel):
    """The README's "Install" with the extra `pjrt` (the newest venv is
    installed so) and its first script, on platform `cyxla` under the
    launcher and by the environment alone, and on JAX's own `cpu` platform."""
    venv = venvs("newest")
    assert VENVS["newest"][2] == "[pjrt]"
    run_readme_first_script(venv.bin, venv.dir, wheel, "[pjrt]", ["cyxla", "cpu"])


# `cyxla-host new` from the wheel: the scaffolds build with the SDK the wheel
# installs (`jax_plugins/cyxla/sdk`) and the author's own toolchain, as their
# README says, and run under the installed launcher.
CHECK_SCAFFOLD = """
import json, os, sys
import numpy as np, jax
platform = os.environ.get("JAX_PLATFORMS", "").split(",")[0] or jax.default_backend()
x = np.random.default_rng(0).standard_normal((5, 7)).astype(np.float32)
f = lambda x: jax.ffi.ffi_call({name!r}, jax.ShapeDtypeStruct(x.shape, x.dtype))(x, factor=np.float32(-1.75))
y = jax.jit(f)(x)
print(json.dumps({{
    "platform": platform,
    "on_platform": set(y.devices()) <= set(jax.devices(platform)),
    "equal": bool(np.array_equal(np.asarray(y), x * np.float32(-1.75))),
    "sys_path": sys.path,
}}))
"""


def author_env(venv: Venv, language: str) -> dict[str, str]:
    """The clean environment plus, for Rust, the author's own Rust toolchain
    (rustup's `cargo` on the PATH, never the checkout's rust-toolchain.toml:
    the projects are outside it)."""
    env = clean({}, venv.bin)
    if language == "rust":
        cargo = shutil.which("cargo")
        if cargo is None:
            pytest.fail(
                "`cyxla-host new --rust` projects build with a Rust toolchain: install rustup "
                "(https://rustup.rs), then `rustup target add wasm32-unknown-unknown`",
                pytrace=False,
            )
        env["PATH"] = f"{pathlib.Path(cargo).parent}:{env['PATH']}"
    return env


@pytest.mark.parametrize("language", ["cpp", "rust"])
def test_new_scaffolds_build_on_the_installed_sdk_and_run(venvs, language):
    venv = venvs("newest")
    name = f"scaled_{language}"
    env = author_env(venv, language)
    for key, value in env.items():
        assert str(ROOT) not in value, f"the build environment names the checkout: {key}={value}"
    work = venv.dir / "projects"
    work.mkdir(exist_ok=True)
    host = str(venv.bin / "cyxla-host")
    r = run([host, "new", name, f"--{language}"], env, work)
    assert r.returncode == 0, r.stdout + r.stderr
    # Nothing to install first (`new` starts its next steps with that).
    assert "apt-get install" not in r.stdout and "rustup target add" not in r.stdout, r.stdout
    project = work / name
    site = next((venv.dir / "venv" / "lib").glob("python3.*/site-packages"))
    sdk = site / "jax_plugins" / "cyxla" / "sdk"
    files = [p for p in project.rglob("*") if p.is_file()]
    assert files, r.stdout
    for path in files:
        text = path.read_text()
        assert str(ROOT) not in text, f"{path.name} names the checkout"
    readme = (project / "README.md").read_text()
    assert f"SDK: `{sdk}`" in " ".join(readme.split()), readme

    # The README's commands, one by one, as the author would type them.
    steps = re.search(r"```sh\n(.*?)```", readme, re.S).group(1).splitlines()
    assert steps[-1].startswith("cyxla-host ") and "call_from_jax.py" in steps[-1], steps
    for line in steps:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        started = time.time()
        r = run(["bash", "-c", line], env, project)
        assert r.returncode == 0, f"`{line}` failed:\n{r.stdout}\n{r.stderr}"
        print(f"{language}: `{line.split('#')[0].strip()}` {time.time() - started:.1f} s")
    # call_from_jax.py prints the platforms and y = arange(4) * 2.5.
    platforms, values = r.stdout.strip().splitlines()[-1].split(" ", 1)
    assert platforms.split(",")[0] == "cyxla", r.stdout
    assert json.loads(values) == [0.0, 2.5, 5.0, 7.5], r.stdout

    # Random operands against numpy, on platform cyxla, and nothing of the
    # checkout on sys.path.
    (project / "check_scaffold.py").write_text(CHECK_SCAFFOLD.format(name=name))
    r = run([host, "--guests", "guests", "--allow", name, "--", "python", "check_scaffold.py"], env, project)
    assert r.returncode == 0, r.stdout + r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["platform"] == "cyxla" and result["on_platform"] and result["equal"], result
    for entry in result["sys_path"]:
        assert not pathlib.Path(entry or ".").resolve().is_relative_to(ROOT), entry


def test_new_says_what_to_install_when_a_tool_is_missing(venvs, tmp_path):
    """Without the author's tools on the PATH, `cyxla-host new` still writes
    the project and its next steps start with the command that installs
    what is missing: zig and CMake from PyPI, or Debian's packages, for C++;
    rustup and the wasm32 target for Rust (also for a rustc whose sysroot
    lacks that target)."""
    venv = venvs("newest")
    host = str(venv.bin / "cyxla-host")
    bare = clean({}, venv.bin)
    bare["PATH"] = str(venv.bin)
    r = run([host, "new", "k_cpp", "--cpp"], bare, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    steps = [line.strip() for line in r.stdout.splitlines()]
    for missing, command in [
        ("# no wasm32 C/C++ compiler (neither Debian's clang-19 nor zig); without root:",
         "pip install ziglang"),
        ("# cmake not found (or: sudo apt-get install cmake):", "pip install cmake"),
    ]:
        assert missing in steps and steps[steps.index(missing) + 1] == command, r.stdout
    assert "sudo apt-get install clang-19 lld-19 wasi-libc libc++-19-dev-wasm32" in r.stdout, r.stdout
    assert "wasm-opt (binaryen) not found: the build runs without it" in r.stdout, r.stdout
    r = run([host, "new", "k_rust", "--rust"], bare, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no Rust toolchain (rustc) on the PATH: install rustup (https://rustup.rs)" in r.stdout, r.stdout
    assert "rustup target add wasm32-unknown-unknown" in r.stdout, r.stdout
    # A toolchain without the wasm32 target: its sysroot has no rustlib/wasm32-unknown-unknown.
    sysroot = tmp_path / "sysroot"
    (sysroot / "lib" / "rustlib" / "x86_64-unknown-linux-gnu").mkdir(parents=True)
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "rustc").write_text(f"#!/bin/sh\necho {sysroot}\n")
    (fake / "rustc").chmod(0o755)
    bare["PATH"] = f"{fake}:{venv.bin}"
    r = run([host, "new", "k_rust2", "--rust"], bare, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "the Rust target wasm32-unknown-unknown is not installed" in r.stdout, r.stdout
    assert "rustup target add wasm32-unknown-unknown" in r.stdout, r.stdout
