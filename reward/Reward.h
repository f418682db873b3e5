// The reward of a candidate kernel for agents that search kernels: one call
// runs the stages of tilescope in order — parse, types, dispatch, resources,
// layouts, barriers, races, simulate, performance — and says for each whether
// it passed, failed, could not decide (unknown), ran out of budget or was
// skipped, with the diagnostics the other commands print (each with a stable
// code and the kernel's name), a score in [0, 1] and the first failure with a
// hint. `tilescope reward` prints rewardJson(); the Python module returns the
// same object as a dict. docs/reward.md documents the stages, the score, the
// codes and the JSON (docs/reward.schema.json).
//
// The task, not the candidate, names the problem the simulate stage checks
// against (a candidate's own `// problem:` line is ignored). Inputs are drawn
// fresh from the OS each call unless `seed` pins them; the seed is reported.
//
// Thread-safe: calls share no mutable state (the static-stage cache is
// passed in explicitly). Never throws and never exits on bad input.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

class RewardCache; // reward/RewardCache.h

// A task's tolerance for an output (docs/reward.md): an element matches
// when |got - ref| <= atol + rtol * |ref|, instead of the reference's bound.
struct RewardTolerance {
  double rtol = 0, atol = 0;
};

struct RewardOptions {
  std::string kernel;           // empty: every kernel of the file, reported per kernel
  // The point a kernel with parameters is scored at, as `tilescope
  // instantiate --set` takes it ("BM=128,STAGES=6", a named point, or a named
  // point with changes); the kernels without parameters ignore it. Empty: a
  // kernel with parameters fails `types` (a family is not one candidate).
  std::string point;
  std::string problem;          // the task's problem, e.g. "gemm(A, B^T -> C)"
  std::string sizes = "auto";   // "auto" or "M=256,N=256,K=128;M=384,N=128,K=320"
  std::optional<uint64_t> seed; // none: drawn from the OS (and reported)
  // By output name, or "*" for every other output; empty: the references'
  // bounds from the numerics model (docs/simulator.md, "Comparison").
  std::map<std::string, RewardTolerance> tolerances;
  // The element types the task wants, by parameter name ("A" -> "bf16"):
  // the problem names the operands, not their types, so a candidate could
  // declare cheaper ones (bf16 inputs for an f32 GEMM) and be compared with
  // a reference of those. A parameter declared otherwise, or missing, fails
  // the simulate stage (`simulate.problem-mismatch`). Empty: not checked.
  std::map<std::string, std::string> dtypes;
  std::string fileName = "<candidate>";
  double staticTimeoutMs = 10000;        // CPU time of the static stages together (0: none)
  double timeoutMs = 10000;              // wall time of the simulate stage per size
  uint64_t maxSteps = uint64_t{1} << 28; // simulated warp statements per size
  uint64_t maxMemoryMb = 512;            // simulated state (tensors, CTA state)
  bool cacheDynamic = false;             // answer simulate from the cache too
  bool staticOnly = false;      // leave the simulation out: simulate is `unknown` (not checked)
  bool ptxas = false; // resources: also lower, compile with nvcc and check ptxas's report
  // The performance stage (docs/reward.md, "Performance"): the sizes the
  // model predicts at ("auto": 4096 for every shape symbol, or
  // "M=8192,N=8192,K=8192") and the machine ("h100", "h200"; empty: h100).
  std::string performanceSizes = "auto";
  std::string machine;
  RewardCache *cache = nullptr; // static stages by semantic hash; may be null
};

enum class StageStatus : uint8_t { Pass, Fail, Unknown, Budget, Skipped };
const char *stageStatusName(StageStatus s);

// One diagnostic, as every command prints it, plus the reward's fields.
struct RewardDiagnostic {
  std::string severity = "error"; // error | warning | note
  std::string file;
  unsigned line = 0, column = 0; // 1-based; 0 when unknown
  std::string kernel;            // empty for file-level diagnostics
  std::string code;              // stable, docs/reward.md lists them
  std::string message;
  std::string witness; // a concrete counterexample, when the stage has one
};

