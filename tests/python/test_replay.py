"""Issue 36, record and replay: a failed guest call in a JAX process is
recorded (`cyxla-host --record DIR`), `cyxla-host replay` runs it again with
the same error, and on a fixed build of the guest (`--guests`) it succeeds
with the right result. Records are bounded in count and size, written only
when recording is on, and decided by the tenant policy where there is one.

Real parts only: the launcher, JAX on platform `cyxla`, the bundled guests.
"""

from __future__ import annotations

import getpass
import re

import numpy as np
import pytest

from support import HOST, ROOT, assert_no_crash, clean_env, run, run_launched, run_python, with_target

GUESTS = ROOT / "guests" / "out"

CALL = """
import numpy as np, jax
x = np.arange(16, dtype=np.float32)
f = jax.jit(lambda x: jax.ffi.ffi_call("kern", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, factor=np.float64(3.0)))
for _ in range({n}):
    try:
        print("RESULT", np.asarray(f(x)).tolist())
    except Exception as e:
        print("ERROR", str(e).splitlines()[0])
"""


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """`broken`: `kern` traps (the trap guest's `trap`); `fixed`: `kern` scales
    (scale_any's code), as a fixed build of the same kernel would."""
    root = tmp_path_factory.mktemp("replay")
    broken, fixed = root / "broken", root / "fixed"
    broken.mkdir()
    fixed.mkdir()
    (broken / "kern.wasm").write_bytes(with_target((GUESTS / "trap.wasm").read_bytes(), "kern", "trap"))
    (fixed / "kern.wasm").write_bytes(with_target((GUESTS / "scale_any.wasm").read_bytes(), "kern", "scale_any"))
    return root, broken, fixed


def records(folder):
    return sorted(p for p in folder.iterdir() if (p / "call.toml").is_file()) if folder.exists() else []


def test_a_failed_call_is_recorded_and_replayed(folders, tmp_path):
    _, broken, fixed = folders
    rec = tmp_path / "records"
    r = run_launched(CALL.format(n=1), ["--guests", broken, "--allow", "kern", "--record", rec], env={})
    assert_no_crash(r)
    assert "ERROR" in r.stdout and "trapped" in r.stdout, r.describe()
    assert "failed call recorded in" in r.stderr, r.describe()
    [record] = records(rec)
    assert record.stat().st_mode & 0o777 == 0o700 and rec.stat().st_mode & 0o777 == 0o700
    text = (record / "call.toml").read_text()
    assert 'target = "kern"' in text and 'error_code = "INTERNAL"' in text, text
    assert str(broken / "kern.wasm") in text, text
    np.testing.assert_array_equal(np.load(record / "operand-0.npy"), np.arange(16, dtype=np.float32))

    # the same error, from the recorded guest
    again = run([HOST, "replay", record, "--show"], env=clean_env())
    assert again.returncode == 1, again.describe()
    assert "the recorded module" in again.stdout, again.describe()
    assert "operand 0: f32[16] [0, 1, 2, 3, 4, 5, 6, 7, ...]" in again.stdout, again.describe()
    assert "attribute factor: f64 3\n" in again.stdout, again.describe()
    assert "trapped" in again.stderr and "(the recorded error)" in again.stderr, again.describe()

    # on the fixed build: it succeeds, with the result the kernel should give
    out = tmp_path / "out"
    fixed_run = run([HOST, "replay", record, "--guests", fixed, "--output-dir", out], env=clean_env())
    assert fixed_run.returncode == 0, fixed_run.describe()
    assert "another build than the recorded one" in fixed_run.stdout, fixed_run.describe()
    assert "the call succeeds now" in fixed_run.stdout, fixed_run.describe()
    np.testing.assert_array_equal(np.load(out / "out0.npy"), np.arange(16, dtype=np.float32) * 3)

    # and JAX on the fixed folder agrees with the replay
    jax_run = run_launched(CALL.format(n=1), ["--guests", fixed, "--allow", "kern"], env={})
    assert f"RESULT {(np.arange(16, dtype=np.float32) * 3).tolist()}" in jax_run.stdout, jax_run.describe()


def test_nothing_is_recorded_unless_enabled(folders, tmp_path):
    _, broken, _ = folders
    r = run([HOST, "--guests", broken, "--allow", "kern", "--", *python_c(CALL.format(n=2))],
            env=clean_env({"HOME": str(tmp_path)}), cwd=tmp_path)
    assert "ERROR" in r.stdout, r.describe()
    assert "recorded" not in r.stderr, r.describe()
    left = [p for p in tmp_path.rglob("call.toml")]
    assert not left, left


