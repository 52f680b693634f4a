#!/usr/bin/env bash
# Runs every test of cyxla-host against the real PJRT plugins, JAX-lowered
# programs, wasmtime and OpenBLAS: the Rust tests, then the Python tests
# (JAX on platform `cyxla` beside JAX's own CPU backend, the launcher, pypjrt,
# Jupyter kernels). Sets the machine up first (idempotent).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/setup.sh
# cdylibs used by the tests (the fake plugin, the cyxla PJRT plugin) are
# built by a plain build.
cargo build --workspace --all-targets
cargo test --workspace "$@"
.venv/bin/python -m pytest tests/python -q
