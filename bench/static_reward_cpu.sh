#!/bin/bash
# Static reward CPU per candidate of one kernel, cold and warm (docs/perf.md,
# "Reward throughput", session 21): `tilescope reward --batch --jobs 1
# --static` over 1 and over N candidates, each the kernel with one distinct
# unused `let` (as bench/bench_reward.cpp's mutants), so that nothing is
# answered from the stage cache; the batch worker is one process, so the
# candidates after the first find what the process keeps (the pre-checks'
# memos) warm. Prints the workers' CPU of the batch of 1 (cold: a process per
# candidate) and (CPU of N - CPU of 1) / (N - 1) (warm: in-process, as
# bench_reward and the Python module see it).
# usage: bench/static_reward_cpu.sh TILESCOPE KERNEL.tile PROBLEM [N]
set -euo pipefail
bin=$1 kernel=$2 problem=$3 n=${4:-5}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cpu() { # the workers' CPU seconds of a batch of $1 candidates
  python3 - "$kernel" "$1" >"$dir/in.jsonl" <<'PY'
import json, sys
src = open(sys.argv[1]).read()
brace = src.find("{\n")
for i in range(int(sys.argv[2])):
    text = src[:brace + 2] + "  let unused%d = %d\n" % (i, i) + src[brace + 2:]
    print(json.dumps({"id": str(i), "source": text}))
PY
  "$bin" reward --batch "$dir/in.jsonl" -o "$dir/out.jsonl" --jobs 1 --static \
    --problem "$problem" --seed 1 2>&1 | sed -n "s/.*workers' CPU \([0-9.]*\) s.*/\1/p"
}
one=$(cpu 1)
all=$(cpu "$n")
python3 -c "import sys; a, b, n = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]); \
print('cold %.0f ms, warm %.0f ms per candidate' % (1000 * a, 1000 * (b - a) / (n - 1)))" \
  "$one" "$all" "$n"
