#!/usr/bin/env python3
"""Markdown tables of bench_rms2.py's results.json (docs/perf.md's RMSNorm
rows of session 15).

    report.py RESULTS.json [RESULTS2.json ...]

For each run: the sweep (every shape with a 'pick': the table's point, its
median µs, Triton's best median and num_warps, the ratio, its min-max over
the 5 blocks of rounds, the paired ratio, and the best other candidate with
its ratio), then every candidate of the 1024 x 2048 and 1024 x 1024 phases.
With several runs, a last table gives each shape's ratio in each run."""
import json
import statistics
import sys


def cands(entry):
    return entry["cands"]


def sweep_rows(res):
    rows = []
    for e in res["shapes"]:
        if "pick" not in e:
            continue
        c, tri = cands(e), e["best_triton"]
        p = c.get(e["pick"])
        if p is None or tri is None:
            rows.append((e["R"], e["H"], e["pick"], None))
            continue
        others = [(n, v) for n, v in c.items() if not n.startswith("triton") and n != e["pick"]]
        alt = max(others, key=lambda nv: nv[1]["ratio"]) if others else None
        rows.append((e["R"], e["H"], e["pick"], p, c[tri]["median"], tri, alt, e["reps"]))
    return rows


def spread(c):
    """The ratio's min-max over the sessions (sN), else over the blocks of rounds."""
    if len(c.get("ratio_sessions", [])) > 1:
        s = c["ratio_sessions"]
        return f"s{len(s)} {min(s):.3f}-{max(s):.3f}"
    return f"{c['ratio_blocks'][0]:.3f}-{c['ratio_blocks'][1]:.3f}"


def print_sweep(res):
    print(f"\n{res['gpu']}, torch {res['torch']}, triton {res['triton']}\n")
    print("| R × H | table's point | ours µs | Triton µs (nw) | ratio | spread | paired "
          "| cross-val. | best other (ratio) |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios, cv = [], []
    for row in sweep_rows(res):
        if row[3] is None:
            print(f"| {row[0]} × {row[1]} | `{row[2]}` | (failed) | | | | | | |")
            continue
        r, h, pick, p, tus, tri, alt, reps = row
        ratios.append(p["ratio"])
        cv.append(p["ratio_cv"])
        a = f"`{alt[0]}` {alt[1]['ratio']:.3f}" if alt else ""
        print(f"| {r} × {h} | `{pick}` | {p['median']:.3f} | {tus:.3f} ({tri[len('triton_'):]}) "
              f"| **{p['ratio']:.3f}** | {spread(p)} "
              f"| {p['ratio_paired']:.3f} | {p['ratio_cv']:.3f} | {a} |")
    if ratios:
        print(f"\n{len(ratios)} shapes: median ratio {statistics.median(ratios):.4f}, "
              f"min {min(ratios):.3f}, {sum(x >= 1.0 for x in ratios)} at or above 1.0; "
              f"cross-validated: median {statistics.median(cv):.4f}, min {min(cv):.3f}, "
              f"{sum(x >= 1.0 for x in cv)} at or above 1.0")


def print_phase(res, r, h, mode):
    for e in res["shapes"]:
        if e["R"] == r and e["H"] == h and e["mode"] == mode and "pick" not in e:
            print(f"\n{r} × {h}, {mode}, {e.get('sessions', 1)} x {e['reps']} rounds, "
                  f"best Triton {e['best_triton']}\n")
            print("| candidate | median µs | mid-half mean µs | min µs | ratio | spread | paired "
                  "| cross-val. |")
            print("|---|---|---|---|---|---|---|---|")
            for n, c in sorted(cands(e).items(), key=lambda kv: kv[1]["median"]):
                print(f"| `{n}` | {c['median']:.3f} | {c['mid_mean']:.3f} | {c['min']:.3f} | "
                      f"{c.get('ratio', 0):.3f} | {spread(c) if 'ratio' in c else ''} | "
                      f"{c.get('ratio_paired', 0):.3f} | {c.get('ratio_cv', 0):.3f} |")


def main():
    runs = [json.load(open(p)) for p in sys.argv[1:]]
    for res in runs:
        print_sweep(res)
        print_phase(res, 1024, 2048, "cold_sleep")
        print_phase(res, 1024, 1024, "cold_sleep")
        print_phase(res, 1024, 1024, "b2b")
    if len(runs) > 1:
        per = [{(row[0], row[1]): row[3]["ratio"] for row in sweep_rows(res) if row[3]}
               for res in runs]
        print("\n| R × H | " + " | ".join(f"run {i + 1}" for i in range(len(runs))) + " |")
        print("|---|" + "---|" * len(runs))
        for key in per[0]:
            print(f"| {key[0]} × {key[1]} | " +
                  " | ".join(f"{p[key]:.3f}" if key in p else "" for p in per) + " |")


if __name__ == "__main__":
    main()
