#!/usr/bin/env python3
"""Joins devscale_bench's and nccl_bench's JSON lines into one CSV table:
per size, tilescope's one-shot, two-shot and dispatched allreduce (the impl
column names the one its launcher picked) against NCCL, per TP GEMM shape
each variant against cuBLAS followed by NCCL allreduce, and per all-gather
GEMM shape each variant against NCCL all_gather followed by cuBLAS.

    python3 summarize.py tilescope.jsonl nccl.jsonl [sim_vs_hw.jsonl] > table.csv
"""
import json
import sys


def load(path):
    rows = []
    try:
        for line in open(path):
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    except OSError:
        pass
    return rows


def main():
    rows = [r for path in sys.argv[1:] for r in load(path)]
    print("bench,impl,ranks,gpu,size,time_us,busbw_GBps_or_tflops,baseline,baseline_us,"
          "speedup_vs_baseline,correct")
    nccl = {(r["ranks"], r["bytes_per_rank"]): r for r in rows
            if r["bench"] == "collective" and r["impl"] == "nccl.allreduce"}
    seq = {(r["ranks"], r["M"], r["N"], r["K"]): r for r in rows
           if r["bench"] == "tp_gemm_allreduce" and r["impl"] == "cublas+nccl.seq"}
    gather = {(r["ranks"], r["M"], r["N"], r["K"]): r for r in rows
              if r["bench"] == "allgather_gemm" and r["impl"] == "nccl.all_gather+cublas.seq"}
    for r in rows:
        if r.get("skipped"):
            continue
        if r["bench"] == "sim_vs_hw":
            print("sim_vs_hw,%s,%d,%s,rank %d,,%d of %d bit-identical,,,,%s" % (
                r["impl"], r["ranks"], r["gpu"].replace(",", " "), r["rank"],
                r["bit_identical"], r["elements"], r["correct"]))
            continue
        if r.get("picked"):
            r["impl"] += "(" + r["picked"] + ")"
        if r["bench"] == "allgather_gemm":
            base = gather.get((r["ranks"], r["M"], r["N"], r["K"]))
            size = "%dx%dx%d" % (r["M"], r["N"], r["K"])
            rate = r["tflops"]
        elif r["bench"] == "collective":
            base = nccl.get((r["ranks"], r["bytes_per_rank"])) if "allreduce" in r["impl"] else None
            size = r["bytes_per_rank"]
            rate = r["busbw_GBps"]
        else:
            base = seq.get((r["ranks"], r["M"], r["N"], r["K"]))
            size = "%dx%dx%d" % (r["M"], r["N"], r["K"])
            rate = r["tflops"]
        b_us = base["time_us"] if base else ""
        speed = "%.3f" % (base["time_us"] / r["time_us"]) if base and r["time_us"] > 0 else ""
        print("%s,%s,%d,%s,%s,%.2f,%s,%s,%s,%s,%s" % (
            r["bench"], r["impl"], r["ranks"], r["gpu"].replace(",", " "), size, r["time_us"],
            rate, base["impl"] if base else "", b_us, speed, r["correct"]))


if __name__ == "__main__":
    main()
