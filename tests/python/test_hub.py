"""A real JupyterHub with two Unix users, each on their tenant's guests.

The deployment in deploy/jupyterhub (hub configuration, kernel spec, tenant
policy) is brought up as an operator would: the hub (root) starts the proxy,
the cyxla-metrics service and, with LocalProcessSpawner, each user's
single-user server as that Unix user; the users log in with the login form;
their servers and kernels are started through the hub's REST API and the
servers' kernel API, and cells run over the kernel websocket as JupyterLab
runs them. Two users are created for the test (random names; removed with
their homes at the end, even on failure): one in a Unix group the policy
maps to tenant `research`, one mapped by name to `student`. The kernels run
in an environment the guide's commands make, with the wheel scripts/wheel.sh
builds (the hub itself runs from the checkout's .venv). The hub's
configuration is the deployment's, with only its authenticator replaced
(the users have no password) and this test's ports and folders. The wheel
is reinstalled under a running kernel, as an upgrade is.

A real Prometheus (Debian's `prometheus`) scrapes the metrics service; the
counts it returns per tenant, user and target, and the audit lines the
kernels wrote, are exactly those of the calls the test made.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import pathlib
import pwd
import re
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import threading
import time
import uuid

import pytest

from support import GUESTS, HOST, ROOT, VENV_PYTHON, clean_env, with_target

DEPLOY = ROOT / "deploy" / "jupyterhub"
GUIDE = (ROOT / "docs" / "jupyterhub.md").read_text()
VENV_BIN = VENV_PYTHON.parent
PASSWORD = "cyxla-demo"
TIMEOUT = 240  # only to catch hangs
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pids_of(user: str) -> list[int]:
    r = subprocess.run(["ps", "-u", user, "-o", "pid="], capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


def open_to_others(path: pathlib.Path, restore: list) -> None:
    """Every folder above `path` searchable by others (as a deployment under
    /opt is); what was changed is put back at the end."""
    for folder in [*reversed(path.parents), path]:
        mode = folder.stat().st_mode
        if not mode & stat.S_IXOTH:
            restore.append((folder, stat.S_IMODE(mode)))
            folder.chmod(stat.S_IMODE(mode) | stat.S_IXOTH)


# --------------------------------------------------------------------------
# The kernel websocket, as JupyterLab speaks it (jupyter_client messages)
# --------------------------------------------------------------------------


class Kernel:
    def __init__(self, base: str, user: str, token: str, kernel_id: str):
        import websocket

        url = f"{base.replace('http', 'ws', 1)}/user/{user}/api/kernels/{kernel_id}/channels"
        self.ws = websocket.create_connection(url, header=[f"Authorization: token {token}"],
                                              timeout=TIMEOUT)
        self.session = uuid.uuid4().hex
        self.lock = threading.Lock()

    def run(self, code: str) -> tuple[str, dict | None]:
        """Runs a cell: its stdout, and its error (`ename`, `evalue`) or None.

        What the cell wrote to stderr (cyxla's warnings, e.g. a reload's) is kept
        apart in `self.stderr`, so a result compared whole is stdout alone."""
        msg_id = uuid.uuid4().hex
        self.ws.send(json.dumps({
            "header": {"msg_id": msg_id, "username": "test", "session": self.session,
                       "msg_type": "execute_request", "version": "5.3",
                       "date": datetime.datetime.now(datetime.timezone.utc).isoformat()},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True,
                        "user_expressions": {}, "allow_stdin": False, "stop_on_error": True},
        }))
        out, err, error, replied, idle = [], [], None, False, False
        deadline = time.monotonic() + TIMEOUT
        while not (replied and idle):
            assert time.monotonic() < deadline, f"cell hung:\n{code}\n{''.join(out)}"
            msg = json.loads(self.ws.recv())
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                (err if content["name"] == "stderr" else out).append(content["text"])
            elif kind == "error":
                error = {"ename": content["ename"], "evalue": content["evalue"]}
            elif kind == "execute_reply":
                replied = True
            elif kind == "status" and content["execution_state"] == "idle":
                idle = True
        self.stderr = "".join(err)
        return "".join(out), error

    def ok(self, code: str) -> str:
        out, error = self.run(code)
        assert error is None, f"cell failed: {error}\n{code}\n{out}"
        return out


SETUP = """
import numpy as np
import jax, jax.numpy as jnp
x = np.arange(16, dtype=np.float32)

