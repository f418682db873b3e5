#!/usr/bin/env python3
"""Checks a simulator dump element by element, with the struct module only.

usage: npycheck.py DIR OUT EXPR
  Every DIR/*.npy is loaded as a flat list named after the file. For each flat
  index i of OUT, the Python expression EXPR (over i and those lists) must be
  true. Prints how many elements were checked, or the first failing index
  (exit 1). EXPR may call mx(code, ebits, mbits) for the value of an OCP
  sub-byte float code (fp4 e2m1: 2, 1; fp6 e2m3: 2, 3; fp6 e3m2: 3, 2).
"""
import ast
import glob
import os
import struct
import sys

CODES = {"<f4": "f", "<f2": "e", "<u2": "H", "|u1": "B", "<i4": "i", "<u4": "I", "<f8": "d"}


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    version = data[6]
    if version == 1:
        (length,), start = struct.unpack("<H", data[8:10]), 10
    else:
        (length,), start = struct.unpack("<I", data[8:12]), 12
    header = ast.literal_eval(data[start:start + length].decode("ascii"))
    code = CODES[header["descr"]]
    count = 1
    for d in header["shape"]:
        count *= d
    body = data[start + length:]
    return list(struct.unpack("<%d%s" % (count, code), body[:count * struct.calcsize(code)]))


def mx(code, ebits, mbits):
    """Value of a sign | exponent | mantissa code without inf or NaN."""
    sign = -1 if code >> (ebits + mbits) & 1 else 1
    exponent, mantissa = code >> mbits & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    bias = (1 << (ebits - 1)) - 1
    if exponent == 0:
        return sign * mantissa / (1 << mbits) * 2.0 ** (1 - bias)
    return sign * (1 + mantissa / (1 << mbits)) * 2.0 ** (exponent - bias)


def main():
    directory, out, expr = sys.argv[1:]
    tensors = {os.path.basename(p)[:-4]: load(p) for p in glob.glob(os.path.join(directory, "*.npy"))}
    check = compile(expr, "<expr>", "eval")
    for i in range(len(tensors[out])):
        if not eval(check, {"mx": mx}, dict(tensors, i=i)):
            print("%s[%d] = %r fails %s" % (out, i, tensors[out][i], expr))
            sys.exit(1)
    print("%s: %d elements checked" % (out, len(tensors[out])))


main()
