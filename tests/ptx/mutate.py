#!/usr/bin/env python3
"""Malformed and mutated PTX through `tilescope ptx`: every run must end with
exit 0, 1, 3 (a result) or 2 with a `file:line:col: error:` diagnostic --
never a crash, a hang, or a diagnostic without a location.

Inputs: byte-level mutations of the corpus (tests/ptx/nvcc, tests/ptx/triton),
truncations at random points, and generated hostile texts (deep scopes and
operand nesting, a 10 MB line, binary garbage).

Usage: mutate.py TILESCOPE [COUNT]"""
import os
import random
import sys
import tempfile

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(ROOT, "..", "malformed"))
from cli_check import report, run  # noqa: E402
PIECES = [b"{", b"}", b"[", b"]", b"(", b")", b";", b",", b"@", b"!", b"%r1", b"|", b"+",
          b"-", b".reg", b".shared", b"bra $L__BB0_1;", b"mbarrier.try_wait.parity.shared.b64 p, [%r1], %r2;",
          b"\n", b"\x00", b"\xff", b"0x", b"0f", b"99999999999999999999", b"/*", b"\"", b"<",
          b">", b"::", b".entry", b"$L__BB0_1:", b"bar.sync 1, 32;", b"@%p1 bra $L__BB0_1;"]


def corpus():
    files = []
    for sub in ("nvcc", "triton"):
        d = os.path.join(ROOT, sub)
        files += [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".ptx")]
    return files


def main():
    tool = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    rng = random.Random(20261125)
    failures = []
    sources = [open(f, "rb").read() for f in corpus()]
    with tempfile.TemporaryDirectory() as tmp:
        inputs = []
        for i in range(count):
            text = bytearray(rng.choice(sources))
            for _ in range(rng.randint(1, 6)):
                pos = rng.randrange(len(text))
                if rng.random() < 0.5:
                    text[pos:pos + rng.randint(0, 40)] = rng.choice(PIECES)
                else:
                    del text[pos:pos + rng.randint(1, 200)]
            if rng.random() < 0.2:
                text = text[:rng.randrange(len(text))]
            inputs.append((f"mutant{i}.ptx", bytes(text)))
        head = b".version 8.7\n.target sm_90a\n.address_size 64\n"
        inputs.append(("deep-scopes.ptx", head + b".entry k()\n" + b"{" * 100000))
        inputs.append(("deep-operand.ptx", head + b".entry k()\n{\n foo " + b"{" * 100000 + b";\n}\n"))
        inputs.append(("long-line.ptx", head + b".entry k()\n{\n" + b"add.s32 %r1, %r1, 1; " * 500000 + b"\n}\n"))
        inputs.append(("garbage.ptx", bytes(rng.randrange(256) for _ in range(200000))))
        inputs.append(("empty.ptx", b""))
        for name, data in inputs:
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(data)
            for action in (["parse"], ["condense"], ["check", "--protocol-only"]):
                run(tool, ["ptx"] + action[:1] + [path] + action[1:], f"{name} {action[0]}", failures,
                    allowed=(0, 1, 2, 3))
    return report(failures, f"{len(inputs)} inputs, {len(failures)} failures")


if __name__ == "__main__":
    sys.exit(main())
