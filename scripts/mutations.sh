#!/usr/bin/env bash
# Shows that every patch of the engine's series (vendor/series) is guarded:
# each patch, left out or deliberately broken, must make a named test fail.
# For each mutation below: derive vendor/ without the patch (or with one
# line of it broken), build, run the test that should catch it, and record
# whether it failed; vendor/ is derived anew at the end (scripts/vendor.sh).
#
#   scripts/mutations.sh            every mutation (an hour or more: each
#                                   rebuilds wasmtime or Cranelift)
#   scripts/mutations.sh NAME...    only those (see the table below)
#
# Prints one line per mutation: caught (the test failed) or MISSED, and
# exits non-zero if any was missed. Not part of scripts/test.sh: it
# rebuilds the engine once per mutation. Run it when the series changes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# name | how: "without PATCH..." (each a part of the paths of patches to
# leave out: those that build on a patch go with it), or "edit FILE|FROM|TO" (FROM a literal that
# the file holds once, replaced by TO; \n is a newline) | the test that
# must fail (arguments to `cargo test`)
mutations=(
  "wasmtime-01-reverted|without wasmtime/01-poll-page-fault-is-a-trap.patch|-p cyxla-sandbox --lib engine::tests::poll_checks_trap_in_place"
  "poll-checks-01-reverted|without wasmtime-internal-cranelift/0|-p cyxla-sandbox --lib engine::tests::poll_checks_trap_in_place"
  "unroll-02-reverted|without 02-unroll-short-loops 03-reassociate-sums|-p cyxla-sandbox --lib engine::tests::short_loops_are_unrolled_and_loops_aligned"
  "loop-checks-dropped|edit vendor/wasmtime-internal-cranelift/src/translate/code_translator.rs|            environ.translate_loop_header(builder)?;\n        }\n        Operator::If|        }\n        Operator::If|-p cyxla-sandbox --lib engine::tests::every_cycle_of_compiled_code_passes_a_check"
  "unroll-02-broken|edit vendor/wasmtime-internal-cranelift/src/translate/func_translator.rs|set_loop_branch_target(environ, next.unwrap_or(header));|set_loop_branch_target(environ, next.unwrap_or(starts[0]));|-p cyxla-sandbox --lib engine::tests::every_cycle_of_compiled_code_passes_a_check"
  "reassociate-03-broken|edit vendor/wasmtime-internal-cranelift/src/translate/code_translator.rs|let rest = builder.ins().iadd(x, b);|let rest = builder.ins().isub(x, b);|-p cyxla-sandbox --test suite fuzz_smoke::"
  "bulk-04-reverted|without wasmtime-internal-cranelift/04-bulk-memory-in-chunks.patch|-p cyxla-sandbox --test overshoot"
  "bulk-04-broken|edit vendor/wasmtime-internal-cranelift/src/func_environ.rs|let backward = builder.ins().icmp(IntCC::UnsignedGreaterThan, dst, src);|let backward = builder.ins().icmp(IntCC::UnsignedGreaterThan, dst, dst);|-p cyxla-sandbox --lib engine::tests::bulk_memory_in_chunks_writes_what_one_instruction_writes"
  "bulk-04-unchecked|edit vendor/wasmtime-internal-cranelift/src/func_environ.rs|chunk_src, chunk);\n        self.poll_check(builder);|chunk_src, chunk);|-p cyxla-sandbox --lib engine::tests::every_cycle_of_compiled_code_passes_a_check"
  "lea-01-broken|edit vendor/cranelift-codegen/src/isa/x64/inst.isle|(to_amode_lea flags x (i32_from_iconst c))\n        (Amode.ImmReg c x flags))|(to_amode_lea flags x (i32_from_iconst c))\n        (amode_imm_reg_reg_shift flags x x (zero_offset)))|-p cyxla-sandbox --test suite fuzz_smoke::differential"
  "sink-02-broken|edit vendor/cranelift-codegen/src/isa/x64/lower/isle.rs|        self.sinkable_load(arg)\n    }\n}|        let ValueDef::Result(load, 0) = self.lower_ctx.dfg().value_def(arg) else { return None };\n        let (addr_input, offset) = is_mergeable_load(self.lower_ctx, load, MergeableLoadSize::Min32)?;\n        Some(SinkableLoad { inst: load, addr_input, offset })\n    }\n}|-p cyxla-sandbox --test suite fuzz_smoke::differential"
  "align-03-reverted|without cranelift-codegen/03-align-loop-headers.patch|-p cyxla-sandbox --lib engine::tests::short_loops_are_unrolled_and_loops_aligned"
  "align-03-ungated|edit vendor/cranelift-codegen/src/machinst/mod.rs|    fn loop_header_alignment() -> CodeOffset {\n        1\n    }|    fn loop_header_alignment() -> CodeOffset {\n        64\n    }|-p cyxla-sandbox --lib engine::tests::loops_are_padded_only_where_the_backend_asks"
  "trap-srcloc-04-reverted|without cranelift-codegen/04-branch-to-trap-keeps-trap-srcloc.patch|-p cyxla-sandbox --lib engine::tests::guarded_traps_report_the_unreachable"
  "brif-05-reverted|without cranelift-codegen/05-brif-on-arithmetic-uses-its-flags.patch|-p cyxla-sandbox --lib engine::tests::branches_test_the_flags_of_their_arithmetic"
  "brif-05-wide|edit vendor/cranelift-codegen/src/isa/x64/lower.isle|(x64_add_with_flags_paired ty x y)|(x64_add_with_flags_paired \$I64 x y)|-p cyxla-sandbox --test suite fuzz_smoke::differential_shapes"
  "brif-05-used-between|edit vendor/cranelift-codegen/src/machinst/lower.rs|            if self.f.dfg.inst_values(inst).any(|            if false && self.f.dfg.inst_values(inst).any(|-p cyxla-sandbox --test suite fuzz_smoke::differential_shapes"
)

