// The reward's JSON inputs (reward/Task.h): a task and a batch line are read
// strictly, and every refusal says where (line and column) and why.
#include "reward/Task.h"

#include <doctest/doctest.h>

using namespace tilescope;

namespace {

std::string refusal(llvm::StringRef text) {
  RewardOptions options;
  JsonInputError error;
  REQUIRE_FALSE(readTask(text, options, error));
  return error.str("t.json");
}

std::string lineRefusal(llvm::StringRef text) {
  BatchCandidate c;
  JsonInputError error;
  REQUIRE_FALSE(readBatchLine(text, RewardOptions(), c, error));
  return error.str("in.jsonl");
}

} // namespace

TEST_CASE("a task sets problem, sizes (string or list), seed and kernel") {
  RewardOptions o;
  JsonInputError error;
  REQUIRE(readTask(R"j({"problem": "gemm(A, B -> C)", "sizes": [{"M": 32, "N": 16}, {"M": 48}],
                       "seed": 4, "kernel": "k"})j",
                   o, error));
  CHECK(o.problem == "gemm(A, B -> C)");
  CHECK(o.sizes == "M=32,N=16;M=48");
  CHECK(o.seed == 4u);
  CHECK(o.kernel == "k");
  REQUIRE(readTask(R"({"sizes": "auto"})", o, error));
  CHECK(o.sizes == "auto");
}

TEST_CASE("a task sets the performance stage's sizes (string or object) and machine") {
  RewardOptions o;
  JsonInputError error;
  REQUIRE(readTask(R"({"performance_sizes": {"M": 8192, "N": 1024, "K": 512}, "machine": "h200"})",
                   o, error));
  CHECK(o.performanceSizes == "M=8192,N=1024,K=512");
  CHECK(o.machine == "h200");
  REQUIRE(readTask(R"({"performance_sizes": "M=64,N=64,K=64"})", o, error));
  CHECK(o.performanceSizes == "M=64,N=64,K=64");
}

TEST_CASE("a task that is not JSON is refused at the parser's position") {
  CHECK(refusal("{\"problem\": \"gemm\",\n  \"sizes\" 3}") ==
        "t.json:2:11: error: not JSON: Expected : after object key");
  CHECK(refusal("") == "t.json:1:1: error: not JSON: Unexpected EOF");
  CHECK(refusal("\xff\xfe garbage").find("t.json:1:1: error: not JSON: ") == 0);
}

TEST_CASE("a task key that is unknown or mistyped is refused at the key") {
  CHECK(refusal("[1, 2]") == "t.json:1:1: error: the task must be a JSON object");
  CHECK(refusal("{\"problem\": \"p\",\n \"tolerance\": {}}") ==
        "t.json:2:2: error: unknown task key 'tolerance' (problem, sizes, seed, kernel, set, "
        "tolerances, dtypes, performance_sizes, machine); did you mean 'tolerances'?");
  CHECK(refusal(R"({"dtypes": {"A": 3}})") ==
        "t.json:1:13: error: the type of 'A' must be a string such as \"bf16\"");
  // An unknown type name at its key inside "dtypes", not the same name
  // among "tolerances" that comes first.
  CHECK(refusal(R"({"tolerances": {"A": {}}, "dtypes": {"A": "bf61"}})") ==
        "t.json:1:38: error: the type 'bf61' of 'A' is no element type (f32, bf16, f16, "
        "f8e4m3, ...); did you mean 'bf16'?");
  CHECK(refusal(R"({"dtypes": {"A": "qq"}})") ==
        "t.json:1:13: error: the type 'qq' of 'A' is no element type (f32, bf16, f16, f8e4m3, "
        "...)");
  CHECK(refusal(R"({"dtypes": ["A"]})") ==
        "t.json:1:2: error: task key \"dtypes\" must be an object such as {\"A\": \"bf16\", "
        "\"C\": \"f32\"}");
  CHECK(refusal(R"({"performance_sizes": {"M": 0}})") ==
        "t.json:1:24: error: size 'M' must be an integer in [1, 2^40]");
  CHECK(refusal(R"({"machine": 100})") ==
        "t.json:1:2: error: task key \"machine\" must be a string");
  CHECK(refusal(R"({"tolerances": {"C": {"rtol": "x"}}})") ==
        "t.json:1:17: error: tolerance for 'C' must be an object such as {\"rtol\": 0.01, "
        "\"atol\": 1e-5} (numbers; a missing one is 0)");
  CHECK(refusal(R"({"seed": -1})") ==
        "t.json:1:2: error: task key \"seed\" must be a non-negative integer");
  CHECK(refusal(R"({"seed": 1.5})") ==
        "t.json:1:2: error: task key \"seed\" must be a non-negative integer");
  CHECK(refusal(R"({"problem": 3})") == "t.json:1:2: error: task key \"problem\" must be a string");
  CHECK(refusal(R"({"sizes": []})").find("t.json:1:2: error: task key \"sizes\" must be") == 0);
  CHECK(refusal(R"({"sizes": [{"M": 0}]})") ==
        "t.json:1:13: error: size 'M' must be an integer in [1, 2^40]");
  CHECK(refusal(R"({"sizes": [{"M": 99999999999999999999}]})") ==
        "t.json:1:13: error: size 'M' must be an integer in [1, 2^40]");
}

