// The execution engine: runs a bound kernel (Program.h) on host tensors, CTA
// by CTA, warp by warp, and says how it ended.
//
// Execution model. Each CTA has its warps of 32 lanes, shared memory as bytes,
// registers per thread, its mbarriers and the asynchronous copies in flight.
// A warp executes the statement tree with an explicit stack of frames (block,
// loop) and an active mask per frame, so divergent branches run one after the
// other with the lanes that took them, and a warp can stop in the middle of
// any block and resume later. Expressions are evaluated for all active lanes
// at once. A statement is one step.
//
// A warp blocks on an mbarrier wait whose phase has not completed and on a
// collective call (cta.sync, wg.gemm, setmaxnreg, ...) until every warp of its
// scope has reached the same call; the last one to arrive executes it for the
// whole scope. A seeded scheduler picks the next ready warp, how many steps it
// runs, and when an asynchronous copy (TMA) completes. When no warp can run
// and nothing is in flight while some warp has not finished, the run ends in a
// deadlock report naming each warp's blocking call, its location and the
// state of the barriers it waits on.
//
// Must not depend on the command line; diagnostics are returned, not printed.
#pragma once

#include "simulator/Poison.h"
#include "simulator/Program.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tilescope::sim {

// A kernel tensor in host memory: row-major encoded elements. `written` marks
// each element some thread stored (outputs start poisoned and unwritten).
struct HostTensor {
  std::string name;
  Dtype dtype = Dtype::f32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> written;

  int64_t elements() const;
  uint64_t bitsAt(int64_t i) const;
  void setBits(int64_t i, uint64_t bits);
};

// Allocates each tensor parameter of `program` (zero bytes, nothing written).
std::vector<HostTensor> allocateTensors(const Program &program);

struct EngineOptions {
  uint64_t seed = 1;
  // The CTAs to run (blockIdx x, y, z); empty: all of them.
  std::vector<std::array<int64_t, 3>> ctas;
  int64_t maxSteps = int64_t{1} << 32;       // warp statements over the whole run
  int64_t memoryCapBytes = int64_t{4} << 30; // simulated state per CTA plus plan tables
  // A wall-clock budget: past this instant the run ends as TimeBudget (the
  // clock is read every 1024 scheduler ticks, as is the active budget of
  // ir/Budget.h). max(): none.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // Track happens-before over shared memory and report unordered accesses.
  bool detectRaces = false;
  // Scalar fast paths: fused store statements and uniform loop stepping
  // (docs/simulator.md, "Scalar fast paths"). They give the same bits, statistics and
  // diagnostics as the general evaluator; false runs everything through it,
  // which the tests use to compare the two.
  bool scalarFastPaths = true;
  // Renders a source location as `file:line:col`.
  std::function<std::string(llvm::SMLoc)> where;
  // What each CTA's shared memory, registers and tensor memory hold at its
  // start (Poison.h); the seed draws the Random pattern. NaN by default, so
  // that every caller's runs show reads before writes.
  PoisonPattern poison = PoisonPattern::Nan;
  // Keep a "written" bit per shared-memory byte and tensor-memory cell of
  // each CTA and report reads of bytes or cells nothing wrote before
  // (RunStats::uninitializedReads). Like race detection it takes the
  // per-element paths (slower).
  bool checkUninitialized = false;
  // Called after each CTA (each cluster, for clustered kernels) ran to its
  // end, with its first CTA: Coverage.h attributes output elements to the
  // sampled CTAs that wrote them.
  std::function<void(const std::array<int64_t, 3> &)> afterUnit;
};

// A read of shared or tensor memory that nothing wrote since the CTA started
// (EngineOptions::checkUninitialized): the first one at each (location,
// buffer), and how many element reads there were in all.
struct UninitializedRead {
  std::string space;            // "shared" or "tmem"
  std::string buffer;           // the buffer read
  std::string element;          // its first such element, e.g. "[3, 17]"
  std::string location;         // file:line:col of the reading statement
  std::string agent;            // "thread 97" or "an asynchronous operation"
  std::array<int64_t, 3> cta{}; // the CTA whose memory
  int64_t count = 0;            // element reads at this location and buffer
  const void *key = nullptr;    // the location's source pointer (for merging)
};

