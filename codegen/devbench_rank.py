"""One rank of codegen/devbench.py (`tilescope bench --devices N`), a process
of its own on GPU rank % G: opens the communicator through the bench
library's C entry points (codegen/runtime/ts_bench_entry.cuh), fills, runs,
checks and times the kernel, and writes its result as RESULT_DIR/result.R.json
for the parent (devbench.py), which reports every rank together.

Inputs are fresh per rank from the seed, and every rank regenerates every
other rank's inputs for the float64 reference:
  - collectives (allreduce, all_gather, reduce_scatter): 8 significant bits
    times 2^[-11, -4] with a sign, so that a sum over up to 8 ranks is exact
    in fp32; every output must then equal the bf16 rounding of the float64
    result, bit for bit (the lowered collectives sum in fp32 in rank order);
  - GEMM problems (tp_gemm_allreduce, allgather_gemm, gemm_reduce_scatter):
    k / 128 for k in [-128, 128) (exact in bf16); every output within the
    rounding of each device's partial product to bf16 and of their fp32 sum
    to bf16 (2^-8 of the partials' and the result's magnitudes) plus 2^-18 of
    the sum of the products' magnitudes (the fp32 sums of the GEMM).
"""
import ctypes
import datetime
import json
import os

import torch

import gpu_harness as h

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
          "f8e4m3": torch.float8_e4m3fn, "i8": torch.int8, "u8": torch.uint8,
          "i16": torch.int16, "u16": torch.int16, "i32": torch.int32, "u32": torch.int32,
          "i64": torch.int64, "u64": torch.int64}
BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
COLLECTIVES = ("allreduce", "all_gather", "reduce_scatter")
BASELINE_KINDS = COLLECTIVES + ("tp_gemm_allreduce", "allgather_gemm", "gemm_reduce_scatter")


class Region:
    """The own data area, as torch reads a CUDA array (no copy)."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1",
                                         "data": (ptr, False), "version": 3, "strides": None}


def exact_values(shape, seed, rank, which, dev):
    g = torch.Generator(device=dev)
    g.manual_seed((seed * 16 + which) * 1000 + rank)
    n = 1
    for s in shape:
        n *= s
    mant = torch.randint(128, 256, (n,), generator=g, device=dev, dtype=torch.int32)
    exp = torch.randint(-11, -3, (n,), generator=g, device=dev, dtype=torch.int32)
    sign = torch.randint(0, 2, (n,), generator=g, device=dev, dtype=torch.int32) * 2 - 1
    v = (sign * mant).to(torch.float64) * torch.pow(2.0, exp.to(torch.float64))
    return v.reshape(shape)


def gemm_values(shape, seed, rank, which, dev):
    g = torch.Generator(device=dev)
    g.manual_seed((seed * 16 + which) * 1000 + rank)
    k = torch.randint(-128, 128, tuple(shape), generator=g, device=dev, dtype=torch.int32)
    return k.to(torch.float64) / 128.0


def operand(x, transposed):
    return x.t() if transposed else x


def reference(prob, inputs, rank, n):
    """This rank's float64 output and its tolerance (None: bit for bit)."""
    kind = prob["kind"]
    if kind in COLLECTIVES:
        xs = inputs[prob["inputs"][0]["name"]]
        if kind == "all_gather":
            return torch.cat(xs, dim=0), None
        total = sum(xs)
        if kind == "reduce_scatter":
            rows = total.shape[0] // n
            return total[rank * rows:(rank + 1) * rows], None
        return total, None
    (a, b) = prob["inputs"]
    A = [operand(x, a["transposed"]) for x in inputs[a["name"]]]
    B = [operand(x, b["transposed"]) for x in inputs[b["name"]]]
    if kind == "allgather_gemm":
        ag = torch.cat(A, dim=0)
        want = ag @ B[rank]
        return want, want.abs() * 2.0**-8 + (ag.abs() @ B[rank].abs()) * 2.0**-18
    parts = [A[p] @ B[p] for p in range(n)]
    want = sum(parts)
    tol = (sum(x.abs() for x in parts) + want.abs()) * 2.0**-8 + \
        sum(A[p].abs() @ B[p].abs() for p in range(n)) * 2.0**-18
    if kind == "gemm_reduce_scatter":
        rows = want.shape[0] // n
        return want[rank * rows:(rank + 1) * rows], tol[rank * rows:(rank + 1) * rows]
    return want, tol


