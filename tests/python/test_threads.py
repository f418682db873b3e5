"""Python threads and the GIL: tilescope releases it while it works, so
several threads evaluate candidates at once and give the same results as one
thread does, one after the other."""

import concurrent.futures
import os
import threading
import time
import unittest

import tilescope

SOURCE_DIR = os.environ["TILESCOPE_SOURCE_DIR"]


def library(name):
    with open(os.path.join(SOURCE_DIR, "kernels", name)) as f:
        return f.read()


def without_times(tree):
    """A reward dict without its wall times, which differ run to run."""
    if isinstance(tree, dict):
        return {k: without_times(v) for k, v in tree.items() if k not in ("ms", "seconds")}
    if isinstance(tree, list):
        return [without_times(v) for v in tree]
    return tree


def naive_gemm(tile):
    """gemm_naive with a tile x tile block of threads."""
    text = library("gemm_naive.tile")
    return (text.replace("% 16", f"% {tile}").replace("/ 16", f"/ {tile}")
            .replace("* 16", f"* {tile}").replace("threads(256)", f"threads({tile * tile})"))


class ThreadsTest(unittest.TestCase):
    def test_rewards_in_threads_equal_rewards_in_sequence(self):
        candidates = [naive_gemm(t) for t in (4, 8, 16)] + [library("rmsnorm.tile")]
        problems = ["gemm(A, B -> C)"] * 3 + ["rmsnorm(X, W, eps -> Y)"]
        jobs = list(zip(candidates, problems)) * 2

        def run(job):
            return tilescope.reward(job[0], problem=job[1], seed=11)

        start = time.perf_counter()
        sequential = [run(job) for job in jobs]
        sequential_s = time.perf_counter() - start
        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            threaded = list(pool.map(run, jobs))
        threaded_s = time.perf_counter() - start
        print(f"\n{len(jobs)} rewards: {sequential_s:.2f} s in sequence, "
              f"{threaded_s:.2f} s on 4 threads ({os.cpu_count()} cores)")
        self.assertEqual([without_times(r) for r in threaded],
                         [without_times(r) for r in sequential])
        # Not a vacuous comparison: the candidates differ and the reward says so.
        self.assertEqual(len({r["candidate"] for r in sequential[:4]}), 4)

    def test_the_gil_is_released_while_tilescope_works(self):
        # While another thread simulates, this one keeps running Python: the
        # longest pause it sees is far shorter than the simulation.
        source = library("gemm_bf16_sm90_small.tile")
        args = {"M": 256, "N": 256, "K": 512}
        # Once first, so that one-time set-up (imports, tables) is not timed.
        tilescope.simulate(source, args={"M": 64, "N": 64, "K": 64})
        done = threading.Event()
        took, results = [], []

        def work():
            try:
                start = time.perf_counter()
                results.append(tilescope.simulate(source, args=args, seed=2))
                took.append(time.perf_counter() - start)
            finally:
                done.set()

        worker = threading.Thread(target=work)
        last = time.perf_counter()
        longest = 0.0
        worker.start()
        while not done.is_set():
            now = time.perf_counter()
            longest = max(longest, now - last)
            last = now
        worker.join()
        self.assertEqual(results[0]["result"], "match")
        self.assertGreater(took[0], 0.1, "the simulation is too short to tell")
        self.assertLess(longest, took[0] / 2,
                        f"this thread stood still for {longest:.3f} s of a {took[0]:.3f} s call")


if __name__ == "__main__":
    unittest.main()
