#!/usr/bin/env python3
"""Times lowered GEMM kernels (C = A B^T, bf16) against cuBLAS in one process,
as scripts/model/calib.py does (codegen/gpu_harness.py: a 256 MiB L2 flush
before every timed call, ours and cuBLAS alternating): every output checked
against an fp32 reference (every element written, relative error < 1e-2).

Usage: gemm_run.py DIR PAIRS OUT.csv [--reps N] [--budget S]
PAIRS: lines NAME,MxNxK (DIR/NAME.so, entry tilescope_launch_NAME). Device
machine only; the device folder is made by scripts/model/gen_gemm_sweep.sh
(or gen_gemm_points.sh) with this script, codegen/gpu_harness.py and
scripts/model/run_gemm_dev.sh as run.sh (docs/perf.md, "Tuning table sweep").
Rows: name, M, N, K, us (median), us_min, cublas_us (median of the same
rounds), ratio (cuBLAS / ours), ok, rel_err, gpu."""
import argparse, csv, ctypes, json, os, sys, time
import torch
# codegen/gpu_harness.py: beside this script in a device folder, else in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "codegen"))
from gpu_harness import bind_launch, time_pair  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir"); ap.add_argument("pairs"); ap.add_argument("out")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--budget", type=float, default=80.0)
    a = ap.parse_args()
    t0 = time.time()
    torch.backends.cuda.matmul.allow_tf32 = False
    order, by_shape = [], {}
    for line in open(a.pairs):
        line = line.split("#")[0].strip()
        if not line:
            continue
        name, shape = [x.strip() for x in line.split(",")]
        shape = tuple(int(x) for x in shape.split("x"))
        if shape not in by_shape:
            by_shape[shape] = []
            order.append(shape)
        by_shape[shape].append(name)
    libs = {}
    gpu = torch.cuda.get_device_name()
    out = open(a.out, "w", newline="")
    w = csv.writer(out)
    w.writerow(["name", "M", "N", "K", "us", "us_min", "cublas_us", "ratio", "ok", "rel_err", "gpu", "rel_err_cublas"])
    stream = torch.cuda.current_stream().cuda_stream
    for (m, n, k) in order:
        if time.time() - t0 > a.budget:
            print(f"budget: stopped before {m}x{n}x{k}", flush=True)
            break
        torch.manual_seed(0)
        A = torch.randn(m, k, device="cuda").to(torch.bfloat16)
        B = torch.randn(n, k, device="cuda").to(torch.bfloat16)
        ref = A.float() @ B.float().t()
        ref_norm = ref.norm().item()
        C = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        cub = lambda: torch.matmul(A, B.t())
        for name in by_shape[(m, n, k)]:
            if name not in libs:
                so = os.path.join(a.dir, name + ".so")
                try:
                    lib = ctypes.CDLL(so)
                except OSError as e:
                    print(f"{name}: {e}", flush=True)
                    libs[name] = None
                    continue
                launch = getattr(lib, "tilescope_launch_" + name)
                launch.restype = ctypes.c_int
                launch.argtypes = [ctypes.c_void_p] * 4
                getattr(lib, "tilescope_abi_" + name).restype = ctypes.c_char_p
                abi = json.loads(getattr(lib, "tilescope_abi_" + name)().decode())
                libs[name] = (launch, abi)
            if libs[name] is None:
                continue
            launch, abi = libs[name]
            syms = {"M": m, "N": n, "K": k}
            ptrs = (ctypes.c_void_p * 3)(A.data_ptr(), B.data_ptr(), C.data_ptr())
            sym_vals = (ctypes.c_int64 * len(abi["symbols"]))(*[syms[s] for s in abi["symbols"]])
            scal = (ctypes.c_double * 1)(0.0)
            run = bind_launch(launch, ptrs, sym_vals, scal, stream, what=f"{name}: launch failed")
            C.view(torch.int16).fill_(-1)
            try:
                run()
                torch.cuda.synchronize()
            except RuntimeError as e:
                print(e, flush=True)
                w.writerow([name, m, n, k, "", "", "", "", False, "", gpu])
                continue
            unwritten = int(torch.isnan(C.float()).sum().item())
            err = (C.float() - ref).norm().item() / ref_norm
            ok = unwritten == 0 and err < 1e-2
            cb = cub().float()
            err_cb = (C.float() - cb).norm().item() / cb.norm().item()
            (t, tmin, _), (tb, _, _) = time_pair(run, cub, warmup=3, reps=a.reps)
            w.writerow([name, m, n, k, f"{t*1e3:.2f}", f"{tmin*1e3:.2f}", f"{tb*1e3:.2f}",
                        f"{tb/t:.3f}", ok, f"{err:.2e}", gpu, f"{err_cb:.2e}"])
            out.flush()
        print(f"shape {m}x{n}x{k} done at {time.time()-t0:.0f} s", flush=True)
    out.close()


if __name__ == "__main__":
    main()
