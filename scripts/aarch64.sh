#!/usr/bin/env bash
# Linux on 64-bit Arm (issue 44), tested on x86-64 under qemu-aarch64 user
# emulation; part of scripts/test.sh. Builds the aarch64 wheel
# (scripts/wheel.sh --target aarch64), then the sandbox's tests (crate
# cyxla-sandbox) for aarch64-unknown-linux-gnu in release, by the same
# cargo-zigbuild with the same flags (scripts/zigbuild.sh), so the two
# builds share every crate they have in common. Then runs under qemu the
# suites that cover the sandbox on that target: traps and hostile guests
# (tests/suite), poll-page deadlines (the engine's unit tests, hostile::,
# deadline_deep_calls), faults with foreign handlers (fault_handlers), fork
# (fork), the memory budget, allocation-free calls (budget, steady_state)
# and the differential fuzzer's smoke run (fuzz_smoke::); and last the JAX
# smoke test of the wheel in an emulated aarch64 Python
# (scripts/aarch64_jax.sh). Prints the test counts per suite and the
# script's wall time.
#
# Installs nothing (scripts/setup.sh does): it stops with the line to run
# when the emulator, the aarch64 sysroot, the cross compilers or Rust's
# aarch64 target are missing. Builds into a target folder of its own
# (target/aarch64-build, the wheel in its wheels-aarch64/), so that it can
# run beside the x86-64 builds and tests without waiting for their locks,
# with CARGO_BUILD_JOBS (default 2) jobs. AARCH64_BUILD_NICE (default 0)
# is the niceness of the two builds: scripts/test.sh gives 19, so that they
# take only the CPU its x86-64 tests leave idle; the emulated tests run at
# the caller's priority, so that what bounds their time is not starved.
#
# Emulation shows correctness, not speed: qemu translates every block of
# guest and host code, so nothing it times says how fast aarch64 is, and it
# runs aarch64's weaker memory model on x86-64's stronger one, so threads
# are not tested for aarch64's orderings either. What is left out, and why:
#
# - plugins:: and stress: they load the XLA CPU plugin of .venv, an x86-64
#   library (an aarch64 one is part of the JAX smoke test, not here).
# - cache_trust::: the compile cache walks its path from "/" with openat,
#   and qemu's -L maps "/" to the sysroot: the tests meet the sysroot's
#   folders, not theirs.
# - deadline_signal_mask: qemu keeps real-time signals for itself, so a
#   thread cannot block SIGRTMAX, the test's precondition.
# - hostile::loops_stop_within_50ms_of_the_deadline and
#   hostile_anchor::a_loop_in_the_panic_message_export_after_a_trap_leaves_the_trap_error:
#   they bound how late past its deadline a call ends (50 ms), which an
#   emulated process on a loaded machine misses now and then; every other
#   deadline test still checks that the call ends with DEADLINE_EXCEEDED.
# - deadline_threads, overshoot: they bound times (instantiation within the
#   300 ms deadline on 8 threads, overshoot in ms) that emulation exceeds.
# - limits::compile_threads_bound_the_threads_that_compile and
#   limits::copy_threads_bound_the_threads_that_copy: they start their own
#   binary again, which an emulated binary cannot do without binfmt
#   (fault_handlers does it through CYXLA_TEST_RUNNER).
# - deadline_profiler, interrupts, total_memory,
#   fuzz_smoke::guest_module_fuzz_findings: qemu 7.2 keeps bookkeeping for every page of every mapping it
#   ever saw, and each wasm instance reserves gigabytes of address space:
#   these tests, which instantiate thousands of times or measure memory, grow
#   qemu past 4 GiB. For the same reason tests/suite runs one module per
#   process, the fuzz smoke runs
#   CYXLA_FUZZ_ITERATIONS=300 (3000 natively) and every emulated process is
#   killed past ARM_RSS_LIMIT_KB (default 6 GiB) rather than the machine's
#   other work.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
self="$root/scripts/aarch64.sh"
sysroot=/usr/aarch64-linux-gnu

# As the cargo runner: qemu with a cap on resident memory.
if [[ "${1:-}" == --qemu ]]; then
    shift
    limit_kb=${ARM_RSS_LIMIT_KB:-6000000}
    qemu-aarch64-static -L "$sysroot" "$@" &
    pid=$!
    trap 'kill -TERM $pid 2>/dev/null' INT TERM
    while kill -0 "$pid" 2>/dev/null; do
        rss=$(awk '/^VmRSS/{print $2}' "/proc/$pid/status" 2>/dev/null || true)
        if [[ "${rss:-0}" -gt "$limit_kb" ]]; then
            echo "aarch64.sh: qemu over ${limit_kb} kB resident: killed" >&2
            kill -KILL "$pid" 2>/dev/null || true
        fi
        sleep 0.3
    done
    status=0
    wait "$pid" || status=$?
    # Died of a signal: die of it too (fault_handlers checks a child's
    # signal).
    if ((status > 128 && status < 128 + 32)); then
        trap - INT TERM
        kill -s $((status - 128)) $$
    fi
    exit "$status"
fi

