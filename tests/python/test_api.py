"""The Python module (python/, docs/python.md): parse, the IR as a JSON tree,
check, simulate and layout, each against what the command line says about
the same input. Run by ctest with PYTHONPATH=build/python and
TILESCOPE_BINARY=build/tools/tilescope."""

import copy
import glob
import json
import os
import subprocess
import tempfile
import unittest

import numpy

import tilescope

SOURCE_DIR = os.environ["TILESCOPE_SOURCE_DIR"]
BINARY = os.environ["TILESCOPE_BINARY"]


def library(name):
    with open(os.path.join(SOURCE_DIR, "kernels", name)) as f:
        return f.read()


COPY = """kernel copy(X: global f32[N], Y: global f32[N])
  where N % 128 == 0
  launch grid(N / 128) threads(128) target(sm_90a)
{
  Y[blockIdx.x * 128 + threadIdx.x] = X[blockIdx.x * 128 + threadIdx.x]
}
"""

# Threads 2t and 2t + 1 write the same element of Y: a race between threads.
RACY = COPY.replace("Y[blockIdx.x * 128 + threadIdx.x]", "Y[blockIdx.x * 128 + threadIdx.x / 2]")


def walk(tree):
    """Every dict in a JSON tree."""
    if isinstance(tree, dict):
        yield tree
        for v in tree.values():
            yield from walk(v)
    elif isinstance(tree, list):
        for v in tree:
            yield from walk(v)


class ParseTest(unittest.TestCase):
    def test_module_kernels_fmt_and_hash_agree_with_the_command_line(self):
        path = os.path.join(SOURCE_DIR, "kernels", "rmsnorm_onepass.tile")
        m = tilescope.parse(library("rmsnorm_onepass.tile"))
        fmt = subprocess.run([BINARY, "fmt", path], capture_output=True, text=True, check=True)
        self.assertEqual(m.fmt(), fmt.stdout)
        hashes = subprocess.run([BINARY, "fmt", "--hash", path], capture_output=True, text=True,
                                check=True)
        expected = [line.split() for line in hashes.stdout.splitlines()]
        self.assertEqual(m.kernels, [name for _, name in expected])
        self.assertEqual([m.hash(kernel=name) for name in m.kernels], [h for h, _ in expected])
        with self.assertRaises(tilescope.UsageError):
            m.hash()  # two kernels: which one?

    def test_parse_error_raises_input_error_with_the_diagnostic(self):
        with self.assertRaises(tilescope.InputError) as caught:
            tilescope.parse("kernel k(X: global f32[N])\n  launch grid(1) threads(32) target(sm_99)\n{\n}\n",
                            name="bad.tile")
        error = caught.exception
        self.assertIsInstance(error, tilescope.Error)
        self.assertEqual(error.diagnostics[0]["file"], "bad.tile")
        self.assertEqual(error.diagnostics[0]["line"], 2)
        self.assertIn("bad.tile:2:", str(error))


class JsonTreeTest(unittest.TestCase):
    def test_every_library_file_round_trips_exactly(self):
        for path in sorted(glob.glob(os.path.join(SOURCE_DIR, "kernels", "*.tile"))):
            with self.subTest(path=os.path.basename(path)):
                with open(path) as f:
                    m = tilescope.parse(f.read())
                tree = m.to_json()
                # Through JSON text too, as a tree stored by an agent would be.
                back = tilescope.from_json(json.loads(json.dumps(tree)))
                self.assertEqual(back.fmt(), m.fmt())
                self.assertEqual(back.to_json(), tree)

    def test_a_mutated_stage_count_comes_out_in_the_text(self):
        m = tilescope.parse(library("gemm_bf16_sm90_small.tile"))
        tree = m.to_json()
        for node in walk(tree):
            if node.get("stmt") == "mbarrier":
                node["size"] = {"int": 3}
        text = tilescope.from_json(tree).fmt()
        self.assertIn("mbarrier full[3](count = 1)", text)
        self.assertIn("mbarrier empty[3](count = 1)", text)
        self.assertNotEqual(tilescope.from_json(tree).hash(), m.hash())

    def test_a_malformed_tree_raises_tree_error_with_its_path(self):
        tree = tilescope.parse(COPY).to_json()
        bad = copy.deepcopy(tree)
        bad["kernels"][0]["launch"]["threads"] = "128"
        with self.assertRaises(tilescope.TreeError) as caught:
            tilescope.from_json(bad)
        self.assertEqual(caught.exception.path, "$.kernels[0].launch.threads")
        self.assertEqual(str(caught.exception),
                         "$.kernels[0].launch.threads: expected an integer, found a string")
        bad = copy.deepcopy(tree)
        bad["kernels"][0]["body"][0]["value"] = {"binary": "**", "lhs": {"int": 1},
                                                 "rhs": {"int": 2}}
        with self.assertRaises(tilescope.TreeError) as caught:
            tilescope.from_json(bad)
        self.assertEqual(caught.exception.path, "$.kernels[0].body[0].value.binary")
        with self.assertRaises(tilescope.TreeError) as caught:
            tilescope.from_json("{not json")
        self.assertEqual(caught.exception.path, "$")


