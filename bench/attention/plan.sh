# The timing plan of this slot (sourced by run.sh; $w holds the .so files).
ATTN_REPS=30 timeout 60 python3 "$here/driver.py" "$w" "$here/${PLAN:-plan.txt}" < /dev/null 2>&1 | tee -a "$out/timing.jsonl"
say "timing done"
NCU="ncu --clock-control none -k regex:attention_fwd --launch-skip 2 --launch-count 1 --section SpeedOfLight --section SchedulerStats --metrics regex:^smsp__average_warp.*issue_stalled.*,gpu__time_duration.sum,lts__t_sector_hit_rate.pct"
for kv in lib:attention_fwd_overlap_sm90 pf:attention_fwd_pf_sm90; do
  timeout 25 $NCU python3 "$here/ncu_one.py" "$w/${kv%%:*}.so" "${kv#*:}" 1024 < /dev/null > "$w/ncu_${kv%%:*}.txt" 2>&1
  say "ncu ${kv%%:*}: exit $?"
done
cat "$w"/ncu_*.txt > "$out/ncu.txt"
say "ncu done"
