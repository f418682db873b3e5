// Internal to the Z3-based proofs: the Z3 context every query of this thread
// shares (layouts, barrier protocols, static races). Creating a context and
// destroying it with its terms cost more than most queries: 7 ms and 18 ms
// for each of the barrier proofs and the race check of the persistent GEMM
// when each made its own (2026-11-24), against 30 ms for all of the barrier
// proofs' queries. Terms are hash-consed per context, so two checks that
// build the same term share it; each check keeps its own solvers. One kernel's
// proofs run in a ProofContextScope (proof/ProofContext.h), which gives them
// a context of their own, so that no kernel's verdict depends on another's. Exposes
// z3++.h: include it only from .cpp files.
#pragma once

#include <z3++.h>

namespace tilescope::detail {

z3::context &sharedContext();

// The tactic pipeline of oneShotSolver (SolverBudget.h) for `ctx`: for the
// shared context, built once per thread and reused (a tactic is a recipe;
// each solver made from it takes its own parameters at its check, and a
// solver is created, limited and checked in one go); for any other context a
// new one. Building the five tactics cost a third of a trivial query's time
// (0.29 against 0.20 ms, measured 2026-11-26), and the barrier proofs and the
// race check ask about a hundred one-shot queries per kernel.
z3::tactic oneShotPipeline(z3::context &ctx);

// Holds one reference to `e` until its context ends. For code that once
// dropped that reference without releasing it (z3++ 4.8.12's move assignment
// of an ast keeps the target's old term alive: `out = e; ... out = f(x);`):
// the term lives exactly as long as the leak made it live, so Z3 numbers and
// orders every later term as before (a verdict must not change with the
// bookkeeping), but the reference is released when the ProofContextScope
// ends, just before the context is deleted. A context that still holds terms
// when it is deleted sweeps its whole term table (half a million cells) once
// per level of leaked terms: 27 sweeps, a fifth of a static reward of the
// persistent GEMM (perf, 2026-11-26). For a context that is not the current
// scope's, the reference is kept for the process's lifetime, as the leak did.
void keepUntilContextEnd(const z3::expr &e);

// `to = from` for code that once wrote `to = <a new term>` (a move, which
// leaked the term `to` held): the old term is kept until the context ends,
// as the leak kept it, and the assignment is a copy, which leaks nothing.
inline void replaceKeeping(z3::expr &to, const z3::expr &from) {
  keepUntilContextEnd(to);
  to = from;
}

} // namespace tilescope::detail
