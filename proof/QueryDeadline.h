// The active budget's deadlines over a Z3 query in flight.
//
// A query's own limit is its rlimit (proof/SolverBudget.h): deterministic,
// but counted in Z3's work units, not in time, and a query may run past the
// command's processor-time or wall-time budget by up to that limit (under
// AddressSanitizer, whose allocator slows Z3 down, by several times it). The
// budget's deadlines therefore stop a query in flight here: while
// checkWithinBudget() runs a check, a watcher thread of ours compares the
// calling thread's processor time and the wall clock with what the active
// budget had left when the check began, and once either has passed it
// interrupts that one solver (Z3_solver_interrupt: Z3 cancels the check in
// flight and undoes the cancellation when the check returns, so the solver
// and its context stay usable). The check then answers unknown and the
// budget is recorded as exceeded (noteSolverGaveUp reads it as the budget).
//
// The interrupt is not enough for every query: Z3 4.8.12 has a loop in the
// nonlinear arithmetic of its arithmetic theory that looks at neither the
// interrupt nor the rlimit (10.4 s of CPU under a 3 s budget). Two hard
// limits bound it (docs/robustness.md, "Hard deadlines for nonlinear
// queries"): by default a command ends itself as `budget` once a query runs
// a second of CPU past its deadline (OverrunExit, below), which costs nothing until
// it fires; with TILESCOPE_HARD_DEADLINE=1 (for library callers, which must
// not be ended) a query that may reach the loop (a product of two
// non-constant terms, a division or modulo by one) is checked first in a
// forked child process, killed at the deadline, and asked here only when
// the child finished, from the same state, with the same result.
//
// Z3's own "timeout" parameter is never used: Z3 4.8.12 runs it on a pool of
// timer threads that hands a timer's thread back to the pool when it fires,
// while the query it cancelled still holds that timer's mutex; the next timer
// taken from the pool then waits for that mutex, and a process sat for 36
// minutes at no CPU in a mutex inside the layout proofs (issue 16;
// docs/robustness.md). Nothing here starts a Z3 timer.
//
// Depends on ir/Budget.h, Z3 and POSIX (fork, poll, waitpid) only.
#pragma once

#include "ir/Budget.h"

#include <z3++.h>

#include <functional>
#include <string>

namespace tilescope {

// s.check() (with `assumptions`), stopped once the active budget's processor
// time or wall time runs out; without an active budget, or one without time
// limits, a plain check.
z3::check_result checkWithinBudget(z3::solver &s);
z3::check_result checkWithinBudget(z3::solver &s, const z3::expr_vector &assumptions);

// opt.check(), stopped the same way. Z3 4.8.12 offers no interruption of one
// optimizer, so this interrupts its whole context: `opt` must live in a
// context of its own, which is not used after an interrupted check (Z3 then
// cancels everything in it for good).
z3::check_result checkWithinBudget(z3::optimize &opt);

// The hard limit of a command-line run. While one lives, a check that runs
// on a second of the checking thread's processor time (or ten seconds of
// real time) past the deadline at which the watcher interrupted it, which only Z3's
// nonlinear loop does, ends the process: the budget is recorded as
// exceeded, `finish` (given that budget, called on the watcher's thread while the checking
// thread is still inside Z3) prints the command's budget result and returns
// its exit status, and the process _exits with it. For commands only: a
// library caller (the Python module, reward()) must not be ended, and has
// the child processes instead (TILESCOPE_HARD_DEADLINE=1). One at a time;
// TILESCOPE_HARD_DEADLINE=0 makes it do nothing.
class OverrunExit {
public:
  explicit OverrunExit(std::function<int(const Budget &)> finish);
  ~OverrunExit();
  OverrunExit(const OverrunExit &) = delete;
  OverrunExit &operator=(const OverrunExit &) = delete;

private:
  std::function<int(const Budget &)> finish_;
};

// Why the last check of `s` answered unknown: Z3's reason_unknown(), or
// "canceled" when the hard deadline stopped it in a child process (above),
// which leaves `s` itself as it was.
std::string reasonUnknown(const z3::solver &s);

} // namespace tilescope
