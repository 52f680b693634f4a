"""The documents' commands run as written. docs/using-jax.md, "JAX on cyxla":
its launcher command, its configuration file and the commands that write a
kernel spec; "JAX's own `cpu`
platform": its commands and scripts. docs/operating.md: the example policy.
The set-up that both README commands run builds everything the launcher
loads. docs/performance.md, "Benchmarks": its one command runs (in its quick
mode) and prints the table of every goal, and benches/jit_overhead.py builds
what it loads and measures every variant."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess

import nbformat
from nbclient import NotebookClient

from support import HOST, ROOT, VENV_PYTHON, clean_env, doc_section
from support import run as run_checked

USING = ROOT / "docs" / "using-jax.md"
OPERATING = ROOT / "docs" / "operating.md"
PERFORMANCE = ROOT / "docs" / "performance.md"
SECTION = doc_section(USING, "## JAX on cyxla")


def block(lang: str, index: int = 0) -> str:
    blocks = re.findall(rf"```{lang}\n(.*?)```", SECTION, re.S)
    assert len(blocks) > index, f"no ```{lang} block #{index} in docs/using-jax.md's 'JAX on cyxla'"
    return blocks[index]


SCRIPT = """
import numpy as np
import jax, jax.numpy as jnp
x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
y = jax.jit(lambda x: jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, eps=np.float32(1e-5)))(x)
ref = x / np.sqrt(np.mean(x.astype(np.float64) ** 2, axis=-1, keepdims=True) + 1e-5)
assert np.allclose(np.asarray(y), ref, rtol=1e-5, atol=1e-6)
z = jax.jit(lambda x: jax.ffi.ffi_call("scale_any", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, factor=3.0))(x)
assert np.allclose(np.asarray(z), 3 * x)
print("OK", jax.config.jax_platforms, len(jax.devices()))
"""


def run(argv, env, cwd, timeout=300):
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def test_the_launcher_command(tmp_path):
    command = block("sh").strip()
    assert command == "cyxla-host --allow rms_norm --allow scale_any -- python my_script.py", command
    (tmp_path / "my_script.py").write_text(SCRIPT)
    argv = command.split()
    argv[0] = str(HOST)
    argv[argv.index("python")] = str(VENV_PYTHON)
    r = run(argv, clean_env({}), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK cyxla 4" in r.stdout, r.stdout + r.stderr


def test_the_configuration_file(tmp_path):
    (tmp_path / "cyxla.toml").write_text(block("toml"))
    (tmp_path / "guests").mkdir()
    (tmp_path / "guests" / "out").symlink_to(ROOT / "guests" / "out")
    probe = SCRIPT + """
from jaxlib.cpu import _lapack  # a real XLA FFI handler: jaxlib's sgetrf
try:
    jax.ffi.register_ffi_target("readme_native", _lapack.registrations()["lapack_sgetrf_ffi"], platform="cpu")
except Exception as e:
    print("REFUSED", e)
