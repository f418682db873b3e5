# The timing plan of this slot (sourced by run.sh; $w holds the .so files).
ATTN_REPS=30 timeout 60 python3 "$here/driver.py" "$w" "$here/${PLAN:-plan.txt}" < /dev/null 2>&1 | tee -a "$out/timing.jsonl"
say "timing done"
NCU="ncu --clock-control none -k regex:attention_fwd --launch-skip 2 --launch-count 1 --section SpeedOfLight --section SchedulerStats --section Occupancy --metrics regex:^smsp__average_warp.*issue_stalled.*,gpu__time_duration.sum"
for kv in base:attention_fwd_overlap_sm90 lib:attention_fwd_overlap_sm90; do
  timeout 25 $NCU python3 "$here/ncu_one.py" "$w/${kv%%:*}.so" "${kv#*:}" 1024 < /dev/null > "$w/ncu_${kv%%:*}.txt" 2>&1
  say "ncu ${kv%%:*}: exit $?"
done
cat "$w"/ncu_*.txt > "$out/ncu.txt"
say "ncu done"
# Bit for bit against the simulator (nvcc -fmad=false, the inputs and the
# simulator's O and L of `tilescope sim --dump`, cases/*).
for n in lib lib64; do
  timeout 40 nvcc -std=c++17 -O3 -fmad=false -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC \
    -o "$w/${n}nf.so" "$here/$n.cu" > "$w/${n}nf.nvcc.txt" 2>&1 &
done
wait
C="$here/cases"
timeout 40 python3 "$T" "$w/libnf.so" attention_fwd_overlap_sm90 "$C/nc" "$w/hw_nc" \
  "$w/libnf.so" attention_fwd_overlap_causal_sm90 "$C/c" "$w/hw_c" \
  "$w/lib64nf.so" attention_fwd_overlap_d64_sm90 "$C/nc64" "$w/hw_nc64" \
  "$w/lib64nf.so" attention_fwd_overlap_causal_d64_sm90 "$C/c64" "$w/hw_c64" < /dev/null 2>&1 \
  | python3 -c "import sys, json
for ln in sys.stdin:
    try:
        d = json.loads(ln)
    except ValueError:
        print(ln.rstrip()); continue
    d.pop('O_hex', None); d.pop('L_hex', None); print(json.dumps(d))" | tee -a "$out/bits.jsonl"
say "bits done"
