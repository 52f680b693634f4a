#!/usr/bin/env bash
# cargo-zigbuild (from .venv, scripts/setup.sh) with the flags every build of
# a released binary takes, so that the wheels' builds and the tests built
# beside them share one set of compiled crates. Passes its arguments on:
#
#   scripts/zigbuild.sh zigbuild --release -p cyxla-host --target x86_64-unknown-linux-gnu.2.28
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="$root/.venv"
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
  PATH="$venv/bin:$PATH" exec "$venv/bin/cargo-zigbuild" "$@"
