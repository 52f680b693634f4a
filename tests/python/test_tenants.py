"""Tenant policy: one policy file, two tenants in two JAX processes at once.

Each tenant sees only its own targets and limits; the same target name,
`my_kernel`, is served by different modules for the two tenants (rms_norm's
code for `a`, scale_any's for `b`) and gives each its own result; a user the
policy maps to a tenant cannot become another by setting a variable; native
registrations follow each tenant's `allow_native`; `cyxla-host policy check`
reports every problem with line and column.
"""

from __future__ import annotations

import getpass
import hashlib
import re
import subprocess

import numpy as np
import pytest

from support import HOST, ROOT, VENV_PYTHON, clean_env, with_target

GUESTS = ROOT / "guests" / "out"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("tenants")
    shared, a, b = root / "shared", root / "a", root / "b"
    for d in (shared, a, b):
        d.mkdir()
    for name in ("rms_norm.wasm", "scale_any.wasm", "trap.wasm"):
        (shared / name).write_bytes((GUESTS / name).read_bytes())
    mine_a = with_target((GUESTS / "copy16.wasm").read_bytes(), "my_kernel", "copy16")
    mine_b = with_target((GUESTS / "scale_any.wasm").read_bytes(), "my_kernel", "scale_any")
    (a / "mine.wasm").write_bytes(mine_a)
    (b / "mine.wasm").write_bytes(mine_b)
    policy = root / "policy.toml"
    policy.write_text(f"""
[defaults]
allow_native = false
[defaults.limits]
call_timeout = "5s"

[tenants.a]
guests = ["shared", "a"]
allow = ["rms_norm", "my_kernel", "trap"]
devices = 2
[tenants.a.limits]
memory = "64MiB"

[tenants.b]
guests = ["shared", "b"]
allow = ["scale_*", "my_kernel"]
allow_native = true
pins = {{ my_kernel = "{hashlib.sha256(mine_b).hexdigest()}" }}
""")
    return root, policy


PROBE = """
import numpy as np
import jax
x = np.arange(16, dtype=np.float32)
def call(target, **attrs):
    try:
        y = jax.jit(lambda x: jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(x.shape, x.dtype))(x, **attrs))(x)
        return "ok " + " ".join(str(v) for v in np.asarray(y)[:4].tolist())
    except Exception as e:
        hints = [line for line in str(e).splitlines() if line.startswith("hint: ")]
        return "error " + str(e).splitlines()[0][:200] + "".join(" | " + h for h in hints)
print("DEVICES", len(jax.devices()))
print("MY_KERNEL", call("my_kernel", factor=3.0))
print("RMS_NORM", call("rms_norm", eps=np.float32(1e-5)))
print("SCALE_ANY", call("scale_any", factor=2.0))
from jaxlib.cpu import _lapack  # a real XLA FFI handler: jaxlib's sgetrf
try:
    jax.ffi.register_ffi_target("tenant_native", _lapack.registrations()["lapack_sgetrf_ffi"], platform="cpu")
    print("NATIVE allowed")
except Exception as e:
    print("NATIVE refused", e)
"""


def launch(policy, tenant, code=PROBE, extra=()):
    return subprocess.Popen(
        [str(HOST), "--policy", str(policy), "--tenant", tenant, *extra, "--", str(VENV_PYTHON), "-c", code],
        env=clean_env({}), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def lines(out: str) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)


def test_two_tenants_in_two_processes(site):
    _, policy = site
    procs = {t: launch(policy, t) for t in ("a", "b")}
    results = {}
    for tenant, p in procs.items():
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, f"{tenant}: {out}\n{err}"
        results[tenant] = lines(out)
    a, b = results["a"], results["b"]
    # a: my_kernel is copy16 (x), its own rms_norm, no scale_any, 2 devices, natives refused
    assert a["DEVICES"] == "2", a
    assert a["MY_KERNEL"] == "ok 0.0 1.0 2.0 3.0", a
    assert a["RMS_NORM"].startswith("ok "), a
    assert a["SCALE_ANY"].startswith("error ") and "scale_any" in a["SCALE_ANY"], a
    # XLA's compile error, and why: the policy's decision in a tenant's words (no `--allow`)
    root, _ = site
    assert a["SCALE_ANY"].endswith(
        f"| hint: target `scale_any` is served by {root / 'shared' / 'scale_any.wasm'}, but not allowed "
        f"for tenant `a` (CYXLA_TENANT or --tenant) by the policy {policy} (allowed: `my_kernel`, `rms_norm`, `trap`); "
        "the policy's operator decides what each tenant may call"), a
    assert a["NATIVE"].startswith("refused") and "tenant_native" in a["NATIVE"], a
    # b: my_kernel is scale_any (3x), no rms_norm, 4 devices, natives allowed
    assert b["DEVICES"] == "4", b
    assert b["MY_KERNEL"] == "ok 0.0 3.0 6.0 9.0", b
    assert b["SCALE_ANY"] == "ok 0.0 2.0 4.0 6.0", b
    assert b["RMS_NORM"].startswith("error ") and "rms_norm" in b["RMS_NORM"], b
    assert "| hint: target `rms_norm` is served by " in b["RMS_NORM"] and "not allowed for tenant `b`" in b["RMS_NORM"], b
    assert b["NATIVE"] == "allowed", b


