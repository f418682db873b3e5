#!/usr/bin/env bash
# The run side of scripts/asan_package: `bash run.sh` next to asan-suite.tar.xz.
# Unpacks under /tmp, runs the lit suite under ASan + UBSan with every
# sanitizer report fatal (exit 66) and kept, and writes to $OUT (default
# ./asan-out) at most six small files:
#   summary.txt      the machine, the commit, the environment, lit's summary
#                    and one line per test that did not pass, the report
#                    count, and when each test finished
#   lit-log.txt.gz   lit -v --time-tests (every result line, the output of failures)
#   xunit.xml.gz     lit's per-test results with times
#   reports.tar.gz   the sanitizer reports (asan.PID, ubsan.PID), if any
#   times.txt        lit's .lit_test_times.txt of this run
# Settings (environment, or a file `settings` next to this script, sourced):
#   ASAN_RUN_LIMIT_S  seconds for the whole script (540); lit gets what is left
#   ASAN_LIT_FILTER   a regular expression for lit --filter (all tests)
#   ASAN_LIT_FILTER_OUT  one for lit --filter-out (none): the tests a run
#                     before this one passed, say
#   ASAN_PINNED       a regular expression of the longest tests, run by a
#                     second lit beside the first, one at a time on each of
#                     ASAN_PINNED_JOBS vCPUs of distinct physical cores whose
#                     sibling threads run nothing (a sanitized test too long
#                     for a shared core); the first lit gets the other cores
#   FORCED_FALLBACK_JOBS  workers of each barriers/forced-fallback*.test shard
#                     (tests/lit/barriers/forced_fallback.py; 1)
#   ASAN_LIT_JOBS     lit -j (nproc)
#   ASAN_OVERLAY      a .tar.gz next to this script whose files replace the
#                     package's (tests changed since it was packed)
#   ASAN_TIMES        a .lit_test_times.txt next to this script (lit's order)
#   ASAN_EXTRA        the ctest tests to run beside lit, by name, out of:
#                     reward_verdicts malformed_inputs ptx_malformed_inputs
#                     reward_hacks reward_verdicts_in_process (none; the last
#                     needs the package's py/, scripts/asan_package); each one's output goes to
#                     extra-logs.txt.gz, its exit status and time to summary.txt
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
start=$(date +%s)
[ -f "$here/settings" ] && . "$here/settings"
limit="${ASAN_RUN_LIMIT_S:-540}"
filter="${ASAN_LIT_FILTER:-}"
filter_out="${ASAN_LIT_FILTER_OUT:-}"
pinned="${ASAN_PINNED:-}"
jobs="${ASAN_LIT_JOBS:-$(nproc)}"
out="${OUT:-$PWD/asan-out}"
mkdir -p "$out"
t="$(mktemp -d /tmp/asanpkg.XXXXXX)"
if command -v xz >/dev/null; then
  tar -xJf "$here/asan-suite.tar.xz" -C "$t"
else
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
    "$here/asan-suite.tar.xz" "$t"
fi
p="$t/p"
tool="$p/build/tools/tilescope"
# Test files laid over the package's tree (ASAN_OVERLAY, a .tar.gz of paths
# relative to the repository root, next to this script), so that one package
# serves changed tests; the times lit orders the tests by (ASAN_TIMES).
if [ -n "${ASAN_OVERLAY:-}" ]; then
  tar -xzf "$here/$ASAN_OVERLAY" -C "$p/src"
  echo "$(cat "$p/commit") with $ASAN_OVERLAY laid over its tree ($(tar -tzf "$here/$ASAN_OVERLAY" | wc -l) files)" >"$p/commit"
fi
[ -n "${ASAN_TIMES:-}" ] && cp "$here/$ASAN_TIMES" "$p/build/tests/lit-out/.lit_test_times.txt"
reports="$t/reports"
mkdir -p "$reports"

export LD_LIBRARY_PATH="$p/lib"
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:exitcode=66:log_path=$reports/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=66:log_path=$reports/ubsan"
python="$(command -v python3)"

cat >"$p/build/tests/lit/lit.site.cfg.py" <<EOF
config.tilescope_bin = "$p/build/tools"
config.llvm_tools_dir = "$p/llvm/bin"
config.source_root = "$p/src"
config.python = "$python"
config.environment["FORCED_FALLBACK_JOBS"] = "${FORCED_FALLBACK_JOBS:-1}"
lit_config.load_config(config, "$p/src/tests/lit/lit.cfg.py")
EOF