"""
    (tmp_path / "probe.py").write_text(probe)
    env = clean_env({"CYXLA_CONFIG": str(tmp_path / "cyxla.toml")})
    r = run([str(HOST), "--", str(VENV_PYTHON), "probe.py"], env, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    # devices = 2 and allow_native = false, from the file
    assert "OK cyxla 2" in r.stdout, r.stdout + r.stderr
    assert "REFUSED" in r.stdout and "readme_native" in r.stdout, r.stdout + r.stderr


def test_the_kernel_spec(tmp_path, monkeypatch):
    """The commands of "Notebooks", with a home of the test's own: they write
    the policy and the kernel spec, whose kernel runs a guest, raises for a
    trapping one and runs the next cell."""
    (commands,) = [b for b in re.findall(r"```sh\n(.*?)```", SECTION, re.S) if "kernelspec install" in b]
    env = clean_env({"HOME": str(tmp_path), "PATH": f"{HOST.parent}:/usr/bin:/bin"})
    r = run(["bash", "-euo", "pipefail", "-c", commands], env, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    jupyter = tmp_path / ".local" / "share" / "jupyter"
    spec = json.loads((jupyter / "kernels" / "cyxla" / "kernel.json").read_text())
    assert spec["argv"][:3] == [str(HOST), "--policy", str(tmp_path / "cyxla-policy.toml")], spec
    assert spec["argv"][-3:] == ["ipykernel_launcher", "-f", "{connection_file}"], spec
    assert spec["display_name"] == "Python 3 (cyxla)", spec
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter))
    nb = nbformat.v4.new_notebook()
    guest = "import numpy as np, jax\nx = np.ones((2, 4), np.float32)\n" \
        "print(np.asarray(jax.jit(lambda x: jax.ffi.ffi_call('rms_norm', jax.ShapeDtypeStruct(x.shape, x.dtype))(x, eps=np.float32(0)))(x)).tolist())"
    trap = "jax.ffi.ffi_call('trap', jax.ShapeDtypeStruct((4,), np.float32))(x).block_until_ready()"
    nb.cells = [nbformat.v4.new_code_cell(src) for src in (guest, trap, guest)]
    client = NotebookClient(nb, kernel_name="cyxla", timeout=180, startup_timeout=120, allow_errors=True)
    client.execute(env=clean_env({"JUPYTER_PATH": str(jupyter)}))
    first, trapped, again = nb.cells
    out = lambda cell: "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")
    assert "[[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]" in out(first), first.outputs
    errors = [o for o in trapped.outputs if o.output_type == "error"]
    assert errors and "target `trap` (guest trap.wasm)" in errors[0]["evalue"], trapped.outputs
    assert out(again) == out(first), again.outputs


def test_the_setup_builds_everything_the_launcher_loads():
    """Both README commands run scripts/setup.sh, whose last step, scripts/build.sh,
    builds the program the demo runs (.venv/bin/cyxla-host) and the plugin library the
    launcher hands to JAX. Cargo lists every artifact of the units a build selects,
    whether it compiles them now or found them built, so the build's artifact list
    is what the same command leaves in an empty target directory: a build command
    that selected too little (e.g. `--bin cyxla-host`, which skips the plugin's
    cdylib) fails here on a warm target directory too."""
    r = run(["scripts/build.sh", "--message-format=json"], clean_env({}), ROOT, timeout=1800)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    artifacts = set()
    for line in r.stdout.splitlines():
        if not line.startswith("{"):
            continue
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact":
            artifacts.update(msg["filenames"])
            if msg.get("executable"):
                artifacts.add(msg["executable"])
    program = ROOT / ".venv" / "bin" / "cyxla-host"
    assert str(program.resolve()) in artifacts, (program, sorted(artifacts))
    # What the launcher loads: it names the plugin library in the environment of COMMAND.
    r = run([str(program), "--", "env"], clean_env({}), ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    loaded = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
    assert loaded.get("CYXLA_PJRT_LIBRARY") in artifacts, (loaded.get("CYXLA_PJRT_LIBRARY"), sorted(artifacts))
    # The demo runs the program the set-up linked, not one of a build it does not make.
    demo = (ROOT / "scripts" / "demo.sh").read_text()
    assert "bin=.venv/bin/cyxla-host" in demo and "cargo build" not in demo, demo


def test_the_demo_script():
    """examples/jax_on_cyxla.py, as scripts/demo.sh runs it: every check it prints holds."""
    argv = [str(HOST), "--allow", "rms_norm", "--allow", "rms_norm_fwd", "--allow", "rms_norm_bwd",
            "--allow", "trap", "--", str(VENV_PYTHON), "examples/jax_on_cyxla.py"]
    demo = (ROOT / "scripts" / "demo.sh").read_text()
    assert "--allow rms_norm --allow rms_norm_fwd --allow rms_norm_bwd --allow trap" in demo
    r = run(argv, clean_env({}), ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    checks = [line for line in r.stdout.splitlines() if line.rstrip().endswith(("True", "False"))]
    assert len(checks) == 3 and all(line.endswith("True") for line in checks), r.stdout
    assert "a trapping guest raised" in r.stdout and "target `trap` (guest trap.wasm)" in r.stdout, r.stdout


def test_the_example_policy(tmp_path):
    """docs/operating.md's policy parses and checks clean (its folders do not
    exist here, so its pin has no module to be checked against)."""
    policy = re.findall(r"```toml\n(.*?)```", doc_section(OPERATING, "## Tenant policy"), re.S)[0]
    (tmp_path / "policy.toml").write_text(policy)
    r = run([str(HOST), "policy", "check", str(tmp_path / "policy.toml")], clean_env({}), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ok, 2 tenant(s): research, student" in r.stdout, r.stdout
    r = run([str(HOST), "--policy", str(tmp_path / "policy.toml"), "--tenant", "student", "list"],
            clean_env({}), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "tenant `student`" in r.stdout and "`rms_norm*`" in r.stdout and "/srv/cyxla/shared" in r.stdout, r.stdout


def test_the_run_examples():
    """docs/using-jax.md, "Running programs": its examples run from the
    repository root, each `run` printing its outputs."""
    part = doc_section(USING, "## Running programs")
    (examples,) = [b for b in re.findall(r"```sh\n(.*?)```", part, re.S) if "cyxla-host list" in b]
    commands = examples.replace("\\\n", " ").strip().splitlines()
    assert len(commands) == 3 and commands[0].strip() == "cyxla-host list", commands
    for command in commands:
        argv = command.split()
        assert argv[0] == "cyxla-host", command
        r = run([str(HOST), *argv[1:]], clean_env({}), ROOT)
        assert r.returncode == 0, command + "\n" + r.stdout + r.stderr
        if "run" in argv:
            assert r.stdout.startswith("out0: "), command + "\n" + r.stdout + r.stderr
    assert "rms_norm" in run([str(HOST), "list"], clean_env({}), ROOT).stdout


def test_the_limits_side_file(tmp_path):
    """docs/operating.md, "Limits": the side file, beside a copy of the
    rms_norm guest, sets its limits, as `cyxla-host check` shows."""
    part = doc_section(OPERATING, "## Limits")
    (side,) = re.findall(r"```toml\n(.*?)```", part, re.S)
    name = side.splitlines()[0].removeprefix("# ").strip()
    assert name == "guests/rms_norm.limits.toml", name
    (tmp_path / "guests").mkdir()
    (tmp_path / "guests" / "rms_norm.wasm").symlink_to(ROOT / "guests" / "out" / "rms_norm.wasm")
    (tmp_path / name).write_text(side)
    r = run([str(HOST), "check", str(tmp_path / "guests" / "rms_norm.wasm")], clean_env({}), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    limits = next((l for l in r.stdout.splitlines() if l.split()[:1] == ["limits"]), "")
    for shown in ("memory 64 MiB", "instances 4", "call 2s", f"(with {tmp_path / name})"):
        assert shown in limits, (shown, r.stdout)


def test_the_readme_is_a_landing_page():
    """The README stays short, and its one picture is the call path, as a
    Mermaid diagram, and every file it links exists. Its install and first
    script run in test_wheel.py and test_wheel_alone.py."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200, len(readme.splitlines())
    (diagram,) = re.findall(r"```mermaid\n(.*?)```", readme, re.S)
    assert diagram.startswith("flowchart"), diagram
    for hop in ("JAX program", "cyxla PJRT plugin", "platform cyxla", "XLA CPU PJRT plugin", "custom call",
                "cranelift trampoline", "sandbox", "buffers copied in and out", "wasm guest", "wasmtime",
                "LAPACK targets", "OpenBLAS"):
        assert hop in diagram, hop
    for link in re.findall(r"\]\(([^)#]+)", readme):
        assert link.startswith("http") or (ROOT / link).exists(), f"README links {link}, which does not exist"


