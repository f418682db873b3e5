// The checked simulation of one kernel against the problem it is meant to
// solve: what `tilescope sim` runs and what `tilescope reward` builds its
// `simulate` stage on. It is written so that a candidate kernel cannot game
// it (docs/simulator.md, "Checked simulation"):
//
//   - no problem, no pass: without a problem (the kernel's `// problem:`
//     annotation, or one the caller gives) the verdict is `unknown`;
//   - the problem's outputs are poisoned (NaN) before the run and every
//     element is checked: an element nobody wrote is a finding, also when
//     only some CTAs run (then within those CTAs' tiles, Coverage.h);
//   - shared memory, registers and tensor memory are poisoned at each CTA's
//     start (Poison.h), and reads of shared or tensor memory that nothing
//     wrote are findings (EngineOptions::checkUninitialized);
//   - the reference is computed from a copy of the inputs taken before the
//     run, and every tensor the problem does not name as an output must be
//     unchanged afterwards (the IR has no in-out parameters);
//   - inputs are random, drawn from a seed that the caller draws fresh
//     (freshSeed) unless one is given for replay; float scalars the caller
//     does not give are sampled (sampleScalars).
//
// Must not depend on the command line; nothing is printed.
#pragma once

#include "simulator/Engine.h"
#include "simulator/Reference.h"

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tilescope::sim {

// A seed from the operating system (std::random_device), for inputs that a
// kernel cannot predict. Report it: `--seed` replays the run.
uint64_t freshSeed();

// Gives every float scalar parameter of `kernel` that `args` lacks a value
// drawn from `seed`: a parameter whose name contains `eps` (any case) gets
// 10^u with u uniform in [-6, -1]; any other gets 2^u with u uniform in
// [-3, 1] (scales, temperatures). Integer scalars are not sampled (they are
// sizes: bindProgram asks for them). Returns one note per sampled value
// ("scalar 'eps' sampled: 3.1e-05").
//
// `stratum` narrows u to a part of its range, so that a caller running
// several sizes sees both ends: ScalarStratum::Top draws u from the top
// fifth of the range (eps in [1e-2, 1e-1]: where a kernel that drops eps,
// or replaces it by a constant, is visibly wrong), Bottom from the lowest
// fifth, Whole from all of it.
//
// A parameter named in `signedNames` (a gemm's alpha: Reference.h
// signedScalars) gets a sign as well: positive in the Top stratum, negative
// in the Bottom one, drawn in Whole; the others stay positive.
enum class ScalarStratum { Whole, Top, Bottom };
std::vector<std::string> sampleScalars(const Kernel &kernel, ArgValues &args, uint64_t seed,
                                       ScalarStratum stratum = ScalarStratum::Whole,
                                       const std::set<std::string> &signedNames = {});

// Fills the kernel's tensors (allocateTensors) for a run: inputs (every
// tensor `problem` does not name as an output; all of them without a problem)
// random from `seed` (fillRandomInput; block scales for the problem's scale
// tensors), outputs poisoned with NaN (-1 for integers) and marked unwritten.
// `outputPoison` other than NaN fills the outputs with that pattern instead
// (Poison.h; Random from `seed`).
// `wide`: float inputs other than block scales are then widened (widenInput:
// rows scaled by powers of two, exact zeros; some past `targets`, the
// kernel's literals: WideTargets.h).
void prepareTensors(std::vector<HostTensor> &tensors, const BoundProblem *problem, uint64_t seed,
                    PoisonPattern outputPoison = PoisonPattern::Nan, bool wide = false,
                    const WideTargets &targets = {});
// Whether tensor `index` is an output of `problem`.
bool isProblemOutput(const BoundProblem *problem, int index);
// NaN in every element (-1 for integers), nothing marked written; with
// another pattern, that pattern's bytes (Random: drawn from `rng`).
void poisonTensor(HostTensor &t);
void poisonTensor(HostTensor &t, PoisonPattern pattern, std::mt19937_64 &rng);

struct SimulateOptions {
  uint64_t seed = 1; // the scheduler and the Random poison (inputs: prepareTensors)
  // The CTAs to run (sampleCtas); empty: every CTA.
  std::vector<std::array<int64_t, 3>> ctas;
  PoisonPattern poison = PoisonPattern::Nan;
  bool checkUninitialized = true;
  int64_t maxSteps = int64_t{1} << 32;
  int64_t memoryCapBytes = int64_t{4} << 30;
  // A wall-time limit (EngineOptions::deadline): past it the run ends as a
  // step budget.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // The task's tolerances (Reference.h); empty: the references' bounds.
  Tolerances tolerances;
  // Renders a source location as `file:line:col`.
  std::function<std::string(llvm::SMLoc)> where;
};

// A tensor the kernel must not write that it changed, or stored to and left
// (or put back) as it was: an input used as scratch and restored is a write
// all the same.
struct InputChange {
  std::string name;
  int64_t changed = 0; // elements whose bits differ
  int64_t written = 0; // elements the kernel stored to, changed or not
  int64_t first = 0;   // the first changed element (flat), else the first written
  double before = 0, after = 0;
};

// One finding of the checked simulation, on one line.
struct SimFinding {
  // "mismatch", "unwritten output", "input modified", "uninitialized read",
  // "deadlock", "runtime error".
  std::string kind;
  std::string message;
  std::string location; // file:line:col where known, else empty
};

// The verdict contract every command follows (exit status in parentheses):
// Proved (0: here, every output element matched the reference at the sizes,
// seed and poison pattern of the run, and nothing else was found), Finding
// (1), Unknown (3: not checked, with the reason), Budget (4: the step budget
// or memory cap ran out). Unknown is never a pass.
enum class SimVerdict : uint8_t { Proved, Finding, Unknown, Budget };
std::string_view simVerdictName(SimVerdict v); // "proved", "finding", "unknown", "budget"
int simVerdictExitCode(SimVerdict v);          // 0, 1, 3, 4

struct SimulationResult {
  RunResult run;
  std::vector<OutputReport> outputs;     // with a problem and a completed run
  std::vector<InputChange> inputChanges; // with a problem and a completed run
  std::vector<SimFinding> findings;
  bool allCtas = true;
  SimVerdict verdict = SimVerdict::Unknown;
  // "match", "mismatch", "unwritten output", "input modified", "uninitialized
  // read", "deadlock", "runtime error", "step budget", "memory cap", "no
  // reference": the first finding's kind, or why there is no finding.
  std::string result;
  std::string reason; // unknown and budget: why
  int exitCode() const { return simVerdictExitCode(verdict); }
};

// Runs `program` on `tensors` (from prepareTensors, then possibly replaced by
// the caller's arrays) and checks it as the header says. `problem` may be
// null: the run still reports deadlocks, runtime errors and uninitialised
// reads, and is otherwise `unknown` (no reference).
SimulationResult simulateChecked(const Program &program, const BoundProblem *problem,
                                 std::vector<HostTensor> &tensors, const SimulateOptions &options);

} // namespace tilescope::sim
