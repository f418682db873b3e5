#include "verifier/SharedContext.h"

#include "verifier/SolverBudget.h"

#include <optional>

namespace tilescope::detail {

namespace {
thread_local std::optional<z3::context> shared;
// Declared after `shared`, so destroyed before it.
thread_local std::optional<z3::tactic> sharedPipeline;

z3::tactic makePipeline(z3::context &ctx) {
  return z3::tactic(ctx, "simplify") & z3::tactic(ctx, "propagate-values") &
         z3::tactic(ctx, "solve-eqs") & z3::tactic(ctx, "purify-arith") & z3::tactic(ctx, "smt");
}
} // namespace

z3::context &sharedContext() {
  if (!shared) {
    requireSolverContext();
    shared.emplace();
  }
  return *shared;
}

z3::tactic oneShotPipeline(z3::context &ctx) {
  if (!shared || &ctx != &*shared)
    return makePipeline(ctx);
  if (!sharedPipeline)
    sharedPipeline.emplace(makePipeline(ctx));
  return *sharedPipeline;
}

} // namespace tilescope::detail