def test_each_tenant_has_its_limits(site):
    _, policy = site
    r = subprocess.run([str(HOST), "--policy", str(policy), "--tenant", "a", "list"],
                       env=clean_env({}), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "tenant `a`" in r.stdout and "memory 64 MiB" in r.stdout and "call_timeout 5s" in r.stdout, r.stdout
    assert "native handlers from client code: refused" in r.stdout, r.stdout
    r = subprocess.run([str(HOST), "--policy", str(policy), "--tenant", "b", "list"],
                       env=clean_env({}), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "tenant `b`" in r.stdout and "memory 256 MiB" in r.stdout and "pin: `my_kernel`" in r.stdout, r.stdout


def test_a_mapped_user_cannot_pick_another_tenant(site):
    root, policy = site
    mapped = root / "mapped.toml"
    mapped.write_text(policy.read_text() + f'\n[users]\n"{getpass.getuser()}" = "a"\n')
    # the launcher refuses, before running anything
    p = launch(mapped, "b")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 2, out + err
    assert f"user `{getpass.getuser()}` in [users] tenant `a`" in err and "tenant `b`" in err, err
    # and so does the plugin when the variable is set by hand
    env = clean_env({"CYXLA_POLICY": str(mapped), "CYXLA_TENANT": "b", "JAX_PLATFORMS": "cyxla",
                     "CYXLA_PJRT_LIBRARY": str(HOST.with_name("libcyxla_pjrt.so"))})
    r = subprocess.run([str(VENV_PYTHON), "-c", "import jax; jax.devices()"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "cannot be selected" in r.stderr, r.stderr
    # without a tenant asked for, the map decides
    p = launch(mapped, "a", code="import jax; print('DEVICES', len(jax.devices()))")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0 and "DEVICES 2" in out, out + err


def test_settings_beside_the_policy_are_refused(site):
    _, policy = site
    p = launch(policy, "a", code="print('ran')", extra=("--allow", "scale_any"))
    out, err = p.communicate(timeout=120)
    assert p.returncode == 2 and "ran" not in out, out + err
    assert "CYXLA_ALLOW is set, but the policy" in err, err


def test_a_pin_that_does_not_match_is_refused(site):
    root, policy = site
    text = re.sub(r'my_kernel = "[0-9a-f]{64}"', 'my_kernel = "' + "0" * 64 + '"', policy.read_text())
    assert "0" * 64 in text
    wrong = root / "wrong_pin.toml"
    wrong.write_text(text)
    r = subprocess.run([str(HOST), "policy", "check", str(wrong)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "pins `my_kernel` to sha256 000000000000" in r.stdout and "wrong_pin.toml:" in r.stdout, r.stdout
    p = launch(wrong, "b", code="print('ran')")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 2 and "pinned to sha256 000000000000" in err, out + err


def test_policy_check_reports_every_problem(site):
    root, _ = site
    bad = root / "bad.toml"
    bad.write_text('default_tenant = "ghost"\n[tenants.a]\nallow = ["ok", "bad name"]\n'
                   'pins = { t = "abc" }\n[users]\nbob = "nobody"\n')
    r = subprocess.run([str(HOST), "policy", "check", str(bad)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stdout + r.stderr
    errors = [line for line in r.stdout.splitlines() if line.startswith("error: ")]
    assert len(errors) == 4, r.stdout
    for at in ("bad.toml:1:18:", "bad.toml:3:16:", "bad.toml:4:14:", "bad.toml:6:7:"):
        assert any(at in e for e in errors), (at, r.stdout)
    unknown = root / "unknown.toml"
    unknown.write_text("[tenants.a]\ncolour = 1\n")
    r = subprocess.run([str(HOST), "policy", "check", str(unknown)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "unknown.toml at line 2, column 1" in r.stdout and "colour" in r.stdout, r.stdout
    r = subprocess.run([str(HOST), "policy", "check", str(root / "policy.toml")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "ok, 2 tenant(s): a, b" in r.stdout, r.stdout + r.stderr
