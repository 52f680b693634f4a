#!/usr/bin/env bash
# Builds an example of the benches crate (benches/examples/NAME.rs) the way
# the wheel's binaries are built (scripts/wheel.sh: release, through
# scripts/zigbuild.sh, for this machine's architecture and the wheel's
# glibc), and prints the path to run it from.
#
#   scripts/example.sh NAME      (call_profile: scripts/callgrind.sh;
#                                 precompile: scripts/mca.sh)
#
# Built so, an example shares the wheel's compiled crates (the engine's are
# most of either build): after the other, the second build compiles only
# this repository's crates and the few that differ, about a minute, where
# a build of its own in the bench profile took ten on a 2-core machine.
# scripts/test.sh builds the wheel and runs both scripts. The code is that
# of the bench profile (both are release); callgrind counts the same
# instructions either way.
#
# The path printed is a hard link to the build in target/examples/, two
# folders below the checkout, where an example finds the checkout's .venv
# (its PJRT plugin, its OpenBLAS) as a program in target/<profile>/ does; a
# build for an explicit target sits a folder deeper than that search looks.
#
# Needs scripts/setup.sh (cargo-zigbuild and ziglang in .venv).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
name="${1:-}"
if [[ $# -ne 1 || ! -f "benches/examples/$name.rs" ]]; then
    echo "usage: scripts/example.sh NAME (an example of benches/examples/, e.g. call_profile)" >&2
    exit 2
fi
if [[ ! -x .venv/bin/cargo-zigbuild ]]; then
    echo "scripts/example.sh: .venv/bin/cargo-zigbuild is missing: run scripts/setup.sh" >&2
    exit 1
fi
# scripts/wheel.sh's target: the same triple and glibc, or nothing is shared.
triple="$(uname -m)-unknown-linux-gnu"
glibc=2.28
scripts/zigbuild.sh zigbuild -q --release -p cyxla-benches --example "$name" --target "$triple.$glibc" >&2
target_dir="$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
mkdir -p "$target_dir/examples"
ln -f "$target_dir/$triple/release/examples/$name" "$target_dir/examples/$name" 2>/dev/null ||
    cp -f "$target_dir/$triple/release/examples/$name" "$target_dir/examples/$name"
echo "$target_dir/examples/$name"
