#!/usr/bin/env python3
"""Writes a small .npy file with the struct module only (numpy may be absent).

usage: mknpy.py OUT DESCR SHAPE SPEC [--version 2]
  DESCR  <f4 <f2 <u2 |u1 <i4 <u4 (anything else is written as given, for tests
         of bad files; its elements are then 4 bytes)
  SHAPE  comma-separated dimensions, e.g. 16,8
  SPEC   fill:V            every element V
         sparse:I=V,I=V    elements at flat index I, the rest 0
         list:V,V,...      the values in order, repeated to fill
  Values are floats for <f4/<f2, integers (0x.. allowed) otherwise.
"""
import struct
import sys

FORMATS = {"<f4": "f", "<f2": "e", "<u2": "H", "|u1": "B", "<i4": "i", "<u4": "I"}


def main():
    args = sys.argv[1:]
    version = 1
    if "--version" in args:
        i = args.index("--version")
        version = int(args[i + 1])
        del args[i:i + 2]
    out, descr, shape_text, spec = args
    shape = [int(d) for d in shape_text.split(",") if d]
    count = 1
    for d in shape:
        count *= d
    code = FORMATS.get(descr, "I")
    parse = float if code in "fe" else (lambda s: int(s, 0))
    kind, _, body = spec.partition(":")
    if kind == "fill":
        values = [parse(body)] * count
    elif kind == "sparse":
        values = [parse("0")] * count
        for item in body.split(","):
            index, _, value = item.partition("=")
            values[int(index)] = parse(value)
    elif kind == "list":
        items = [parse(v) for v in body.split(",")]
        values = [items[i % len(items)] for i in range(count)]
    else:
        sys.exit("bad SPEC " + spec)
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    prefix = 10 if version == 1 else 12
    header += " " * ((64 - (prefix + len(header) + 1) % 64) % 64) + "\n"
    length = struct.pack("<H" if version == 1 else "<I", len(header))
    with open(out, "wb") as f:
        f.write(b"\x93NUMPY" + bytes([version, 0]) + length + header.encode("ascii"))
        f.write(struct.pack("<%d%s" % (count, code), *values))


main()
