#!/usr/bin/env python3
"""Writes a broken .npy file of one kind (struct module only).

usage: badnpy.py OUT KIND
  magic      the magic string is wrong
  empty      a zero-byte file
  version3   format version 3.0
  overlong   the header length runs past the end of the file
  noclose    the header dict is never closed
  fortran    fortran_order: True
  descr      an unsupported dtype ('<f8')
  short      the data is 4 bytes short
  long       one byte of data too many
  badshape   a negative dimension
"""
import struct
import sys


def npy(header, data=b"", version=1, length=None):
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    n = len(header) if length is None else length
    return b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<H", n) + header.encode() + data


GOOD = "{'descr': '<f4', 'fortran_order': False, 'shape': (16, 16), }"
DATA = struct.pack("<256f", *([1.0] * 256))
out, kind = sys.argv[1:]
blob = {
    "magic": lambda: b"\x93NUMPZ" + npy(GOOD, DATA)[6:],
    "empty": lambda: b"",
    "version3": lambda: npy(GOOD, DATA, version=3),
    "overlong": lambda: npy(GOOD, b"", length=5000),
    "noclose": lambda: npy("{'descr': '<f4', 'fortran_order': False, 'shape': (16, 16), ", DATA),
    "fortran": lambda: npy(GOOD.replace("False", "True"), DATA),
    "descr": lambda: npy(GOOD.replace("<f4", "<f8"), DATA + DATA),
    "short": lambda: npy(GOOD, DATA[:-4]),
    "long": lambda: npy(GOOD, DATA + b"\0"),
    "badshape": lambda: npy(GOOD.replace("(16, 16)", "(16, -16)"), DATA),
}[kind]()
with open(out, "wb") as f:
    f.write(blob)
