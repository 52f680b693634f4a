#!/usr/bin/env bash
# Builds C/C++ guests (XLA FFI handlers written against xla/ffi/api/ffi.h)
# into sandboxable wasm32 modules with cyxla's headers, or, with --native,
# into native shared libraries against jaxlib's real XLA headers (to compare
# the two, or to register with `cyxla-host run --native`).
#
# Usage: guests/cpp/build.sh [--native] [--debug-info] [--no-wasm-opt] [--out DIR] [SOURCE...]
#   SOURCE   .cc (C++17) or .c (C11) files, each one module; default: every
#            guests/cpp/*.cc and *.c
#   --out    output directory; default guests/out (wasm) or
#            target/cpp-native (--native)
#   --native build lib<stem>_cpp.so (or lib<stem>_c.so) for the host instead
#   --debug-info  keep DWARF line tables in the module: a trap then names
#            the source file and line of each frame. The same -O3 code;
#            compiled and linked in separate steps (clang-19 runs wasm-opt
#            after linking, without -g, which drops line tables) and
#            optimized with `wasm-opt -O3 -g`, which keeps them. Always
#            rebuilds; give it its own --out.
#   --no-wasm-opt  skip the wasm-opt step (to measure what it gives; a
#            module is not rebuilt when only this changes: use its own --out)
#
# Outputs <stem>_cpp.wasm for a .cc source, <stem>_c.wasm for a .c source.
# A module is rebuilt only when its source, a header of guest-sdk/include,
# the runtime (guest-sdk/c) or this script is newer than it.
#
# The wasm build is the documented build command (guest-sdk/README.md):
#   clang++-19 --target=wasm32-wasi -mexec-model=reactor -std=c++17 -O3 \
#     -msimd128 -mllvm -force-vector-interleave=4 -ffp-contract=off \
#     -fno-exceptions -fno-rtti -Wl,--strip-debug \
#     -Iguest-sdk/include kernel.cc guest-sdk/c/cyxla_runtime.cc -o kernel.wasm
#   wasm-opt -O3 --low-memory-unused kernel.wasm -o kernel.wasm
# The compiler: Debian's clang++-19 / clang-19 when on the PATH, else zig
# (`zig c++` / `zig cc`, which bring their own libc++ and wasi-libc): `zig`
# on the PATH, else the Python package ziglang's (of the checkout's .venv,
# else of python3), as `pip install ziglang` installs it. With zig, wasm-opt
# is told the modules' features (zig writes no target_features section).
# The first zig build on a machine takes about a minute (zig compiles its
# libc++ and wasi-libc into its cache). Without wasm-opt the modules are
# built without that step, with a warning (larger, slower loops). A module
# is not rebuilt when only the compiler changes: give each its own --out.
# Env: CYXLA_CXX / CYXLA_CC: these compilers instead (clang command lines);
#      CYXLA_ZIG: zig, this one (even when clang-19 is there);
#      CYXLA_WASM_OPT: wasm-opt (binaryen);
#      CYXLA_NATIVE_FLAGS: extra flags of --native builds (e.g. -march=native;
#      use its own --out: a module is not rebuilt when only the flags change).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
sdk="$root/guest-sdk"
jaxlib_include="$root/.venv/lib/python3.11/site-packages/jaxlib/include"
wasm_opt="${CYXLA_WASM_OPT:-wasm-opt}"
read -r -a native_flags <<<"${CYXLA_NATIVE_FLAGS:-}"

