#!/usr/bin/env python3
"""Run 6's hand edits of lowered RMSNorm kernels (docs/perf.md): what the
hand-written 128-thread kernel of diag2.cu does differently from the lowered
one, one change at a time, before any is carried into the family.

    edit_lowered.py IN.cu OUT.cu PREFIX [--late-w] [--pairs]

--late-w  moves each kernel's conversion of W to f32 (`wf[k] =
          ts_to_f32(wv[k]);`) from before the row loop to just before its
          first use, after the reduction;
--pairs   converts and packs Y two elements at a time
          (__floats2bfloat162_rn, one cvt.rn.bf16x2.f32) instead of one;
PREFIX    replaces the kernels' b_ prefix (b_cta_... -> PREFIX_cta_...).
IN.cu is `tilescope lower` of points instantiated as b_NAME (build.sh's
instantiate does the renaming)."""
import re
import sys

WF = re.compile(r"\s*wf\[\d+\] = ts_to_f32\(wv\[\d+\]\);")
FIRST_USE = re.compile(r"\s*xf\[0\] = \(xf\[0\] \* wf\[0\]\);")
PAIR = re.compile(r"(\s*)xv\[(\d+)\] = __float2bfloat16_rn\(ts_to_f32\(xf\[(\d+)\]\)\);\n"
                  r"\s*xv\[(\d+)\] = __float2bfloat16_rn\(ts_to_f32\(xf\[(\d+)\]\)\);")


def late_w(src):
    out = []
    for part in re.split(r'(?=extern "C" __global__ void)', src):
        lines = part.split("\n")
        moved = [ln for ln in lines if WF.fullmatch(ln)]
        if moved:
            at = next(i for i, ln in enumerate(lines) if FIRST_USE.fullmatch(ln))
            indent = re.match(r"\s*", lines[at]).group(0)
            lines = ([ln for ln in lines[:at] if not WF.fullmatch(ln)] +
                     [indent + ln.strip() for ln in moved] + lines[at:])
        out.append("\n".join(lines))
    return "".join(out)


def pairs(src):
    return PAIR.sub(lambda m: (f"{m.group(1)}{{ const __nv_bfloat162 p = __floats2bfloat162_rn("
                               f"xf[{m.group(3)}], xf[{m.group(5)}]); xv[{m.group(2)}] = p.x; "
                               f"xv[{m.group(4)}] = p.y; }}"), src)


def main():
    src = open(sys.argv[1]).read()
    if "--late-w" in sys.argv:
        src = late_w(src)
    if "--pairs" in sys.argv:
        src = pairs(src)
    open(sys.argv[2], "w").write(src.replace("b_cta_", sys.argv[3] + "_cta_"))


if __name__ == "__main__":
    main()
