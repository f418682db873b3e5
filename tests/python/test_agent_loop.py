"""examples/agent_loop.py: its mutation rules rewrite every site they own,
and a few steps of its search climb from a failing first candidate to one
whose reward is a pass."""

import os
import re
import sys
import unittest

import tilescope

SOURCE_DIR = os.environ["TILESCOPE_SOURCE_DIR"]
sys.path.insert(0, os.path.join(SOURCE_DIR, "examples"))
import agent_loop  # noqa: E402


def library(name):
    with open(os.path.join(SOURCE_DIR, "kernels", name)) as f:
        return tilescope.parse(f.read())


class MutationTest(unittest.TestCase):
    def test_ring_stages_rewrite_every_site_of_the_ring(self):
        tree = library("gemm_bf16_sm90_small.tile").to_json()
        self.assertEqual(agent_loop.ring_stages(tree), 6)
        text = tilescope.from_json(agent_loop.set_ring_stages(tree, 3)).fmt()
        for site in ("shared As: bf16[3, 64, 64]", "S[(3,64,64):(4096,64,1)]",
                     "mbarrier full[3](count = 1)", "let s = k % 3", "parity = (k / 3 + 1) % 2",
                     "empty[(k + 2) % 3]", "empty[(kt + 2) % 3]"):
            self.assertIn(site, text)
        # No site of the old ring is left (6 stages, the stage before is + 5).
        self.assertIsNone(re.search(r"[[(]6[],]|[%/] 6\b|\+ 5\b", text))

    def test_block_shape_rewrites_grid_where_indices_and_threads(self):
        tree = library("gemm_naive.tile").to_json()
        self.assertEqual(agent_loop.block_shape(tree), (16, 16))
        text = tilescope.from_json(agent_loop.set_block_shape(tree, 4, 32)).fmt()
        for site in ("where M % 4 == 0, N % 32 == 0", "grid(N / 32, M / 4) threads(128)",
                     "let i = blockIdx.y * 4 + threadIdx.x / 32",
                     "let j = blockIdx.x * 32 + threadIdx.x % 32"):
            self.assertIn(site, text)


class SearchTest(unittest.TestCase):
    def check_search(self, family, iterations, seed):
        summary = agent_loop.search(family, iterations, seed, log=lambda line: None)
        self.assertNotEqual(summary["first"]["verdict"], "pass")
        best = summary["best"]
        self.assertEqual(best["verdict"], "pass", summary["evaluated"])
        self.assertGreater(best["score"], summary["first"]["score"])
        # The best text stands on its own: rewarded again on fresh inputs.
        again = tilescope.reward(best["text"], problem=summary["problem"])
        self.assertEqual(again["verdict"], "pass")
        self.assertEqual(again["candidate"], best["candidate"])

    def test_ring_search_finds_a_ring_that_runs(self):
        self.check_search("ring", 3, seed=1)

    def test_naive_search_finds_a_block_that_fits(self):
        self.check_search("naive", 4, seed=2)


if __name__ == "__main__":
    unittest.main()