class CheckTest(unittest.TestCase):
    def test_a_clean_kernel_is_proved(self):
        result = tilescope.check(COPY)
        self.assertEqual(result["verdict"], "proved")
        kernel = result["kernels"][0]
        self.assertEqual(kernel["name"], "copy")
        self.assertEqual({p: v["verdict"] for p, v in kernel["proofs"].items()},
                         {"layouts": "proved", "barriers": "proved", "races": "proved",
                          "coverage": "proved"})

    def test_a_race_is_a_finding_at_its_line(self):
        result = tilescope.check(RACY, name="racy.tile")
        self.assertEqual(result["verdict"], "finding")
        self.assertEqual(result["kernels"][0]["proofs"]["races"]["verdict"], "finding")
        errors = [d for d in result["diagnostics"] if d["severity"] == "error"]
        self.assertEqual((errors[0]["file"], errors[0]["line"]), ("racy.tile", 5))
        self.assertIn("data race on global Y", errors[0]["message"])

    def test_the_verdicts_are_what_check_json_says(self):
        for name, text in (("copy.tile", COPY), ("racy.tile", RACY)):
            with tempfile.TemporaryDirectory() as scratch:
                path = os.path.join(scratch, name)
                with open(path, "w") as f:
                    f.write(text)
                cli = json.loads(subprocess.run([BINARY, "check", path, "--json"],
                                                capture_output=True, text=True).stdout)
            got = tilescope.check(text, name=path)
            self.assertEqual(got["kernels"], cli["files"][0]["kernels"])
            for key in ("verdict", "ok", "status", "diagnostics"):
                self.assertEqual(got[key], cli[key])

    def test_a_module_is_a_source_too(self):
        self.assertEqual(tilescope.check(tilescope.parse(RACY))["verdict"], "finding")

    def test_a_type_error_raises_input_error(self):
        with self.assertRaises(tilescope.InputError) as caught:
            tilescope.check(COPY.replace("X[blockIdx.x", "Z[blockIdx.x"))
        self.assertIn("Z", caught.exception.diagnostics[0]["message"])

    def test_the_time_budget_is_check_timeout_ms(self):
        # 1 ms of processor time cannot prove the persistent GEMM: "budget", as
        # `tilescope check --timeout-ms 1` says; a negative budget is refused.
        cut = tilescope.check(library("gemm_bf16_sm90.tile"), timeout_ms=1)
        self.assertEqual((cut["verdict"], cut["status"]), ("budget", 4))
        self.assertTrue(any("CPU time of 1 ms (--timeout-ms) ran out" in d["message"]
                            for d in cut["diagnostics"]))
        with self.assertRaises(ValueError):
            tilescope.check(COPY, timeout_ms=-1)


class SimulateTest(unittest.TestCase):
    def test_numpy_inputs_give_numpy_outputs_equal_to_the_product(self):
        rng = numpy.random.default_rng(5)
        a = rng.uniform(-1, 1, (32, 8)).astype(numpy.float32)
        b = rng.uniform(-1, 1, (8, 16)).astype(numpy.float32)
        result = tilescope.simulate(library("gemm_naive.tile"), args={"M": 32, "N": 16, "K": 8},
                                    inputs={"A": a, "B": b}, seed=3)
        self.assertEqual((result["verdict"], result["result"]), ("proved", "match"))
        c = result["tensors"]["C"]
        self.assertEqual((c.shape, c.dtype), ((32, 16), numpy.float32))
        numpy.testing.assert_allclose(c, a.astype(numpy.float64) @ b, rtol=1e-5, atol=1e-5)
        numpy.testing.assert_array_equal(result["tensors"]["A"], a)

    def test_the_json_part_is_what_sim_json_prints(self):
        path = os.path.join(SOURCE_DIR, "kernels", "gemm_naive.tile")
        cli = subprocess.run([BINARY, "sim", path, "--args", "M=16,N=16,K=4", "--seed", "9",
                              "--json"], capture_output=True, text=True)
        expected = json.loads(cli.stdout)
        got = tilescope.simulate(library("gemm_naive.tile"), args={"M": 16, "N": 16, "K": 4},
                                 seed=9, name=path)
        del got["tensors"]
        for d in (expected, got):  # wall and processor times differ run to run
            for key in ("seconds", "cpu_seconds", "steps_per_second", "lane_ops_per_second"):
                del d["stats"][key]
        self.assertEqual(got, expected)

    def test_a_wrong_shape_or_name_raises_usage_error(self):
        with self.assertRaises(tilescope.UsageError):
            tilescope.simulate(library("gemm_naive.tile"), args={"M": 16, "N": 16, "K": 4},
                               inputs={"A": numpy.zeros((4, 4))})
        with self.assertRaises(tilescope.UsageError):
            tilescope.simulate(library("gemm_naive.tile"), args={"M": 16, "N": 16, "K": 4},
                               inputs={"Q": numpy.zeros((16, 4))})

    def test_the_task_names_the_problem(self):
        # The kernel says gemm(A, B -> C); a task claiming C = A * B^T must not match.
        result = tilescope.simulate(library("gemm_naive.tile"), args={"M": 16, "N": 16, "K": 16},
                                    problem="gemm(A, B^T -> C)")
        self.assertEqual((result["verdict"], result["result"]), ("finding", "mismatch"))