native=0
debug_info=0
no_wasm_opt=0
out=""
sources=()
while (($#)); do
    case "$1" in
        --native) native=1 ;;
        --debug-info) debug_info=1 ;;
        --no-wasm-opt) no_wasm_opt=1 ;;
        --out)
            [[ $# -ge 2 ]] || { echo "guests/cpp/build.sh: --out needs a directory" >&2; exit 2; }
            out="$2"
            shift
            ;;
        -h | --help)
            sed -n '2,45p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        -*) echo "guests/cpp/build.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) sources+=("$1") ;;
    esac
    shift
done
if ((${#sources[@]} == 0)); then
    shopt -s nullglob
    sources=("$here"/*.cc "$here"/*.c)
    shopt -u nullglob
fi
if [[ -z "$out" ]]; then
    if ((native)); then out="$root/target/cpp-native"; else out="$root/guests/out"; fi
fi
mkdir -p "$out"

# zig: `zig` on the PATH, else the Python package ziglang's (the checkout's
# .venv, else python3's); nothing when there is none.
find_zig() {
    local py zig
    if command -v zig >/dev/null 2>&1; then
        command -v zig
        return
    fi
    for py in "$root/.venv/bin/python" python3; do
        if zig=$("$py" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))' \
            2>/dev/null) && [[ -x $zig ]]; then
            echo "$zig"
            return
        fi
    done
}

# The compilers, each a command line: cxx=(...) and cc=(...).
zig=""
if [[ -n ${CYXLA_ZIG:-} ]]; then
    zig="$CYXLA_ZIG"
elif [[ -n ${CYXLA_CXX:-}${CYXLA_CC:-} ]] || ((native)) ||
    { command -v clang++-19 >/dev/null 2>&1 && command -v clang-19 >/dev/null 2>&1; }; then
    zig=""
else
    zig="$(find_zig)"
fi
if [[ -n $zig ]] && ((!native)); then
    if ! "$zig" version >/dev/null 2>&1; then
        echo "guests/cpp/build.sh: $zig (zig) does not run; pip install ziglang, or set CYXLA_ZIG" >&2
        exit 2
    fi
    cxx=("$zig" c++)
    cc=("$zig" cc)
    toolchain="zig $("$zig" version)"
    # zig writes no target_features section; these are its modules'
    # features (zig's default wasm32 CPU, lime1, and -msimd128).
    wasm_opt_features=(--enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int
        --enable-sign-ext --enable-mutable-globals --enable-multivalue --enable-reference-types)
else
    cxx=("${CYXLA_CXX:-clang++-19}")
    cc=("${CYXLA_CC:-clang-19}")
    toolchain="${cxx[0]}"
    wasm_opt_features=()
    for tool in "${cxx[0]}" "${cc[0]}"; do
        if ! command -v "$tool" >/dev/null 2>&1; then
            if ((native)); then
                echo "guests/cpp/build.sh: $tool not found; install clang-19 with scripts/setup.sh" >&2
            else
                echo "guests/cpp/build.sh: $tool not found, nor zig; pip install ziglang (into the" \
                    "checkout's .venv: scripts/setup.sh does), or install clang-19, lld-19, wasi-libc" \
                    "and libc++-19-dev-wasm32 with scripts/setup.sh" >&2
            fi
            exit 2
        fi
    done
fi
run_wasm_opt=1
if ((no_wasm_opt)); then
    run_wasm_opt=0
elif ((!native && debug_info)) && [[ -n $zig ]]; then
    # Debian's binaryen (108) cannot read the DWARF 5 line tables of zig's
    # libc++ and wasi-libc ("unknown debug line opcode").
    run_wasm_opt=0
    echo "guests/cpp/build.sh: note: with zig, --debug-info modules are not run through wasm-opt" \
        "(binaryen 108 cannot read zig's DWARF 5 line tables)" >&2
elif ((!native)) && ! command -v "$wasm_opt" >/dev/null 2>&1; then
    if [[ -n ${CYXLA_WASM_OPT:-} ]]; then
        echo "guests/cpp/build.sh: CYXLA_WASM_OPT=$wasm_opt not found" >&2
        exit 2
    fi
    run_wasm_opt=0
    echo "guests/cpp/build.sh: warning: wasm-opt (binaryen) not found: the modules are built" \
        "without it, larger and with slower vectorized loops (guest-sdk/README.md, \"C/C++ without" \
        "apt: zig\"); install binaryen with scripts/setup.sh, or cargo install wasm-opt" >&2
fi
if ((native)) && [[ ! -f "$jaxlib_include/xla/ffi/api/ffi.h" ]]; then
    echo "guests/cpp/build.sh: jaxlib's XLA headers not found in $jaxlib_include;" \
        "create the venv with scripts/setup.sh" >&2
    exit 2
fi

# Reproducible bytes: sources under this checkout are named /cyxla/...
# (in __FILE__ and line tables), wherever the checkout is.
prefix_map=(-ffile-prefix-map="$root=/cyxla")

# Newest modification time (seconds) of the SDK's headers and runtime.
sdk_mtime=$(find "$sdk/include" "$sdk/c" "${BASH_SOURCE[0]}" -type f -printf '%T@\n' | sort -n | tail -1)

for src in "${sources[@]}"; do
    if [[ ! -f "$src" ]]; then
        echo "guests/cpp/build.sh: no such source file: $src" >&2
        exit 2
    fi
    file="$(basename "$src")"
    stem="${file%.*}"
    case "$file" in
        *.cc | *.cpp) lang=cpp compiler=("${cxx[@]}") std=-std=c++17 runtime="$sdk/c/cyxla_runtime.cc" ;;
        *.c) lang=c compiler=("${cc[@]}") std=-std=c11 runtime="$sdk/c/cyxla_runtime.c" ;;
        *) echo "guests/cpp/build.sh: $src is not a .cc, .cpp or .c file" >&2; exit 2 ;;
    esac
    if ((native)); then
        target="$out/lib${stem}_${lang}.so"
    else
        target="$out/${stem}_${lang}.wasm"
    fi
    if [[ -f "$target" ]] && ((!debug_info)); then
        built=$(stat -c %Y "$target")
        newest=$(printf '%s\n%s\n' "$(stat -c %Y "$src")" "${sdk_mtime%.*}" | sort -n | tail -1)
        if ((built > newest)); then
            continue
        fi
    fi
    tmp="$out/.${target##*/}.$$"
    if ((native)); then
        # The same source against XLA's own headers; cyxla/target.h (found
        # after them) makes CYXLA_TARGET lines compile to a type check.
        cmd=("${compiler[@]}" "$std" -O3 -ffp-contract=off -fPIC -shared -fvisibility-inlines-hidden -Wall
            -Wno-return-type ${native_flags[@]+"${native_flags[@]}"} -I"$jaxlib_include"
            -idirafter "$sdk/include" -include cyxla/target.h "$src" -o "$tmp")
    else
        # -force-vector-interleave=4: four SIMD vectors per vectorized loop
        # iteration, as LLVM does natively; a naive f32 matmul goes from
        # 1.55x to 1.14x native with it (guest-sdk/README.md, issue 17).
        cmd=("${compiler[@]}" --target=wasm32-wasi -mexec-model=reactor "$std" -O3 -msimd128
            -mllvm -force-vector-interleave=4 -ffp-contract=off -fno-exceptions -Wall -Wextra -Wl,--strip-debug
            "${prefix_map[@]}" -I"$sdk/include" "$src" "$runtime" -o "$tmp")
        if [[ $lang == cpp ]]; then cmd+=(-fno-rtti); fi
        if ((debug_info)); then
            # Compile both sources to objects with line tables (the same
            # flags), then link without -O (below) so that clang does not
            # run wasm-opt without -g.
            compile=("${compiler[@]}" --target=wasm32-wasi "$std" -O3 -gline-tables-only -msimd128
                -mllvm -force-vector-interleave=4 -ffp-contract=off -fno-exceptions -Wall -Wextra
                "${prefix_map[@]}" -I"$sdk/include" -c)
            if [[ $lang == cpp ]]; then compile+=(-fno-rtti); fi
            if ! "${compile[@]}" "$src" -o "$tmp.src.o" || ! "${compile[@]}" "$runtime" -o "$tmp.rt.o"; then
                rm -f "$tmp.src.o" "$tmp.rt.o"
                echo "guests/cpp/build.sh: compiling $src with --debug-info failed; the command was:" >&2
                printf '  %q' "${compile[@]}" "$src" >&2
                echo >&2
                exit 1
            fi
            cmd=("${compiler[@]}" --target=wasm32-wasi -mexec-model=reactor "$tmp.src.o" "$tmp.rt.o" -o "$tmp")
            # zig runs no wasm-opt, and links its libc++ and wasi-libc as
            # built for the link's -O (without one: unoptimized).
            if [[ -n $zig ]]; then cmd+=(-O3); fi
        fi
    fi
    if ! "${cmd[@]}"; then
        rm -f "$tmp"
        echo "guests/cpp/build.sh: building $src failed; the command was:" >&2
        printf '  %q' "${cmd[@]}" >&2
        echo >&2
        if ((!native)) && [[ -z $zig ]]; then
            echo "guests/cpp/build.sh: (missing wasm32 libraries? install clang-19, lld-19," \
                "wasi-libc and libc++-19-dev-wasm32 with scripts/setup.sh)" >&2
        fi
        exit 1
    fi
    if ((!native && run_wasm_opt)); then
        # Folds each constant address offset LLVM adds with i32.add into the
        # access's own offset field, which LLVM cannot do itself (i32.add
        # wraps, the offset does not). --low-memory-unused: the first 1 KiB
        # of memory is never used (wasm-ld puts data at 1024), so an address
        # that would have wrapped could only have reached it. Same results;
        # a naive f32 matmul runs 13-20% faster (guest-sdk/README.md).
        opt=("$wasm_opt" -O3 --low-memory-unused ${wasm_opt_features[@]+"${wasm_opt_features[@]}"} "$tmp" -o "$tmp")
        if ((debug_info)); then
            opt=("$wasm_opt" -O3 -g --low-memory-unused ${wasm_opt_features[@]+"${wasm_opt_features[@]}"} "$tmp" -o "$tmp")
        fi
        if ! "${opt[@]}"; then
            rm -f "$tmp" "$tmp.src.o" "$tmp.rt.o"
            echo "guests/cpp/build.sh: optimizing $src failed; the command was:" >&2
            printf '  %q' "${opt[@]}" >&2
            echo >&2
            echo "guests/cpp/build.sh: (binaryen too old or broken? reinstall it with scripts/setup.sh)" >&2
            exit 1
        fi
    fi
    rm -f "$tmp.src.o" "$tmp.rt.o"
    mv "$tmp" "$target"
    echo "guests/cpp/build.sh: built ${target#"$root"/} ($(wc -c <"$target") bytes, $toolchain)"
done
