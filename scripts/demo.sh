#!/usr/bin/env bash
# The main job on the bundled default: JAX-lowered programs whose custom
# calls run in wasm guests (and natively on OpenBLAS for LAPACK), on the
# default XLA CPU PJRT plugin.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/setup.sh
cargo build --quiet --bin cyxla-host
bin=target/debug/cyxla-host
g=tests/programs/guests
echo "== the bundled guests: what each .wasm serves (nothing is allowed by default)"
"$bin" list
echo
echo "== jax.grad through a custom_vjp whose forward and backward custom calls"
echo "   (rms_norm_fwd, rms_norm_bwd) run sandboxed in guests/out/rms_norm.wasm"
"$bin" --allow rms_norm_fwd --allow rms_norm_bwd run "$g/rms_norm_grad_3x16.mlirbc" \
  --input "$g/rms_norm_grad_3x16.in0.npy" --input "$g/rms_norm_grad_3x16.in1.npy"
echo
echo "== two guests in one program: scale_any(rms_norm(x), factor=3)"
"$bin" --allow rms_norm --allow scale_any run "$g/rms_norm_then_scale.mlirbc" \
  --input "$g/rms_norm_then_scale.in0.npy"
echo
echo "== jnp.linalg.solve, det and inv of a 4x4 matrix, lowered by JAX for CPU (examples/gen_examples.py)"
echo "   The bare XLA plugin has no lapack_dgetrf_ffi / lapack_dtrsm_ffi; cyxla-host runs them natively."
echo "   JAX's own results: x = [1, 2, 3, 4], det = 209, inv = the inverse (examples/linalg.out*.npy)"
"$bin" run examples/linalg.mlir --input examples/linalg.a.npy --input examples/linalg.b.npy
