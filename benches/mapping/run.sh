#!/bin/sh
# Builds benches/mapping/map_vs_copy.c with the system C compiler into
# target/mapping/ and runs it: one call's buffers copied into a guest memory
# against mapped into it, at 4 MiB and 64 MiB (docs/performance.md,
# "Buffers mapped instead of copied: a feasibility study").
#
#   benches/mapping/run.sh            # the figures (about a minute)
#   benches/mapping/run.sh --quick    # a few rounds: a check, not figures
#   benches/mapping/run.sh --rounds 51 --sizes 1,4,16,64
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out="${CARGO_TARGET_DIR:-$root/target}/mapping"
mkdir -p "$out"
${CC:-cc} -O2 -std=gnu11 -Wall -Wextra -pthread -o "$out/map_vs_copy" "$root/benches/mapping/map_vs_copy.c"
exec "$out/map_vs_copy" "$@"
