#!/usr/bin/env bash
# The JAX smoke test of the aarch64 wheel under qemu-aarch64 user emulation
# (issue 44). Assembles an aarch64 Python 3.11 from Debian bookworm's arm64
# packages, makes a venv with it holding jax and jaxlib 0.10.2 from PyPI and
# the aarch64 cyxla wheel (target/wheels-aarch64, from
# `scripts/wheel.sh --target aarch64`; under CARGO_TARGET_DIR when it is
# set, as wheel.sh puts it), and runs tests/aarch64/jax_smoke.py
# under that wheel's own launcher:
#
#   cyxla-host --platform cpu --allow rms_norm --allow trap --allow spin \
#       --limit call_timeout=2s -- python jax_smoke.py
#
# The guests are served on JAX's own CPU backend (`--platform cpu`): PyPI
# has no aarch64 build of the real XLA CPU PJRT plugins platform `cyxla`
# wraps. The program calls the bundled guest `rms_norm` (jit and vmap), a
# trapping guest and a looping one that its deadline stops (each raises the
# usual JaxRuntimeError, and the next call works), jnp.linalg.solve and
# eigh, and compares every result with jnp on JAX's CPU backend and numpy
# in the same emulated process. It prints one JSON line; this script checks
# it and prints a summary with the wall time of each step.
#
#   scripts/aarch64_jax.sh           # the whole test: needs the aarch64 wheel
#   scripts/aarch64_jax.sh --plain   # JAX alone: proves the environment
#                                    # (no cyxla wheel needed, none used)
#
# Everything is kept under target/aarch64-python (ignored by git; about
# 0.9 GB): a private apt state for arm64 (apt/), the .deb files (debs/),
# the sysroot they are unpacked into (sysroot/; the emulated processes'
# "/", so the compile cache is its var/cache/cyxla), the PyPI wheels
# (wheelhouse/) and the venv (venv/). Each step is skipped when its stamp
# says its inputs did not change, so a second run does only the tests; a
# new build of the wheel is installed again. Installs nothing
# system-wide: apt runs with its own lists and architecture (arm64) under
# target/ and only downloads (`apt-get download`, unpacked with
# `dpkg-deb -x`), so dpkg's architectures and the machine's packages are
# left alone; PyPI wheels are fetched by the checkout's x86-64 pip
# (.venv/bin/pip, from scripts/setup.sh) with --platform *_aarch64 and
# installed by the emulated pip, offline, from that folder. It stops with
# the apt-get line to run when a tool is missing.
#
# binfmt_misc: the launcher `cyxla-host` is an aarch64 program that execs
# the venv's aarch64 `python`, and a process emulated by qemu-user cannot
# exec another aarch64 program without binfmt_misc. The machine's
# registration is used when it has one for aarch64 ELF (Debian's
# qemu-user-static with binfmt-support or systemd-binfmt registers one);
# otherwise this script does not register one machine-wide (that would
# change what every other aarch64 binary on the machine does, other
# scripts' tests included, and outlive a killed run): it runs the launcher
# in a new user and mount namespace with a binfmt_misc instance of its own
# (Linux 6.7 or newer), registers qemu-aarch64-static there for aarch64 ELF
# with the F flag (the kernel opens the emulator when registering, so it
# works whatever the child's root), and the registration ends with the
# namespace, when the test ends, however it ends. QEMU_LD_PREFIX (the
# sysroot) is in the environment, which qemu reads and every child
# inherits.
#
# The emulated CPU is qemu's `max` (SVE2, SME: OpenBLAS picks its armv9sme
# kernels) unless QEMU_CPU names another, which every emulated process of
# the test inherits: `QEMU_CPU=neoverse-n1 scripts/aarch64_jax.sh` runs the
# code paths of a Neoverse N1 server (no SVE), e.g. AWS Graviton 2.
#
# What emulation cannot show: qemu translates every block of aarch64 code
# (Python, XLA's CPU code, the guests' compiled code) on x86-64, so no time
# it gives says how fast any of it is on an Arm machine; the wall times
# printed below are the steps' times on this machine, for planning runs, not
# performance figures. qemu runs aarch64's weaker memory model on x86-64's
# stronger one: threads (XLA's thread pool, the deadline timer, the guest
# instances) are not tested for aarch64's orderings. Nor is anything a real
# core does that qemu's model of it does not (errata, caches, when a signal
# lands); a deadline's lateness is not checked here, only that the call
# ends with DEADLINE_EXCEEDED (the call timeout: AARCH64_JAX_CALL_TIMEOUT,
# default 2s).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
self="$root/scripts/aarch64_jax.sh"
top="$root/target/aarch64-python"
sysroot="$top/sysroot"
venv="$top/venv"
wheelhouse="$top/wheelhouse"
smoke="$root/tests/aarch64/jax_smoke.py"
wheels="${CARGO_TARGET_DIR:-$root/target}/wheels-aarch64"
call_timeout=${AARCH64_JAX_CALL_TIMEOUT:-2s}
JAX_VERSION=0.10.2