TEST_CASE("a task's refusal leaves the options as they were") {
  RewardOptions o;
  o.problem = "before";
  JsonInputError error;
  CHECK_FALSE(readTask(R"({"problem": "after", "seed": "x"})", o, error));
  CHECK(o.problem == "before");
}

TEST_CASE("a batch line has an id and one of source and path") {
  BatchCandidate c;
  JsonInputError error;
  RewardOptions defaults;
  defaults.problem = "p";
  REQUIRE(readBatchLine(R"({"id": 7, "source": "kernel k", "seed": 3})", defaults, c, error));
  CHECK(c.id.getAsInteger() == int64_t(7));
  CHECK(c.source == "kernel k");
  CHECK(c.options.seed == 3u);
  CHECK(c.options.problem == "p");
  CHECK(lineRefusal("{not json").find("in.jsonl:1:2: error: not JSON: ") == 0);
  CHECK(lineRefusal(R"({"source": "x"})") == "in.jsonl:1:1: error: no \"id\"");
  CHECK(lineRefusal(R"({"id": null, "source": "x"})") ==
        "in.jsonl:1:2: error: \"id\" must not be null");
  CHECK(lineRefusal(R"({"id": 1})") == "in.jsonl:1:1: error: neither \"source\" nor \"path\"");
  CHECK(lineRefusal(R"({"id": 1, "source": "x", "path": "y"})") ==
        "in.jsonl:1:1: error: both \"source\" and \"path\"; give one");
  CHECK(lineRefusal(R"({"id": 1, "path": ""})") ==
        "in.jsonl:1:11: error: \"path\" must not be empty");
  CHECK(lineRefusal(R"({"id": 1, "source": "x", "sead": 3})") ==
        "in.jsonl:1:26: error: unknown key 'sead' (id, source, path, problem, sizes, seed, "
        "kernel, set); did you mean 'seed'?");
  CHECK(lineRefusal(R"({"id": 1, "source": "x", "zzzz": 3})") ==
        "in.jsonl:1:26: error: unknown key 'zzzz' (id, source, path, problem, sizes, seed, "
        "kernel, set)");
}

TEST_CASE("a refused batch line keeps its id for the error line") {
  BatchCandidate c;
  JsonInputError error;
  CHECK_FALSE(readBatchLine(R"({"id": "a", "source": 3})", RewardOptions(), c, error));
  CHECK(c.id.getAsString() == llvm::StringRef("a"));
}
