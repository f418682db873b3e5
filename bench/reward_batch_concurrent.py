#!/usr/bin/env python3
"""Issue 14's batch target on an idle host, in one device slot: `tilescope
reward --batch` over the same mutants with --jobs 2 on cpus 2,3 and --jobs 1 on
two cpus of other physical cores, at the same time (bench/reward_batch_concurrent_device.sh
runs it as drive.py), each under /usr/bin/time -v, with each process's peak
resident memory (VmHWM) polled; then, time permitting, 1 job alone on cpus
2,3 over the first mutants. Writes OUT/results.json.

usage: reward_batch_concurrent.py TILESCOPE WORK OUT   (WORK/m/mutants.jsonl: the batch)"""
import json, os, re, subprocess, sys, threading, time

tool, work, out = sys.argv[1:4]
start = time.time()
LIMIT = 128  # seconds from the start of this script


def siblings(c):
    try:
        text = open(f"/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list").read().strip()
    except OSError:
        return {c}
    s = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        s.update(range(int(a), int(b or a) + 1))
    return s


n = os.cpu_count()
pair2 = [2, 3] if 3 < n else [0, 1]
used = siblings(pair2[0]) | siblings(pair2[1])
if pair2[1] in siblings(pair2[0]):
    print(f"note: cpus {pair2} are SMT siblings of one core")
pair1 = []
for c in range(n):
    if c in used or any(c in siblings(p) for p in pair1):
        continue
    pair1.append(c)
    used |= siblings(c)
    if len(pair1) == 2:
        break
if len(pair1) < 2:  # a small machine (a local trial): the same cpus
    pair1 = pair2
# Given cpus (a second run with the roles moved: RS5_JOBS1_CPUS=2,3 RS5_JOBS2_CPUS=4,5).
if os.environ.get("RS5_JOBS1_CPUS") and os.environ.get("RS5_JOBS2_CPUS"):
    pair1 = [int(c) for c in os.environ["RS5_JOBS1_CPUS"].split(",")]
    pair2 = [int(c) for c in os.environ["RS5_JOBS2_CPUS"].split(",")]
print(f"jobs 2 on cpus {pair2}, jobs 1 on cpus {pair1}", flush=True)
COUNT = int(os.environ.get("RS5_COUNT", "1000"))


def loadavg():
    return open("/proc/loadavg").read().split()[0]


def descendants(pid):
    kids, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            ch = open(f"/proc/{p}/task/{p}/children").read().split()
        except OSError:
            ch = []
        for c in ch:
            kids.append(int(c))
            todo.append(int(c))
    return kids


def hwm_kb(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def run(name, cpus, jobs, batch):
    res = os.path.join(work, f"{name}.jsonl")
    timef = os.path.join(work, f"{name}.time")
    cmd = ["taskset", "-c", ",".join(map(str, cpus)), tool, "reward", "--batch", batch, "-o", res,
           "--jobs", str(jobs)]
    if os.path.exists("/usr/bin/time"):
        cmd = ["/usr/bin/time", "-v", "-o", timef] + cmd
    t0 = time.time()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=open(os.path.join(work, f"{name}.err"), "w"))
    peak = {}  # pid -> VmHWM kB
    loads = []
    timed_out = False
    while p.poll() is None:
        for q in descendants(p.pid):
            peak[q] = max(peak.get(q, 0), hwm_kb(q))
        loads.append(float(loadavg()))
        if time.time() - start > LIMIT:
            p.kill()
            timed_out = True
            break
        time.sleep(0.2)
    p.wait()
    wall = time.time() - t0
    verdicts = {}
    lines = 0
    if os.path.exists(res):
        for l in open(res):
            lines += 1
            try:
                v = json.loads(l).get("verdict")
            except ValueError:
                v = "bad-line"
            verdicts[v] = verdicts.get(v, 0) + 1
    r = {"name": name, "cpus": cpus, "jobs": jobs, "results": lines, "wall_s": round(wall, 2),
         "rc": p.returncode, "timed_out": timed_out, "verdicts": verdicts,
         "peak_rss_mib_per_process (VmHWM, polled every 0.2 s)": sorted(round(v / 1024, 1) for v in peak.values()),
         "load_min_mean_max": [min(loads or [0]), round(sum(loads) / max(1, len(loads)), 2), max(loads or [0])]}
    if os.path.exists(timef):
        t = open(timef).read()
        for key, pat in [("time_user_s", r"User time \(seconds\): ([\d.]+)"),
                         ("time_sys_s", r"System time \(seconds\): ([\d.]+)"),
                         ("time_max_rss_kb", r"Maximum resident set size \(kbytes\): (\d+)")]:
            m = re.search(pat, t)
            if m:
                r[key] = float(m.group(1))
        if "time_user_s" in r and lines:
            r["cpu_ms_per_candidate"] = round(1000 * (r["time_user_s"] + r.get("time_sys_s", 0)) / lines, 1)
    if lines:
        r["candidates_per_s"] = round(lines / wall, 2)
    print(json.dumps(r), flush=True)
    return r


batch = os.path.join(work, "batch.jsonl")
with open(os.path.join(work, "m", "mutants.jsonl")) as f, open(batch, "w") as g:
    for i, l in enumerate(f):
        if i < COUNT:
            g.write(l)
runs = {}
th = threading.Thread(target=lambda: runs.__setitem__("j1", run("jobs1", pair1, 1, batch)))
th.start()
runs["j2"] = run("jobs2", pair2, 2, batch)
th.join()
summary = {"runs": [runs["j1"], runs["j2"]]}
if runs["j1"]["results"] == COUNT and runs["j2"]["results"] == COUNT:
    summary["speedup_2_over_1"] = round(runs["j1"]["wall_s"] / runs["j2"]["wall_s"], 3)
# Cross-check: 1 job on the 2-job run's cpus, alone, over the first mutants.
left = LIMIT - (time.time() - start) - 3
if left > 15:
    est = runs["j1"]["wall_s"] / max(1, runs["j1"]["results"])
    k = int(min(1000, (left - 3) / max(est, 1e-3)) * 0.8)
    if k >= 50:
        sub = os.path.join(work, "first.jsonl")
        with open(batch) as f, open(sub, "w") as g:
            for i, l in enumerate(f):
                if i >= k:
                    break
                g.write(l)
        r = run("jobs1_same_cpus", pair2, 1, sub)
        summary["runs"].append(r)
summary["elapsed_s"] = round(time.time() - start, 1)
json.dump(summary, open(os.path.join(out, "results.json"), "w"), indent=1)
print(json.dumps({k: v for k, v in summary.items() if k != "runs"}))
