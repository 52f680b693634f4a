#!/usr/bin/env bash
# Instructions per custom call, and where they go, counted by valgrind's
# callgrind (exact counts: unlike timings, they do not move with a busy
# machine).
#
#   scripts/callgrind.sh [--host] [CALLS]      (CALLS: default 2000)
#
# Runs benches/examples/call_profile.rs once per variant (the sandboxed
# copy16 and noop calls without XLA, and a program of 64 custom calls
# through the real XLA CPU plugin: guest, native, and no custom call),
# collecting only inside its `measured` loop, and prints per variant the
# instructions of one call, then the source files of this repository that
# the call passes through, with each file's own (exclusive) share. JIT code
# (the guest, the trampolines) has no source file: it shows as `(JIT code ...)`.
# The cost of the sandbox = xla-guest - xla-native. Under valgrind, each XLA
# variant takes minutes (XLA's start-up); `--host` runs only the two
# variants without XLA, in seconds.
#
# Needs scripts/setup.sh and valgrind (apt install valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."

variants=(host-noop host-copy16 xla-baseline xla-native xla-guest)
if [[ "${1:-}" == --host ]]; then
    variants=(host-noop host-copy16)
    shift
fi
calls="${1:-2000}"
if ! [[ "$calls" =~ ^[1-9][0-9]*$ ]]; then
    echo "scripts/callgrind.sh: CALLS must be a whole number > 0, got '$calls'" >&2
    exit 2
fi
if ! command -v valgrind >/dev/null 2>&1; then
    echo "scripts/callgrind.sh: valgrind not found: apt install valgrind" >&2
    exit 1
fi
# Built as the wheel's binaries are, sharing their compiled crates.
bin="$(scripts/release_build.sh --example call_profile)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

for variant in "${variants[@]}"; do
    valgrind --tool=callgrind --collect-atstart=no \
        --toggle-collect='call_profile::measured*' \
        --callgrind-out-file="$out/$variant.out" \
        "$bin" "$variant" "$calls" >"$out/$variant.log" 2>&1 || {
        echo "scripts/callgrind.sh: $variant failed under valgrind:" >&2
        tail -20 "$out/$variant.log" >&2
        exit 1
    }
    callgrind_annotate --auto=no --threshold=100 "$out/$variant.out" >"$out/$variant.txt" 2>/dev/null
    made=$(sed -n 's/^calls \([0-9]*\)$/\1/p' "$out/$variant.log")
    if [[ -z "$made" ]]; then
        echo "scripts/callgrind.sh: $variant did not print how many calls it made:" >&2
        tail -20 "$out/$variant.log" >&2
        exit 1
    fi
    python3 scripts/callgrind_parts.py "$out/$variant.txt" "$variant" "$made"
done
