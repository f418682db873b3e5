"""Writes a batch of candidates (JSON lines for `tilescope reward --batch`)
made from the library kernels by changing tile sizes and pipeline stages,
some of them wrong on purpose: an accumulator that starts at 1, a ring too
short to run, a task whose problem the kernel does not compute, a typo.

    python3 make_batch.py SOURCE_DIR > batch.jsonl
"""

import json
import os
import sys


def read(source_dir, name):
    with open(os.path.join(source_dir, "kernels", name)) as f:
        return f.read()


def replaced(text, pairs):
    for old, new in pairs:
        if old not in text:
            raise SystemExit(f"make_batch.py: '{old}' is not in the kernel any more")
        text = text.replace(old, new)
    return text


def naive(text, rows, cols, init):
    """gemm_naive with a rows x cols block of threads, one output each."""
    return replaced(text, [
        ("where M % 16 == 0, N % 16 == 0", f"where M % {rows} == 0, N % {cols} == 0"),
        ("grid(N / 16, M / 16) threads(256)", f"grid(N / {cols}, M / {rows}) threads({rows * cols})"),
        ("blockIdx.y * 16 + threadIdx.x / 16", f"blockIdx.y * {rows} + threadIdx.x / {cols}"),
        ("blockIdx.x * 16 + threadIdx.x % 16", f"blockIdx.x * {cols} + threadIdx.x % {cols}"),
        ("acc[0] = 0.0", f"acc[0] = {init}"),
    ])


def ring(text, stages):
    """gemm_bf16_sm90_small with a ring of `stages` stages (6 in the library)."""
    return replaced(text, [
        ("bf16[6, 64, 64]", f"bf16[{stages}, 64, 64]"),
        ("S[(6, 64, 64):", f"S[({stages}, 64, 64):"),
        ("full[6](count = 1), empty[6](count = 1)",
         f"full[{stages}](count = 1), empty[{stages}](count = 1)"),
        ("k % 6", f"k % {stages}"),
        ("k / 6", f"k / {stages}"),
        ("(k + 5) % 6", f"(k + {stages - 1}) % {stages}"),
        ("(kt + 5) % 6", f"(kt + {stages - 1}) % {stages}"),
    ])


def candidates(source_dir):
    gemm_naive = read(source_dir, "gemm_naive.tile")
    # Blocks of more than 1024 threads (64 x 32, ...) fail the types stage.
    for rows in (1, 2, 4, 8, 16, 32, 64):
        for cols in (1, 2, 4, 8, 16, 32, 64):
            for init in ("0.0", "1.0"):
                source = naive(gemm_naive, rows, cols, init)
                yield f"naive-{rows}x{cols}-init{init}", source, "gemm(A, B -> C)"
                # The same kernel for a task it does not solve (B transposed).
                yield f"naive-{rows}x{cols}-init{init}-bt", source, "gemm(A, B^T -> C)"
    small = read(source_dir, "gemm_bf16_sm90_small.tile")
    for stages in range(1, 17):
        yield f"ring-{stages}", ring(small, stages), "gemm(A, B^T -> C)"
    for name, problem in (("rmsnorm.tile", "rmsnorm(X, W, eps -> Y)"),
                          ("gemm_bf16_sm90.tile", "gemm(A, B^T -> C)"),
                          ("gemm_bf16_sm90_64x128.tile", "gemm(A, B^T -> C)")):
        yield name, read(source_dir, name), problem
    # Input errors: each candidate still gets its own result line.
    yield "typo", gemm_naive.replace("for k in 0 .. K", "for k in 0 .. K)"), "gemm(A, B -> C)"
    yield "no-kernel", "// nothing here\n", "gemm(A, B -> C)"


def main():
    source_dir = sys.argv[1]
    for id_, source, problem in candidates(source_dir):
        print(json.dumps({"id": id_, "source": source, "problem": problem}))


if __name__ == "__main__":
    main()
