#!/usr/bin/env bash
# The main job on the bundled default: a JAX-lowered program whose custom
# calls are served by cyxla-host, run on the default XLA CPU PJRT plugin.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/setup.sh
cargo build --quiet --bin cyxla-host -p cyxla-tests
bin=target/debug/cyxla-host
handlers=$(ls -t target/debug/build/cyxla-tests-*/out/libcyxla_test_handlers.so | head -1)
p=tests/programs
echo "== a JAX-lowered program whose custom call cyxla_test_attrs runs a native handler"
"$bin" run "$p/attrs.mlirbc" --input "$p/attrs.in0.npy" \
  --native "cyxla_test_attrs=$handlers:cyxla_test_attrs"
