#include "proof/SharedContext.h"

#include "proof/ProofContext.h"
#include "proof/SolverBudget.h"

#include <memory>
#include <optional>
#include <vector>

namespace tilescope {

namespace {

// One kernel's Z3 state: its context, the one-shot tactic pipeline built in
// it and the terms kept until it ends (keepUntilContextEnd). Both are declared
// after the context, so destroyed before it.
struct ThreadContext {
  std::unique_ptr<z3::context> ctx;
  std::optional<z3::tactic> pipeline;
  std::vector<z3::expr> kept;
};

// The thread's contexts: the last one is current; each ProofContextScope
// pushes a place for one and pops it. A context is made on first use (a
// kernel whose proofs ask Z3 nothing pays nothing), and outside any scope
// the bottom one serves every caller.
std::vector<ThreadContext> &contexts() {
  thread_local std::vector<ThreadContext> stack(1);
  return stack;
}

z3::tactic makePipeline(z3::context &ctx) {
  return z3::tactic(ctx, "simplify") & z3::tactic(ctx, "propagate-values") &
         z3::tactic(ctx, "solve-eqs") & z3::tactic(ctx, "purify-arith") & z3::tactic(ctx, "smt");
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
  ThreadContext &current = contexts().back();
  if (!current.ctx) {
    requireSolverContext();
    current.ctx = std::make_unique<z3::context>();
  }
  return *current.ctx;
}

z3::tactic oneShotPipeline(z3::context &ctx) {
  ThreadContext &current = contexts().back();
  if (!current.ctx || &ctx != current.ctx.get())
    return makePipeline(ctx);
  if (!current.pipeline)
    current.pipeline.emplace(makePipeline(ctx));
  return *current.pipeline;
}

void keepUntilContextEnd(const z3::expr &e) {
  ThreadContext &current = contexts().back();
  if (current.ctx && &e.ctx() == current.ctx.get()) {
    current.kept.push_back(e);
    return;
  }
  Z3_inc_ref(e.ctx(), e);
}

} // namespace detail

} // namespace tilescope
