#!/usr/bin/env bash
# Builds what the README's commands run: the `cyxla-host` program and the
# cyxla PJRT plugin library it loads from beside itself
# (target/debug/libcyxla_pjrt.so), then links .venv/bin/cyxla-host to the
# program, so that an activated venv has `cyxla-host` on its PATH.
# scripts/setup.sh runs it last; extra arguments go to `cargo build`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Whole packages, not `--bin cyxla-host`: that selects the one binary target
# and leaves the plugin library (a cdylib of cyxla-pjrt) unbuilt.
cargo build -p cyxla-host -p cyxla-pjrt "$@"

target="${CARGO_TARGET_DIR:-target}"
for f in cyxla-host libcyxla_pjrt.so; do
  if [[ ! -f "$target/debug/$f" ]]; then
    echo "scripts/build.sh: the build did not produce $target/debug/$f" >&2
    exit 1
  fi
done
if [[ -d .venv/bin ]]; then
  ln -sfn "$(realpath "$target/debug/cyxla-host")" .venv/bin/cyxla-host
fi
