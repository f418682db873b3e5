#!/usr/bin/env python3
"""Hardware harness for `tilescope bench` (GPU machine only).

Loads the shared library that `tilescope bench` built from a lowered kernel,
reads the kernel's ABI (tilescope_abi_K), makes fresh random inputs (never
zeros), poisons the outputs, launches through tilescope_launch_K, checks the
result against a reference in higher precision, and times it with CUDA events
(warm-up, median of many runs, L2 flushed before every timed run) next to the
library it is compared with (cuBLAS through torch.matmul, cuBLASLt's FP8 GEMM
through torch._scaled_mm, or a straightforward Triton kernel), measured in
the same process. Prints one JSON object.

FP8 references (e4m3 A [M, K] and B [N, K], bf16 C):
  fp8_gemm              C = scale * A B^T (kernel gemm_fp8_sm90; scalar `scale`),
                        against torch._scaled_mm with per-tensor scales;
  fp8_gemm_blockscaled  C[i, j] = sum_b SA[b, i] SB[j / 128, b] (A_b B_b^T)[i, j]
                        over K-blocks b of 128 (gemm_fp8_blockscaled_sm90,
                        DeepGEMM's scale layout), against torch._scaled_mm
                        with 1x128 / 128x128 block scales where this torch and
                        cuBLASLt have them (else the per-tensor call, said so
                        in "baseline"); the error of the same kernel with unit
                        scales is reported too ("unit_scales_rel_err"), next
                        to the per-tensor accumulation's, against float64.

Attention references (bf16 Q, K, V, O [B, H, S, D], f32 L [B, H, S], scalar
sm_scale, 1/sqrt(D) unless --scalars gives it; kernels attention_fwd_*_sm90):
  attention, attention_causal
                        O = softmax(sm_scale Q K^T) V (causal: keys after the
                        query masked) and L its natural-log log-sum-exp,
                        against float64; timed against torch SDPA with the
                        cuDNN backend and with the flash backend (FA2), all
                        three in rotating order in the same process, both
                        reported ("cudnn_*", "flash_*"; a backend this torch
                        refuses is reported as such).
"""
import argparse
import ctypes
import json
import sys

import torch

from gpu_harness import bind_launch, time_pair, time_rotating, triton_rmsnorm

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
          "f8e4m3": torch.float8_e4m3fn}
FP8_REFS = ("fp8_gemm", "fp8_gemm_blockscaled")
ATTENTION_REFS = ("attention", "attention_causal")


def parse_args_list(text):
    out = {}
    for part in filter(None, text.split(",")):
        k, v = part.split("=")
        out[k.strip()] = int(v)
    return out


def shape_of(dims, symbols):
    return [int(eval(d, {}, dict(symbols))) for d in dims]


def timed(t, rate, amount, scale):
    """The kernel's median, min and max ms (t) and its rate (amount / ms / scale)."""
    return {"ms": t[0], "ms_min": t[1], "ms_max": t[2], rate: amount / t[0] / scale}


def compared(name, t_base, t_ours, rate, amount, scale):
    """A baseline's median ms and rate, and its time over ours (ratio_vs_NAME)."""
    return {name + "_ms": t_base[0], name + "_" + rate: amount / t_base[0] / scale,
            "ratio_vs_" + name: t_base[0] / t_ours[0]}


def f64(x):
    return x.float().double()


def rel_err(x, ref):
    return ((f64(x) - ref).norm() / ref.norm()).item()


def block_scaled_ref(A, B, SA, SB):
    """C = sum over K-blocks of 128 of SA[b, i] SB[j / 128, b] (A_b B_b^T)[i, j], in float64."""
    M, K = A.shape
    N = B.shape[0]
    sa = SA.double().t().repeat_interleave(128, dim=1)[:, :K]                      # [M, K]
    sb = SB.double().repeat_interleave(128, dim=0)[:N].repeat_interleave(128, dim=1)[:, :K]
    return (f64(A) * sa) @ (f64(B) * sb).t()