selected=("$@")
restore() { scripts/vendor.sh >/dev/null 2>&1 || echo "mutations: scripts/vendor.sh failed: vendor/ may still be mutated" >&2; }
trap restore EXIT

missed=0
report=()
for m in "${mutations[@]}"; do
  IFS='|' read -r name how rest <<<"$m"
  if ((${#selected[@]})) && [[ ! " ${selected[*]} " == *" $name "* ]]; then
    continue
  fi
  scripts/vendor.sh >/dev/null
  case "$how" in
    without\ *)
      test_args=$rest
      args=()
      for p in ${how#without }; do args+=(--without "$p"); done
      if ! scripts/vendor.sh "${args[@]}" >/dev/null 2>&1; then
        report+=("ERROR   $name: scripts/vendor.sh ${args[*]} failed (a later patch needs this one?)")
        missed=1
        continue
      fi
      ;;
    edit\ *)
      file=${how#edit }
      from=${rest%%|*}
      rest=${rest#*|}
      to=${rest%%|*}
      test_args=${rest#*|}
      python3 - "$file" "$from" "$to" <<'EOF'
import sys
path, old, new = (sys.argv[1], sys.argv[2].replace("\\n", "\n"), sys.argv[3].replace("\\n", "\n"))
text = open(path).read()
if text.count(old) != 1:
    sys.exit(f"mutations: {path} does not hold exactly one {old!r}: the mutation needs updating")
open(path, "w").write(text.replace(old, new))
EOF
      ;;
  esac
  echo "== $name: cargo test $test_args" >&2
  log=$(mktemp)
  # shellcheck disable=SC2086 # the test arguments are words
  if cargo test $test_args >"$log" 2>&1; then
    report+=("MISSED  $name: cargo test $test_args passed")
    missed=1
    echo "${report[-1]}" >&2
  else
    why=$(grep -m1 -E "panicked at|^error(\[|:)|test result: FAILED|Wasmtime caught" "$log" || echo "failed")
    report+=("caught  $name: cargo test $test_args: $why")
    echo "${report[-1]}" >&2
  fi
  rm -f "$log"
done
printf '%s\n' "${report[@]}"
exit "$missed"
