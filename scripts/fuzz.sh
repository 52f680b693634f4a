#!/usr/bin/env bash
# Runs the fuzz targets of fuzz/ with libFuzzer on the stable toolchain:
# the targets are built with the coverage instrumentation cargo-fuzz uses
# (LLVM's sancov passes, which stable rustc accepts; scripts/fuzz-rustc.sh
# adds them), without sanitizers.
#
# Usage: scripts/fuzz.sh [RUNS] [TARGET...]   (default: 1000000 runs of each)
# Each target keeps its corpus in target/fuzz/corpus/TARGET and libFuzzer's
# whole output in target/fuzz/logs/TARGET.log (the summary lines are
# printed); a crash is written to target/fuzz/artifacts/TARGET/ and stops
# the script (exit 1). FUZZ_JOBS=N runs N processes (libFuzzer's -fork=N),
# RUNS in all.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
runs=${1:-1000000}
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(call_layout limits_file limit_flag guest_module unrolled_loops differential)
fi
host=$(rustc -vV | sed -n 's/^host: //p')
# The coverage passes are added per crate by scripts/fuzz-rustc.sh: only
# the crates a guest module reaches or shapes get them (Cranelift's code
# generator, uninstrumented, compiles each generated module several times
# faster).
export RUSTFLAGS="--cfg fuzzing -Cdebug-assertions -Coverflow-checks"
export RUSTC_WRAPPER="$root/scripts/fuzz-rustc.sh"
# --target keeps the flags off build scripts and proc macros.
cargo build --release --manifest-path fuzz/Cargo.toml --bins --target "$host" --target-dir target/fuzz
for t in "${targets[@]}"; do
  corpus=target/fuzz/corpus/$t
  artifacts=target/fuzz/artifacts/$t/
  log=target/fuzz/logs/$t.log
  mkdir -p "$corpus" "$artifacts" target/fuzz/logs
  echo "== $t: $runs runs"
  fork=()
  if ((${FUZZ_JOBS:-1} > 1)); then
    fork=(-fork="$FUZZ_JOBS")
  fi
  target/fuzz/"$host"/release/"$t" -runs="$runs" -max_len=4096 -timeout=20 "${fork[@]}" \
    -print_final_stats=1 -artifact_prefix="$artifacts" "$corpus" 2>&1 | tee "$log" |
    grep -E '^#[0-9]+.*DONE|^Done|^stat::number_of_executed_units|ERROR|panicked' || true
  if compgen -G "$artifacts*" >/dev/null; then
    echo "fuzz: $t found a failing input in $artifacts" >&2
    exit 1
  fi
done