summary="$out/summary.txt"
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "commit: $(cat "$p/commit")"
  echo "uname: $(uname -a)"
  echo "nproc: $(nproc); lit -j$jobs; limit ${limit}s; filter: ${filter:-none}"
  echo "filter-out: ${filter_out:-none}"
  echo "pinned: ${pinned:-none} (${ASAN_PINNED_JOBS:-0} vCPUs); FORCED_FALLBACK_JOBS=${FORCED_FALLBACK_JOBS:-1}"
  echo "memory: $(free -g | awk '/Mem:/ { print $2 " GiB, " $7 " GiB available" }')"
  echo "python: $python ($("$python" --version 2>&1))"
  echo "vm.mmap_rnd_bits: $(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null)"
  echo "ASAN_OPTIONS=$ASAN_OPTIONS"
  echo "UBSAN_OPTIONS=$UBSAN_OPTIONS"
  echo "--- ldd tilescope (LD_LIBRARY_PATH=$LD_LIBRARY_PATH)"
  ldd "$tool"
  echo "--- ldd FileCheck"
  ldd "$p/llvm/bin/FileCheck"
} >"$summary" 2>&1

# The tool must start and end cleanly under the sanitizers on this machine.
# The ASan runtime of LLVM 14 cannot place its shadow under the address-space
# randomisation of newer kernels (vm.mmap_rnd_bits above 28), and LeakSanitizer
# needs ptrace, which a container may forbid: the first of these that works is
# used for the whole run, and the summary says which.
wrap=()
preflight() {
  timeout 120 "$@" "$tool" check "$p/src/kernels/gemm_naive.tile" >"$t/preflight.txt" 2>&1
}
arch="$(uname -m)"
no_leaks="$ASAN_OPTIONS:detect_leaks=0"
chosen=""
for way in plain setarch noleaks setarch+noleaks; do
  case "$way" in
    plain) preflight ;;
    setarch) preflight setarch "$arch" -R ;;
    noleaks) preflight env ASAN_OPTIONS="$no_leaks" ;;
    setarch+noleaks) preflight setarch "$arch" -R env ASAN_OPTIONS="$no_leaks" ;;
  esac
  rc=$?
  { echo "preflight ($way): tilescope check gemm_naive.tile: exit $rc"
    [ $rc -ne 0 ] && head -c 2000 "$t/preflight.txt"; } >>"$summary"
  if [ $rc -eq 0 ]; then
    chosen="$way"
    break
  fi
done
case "$chosen" in
  setarch) wrap=(setarch "$arch" -R) ;;
  noleaks) export ASAN_OPTIONS="$no_leaks" ;;
  setarch+noleaks) wrap=(setarch "$arch" -R); export ASAN_OPTIONS="$no_leaks" ;;
esac
echo "run: ${chosen:-nothing worked; running plain anyway} (ASAN_OPTIONS=$ASAN_OPTIONS)" >>"$summary"
for f in "$reports"/*; do
  [ -f "$f" ] && { echo "=== preflight report $f"; head -c 3000 "$f"; } >>"$summary"
done
rm -f "$reports"/*

# The ctest commands of tests/CMakeLists.txt, rooted in the package.
extra_command() {
  case "$1" in
    reward_verdicts) echo "$python $p/src/tests/reward/verdicts_test.py $tool $p/src --jobs 4" ;;
    malformed_inputs) echo "$python $p/src/tests/malformed/run.py $tool" ;;
    ptx_malformed_inputs) echo "$python $p/src/tests/ptx/mutate.py $tool 40" ;;
    # The module in an uninstrumented interpreter, as tests/reward/CMakeLists.txt runs it.
    reward_verdicts_in_process)
      echo "env LD_PRELOAD=$p/lib/libclang_rt.asan-x86_64.so ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0" \
           "$python $p/src/tests/reward/verdicts_test.py $tool $p/src --in-process $p/py" ;;
    reward_hacks) echo "$python $p/src/tests/reward/run_hacks.py $tool $p/src/tests/reward/hacks $p/src/docs/reward.md" ;;
    *) return 1 ;;
  esac
}
extra_pids=()
for name in ${ASAN_EXTRA:-}; do
  cmd="$(extra_command "$name")" || { echo "unknown extra test $name" >>"$summary"; continue; }
  mkdir -p "$t/extra/$name"
  (
    cd "$t/extra/$name" || exit 1
    s0=$(date +%s)
    timeout -k 10 $((limit - (s0 - start) - 25)) "${wrap[@]}" $cmd >"$t/extra/$name.log" 2>&1
    echo "extra $name: exit $?, $(($(date +%s) - s0)) s wall: $cmd" >"$t/extra/$name.status"
  ) &
  extra_pids+=($!)
done

# Each result line is also written with the seconds since lit started to
# finished.txt (summary.txt): lit reports no times when --max-time stops it.
tee_results='
import sys, time
start = time.time()
with open(sys.argv[1], "w") as log, open(sys.argv[2], "w") as finished:
    for line in sys.stdin:
        log.write(line)
        if line.split(":")[0] in ("PASS", "FAIL", "XPASS", "XFAIL", "UNRESOLVED", "TIMEOUT"):
            finished.write(f"{time.time() - start:6.0f} s {line}")
            finished.flush()
'
# run_lit NAME CPUS JOBS ARGS...: lit on the vCPUs CPUS (all: empty), its log
# in $t/NAME.log and its result lines in $t/NAME.finished.
run_lit() {
  local name="$1" cpus="$2" j="$3"
  shift 3
  local pin=()
  [ -n "$cpus" ] && command -v taskset >/dev/null && pin=(taskset -c "$cpus")
  timeout -k 10 $((left + 10)) "${pin[@]}" "${wrap[@]}" "$python" "$p/lit/lit.py" -v -j"$j" \
    --time-tests --max-time "$left" "$@" "$p/build/tests/lit" 2>&1 |
    "$python" -u -c "$tee_results" "$t/$name.log" "$t/$name.finished"
  echo "${PIPESTATUS[0]}" >"$t/$name.rc"
}
args=(--xunit-xml-output "$t/xunit.xml")
[ -n "$filter" ] && args+=(--filter "$filter")
left=$((limit - ($(date +%s) - start) - 25))
lit_start=$(date +%s)
main_cpus=""
if [ -n "$pinned" ]; then
  # One vCPU of each of the last ASAN_PINNED_JOBS physical cores for the
  # pinned tests; their siblings idle; every other vCPU for the first lit.
  read -r pin_cpus main_cpus < <("$python" - "${ASAN_PINNED_JOBS:-4}" <<'PY'
import glob, sys
cores = {}
for f in sorted(glob.glob("/sys/devices/system/cpu/cpu[0-9]*/topology/thread_siblings_list")):
    cpu = int(f.split("/")[5][3:])
    cores.setdefault(open(f).read().strip(), []).append(cpu)