def without_times(tree):
    if isinstance(tree, dict):
        return {k: without_times(v) for k, v in tree.items() if k != "ms"}
    if isinstance(tree, list):
        return [without_times(v) for v in tree]
    return tree


class RewardTest(unittest.TestCase):
    def cli_reward(self, name, text, *options):
        with tempfile.TemporaryDirectory() as scratch:
            path = os.path.join(scratch, name)
            with open(path, "w") as f:
                f.write(text)
            cli = subprocess.run([BINARY, "reward", path, "--json", *options],
                                 capture_output=True, text=True)
        return path, json.loads(cli.stdout), cli.returncode

    def test_the_dict_is_what_reward_json_prints(self):
        for name, text, problem in (("naive.tile", library("gemm_naive.tile"), "gemm(A, B -> C)"),
                                    ("wrong.tile", library("gemm_naive.tile"), "gemm(A, B^T -> C)"),
                                    ("racy.tile", RACY, "")):
            with self.subTest(name=name):
                options = ["--seed", "5"] + (["--problem", problem] if problem else [])
                path, cli, code = self.cli_reward(name, text, *options)
                got = tilescope.reward(text, problem=problem, seed=5, name=path)
                self.assertEqual(without_times(got), without_times(cli))
                self.assertEqual(got["exit_code"], code)
        self.assertEqual(tilescope.reward(library("gemm_naive.tile"), problem="gemm(A, B -> C)",
                                          seed=5)["verdict"], "pass")

    def test_the_static_stages_share_static_timeout_ms(self):
        got = tilescope.reward(library("gemm_bf16_sm90.tile"), problem="gemm(A, B^T -> C)",
                               seed=1, static_timeout_ms=1)
        statuses = {s["name"]: s["status"] for s in got["kernels"][0]["stages"]}
        self.assertEqual(got["verdict"], "budget")
        self.assertIn("budget", statuses.values())
        self.assertEqual(statuses["simulate"], "skipped")

    def test_time_limits_that_are_no_number_are_refused_and_huge_ones_are_no_limit(self):
        # NaN passed the `< 0` check and reached a conversion to an integer
        # that is undefined (UBSan), as 1e30 did; 1e30 ms is no limit in
        # practice, and so is the largest processor-time budget of check().
        naive = library("gemm_naive.tile")
        for bad in (dict(timeout_ms=float("nan")), dict(static_timeout_ms=float("nan"))):
            with self.assertRaises(ValueError):
                tilescope.reward(naive, problem="gemm(A, B -> C)", seed=5, **bad)
        got = tilescope.reward(naive, problem="gemm(A, B -> C)", seed=5, timeout_ms=1e30,
                               static_timeout_ms=1e30)
        self.assertEqual(got["verdict"], "pass")
        self.assertEqual(tilescope.check(naive, timeout_ms=2**63 - 1)["verdict"], "proved")

    def test_a_candidate_that_does_not_parse_is_a_result_not_an_exception(self):
        got = tilescope.reward("kernel k(", problem="gemm(A, B -> C)", seed=1)
        self.assertEqual((got["verdict"], got["exit_code"]), ("error", 2))
        self.assertEqual(got["diagnostics"][0]["line"], 1)

    def test_the_performance_stage_is_exposed(self):
        # static_only, performance_sizes and machine are --static,
        # --performance-sizes and --machine; the dict has the prediction.
        got = tilescope.reward(library("gemm_bf16_sm90.tile"), problem="gemm(A, B^T -> C)",
                               seed=1, static_only=True, performance_sizes="M=8192,N=8192,K=8192",
                               machine="h200")
        kernel = got["kernels"][0]
        stages = {s["name"]: s for s in kernel["stages"]}
        self.assertEqual(stages["simulate"]["status"], "unknown")
        self.assertEqual(stages["performance"]["status"], "pass")
        self.assertEqual(got["verdict"], "unknown")
        perf = kernel["performance"]
        self.assertEqual((perf["machine"], perf["sizes"]), ("h200", "K = 8192, M = 8192, N = 8192"))
        self.assertGreater(perf["predicted_us"], perf["roofline_us"])
        self.assertAlmostEqual(perf["ratio"], perf["predicted_us"] / perf["baseline_us"], places=3)
        bad = tilescope.reward(library("gemm_bf16_sm90.tile"), machine="a100", static_only=True)
        self.assertEqual(bad["diagnostics"][0]["code"], "options.machine")

    def test_the_task_element_types_are_dtypes(self):
        # dtypes is --dtypes: the task's element types; a kernel of other
        # types fails the simulate stage, an unknown type name is an options
        # error with "did you mean", and the dict is the command line's.
        naive = library("gemm_naive.tile")
        right = tilescope.reward(naive, problem="gemm(A, B -> C)", seed=5,
                                 dtypes={"A": "f32", "B": "f32", "C": "f32"})
        self.assertEqual(right["verdict"], "pass")
        cheaper = tilescope.reward(naive, problem="gemm(A, B -> C)", seed=5,
                                   dtypes={"A": "bf16"})
        stages = {s["name"]: s for s in cheaper["kernels"][0]["stages"]}
        self.assertEqual(stages["simulate"]["status"], "fail")
        self.assertEqual(stages["simulate"]["diagnostics"][0]["code"],
                         "simulate.problem-mismatch")
        path, cli, code = self.cli_reward("naive.tile", naive, "--seed", "5", "--problem",
                                          "gemm(A, B -> C)", "--dtypes", "A=bf16")
        got = tilescope.reward(naive, problem="gemm(A, B -> C)", seed=5, dtypes={"A": "bf16"},
                               name=path)
        self.assertEqual(without_times(got), without_times(cli))
        self.assertEqual(got["exit_code"], code)
        unknown = tilescope.reward(naive, problem="gemm(A, B -> C)", seed=5, dtypes={"A": "bf61"})
        self.assertEqual((unknown["verdict"], unknown["exit_code"]), ("error", 2))
        self.assertEqual(unknown["diagnostics"][0]["code"], "options.dtypes")
        self.assertIn("did you mean 'bf16'", unknown["diagnostics"][0]["message"])
        with self.assertRaises(TypeError):
            tilescope.reward(naive, problem="gemm(A, B -> C)", dtypes={"A": 16})

    def test_a_kernel_with_parameters_is_scored_at_the_point_set_names(self):
        family = library("gemm_bf16_sm90_family.tile")
        point = "BM=64,BN=64,STAGES=2,CONSUMERS=1,ORDER=row,PERSISTENT=false,SPLIT=1"
        got = tilescope.reward(family, problem="gemm(A, B^T -> C)", seed=1, set=point,
                               sizes="M=72,N=64,K=192")
        self.assertEqual(got["verdict"], "pass")
        self.assertEqual(got["kernels"][0]["point"], point)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "instance.tile")
            subprocess.run([BINARY, "instantiate", os.path.join(SOURCE_DIR, "kernels",
                            "gemm_bf16_sm90_family.tile"), "--set", point, "-o", path],
                           check=True)
            with open(path) as f:
                instance = tilescope.reward(f.read(), static_only=True)
        self.assertEqual(got["kernels"][0]["candidate"], instance["kernels"][0]["candidate"])
        outside = tilescope.reward(family, problem="gemm(A, B^T -> C)", static_only=True,
                                   set=point.replace("CONSUMERS=1", "CONSUMERS=2"))
        self.assertEqual(outside["first_failure"]["code"], "types.point")

    def test_without_a_seed_the_reward_draws_and_reports_one(self):
        first = tilescope.reward(library("gemm_naive.tile"), problem="gemm(A, B -> C)")
        second = tilescope.reward(library("gemm_naive.tile"), problem="gemm(A, B -> C)")
        self.assertNotEqual(first["seed"], second["seed"])


class LayoutTest(unittest.TestCase):
    def test_owners_of_a_thread_layout(self):
        doc = tilescope.layout("S[(4,8):(1@warpid,1@laneid)]", (4, 8))
        owners = doc["owners_array"]
        self.assertEqual(owners.shape, (4, 8, 1, len(doc["axes"])))
        where = dict(zip(doc["axes"], owners[3, 5, 0]))
        self.assertEqual((where["warpid"], where["laneid"]), (3, 5))

    def test_a_bad_layout_raises_input_error(self):
        with self.assertRaises(tilescope.InputError) as caught:
            tilescope.layout("S[(4,8):(1@warpid,1@lane)]", (4, 8))
        self.assertIn("unknown axis", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
