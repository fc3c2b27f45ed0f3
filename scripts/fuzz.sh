#!/usr/bin/env bash
# Fuzzes every reader of outside data with libFuzzer: builds the targets of tests/fuzz with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer in build-fuzz/, then runs each for SECONDS
# (default 60), one after the other (NOPESCOPE_FUZZ_PARALLEL=N: N at once), starting from its seed corpus (tests/fuzz/corpus/<target>)
# and the inputs earlier runs found (build-fuzz/corpus/<target>). A finding (crash, leak, hang,
# sanitizer report) is written to build-fuzz/findings/<target>/ and ends the script with status 1:
# copy it into tests/fuzz/corpus/<target>/ once fixed, so that the replay test keeps it fixed.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     targets: checkpoint saved_model snapshot_json
#                                             run_config metrics_csv evaluations_csv
#                                             adjacency_csv cli_flags
set -euo pipefail
cd "$(dirname "$0")/.."

all=(checkpoint saved_model snapshot_json run_config metrics_csv evaluations_csv adjacency_csv
    cli_flags)
seconds=60
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then
    seconds=$1
    shift
fi
if [ "$seconds" -lt 1 ]; then
    echo "fuzz.sh: SECONDS must be at least 1" >&2
    exit 2
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=("${all[@]}")
fi
for t in "${targets[@]}"; do
    if [[ " ${all[*]} " != *" $t "* ]]; then
        echo "fuzz.sh: unknown target '$t' (allowed: ${all[*]}; or a number of seconds first)" >&2
        exit 2
    fi
done
parallel=${NOPESCOPE_FUZZ_PARALLEL:-1}
if ! [[ $parallel =~ ^[1-9][0-9]*$ ]]; then
    echo "fuzz.sh: NOPESCOPE_FUZZ_PARALLEL must be a number from 1" >&2
    exit 2
fi

scripts/install-deps.sh clang libclang-rt-14-dev
build_dir=${NOPESCOPE_FUZZ_BUILD_DIR:-build-fuzz}
cmake -S . -B "$build_dir" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DNOPESCOPE_FUZZ=ON >/dev/null
cmake --build "$build_dir" -j "${NOPESCOPE_JOBS:-$(nproc)}" \
    --target "${targets[@]/#/fuzz_}"

# LibTorch's own leak on a rejected archive is suppressed (tests/sanitizers/lsan.supp). A size
# read from a file that asks for more memory than there is fails as it does outside the fuzzer (the
# allocation throws std::bad_alloc, which the readers report); what counts as a finding is memory
# that grows past 8 GB (-rss_limit_mb; LibTorch alone asks for up to a few GB when a damaged
# length field in an archive says so), not one refused allocation (-malloc_limit_mb above it).
export LSAN_OPTIONS="fast_unwind_on_malloc=0:suppressions=$PWD/tests/sanitizers/lsan.supp"
export ASAN_OPTIONS="allocator_may_return_null=1"

# Fuzzes one target; prints its figures; status 1 on a finding.
fuzz_one() {
    local t=$1
    local corpus="$build_dir/corpus/$t" findings="$build_dir/findings/$t"
    local log="$build_dir/fuzz-$t.log" status=0
    mkdir -p "$corpus" "$findings"
    if ! "$build_dir/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=30 \
        -rss_limit_mb=8192 -malloc_limit_mb=1048576 -print_final_stats=1 -artifact_prefix="$findings/" \
        "$corpus" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
        echo "fuzz: $t found a problem: $(ls "$findings" | head -3) (log $log)" >&2
        status=1
    fi
    # the last status line: executions, coverage (cov: edges, ft: features), corpus size
    local runs cov corp
    runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$' || true)
    local rate
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
    cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | grep -o 'cov: [0-9]* ft: [0-9]*' || true)
    corp=$(grep -E '^#[0-9]+' "$log" | tail -1 | grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' || true)
    echo "fuzz: $t: ${runs:-?} executions (${rate:-?} a second), ${cov:-cov ?}, ${corp:-corp ?}"
    return $status
}

# NOPESCOPE_FUZZ_PARALLEL targets at once (default 1: one core each)
status=0
pids=()
for t in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do
        sleep 1
    done
    echo "fuzz: $t for $seconds s"
    fuzz_one "$t" &
    pids+=($!)
done
for p in "${pids[@]}"; do
    wait "$p" || status=1
done
exit $status
