#!/usr/bin/env python3
"""The baselines of the device-scale benchmark: NCCL allreduce through
torch.distributed, a tensor-parallel GEMM (torch.matmul, i.e. cuBLAS)
followed by NCCL allreduce, sequential and overlapped on two streams, and an
all-gather GEMM: NCCL all_gather of the row-sharded A, then cuBLAS.

One process per GPU (torch.multiprocessing); rank 0 prints one JSON object per
line in the format of devscale_bench. Every output is checked against a
float64 reference (inputs are fresh per rank and per size; NCCL reduces in
place, so the output is the input buffer and every element is compared).

    python3 nccl_bench.py --ranks N [--sizes-mib 1,2,...] [--tp MxNxK,...]
                          [--ag MxNxK,...]   (M gathered rows, N per rank)
"""
import argparse
import json
import os
import sys
import tempfile
import time


def exact_inputs(torch, n, seed, rank, device):
    """8 significant bits times 2^[-11, -4] with a sign: exact in bf16, and a
    sum of up to 8 of them is exact in float32 and float64."""
    g = torch.Generator(device=device)
    g.manual_seed(seed * 1000 + rank)
    mant = torch.randint(128, 256, (n,), generator=g, device=device, dtype=torch.int32)
    exp = torch.randint(-11, -3, (n,), generator=g, device=device, dtype=torch.int32)
    sign = torch.randint(0, 2, (n,), generator=g, device=device, dtype=torch.int32) * 2 - 1
    return (sign * mant).to(torch.float64) * torch.pow(2.0, exp.to(torch.float64))


def gemm_operand(torch, shape, seed, rank, device):
    g = torch.Generator(device=device)
    g.manual_seed(seed * 1000 + rank)
    k = torch.randint(-128, 128, shape, generator=g, device=device, dtype=torch.int32)
    return (k.to(torch.float32) / 128.0).to(torch.bfloat16)


def iters_for(nbytes):
    n = int(20 * 256 * 2**20 / nbytes)
    return max(10, min(200, n))


def timed(torch, fn, iters, warmup=3):
    import torch.distributed as dist
    for _ in range(warmup):
        fn()
    dist.barrier()
    torch.cuda.synchronize()
    t0 = torch.cuda.Event(enable_timing=True)
    t1 = torch.cuda.Event(enable_timing=True)
    t0.record()
    for _ in range(iters):
        fn()
    t1.record()
    t1.synchronize()
    return 1000.0 * t0.elapsed_time(t1) / iters


def allreduce_sizes(torch, rank, world, args, gpu, emit):
    import torch.distributed as dist
    dev = torch.device("cuda", rank)
    ok = True
    for i, mib in enumerate(args.sizes_mib):
        nbytes = int(mib * 2**20) // (16 * world) * (16 * world)
        n = nbytes // 2
        seed = args.seed * 100 + i
        x = exact_inputs(torch, n, seed, rank, dev).to(torch.bfloat16)
        ref = torch.zeros(n, dtype=torch.float64, device=dev)
        absum = torch.zeros(n, dtype=torch.float64, device=dev)
        for p in range(world):
            xp = exact_inputs(torch, n, seed, p, dev)
            ref += xp
            absum += xp.abs()
            del xp
        want = ref.to(torch.float32).to(torch.bfloat16)
        out = x.clone()
        dist.all_reduce(out)
        torch.cuda.synchronize()
        exact = int((out.view(torch.int16) == want.view(torch.int16)).sum().item())
        err = (out.to(torch.float64) - ref).abs()
        # NCCL reduces in bf16: every partial sum of the ring (up to world - 1
        # of them, each at most the sum of the magnitudes) is rounded too.
        tol = ref.abs() * 2.0**-8 + absum * world * 2.0**-9 + 1e-30
        bad = int((~(err <= tol)).sum().item())
        ok = ok and bad == 0
        del ref, want, absum
        iters = iters_for(nbytes)
        us = timed(torch, lambda: dist.all_reduce(out), iters)
        emit({"bench": "collective", "impl": "nccl.allreduce", "ranks": world, "gpu": gpu,
              "bytes_per_rank": nbytes, "iters": iters, "time_us": round(us, 2),
              "algbw_GBps": round(nbytes / us / 1e3, 2),
              "busbw_GBps": round(nbytes * 2 * (world - 1) / world / us / 1e3, 2),
              "mismatches": bad, "bit_exact": exact, "elements": n, "correct": bad == 0})
        del x, out
    return ok


