#!/usr/bin/env bash
# Builds the benches crate's benches, or one of its examples, the way the
# wheel's binaries are built (scripts/wheel.sh: release, through
# scripts/zigbuild.sh, for this machine's architecture and the wheel's
# glibc), and prints where to run them from:
#
#   scripts/release_build.sh --benches         the folder of every bench
#                                              (scripts/bench.sh)
#   scripts/release_build.sh --example NAME    the example's path
#                                              (call_profile: scripts/callgrind.sh;
#                                              precompile: scripts/mca.sh)
#
# Built so, the benches, the examples and the x86-64 wheel share one release
# build of the engine and every other crate: after any of them, the others
# compile only this repository's crates and the few that differ, about a
# minute on a 2-core machine, where a build of their own (`cargo bench`, the
# bench profile) took ten. scripts/test.sh builds the wheel and runs all
# three scripts. The code is the bench profile's (both are release), linked
# as the wheel's is.
#
# What it prints are hard links to the builds, in target/benches/ and
# target/examples/: two folders below the checkout, where a program finds
# the checkout's .venv (its PJRT plugin, its OpenBLAS) as one in
# target/<profile>/ does; a build for an explicit target sits a folder
# deeper than that search looks.
#
# Needs scripts/setup.sh (cargo-zigbuild and ziglang in .venv).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
usage() {
    echo "usage: scripts/release_build.sh --benches | --example NAME (an example of benches/examples/)" >&2
    exit 2
}
# What to build, cargo's kind of target for it, and its folder in target/.
case "${1:-}" in
    --benches) [[ $# -eq 1 ]] || usage; what=(--benches) kind=bench folder=benches ;;
    --example)
        [[ $# -eq 2 && -f "benches/examples/${2}.rs" ]] || usage
        what=(--example "$2") kind=example folder=examples
        ;;
    *) usage ;;
esac
if [[ ! -x .venv/bin/cargo-zigbuild ]]; then
    echo "scripts/release_build.sh: .venv/bin/cargo-zigbuild is missing: run scripts/setup.sh" >&2
    exit 1
fi
# scripts/wheel.sh's target: the same triple and glibc, or nothing is shared.
triple="$(uname -m)-unknown-linux-gnu"
glibc=2.28
# The benches: `test --release --no-run` builds them as `cargo bench` does
# (the release profile, which the bench profile is; they have no test
# harness), since cargo-zigbuild has no `bench`. An example: a plain build
# (`test` would build its test harness). Cargo's JSON messages name each
# executable it built.
command=zigbuild
[[ $kind == bench ]] && command=(test --no-run)
messages="$(mktemp)"
trap 'rm -f "$messages"' EXIT
scripts/zigbuild.sh "${command[@]}" --release -p cyxla-benches "${what[@]}" \
    --target "$triple.$glibc" --message-format=json-render-diagnostics >"$messages"
target_dir="$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
out="$target_dir/$folder"
mkdir -p "$out"
linked=0
while IFS=$'\t' read -r name path; do
    ln -f "$path" "$out/$name" 2>/dev/null || cp -f "$path" "$out/$name"
    linked=$((linked + 1))
done < <(python3 - "$messages" "$kind" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    message = json.loads(line)
    target = message.get("target") or {}
    if message.get("reason") == "compiler-artifact" and message.get("executable") \
            and sys.argv[2] in target.get("kind", []):
        print(f"{target['name']}\t{message['executable']}")
EOF
)
if ((linked == 0)); then
    echo "scripts/release_build.sh: cargo built no $kind executable" >&2
    exit 1
fi
if [[ $kind == example ]]; then echo "$out/${what[1]}"; else echo "$out"; fi
