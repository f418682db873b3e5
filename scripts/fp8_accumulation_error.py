#!/usr/bin/env python3
"""The error of two FP8 GEMM outputs against float64, from simulator dumps
(docs/perf.md, "FP8 GEMM"): the per-tensor kernel (the tensor core's 13-bit
running sum over all of K) and the block-scaled kernel with unit scales (a
fresh sum per 128 of K, promoted into f32).

  scripts/fp8_accumulation_error.py DIR1 DIR2 ...
  scripts/fp8_accumulation_error.py --ones R,C FILE.npy   (f32 ones: unit scales)

Each DIR is a `tilescope sim --dump DIR` of a kernel C = A B^T with e4m3 A
[M, K] and B [N, K] and bf16 C [M, N], all on the same A and B (give the
second run `--input A=DIR1/A.npy --input B=DIR1/B.npy`, and unit scales).
Prints per DIR the relative error (Frobenius) against the float64 product,
against its correctly rounded bf16, how many outputs equal that, and the mean
of |C| - |ref| (truncation toward zero shows as a negative bias). Python's
standard library only (the dev machine has no NumPy); K * M * N products in
math.fsum take about a minute at 128 x 256 x 8192."""
import ast
import array
import math
import struct
import sys


def load(path):
    data = open(path, "rb").read()
    if data[:6] != b"\x93NUMPY":
        sys.exit(f"{path}: not a .npy file")
    size = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + size].decode())
    codes = {"|u1": "B", "<u2": "H"}.get(header["descr"])
    if codes is None:
        sys.exit(f"{path}: element type {header['descr']}, expected |u1 (e4m3) or <u2 (bf16)")
    values = array.array(codes)
    values.frombytes(data[10 + size:])
    return header["shape"], values


def e4m3(code):
    sign = -1.0 if code & 0x80 else 1.0
    exponent, mantissa = (code >> 3) & 0xF, code & 7
    if exponent == 0:
        return sign * mantissa / 8 * 2.0 ** -6
    return sign * (1 + mantissa / 8) * 2.0 ** (exponent - 7)


def bf16(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def round_bf16(x):
    """x rounded to 8 significant bits, nearest even (no overflow here)."""
    if x == 0:
        return 0.0
    m, e = math.frexp(x)
    return round(m * 256.0) / 256.0 * 2.0 ** e


def write_ones(shape, path):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % (tuple(shape),)
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(array.array("f", [1.0] * math.prod(shape)).tobytes())


def main(dirs):
    (M, K), A = load(dirs[0] + "/A.npy")
    (N, _), B = load(dirs[0] + "/B.npy")
    table = [e4m3(c) for c in range(256)]
    a = [[table[A[i * K + k]] for k in range(K)] for i in range(M)]
    b = [[table[B[j * K + k]] for k in range(K)] for j in range(N)]
    ref = [[math.fsum(x * y for x, y in zip(a[i], b[j])) for j in range(N)] for i in range(M)]
    for d in dirs:
        _, C = load(d + "/C.npy")
        err = err_rounded = norm = bias = 0.0
        equal = 0
        for i in range(M):
            for j in range(N):
                r, g = ref[i][j], bf16(C[i * N + j])
                rounded = round_bf16(r)
                err += (g - r) ** 2
                err_rounded += (g - rounded) ** 2
                norm += r * r
                equal += g == rounded
                bias += abs(g) - abs(r)
        print(f"{d}: rel err {math.sqrt(err / norm):.3e}, against the rounded float64 "
              f"{math.sqrt(err_rounded / norm):.3e}, {equal} of {M * N} equal to it, "
              f"mean |C| - |ref| {bias / (M * N):.3e} (rms |ref| {math.sqrt(norm / (M * N)):.3f})")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--ones":
        write_ones([int(x) for x in sys.argv[2].split(",")], sys.argv[3])
    else:
        main(sys.argv[1:])