def tp_gemm(torch, rank, world, args, gpu, emit):
    import torch.distributed as dist
    dev = torch.device("cuda", rank)
    ok = True
    for (M, N, K) in args.tp:
        Kr = K // world
        seed = args.seed * 100 + 50 + M % 97
        A = gemm_operand(torch, (M, Kr), seed, rank, dev)
        B = gemm_operand(torch, (Kr, N), seed + 1, rank, dev)
        rows = torch.arange(0, M, max(1, M // 16), device=dev)
        ref = torch.zeros(len(rows), N, dtype=torch.float64, device=dev)
        mag = torch.zeros(len(rows), N, dtype=torch.float64, device=dev)
        for p in range(world):
            Ap = gemm_operand(torch, (M, Kr), seed, p, dev)[rows].to(torch.float64)
            Bp = gemm_operand(torch, (Kr, N), seed + 1, p, dev).to(torch.float64)
            part = Ap @ Bp
            ref += part
            mag += part.abs()
            del Ap, Bp
        chunks = 4 if M >= 512 else 1
        rc = M // chunks
        C = torch.empty(M, N, dtype=torch.bfloat16, device=dev)
        side = torch.cuda.Stream(device=dev)

        def seq():
            torch.matmul(A, B, out=C)
            dist.all_reduce(C)

        def overlap():
            main = torch.cuda.current_stream(dev)
            for c in range(chunks):
                torch.matmul(A[c * rc:(c + 1) * rc], B, out=C[c * rc:(c + 1) * rc])
                ev = torch.cuda.Event()
                ev.record(main)
                side.wait_event(ev)
                with torch.cuda.stream(side):
                    dist.all_reduce(C[c * rc:(c + 1) * rc])
            main.wait_stream(side)

        def gemm_only():
            torch.matmul(A, B, out=C)

        for name, fn in (("cublas", gemm_only), ("cublas+nccl.seq", seq),
                         ("cublas+nccl.overlap", overlap)):
            C.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            if name == "cublas":
                bad = 0
            else:
                got = C[rows].to(torch.float64)
                # each partial rounded to bf16, then NCCL's bf16 partial sums
                tol = (mag * world + ref.abs()) * 2.0**-8 + 1e-6
                bad = int((~((got - ref).abs() <= tol)).sum().item())
            ok = ok and bad == 0
            iters = 10 if M * N * K >= 2**36 else 50
            us = timed(torch, fn, iters)
            emit({"bench": "tp_gemm_allreduce", "impl": name,
                  "allreduce": "none" if name == "cublas" else "nccl", "ranks": world,
                  "gpu": gpu, "M": M, "N": N, "K": K, "iters": iters, "time_us": round(us, 2),
                  "tflops": round(2.0 * M * N * K / world / us / 1e6, 1),
                  "sample_mismatches": bad, "correct": bad == 0})
        del A, B, C, ref, mag
    return ok


def ag_gemm(torch, rank, world, args, gpu, emit):
    """All-gather GEMM: rank p holds rows p * MD .. of A (MD = M / world) and
    its own B [N, K]; C = all_gather(A) B^T on every rank. Sampled rows of C
    against float64."""
    import torch.distributed as dist
    dev = torch.device("cuda", rank)
    ok = True
    for (M, N, K) in args.ag:
        MD = M // world
        seed = args.seed * 100 + 70 + M % 89
        A = gemm_operand(torch, (MD, K), seed, rank, dev)
        B = gemm_operand(torch, (N, K), seed + 1, rank, dev)
        AG = torch.empty(M, K, dtype=torch.bfloat16, device=dev)
        C = torch.empty(M, N, dtype=torch.bfloat16, device=dev)
        rows = torch.arange(0, M, max(1, M // 16), device=dev)
        full = torch.cat([gemm_operand(torch, (MD, K), seed, p, dev) for p in range(world)])
        ref = full[rows].to(torch.float64) @ B.to(torch.float64).t()
        mag = full[rows].to(torch.float64).abs() @ B.to(torch.float64).abs().t()
        del full

        def seq():
            dist.all_gather_into_tensor(AG, A)
            torch.matmul(AG, B.t(), out=C)

        def gemm_only():
            torch.matmul(AG, B.t(), out=C)

        for name, fn in (("nccl.all_gather+cublas.seq", seq), ("cublas", gemm_only)):
            C.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            got = C[rows].to(torch.float64)
            tol = ref.abs() * 2.0**-8 + mag * 2.0**-16 + 1e-6
            bad = int((~((got - ref).abs() <= tol)).sum().item())
            ok = ok and bad == 0
            iters = 10 if M * N * K >= 2**36 else 50
            us = timed(torch, fn, iters)
            emit({"bench": "allgather_gemm", "impl": name, "ranks": world, "gpu": gpu,
                  "M": M, "N": N, "K": K, "iters": iters, "time_us": round(us, 2),
                  "tflops": round(2.0 * M * N * K / us / 1e6, 1),
                  "sample_mismatches": bad, "correct": bad == 0})
        del A, B, AG, C, ref, mag
    return ok


def worker(rank, world, args, init_file, result_dir):
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    try:
        dist.init_process_group("nccl", init_method="file://" + init_file, rank=rank,
                                world_size=world, device_id=torch.device("cuda", rank))
    except TypeError:  # torch before 2.3 has no device_id
        dist.init_process_group("nccl", init_method="file://" + init_file, rank=rank,
                                world_size=world)
    gpu = torch.cuda.get_device_name(rank)

    def emit(obj):
        if rank == 0:
            print(json.dumps(obj), flush=True)

    ok = allreduce_sizes(torch, rank, world, args, gpu, emit)
    if args.tp:
        ok = tp_gemm(torch, rank, world, args, gpu, emit) and ok
    if args.ag:
        ok = ag_gemm(torch, rank, world, args, gpu, emit) and ok
    dist.barrier()
    dist.destroy_process_group()
    with open(os.path.join(result_dir, "rank%d" % rank), "w") as f:
        f.write("ok" if ok else "fail")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=0)
    ap.add_argument("--sizes-mib", default="1,2,4,8,16,32,64,128,256")
    ap.add_argument("--tp", default="")
    ap.add_argument("--ag", default="")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    import torch
    import torch.multiprocessing as mp
    world = args.ranks or torch.cuda.device_count()
    if world > torch.cuda.device_count():
        print("nccl_bench: NCCL needs one GPU per rank", file=sys.stderr)
        return 2
    args.sizes_mib = [float(s) for s in args.sizes_mib.split(",") if s]
    args.tp = [tuple(int(v) for v in t.split("x")) for t in args.tp.split(",") if t]
    args.ag = [tuple(int(v) for v in t.split("x")) for t in args.ag.split(",") if t]
    tmp = tempfile.mkdtemp(prefix="nccl_bench.")
    start = time.time()
    mp.spawn(worker, args=(world, args, os.path.join(tmp, "init"), tmp), nprocs=world)
    results = [open(os.path.join(tmp, "rank%d" % r)).read() for r in range(world)]
    print("nccl_bench: %d ranks, %.1f s, %s" % (world, time.time() - start, results),
          file=sys.stderr)
    return 0 if all(r == "ok" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