# Inside the namespace of our own binfmt_misc (below): mount it, register
# qemu for aarch64 ELF, run the command.
if [[ "${1:-}" == --in-binfmt-namespace ]]; then
    shift
    qemu=$(readlink -f "$(command -v qemu-aarch64-static)")
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    # An ELF64, little-endian, e_machine 183 (EM_AARCH64), executable or
    # shared object (the mask ignores the low bit of e_type): Debian's
    # qemu-aarch64 magic.
    magic='\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
    mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
    printf ':qemu-aarch64:M::%s:%s:%s:F\n' "$magic" "$mask" "$qemu" >/proc/sys/fs/binfmt_misc/register
    exec "$@"
fi

plain=0
case "${1:-}" in
"") ;;
--plain) plain=1 ;;
*)
    echo "usage: scripts/aarch64_jax.sh [--plain]" >&2
    exit 2
    ;;
esac

t_start=$(date +%s.%N)
summary=()
step_start=0
step() { # step NAME: starts timing a step
    step_name=$1
    step_start=$(date +%s.%N)
    echo "== $step_name" >&2
}
done_step() { # done_step NOTE: ends the step, its wall time in the summary
    local s
    s=$(awk -v a="$step_start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
    summary+=("$(printf '%-34s %7s s  %s' "$step_name" "$s" "$1")")
}
die() {
    echo "aarch64_jax.sh: $*" >&2
    exit 1
}

# Tools: the emulator, apt's download and dpkg-deb, unshare (util-linux),
# the checkout's x86-64 pip.
missing=()
command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static)
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || missing+=(apt dpkg)
command -v unshare >/dev/null || missing+=(util-linux)
[[ -e /usr/share/keyrings/debian-archive-keyring.gpg ]] || missing+=(debian-archive-keyring)
if ((${#missing[@]})); then
    die "missing ${missing[*]}; install with:
  apt-get install -y qemu-user-static apt dpkg util-linux debian-archive-keyring"
fi
pyhost="$root/.venv/bin/python"
[[ -x "$root/.venv/bin/pip" ]] || die "missing the checkout's .venv (its x86-64 pip downloads the aarch64 wheels); make it with:
  scripts/setup.sh"

cyxla_wheel=
if ((!plain)); then
    shopt -s nullglob
    found=("$wheels"/cyxla_jax_plugin-*-manylinux_2_28_aarch64.whl)
    shopt -u nullglob
    ((${#found[@]} == 1)) || die "expected one aarch64 cyxla wheel in $wheels, found ${#found[@]}; build it with:
  scripts/wheel.sh --target aarch64
or run the environment's test with JAX alone: scripts/aarch64_jax.sh --plain"
    cyxla_wheel=${found[0]}
fi

# 1. The sysroot: Debian bookworm's arm64 Python 3.11, its libraries and
#    libc, unpacked. apt has its own state under target/: lists of arm64
#    packages only, no status of installed packages.
packages=(libc6 libgcc-s1 libstdc++6 libgomp1 libcrypt1
    python3.11-minimal libpython3.11-minimal libpython3.11-stdlib python3.11
    libexpat1 zlib1g libssl3 libffi8 libsqlite3-0 libbz2-1.0 liblzma5
    libncursesw6 libtinfo6 libreadline8 libuuid1 libdb5.3 libgdbm6
    libgdbm-compat4 libnsl2 libtirpc3 libgssapi-krb5-2 libk5crypto3
    libkeyutils1 libkrb5-3 libkrb5support0 libcom-err2)
step "sysroot (Debian arm64 packages)"
if [[ "$(cat "$sysroot/.stamp" 2>/dev/null)" == "${packages[*]}" ]]; then
    done_step "up to date"
else
    apt_dir="$top/apt"
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/sources.d" "$top/debs"
    : >"$apt_dir/status"
    keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    {
        echo "deb [signed-by=$keyring] http://deb.debian.org/debian bookworm main"
        echo "deb [signed-by=$keyring] http://deb.debian.org/debian bookworm-updates main"
        echo "deb [signed-by=$keyring] http://deb.debian.org/debian-security bookworm-security main"
    } >"$apt_dir/sources.list"
    apt_opts=(-o APT::Architecture=arm64 -o APT::Architectures::=arm64
        -o Dir::State::Lists="$apt_dir/lists" -o Dir::State::status="$apt_dir/status"
        -o Dir::Cache="$apt_dir/cache" -o Dir::Etc::SourceList="$apt_dir/sources.list"
        -o Dir::Etc::SourceParts="$apt_dir/sources.d"
        -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
        -o APT::Sandbox::User=root -o Debug::NoLocking=1)
    apt-get "${apt_opts[@]}" -q update >&2
    rm -f "$top"/debs/*.deb
    (cd "$top/debs" && apt-get "${apt_opts[@]}" -q download "${packages[@]}" >&2)
    rm -rf "$sysroot"
    mkdir -p "$sysroot"
    for deb in "$top"/debs/*.deb; do dpkg-deb -x "$deb" "$sysroot"; done
    # Absolute links (e.g. sitecustomize.py -> /etc/...) would be resolved
    # by the kernel against this machine's root: make them relative.
    while IFS= read -r -d '' link; do
        ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$sysroot$(readlink "$link")")" "$link"
    done < <(find "$sysroot" -type l -lname '/*' -print0)
    [[ -x "$sysroot/usr/bin/python3.11" && -e "$sysroot/lib/ld-linux-aarch64.so.1" ]] ||
        die "the sysroot has no python3.11 or no dynamic loader"
    echo "${packages[*]}" >"$sysroot/.stamp"
    done_step "$(find "$top/debs" -name '*.deb' | wc -l) packages"
fi

arm() { qemu-aarch64-static -L "$sysroot" "$@"; }

# 2. The wheelhouse: aarch64 wheels from PyPI, downloaded by the x86-64 pip.
requirements=("jax==$JAX_VERSION" "jaxlib==$JAX_VERSION" pip)
[[ -n "$cyxla_wheel" ]] && requirements+=("$cyxla_wheel")
wheel_sum=
[[ -n "$cyxla_wheel" ]] && wheel_sum=$(sha256sum "$cyxla_wheel" | cut -d' ' -f1)
want="${requirements[*]} $wheel_sum"
step "wheelhouse (pip download)"
if [[ "$(cat "$wheelhouse/.stamp" 2>/dev/null)" == "$want" ]]; then
    done_step "up to date"
else
    mkdir -p "$wheelhouse"
    rm -f "$wheelhouse"/cyxla_jax_plugin-*.whl
    "$root/.venv/bin/pip" download -q --disable-pip-version-check --dest "$wheelhouse" \
        --only-binary=:all: --python-version 3.11 --implementation cp --abi cp311 \
        --platform manylinux_2_28_aarch64 --platform manylinux_2_27_aarch64 \
        --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64 \
        "${requirements[@]}" >&2
    echo "$want" >"$wheelhouse/.stamp"
    done_step "$(find "$wheelhouse" -name '*.whl' | wc -l) wheels"
fi

# 3. The venv, made by the emulated Python; the emulated pip (run from its
#    wheel: the venv needs no pip of its own) installs offline from the
#    wheelhouse. jax and jaxlib first; the cyxla wheel again whenever it
#    changed (same version, new build: --force-reinstall).
pip_whl=$(find "$wheelhouse" -name 'pip-*.whl' | sort | tail -n 1)
pip_in_venv() { arm "$venv/bin/python" "$pip_whl/pip" --disable-pip-version-check -q "$@"; }
step "venv: jax, jaxlib (emulated pip)"
base="jax==$JAX_VERSION jaxlib==$JAX_VERSION $(cd "$wheelhouse" && ls jax-* jaxlib-* | tr '\n' ' ')"
if [[ "$(cat "$venv/.stamp-base" 2>/dev/null)" == "$base" ]]; then
    done_step "up to date"
else
    rm -rf "$venv"
    arm "$sysroot/usr/bin/python3.11" -m venv --without-pip "$venv"
    pip_in_venv install --no-index --find-links "$wheelhouse" "jax==$JAX_VERSION" "jaxlib==$JAX_VERSION"
    echo "$base" >"$venv/.stamp-base"
    rm -f "$venv/.stamp-cyxla"
    done_step "installed"
fi
if ((plain)) && [[ -e "$venv/.stamp-cyxla" ]]; then
    # --plain is JAX alone: the wheel an earlier run installed goes.
    step "venv: cyxla wheel uninstalled"
    pip_in_venv uninstall -y cyxla-jax-plugin
    rm -f "$venv/.stamp-cyxla"
    done_step "for --plain"
fi
if [[ -n "$cyxla_wheel" ]]; then
    step "venv: cyxla wheel (emulated pip)"
    if [[ "$(cat "$venv/.stamp-cyxla" 2>/dev/null)" == "$wheel_sum" ]]; then
        done_step "up to date"
    else
        pip_in_venv install --no-index --find-links "$wheelhouse" --force-reinstall --no-deps "$cyxla_wheel"
        # With the README's extra `pjrt`: on aarch64 it must install nothing
        # (no plugin publishes an aarch64 build), not fail.
        pip_in_venv install --no-index --find-links "$wheelhouse" "$cyxla_wheel[pjrt]" "jax==$JAX_VERSION"
        echo "$wheel_sum" >"$venv/.stamp-cyxla"
        done_step "$(basename "$cyxla_wheel")"
    fi
fi

# Runs a command in a user and mount namespace with its own binfmt_misc
# where aarch64 ELF starts under qemu (the header says why), unless the
# machine has such a registration already.
binfmt_how=
binfmt_probe() {
    local r
    for r in /proc/sys/fs/binfmt_misc/qemu-aarch64 /proc/sys/fs/binfmt_misc/aarch64; do
        if [[ -e "$r" ]] && head -n 1 "$r" | grep -qx enabled; then
            binfmt_how="the machine's registration ${r##*/}"
            return
        fi
    done
    if unshare --user --map-root-user --mount --propagation private \
        "$self" --in-binfmt-namespace true; then
        binfmt_how="binfmt_misc of the test's own namespace"
    else
        die "an emulated aarch64 process cannot start the launcher's aarch64 python without binfmt_misc, and this kernel ($(uname -r)) gives no binfmt_misc of a user namespace's own (Linux 6.7+). Register qemu for aarch64 ELF machine-wide with:
  apt-get install -y binfmt-support && update-binfmts --enable qemu-aarch64"
    fi
}
in_binfmt() {
    if [[ "$binfmt_how" == the\ machine* ]]; then
        QEMU_LD_PREFIX="$sysroot" "$@"
    else
        QEMU_LD_PREFIX="$sysroot" unshare --user --map-root-user --mount --propagation private \
            "$self" --in-binfmt-namespace "$@"
    fi
}

failed=0
# check NAME JSON PYTHON-EXPRESSION: the expression, over the result `r`, holds.
check() {
    # A key the program did not print (it failed first) fails the check.
    if "$pyhost" -c '
import json, sys
r = json.loads(sys.argv[1])
try:
    ok = eval(sys.argv[2])
except (KeyError, TypeError, AttributeError):
    ok = False
sys.exit(0 if ok else 1)' "$2" "$3"; then
        echo "  ok    $1" >&2
    else
        echo "  FAIL  $1: $3" >&2
        failed=1
    fi
}
# run_smoke STEP-NAME COMMAND...: runs the program; its JSON line is $smoke_json
run_smoke() {
    local name=$1 out status=0
    shift
    step "$name"
    out=$("$@" | tail -n 1) || status=$?
    echo "$out" >&2
    if ((status)) || ! "$pyhost" -c 'import json, sys; json.loads(sys.argv[1])' "$out" 2>/dev/null; then
        done_step "FAILED (exit code $status, no JSON line)"
        failed=1
        smoke_json='{}'
        return
    fi
    smoke_json=$out
    done_step "program's own wall time $("$pyhost" -c 'import json, sys; print(json.loads(sys.argv[1])["script_wall_s"])' "$out") s"
}
common_checks() {
    check "aarch64 Python 3.11" "$1" 'r["machine"] == "aarch64" and r["python"].startswith("3.11.")'
    check "jax and jaxlib $JAX_VERSION" "$1" "r['jax'] == r['jaxlib'] == '$JAX_VERSION'"
    check "jit, matmul, tanh: jnp = numpy" "$1" 'r["jnp"] is True'
    check "jnp.linalg.solve = numpy, A x = b" "$1" 'r["solve"] is True'
    check "jnp.linalg.eigh = numpy, A v = v w" "$1" 'r["eigh"] is True'
}

# 4. JAX without the launcher, in the emulated venv Python: the environment.
#    (With the cyxla wheel installed, jax_plugins.cyxla warns that platform
#    `cyxla` has no real PJRT plugin, and JAX runs on its own CPU backend.)
run_smoke "JAX, no launcher (--plain)" arm "$venv/bin/python" "$smoke" --plain
common_checks "$smoke_json"
if [[ -n "$cyxla_wheel" ]]; then
    check "cyxla warns: no aarch64 PJRT plugin on PyPI, use --platform cpu" "$smoke_json" \
        'len(r["cyxla_warnings"]) == 1 and "PyPI has none" in r["cyxla_warnings"][0] and "--platform cpu" in r["cyxla_warnings"][0]'
fi

# 5. binfmt: the emulated Python starts an aarch64 child of its own.
step "binfmt: aarch64 child process"
binfmt_probe
child=$(in_binfmt "$venv/bin/python" -c 'import platform, subprocess, sys; print(platform.machine(), subprocess.run([sys.executable, "-c", "import platform; print(platform.machine())"], capture_output=True, text=True, check=True).stdout.strip())') || child="failed"
if [[ "$child" == "aarch64 aarch64" ]]; then
    done_step "ok, $binfmt_how"
else
    done_step "FAILED: $child"
    failed=1
fi

# 6. The wheel's launcher runs the program, the guests on JAX's cpu platform.
if [[ -n "$cyxla_wheel" ]]; then
    # As in an activated venv: the launcher finds COMMAND `python` on the
    # PATH. The compile cache walks its folder from "/", which qemu maps to
    # the sysroot: the folder is named, so that it is the sysroot's
    # var/cache/cyxla whatever HOME is (the emulated processes' own).
    PATH="$venv/bin:$PATH" CYXLA_CACHE_DIR=/var/cache/cyxla run_smoke "cyxla-host --platform cpu (wheel)" in_binfmt "$venv/bin/cyxla-host" --platform cpu \
        --allow rms_norm --allow trap --allow spin --limit "call_timeout=$call_timeout" \
        -- python "$smoke"
    j=$smoke_json
    common_checks "$j"
    check "launched: JAX_PLATFORMS=cpu, the wheel's library" "$j" \
        'r["jax_platforms"] == "cpu" and (r["library"] or "").endswith("site-packages/jax_plugins/cyxla/libcyxla_pjrt.so")'
    check "rms_norm guest (jit) = jnp formula, on cpu" "$j" 'r["rms_norm"] is True and r["rms_norm_on_cpu"] is True'
    check "rms_norm guest (vmap) = jnp formula" "$j" 'r["rms_norm_vmap"] is True'
    check "trap: JaxRuntimeError naming the trap" "$j" \
        '(r["trap"] or "").startswith("JaxRuntimeError") and "trap" in r["trap"]'
    check "call after the trap works" "$j" 'r["after_trap"] is True'
    check "spin: JaxRuntimeError DEADLINE_EXCEEDED" "$j" \
        '(r["spin"] or "").startswith("JaxRuntimeError") and "DEADLINE_EXCEEDED" in r["spin"]'
    check "call after the deadline works" "$j" 'r["after_spin"] is True'
fi

echo >&2
echo "aarch64 JAX smoke test (qemu-aarch64 user emulation; wall times of this machine's steps, not performance figures):"
printf '  %s\n' "${summary[@]}"
printf '  %-34s %7s s\n' "total" "$(awk -v a="$t_start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')"
echo "  disk: $(du -sh "$sysroot" | cut -f1) sysroot, $(du -sh "$venv" | cut -f1) venv, $(du -sh "$wheelhouse" | cut -f1) wheelhouse, $(du -sh "$top" | cut -f1) in all (target/aarch64-python)"
echo "  emulated CPU: ${QEMU_CPU:-max} (QEMU_CPU)"
if ((plain)); then
    echo "  mode: --plain, JAX alone: the cyxla wheel was neither needed nor tested"
else
    echo "  wheel: $(basename "$cyxla_wheel")"
fi
if ((failed)); then
    echo "aarch64_jax.sh: FAILED (above)" >&2
    exit 1
fi
echo "aarch64_jax.sh: all checks passed"