start=$(date +%s)
cd "$root"
missing=()
command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static)
[[ -e "$sysroot/lib/ld-linux-aarch64.so.1" ]] || missing+=(libc6-arm64-cross)
command -v aarch64-linux-gnu-gcc >/dev/null || missing+=(gcc-aarch64-linux-gnu)
# tests/build.rs builds a C++ library of native handlers for the target.
command -v aarch64-linux-gnu-g++ >/dev/null || missing+=(g++-aarch64-linux-gnu)
if ((${#missing[@]})); then
    echo "aarch64.sh: missing ${missing[*]}; install them with scripts/setup.sh --aarch64, or:" >&2
    echo "  apt-get install -y qemu-user-static libc6-arm64-cross gcc-aarch64-linux-gnu g++-aarch64-linux-gnu" >&2
    exit 1
fi
if ! rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu; then
    echo "aarch64.sh: missing Rust's aarch64 target; add it with scripts/setup.sh --aarch64, or:" >&2
    echo "  rustup target add aarch64-unknown-linux-gnu" >&2
    exit 1
fi

export CARGO_TARGET_DIR="$root/target/aarch64-build"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
# The C++ library of native handlers that tests/build.rs builds with $CXX
# is loaded by the aarch64 tests; build scripts and proc macros stay
# x86-64. Set for the wheel's build too: build scripts that read these
# variables would otherwise build again for the tests (cargo-zigbuild's
# CC_/CXX_aarch64_unknown_linux_gnu, zig, still compile the product's C).
export CXX=aarch64-linux-gnu-g++ HOST_CC=cc HOST_CXX=c++
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="$self --qemu"
# fault_handlers starts itself again for each case: through qemu too.
export CYXLA_TEST_RUNNER="$self --qemu"
export CYXLA_FUZZ_ITERATIONS="${CYXLA_FUZZ_ITERATIONS:-300}"
# Guests are wasm: the x86-64 build's guests/out serves (guests/build.sh
# brings it up to date).
bash guests/build.sh >/dev/null

# The product as users get it: the aarch64 wheel, a release build linked by
# zig against glibc 2.28.
build_start=$(date +%s)
build_nice=${AARCH64_BUILD_NICE:-0}
wheel=$(nice -n "$build_nice" scripts/wheel.sh --target aarch64)
wheel_s=$(($(date +%s) - build_start))
# The tests, on top of it. cargo-zigbuild takes the glibc version after the
# triple and gives cargo the plain triple (so the runner above applies).
target=aarch64-unknown-linux-gnu.2.28
test_cmd=(scripts/zigbuild.sh test --release -p cyxla-sandbox --target "$target")
cargo_test() { "${test_cmd[@]}" "$@"; }
build_start=$(date +%s)
nice -n "$build_nice" "${test_cmd[@]}" --no-run
tests_s=$(($(date +%s) - build_start))

results=()
failed=0
# suite NAME CARGO-TEST-ARGS... -- TEST-ARGS...
suite() {
    local name=$1 log
    shift
    log=$(mktemp)
    echo "== $name" >&2
    if cargo_test "$@" 2>&1 | tee "$log" >&2; then :; else failed=1; fi
    local counts
    counts=$(awk '/^test result:/ {p+=$4; f+=$6; i+=$8} END {printf "%d passed, %d failed, %d ignored", p, f, i}' "$log")
    if ! grep -q '^test result:' "$log"; then
        counts="did not finish"
        failed=1
    fi
    # The summary names what failed: CI keeps only the log's last lines.
    local failures
    failures=$(sed -n 's/^test \(.*\) \.\.\. FAILED$/\1/p' "$log" | paste -sd ' ' -)
    if [[ -n "$failures" ]]; then counts="$counts: $failures"; fi
    results+=("$(printf '%-26s %s' "$name" "$counts")")
    rm -f "$log"
}

suite "unit (lib)" --lib
for module in bounds bundled hostile hostile_anchor limits reliability \
    sandbox stats unwritten; do
    suite "suite $module::" --test suite -- "$module::" \
        --skip limits::compile_threads_bound_the_threads_that_compile \
        --skip limits::copy_threads_bound_the_threads_that_copy \
        --skip hostile::loops_stop_within_50ms_of_the_deadline \
        --skip hostile_anchor::a_loop_in_the_panic_message_export_after_a_trap_leaves_the_trap_error
done
# The fuzz smoke, one test per process (qemu's memory, above).
for test in $(cargo_test -q --test suite -- \
    --list fuzz_smoke:: 2>/dev/null | sed -n 's/: test$//p'); do
    # Replays every finding of host/tests/fuzz_findings, a fresh instance
    # each: past the memory cap under qemu 7.2 (above).
    [[ "$test" == fuzz_smoke::guest_module_fuzz_findings ]] && continue
    suite "suite $test" --test suite -- "$test" --exact
done
suite "fault_handlers" --test fault_handlers
suite "fork" --test fork
suite "deadline_deep_calls" --test deadline_deep_calls
suite "budget" --test budget
suite "steady_state" --test steady_state

# The wheel installed into an emulated aarch64 Python with JAX, its
# launcher running the JAX smoke test (scripts/aarch64_jax.sh says what it
# checks).
echo "== JAX smoke test" >&2
if scripts/aarch64_jax.sh >&2; then
    results+=("$(printf '%-26s %s' "JAX smoke test" "passed ($(basename "$wheel"))")")
else
    results+=("$(printf '%-26s %s' "JAX smoke test" "FAILED (above)")")
    failed=1
fi

echo
echo "aarch64 (qemu-aarch64 $(qemu-aarch64-static --version | sed -n 's/.*version \([^ ]*\).*/\1/p')):"
printf '  %s\n' "${results[@]}"
echo "wall time: $(($(date +%s) - start)) s (the wheel's build ${wheel_s} s, the tests' build on top of it ${tests_s} s)"
exit "$failed"
