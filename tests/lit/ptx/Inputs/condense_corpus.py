"""Condense every PTX file of the corpus (tests/ptx/nvcc, tests/ptx/triton).

Usage: condense_corpus.py TILESCOPE CORPUS_DIR

Prints one line a file (kernels, the longest kernel's text form in lines)
and a summary. A file that does not condense (exit status other than 0, or
no kernel) or a kernel whose text form takes 100 lines or more is a failure,
and the script exits 1: the text form is meant to fit a screen (issue 19,
item 2).
"""
import pathlib
import subprocess
import sys


def main():
    tilescope, corpus = sys.argv[1], pathlib.Path(sys.argv[2])
    files = sorted(corpus.glob("nvcc/*.ptx")) + sorted(corpus.glob("triton/*.ptx"))
    failures, kernels = 0, 0
    for f in files:
        run = subprocess.run([tilescope, "ptx", "condense", str(f)], capture_output=True,
                             text=True)
        lengths, current = [], None
        for line in run.stdout.splitlines():
            if line.startswith("kernel "):
                if current is not None:
                    lengths.append(current)
                current = 0
            if current is not None:
                current += 1
        if current is not None:
            lengths.append(current)
        longest = max(lengths, default=0)
        bad = run.returncode != 0 or not lengths or longest >= 100
        failures += bad
        kernels += len(lengths)
        print(f"{f.parent.name}/{f.name}: exit {run.returncode}, {len(lengths)} kernels, "
              f"longest {longest} lines{' FAILED' if bad else ''}")
    print(f"condensed {len(files)} files, {kernels} kernels; failures: {failures}")
    return 1 if failures or not files else 0


if __name__ == "__main__":
    sys.exit(main())