groups = sorted(cores.values(), key=min)
n = int(sys.argv[1])
pin = [min(g) for g in groups[-n:]]
rest = [c for g in groups[:-n] for c in g]
print(",".join(map(str, pin)), ",".join(map(str, rest)))
PY
)
  echo "pinned lit on vCPUs $pin_cpus; first lit on $main_cpus" >>"$summary"
  run_lit pinned "$pin_cpus" "${ASAN_PINNED_JOBS:-4}" --filter "$pinned" \
    --xunit-xml-output "$t/xunit-pinned.xml" &
  pinned_pid=$!
  if [ -n "$filter_out" ]; then filter_out="$filter_out|$pinned"; else filter_out="$pinned"; fi
fi
[ -n "$filter_out" ] && args+=(--filter-out "$filter_out")
run_lit main "$main_cpus" "$jobs" "${args[@]}"
[ -n "$pinned" ] && wait "$pinned_pid"
cat "$t/main.log" "$t/pinned.log" >"$t/lit.log" 2>/dev/null
sort -n "$t/main.finished" "$t/pinned.finished" >"$t/finished.txt" 2>/dev/null
lit_rc="$(cat "$t/main.rc")${pinned:+, pinned lit: exit $(cat "$t/pinned.rc")}"
lit_end=$(date +%s)
for pid in "${extra_pids[@]}"; do wait "$pid"; done

{
  echo "--- lit: exit $lit_rc, $((lit_end - lit_start)) s wall (max-time ${left}s)"
  grep -E '^(FAIL|XPASS|UNRESOLVED|TIMEOUT|UNSUPPORTED|SKIPPED|XFAIL): ' "$t/lit.log" | sort | head -400
  sed -n '/^Testing Time/,$p' "$t/lit.log"
  grep -E 'warning: reached timeout|^error|Traceback' "$t/lit.log" | head -20
  echo "passed: $(grep -c '^PASS: ' "$t/lit.log")"
  echo "--- finished (seconds after lit started, result line)"
  cat "$t/finished.txt"
  cat "$t"/extra/*.status 2>/dev/null
  echo "--- sanitizer reports: $(ls "$reports" | wc -l)"
  ls -la "$reports" | head -50
  for f in "$reports"/*; do
    [ -f "$f" ] && { echo "=== $f"; grep -m3 -E 'ERROR|runtime error|SUMMARY' "$f"; }
  done
  echo "--- done $(date -u '+%H:%M:%S UTC'), $(($(date +%s) - start)) s in all"
} >>"$summary" 2>&1

gzip -c "$t/lit.log" >"$out/lit-log.txt.gz"
if ls "$t"/extra/*.log >/dev/null 2>&1; then
  for f in "$t"/extra/*.log; do echo "=== $f"; cat "$f"; done | gzip -c >"$out/extra-logs.txt.gz"
fi
[ -f "$t/xunit.xml" ] && cat "$t/xunit.xml" "$t/xunit-pinned.xml" 2>/dev/null | gzip -c >"$out/xunit.xml.gz"
[ -n "$(ls "$reports")" ] && tar -C "$t" -czf "$out/reports.tar.gz" reports
cp "$p/build/tests/lit-out/.lit_test_times.txt" "$out/times.txt" 2>/dev/null
rm -rf "$t"
exit 0
