"""Checks a Slurm run of a reward batch against a local run of the same batch:

    python3 compare.py BATCH LOCAL MERGED SHARD...

- MERGED holds every candidate of BATCH exactly once, in input order;
- shard file I of N holds exactly the input lines whose index is I modulo N;
- each candidate's static results (every stage but simulate and performance,
  with its status, reason and diagnostics, and the candidate hashes) equal the
  local run's. Wall times and cache hits differ between runs and are left out.
Exits 1 with the first differences on stdout.
"""

import json
import sys

DYNAMIC_STAGES = ("simulate", "performance")
# Differ run to run (times, which worker's cache answered) or follow from the
# simulation (the score and verdicts).
UNSTABLE_KEYS = ("ms", "cached", "seconds", "score", "verdict", "exit_code", "first_failure",
                 "simulated", "credit")


def static_view(value):
    if isinstance(value, dict):
        out = {}
        for key, v in value.items():
            if key in UNSTABLE_KEYS:
                continue
            if key == "stages":
                v = [s for s in v if s.get("name") not in DYNAMIC_STAGES]
            out[key] = static_view(v)
        return out
    if isinstance(value, list):
        return [static_view(v) for v in value]
    return value


def read_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    batch_path, local_path, merged_path, *shard_paths = sys.argv[1:]
    batch = read_lines(batch_path)
    local = read_lines(local_path)
    merged = read_lines(merged_path)
    problems = []
    ids = [c["id"] for c in batch]

    merged_ids = [r.get("id") for r in merged]
    if merged_ids != ids:
        missing = sorted(set(ids) - set(merged_ids))
        twice = sorted({i for i in merged_ids if merged_ids.count(i) > 1})
        problems.append(f"merged ids differ from the batch's: {len(merged_ids)} lines, "
                        f"missing {missing[:5]}, more than once {twice[:5]}")
    if [r.get("index") for r in merged] != list(range(len(batch))):
        problems.append("merged lines are not in input order")

    for shard, path in enumerate(shard_paths):
        indices = [r.get("index") for r in read_lines(path)]
        expected = list(range(shard, len(batch), len(shard_paths)))
        if sorted(indices) != expected:
            problems.append(f"{path}: indices {indices[:5]}... are not those {shard} modulo "
                            f"{len(shard_paths)}")

    by_id = {r.get("id"): r for r in local}
    if len(by_id) != len(batch):
        problems.append(f"the local run has {len(local)} lines for {len(batch)} candidates")
    differing = 0
    for result in merged:
        mine = by_id.get(result.get("id"))
        if mine is None or static_view(mine) != static_view(result):
            differing += 1
            if differing <= 3:
                problems.append(f"candidate {result.get('id')}: static results differ\n"
                                f"  slurm: {json.dumps(static_view(result))[:600]}\n"
                                f"  local: {json.dumps(static_view(mine))[:600]}")
    if differing:
        problems.append(f"{differing} of {len(merged)} candidates differ")

    # Not a vacuous comparison: the batch has passes, failures and input errors.
    verdicts = sorted({r.get("verdict") for r in merged})
    print(f"{len(merged)} candidates merged from {len(shard_paths)} shards; verdicts {verdicts}")
    if not {"pass", "fail", "error"} <= set(verdicts):
        problems.append(f"expected passes, failures and input errors among {verdicts}")

    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
