#!/bin/bash
# Device script of helper rms2 (issue 15's RMSNorm sweep, issue 19's floors):
# the folder bench/rmsnorm/h2048/build.sh writes, copied to .dev/rms2/;
# results in $OUT (log.txt, results.json, smi.txt, triton_h2048.ptx).
# At most ~115 s of wall time.
D="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
echo "start $(date -u +%FT%TZ)" > "$OUT/smi.txt"
timeout 15 nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem \
  --format=csv < /dev/null >> "$OUT/smi.txt" 2>&1
timeout 110 python3 "$D/bench_rms2.py" "$D" "$OUT" 88 < /dev/null >> "$OUT/log.txt" 2>&1
echo "bench exit $? $(date -u +%FT%TZ)" >> "$OUT/smi.txt"