# Rows of scripts/bench.sh's table: goals P1..P8 of issue 17 and memory.
BENCH_ROWS = ["P1", "P2 1M", "P2 16M", "P3", "P4", "P5", "P6", "P7", "P8",
              "M idle", "M load", "M instance"]


def bench_commands() -> list[str]:
    """The commands of docs/performance.md's section "Benchmarks", without their comments."""
    part = doc_section(PERFORMANCE, "## Benchmarks")
    return [line.split("#")[0].strip() for block in re.findall(r"```\n(.*?)```", part, re.S)
            for line in block.splitlines()]


def test_the_bench_on_the_wheels_openblas():
    """`scripts/bench.sh --lapack wheel P5`, as docs/performance.md shows it,
    in its quick mode: the bench runs cyxla-host's LAPACK targets on the
    `scipy-openblas32` that scripts/wheel.py's pin resolves to (fetched from
    PyPI into target/bench/), a version in the pinned range."""
    assert "scripts/bench.sh --lapack wheel P5" in bench_commands(), bench_commands()
    r = run_checked(["scripts/bench.sh", "--quick", "--lapack", "wheel", "P5"], env=clean_env({}), timeout=3600)
    assert r.returncode == 0, r.describe()
    assert re.search(r"^\| P5 \| .* \| (met|not met) \|$", r.stdout, re.M), r.stdout
    target = pathlib.Path(clean_env({}).get("CARGO_TARGET_DIR") or ROOT / "target")
    log = (target / "bench" / "lapack.log").read_text()
    loaded = re.search(r"^cyxla-host LAPACK: (\S+) \(OpenBLAS (\d+)\.(\d+)\.(\d+)", log, re.M)
    assert loaded, log
    assert loaded.group(1).endswith("wheel-openblas/unpacked/scipy_openblas32/lib/libscipy_openblas.so"), loaded.group(0)
    assert (0, 3, 30) <= tuple(int(x) for x in loaded.groups()[1:]) < (0, 3, 34), loaded.group(0)


