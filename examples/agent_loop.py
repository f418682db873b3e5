"""A small kernel search without any LLM: mutate a library kernel's tile
sizes or pipeline stages through its IR as a JSON tree (Module.to_json ->
mutate -> tilescope.from_json), reward every candidate, keep the best.

    PYTHONPATH=build/python python3 examples/agent_loop.py [--family ring|naive]
        [--iterations 8] [--seed 1] [--json]

Two families of mutations, each a rule over the tree, not over text:
  ring   gemm_bf16_sm90_small.tile: the number of stages of its TMA ring
         (mbarrier arrays, the stage dimension of the shared buffers and their
         layouts, `k % S`, `k / S`, `(k + S - 1) % S`). The search starts from
         a ring of one stage, which deadlocks: the consumer releases a stage
         only after the producer has refilled it.
  naive  gemm_naive.tile: the rows x columns of its thread block (the `where`
         clause, the grid, the index arithmetic, threads()). The search starts
         from an 8 x 256 block, more threads than a CTA may have.

Each step mutates the best candidate so far (hill climbing) and keeps the new
one when its reward score is higher. docs/python.md says where an LLM plugs in.
"""

import argparse
import copy
import json
import os
import random
import sys

import tilescope

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def walk(tree):
    """Every dict of a JSON tree, parents before children."""
    if isinstance(tree, dict):
        yield tree
        for value in tree.values():
            yield from walk(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from walk(value)


def is_int(expr, value=None):
    return isinstance(expr, dict) and "int" in expr and (value is None or expr["int"] == value)


# --- ring: the stages of a TMA pipeline ---

def ring_stages(tree):
    """The ring's stage count: the size of the kernel's first mbarrier array."""
    for node in walk(tree):
        if node.get("stmt") == "mbarrier" and is_int(node.get("size")):
            return node["size"]["int"]
    raise ValueError("no mbarrier array: not a pipelined kernel")


def set_ring_stages(tree, stages):
    """A copy of `tree` with a ring of `stages` stages instead of its own."""
    tree = copy.deepcopy(tree)
    old = ring_stages(tree)
    for node in walk(tree):
        if node.get("stmt") == "mbarrier" and is_int(node.get("size"), old):
            node["size"] = {"int": stages}
        elif node.get("stmt") == "buffer" and node["scope"] == "shared" and \
                len(node["shape"]) > 1 and is_int(node["shape"][0], old):
            node["shape"][0] = {"int": stages}
            shard = node.get("layout", {}).get("shard")
            if shard and shard[0]["extent"] == old:
                shard[0]["extent"] = stages
        elif node.get("binary") in ("%", "/") and is_int(node["rhs"], old):
            node["rhs"] = {"int": stages}
            lhs = node["lhs"]
            # (k + S - 1) % S: the stage before k's.
            if node["binary"] == "%" and lhs.get("binary") == "+" and is_int(lhs["rhs"], old - 1):
                lhs["rhs"] = {"int": stages - 1}
        elif node.get("stmt") == "for" and node.get("pipelined") == old:
            node["pipelined"] = stages
    return tree


def mutate_ring(tree, rng):
    stages = ring_stages(tree)
    choice = rng.choice([s for s in range(1, 17) if s != stages])
    return set_ring_stages(tree, choice), f"stages {stages} -> {choice}"


# --- naive: the thread block of a one-thread-per-element kernel ---

def _var(expr, name):
    return isinstance(expr, dict) and expr.get("var") == name


def _builtin(expr, name):
    return isinstance(expr, dict) and expr.get("builtin") == name


def block_shape(tree):
    """(rows, columns) of the block: the divisors of M and N in the grid."""
    kernel = tree["kernels"][0]
    rows = cols = None
    for node in walk(kernel["launch"]["grid"]):
        if node.get("binary") == "/" and is_int(node["rhs"]):
            if _var(node["lhs"], "M"):
                rows = node["rhs"]["int"]
            elif _var(node["lhs"], "N"):
                cols = node["rhs"]["int"]
    if rows is None or cols is None:
        raise ValueError("no grid(N / C, M / R): not a one-thread-per-element kernel")
    return rows, cols


def set_block_shape(tree, rows, cols):
    """A copy of `tree` whose block has `rows` x `cols` threads: M and
    blockIdx.y go with the rows, N, blockIdx.x and the thread index within a
    row with the columns."""
    tree = copy.deepcopy(tree)
    kernel = tree["kernels"][0]
    for node in walk(kernel):
        op = node.get("binary")
        if op in ("%", "/") and is_int(node["rhs"]):
            if _var(node["lhs"], "M"):
                node["rhs"] = {"int": rows}
            elif _var(node["lhs"], "N") or _builtin(node["lhs"], "threadIdx.x"):
                node["rhs"] = {"int": cols}
        elif op == "*" and is_int(node["rhs"]):
            if _builtin(node["lhs"], "blockIdx.y"):
                node["rhs"] = {"int": rows}
            elif _builtin(node["lhs"], "blockIdx.x"):
                node["rhs"] = {"int": cols}
    kernel["launch"]["threads"] = rows * cols
    return tree


def mutate_naive(tree, rng):
    rows, cols = block_shape(tree)
    sizes = [1, 2, 4, 8, 16, 32, 64, 128, 256]
    new_rows, new_cols = rows, cols
    while (new_rows, new_cols) == (rows, cols):
        new_rows, new_cols = rng.choice(sizes), rng.choice(sizes)
    return set_block_shape(tree, new_rows, new_cols), \
        f"block {rows}x{cols} -> {new_rows}x{new_cols}"


FAMILIES = {
    # file, the task's problem, the mutation, the first candidate
    "ring": ("gemm_bf16_sm90_small.tile", "gemm(A, B^T -> C)", mutate_ring,
             lambda tree: set_ring_stages(tree, 1)),
    "naive": ("gemm_naive.tile", "gemm(A, B -> C)", mutate_naive,
              lambda tree: set_block_shape(tree, 8, 256)),
}


def search(family, iterations, seed, log=print):
    """Hill climbing from the family's first candidate; returns a summary."""
    path, problem, mutate, first = FAMILIES[family]
    with open(os.path.join(SOURCE_DIR, "kernels", path)) as f:
        library = tilescope.parse(f.read(), name=path)
    rng = random.Random(seed)

    def evaluate(tree, what):
        try:
            module = tilescope.from_json(tree)
        except tilescope.Error as e:
            # A tree the IR cannot hold (an LLM's typo, a block of 2048
            # threads): the lowest score, and the message to learn from.
            log(f"{what:32} {'-':16}  {'error':7} score 0.000  [{e}]")
            return {"tree": tree, "text": None, "what": what,
                    "reward": {"candidate": None, "verdict": "error", "score": 0.0}}
        # A fixed seed per step makes the run repeatable; a real search
        # leaves it out, so inputs are fresh every time.
        result = tilescope.reward(module, problem=problem, seed=rng.randrange(1 << 31))
        failure = result["kernels"][0].get("first_failure") if result["kernels"] else None
        hint = f"  [{failure['stage']}: {failure['hint']}]" if failure else ""
        log(f"{what:32} {result['candidate']}  {result['verdict']:7} score "
            f"{result['score']:.3f}{hint}")
        return {"tree": tree, "text": module.fmt(), "reward": result, "what": what}

    best = evaluate(first(library.to_json()), "first candidate")
    start = best
    history = [best]
    for _ in range(iterations):
        tree, what = mutate(best["tree"], rng)
        candidate = evaluate(tree, what)
        history.append(candidate)
        if candidate["reward"]["score"] > best["reward"]["score"]:
            best = candidate
    return {
        "family": family,
        "problem": problem,
        "first": {"what": start["what"], "verdict": start["reward"]["verdict"],
                  "score": start["reward"]["score"]},
        "evaluated": [{"what": c["what"], "candidate": c["reward"]["candidate"],
                       "verdict": c["reward"]["verdict"], "score": c["reward"]["score"]}
                      for c in history],
        "best": {"what": best["what"], "candidate": best["reward"]["candidate"],
                 "verdict": best["reward"]["verdict"], "score": best["reward"]["score"],
                 "text": best["text"]},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", choices=sorted(FAMILIES), default="ring")
    parser.add_argument("--iterations", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args()
    log = (lambda line: print(line, file=sys.stderr)) if args.json else print
    summary = search(args.family, args.iterations, args.seed, log)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        best = summary["best"]
        print(f"\nbest: {best['what']} ({best['candidate']}, {best['verdict']}, "
              f"score {best['score']:.3f})\n")
        print(best["text"])


if __name__ == "__main__":
    main()
