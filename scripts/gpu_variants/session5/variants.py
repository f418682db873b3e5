#!/usr/bin/env python3
"""Session 5 (docs/perf.md, "Session 5"): the split-K variants of
tests/lit/lower/Inputs/gemm-splitk-cluster.tile and the per-CTA timelines.

  python3 variants.py tiles OUTDIR      write splitk_if / sk_nored / sk4d / sk5d .tile
  python3 variants.py trace IN.cu OUT.cu MARKS
                                        add a globaltimer trace (ts_trace, ts_trace_get)
                                        to a lowered kernel; MARKS is a list of
                                        "LINE:CODE" (insert CODE after line LINE of IN.cu)

Each variant changes one thing, so the timings in docs/perf.md separate the effects:
splitk_if keeps one wgmma group in flight; sk_nored drops the reduction (wrong
results, timing only); sk4d / sk5d store C straight from registers (no staging
tile), pad the reduction buffers (row strides 132 / 130 floats, no bank
conflicts from the wgmma accumulator layout), pull the peer's half in one
dsmem.load per thread and have a 4 / 5-stage ring.
"""
import re
import sys

BASE = "tests/lit/lower/Inputs/gemm-splitk-cluster.tile"


def body(path):
    return "".join(l for l in open(path) if not l.startswith("//") or l.startswith("// problem:"))


def in_flight(t):
    old = """    wg.fill(acc, 0.0)
    for k in 0 .. kh {
      let s = k % 4
      mbarrier.wait(full[s], parity = k / 4 % 2)
      wg.gemm(acc, As[s][(wgid - 1 + r) % 2 * 64 : +64, :], Bs[s], transpose_b = true)
      if tid_in_wg == 0 {
        mbarrier.arrive(empty[s])
      }
    }
"""
    new = """    for k in 0 .. kh {
      let s = k % 4
      mbarrier.wait(full[s], parity = k / 4 % 2)
      wgmma.fence()
      wgmma.mma_async(acc, As[s][(wgid - 1 + r) % 2 * 64 : +64, :], Bs[s], transpose_b = true, accumulate = k > 0)
      wgmma.commit_group()
      wgmma.wait_group(1)
      if k > 0 && tid_in_wg == 0 {
        mbarrier.arrive(empty[(k + 3) % 4])
      }
    }
    wgmma.wait_group(0)
    if tid_in_wg == 0 {
      mbarrier.arrive(empty[(kh + 3) % 4])
    }
"""
    assert old in t
    return t.replace(old, new)


PULL = """    for j in 0 .. 16 {
      dsmem.load(take[tid_in_wg / 2, tid_in_wg % 2 * 64 + j * 4 : +4], give[tid_in_wg / 2, tid_in_wg % 2 * 64 + j * 4 : +4], cta = 1 - r)
    }
"""


def no_reduction(t):
    t = t.replace("    if wgid == 2 {\n      wg.copy(give, acc)\n    }\n", "").replace(PULL, "")
    return t.replace("""    barrier.sync(1, threads = 128)
    reg part: f32[64, 128] layout(wgmma_acc(64, 128))
    wg.copy(part, take)
    wg.add(acc, acc, part)
""", "", 1)


def direct(t, stages, give_stride, take_stride):
    t = t.replace("where M > 0, N > 0, K > 0, N % 8 == 0, K % 128 == 0",
                  "where M % 128 == 0, N % 128 == 0, K % 128 == 0")
    t = t.replace("bf16[4, 128, 64] layout(swizzle(128B, bf16, S[(4, 128, 64):",
                  f"bf16[{stages}, 128, 64] layout(swizzle(128B, bf16, S[({stages}, 128, 64):")
    t = t.replace("full[4](count = 1), empty[4](count = 2)",
                  f"full[{stages}](count = 1), empty[{stages}](count = 2)")
    t = re.sub(r"k % 4", f"k % {stages}", t)
    t = re.sub(r"k / 4", f"k / {stages}", t)
    t = re.sub(r"\((k|kh) \+ 3\) % 4", lambda m: f"({m.group(1)} + {stages - 1}) % {stages}", t)
    t = t.replace("shared give: f32[64, 128]", f"shared give: f32[64, {give_stride}]")
    t = t.replace("shared take: f32[64, 128]", f"shared take: f32[64, {take_stride}]")
    t = t.replace("wg.copy(give, acc)", "wg.copy(give[:, 0 : +128], acc)")
    t = t.replace("wg.copy(part, take)", "wg.copy(part, take[:, 0 : +128])")
    t = re.sub(r"  shared Cs: .*\n", "", t)
    t = t.replace(PULL, "    dsmem.load(take[tid_in_wg / 2, tid_in_wg % 2 * 64 : +64], "
                        "give[tid_in_wg / 2, tid_in_wg % 2 * 64 : +64], cta = 1 - r)\n")
    s = t.index("    wg.copy(Cs, out)")
    e = t.index("  barrier.cluster.arrive()", s)
    return t[:s] + "    wg.copy(C[m0 + r * 64 : +64, n0 : +128], out)\n  }\n" + t[e:]


TRACE = r'''
__device__ unsigned long long ts_trace[1024 * 16];
__device__ __forceinline__ void ts_mark(int slot) {
  unsigned long long g, c; unsigned sm;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c));
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  int cta = blockIdx.y * gridDim.x + blockIdx.x;
  ts_trace[cta * 16 + slot * 2] = g;
  ts_trace[cta * 16 + slot * 2 + 1] = (c & 0xFFFFFFFFFFFFull) | ((unsigned long long)sm << 48);
}
extern "C" int ts_trace_get(void *host) { return (int)cudaMemcpyFromSymbol(host, ts_trace, sizeof(ts_trace)); }
'''


def main():
    if sys.argv[1] == "tiles":
        out = sys.argv[2]
        base = body(BASE)
        inf = in_flight(base)
        for name, text in [("splitk_if", inf), ("sk_nored", no_reduction(base)),
                           ("sk4d", direct(inf, 4, 132, 132)), ("sk5d", direct(inf, 5, 132, 130))]:
            open(f"{out}/{name}.tile", "w").write(text.replace("gemm_bf16_sm90_splitk", name))
    else:
        lines = open(sys.argv[2]).read().split("\n")
        for mark in sys.argv[4:]:
            n, code = mark.split(":", 1)
            lines[int(n) - 1] += "\n" + code
        src = "\n".join(lines)
        i = src.index('extern "C" __global__')
        open(sys.argv[3], "w").write(src[:i] + TRACE + src[i:])


if __name__ == "__main__":
    main()
