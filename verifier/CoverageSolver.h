// Internal to the write-coverage and bounds proofs (WriteCoverage.h,
// GlobalBounds.h): the Z3 state one kernel's coverage and bounds queries
// share. They run in the thread's proof context (proof/SharedContext.h, one
// per kernel), with one encoder of the kernel's sizes and one solver that
// holds the sizes' facts (the `where` clause, each size at least its least
// value), asserted once; each query asserts its own constraints inside a
// Scope, which takes them back when it ends.
//
// Measured on kernels/gemm_bf16_sm90.tile (perf, 2026-11-26): a context of
// their own made and deleted per kernel, and a fresh solver per query (its
// first assertion builds Z3's SMT kernel and reads every parameter), were
// more than half of the coverage stage's time; the queries themselves a
// tenth. Exposes z3++.h: include it only from .cpp files.
#pragma once

#include "proof/ProtoEncoding.h"
#include "proof/SharedContext.h"
#include "proof/SolverBudget.h"
#include "verifier/WriteCoverage.h"

#include <set>
#include <string>

namespace tilescope::detail {

struct CoverageSolver {
  // z3::solver(ctx), not incrementalSolver (SolverBudget.h): the least
  // witnesses of the coverage proof depend on it.
  CoverageSolver(const BarrierSkeleton &sk, unsigned timeoutMs)
      : ctx(sharedContext()), enc(ctx, sk), solver(ctx) {
    z3::params p(ctx);
    setSolverBudget(p, timeoutMs);
    solver.set(p);
    solver.add(enc.assumptions());
  }
  z3::context &ctx;
  ProtoEncoder enc;
  z3::solver solver;
};

// One query's scope in the shared solver.
class SolverScope {
public:
  explicit SolverScope(z3::solver &s) : s_(s) { s_.push(); }
  ~SolverScope() { s_.pop(); }
  SolverScope(const SolverScope &) = delete;
  SolverScope &operator=(const SolverScope &) = delete;

private:
  z3::solver &s_;
};

// proveGlobalBounds (GlobalBounds.h) in `z3s`.
void proveGlobalBounds(CoverageSolver &z3s, const BarrierSkeleton &skeleton,
                       const std::set<std::string> &floats, CoverageReport &report);

} // namespace tilescope::detail
