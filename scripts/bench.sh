#!/usr/bin/env bash
# Runs the benches of cyxla-host and prints one table of the performance
# goals P1..P8 of issue 17 (and memory rows): each figure measured side by
# side, interleaved, in one run of its bench; its goal beside it and whether
# it is met; the CPU, and the load average before and after; the peak RSS
# of each bench process.
#
# Usage: scripts/bench.sh [--quick] [--verbose] [--lapack venv|wheel] [ID...]
#   ID         P1 .. P8, or M (memory); default: all. Each bench runs once
#              for all the ids it serves:
#                dispatch P1, kernels P2 P3, deadline P4, lapack P5 P6,
#                startup P7, devices P8 M
#   --quick    few rounds of each bench: checks that everything runs and
#              reports (about 3 minutes once built); not figures to quote
#   --verbose  show each bench's own report as it runs (always kept in
#              $CARGO_TARGET_DIR/bench/<bench>.log)
#   --lapack wheel
#              P5 and P6 on the OpenBLAS the wheel installs (scipy-openblas32
#              at scripts/wheel.py's pin, fetched from PyPI into
#              $CARGO_TARGET_DIR/bench/) instead of the one the checkout's
#              .venv finds; `--lapack venv` is the default
#
# The benches are built as the wheel's binaries are (scripts/release_build.sh),
# sharing that build. Criterion's own sampling is skipped
# (CYXLA_BENCH_SUMMARY_ONLY); run `cargo bench -p cyxla-benches --bench NAME`
# for it. Needs scripts/setup.sh.
# Exit code 0 when every bench ran and reported (met or not), 1 if one
# failed or did not report, 2 for a usage error.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

quick=0
verbose=0
lapack=venv
ids=()
while (($#)); do
    case "$1" in
        --quick) quick=1 ;;
        --verbose | -v) verbose=1 ;;
        --lapack)
            shift
            case "${1:-}" in
                venv | wheel) lapack="$1" ;;
                *) echo "scripts/bench.sh: --lapack takes venv or wheel, got '${1:-}'" >&2; exit 2 ;;
            esac
            ;;
        -h | --help)
            sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        P[1-8] | M) ids+=("$1") ;;
        *) echo "scripts/bench.sh: unknown argument $1 (ids are P1..P8 and M; see --help)" >&2; exit 2 ;;
    esac
    shift
done
if ((${#ids[@]} == 0)); then ids=(P1 P2 P3 P4 P5 P6 P7 P8 M); fi
wants() {
    local id
    for id in "${ids[@]}"; do [[ $id == "$1" ]] && return 0; done
    return 1
}

if ! command -v cargo >/dev/null 2>&1; then
    echo "scripts/bench.sh: cargo not found; install Rust with scripts/setup.sh" >&2
    exit 2
fi

# Bench, its arguments, and the table rows it reports, in running order.
runs=()
rows=()
if wants P1; then runs+=("dispatch|"); rows+=(P1); fi
if wants P2 || wants P3; then runs+=("kernels|"); fi
if wants P2; then rows+=(P2-1M P2-16M); fi
if wants P3; then rows+=(P3); fi
if wants P4; then runs+=("deadline|"); rows+=(P4); fi
if wants P5 && wants P6; then
    runs+=("lapack|")
    rows+=(P5 P6)
elif wants P5; then
    runs+=("lapack|_512")
    rows+=(P5)
elif wants P6; then
    runs+=("lapack|4096x")
    rows+=(P6)
fi
if wants P7; then runs+=("startup|"); rows+=(P7); fi
if wants P8 || wants M; then runs+=("devices|"); fi
if wants P8; then rows+=(P8); fi
if wants M; then rows+=(M-idle M-load M-instance); fi

target_dir="${CARGO_TARGET_DIR:-$root/target}"
logs="$target_dir/bench"
mkdir -p "$logs"
results="$logs/results.txt"
: >"$results"

export CYXLA_BENCH_SUMMARY_ONLY=1
if ((quick)); then export CYXLA_BENCH_QUICK=1; else unset CYXLA_BENCH_QUICK; fi
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-1}"

if [[ $lapack == wheel ]] && { wants P5 || wants P6; }; then
    # The wheel's OpenBLAS: scipy-openblas32 at the wheel's pin, unpacked
    # (pip download + unzip: nothing is installed into the .venv).
    requirement="$("$root/.venv/bin/python" -c 'import sys; sys.path.insert(0, "scripts"); import wheel; print(wheel.OPENBLAS_REQUIREMENT)')"
    wheel_dir="$logs/wheel-openblas"
    rm -rf "$wheel_dir"
    mkdir -p "$wheel_dir"
    echo "scripts/bench.sh: fetching the wheel's OpenBLAS ($requirement)" >&2
    "$root/.venv/bin/python" -m pip download -q --no-deps --only-binary=:all: -d "$wheel_dir" "$requirement" >&2
    "$root/.venv/bin/python" -m zipfile -e "$wheel_dir"/scipy_openblas32-*.whl "$wheel_dir/unpacked"
    export CYXLA_LAPACK="$wheel_dir/unpacked/scipy_openblas32/lib/libscipy_openblas.so"
    echo "scripts/bench.sh: LAPACK from $(basename "$wheel_dir"/scipy_openblas32-*.whl)" >&2
fi

echo "scripts/bench.sh: building the benches (release profile, as the wheel's binaries)" >&2
benches="$(scripts/release_build.sh --benches)"
# A bench as `cargo bench -p cyxla-benches --bench NAME -- ARGS` runs it:
# from the crate's folder, with `--bench`.
run_bench() {
    local bench=$1
    shift
    (cd "$root/benches" && exec "$benches/$bench" --bench "$@")
}

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
started=$SECONDS
timings=()
for run in "${runs[@]}"; do
    bench="${run%%|*}"
    filter="${run#*|}"
    args=()
    if [[ -n $filter ]]; then args=("$filter"); fi
    log="$logs/$bench.log"
    echo "scripts/bench.sh: running $bench${filter:+ ($filter)} (log: $log)" >&2
    t0=$SECONDS
    status=0
    if ((verbose)); then
        run_bench "$bench" ${args[@]+"${args[@]}"} 2>&1 | tee "$log" >&2 ||
            status=$?
    else
        run_bench "$bench" ${args[@]+"${args[@]}"} >"$log" 2>&1 ||
            status=$?
    fi
    if ((status != 0)); then
        echo "scripts/bench.sh: bench $bench failed (exit code $status); the end of $log:" >&2
        tail -n 40 "$log" >&2
        exit 1
    fi
    grep '^cyxla-bench ' "$log" >>"$results" || true
    timings+=("$bench $((SECONDS - t0)) s")
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

# Measures of the rows (what the goals of issue 17 are about).
measure() {
    case "$1" in
        P1) echo "per-call cost of a 16-f32 copy, sandboxed minus native" ;;
        P2-1M) echo "rms_norm 1M f32, same C++ source: guest / native" ;;
        P2-16M) echo "rms_norm 16M f32, same C++ source: guest / native" ;;
        P3) echo "matmul f32 256x256 (i-k-j), same C++ source: guest / native" ;;
        P4) echo "deadlines on / off (the default mechanism)" ;;
        P5) echo "LAPACK n=512 / JAX's CPU backend" ;;
        P6) echo "LAPACK batched 4096x8x8 / JAX's CPU backend" ;;
        P7) echo "start with 10 guests, warm compile cache" ;;
        P8) echo "4 devices / 1 device, concurrent guest calls, throughput" ;;
        M-idle) echo "memory: process serving 10 guests, idle" ;;
        M-load) echo "memory: same process under the 4-device load" ;;
        M-instance) echo "memory: one idle instance" ;;
    esac
}