struct StageResult {
  std::string name;
  StageStatus status = StageStatus::Skipped;
  double ms = 0;
  bool cached = false;
  std::string reason; // why skipped / unknown / budget, or how it was decided
  double credit = 0;  // the stage's share of the score in [0, 1] (simulate: sizes passed)
  // A skipped stage that still weighs in the score, earning nothing: the
  // performance stage of a GEMM task whose kernel uses tensor cores the
  // model does not cover (sm_100a's tcgen05). Set by the stage.
  bool weighsWhenSkipped = false;
  std::vector<RewardDiagnostic> diagnostics;
};

// What the simulate stage ran: one entry per problem size.
struct SimulatedSize {
  std::string sizes;   // "K = 384, M = 128, N = 256"
  std::string ctas;    // "all" or "3 of 132"
  std::string outcome; // match | mismatch | unwritten | input-modified | deadlock | ...
  double ms = 0;
  // What shared memory, registers, tensor memory and the outputs held before
  // the run (simulator/Poison.h): nan | random | big | negbig.
  std::string poison;
  std::string role;   // small | edge | persistent | given | threshold (reward/SimSizes.h)
  std::string reason; // a threshold size's: the decision it flips, where (else empty)
};

// What the performance stage predicted (absent when the model did not run).
struct PerformanceEstimate {
  std::string machine;    // "h100"
  std::string sizes;      // "K = 4096, M = 4096, N = 4096"
  double predictedUs = 0; // the model's time (model/Predict.h)
  std::string boundBy;    // the resource of the longest bound
  double tflops = 0;      // achieved at the predicted time
  double rooflineUs = 0;  // the work's flops at peak or bytes at DRAM rate (model/Baseline.h)
  double baselineUs = 0;  // cuBLAS-calibrated: factor * roofline + overhead
  double ratio = 0;       // predictedUs / baselineUs (below 1: faster than the baseline)
};

struct FirstFailure {
  std::string stage, code, hint;
  std::string file;
  unsigned line = 0, column = 0;
};

struct KernelReward {
  std::string kernel;
  std::string candidate; // semantic hash, 16 hex digits (of the instance, for a point)
  std::string point;     // the point scored, every parameter named; empty: no parameters
  std::vector<StageResult> stages;
  std::vector<SimulatedSize> simulated;
  std::optional<PerformanceEstimate> performance;
  double score = 0;
  std::optional<FirstFailure> firstFailure;
  std::string verdict; // pass | fail | unknown | budget | error
};

struct RewardResult {
  std::string file;
  std::string candidate; // semantic hash of the file (its kernels' hashes in order)
  std::string problem;   // the task's problem; empty when none was given
  uint64_t seed = 0;
  std::vector<KernelReward> kernels;
  std::vector<RewardDiagnostic> diagnostics; // about the file or the options
  double score = 0;                          // mean of the kernels' scores
  std::string verdict;                       // worst of the kernels'
  int exitCode = 0;                          // 0 pass, 1 fail, 2 input error, 3 unknown, 4 budget
  double ms = 0;
};

// The first call in a process sets glibc's malloc thresholds (mmap 32 MiB,
// trim 512 MiB) so that memory freed by one candidate serves the next
// instead of being faulted in again (reward/Reward.cpp keepFreedMemory,
// docs/reward.md "Throughput"): a process keeps its peak after it; call
// malloc_trim(0) to give memory back.
RewardResult reward(const std::string &source, const RewardOptions &options);

// The JSON object of `tilescope reward --json`, as text (indented by
// `indent`, 0: one line).
std::string rewardJson(const RewardResult &result, unsigned indent = 2);
std::string rewardJson(const std::string &source, const RewardOptions &options);

// The stage names in order.
const std::vector<std::string> &rewardStageNames();

} // namespace tilescope
