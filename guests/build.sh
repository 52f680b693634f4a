#!/usr/bin/env bash
# Builds every bundled guest (guests/rust/<name>) for wasm32-unknown-unknown
# and copies it to guests/out/<name>.wasm. Idempotent and quick when nothing
# changed: cargo keeps its own target dir (<workspace>/target/guests) warm and
# an unchanged .wasm is not copied again (its mtime stays).
#
# Usage: guests/build.sh            (from anywhere)
# Env:   CYXLA_GUESTS_TARGET_DIR    override the cargo target dir
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
target=wasm32-unknown-unknown

# When run from a build script or under `cargo clippy`, cargo's variables
# would leak into this separate build (its target dir, rustflags replacing
# .cargo/config.toml's +simd128, clippy as rustc wrapper): drop them.
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET RUSTFLAGS CARGO_ENCODED_RUSTFLAGS CARGO_BUILD_RUSTFLAGS \
    RUSTC_WORKSPACE_WRAPPER CARGO_BUILD_TARGET_DIR
export CARGO_TARGET_DIR="${CYXLA_GUESTS_TARGET_DIR:-$root/target/guests}"

if ! command -v cargo >/dev/null 2>&1; then
    echo "guests/build.sh: cargo not found; install Rust with scripts/setup.sh" >&2
    exit 2
fi
sysroot="$(cd "$here" && rustc --print sysroot)"
if [ ! -d "$sysroot/lib/rustlib/$target" ]; then
    echo "guests/build.sh: the Rust target $target is not installed;" \
        "run scripts/setup.sh (or: rustup target add $target)" >&2
    exit 2
fi

# Reproducible bytes: the modules name their sources (in panic locations)
# by /cyxla/... and /cargo/..., not by where this checkout or CARGO_HOME
# is, so the same sources give the same module from any clone. The flags
# are appended to .cargo/config.toml's (cargo joins the arrays). The
# guests' own sources reach rustc as rust/<name>/..., the SDK's as
# sdk/... and the guest ABI's as abi/... (the symlinks guests/sdk and
# guests/abi, which also keep the checkout's path out of cargo's hash of
# those crates: Cargo.toml here): named /cyxla/guest-sdk/... and
# /cyxla/abi/..., where they are in the checkout.
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
remap="[\"--remap-path-prefix=$root=/cyxla\", \"--remap-path-prefix=$cargo_home=/cargo\","
remap+=" \"--remap-path-prefix=sdk=/cyxla/guest-sdk\", \"--remap-path-prefix=abi=/cyxla/abi\"]"
cd "$here"
cargo build --release --target "$target" --quiet --config "target.$target.rustflags=$remap"

mkdir -p out
for dir in rust/*/; do
    name="$(basename "$dir")"
    built="$CARGO_TARGET_DIR/$target/release/$name.wasm"
    if [ ! -f "$built" ]; then
        echo "guests/build.sh: $built was not produced (is [lib] name = \"$name\" and crate-type cdylib?)" >&2
        exit 1
    fi
    if ! cmp -s "$built" "out/$name.wasm"; then
        # Copy then rename, so a concurrent reader never sees half a file.
        cp "$built" "out/.$name.wasm.$$"
        mv "out/.$name.wasm.$$" "out/$name.wasm"
        echo "guests/build.sh: updated out/$name.wasm ($(wc -c <"out/$name.wasm") bytes)"
    fi
done

# C/C++ guests (guests/cpp/*.cc, *.c) with the C/C++ guest SDK.
"$here/cpp/build.sh"