def fp8_gemm(a, tensors, names, out, scal, run, unwritten):
    """The FP8 references: correctness against float64, time against torch._scaled_mm."""
    A, B = tensors[names[0]], tensors[names[1]]
    M, K = A.shape
    N = B.shape[0]
    flops = 2.0 * M * N * K
    one = torch.ones((), dtype=torch.float32, device="cuda")
    res = {}
    # cuBLASLt's FP8 GEMM takes M, N and K in multiples of 16: other shapes
    # (the simulator's edge cases) are checked and timed without a baseline.
    baseline = M % 16 == 0 and N % 16 == 0 and K % 16 == 0
    if not baseline:
        ref64 = (scal.get("scale", 1.0) * (f64(A) @ f64(B).t()) if a.ref == "fp8_gemm"
                 else block_scaled_ref(A, B, tensors[names[2]], tensors[names[3]]))
        lib = None
        res["baseline"] = "none: torch._scaled_mm needs M, N, K divisible by 16"
    elif a.ref == "fp8_gemm":
        scale = scal.get("scale", 1.0)
        ref64 = scale * (f64(A) @ f64(B).t())
        sa = torch.tensor(scale, dtype=torch.float32, device="cuda")
        lib = lambda: torch._scaled_mm(A, B.t(), scale_a=sa, scale_b=one, out_dtype=torch.bfloat16)
        res["baseline"] = "torch._scaled_mm per-tensor"
    else:
        SA, SB = tensors[names[2]], tensors[names[3]]
        ref64 = block_scaled_ref(A, B, SA, SB)
        # cuBLASLt's block scaling takes scales outer-dimension-major: A's as
        # [M, K/128] with M contiguous (SA^T of the kernel's [K/128, M]), B's as
        # [K/128, N/128] (SB^T).
        # Which layout of B's scales this torch takes is tried: [K/128, N/128]
        # with either dimension contiguous.
        refused = []
        for sa_t, sb_t in ((SA.t(), SB.t()), (SA.t(), SB.t().contiguous())):
            call = lambda sa_t=sa_t, sb_t=sb_t: torch._scaled_mm(
                A, B.t(), scale_a=sa_t, scale_b=sb_t, out_dtype=torch.bfloat16)
            try:
                lib_probe = call()
                torch.cuda.synchronize()
            except Exception as e:  # this torch or cuBLASLt has no block scaling
                refused.append(str(e).splitlines()[0][:160])
                continue
            lib = call
            res["baseline"] = "torch._scaled_mm block-scaled 1x128 / 128x128 (scale_b stride %s)" % (
                list(sb_t.stride()),)
            res["baseline_rel_err"] = rel_err(lib_probe, ref64)
            break
        else:
            res["baseline"] = "torch._scaled_mm per-tensor (block scaling refused: %s)" % (
                " | ".join(refused))
            lib = lambda: torch._scaled_mm(A, B.t(), scale_a=one, scale_b=one,
                                           out_dtype=torch.bfloat16)
    err = rel_err(out, ref64)
    if lib is not None and "baseline_rel_err" not in res and a.ref == "fp8_gemm":
        res["baseline_rel_err"] = rel_err(lib(), ref64)
    if a.ref == "fp8_gemm_blockscaled":
        # The promoted accumulation's own error: the same kernel with unit scales
        # against the float64 product A B^T (the per-tensor kernel's rel_err at
        # scale 1 is the unpromoted one's).
        SA, SB = tensors[names[2]], tensors[names[3]]
        keep = SA.clone(), SB.clone()
        SA.fill_(1.0)
        SB.fill_(1.0)
        run()
        torch.cuda.synchronize()
        res["unit_scales_rel_err"] = rel_err(out, f64(A) @ f64(B).t())
        SA.copy_(keep[0])
        SB.copy_(keep[1])
        out.view(torch.int16).fill_(-1)
        run()
        torch.cuda.synchronize()
        if rel_err(out, ref64) != err:
            raise RuntimeError("the rerun with the original scales differs")
    t_ours, t_lib = time_pair(run, lib if lib is not None else run, reps=a.reps)
    res.update({
        "rel_err": err, "unwritten": unwritten,
        **timed(t_ours, "tflops", flops, 1e9),
        "ok": unwritten == 0 and err < 1e-2,
    })
    if lib is not None:
        res.update(compared("scaled_mm", t_lib, t_ours, "tflops", flops, 1e9))
    return res


