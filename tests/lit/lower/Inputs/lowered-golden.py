"""Pins what `tilescope lower` writes for the kernel library and the lowering
tests' inputs, byte for byte: the SHA-256 of each lowered module against
tests/lit/lower/Inputs/lowered.sha256. A refactoring of the emitter or of the
preludes (codegen/prelude/*.cuh) must leave every module as it was; a change
that means to alter the output updates the golden with --update and says why
in its commit.

Usage: lowered-golden.py TILESCOPE ROOT [--golden FILE] [--only NAME] [--update]

Each line of the golden is `SHA256  NAME`, NAME being the .tile file relative
to ROOT, followed by ` --set ...` for a parameterised kernel's point. A
kernel whose check is left unknown is lowered with --allow-unknown, as
tests/lit/lower does. Prints one line per module that differs and a count;
exits 1 when one differs or the golden lists a module that is not lowered."""
import argparse
import glob
import hashlib
import os
import subprocess
import sys

# Points of the kernel families: the GEMM family
# (kernels/gemm_bf16_sm90_family.tile): one CTA a tile, persistent with two
# consumer warpgroups, split K over a cluster (of 2, and of 8 sliced by
# columns), a BN not a multiple of 64 (C's last columns in 16- and 8-column
# boxes), BM = 256; the RMSNorm family
# (kernels/rmsnorm_family.tile): a warp a row, a CTA a row, two rows a CTA;
# the causal attention family (kernels/attention_fwd_causal_family_sm90.tile):
# its two points.
FAMILIES = {
    "kernels/gemm_bf16_sm90_family.tile": [
        "BM=64,BN=128,STAGES=4,CONSUMERS=1,ORDER=row,PERSISTENT=false,SPLIT=1",
        "BM=128,BN=256,STAGES=3,CONSUMERS=2,ORDER=grouped,PERSISTENT=true,SPLIT=1",
        "BM=64,BN=128,STAGES=4,CONSUMERS=1,ORDER=row,PERSISTENT=false,SPLIT=2",
        "BM=128,BN=152,STAGES=5,CONSUMERS=2,ORDER=row,PERSISTENT=true,SPLIT=1",
        "BM=256,BN=128,STAGES=3,CONSUMERS=2,ORDER=row,PERSISTENT=true,SPLIT=1",
        "BM=128,BN=128,STAGES=3,CONSUMERS=2,ORDER=row,PERSISTENT=false,SPLIT=8",
    ],
    "kernels/attention_fwd_causal_family_sm90.tile": ["BQ=64", "BQ=128"],
    "kernels/rmsnorm_family.tile": [
        "SCOPE=warp,T=32,V=2,RPC=4,NR=1",
        "SCOPE=cta,T=512,V=2,RPC=1,NR=1",
        "SCOPE=cta,T=128,V=2,RPC=1,NR=2",
    ],
}
# Inputs of tests/lit/lower that are not meant to lower (a check finding).
NOT_LOWERED = {"tests/lit/lower/refuse-check-findings.tile"}


def modules(root):
    tiles = sorted(glob.glob(os.path.join(root, "kernels", "*.tile")))
    tiles += sorted(glob.glob(os.path.join(root, "tests", "lit", "lower", "Inputs", "*.tile")))
    tiles += sorted(glob.glob(os.path.join(root, "tests", "lit", "lower", "*.tile")))
    for path in tiles:
        name = os.path.relpath(path, root)
        if name in NOT_LOWERED:
            continue
        if name in FAMILIES:
            for point in FAMILIES[name]:
                yield "%s --set %s" % (name, point), [path, "--set", point]
        else:
            yield name, [path]


def lower(tilescope, args):
    run = subprocess.run([tilescope, "lower"] + args + ["-o", "-"], capture_output=True)
    if run.returncode == 3:  # unknown: lowered with the warnings, as --allow-unknown says
        run = subprocess.run([tilescope, "lower"] + args + ["--allow-unknown", "-o", "-"],
                             capture_output=True)
    if run.returncode != 0:
        return None, run.stderr.decode(errors="replace").strip().splitlines()[:3]
    return hashlib.sha256(run.stdout).hexdigest(), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tilescope")
    ap.add_argument("root")
    ap.add_argument("--golden")
    ap.add_argument("--only")
    ap.add_argument("--update", action="store_true")
    a = ap.parse_args()
    golden_path = a.golden or os.path.join(a.root, "tests", "lit", "lower", "Inputs",
                                           "lowered.sha256")
    golden = {}
    if os.path.exists(golden_path):
        for line in open(golden_path):
            if line.strip() and not line.startswith("#"):
                digest, name = line.rstrip("\n").split("  ", 1)
                golden[name] = digest
    wanted = [(n, args) for n, args in modules(a.root) if not a.only or n == a.only]
    if not wanted:
        sys.exit("lowered-golden: no module named %r" % a.only)
    got, differ = {}, 0
    for name, args in wanted:
        digest, error = lower(a.tilescope, args)
        if digest is None:
            print("%s: not lowered: %s" % (name, " / ".join(error)))
            differ += 1
            continue
        got[name] = digest
        if not a.update and golden.get(name) != digest:
            print("%s: lowered module differs from the golden (%s, was %s)" %
                  (name, digest[:16], (golden.get(name) or "absent")[:16]))
            differ += 1
    if not a.only:
        for name in sorted(set(golden) - set(got)):
            if not a.update:
                print("%s: in the golden but not lowered" % name)
                differ += 1
    if a.update:
        with open(golden_path, "w") as out:
            out.write("# SHA-256 of `tilescope lower` output per module "
                      "(tests/lit/lower/Inputs/lowered-golden.py --update writes it)\n")
            for name in sorted(got):
                out.write("%s  %s\n" % (got[name], name))
        print("wrote %d modules to %s" % (len(got), golden_path))
        return 0
    print("%d of %d lowered modules differ from the golden" % (differ, len(wanted)))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
