"""Per-target statistics: `cyxla-host run --stats` prints a table; the
plugin keeps a JSON file (CYXLA_STATS) an operator can scrape, written at
exit too, and logs the table at exit. Counts are exact after a known
sequence of calls, guest errors and traps."""

from __future__ import annotations

import json
import subprocess

from support import HOST, ROOT, VENV_PYTHON, clean_env

PROGRAMS = ROOT / "tests" / "programs" / "guests"

SCRIPT = """
import numpy as np, jax
x = np.ones((2, 8), np.float32)
f = jax.jit(lambda x: jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, eps=np.float32(1e-5)))
for _ in range(3):
    f(x).block_until_ready()
for code in (5, 9):
    try:
        jax.ffi.ffi_call("fail", jax.ShapeDtypeStruct((1,), np.float32))(x, code=code).block_until_ready()
    except Exception as e:
        print("FAILED", str(e).split(":")[0])
try:
    jax.ffi.ffi_call("trap", jax.ShapeDtypeStruct((1,), np.float32))(x).block_until_ready()
except Exception as e:
    print("TRAPPED")
"""


def test_run_prints_a_table_with_stats():
    r = subprocess.run(
        [str(HOST), "--allow", "rms_norm", "--allow", "scale_any", "run",
         str(PROGRAMS / "rms_norm_then_scale.mlirbc"), "--input", str(PROGRAMS / "rms_norm_then_scale.in0.npy"),
         "--stats"],
        env=clean_env({}), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {line.split()[0]: line.split() for line in r.stderr.splitlines() if line.split()}
    assert rows["target"][1:3] == ["calls", "g.err"], r.stderr
    for target in ("rms_norm", "scale_any"):
        assert rows[target][1] == "1" and rows[target][2] == "0", r.stderr
        assert float(rows[target][7]) > 0, r.stderr  # time in the guest, ms
        assert int(rows[target][9]) == 4 * 8 * 4 and int(rows[target][10]) == 4 * 8 * 4, r.stderr


def test_the_plugin_keeps_a_json_file_and_logs_at_exit(tmp_path):
    stats = tmp_path / "stats.json"
    r = subprocess.run(
        [str(HOST), "--allow", "rms_norm", "--allow", "fail", "--allow", "trap", "--",
         str(VENV_PYTHON), "-c", SCRIPT],
        env=clean_env({"CYXLA_STATS": str(stats), "CYXLA_LOG": "cyxla_pjrt=info"}),
        capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert r.stdout.count("FAILED ") == 2 and "TRAPPED" in r.stdout, r.stdout
    doc = {t["target"]: t for t in json.loads(stats.read_text())["targets"]}
    rms, fail, trap = doc["rms_norm"], doc["fail"], doc["trap"]
    assert (rms["calls"], rms["guest_errors"], rms["traps"]) == (3, 0, 0), rms
    assert rms["bytes_in"] == 3 * 64 and rms["bytes_out"] == 3 * 64 and rms["guest_ns"] > 0, rms
    assert (fail["calls"], fail["guest_errors"]) == (2, 2), fail
    assert (trap["calls"], trap["traps"], trap["guest_errors"]) == (1, 1, 0), trap
    assert "cyxla per-target statistics" in r.stderr, r.stderr[-3000:]


WATCH = """
import json, os, sys, time
import numpy as np, jax
x = np.ones((2, 8), np.float32)
f = jax.jit(lambda x: jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, eps=np.float32(1e-5)))
for _ in range(3):
    f(x).block_until_ready()
path, wait = sys.argv[1], float(sys.argv[2])
end = time.monotonic() + wait
while time.monotonic() < end:
    try:
        doc = json.load(open(path))
    except (OSError, ValueError):
        time.sleep(0.05)
        continue
    calls = {t["target"]: t["calls"] for t in doc["targets"]}.get("rms_norm")
    if calls == 3:
        print("SEEN", calls)
        break
    time.sleep(0.05)
else:
    print("NOT SEEN")
"""


def test_the_statistics_interval_sets_how_often_the_file_is_rewritten(tmp_path):
    """CYXLA_STATS_INTERVAL: with 200ms the running process's file shows its
    calls (waited for generously); with 1min it does not within 4 s, which
    the default of 2 s would have; both files are written at exit."""
    for interval, wait, want in (("200ms", 60, "SEEN 3"), ("1min", 4, "NOT SEEN")):
        stats = tmp_path / f"stats-{interval}.json"
        r = subprocess.run(
            [str(HOST), "--allow", "rms_norm", "--", str(VENV_PYTHON), "-c", WATCH, str(stats), str(wait)],
            env=clean_env({"CYXLA_STATS": str(stats), "CYXLA_STATS_INTERVAL": interval}),
            capture_output=True, text=True, timeout=180)
        assert r.returncode == 0, r.stdout + r.stderr[-3000:]
        assert r.stdout.strip().splitlines()[-1] == want, (interval, r.stdout, r.stderr[-3000:])
        doc = {t["target"]: t for t in json.loads(stats.read_text())["targets"]}
        assert doc["rms_norm"]["calls"] == 3, doc


def test_a_bad_statistics_interval_is_refused_by_name(tmp_path):
    r = subprocess.run(
        [str(HOST), "--allow", "rms_norm", "--", str(VENV_PYTHON), "-c", "print('ran')"],
        env=clean_env({"CYXLA_STATS": str(tmp_path / "s.json"), "CYXLA_STATS_INTERVAL": "10ms"}),
        capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "ran" not in r.stdout, r.stdout + r.stderr
    assert "CYXLA_STATS_INTERVAL" in r.stderr and "100ms" in r.stderr, r.stderr


def test_a_metrics_folder_that_cannot_be_written_is_one_warning_and_the_calls_go_on(tmp_path):
    """CYXLA_METRICS naming a folder that does not exist: a warning naming the
    file, once (not every interval), and the program runs to its end."""
    missing = tmp_path / "nowhere"
    code = ("import time, numpy as np, jax\n"
            "x = np.ones((2, 8), np.float32)\n"
            "f = jax.jit(lambda x: jax.ffi.ffi_call('rms_norm', jax.ShapeDtypeStruct(x.shape, x.dtype))(x, eps=np.float32(1e-5)))\n"
            "for _ in range(10):\n"
            "    f(x).block_until_ready(); time.sleep(0.1)\n"
            "print('DONE')\n")
    r = subprocess.run(
        [str(HOST), "--allow", "rms_norm", "--", str(VENV_PYTHON), "-c", code],
        env=clean_env({"CYXLA_METRICS": str(missing), "CYXLA_STATS_INTERVAL": "100ms"}),
        capture_output=True, text=True, timeout=180)
    assert r.returncode == 0 and "DONE" in r.stdout, r.stdout + r.stderr[-3000:]
    warnings = [line for line in r.stderr.splitlines() if "cannot write" in line and str(missing) in line]
    # one while it runs, one at exit
    assert len(warnings) == 2, r.stderr[-3000:]
    assert "retrying every 100ms, silently" in warnings[0], warnings