missing=0
table="| id | measure | result | goal | met |"$'\n'"|---|---|---|---|---|"
for row in "${rows[@]}"; do
    line="$(grep "^cyxla-bench $row " "$results" | tail -n 1 || true)"
    if [[ -z $line ]]; then
        table+=$'\n'"| $row | $(measure "$row") | NO RESULT (see the logs) | | |"
        missing=1
        continue
    fi
    figure="${line#* | }"
    fields="${line%% | *}"
    goal="$(sed -n 's/.* goal=\([^ ]*\).*/\1/p' <<<"$fields")"
    met="$(sed -n 's/.* met=\([^ ]*\).*/\1/p' <<<"$fields")"
    case "$met" in
        yes) met=met ;;
        no) met="not met" ;;
        *) met="-" ;;
    esac
    [[ $goal == - ]] && goal=""
    table+=$'\n'"| ${row/-/ } | $(measure "$row") | $figure | $goal | $met |"
done

rss=""
while read -r _ id rest; do
    figure="${rest#* | }"
    rss+="${rss:+, }${id#RSS-} $figure"
done < <(grep '^cyxla-bench RSS-' "$results" || true)

echo
if ((quick)); then
    echo "QUICK RUN (--quick: few rounds; these figures are not to be quoted)"
fi
echo "$table"
echo
# The CPU, so that a figure says which machine it came from (ratios differ
# between microarchitectures: docs/performance.md keeps a table per machine).
cpu_name=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
cpu_family=$(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -1)
cpu_model=$(sed -n 's/^model[[:space:]]*: //p' /proc/cpuinfo | head -1)
cpu="${cpu_name:-$(uname -m)}"
if [[ -n "$cpu_family" ]]; then
    cpu="$cpu (family $cpu_family, model $cpu_model$(grep -qw avx512f /proc/cpuinfo && echo ", AVX-512"))"
fi
echo "machine: $cpu, $(nproc) cores; load average (1, 5, 15 min) before: $load_before; after: $load_after"
echo "peak RSS of the bench processes: ${rss:-none reported}"
echo "bench times: $(IFS=,; echo "${timings[*]}" | sed 's/,/, /g') (total $((SECONDS - started)) s)"
echo "each bench's own report: $logs/<bench>.log"
if ((missing)); then
    echo "scripts/bench.sh: a bench did not report every row (NO RESULT above)" >&2
    exit 1
fi
