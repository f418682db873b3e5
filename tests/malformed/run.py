#!/usr/bin/env python3
"""Runs the tilescope CLI on every malformed input and requires, for each, exit
status 2 and a `file:line:col: error:` diagnostic: no crash, no hang, no
uncaught exception. The corpus is corpus/*.tile (kernel files, given to
`check`; `fmt`, which only parses, must exit 0 or 2 without crashing) and corpus/*.layout (layout text, given to `layout`), plus
inputs generated here that are too big to commit (10 MB files, deep nesting).
Kernels named limits_*.tile declare sizes beyond the target's limits
(ir/SizeLimits.h): every command that runs the checker (check, sim, race,
lower) must reject them with exit 2 before allocating anything."""
import os
import sys
import tempfile

from cli_check import report, run  # beside this file


MUTATION_PIECES = [b"(", b")", b"{", b"}", b"[", b"]", b":", b"+", b"..", b"@", b"=", b"==",
                   b",", b"wg.", b"-", b"0", b"99999999999", b"\n", b"layout(", b"S[", b"R[",
                   b"swizzle(", b"128B", b"laneid", b"if ", b"for ", b"let ", b"mbarrier ",
                   b"\x00", b"\xff", b"1.5e308", b"1e999"]


def mutate_bundled_kernels(tool, failures, count=150, seed=20261122):
    """Random edits of the bundled kernels (deterministic seed): check and fmt
    may accept or reject them, but must exit 0, 1 or 2 without crashing, and
    a rejection must carry a diagnostic."""
    import random
    kernels = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels")
    # Kernel families (`param` declarations) are left out: `check` proves
    # every point of a space (186 for the GEMM family, minutes), and their
    # points are unknown where the coverage proof cannot invert the tile index.
    sources = [open(os.path.join(kernels, f), "rb").read()
               for f in sorted(os.listdir(kernels)) if f.endswith(".tile")]
    sources = [s for s in sources if b"\n  param " not in s]
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mutant.tile")
        for i in range(count):
            text = bytearray(rng.choice(sources))
            for _ in range(rng.randint(1, 4)):
                kind, at = rng.randrange(4), rng.randrange(len(text) + 1)
                if kind == 0:
                    del text[at:at + rng.randint(1, 20)]
                elif kind == 1:
                    text[at:at] = rng.choice(MUTATION_PIECES)
                elif kind == 2:
                    src = rng.randrange(len(text) + 1)
                    text[at:at] = text[src:src + rng.randint(1, 30)]
                elif at < len(text):
                    text[at] = rng.randrange(256)
            with open(path, "wb") as f:
                f.write(text)
            for command in ("check", "fmt"):
                run(tool, [command, path], f"{command} mutant {i} (seed {seed})", failures,
                    allowed=(0, 1, 2))
    return 2 * count


def main():
    tool = sys.argv[1]
    corpus = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    failures, count = [], 0
    for name in sorted(os.listdir(corpus)):
        path = os.path.join(corpus, name)
        if name.endswith(".tile"):
            run(tool, ["check", path], f"check {name}", failures)
            # fmt only parses: a well-formed but ill-typed kernel formats fine.
            run(tool, ["fmt", path], f"fmt {name}", failures, allowed=(0, 2))
            count += 2
            if name.startswith("limits_"):
                for command in ("sim", "race", "lower"):
                    run(tool, [command, path], f"{command} {name}", failures)
                    count += 1
        elif name.endswith(".layout"):
            text = open(path, encoding="utf-8").read()
            run(tool, ["layout", text, "--shape", "4,8"], f"layout {name}", failures)
            count += 1
    with tempfile.TemporaryDirectory() as tmp:
        generated = {
            "garbage_10mb.tile": bytes((i * 7919 + 13) % 256 for i in range(10 << 20)),
            "statements_10mb.tile": b"kernel k() launch grid(1) threads(32) target(sm_90a) {\n"
            + b"  let x = 1 +\n" * ((10 << 20) // 14),
            "deep_parens.tile": b"kernel k() launch grid(1) threads(32) target(sm_90a) {\n"
            + b"  let x = " + b"(" * 200000 + b"1" + b")" * 200000 + b"\n}\n",
            "deep_blocks.tile": b"kernel k() launch grid(1) threads(32) target(sm_90a) {\n"
            + b"if true {\n" * 100000 + b"}\n" * 100000 + b"}\n",
            "deep_unary.tile": b"kernel k() launch grid(1) threads(32) target(sm_90a) {\n"
            + b"  let x = " + b"-" * 300000 + b"1\n}\n",
        }
        for name, data in generated.items():
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(data)
            run(tool, ["check", path], f"check {name}", failures)
            count += 1
        run(tool, ["layout", "S[(" + "2," * 20000 + "2):(1)]", "--shape", "4"],
            "layout huge", failures)
        count += 1
    count += mutate_bundled_kernels(tool, failures)
    return report(failures, f"malformed: {count - len(failures)} passed, {len(failures)} failed")


if __name__ == "__main__":
    sys.exit(main())
