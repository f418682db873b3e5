#!/usr/bin/env python3
"""Checks a simulator dump element by element, with the struct module only.

usage: npycheck.py DIR OUT EXPR
  Every DIR/*.npy is loaded as a flat list named after the file. For each flat
  index i of OUT, the Python expression EXPR (over i and those lists) must be
  true. Prints how many elements were checked, or the first failing index
  (exit 1).
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


def main():
    directory, out, expr = sys.argv[1:]
    tensors = {os.path.basename(p)[:-4]: load(p) for p in glob.glob(os.path.join(directory, "*.npy"))}
    check = compile(expr, "<expr>", "eval")
    for i in range(len(tensors[out])):
        if not eval(check, {}, dict(tensors, i=i)):
            print("%s[%d] = %r fails %s" % (out, i, tensors[out][i], expr))
            sys.exit(1)
    print("%s: %d elements checked" % (out, len(tensors[out])))


main()