def raw(target, **attrs):
    return np.asarray(jax.jit(lambda x: jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(x.shape, x.dtype))(x, **attrs))(x))

def call(target, **attrs):
    try:
        return "ok " + " ".join(str(v) for v in raw(target, **attrs)[:4].tolist())
    except Exception as e:
        hints = [line for line in str(e).splitlines() if line.startswith("hint: ")]
        return "error " + str(e).splitlines()[0][:400] + "".join(" | " + h for h in hints)

def rms_ok():
    y = raw("rms_norm", eps=np.float32(1e-5))
    return bool(np.allclose(y, x / np.sqrt(np.mean(x * x) + 1e-5), rtol=1e-5))

print("CYXLA DEVICES", len(jax.devices("cyxla")), jax.devices()[0] in jax.devices("cyxla"))
"""


# --------------------------------------------------------------------------
# The deployment
# --------------------------------------------------------------------------


def wait_ready(proc: subprocess.Popen, url: str, log: pathlib.Path, deadline: float) -> None:
    """Until `url` answers, while `proc` runs (else its log is the failure)."""
    import requests

    while True:
        assert proc.poll() is None, log.read_text()
        try:
            if requests.get(url, timeout=5).ok:
                return
        except requests.ConnectionError:
            pass
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.5)


@pytest.fixture(scope="module")
def hub(wheel):
    assert os.geteuid() == 0, "test_hub creates Unix users and runs JupyterHub as root (as CI does)"
    assert os.access(PROMETHEUS, os.X_OK), (
        "test_hub scrapes the metrics with Prometheus, which is not installed: apt install prometheus "
        "(scripts/setup.sh does)")

    suffix = secrets.token_hex(3)
    alice, bob, staff = f"alice-{suffix}", f"bob-{suffix}", f"staff-{suffix}"
    created: list[str] = []
    groups: list[str] = []
    restore: list = []
    prefix = pathlib.Path(tempfile.mkdtemp(prefix="cyxla-hub-", dir="/tmp"))
    hub_proc = prometheus = None
    try:
        prefix.chmod(0o755)
        subprocess.run(["groupadd", staff], check=True)
        groups.append(staff)
        for user, extra in ((alice, ["--groups", staff]), (bob, [])):
            subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", *extra, user], check=True)
            created.append(user)
        # the checkout and the Python the venv runs on (e.g. a pyenv under
        # root's home): searchable by the users, as under /opt
        for path in (ROOT, VENV_PYTHON.resolve().parents[1]):
            open_to_others(path, restore)

        # docs/jupyterhub.md's install commands, with this test's folders for
        # /etc/cyxla, /srv/cyxla, /var/lib/cyxla, /var/log/cyxla,
        # /usr/local/share/jupyter and the kernels' environment /opt/cyxla,
        # the checkout's .venv for the hub's /opt/jupyterhub, the wheel
        # scripts/wheel.sh built, the Python the checkout's venv was made
        # from, and the JAX and XLA plugin versions the checkout's venv has
        srv, jupyter, etc = prefix / "srv", prefix / "share" / "jupyter", prefix / "etc"
        kernel_env = prefix / "opt-cyxla"
        metrics_port, prometheus_port = free_port(), free_port()
        paths = {"--prefix /usr/local": f"--prefix {prefix}", "/etc/cyxla": str(etc), "/srv/cyxla": str(srv), "/usr/local/share/jupyter": str(jupyter),
                 "/opt/cyxla": str(kernel_env), "/opt/jupyterhub": str(VENV_BIN.parent), "/var/lib/cyxla": str(prefix / "var-lib"),
                 "/var/log/cyxla": str(prefix / "var-log"), "127.0.0.1:9477": f"127.0.0.1:{metrics_port}"}
        install = re.findall(r"```sh\n(.*?)```", GUIDE, re.S)[0]
        for old, new in paths.items():
            install = install.replace(old, new)
        pip = f'"{wheel.name}[pjrt]" ipykernel\n'
        assert pip in install and "python3 -m venv " in install, install
        install = install.replace(pip, f'"{wheel}[pjrt]" ipykernel jax==0.10.2 lammps-jax-pjrt-cpu==0.11.2\n')
        install = install.replace("python3 -m venv ", f"{VENV_PYTHON.resolve()} -m venv ")
        r = subprocess.run(["bash", "-euxc", install], cwd=ROOT, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, install + r.stdout + r.stderr
        # the hub's environment is what the guide says to install
        requirements = (ROOT / "scripts" / "requirements.txt").read_text().split()
        for pin in re.search(r"`(jupyterhub==.*?)`", GUIDE).group(1).split():
            assert pin in requirements, (pin, "scripts/requirements.txt")
        policy = etc / "policy.toml"
        text = policy.read_text()
        for old, new in paths.items():
            text = text.replace(old, new)
        # alice is research through her Unix group, bob student by name
        text = re.sub(r"^alice = .*\n", "", text, flags=re.M)
        text = re.sub(r"^bob = ", f'"{bob}" = ', text, flags=re.M)
        text = re.sub(r"^staff = ", f'"{staff}" = ', text, flags=re.M)
        # and may call the test's misbehaving guests (trap.wasm serves `trap`
        # and `spin`, a handler that loops forever)
        allow = 'allow = ["scale_*", "my_kernel", "shared_kernel"]'
        assert allow in text, text
        text = text.replace(allow, allow.replace("]", ', "trap", "spin"]'))
        assert f'"{staff}" = "research"' in text and f'"{bob}" = "student"' in text and "alice" not in text, text
        policy.write_text(text)
        # `cyxla-host kernelspec install` wrote the deployment's kernel spec
        installed = json.loads((jupyter / "kernels" / "cyxla" / "kernel.json").read_text())
        text = (DEPLOY / "kernels" / "cyxla" / "kernel.json").read_text()
        for old, new in paths.items():
            text = text.replace(old, new)
        assert installed == json.loads(text), installed

        # guests: shared, and one module per tenant serving `my_kernel`
        shared, research, student = srv / "shared", srv / "research", srv / "student"
        # trap.wasm serves `trap` and `spin` (a handler that loops forever)
        for name in ("rms_norm.wasm", "trap.wasm"):
            shutil.copy(GUESTS / name, shared / name)
        copy16, scale = (GUESTS / "copy16.wasm").read_bytes(), (GUESTS / "scale_any.wasm").read_bytes()
        (shared / "shared_k.wasm").write_bytes(with_target(copy16, "shared_kernel", "copy16"))
        (research / "mine.wasm").write_bytes(with_target(copy16, "my_kernel", "copy16"))
        (student / "mine.wasm").write_bytes(with_target(scale, "my_kernel", "scale_any"))

        for module in srv.rglob("*.wasm"):
            module.chmod(0o644)
        check = subprocess.run([str(HOST), "policy", "check", str(policy)], capture_output=True, text=True,
                               timeout=TIMEOUT)
        assert check.returncode == 0, check.stdout + check.stderr

        # the hub: the deployment's configuration, on free ports, in `prefix`
        port, hub_port, api_port = free_port(), free_port(), free_port()
        token = secrets.token_hex(16)
        state = prefix / "hub"
        state.mkdir(mode=0o700)
        (state / "jupyterhub_config.py").write_text(f"""