def attention(a, tensors, names, scal, run):
    """The attention references: O and L against float64, time against SDPA
    (cuDNN and flash backends)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    causal = a.ref == "attention_causal"
    Q, K, V, O, L = (tensors[n] for n in names[:5])
    B, H, S, D = Q.shape
    scale = scal["sm_scale"]
    O.view(torch.int16).fill_(-1)
    L.view(torch.int32).fill_(-1)
    run()
    torch.cuda.synchronize()
    unwritten = int(torch.isnan(O.float()).sum().item() + torch.isnan(L).sum().item())
    # float64, one head at a time (S x S scores: 2 GiB at S = 16384).
    keep = torch.ones(S, S, dtype=torch.bool, device=Q.device).tril() if causal else None
    ref_o = torch.empty(B, H, S, V.shape[-1], dtype=torch.float64, device=Q.device)
    ref_l = torch.empty(B, H, S, dtype=torch.float64, device=Q.device)
    for b in range(B):
        for h in range(H):
            s = scale * (Q[b, h].double() @ K[b, h].double().t())
            if causal:
                s = s.masked_fill(~keep, float("-inf"))
            ref_l[b, h] = torch.logsumexp(s, dim=-1)
            ref_o[b, h] = torch.softmax(s, dim=-1) @ V[b, h].double()
            del s
    res = {"o_max_abs_err": (O.double() - ref_o).abs().max().item(),
           "l_max_abs_err": (L.double() - ref_l).abs().max().item(),
           "unwritten": unwritten}
    fns = {"ours": run}
    for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
        def call(backend=backend):
            with sdpa_kernel([backend]):
                return torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=causal,
                                                                        scale=scale)
        try:
            res[name + "_o_max_abs_err"] = (call().double() - ref_o).abs().max().item()
            fns[name] = call
        except Exception as ex:  # a backend this torch refuses here
            res[name + "_refused"] = str(ex)[:200]
    t = time_rotating(fns, reps=a.reps)
    flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
    res.update(timed(t["ours"], "tflops", flops, 1e9))
    for name in ("cudnn", "flash"):
        if name in t:
            res.update(compared(name, t[name], t["ours"], "tflops", flops, 1e9))
    # The kernel's error may be at most a few times the cuDNN backend's (both
    # round P and O to bf16), and L's a few units of f32.
    bound = 4 * res.get("cudnn_o_max_abs_err", 2e-3) + 1e-3
    res["ok"] = unwritten == 0 and res["o_max_abs_err"] <= bound and res["l_max_abs_err"] < 1e-3
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--args", required=True, help="M=4096,N=4096,K=4096")
    ap.add_argument("--scalars", default="", help="eps=1e-6")
    ap.add_argument("--ref", required=True,
                    choices=["gemm_abt", "gemm_ab", "rmsnorm"] + list(FP8_REFS) +
                    list(ATTENTION_REFS))
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dump", default="", help="save inputs and output as .npy under this prefix")
    ap.add_argument("--load", default="", help="read inputs NAME.npy under this prefix (bf16 as uint16)")
    ap.add_argument("--expect", default="", help="compare the output bit for bit with this .npy")
    a = ap.parse_args()

    lib = ctypes.CDLL(a.lib)
    abi_fn = getattr(lib, "tilescope_abi_" + a.kernel)
    abi_fn.restype = ctypes.c_char_p
    abi = json.loads(abi_fn().decode())
    launch = getattr(lib, "tilescope_launch_" + a.kernel)
    launch.restype = ctypes.c_int
    launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]

    syms = parse_args_list(a.args)
    if a.ref == "fp8_gemm_blockscaled":
        # The scale tensors' extents, from the sizes (the kernel's where clause).
        syms.setdefault("KB", syms["K"] // 128)
        syms.setdefault("NB", (syms["N"] + 127) // 128)
    scal = {}
    for part in filter(None, a.scalars.split(",")):
        k, v = part.split("=")
        scal[k] = float(v)
    if a.ref == "fp8_gemm":
        scal.setdefault("scale", 1.0)
    if a.ref in ATTENTION_REFS:
        d = [t for t in abi["tensors"] if t["name"] == "Q"][0]["shape"][-1]
        scal.setdefault("sm_scale", 1.0 / float(shape_of([d], syms)[0]) ** 0.5)
    torch.manual_seed(a.seed)
    tensors = {}
    for t in abi["tensors"]:
        shape = shape_of(t["shape"], syms)
        if a.ref == "fp8_gemm_blockscaled" and t["dtype"] == "f32":
            # Block scales: positive, of both signs' exponents, not powers of two.
            x = torch.rand(shape, dtype=torch.float32, device="cuda") * 1.5 + 0.25
        else:
            x = torch.randn(shape, dtype=torch.float32, device="cuda").to(DTYPES[t["dtype"]])
        tensors[t["name"]] = x
    names = [t["name"] for t in abi["tensors"]]
    if a.load:
        import numpy as np
        for n in names[:-1]:
            arr = np.load(f"{a.load}{n}.npy")
            if arr.dtype == np.uint8:  # fp8 codes
                t = torch.from_numpy(arr).cuda().view(tensors[n].dtype)
            else:
                t = torch.from_numpy(arr.view(np.int16) if arr.dtype == np.uint16 else arr).cuda()
                if arr.dtype == np.uint16:
                    t = t.view(tensors[n].dtype)
            tensors[n] = t.reshape(tensors[n].shape)
    out_name = names[-1]  # library kernels write their last tensor
    ptrs = (ctypes.c_void_p * len(names))(*[tensors[n].data_ptr() for n in names])
    sym_vals = (ctypes.c_int64 * max(1, len(abi["symbols"])))(*[syms[s] for s in abi["symbols"]])
    scalar_vals = (ctypes.c_double * max(1, len(abi["scalars"])))(
        *[scal.get(s["name"], 1e-6) for s in abi["scalars"]])
    stream = torch.cuda.current_stream().cuda_stream

    run = bind_launch(launch, ptrs, sym_vals, scalar_vals, stream)

    if a.ref in ATTENTION_REFS:
        result = {"kernel": a.kernel, "args": syms, "gpu": torch.cuda.get_device_name(),
                  "torch": torch.__version__, "sm_scale": scal["sm_scale"]}
        result.update(attention(a, tensors, names, scal, run))
        print(json.dumps(result))
        return 0 if result["ok"] else 1
    # Poison the output (NaN bit patterns), run once, check every element.
    out = tensors[out_name]
    out.view(torch.int16 if out.element_size() == 2 else torch.int32).fill_(-1)
    run()
    torch.cuda.synchronize()
    result = {"kernel": a.kernel, "args": syms, "gpu": torch.cuda.get_device_name(),
              "torch": torch.__version__}
    unwritten = int(torch.isnan(out.float()).sum().item())
    if a.ref in ("gemm_abt", "gemm_ab"):
        A, B = tensors[names[0]], tensors[names[1]]
        Bt = B.t() if a.ref == "gemm_abt" else B
        ref64 = A.double() @ Bt.double()
        M, N = ref64.shape
        Kd = A.shape[1]
        err = ((out.double() - ref64).norm() / ref64.norm()).item()
        lib_out = torch.matmul(A, Bt)
        lib_err = ((lib_out.double() - ref64).norm() / ref64.norm()).item()
        flops = 2.0 * M * N * Kd
        t_ours, t_lib = time_pair(run, lambda: torch.matmul(A, Bt), reps=a.reps)
        result.update({
            "rel_err": err, "cublas_rel_err": lib_err, "unwritten": unwritten,
            **timed(t_ours, "tflops", flops, 1e9),
            **compared("cublas", t_lib, t_ours, "tflops", flops, 1e9),
            "ok": unwritten == 0 and err < 1e-2,
        })
    elif a.ref in FP8_REFS:
        result.update(fp8_gemm(a, tensors, names, out, scal, run, unwritten))
    else:
        X, W, Y = tensors[names[0]], tensors[names[1]], out
        eps = scal.get("eps", 1e-6)
        xf = X.double()
        ref = xf * torch.rsqrt((xf * xf).mean(dim=1, keepdim=True) + eps) * W.double()
        err = ((Y.double() - ref).norm() / ref.norm()).item()
        Yt = torch.empty_like(Y)
        triton_rmsnorm(X, W, Yt, eps)
        t_err = ((Yt.double() - ref).norm() / ref.norm()).item()
        nbytes = 2 * X.numel() * X.element_size() + W.numel() * W.element_size()
        t_ours, t_trn = time_pair(run, lambda: triton_rmsnorm(X, W, Yt, eps), reps=a.reps)
        result.update({
            "rel_err": err, "triton_rel_err": t_err, "unwritten": unwritten,
            **timed(t_ours, "gbps", nbytes, 1e6),
            **compared("triton", t_trn, t_ours, "gbps", nbytes, 1e6),
            "ok": unwritten == 0 and err < 1e-2,
        })
    if a.expect:
        import numpy as np
        want = np.load(a.expect)
        got = out.view(torch.int16).cpu().numpy().view(np.uint16) if out.element_size() == 2 \
            else out.cpu().numpy()
        same = int((want.reshape(got.shape) == got).sum())
        result.update({"bit_identical": same, "compared": int(got.size)})
    if a.dump:
        import numpy as np
        for n in names:
            t = tensors[n]
            if t.dtype == torch.bfloat16:
                arr = t.view(torch.int16).cpu().numpy().view(np.uint16)
            elif t.dtype == torch.float8_e4m3fn:
                arr = t.view(torch.uint8).cpu().numpy()
            else:
                arr = t.cpu().numpy()
            np.save(f"{a.dump}{n}.npy", arr)
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
