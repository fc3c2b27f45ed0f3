#!/usr/bin/env bash
# The Slurm executor against a real Slurm (.ci/run runs it after the suite, about 30 s): installs Debian's
# slurm-wlm and munge when missing, starts a one-node cluster on this machine (munged, slurmctld
# and slurmd on localhost, with their own key, configuration, ports and folders under a temporary
# folder, so that nothing of a Slurm already installed is touched), then
#   1. runs a small sweep through it and checks sweep.csv and summary.csv against the same sweep
#      run by the local executor;
#   2. submits one with --detach and a task limit of 1, cancels a queued task with scancel, and
#      checks that --resume follows the rest, then submits the cancelled run alone;
# and stops the daemons. Needs root (the daemons and apt-get) and a built nopescope-cli (as
# scripts/run.sh finds it: NOPESCOPE_BUILD_DIR, else build/).
#   tests/slurm/run.sh            KEEP=1 keeps the temporary folder for a look afterwards
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cli=$root/${NOPESCOPE_BUILD_DIR:-build}/app/nopescope-cli
[[ ${NOPESCOPE_BUILD_DIR:-} == /* ]] && cli=$NOPESCOPE_BUILD_DIR/app/nopescope-cli
if [[ ! -x $cli ]]; then
    echo "tests/slurm/run.sh: no $cli (build first: scripts/build.sh)" >&2
    exit 2
fi
if [[ $(id -u) != 0 ]]; then
    echo "tests/slurm/run.sh: needs root to start munged, slurmctld and slurmd" >&2
    exit 2
fi
start=$SECONDS
if ! command -v slurmctld > /dev/null || ! command -v munged > /dev/null; then
    echo "installing slurm-wlm and munge"
    apt-get install -y --no-install-recommends slurm-wlm munge > /dev/null ||
        { apt-get update > /dev/null && apt-get install -y --no-install-recommends slurm-wlm munge > /dev/null; }
fi

work=$(mktemp -d /tmp/nopescope-slurm.XXXXXX)
cleanup() {
    local rc=$?
    scontrol shutdown > /dev/null 2>&1 || true
    for pidfile in "$work"/slurmd.pid "$work"/slurmctld.pid "$work"/munged.pid; do
        [[ -f $pidfile ]] && kill "$(cat "$pidfile")" 2> /dev/null || true
    done
    sleep 1
    if ((rc != 0)); then
        echo "--- the end of the daemons' logs ($work/log) ---" >&2
        tail -n 15 "$work"/log/*.log >&2 || true
    fi
    [[ -n ${KEEP:-} ]] && echo "kept $work" >&2 || rm -rf "$work"
    exit "$rc"
}
trap cleanup EXIT
mkdir -p "$work"/{state,spool,log,munge}
chmod 700 "$work/munge"

# munge with its own key and socket
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
munged --force --key-file="$work/munge/munge.key" --socket="$work/munge/munge.socket" \
    --pid-file="$work/munged.pid" --seed-file="$work/munge/seed" \
    --log-file="$work/log/munged.log"

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
host=$(hostname -s)
cpus=$(nproc)
cat > "$work/slurm.conf" << EOF
ClusterName=nopescope-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=600
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
NodeName=$host CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$work/slurm.conf
slurmctld -i
slurmd
for _ in $(seq 60); do
    sinfo -h -o %T 2> /dev/null | grep -q idle && break
    sleep 1
done
sinfo -h -o %T | grep -q idle || { echo "the node did not come up" >&2; exit 1; }
echo "cluster up in $((SECONDS - start)) s: $(sinfo -h -o '%P %D %c %T')"

export NOPESCOPE_SLURM_POLL_SECONDS=1
export NOPESCOPE_SLURM_GRACE_SECONDS=3  # a local file system shows a status file at once
grid=(--grid "layers=1,2" --seeds 2 --dim 32 --heads 2 --samples 8 --task reversal --threads 1)
fail() {
    echo "FAILED: $*" >&2
    exit 1
}

# 1. the same sweep through both executors
"$cli" sweep "${grid[@]}" --jobs 2 --out "$work/local" > "$work/local.out"
"$cli" sweep "${grid[@]}" --executor slurm --partition test --time 00:05:00 \
    --array-parallelism 2 --out "$work/slurm" > "$work/slurm.out"
cmp "$work/local/sweep.csv" "$work/slurm/sweep.csv" || fail "sweep.csv differs"
cmp "$work/local/summary.csv" "$work/slurm/summary.csv" || fail "summary.csv differs"
diff <(grep -v '^wrote ' "$work/local.out") <(grep -v '^wrote ' "$work/slurm.out") ||
    fail "the summary tables differ"
echo "1. the sweep through Slurm gives the local sweep's sweep.csv and summary.csv ($((SECONDS - start)) s)"

# 2. detached, one task cancelled while queued, resumed
"$cli" sweep "${grid[@]}" --executor slurm --array-parallelism 1 --detach --out "$work/detached" \
    2> "$work/detached.err"
job=$(sed -n 's/^submitted array job \([0-9]*\):.*/\1/p' "$work/detached.err")
[[ -n $job ]] || fail "no job id in: $(cat "$work/detached.err")"
scancel "${job}_3"
"$cli" sweep --resume "$work/detached" > /dev/null 2> "$work/resume.err" ||
    fail "resume: $(cat "$work/resume.err")"
grep -q "following array jobs $job" "$work/resume.err" || fail "resume did not follow $job"
grep -q "submitted array job [0-9]*: 1 runs (3)" "$work/resume.err" ||
    fail "resume did not submit run 3 alone: $(cat "$work/resume.err")"
cmp "$work/local/sweep.csv" "$work/detached/sweep.csv" || fail "the resumed sweep.csv differs"
echo "2. a cancelled task is submitted again alone by --resume ($((SECONDS - start)) s)"
echo "tests/slurm/run.sh: passed in $((SECONDS - start)) s"
