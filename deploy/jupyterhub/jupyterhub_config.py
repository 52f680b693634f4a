# JupyterHub for cyxla: one hub, one single-user server per Unix user, kernels
# started under cyxla-host with the machine's tenant policy, and the
# cyxla-metrics service for Prometheus.
# Paths (docs/jupyterhub.md): JupyterHub in the venv /opt/jupyterhub, the
# kernels' environment (the cyxla wheel, JAX, ipykernel) in the venv
# /opt/cyxla, the policy in /etc/cyxla/policy.toml, the kernel spec in
# /usr/local/share/jupyter/kernels/cyxla, the kernels' figures in
# /var/lib/cyxla/metrics (the policy's `metrics`).
c = get_config()  # noqa: F821 (provided by JupyterHub when it loads this file)

venv = "/opt/jupyterhub"
cyxla_host = "/opt/cyxla/bin/cyxla-host"

# Where the hub listens (the proxy's public side) and its own API.
c.JupyterHub.bind_url = "http://127.0.0.1:8000"
c.JupyterHub.hub_ip = "127.0.0.1"

# The proxy: the Python implementation of configurable-http-proxy (PyPI),
# started and stopped by the hub. It waits up to 2 minutes for a user's
# server (its default, 20 s, cuts a kernel websocket short while a busy
# server is still starting the kernel).
c.ConfigurableHTTPProxy.command = [f"{venv}/bin/configurable-http-proxy", "--proxy-timeout", "120000"]

# Each user's server runs as that Unix user (setuid by the hub, which runs as
# root), in their home, with HOME set: their compile cache is ~/.cache/cyxla.
c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
c.Spawner.cmd = [f"{venv}/bin/jupyterhub-singleuser"]
c.Spawner.notebook_dir = "~"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120

# Users log in with their Unix password (PAM, JupyterHub's default
# authenticator); every Unix user with a password may. Narrow it with
# c.Authenticator.allowed_users or c.LocalAuthenticator.allowed_groups, or
# put your site's authenticator here.
c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allow_all = True

# Prometheus's view of every kernel on the machine, per tenant, user and
# target: the hub starts and stops `cyxla-host metrics`, which reads the
# kernels' files in the policy's metrics folder and serves them at
# http://127.0.0.1:9477/metrics for Prometheus to scrape (prometheus.yml). It
# is not behind the hub's proxy: the figures are the operator's, not the
# users'.
c.JupyterHub.services = [
    {
        "name": "cyxla-metrics",
        "command": [
            cyxla_host, "--policy", "/etc/cyxla/policy.toml",
            "metrics", "--folder", "/var/lib/cyxla/metrics", "--listen", "127.0.0.1:9477",
        ],
    }
]

# Stop users' servers with the hub: nothing keeps running after it.
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True
