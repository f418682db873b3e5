#!/usr/bin/env python3
"""Small .npy files for the lit tests, without NumPy (struct only).

  npy.py write OUT.npy 8x96 SCALE f32   element i = SCALE * ((37 i) % 101 - 50) / 50, as '<f4'
  npy.py rowsums IN.npy                 the sum of each row (last axis) of a '<f4' array
  npy.py show IN.npy                    descr and shape
"""
import ast
import struct
import sys


def write(path, shape_text, scale):
    shape = tuple(int(d) for d in shape_text.split("x"))
    count = 1
    for d in shape:
        count *= d
    values = [scale * (((37 * i) % 101) - 50) / 50.0 for i in range(count)]
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % (shape,)
    # Magic, version 1.0, header padded with spaces to a multiple of 64 bytes.
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%df" % count, *values))


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit("%s: not a .npy file" % path)
    if data[6] == 1:
        length, start = struct.unpack("<H", data[8:10])[0], 10
    else:
        length, start = struct.unpack("<I", data[8:12])[0], 12
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    return header, data[start + length:]


def main():
    command = sys.argv[1]
    if command == "write":
        write(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    elif command == "show":
        header, _ = read(sys.argv[2])
        print("descr %s shape %s" % (header["descr"], header["shape"]))
    elif command == "rowsums":
        header, body = read(sys.argv[2])
        if header["descr"] != "<f4":
            sys.exit("rowsums reads '<f4' arrays, not %s" % header["descr"])
        n = header["shape"][-1]
        values = struct.unpack("<%df" % (len(body) // 4), body)
        for r in range(len(values) // n):
            print("row %d sum %.6f" % (r, sum(values[r * n:(r + 1) * n])))


main()
