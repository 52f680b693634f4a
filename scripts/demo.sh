#!/usr/bin/env bash
# The main job on the bundled default: plain JAX code on platform `cyxla`,
# run under the launcher. Its custom calls run in wasm guests (sandboxed) and
# jnp.linalg runs natively on OpenBLAS, on the default XLA CPU PJRT plugin.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# The set-up builds the program and its plugin library (scripts/build.sh).
scripts/setup.sh
bin=.venv/bin/cyxla-host
echo "== the bundled guests: what each .wasm serves (nothing is allowed by default)"
"$bin" list
echo
echo "== examples/jax_on_cyxla.py, unchanged JAX code, under the launcher:"
echo "   cyxla-host --allow rms_norm --allow rms_norm_fwd --allow rms_norm_bwd --allow trap -- python examples/jax_on_cyxla.py"
"$bin" --allow rms_norm --allow rms_norm_fwd --allow rms_norm_bwd --allow trap \
  -- .venv/bin/python examples/jax_on_cyxla.py
echo
echo "== the same guests for a program lowered ahead of time (cyxla-host run):"
echo "   two guests in one program, scale_any(rms_norm(x), factor=3)"
g=tests/programs/guests
"$bin" --allow rms_norm --allow scale_any run "$g/rms_norm_then_scale.mlirbc" \
  --input "$g/rms_norm_then_scale.in0.npy"
