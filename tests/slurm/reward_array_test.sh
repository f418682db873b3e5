#!/bin/bash
# Starts a real one-node Slurm cluster from Debian's packages (munge,
# slurmctld, slurmd in the foreground, a minimal slurm.conf in a scratch
# directory, no systemd), rewards a batch of 200+ candidates as a 4-task job
# array with examples/slurm/reward_array.sbatch, waits for its merge job, and
# checks the merged results against a local `tilescope reward --batch` run
# (compare.py). The daemons are stopped by their PIDs at the end, also when
# a step fails.
#
#   reward_array_test.sh TILESCOPE SOURCE_DIR PYTHON
#
# Exit 77 (ctest: skipped, with the reason) when not root or when a Slurm or
# munge program is missing.
set -euo pipefail

tilescope="$(realpath "$1")"
source_dir="$(realpath "$2")"
python="$3"
shards=4

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIPPED: starting slurmd and munged needs root"
  exit 77
fi
for program in munged mungekey slurmctld slurmd sbatch scontrol sinfo; do
  if ! command -v "$program" >/dev/null; then
    echo "SKIPPED: $program is missing (Debian packages slurm-wlm and munge)"
    exit 77
  fi
done

scratch="$(mktemp -d /tmp/tilescope-slurm.XXXXXX)"
daemons=()
finish() {
  status=$?
  for pid in "${daemons[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${daemons[@]}"; do
    # The daemons are children of this shell: wait reaps them.
    wait "$pid" 2>/dev/null || true
  done
  if [ "$status" -ne 0 ]; then
    echo "--- failed ($status); the last lines of the logs in $scratch:"
    for log in "$scratch"/*.log "$scratch"/out/slurm-*.out; do
      [ -f "$log" ] && { echo "--- $log"; tail -n 15 "$log"; }
    done
  else
    rm -rf "$scratch"
  fi
}
trap finish EXIT

# Two free TCP ports on the loopback host for slurmctld and slurmd.
read -r ctld_port slurmd_port < <("$python" -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')

# munge: a fresh key and a private socket, so no system munged is touched.
mkdir -p "$scratch/munge" "$scratch/state" "$scratch/spool" "$scratch/out"
chmod 711 "$scratch/munge"
mungekey -c -f -k "$scratch/munge/munge.key"
chmod 400 "$scratch/munge/munge.key"
socket="$scratch/munge/munge.socket"
munged -F --force --socket="$socket" --key-file="$scratch/munge/munge.key" \
  --pid-file="$scratch/munge/munged.pid" --seed-file="$scratch/munge/munged.seed" \
  --log-file="$scratch/munged.log" &
daemons+=($!)

host="$(hostname -s)"
cat >"$scratch/slurm.conf" <<EOF
ClusterName=tilescope-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$scratch/state
SlurmdSpoolDir=$scratch/spool
SlurmctldPidFile=$scratch/slurmctld.pid
SlurmdPidFile=$scratch/slurmd.pid
SlurmctldLogFile=$scratch/slurmctld.log
SlurmdLogFile=$scratch/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MinJobAge=3600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=tilescope Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$scratch/slurm.conf"
for _ in $(seq 50); do [ -S "$socket" ] && break; sleep 0.1; done
slurmctld -D -f "$SLURM_CONF" >"$scratch/slurmctld.out" 2>&1 &
daemons+=($!)
slurmd -D -f "$SLURM_CONF" >"$scratch/slurmd.out" 2>&1 &
daemons+=($!)
for i in $(seq 60); do
  if sinfo -h -o %t 2>/dev/null | grep -qx idle; then break; fi
  [ "$i" -eq 60 ] && { echo "the node did not come up idle in 60 s"; exit 1; }
  sleep 1
done
echo "slurm: node $host idle (slurmctld port $ctld_port, slurmd port $slurmd_port)"

"$python" "$source_dir/tests/slurm/make_batch.py" "$source_dir" >"$scratch/batch.jsonl"
echo "batch: $(wc -l <"$scratch/batch.jsonl") candidates"

# The array and its merge job, as a user would submit them.
cd "$scratch"
submitted="$(TILESCOPE="$tilescope" bash "$source_dir/examples/slurm/reward_array.sbatch" \
  "$scratch/batch.jsonl" "$scratch/out" "$shards" -- --seed 7)"
echo "$submitted"
array="$(awk '/^array/ {print $2}' <<<"$submitted")"
merge="$(awk '/^merge/ {print $2}' <<<"$submitted")"

# The local run to compare with, while the cluster works.
"$tilescope" reward --batch "$scratch/batch.jsonl" -o "$scratch/local.jsonl" --jobs 1 --seed 7

state() { scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -n 1 | cut -d= -f2; }
for i in $(seq 900); do
  s="$(state "$merge")"
  case "$s" in
    COMPLETED) break ;;
    FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | PREEMPTED | DEADLINE)
      echo "merge job $merge ended $s"
      scontrol show job "$array" | grep -E 'JobState|ArrayTaskId' || true
      exit 1
      ;;
  esac
  [ "$i" -eq 900 ] && { echo "merge job $merge still $s after 900 s"; exit 1; }
  sleep 1
done
echo "slurm: array $array and merge $merge completed"
# Every array task ran under Slurm, each its own task id.
for ((t = 0; t < shards; t++)); do
  [ "$(state "${array}_$t")" = COMPLETED ] || { echo "array task $t: $(state "${array}_$t")"; exit 1; }
done

"$python" "$source_dir/tests/slurm/compare.py" "$scratch/batch.jsonl" "$scratch/local.jsonl" \
  "$scratch/out/results.jsonl" "$scratch"/out/shard-{0..3}.jsonl
