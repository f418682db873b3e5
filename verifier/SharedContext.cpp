#include "verifier/SharedContext.h"

#include "verifier/ProofContext.h"
#include "verifier/SolverBudget.h"

#include <memory>
#include <vector>

namespace tilescope {

namespace {

// The thread's contexts: the last one is current; each ProofContextScope
// pushes a place for one and pops it. A context is made on first use (a
// kernel whose proofs ask Z3 nothing pays nothing), and outside any scope
// the bottom one serves every caller.
std::vector<std::unique_ptr<z3::context>> &contexts() {
  thread_local std::vector<std::unique_ptr<z3::context>> stack(1);
  return stack;
}

} // namespace

ProofContextScope::ProofContextScope() {
  contexts().emplace_back();
}

ProofContextScope::~ProofContextScope() {
  contexts().pop_back();
}

namespace detail {

z3::context &sharedContext() {
  std::unique_ptr<z3::context> &current = contexts().back();
  if (!current) {
    requireSolverContext();
    current = std::make_unique<z3::context>();
  }
  return *current;
}

} // namespace detail

} // namespace tilescope
