#!/bin/bash
# The comparison of bench/sim_dump_compare.sh and bench/sim_dump_reward_sizes.sh:
# every WORK/before/RUN/*.npy byte for byte and RUN/out.json without its times
# against WORK/after/RUN, and any WORK/before/*.reward.json (times aside).
# usage: bench/sim_dump_diff.sh WORKDIR; exits 1 when anything differs.
set -u
WORK=$1
status=0
untimed() { grep -vE 'seconds|per_second|"ms"|wall' "$1"; }
for f in "$WORK"/before/*.reward.json; do
  [ -e "$f" ] || continue
  diff <(untimed "$f") <(untimed "$WORK/after/$(basename "$f")") > /dev/null ||
    { echo "differs: $(basename "$f")"; status=1; }
done
for d in "$WORK"/before/*/; do
  n=$(basename "$d")
  for f in "$d"*.npy; do
    cmp -s "$f" "$WORK/after/$n/$(basename "$f")" || { echo "differs: $n/$(basename "$f")"; status=1; }
  done
  diff <(untimed "$d/out.json") <(untimed "$WORK/after/$n/out.json") > /dev/null ||
    { echo "differs: $n/out.json"; status=1; }
  echo "$n: $(ls "$d" | wc -l) files compared"
done
exit $status
