// The Z3 context of one kernel's proofs, made fresh for each kernel.
//
// The proofs of a kernel (layouts, barrier protocols, static races, write
// coverage) share one Z3 context (proof/SharedContext.h): creating one
// costs more than most queries. Across kernels they must not: a context
// hash-conses every term it has built and numbers them in creation order, and
// Z3's rewriters order sums and products by those numbers, so a kernel's
// queries take other normal forms, and other solver paths under the same
// resource limit, after another kernel's proofs than alone. A verdict must be
// a function of the kernel, not of what the process checked before (a
// reward batch, the library check, a Python session).
//
// A ProofContextScope gives the calling thread a fresh context for its
// lifetime and restores the one before when it ends (scopes nest). Open one
// per kernel (or per candidate) around everything that asks Z3; no Z3 object
// may outlive it.
//
// Depends on nothing but the standard library.
#pragma once

namespace tilescope {

class ProofContextScope {
public:
  ProofContextScope();
  ~ProofContextScope();
  ProofContextScope(const ProofContextScope &) = delete;
  ProofContextScope &operator=(const ProofContextScope &) = delete;
};

} // namespace tilescope
