#!/usr/bin/env bash
# Starts N ranks of `nopescope-cli train --distributed` on this machine, as torchrun would: each
# with MASTER_ADDR, MASTER_PORT (a free port unless set), RANK, WORLD_SIZE and LOCAL_RANK, and
# the machine's cores split between them unless --threads is given. Rank 0 prints the progress
# and writes the run folder. When one rank fails, the others are stopped; the script exits with
# the first failure's status.
#   scripts/launch-local.sh N [train flags]       e.g. scripts/launch-local.sh 2 --task addition
# Uses the build in $NOPESCOPE_BUILD_DIR (default build/), as scripts/run.sh does.
set -euo pipefail
if ((BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 1))); then
    echo "launch-local: needs bash 5.1 or later (wait -n -p); this is $BASH_VERSION" >&2
    exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${NOPESCOPE_BUILD_DIR:-$root/build}
cli="$build_dir/app/nopescope-cli"

usage="usage: scripts/launch-local.sh N [train flags] (N: processes, 1 to 64)"
n=${1:-}
if ! [[ "$n" =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 64 ]; then
    echo "launch-local: N is '${n}' (allowed: 1 to 64)" >&2
    echo "$usage" >&2
    exit 2
fi
shift
if [ ! -x "$cli" ]; then
    echo "launch-local: $cli is not built (scripts/build.sh builds it; NOPESCOPE_BUILD_DIR names another build)" >&2
    exit 2
fi

threads=()
if [[ " $* " != *" --threads "* && " $* " != *" --threads="* ]]; then
    per=$(($(nproc) / n))
    threads=(--threads $((per > 0 ? per : 1)))
fi

port_is_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=${MASTER_PORT:-}
if [ -z "$port" ]; then
    for _ in $(seq 100); do
        candidate=$((20000 + RANDOM % 40000))
        if port_is_free "$candidate"; then
            port=$candidate
            break
        fi
    done
    [ -n "$port" ] || { echo "launch-local: no free TCP port found; set MASTER_PORT" >&2; exit 1; }
fi
export MASTER_ADDR=${MASTER_ADDR:-127.0.0.1} MASTER_PORT=$port WORLD_SIZE=$n

pids=()
stop_all() { kill "${pids[@]}" 2>/dev/null || true; }
trap 'stop_all' TERM
# Ctrl-C reaches every rank (they stop together and rank 0 writes its files); the script waits
# for them instead of returning to the prompt in the middle of their output.
trap ':' INT
for ((rank = 0; rank < n; rank++)); do
    RANK=$rank LOCAL_RANK=$rank "$cli" train --distributed "${threads[@]}" "$@" &
    pids+=($!)
done

status=0
running=("${pids[@]}")
while [ ${#running[@]} -gt 0 ]; do
    rc=0
    finished=""
    wait -n -p finished "${running[@]}" || rc=$?
    if [ -z "${finished:-}" ]; then
        continue  # a signal interrupted the wait; the ranks are still running
    fi
    left=()
    for pid in "${running[@]}"; do
        [ "$pid" = "$finished" ] || left+=("$pid")
    done
    running=("${left[@]}")
    if [ "$rc" -ne 0 ] && [ "$status" -eq 0 ]; then
        status=$rc
        stop_all  # the others would wait for it until their timeout
    fi
done
exit "$status"
