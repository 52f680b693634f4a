#!/usr/bin/env bash
# Runs the fuzz targets of fuzz/ with libFuzzer on the stable toolchain:
# the targets are built with the coverage instrumentation cargo-fuzz uses
# (LLVM's sancov passes, which stable rustc accepts), without sanitizers.
#
# Usage: scripts/fuzz.sh [RUNS] [TARGET...]   (default: 1000000 runs of each)
# Each target keeps its corpus in target/fuzz/corpus/TARGET; a crash is
# written to target/fuzz/artifacts/TARGET/ and stops the script (exit 1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
runs=${1:-1000000}
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(call_layout limits_file limit_flag guest_module)
fi
host=$(rustc -vV | sed -n 's/^host: //p')
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# --target keeps the flags off build scripts and proc macros.
cargo build --release --manifest-path fuzz/Cargo.toml --bins --target "$host" --target-dir target/fuzz
for t in "${targets[@]}"; do
  corpus=target/fuzz/corpus/$t
  artifacts=target/fuzz/artifacts/$t/
  mkdir -p "$corpus" "$artifacts"
  echo "== $t: $runs runs"
  target/fuzz/"$host"/release/"$t" -runs="$runs" -max_len=4096 -timeout=20 \
    -artifact_prefix="$artifacts" "$corpus" 2>&1 | grep -E '^#[0-9]+.*DONE|^Done|ERROR|panicked' || true
  if compgen -G "$artifacts*" >/dev/null; then
    echo "fuzz: $t found a failing input in $artifacts" >&2
    exit 1
  fi
done
