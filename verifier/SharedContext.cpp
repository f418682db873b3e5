#include "verifier/SharedContext.h"

#include "verifier/SolverBudget.h"

#include <optional>

namespace tilescope::detail {

z3::context &sharedContext() {
  thread_local std::optional<z3::context> ctx;
  if (!ctx) {
    requireSolverContext();
    ctx.emplace();
  }
  return *ctx;
}

} // namespace tilescope::detail
