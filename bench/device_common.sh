# The preamble the device scripts of bench/ share (reward_batch_device.sh,
# reward_perf_device.sh). A device run copies a script as run.sh into a flat
# folder (.dev/NAME/ on the device); this file goes beside it, as
# device_common.sh, and the script sources it from its own folder:
#
#   here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
#   . "$here/device_common.sh" NAME
#
# It defines: `out` ($OUT/NAME), `log` ($out/log.txt), `say` (a progress line
# with the seconds since the start, to the console and the log), `elapsed`,
# `work` (an empty /tmp/NAME-dev), `cores` (cpu 0 and the first cpu that is
# not its SMT sibling: two different physical cores), and `bin` (the
# unpacked pkg.tar.xz's bin/, also on LD_LIBRARY_PATH). Every step runs in
# the foreground under `timeout`, reading /dev/null.
name="${1:?device_common.sh NAME}"
out="${OUT:?}/$name"
mkdir -p "$out"
log="$out/log.txt"
start=$(date +%s)
elapsed() { echo $(($(date +%s) - start)); }
say() { echo "[$(elapsed) s] $*" | tee -a "$log"; }
work="/tmp/$name-dev"
rm -rf "$work"
mkdir -p "$work"
say "host: $(nproc) cpus; $(grep -m1 'model name' /proc/cpuinfo); load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u)"
sib0=$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null || echo 0)
second=$(python3 - "$sib0" "$(nproc)" <<'PY'
import sys
sib = set()
for part in sys.argv[1].split(","):
    a, _, b = part.partition("-")
    sib.update(range(int(a), int(b or a) + 1))
print(next((c for c in range(1, int(sys.argv[2])) if c not in sib), 1))
PY
)
cores="0,$second"
say "cpu0 siblings: $sib0; cpu1 siblings: $(cat /sys/devices/system/cpu/cpu1/topology/thread_siblings_list 2>/dev/null); $(lscpu 2>/dev/null | grep -E '^(Thread|Core|Socket)' | tr -s ' ' | tr '\n' ';')"
say "pinned cores: $cores"
timeout 40 tar -xJf "$here/pkg.tar.xz" -C "$work" </dev/null || {
  say "unpack failed"
  exit 1
}
bin="$work/bin"
export LD_LIBRARY_PATH="$bin"
