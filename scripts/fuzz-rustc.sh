#!/usr/bin/env bash
# rustc wrapper for scripts/fuzz.sh: adds libFuzzer's coverage passes (the
# LLVM sancov passes cargo-fuzz uses, which stable rustc accepts) to the
# crates whose code a guest module reaches or shapes: the host, wasmtime's
# runtime and wasm translation, the validator, the generator and the fuzz
# targets. The rest, above all Cranelift's code generator and register
# allocator, is built without them: instrumented, it made up most of the
# time of an execution of guest_module and most of the counters libFuzzer
# scans after each one.
rustc=$1
shift
name=
target=
prev=
for arg in "$@"; do
  [[ $prev == --crate-name ]] && name=$arg
  # Build scripts and proc macros (built for the host, without --target)
  # are never instrumented: nothing links libFuzzer into them.
  [[ $prev == --target ]] && target=$arg
  prev=$arg
done
case $target/$name in
  /*) ;;
  */cyxla_* | */plugin_glue | */wasm_smith | */arbitrary | */wasmparser | */wasm_encoder | \
    */wasmtime | */wasmtime_environ | */wasmtime_wasi | */wasmtime_wasi_io | */wasmtime_internal_* | \
    */call_layout | */limits_file | */limit_flag | */guest_module | */unrolled_loops)
    exec "$rustc" "$@" -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
      -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
      -Cllvm-args=-sanitizer-coverage-pc-table \
      -Cllvm-args=-sanitizer-coverage-trace-compares
    ;;
esac
exec "$rustc" "$@"