def test_the_bench_command():
    """`scripts/bench.sh`, as docs/performance.md shows it, in its quick mode (few
    rounds; the release build of the benches first, if it is not there):
    every row of the table has a figure and a verdict, and every
    machine-readable value parses."""
    commands = bench_commands()
    assert "scripts/bench.sh" in commands, commands
    # A hang bound, generous: a cold release build of the benches is slow on
    # a shared machine; the quick run itself takes about 3 minutes.
    r = run_checked(["scripts/bench.sh", "--quick"], env=clean_env({}), timeout=3600)
    assert r.returncode == 0, r.describe()
    rows = {}
    for line in r.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 5 and cells[0] in BENCH_ROWS:
            rows[cells[0]] = cells
    assert sorted(rows) == sorted(BENCH_ROWS), r.describe()
    for row, (_, measure, figure, goal, met) in rows.items():
        assert measure and re.search(r"\d", figure), (row, figure)
        if row.startswith("M"):
            assert (goal, met) == ("", "-"), (row, goal, met)
        else:
            assert goal and met in ("met", "not met"), (row, goal, met)
    assert "load average (1, 5, 15 min) before: " in r.stdout, r.stdout
    # The CPU the figures came from, as the kernel names it.
    cpu = next(line.split(":", 1)[1].strip() for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines()
               if line.startswith("model name"))
    assert f"machine: {cpu} (family " in r.stdout, r.stdout
    rss = re.search(r"peak RSS of the bench processes: (.*)", r.stdout)
    assert rss, r.stdout
    for bench in ("dispatch", "kernels", "deadline", "lapack", "startup", "devices"):
        assert re.search(rf"\b{bench} \d+ MiB", rss.group(1)), rss.group(1)
    target = pathlib.Path(clean_env({}).get("CARGO_TARGET_DIR") or ROOT / "target")
    results = (target / "bench" / "results.txt").read_text().splitlines()
    ids = {line.split()[1] for line in results}
    assert {row.replace(" ", "-") for row in BENCH_ROWS} <= ids, ids
    for line in results:
        fields = line.split(" | ")[0].split()[2:]
        values = dict(f.split("=", 1) for f in fields)
        assert values["met"] in ("yes", "no", "info"), line
        for key, value in values.items():
            if key not in ("met", "goal"):
                float(value)  # raises on a value that does not parse


