#!/usr/bin/env bash
# The hot loop of a C++ kernel as a guest and natively, side by side in
# machine code, and what llvm-mca predicts of each on four server cores
# (icelake-server, sapphirerapids, znver4, znver5): machine-independent
# evidence for the kernels' guest / native ratio (goal P3), which differs
# between microarchitectures and cannot be timed on a machine one does not
# have.
#
#   scripts/mca.sh [SOURCE.cc]      (default: benches/kernels/matmul.cc)
#
# Builds SOURCE with guests/cpp/build.sh both ways (the SDK's wasm build,
# and --native: clang++ -O3, the default x86-64 target), compiles the guest
# as the sandbox does (benches/examples/precompile.rs: the engine's settings
# and the patched code generator), finds in each the innermost loop that
# multiplies vectors (`mulps`), and runs llvm-mca 19 on both loops. The
# ratio is per multiply instruction (the same work per multiply: four f32),
# guest / native. llvm-mca models a loop's steady state from the core's
# scheduling tables: not caches, branch prediction or the front end.
#
# Needs scripts/setup.sh (clang-19, llvm-19 for llvm-mca-19, binaryen).
set -euo pipefail
cd "$(dirname "$0")/.."
source="${1:-benches/kernels/matmul.cc}"
if [[ ! -f $source ]]; then
    echo "scripts/mca.sh: no such source file: $source" >&2
    exit 2
fi
if ! command -v llvm-mca-19 >/dev/null 2>&1; then
    echo "scripts/mca.sh: llvm-mca-19 not found: apt install llvm-19 (scripts/setup.sh does)" >&2
    exit 1
fi
target_dir="$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
out="$target_dir/mca"
stem="$(basename "${source%.*}")"
bash guests/cpp/build.sh --out "$out/wasm" "$source" >&2
env -u CYXLA_NATIVE_FLAGS bash guests/cpp/build.sh --native --out "$out/native" "$source" >&2
# Built as the wheel's binaries are, sharing their compiled crates.
precompile="$(scripts/release_build.sh --example precompile)"
"$precompile" "$out/wasm/${stem}_cpp.wasm" "$out/${stem}.cwasm"
python3 scripts/mca.py "$out/${stem}.cwasm" "$out/native/lib${stem}_cpp.so"