c = get_config()
load_subconfig({str(DEPLOY / 'jupyterhub_config.py')!r})
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.command = [{str(VENV_BIN / 'configurable-http-proxy')!r}, "--proxy-timeout", "120000"]
c.Spawner.cmd = [{str(VENV_BIN / 'jupyterhub-singleuser')!r}]
c.Spawner.environment = {{"JUPYTER_PATH": {str(jupyter)!r}}}
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {PASSWORD!r}
c.Authenticator.allow_all = False
c.Authenticator.allowed_users = {{{alice!r}, {bob!r}}}
c.JupyterHub.db_url = "sqlite:///{state}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{state}/cookie_secret"
[metrics] = c.JupyterHub.services
assert metrics["name"] == "cyxla-metrics", metrics
for old, new in {paths!r}.items():
    metrics["command"] = [arg.replace(old, new) for arg in metrics["command"]]
c.JupyterHub.services = [metrics, {{"name": "cyxla-test", "api_token": {token!r}}}]
c.JupyterHub.load_roles = [{{"name": "cyxla-test", "services": ["cyxla-test"],
                            "scopes": ["admin:users", "admin:servers", "tokens", "access:servers"]}}]
""")
        log = open(state / "hub.log", "w")
        env = clean_env({"PATH": f"{VENV_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"})
        # the guide's command, with this test's configuration (the deployment's, and the above)
        start = re.findall(r"```sh\n(.*?)```", GUIDE, re.S)[1].replace("/opt/jupyterhub", str(VENV_BIN.parent)).split()
        assert start[-2:] == ["-f", "deploy/jupyterhub/jupyterhub_config.py"], start
        hub_proc = subprocess.Popen([*start[:-1], str(state / "jupyterhub_config.py")],
                                    cwd=state, env=env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + TIMEOUT
        wait_ready(hub_proc, f"{base}/hub/api/", state / "hub.log", deadline)

        # Prometheus, with the deployment's scrape job, every second
        scrape = (DEPLOY / "prometheus.yml").read_text().replace("127.0.0.1:9477", f"127.0.0.1:{metrics_port}")
        scrape = scrape.replace("scrape_interval: 15s", "scrape_interval: 1s")
        (state / "prometheus.yml").write_text(scrape)
        prometheus = subprocess.Popen(
            [PROMETHEUS, f"--config.file={state / 'prometheus.yml'}", f"--storage.tsdb.path={state / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{prometheus_port}"],
            cwd=state, stdout=open(state / "prometheus.log", "w"), stderr=subprocess.STDOUT)
        prom = f"http://127.0.0.1:{prometheus_port}"
        wait_ready(prometheus, f"{prom}/-/ready", state / "prometheus.log", deadline)

        yield {"base": base, "token": token, "alice": alice, "bob": bob, "shared": shared, "policy": policy,
               "log": state / "hub.log", "proc": hub_proc, "guests": srv, "api_port": api_port,
               "prometheus": prom, "audit": prefix / "var-log" / "audit", "metrics": prefix / "var-lib" / "metrics",
               "metrics_port": metrics_port, "kernel_env": kernel_env, "wheel": wheel}
    finally:
        if prometheus is not None:
            prometheus.kill()
            prometheus.wait()
        if hub_proc is not None and hub_proc.poll() is None:
            hub_proc.send_signal(signal.SIGTERM)
            try:
                hub_proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                hub_proc.kill()
                hub_proc.wait()
        for user in created:
            for pid in pids_of(user):  # only if the hub left any (the test asserts it did not)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            subprocess.run(["userdel", "--remove", user], capture_output=True)
        for group in groups:
            subprocess.run(["groupdel", group], capture_output=True)
        for folder, mode in reversed(restore):
            folder.chmod(mode)
        shutil.rmtree(prefix, ignore_errors=True)


def prometheus_query(hub, query: str) -> dict[tuple, float]:
    """What Prometheus's HTTP API answers to `query`, by the values of the
    labels tenant, user, target and kind (those each series has)."""
    import requests

    r = requests.get(f"{hub['prometheus']}/api/v1/query", params={"query": query}, timeout=TIMEOUT)
    assert r.ok, f"{query}: {r.status_code} {r.text}"
    return {tuple(series["metric"][k] for k in ("tenant", "user", "target", "kind") if k in series["metric"]):
            float(series["value"][1]) for series in r.json()["data"]["result"]}


def settled(hub, query: str, expected: dict) -> None:
    """`query` answers `expected`, once the kernels' figures (rewritten every
    2 s) have been scraped (every second)."""
    deadline = time.monotonic() + 60
    while (got := prometheus_query(hub, query)) != expected and time.monotonic() < deadline:
        time.sleep(1)
    metrics = subprocess.run([str(HOST), "metrics", "--folder", str(hub["metrics"])], capture_output=True,
                             text=True).stdout if got != expected else ""
    assert got == expected, f"{query}: Prometheus says {got}, expected {expected}\n{metrics}"


def api(hub, method: str, path: str, **kw):
    import requests

    r = requests.request(method, f"{hub['base']}/hub/api{path}",
                         headers={"Authorization": f"token {hub['token']}"}, timeout=TIMEOUT, **kw)
    assert r.status_code < 400, f"{method} {path}: {r.status_code} {r.text}\n{hub['log'].read_text()[-6000:]}"
    return r.json() if r.text else None


def log_in(hub, user: str) -> None:
    """The login form, as a browser submits it."""
    import requests

    s = requests.Session()
    s.get(f"{hub['base']}/hub/login", timeout=TIMEOUT).raise_for_status()
    r = s.post(f"{hub['base']}/hub/login", timeout=TIMEOUT, allow_redirects=False,
               data={"username": user, "password": PASSWORD, "_xsrf": s.cookies.get("_xsrf", "")})
    assert r.status_code == 302, f"{user} could not log in: {r.status_code} {r.text[:500]}"
    bad = s.post(f"{hub['base']}/hub/login", timeout=TIMEOUT, allow_redirects=False,
                 data={"username": user, "password": "wrong", "_xsrf": s.cookies.get("_xsrf", "")})
    assert bad.status_code != 302


def start_server(hub, user: str) -> str:
    """Starts `user`'s server; a token of theirs for it."""
    api(hub, "POST", f"/users/{user}/server")
    deadline = time.monotonic() + TIMEOUT
    while not (api(hub, "GET", f"/users/{user}")["servers"].get("", {}).get("ready")):
        assert time.monotonic() < deadline, hub["log"].read_text()
        time.sleep(0.5)
    return api(hub, "POST", f"/users/{user}/tokens", json={"note": "cyxla test", "expires_in": 3600})["token"]


