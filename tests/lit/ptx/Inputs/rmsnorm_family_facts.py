#!/usr/bin/env python3
"""Checks `ptx condense --json` of every named point of the RMSNorm family
(tests/ptx/nvcc/rmsnorm_family.ptx) against the facts its parameters give
(kernels/rmsnorm_family.tile: H = 8 V T, T threads a row, V 16-byte
accesses a thread and row, RPC rows a CTA for SCOPE = warp, NR rows a CTA
for SCOPE = cta), for the points whose rows are unrolled (no loop):

    threads       T * RPC (.maxntid)
    X and W       V 16-byte ld.global.nc.v4.u32 of X per row, V of W once
    Y             V st.global.v4.u32 per row
    reduction     5 shfl.bfly per row (a warp's 32 lanes); SCOPE = cta: one
                  st.shared.f32 of the warp's partial and two bar.sync per
                  row, the T / 32 partials read back as f32 (ld.shared, any
                  vector width: T / 32 floats a row)
    scale         one rsqrt.approx.f32 per row
    conversions   8 V cvt f32.bf16 per row (X) and 8 V once (W); 8 V
                  cvt.rn.bf16.f32 per row (Y)
    barrier       `bar.sync 0, T` (SCOPE = cta), none for SCOPE = warp
    no loop; no mbarrier

    rmsnorm_family_facts.py TILESCOPE ROOT

Prints one line a point and exits 1 when a fact differs.
"""
import json
import re
import subprocess
import sys


def expected(scope, t, v, rpc, nr):
    cta = scope == "cta"
    return {
        "threads": t * rpc,
        "global load": {"global.nc.v4.u32": v * nr + v},
        "global store": {"global.v4.u32": v * nr},
        "shuffle/vote": {"shfl.bfly.b32": 5 * nr},
        "special function": {"rsqrt.approx.f32": nr},
        "f32.bf16": 8 * v * nr + 8 * v,
        "rn.bf16.f32": 8 * v * nr,
        "bar.sync": 2 * nr if cta else 0,
        "shared store": {"shared.f32": nr} if cta else {},
        "partials read": t // 32 * nr if cta else 0,
        "barriers": [f"bar.sync 0, {t}"] if cta else [],
        "loops": 0,
        "mbarriers": 0,
        "params": 6,  # X, W, Y, eps, R, H
    }


def observed(kernel):
    h = kernel["outside_loops"]["histogram"]
    width = {"shared.f32": 1, "shared.v2.f32": 2, "shared.v4.f32": 4}
    partials = sum(width.get(k, 0) * n for k, n in h.get("shared load", {}).items())
    return {
        "global load": h.get("global load", {}),
        "global store": h.get("global store", {}),
        "shuffle/vote": h.get("shuffle/vote", {}),
        "special function": h.get("special function", {}),
        "f32.bf16": h.get("conversion", {}).get("f32.bf16", 0),
        "rn.bf16.f32": h.get("conversion", {}).get("rn.bf16.f32", 0),
        "bar.sync": h.get("CTA barrier", {}).get("bar.sync", 0),
        "shared store": h.get("shared store", {}),
        "partials read": partials,
        "barriers": [re.sub(r" \(line \d+\)", "", b) for b in kernel["pipeline"]["cta_barriers"]],
        "loops": len(kernel["loops"]),
        "mbarriers": kernel["pipeline"]["mbarrier_count"],
        "params": len(kernel["params"]),
        "registers": kernel["registers_declared"],
        "shared": kernel["shared_static_bytes"] or kernel["shared_dynamic"],
    }


def declared(body):
    """Registers declared by the `.reg` lines of a kernel's text."""
    n = 0
    for types, names in re.findall(r"\.reg\s+\.(\w+)\s+([^;]*);", body):
        for name in names.split(","):
            count = re.search(r"<(\d+)>", name)
            n += int(count.group(1)) if count else 1
    return n


def main():
    tilescope, root = sys.argv[1], sys.argv[2]
    tile = open(f"{root}/kernels/rmsnorm_family.tile").read()
    points = re.findall(r"point (\w+)\(SCOPE = (\w+), T = (\d+), V = (\d+), RPC = (\d+), "
                        r"NR = (\d+)\)", tile)
    ptx = f"{root}/tests/ptx/nvcc/rmsnorm_family.ptx"
    text = open(ptx).read()
    bad = 0
    for name, scope, t, v, rpc, nr in points:
        kernel_name = "rmsnorm_bf16_family_" + name
        run = subprocess.run([tilescope, "ptx", "condense", ptx, "--kernel", kernel_name, "--json"],
                             capture_output=True, text=True, check=True)
        kernel = json.loads(run.stdout)["kernels"][0]
        want = expected(scope, int(t), int(v), int(rpc), int(nr))
        if kernel["loops"]:
            print(f"{name}: has a loop, checked by hand in condense-rmsnorm-family.test")
            continue
        got = observed(kernel)
        # .maxntid from the PTX itself (condense prints it; the JSON keeps the
        # kernel's line).
        entry = text.index(f".entry {kernel_name}(")
        body = text[entry:text.find(".entry ", entry + 1) if ".entry " in text[entry + 1:] else None]
        got["threads"] = int(re.search(r"\.maxntid (\d+)", body).group(1))
        want["registers"] = declared(body)
        # The shared memory the kernel names: SCOPE = cta stages its partials in
        # ts_smem_raw (dynamic); the warp points name none.
        want["shared"] = scope == "cta"
        wrong = [k for k in want if want[k] != got.get(k)]
        bad += bool(wrong)
        print(f"{name}: {'ok' if not wrong else 'DIFFERS ' + ', '.join(f'{k}: {got.get(k)} != {want[k]}' for k in wrong)}")
    print(f"{len(points)} points, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
