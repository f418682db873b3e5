// How much work one Z3 query may do before the verifier calls it undecided.
//
// A wall-clock timeout makes answers depend on the machine's load: a query
// that takes 0.5 s of CPU on an idle core ran past a 10 s timeout while other
// builds shared the two cores, and a proof turned "undecided". So a query's
// own limit is Z3's resource limit (rlimit), which counts solver work: the
// same query gets the same answer everywhere. The limit is derived from the
// caller's millisecond budget at the rate measured on the development machine
// (about 10^6 units per CPU second, see docs/verifier.md), doubled for slower
// machines. The command's time budgets (ir/Budget.h) bound a query in flight
// only through checkWithinBudget (proof/QueryDeadline.h), which stops it when
// the processor time or the wall time runs out; a query it stops is the
// budget running out (noteSolverGaveUp), never an unknown.
//
// Depends on Z3 only.
#pragma once

#include <z3++.h>

#include <string_view>

namespace tilescope {

// Resource units granted per millisecond of budget.
inline constexpr unsigned kZ3UnitsPerMs = 2000;

// Sets the per-query limits of `budgetMs` on `params`.
void setSolverBudget(z3::params &params, unsigned budgetMs);

// The share of its resource limit each query gets is 1/N, N being the
// environment variable TILESCOPE_SOLVER_SHARE (a whole number, 1 when unset or
// invalid), read once. Tests set it to make hard queries give up
// deterministically and expect no verdict to rest on their answers
// (tests/lit/budget/undecided-never-decides.test).
unsigned solverShare();

// Whether a reason a query gave up for (Z3's reason_unknown(), or a proof's
// message quoting it) is the budget's deadline: "canceled", "interrupted" or
// "timeout" once the active budget's processor time or wall time is (all
// but) spent; Z3 says "canceled" for an exhausted rlimit too, and that is an
// undecided query.
bool isDeadlineReason(std::string_view reason);

// Records the command's budget as exceeded when `reason` is the backstop
// (or memory running out, isOutOfMemoryReason); true if it was either.
// Proofs that report undecided queries call it for each reason, so that a
// load-dependent stop is `budget` (exit 4), never `unknown`.
bool noteSolverGaveUp(std::string_view reason);

// Caps the memory Z3 may allocate, process-wide (0: no cap); past it a query
// ends as unknown or throws, and a context cannot be created.
void setSolverMemoryLimit(int64_t megabytes);

// Throws std::bad_alloc when Z3 cannot create a context now (its memory cap
// is reached): z3::context's constructor does not check and crashes on the
// null context Z3 then returns. Call before creating a context.
void requireSolverContext();

// Whether a reason a proof gave up for (Z3's reason_unknown(), a z3::exception
// or std::exception message, as the proofs quote them) is memory running out:
// the command's memory budget, not a question Z3 could not decide.
bool isOutOfMemoryReason(std::string_view reason);

// A solver for one query, checked once, with the limits of `budgetMs`: it
// simplifies, propagates fixed values, solves equations and replaces div and
// mod by constants with fresh unknowns before the SMT core sees the query.
// Measured 2026-11-24: the barrier proofs' parity queries (rounds of a ring
// over a flattened tile x k loop) 2.4 ms against 10-98 ms in Z3's default
// incremental solver; with it for the symbolic TMA stride proofs, the layout
// stage of the persistent GEMM took 25 ms instead of 37.
z3::solver oneShotSolver(z3::context &ctx, unsigned budgetMs);

// An incremental solver (Z3's SMT core, checked many times, with push/pop or
// assumptions), without limits: set them with setSolverBudget. It is the
// solver that answers every check of `z3::solver(ctx)` here (the combined
// solver's tactic half is switched off, combined_solver.ignore_solver1,
// SolverBudget.cpp), made directly: z3::solver(ctx) also builds, at its
// first assertion, the default strategy's tactic for the half it never
// uses, 6-18 ms a solver against under 1 for the whole of a small query on
// the shared dev box (2026-11-26). Not bit-for-bit the same: through the
// combined solver one least witness of the coverage proof comes out
// otherwise (tests/lit/bugs/coverage-persistent-step-int64-max.tile: C[128,
// 1048575] at N = 1048576 instead of C[0, 33792] at N = 33800), so the
// coverage proof keeps z3::solver(ctx); and the device-protocol queries of
// kernels/tp_gemm_bf16_sm90.tile, proved through it, ran out of `check`'s
// 10 s with this one (verifier/DeviceQueries.cpp keeps it, and so do the
// tensor-memory lanes and the symbolic layouts, unmeasured). The barrier
// proofs and the race check use this one: the same answers and witnesses
// on the reward golden (tests/reward/verdicts_test.py, 404 inputs); its
// first models differ, so a witness value past 64 bits (which the least-
// witness search leaves as found) differs: tests/lit/barriers/
// witness-past-64-bits.tile.
z3::solver incrementalSolver(z3::context &ctx);

} // namespace tilescope