def check(out, want, tol, rank, name, when):
    """Every element of `out` against the float64 `want`."""
    got = out.double()
    unwritten = int(torch.isnan(got).sum().item())
    if tol is None:
        ints = BITS[out.element_size()]
        bad = out.view(ints) != want.to(torch.float32).to(out.dtype).view(ints)
    else:
        bad = ~((got - want).abs() <= tol)
    count = int(bad.sum().item())
    c = {"rank": rank, "when": when, "tensor": name, "compared": out.numel(),
         "mismatches": count, "unwritten": unwritten,
         "bit_for_bit": tol is None, "max_abs_err": float((got - want).abs().nan_to_num(
             float("inf")).max().item()) if out.numel() else 0.0}
    if count:
        i = int(bad.reshape(-1).nonzero()[0].item())
        idx, rest = [], i
        for s in reversed(out.shape):
            idx.append(rest % s)
            rest //= s
        at = ", ".join(str(x) for x in reversed(idx))
        c["first_bad"] = (f"rank {rank}, {when}: {name}[{at}] = {got.reshape(-1)[i].item()!r}, "
                          f"float64 {want.reshape(-1)[i].item()!r}")
    c["ok"] = count == 0 and unwritten == 0
    return c


def baseline(prob, T, n):
    """The NCCL (and cuBLAS) call that computes the same output, and its name."""
    import torch.distributed as dist
    kind = prob["kind"]
    out = T[prob["outputs"][0]["name"]]
    if kind in COLLECTIVES:
        x = T[prob["inputs"][0]["name"]]
        buf = torch.empty_like(out)
        if kind == "allreduce":
            buf.copy_(x)
            return lambda: dist.all_reduce(buf), "nccl.allreduce"
        if kind == "all_gather":
            return lambda: dist.all_gather_into_tensor(buf, x), "nccl.all_gather"
        return lambda: dist.reduce_scatter_tensor(buf, x), "nccl.reduce_scatter"
    (a, b) = prob["inputs"]
    A = operand(T[a["name"]], a["transposed"])
    B = operand(T[b["name"]], b["transposed"])
    if kind == "allgather_gemm":
        ag = torch.empty((A.shape[0] * n, A.shape[1]), dtype=A.dtype, device=A.device)
        c = torch.empty_like(out)

        def ag_gemm():
            dist.all_gather_into_tensor(ag, A.contiguous())
            torch.matmul(ag, B, out=c)
        return ag_gemm, "nccl.all_gather+cublas"
    part = torch.empty((A.shape[0], B.shape[1]), dtype=out.dtype, device=out.device)
    c = torch.empty_like(out)

    def gemm_then_collective():
        torch.matmul(A, B, out=part)
        if kind == "tp_gemm_allreduce":
            dist.all_reduce(part)
        else:
            dist.reduce_scatter_tensor(c, part)
    return gemm_then_collective, ("cublas+nccl.allreduce" if kind == "tp_gemm_allreduce"
                                  else "cublas+nccl.reduce_scatter")


def bind(lib):
    vp, i = ctypes.c_void_p, ctypes.c_int
    lib.tsb_init.restype = vp
    lib.tsb_init.argtypes = [i, i, ctypes.c_ulonglong, ctypes.c_char_p, i, ctypes.c_char_p, i]
    lib.tsb_local_data.restype = vp
    lib.tsb_local_data.argtypes = [vp]
    lib.tsb_barrier.argtypes = [vp, vp]
    lib.tsb_error.restype = ctypes.c_char_p
    lib.tsb_error.argtypes = [vp]
    lib.tsb_last_impl.restype = ctypes.c_char_p
    lib.tsb_last_impl.argtypes = [vp]
    lib.tsb_finalize.argtypes = [vp]
    lib.tsb_launch.argtypes = [vp, vp, vp, vp, vp]


class Refused(Exception):
    pass


