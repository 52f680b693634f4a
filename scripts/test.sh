#!/usr/bin/env bash
# Runs every test of cyxla-host against the real PJRT plugins, JAX-lowered
# programs, wasmtime and OpenBLAS: the Rust tests, then the Python tests
# (JAX on platform `cyxla` beside JAX's own CPU backend, the launcher, pypjrt,
# Jupyter kernels); and, beside them, Linux on 64-bit Arm under qemu-aarch64
# emulation (scripts/aarch64.sh: the sandbox's suites and the aarch64
# wheel's JAX smoke test). Sets the machine up first (idempotent).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/setup.sh --aarch64

# aarch64 runs in the background, in a target folder of its own, its two
# builds at the lowest CPU priority: they take the time the x86-64 builds
# and tests leave idle (the Python tests mostly run one process at a time)
# rather than adding their own to theirs. Its output goes to
# target/aarch64.log, its summary comes last. Its own process group, so
# that it ends with this script however this script ends.
aarch64_log=target/aarch64.log
mkdir -p target
set -m
AARCH64_BUILD_NICE=19 scripts/aarch64.sh </dev/null >"$aarch64_log" 2>&1 &
aarch64_pid=$!
set +m
trap 'kill -TERM -- -"$aarch64_pid" 2>/dev/null || true' EXIT

# cdylibs used by the tests (the fake plugin, the cyxla PJRT plugin) are
# built by a plain build.
cargo build --workspace --all-targets
cargo test --workspace "$@"
# The 20 slowest tests come last, with their times: CI has a time budget.
.venv/bin/python -m pytest tests/python -q --durations=20

echo "scripts/test.sh: the x86-64 tests passed; waiting for scripts/aarch64.sh ($aarch64_log)" >&2
started=$SECONDS
status=0
wait "$aarch64_pid" || status=$?
trap - EXIT
echo "scripts/test.sh: waited $((SECONDS - started)) s for scripts/aarch64.sh" >&2
if ((status)); then
  tail -n 200 "$aarch64_log"
  echo "scripts/test.sh: scripts/aarch64.sh failed (exit $status): the whole output is in $aarch64_log" >&2
  exit "$status"
fi
sed -n '/^aarch64 (qemu-aarch64/,$p' "$aarch64_log"