struct RunStats {
  int64_t ctas = 0;
  int64_t steps = 0;                 // warp-level statements executed
  std::vector<int64_t> stepsPerWarp; // by warp index, summed over the CTAs run
  int64_t laneOps = 0;               // active lanes summed over those statements
  int64_t elementsMoved = 0;         // elements copied by tile primitives and TMA
  int64_t asyncCopies = 0;           // TMA operations completed
  int64_t mmaSums = 0;               // fused-sum evaluations of the tensor-core model
  int64_t mmaInstructions = 0;       // tensor-core instructions those sums make up
  int64_t globalBytesRead = 0, globalBytesWritten = 0, sharedBytesAccessed = 0;
  int64_t tensorBytesAccessed = 0; // tensor memory (tcgen05), 4 bytes per cell
  double seconds = 0;              // wall clock
  double cpuSeconds = 0;           // processor time of this process during the run
  // With EngineOptions::checkUninitialized: at most 16 distinct reads.
  std::vector<UninitializedRead> uninitializedReads;
};

// A race the detector found (racecheck/dynamic/RaceDetector.h), rendered.
struct DetectedRace {
  std::string kind;    // "data race", "async race", "missing fence.proxy.async", "out of view"
  std::string space;   // "shared", "global", "tmem"
  std::string buffer;  // the buffer of the second access
  std::string element; // its element, e.g. "[3, 17]"
  int64_t address = 0; // shared byte, global element or tensor-memory cell (lane * 512 + column)
  std::array<int64_t, 3> cta{}; // the CTA whose memory (global: the second access's CTA)
  struct Access {
    std::string agent; // "thread 97 (warp 3, lane 1)", "TMA copy issued by thread 0 at ..."
    bool write = false;
    std::string location;         // file:line:col
    std::array<int64_t, 3> cta{}; // the CTA of the thread (of the issuing thread)
  } first, second;
  std::string text; // the whole finding on one line
};

struct RunResult {
  enum class Outcome : uint8_t {
    Completed,
    RuntimeError,
    Deadlock,
    StepBudget, // options.maxSteps
    MemoryCap,  // options.memoryCapBytes
    TimeBudget, // options.deadline or the active budget's (ir/Budget.h)
  };
  // Whether the run stopped at a budget rather than for a reason of the kernel's.
  bool stoppedByBudget() const {
    return outcome == Outcome::StepBudget || outcome == Outcome::MemoryCap ||
           outcome == Outcome::TimeBudget;
  }
  Outcome outcome = Outcome::Completed;
  std::string message;             // what happened, with the location
  std::vector<std::string> notes;  // deadlock: one line per blocked warp, then barriers
  std::vector<DetectedRace> races; // with detectRaces: the races found (at most 32)
  RunStats stats;
  bool ok() const { return outcome == Outcome::Completed; }
};
std::string_view outcomeName(RunResult::Outcome o);

RunResult runProgram(const Program &program, std::vector<HostTensor> &tensors,
                     const EngineOptions &options);

// `count` CTAs of `grid` for sampling: every corner of the grid (the edge
// tiles) first, the first and the opposite corner leading, then others drawn
// from `seed`; all of them when count <= 0 or count >= the grid's size.
std::vector<std::array<int64_t, 3>> sampleCtas(const std::array<int64_t, 3> &grid, int64_t count,
                                               uint64_t seed);
// The part of sampleCtas(grid, count, seed) that is the same for every seed:
// all CTAs, or the corners among the first `count`.
std::vector<std::array<int64_t, 3>> fixedSampleCtas(const std::array<int64_t, 3> &grid,
                                                    int64_t count);

} // namespace tilescope::sim