def python_c(code):
    from support import VENV_PYTHON
    return [VENV_PYTHON, "-c", code]


def test_records_are_bounded_in_count_and_size(folders, tmp_path):
    _, broken, _ = folders
    rec = tmp_path / "records"
    r = run_launched(CALL.format(n=103), ["--guests", broken, "--allow", "kern", "--record", rec], env={})
    assert r.stdout.count("ERROR") == 103, r.describe()
    assert len(records(rec)) == 100, r.describe()
    assert "holds 100 records, the most kept" in r.stderr, r.describe()
    assert r.stderr.count("the most kept") == 1, r.describe()

    # a call whose operands are larger than a record keeps (64 MiB) is not recorded
    big = tmp_path / "big"
    code = CALL.replace("np.arange(16,", "np.arange(17 << 20,").format(n=1)
    r = run_launched(code, ["--guests", broken, "--allow", "kern", "--record", big], env={})
    assert "ERROR" in r.stdout, r.describe()
    assert "more than a record keeps" in r.stderr, r.describe()
    assert records(big) == [], r.describe()


def test_the_policy_decides_where_records_go(folders, tmp_path):
    root, broken, _ = folders
    policy = tmp_path / "policy.toml"
    policy.write_text(f"""
[tenants.rec]
guests = ["{broken}"]
allow = ["kern"]
record = "{tmp_path}/records-$USER"
[tenants.norec]
guests = ["{broken}"]
allow = ["kern"]
""")
    r = run_launched(CALL.format(n=1), ["--policy", policy, "--tenant", "rec"], env={})
    assert "ERROR" in r.stdout, r.describe()
    assert len(records(tmp_path / f"records-{getpass.getuser()}")) == 1, r.describe()

    # a tenant without `record` records nothing, and its user cannot turn it on
    r = run_launched(CALL.format(n=1), ["--policy", policy, "--tenant", "norec", "--record", tmp_path / "mine"],
                     env={})
    assert r.returncode == 2, r.describe()
    assert re.search(r"CYXLA_RECORD is set, but the policy .* decides", r.stderr), r.describe()
    assert not (tmp_path / "mine").exists()


def test_a_replay_on_the_fixed_build_equals_the_native_build_of_its_source(folders, tmp_path):
    """The fixed build is the C++ scale_any (guests/cpp/scale_any.cc) as `kern`;
    its replay on the recorded operands equals that source built natively
    (guests/cpp/build.sh --native) and called by JAX's own CPU backend."""
    _, broken, _ = folders
    fixed = tmp_path / "fixed_cpp"
    fixed.mkdir()
    (fixed / "kern.wasm").write_bytes(
        with_target((GUESTS / "scale_any_cpp.wasm").read_bytes(), "kern", "scale_any_cpp"))
    rec = tmp_path / "records"
    code = CALL.replace("np.arange(16, dtype=np.float32)",
                        "np.random.default_rng(7).standard_normal(4099).astype(np.float32)")
    r = run_launched(code.format(n=1), ["--guests", broken, "--allow", "kern", "--record", rec], env={})
    assert "ERROR" in r.stdout, r.describe()
    [record] = records(rec)
    out = tmp_path / "out"
    replayed = run([HOST, "replay", record, "--guests", fixed, "--output-dir", out], env=clean_env())
    assert replayed.returncode == 0, replayed.describe()

    native = tmp_path / "native"
    built = run(["bash", ROOT / "guests" / "cpp" / "build.sh", "--native", "--out", native,
                 ROOT / "guests" / "cpp" / "scale_any.cc"], env=clean_env())
    assert built.returncode == 0, built.describe()
    expected = tmp_path / "native.npy"
    by_native = run_python(f"""
        import ctypes, numpy as np, jax
        lib = ctypes.cdll.LoadLibrary({str(native / "libscale_any_cpp.so")!r})
        jax.ffi.register_ffi_target("scale_any_native", jax.ffi.pycapsule(lib.ScaleAny), platform="cpu")
        x = np.load({str(record / "operand-0.npy")!r})
        y = jax.ffi.ffi_call("scale_any_native", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, factor=np.float64(3.0))
        np.save({str(expected)!r}, np.asarray(y))
        """, env={"JAX_PLATFORMS": "cpu"})
    assert by_native.returncode == 0, by_native.describe()
    got, want = np.load(out / "out0.npy"), np.load(expected)
    assert got.dtype == want.dtype and got.shape == want.shape == (4099,)
    assert got.tobytes() == want.tobytes(), np.flatnonzero(got != want)[:8]
