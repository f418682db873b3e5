#!/bin/bash
# Device script of helper rms (issue 19 item 7, issue 15 RMSNorm): the folder
# bench/rmsnorm/h1024/build.sh writes, copied to .dev/rms/; results in $OUT
# (log.txt, results.json, smi.txt). At most ~110 s of wall time.
D="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
echo "start $(date -u +%FT%TZ)" > "$OUT/smi.txt"
timeout 15 nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv \
  < /dev/null >> "$OUT/smi.txt" 2>&1
timeout 100 python3 "$D/bench_h1024.py" "$D" "$OUT" 75 < /dev/null >> "$OUT/log.txt" 2>&1
echo "exit $? $(date -u +%FT%TZ)" >> "$OUT/smi.txt"