def start_kernel(hub, user: str, token: str) -> Kernel:
    import requests

    r = requests.post(f"{hub['base']}/user/{user}/api/kernels", json={"name": "cyxla"},
                      headers={"Authorization": f"token {token}"}, timeout=TIMEOUT)
    assert r.status_code == 201, r.text
    return Kernel(hub["base"], user, token, r.json()["id"])


def test_two_users_on_their_tenants(hub):
    alice, bob = hub["alice"], hub["bob"]
    for user in (alice, bob):
        log_in(hub, user)
    tokens = {user: start_server(hub, user) for user in (alice, bob)}
    a, b = (start_kernel(hub, u, tokens[u]) for u in (alice, bob))

    # the policy cannot be replaced from a kernel's environment: a kernel that
    # drops CYXLA_POLICY and allows everything before importing jax
    escape = start_kernel(hub, bob, tokens[bob])
    out, error = escape.run(
        "import os\n"
        "os.environ.pop('CYXLA_POLICY', None)\n"
        f"os.environ.update(CYXLA_ALLOW='*', CYXLA_GUESTS={str(GUESTS)!r})\n" + SETUP
        + "print('RMS', call('rms_norm', eps=np.float32(1e-5)))\n")
    assert "RMS ok" not in out, out
    said = out + (error["evalue"] if error else "")
    assert f"CYXLA_POLICY was `{hub['policy']}` when this process started and is now unset" in said, said
    escape.ws.close()

    for k in (a, b):  # the kernels' default devices are cyxla's
        assert re.search(r"CYXLA DEVICES [1-9]\d* True", k.ok(SETUP))

    # a target research allows and student does not
    assert a.ok("print('RMS', rms_ok())").strip() == "RMS True"
    out = b.ok("print('RMS', call('rms_norm', eps=np.float32(1e-5)))")
    # not registered for student: XLA's compile error (cyxla registers only allowed targets),
    # and why, in the policy's words: the module is in the shared folder, the policy says no
    assert out.startswith("RMS error") and "No FFI handler registered for rms_norm" in out, out
    assert out.strip().endswith(
        f"| hint: target `rms_norm` is served by {hub['shared'] / 'rms_norm.wasm'}, but not allowed for "
        f"tenant `student` (user `{bob}` in [users]) by the policy {hub['policy']} (allowed: `my_kernel`, "
        "`shared_kernel`, `spin`, `trap`, `scale_*`); the policy's operator decides what each tenant may call"), out

    # the same target name, each tenant's own module
    assert a.ok("print(call('my_kernel', factor=3.0))").strip() == "ok 0.0 1.0 2.0 3.0"
    assert b.ok("print(call('my_kernel', factor=3.0))").strip() == "ok 0.0 3.0 6.0 9.0"

    # bob's trapping and looping guests; alice's calls run meanwhile
    alice_out: dict = {}

    def alice_keeps_calling():
        alice_out["result"] = a.run(
            "import time\nt0 = time.time(); n = 0\n"
            "while time.time() - t0 < 8:\n    assert rms_ok(); n += 1\n"
            "print('ALICE', n, t0, time.time())")

    thread = threading.Thread(target=alice_keeps_calling)
    thread.start()
    time.sleep(2)
    t0 = time.time()
    out, error = b.run("raw('trap')")
    assert error is not None and "target `trap` (guest trap.wasm)" in error["evalue"], (out, error)
    out, error = b.run("raw('spin')")
    t1 = time.time()
    assert error is not None and "spin" in error["evalue"], (out, error)
    assert b.ok("print(call('my_kernel', factor=2.0))").strip() == "ok 0.0 2.0 4.0 6.0"
    thread.join(TIMEOUT)
    out, error = alice_out["result"]
    assert error is None, (out, error)
    _, n, start, end = out.split()
    assert int(n) > 0 and float(start) < t0 and float(end) > t1, (out, t0, t1)

    # a new version in the shared folder serves both kernels' next calls
    assert a.ok("print(call('shared_kernel', factor=3.0))").strip() == "ok 0.0 1.0 2.0 3.0"
    assert b.ok("print(call('shared_kernel', factor=3.0))").strip() == "ok 0.0 1.0 2.0 3.0"
    new = hub["shared"] / "shared_k.wasm.new"
    new.write_bytes(with_target((GUESTS / "scale_any.wasm").read_bytes(), "shared_kernel", "scale_any"))
    new.chmod(0o644)
    new.rename(hub["shared"] / "shared_k.wasm")
    poll = ("import time\nt0 = time.time(); calls = 1\n"
            "while (r := call('shared_kernel', factor=3.0)) == 'ok 0.0 1.0 2.0 3.0' and time.time() - t0 < 60:\n"
            "    time.sleep(0.2); calls += 1\nprint(r, '|', calls)")
    polled = {}
    for user, k in ((alice, a), (bob, b)):
        result, calls = k.ok(poll).strip().split(" | ")
        assert result == "ok 0.0 3.0 6.0 9.0", (user, result)
        polled[user] = int(calls)

    # each user's compile cache: in their home, theirs, 0700
    for user in (alice, bob):
        entry = pwd.getpwnam(user)
        cache = pathlib.Path(entry.pw_dir) / ".cache" / "cyxla"
        st = cache.stat()
        assert st.st_uid == entry.pw_uid and stat.S_IMODE(st.st_mode) == 0o700, (cache, oct(st.st_mode))
        assert any(cache.iterdir()), f"{cache} is empty"

    # what the operator sees: Prometheus's figures are exactly the calls above
    r, s = "research", "student"
    calls = {(r, alice, "rms_norm"): 1 + int(n), (r, alice, "my_kernel"): 1,
             (r, alice, "shared_kernel"): 1 + polled[alice], (s, bob, "my_kernel"): 2, (s, bob, "trap"): 1,
             (s, bob, "spin"): 1, (s, bob, "shared_kernel"): 1 + polled[bob]}
    settled(hub, "cyxla_calls_total > 0", calls)
    settled(hub, "cyxla_call_failures_total > 0", {(s, bob, "trap", "trap"): 1, (s, bob, "spin", "deadline"): 1})
    settled(hub, "cyxla_refused_targets_total", {(s, bob, "rms_norm"): 1})
    settled(hub, "sum by (tenant) (cyxla_calls_total)",
            {(r,): sum(v for k, v in calls.items() if k[0] == r), (s,): sum(v for k, v in calls.items() if k[0] == s)})
    settled(hub, "sum by (user) (cyxla_calls_total)",
            {(alice,): sum(v for k, v in calls.items() if k[1] == alice),
             (bob,): sum(v for k, v in calls.items() if k[1] == bob)})
    settled(hub, 'sum by (tenant) (cyxla_call_failures_total{kind="deadline"})', {(r,): 0, (s,): 1})
    settled(hub, "cyxla_guests_reloaded_total >= 1", {(r, alice): 1, (s, bob): 1})
    timed = prometheus_query(hub, 'cyxla_call_duration_seconds_count{target="rms_norm"}')
    assert timed[(r, alice, "rms_norm")] >= 1, timed
    settled(hub, "cyxla_metrics_files_skipped", {(): 0})

    # bob forges figures for research in the metrics folder: left out, and
    # research's figures do not move
    forged = {"pid": 1, "tenant": r, "targets": [{"target": "rms_norm", "calls": 10**6}], "events": {}}
    subprocess.run([str(hub["kernel_env"] / "bin" / "python"), "-c",
                    f"open({str(hub['metrics'] / 'forged.json')!r}, 'w').write({json.dumps(forged)!r})"],
                   user=bob, group=bob, extra_groups=[], cwd="/", check=True, timeout=TIMEOUT)
    settled(hub, "cyxla_metrics_files_skipped", {(): 1})
    settled(hub, "cyxla_calls_total > 0", calls)
    (hub["metrics"] / "forged.json").unlink()

    # the audit folder: exactly these lines, each in its user's own file
    entries = []
    for folder in (hub["audit"], hub["metrics"]):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o1733, folder
    for file in [*hub["audit"].glob("*.jsonl"), *hub["metrics"].glob("*.json")]:
        st = file.stat()
        owner = pwd.getpwuid(st.st_uid).pw_name
        assert owner in (alice, bob) and stat.S_IMODE(st.st_mode) == 0o600, (file, owner, oct(st.st_mode))
        if file.suffix == ".jsonl":
            for line in file.read_text().splitlines():
                entry = json.loads(line)
                assert entry["user"] == owner and entry["pid"] > 0, (file, entry)
                entries.append(entry)
    got = sorted((e["user"], e["tenant"], e["event"], e["kind"], e["target"] or "",
                  pathlib.Path(e["guest"] or "").name) for e in entries)
    assert got == sorted([(bob, s, "refused_target", "refused", "rms_norm", ""),
                          (bob, s, "failed_call", "trap", "trap", "trap.wasm"),
                          (bob, s, "failed_call", "deadline", "spin", "trap.wasm"),
                          (alice, r, "reload", "reloaded", "", "shared_k.wasm"),
                          (bob, s, "reload", "reloaded", "", "shared_k.wasm")]), entries
    sha = {name: hashlib.sha256((hub["shared"] / name).read_bytes()).hexdigest()
           for name in ("trap.wasm", "shared_k.wasm")}
    for e in entries:
        assert e["sha256"] == (e["guest"] and sha[pathlib.Path(e["guest"]).name]), e
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", e["time"]), e
    refused = next(e for e in entries if e["event"] == "refused_target")
    assert "not allowed for tenant `student`" in refused["message"], refused
    # the guide's example lines are lines of this log
    example = re.search(r"## Metrics and the audit log.*?```text\n(.*?)```", GUIDE, re.S).group(1)
    for line in example.splitlines():
        assert json.loads(line).keys() == entries[0].keys(), line

    # an upgrade: the wheel installed anew under alice's running kernel. It
    # keeps the library it loaded (deleted now) and its next call works; a
    # new kernel loads the new one.
    def plugin_maps(kernel: Kernel) -> list[str]:
        pid = int(kernel.ok("import os; print(os.getpid())"))
        return [line for line in pathlib.Path(f"/proc/{pid}/maps").read_text().splitlines()
                if "libcyxla_pjrt.so" in line]

    assert plugin_maps(a) and not any("(deleted)" in m for m in plugin_maps(a)), plugin_maps(a)
    r = subprocess.run([str(hub["kernel_env"] / "bin" / "pip"), "install", "-q", "--force-reinstall", "--no-deps",
                        str(hub["wheel"])], capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert all("(deleted)" in m for m in plugin_maps(a)), plugin_maps(a)
    assert a.ok("print('RMS', rms_ok())").strip() == "RMS True"
    new = start_kernel(hub, alice, tokens[alice])
    assert re.search(r"CYXLA DEVICES [1-9]\d* True", new.ok(SETUP))
    assert new.ok("print('RMS', rms_ok())").strip() == "RMS True"
    assert plugin_maps(new) and not any("(deleted)" in m for m in plugin_maps(new)), plugin_maps(new)

    # the hub stops both servers and the proxy with it; nothing is left
    for k in (a, b, new):
        k.ws.close()
    proc = hub["proc"]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=TIMEOUT) == 0, hub["log"].read_text()[-4000:]
    deadline = time.monotonic() + 30
    while any(pids_of(u) for u in (alice, bob)) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = {u: pids_of(u) for u in (alice, bob)}
    assert not any(left.values()), left
    ps = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    proxies = [line for line in ps.splitlines()
               if "configurable-http-proxy" in line and str(hub["api_port"]) in line]
    assert not proxies, proxies
