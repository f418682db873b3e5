#!/usr/bin/env python3
"""Run 2's evict-first twins: rewrites a lowered RMSNorm .cu (PLAIN) so that
its 16-byte X loads and Y stores are ld/st.global.L1::no_allocate
.L2::cache_hint with an L2 evict_first policy (createpolicy.fractional), and
appends _ef to the kernel names (the launchers keep theirs: the twins are
built into a library of their own). W's load is unchanged (every CTA reads
W). The IR has no cache hints: this measures the idea before carrying it in.

    make_ef.py PLAIN.cu EF.cu
"""
import re
import sys

HELPERS = '''
// Evict-first 16-byte global accesses (bench/rmsnorm/make_ef.py).
__device__ __forceinline__ ts_vec<__nv_bfloat16, 8> ts_ldg_ef(const __nv_bfloat16 *p) {
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  uint32_t r[4];
  asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "l"(p), "l"(pol) : "memory");
  ts_vec<__nv_bfloat16, 8> v;
  memcpy(&v, r, 16);
  return v;
}
__device__ __forceinline__ void ts_stg_ef(__nv_bfloat16 *p, ts_vec<__nv_bfloat16, 8> v) {
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  uint32_t r[4];
  memcpy(r, &v, 16);
  asm volatile("st.global.L1::no_allocate.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;"
               :: "l"(p), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]), "l"(pol) : "memory");
}
'''


def main():
    s = open(sys.argv[1]).read()
    i = s.index('extern "C" __global__')
    s = s[:i] + HELPERS + "\n" + s[i:]
    s = s.replace("*reinterpret_cast<const ts_vec<__nv_bfloat16, 8> *>(&X[", "ts_ldg_ef(&X[")
    s = re.sub(r"\*reinterpret_cast<ts_vec<__nv_bfloat16, 8> \*>\((&Y\[.*\])\) = "
               r"(ts_vec<__nv_bfloat16, 8>\{\{.*\}\});", r"ts_stg_ef(\1, \2);", s)
    s = re.sub(r"\brf_(\w+)", r"rf_\1_ef", s)
    open(sys.argv[2], "w").write(s)


if __name__ == "__main__":
    main()
