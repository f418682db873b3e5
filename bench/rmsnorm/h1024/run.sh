#!/bin/bash
# Device script of helper rms (issue 19 item 7, issue 15 RMSNorm): the folder
# bench/rmsnorm/h1024/build.sh writes, copied to .dev/rms/; results in $OUT
# (log.txt, results.json, smi.txt, and ncu.csv where the folder has ncu.on).
# At most ~115 s of wall time.
D="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
echo "start $(date -u +%FT%TZ)" > "$OUT/smi.txt"
timeout 15 nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv \
  < /dev/null >> "$OUT/smi.txt" 2>&1
limit=100
[ -f "$D/ncu.on" ] && limit=75
timeout $limit python3 "$D/bench_h1024.py" "$D" "$OUT" $((limit - 25)) < /dev/null >> "$OUT/log.txt" 2>&1
echo "bench exit $? $(date -u +%FT%TZ)" >> "$OUT/smi.txt"
if [ -f "$D/ncu.on" ]; then
  timeout 30 ncu --metrics gpu__time_duration.sum --cache-control all --clock-control none \
    -k 'regex:k_|f1024|rmsnorm_kernel' --csv python3 "$D/ncu_h1024.py" "$D" \
    < /dev/null > "$OUT/ncu.csv" 2>&1
  echo "ncu exit $? $(date -u +%FT%TZ)" >> "$OUT/smi.txt"
fi