def test_the_jit_overhead_bench():
    """docs/performance.md's `benches/jit_overhead.py` line, with few rounds: it builds
    what it loads itself, and every variant, the native one included, has a
    figure."""
    commands = bench_commands()
    line = ".venv/bin/python benches/jit_overhead.py"
    assert line in commands, commands
    r = run_checked([*line.split(), "--rounds", "2", "--calls", "20"], env=clean_env({}), timeout=1800)
    assert r.returncode == 0, r.describe()
    for variant in ("x + 1 on realcpu", "x + 1 on cyxla", "copy16 guest on cyxla",
                    "noop guest on cyxla", "copy16 native on cyxla"):
        assert re.search(rf"^{re.escape(variant)}\s+\d+\.\d", r.stdout, re.M), (variant, r.stdout)
    assert "plugin overhead per jit call: " in r.stdout, r.stdout


CPU_SECTION = doc_section(USING, "## JAX's own `cpu` platform, across processes and machines")


def cpu_block(lang: str, index: int) -> str:
    blocks = re.findall(rf"```{lang}\n(.*?)```", CPU_SECTION, re.S)
    assert len(blocks) == 2, f"expected two ```{lang} blocks in docs/using-jax.md's cpu section, found {len(blocks)}"
    return blocks[index]


def test_cpu_platform_launcher_command(tmp_path):
    command = cpu_block("sh", 0).strip()
    assert command == "cyxla-host --platform cpu --allow rms_norm -- python my_script.py", command
    (tmp_path / "my_script.py").write_text(SCRIPT.split("z = jax.jit")[0] + "print('OK', jax.default_backend())\n")
    argv = command.split()
    argv[0] = str(HOST)
    argv[argv.index("python")] = str(VENV_PYTHON)
    r = run(argv, clean_env({}), tmp_path)
    assert r.returncode == 0 and "OK cpu" in r.stdout, r.stdout + r.stderr


def test_cpu_platform_serve_on_cpu_example(tmp_path):
    from support import LIBRARY

    (tmp_path / "example.py").write_text(cpu_block("python", 0))
    r = run([str(VENV_PYTHON), "example.py"], clean_env({"CYXLA_PJRT_LIBRARY": str(LIBRARY)}), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    # rms_norm of ones is 1 / sqrt(1 + eps)
    assert r.stdout.startswith("cpu [0.999995"), r.stdout + r.stderr


def test_cpu_platform_multi_process_recipe(tmp_path):
    import socket

    (tmp_path / "worker.py").write_text(cpu_block("python", 1))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    lines = [l.strip() for l in cpu_block("sh", 1).strip().splitlines()]
    assert len(lines) == 2 and lines[0].endswith(" &"), lines
    procs = []
    try:
        for line in lines:
            argv = line.removesuffix(" &").split()
            argv[0] = str(HOST)
            argv[argv.index("python")] = str(VENV_PYTHON)
            argv = [a.replace("127.0.0.1:12355", f"127.0.0.1:{port}") for a in argv]
            procs.append(subprocess.Popen(argv, env=clean_env({}), cwd=tmp_path, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL))
        outs = [p.communicate(timeout=240) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for i, (p, (out, err)) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, out + err[-3000:]
        assert f"process {i} of 2 devices 4 psum" in out, out + err[-3000:]
    assert outs[0][0].split("psum")[1] == outs[1][0].split("psum")[1], outs
