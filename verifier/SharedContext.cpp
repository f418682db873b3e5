#include "verifier/SharedContext.h"
#include "verifier/ProofContext.h"
#include "verifier/SolverBudget.h"

#include <optional>

namespace tilescope {
namespace {

// The context of the innermost FreshProofContext of this thread, if any.
thread_local z3::context *scoped = nullptr;

} // namespace

namespace detail {

z3::context &sharedContext() {
  if (scoped)
    return *scoped;
  thread_local std::optional<z3::context> ctx;
  if (!ctx) {
    requireSolverContext();
    ctx.emplace();
  }
  return *ctx;
}

} // namespace detail

FreshProofContext::FreshProofContext()
    : previous_(scoped), mine_((requireSolverContext(), new z3::context)) {
  scoped = static_cast<z3::context *>(mine_);
}

FreshProofContext::~FreshProofContext() {
  scoped = static_cast<z3::context *>(previous_);
  delete static_cast<z3::context *>(mine_);
}

} // namespace tilescope