def run(m, a, res):
    r, n = a.rank, m["devices"]
    gpus = torch.cuda.device_count()
    res["gpus"] = gpus
    if gpus == 0:
        res["refused"] = True
        raise Refused("no GPU on this machine (torch.cuda.device_count() is 0)")
    dev = r % gpus
    torch.cuda.set_device(dev)
    res.update(device=dev, gpu=torch.cuda.get_device_name(dev), torch=torch.__version__)
    lib = ctypes.CDLL(a.lib)
    bind(lib)
    err = ctypes.create_string_buffer(1024)
    comm = lib.tsb_init(r, n, m["data_bytes"], a.dir.encode(), dev, err, len(err))
    if not comm:
        raise RuntimeError("tsb_init: " + err.value.decode())
    region = torch.as_tensor(Region(lib.tsb_local_data(comm), m["data_bytes"]))
    T = {t["name"]: region[t["offset"]:t["offset"] + t["bytes"]].view(DTYPES[t["dtype"]])
         .view(t["shape"]) for t in m["tensors"]}
    stream = torch.cuda.current_stream().cuda_stream
    kinds = {"offset": ctypes.c_uint64, "int": ctypes.c_int64, "real": ctypes.c_double}
    arrays = {}
    for k, ct in kinds.items():
        vals = [p["value"] for p in m["launcher"] if p["kind"] == k]
        arrays[k] = (ct * max(1, len(vals)))(*vals)

    def ours():
        rc = lib.tsb_launch(comm, arrays["offset"], arrays["int"], arrays["real"], stream)
        if rc == 2:
            res["refused"] = True
            raise Refused(f"the launcher of {m['kernel']} refused the arguments (its where "
                          "clause or a tile's chunking; the message above says which)")
        if rc != 0:
            raise RuntimeError(f"the launcher of {m['kernel']} failed (CUDA error)")

    def barrier():
        if lib.tsb_barrier(comm, stream) != 0:
            raise RuntimeError("device barrier: " + lib.tsb_error(comm).decode())

    prob = m["problem"]
    outn = prob["outputs"][0]["name"]
    gen = exact_values if prob["kind"] in COLLECTIVES else gemm_values
    inputs = {}
    for i, o in enumerate(prob["inputs"]):
        x = T[o["name"]]
        # every rank's values as its tensor holds them (rounded to the dtype)
        inputs[o["name"]] = [gen(list(x.shape), a.seed, p, i, f"cuda:{dev}").to(x.dtype).double()
                             for p in range(n)]
        x.copy_(inputs[o["name"]][r].to(x.dtype))
    for t in m["tensors"]:  # scratch and flags zero, the output poisoned (NaN)
        if t["name"] not in inputs:
            T[t["name"]].view(torch.uint8).fill_(255 if t["name"] == outn else 0)
    torch.cuda.synchronize()
    want, tol = reference(prob, inputs, r, n)
    del inputs

    def call_and_check(when):
        T[outn].view(torch.uint8).fill_(255)
        barrier()
        ours()
        torch.cuda.synchronize()
        res["checks"].append(check(T[outn], want, tol, r, outn, when))

    call_and_check("first call")
    res["picked"] = lib.tsb_last_impl(comm).decode()
    note, base = None, None
    if prob["kind"] not in BASELINE_KINDS:
        note = f"no baseline for problem {prob['kind']}"
    elif n > gpus:
        note = "no baseline: NCCL refuses two ranks on one GPU"
    if note is None:
        try:
            import torch.distributed as dist
            dist.init_process_group("nccl", init_method="file://" + os.path.join(a.dir, "nccl"),
                                    rank=r, world_size=n, timeout=datetime.timedelta(seconds=60))
            base, res["baseline"] = baseline(prob, T, n)
        except Exception as ex:  # no NCCL here: say so, time ours alone
            note = f"no baseline: NCCL through torch.distributed failed ({ex})"[:300]
    if base is not None and n == 1 and prob["kind"] in COLLECTIVES:
        note = (f"one rank: NCCL's {prob['kind']} is in place and need not move any data; the "
                "kernel copies its input into its output")
    res["baseline_note"] = note
    t_ours, t_base = h.pair_times(ours, base, warmup=10, reps=a.reps, before=barrier)
    res["ours_ms"] = t_ours
    if base is not None:
        res["baseline_ms"] = t_base
    call_and_check("after the timed calls")
    barrier()
    torch.cuda.synchronize()
    if base is not None:
        import torch.distributed as dist
        dist.destroy_process_group()
    if lib.tsb_finalize(comm) != 0:
        raise RuntimeError("tsb_finalize failed")
    res["ok"] = all(c["ok"] for c in res["checks"])


def rank_main(m, a):
    res = {"rank": a.rank, "ok": False, "checks": []}
    code = 0
    try:
        run(m, a, res)
        code = 0 if res["ok"] else 1
    except Refused as ex:
        res["error"] = f"rank {a.rank}: {ex}"
        code = 2
    except Exception as ex:  # reported by the parent with every rank's
        res["error"] = f"rank {a.rank}: {type(ex).__name__}: {ex}"
        code = 1
    path = os.path.join(a.dir, f"result.{a.rank}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(res, f)
    os.replace(path + ".tmp", path)
    return code
