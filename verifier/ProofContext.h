// A Z3 context of their own for the proofs run in a scope. The proofs share
// one Z3 context per thread (verifier/SharedContext.h); how far a query gets
// before Z3 gives up can depend on what earlier queries left in it (a race
// proof of gemm_bf16_sm90_grouped gave up when the points of the GEMM family
// had been checked before it in the same process). A caller that checks
// several kernels and wants each verdict to be the one a process of its own
// would give (`tilescope check` over the points of a space) opens a
// FreshProofContext per kernel: the proofs inside it use a new context,
// destroyed at the end of the scope, and the previous one comes back.
// Creating and destroying a context costs tens of milliseconds, so the
// reward, which checks many candidates per process, does not do it.
//
// No Z3 term built inside the scope may outlive it. Does not expose z3++.h.
#pragma once

namespace tilescope {

class FreshProofContext {
public:
  FreshProofContext();
  ~FreshProofContext();
  FreshProofContext(const FreshProofContext &) = delete;
  FreshProofContext &operator=(const FreshProofContext &) = delete;

private:
  void *previous_; // the z3::context in use before the scope
  void *mine_;     // the scope's own z3::context
};

} // namespace tilescope
