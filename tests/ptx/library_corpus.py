#!/usr/bin/env python3
"""Lists each library kernel file (kernels/*.tile) with the PTX that stands
for it in tests/ptx/nvcc (regenerate_nvcc.sh), and fails when one has none:
the round trip of issue 19 covers the whole library. The GEMM family's named
points are gemm_bf16_sm90 and gemm_bf16_sm90_grouped (`tilescope check`
checks them as those kernels), so their PTX stands for the family.

    library_corpus.py ROOT
"""
import glob
import os
import sys

STANDS_FOR = {"gemm_bf16_sm90_family": ["gemm_bf16_sm90", "gemm_bf16_sm90_grouped"]}


def main():
    root = sys.argv[1]
    missing = 0
    for path in sorted(glob.glob(os.path.join(root, "kernels", "*.tile"))):
        name = os.path.basename(path)[:-len(".tile")]
        for ptx in STANDS_FOR.get(name, [name]):
            have = os.path.exists(os.path.join(root, "tests", "ptx", "nvcc", ptx + ".ptx"))
            print("%s: %s.ptx%s" % (name, ptx, "" if have else " MISSING"))
            missing += not have
    print("%d kernel files, %d without PTX" % (len(glob.glob(os.path.join(root, "kernels",
                                                                        "*.tile"))), missing))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
