// The one derivation of barrier index patterns (how a barrier index or a
// pipeline stage moves with the iteration of its loop) that the barrier
// proofs (verifier/BarrierEncoding.cpp) and the static race check
// (racecheck/RaceOrderings.cpp) both ask. Two questions, one module:
//
//   elementPattern  the proofs': the element iteration i touches, the same
//                   for every thread, `(i + c) % S` or a constant c (from
//                   it the proofs count an event's rounds on an element,
//                   sync/BarrierPatterns.h);
//   threadPeriod    the race check's: after how many iterations a thread's
//                   index repeats (1 for an index constant per thread, S
//                   for one distinct within any S consecutive iterations
//                   and equal S iterations later), 0 when unknown.
//
// Both answer the shapes kernels write without a solver first
// (structuralPattern); where it answers nothing they ask Z3 through one
// query builder, IndexQueries: the index's term at an iteration, the loop's
// trip, fresh unknowns and the caller's solver. The proofs' builder encodes
// the index over the proof's thread and cluster context and decides in the
// prover's shared solver (its sample sizes, linear precheck and budget); the
// race check's binds the index to a symbolic thread of the CTA and decides
// with its one-shot-then-default solver, an undecided query counting as
// satisfiable. Each question asks the same queries, built in the same order,
// as the two fallbacks this module replaces, so that no verdict decided at
// the solver's limit moves (docs/architecture.md, "Barrier index patterns").
//
// Depends on sync/ and Z3 only.
#pragma once

#include "sync/BarrierPatterns.h"

#include <z3++.h>

#include <cstdint>
#include <memory>
#include <optional>

namespace tilescope {

// One query of the caller's solver: constraints, then a check.
class IndexQuery {
public:
  virtual ~IndexQuery() = default;
  virtual void add(const z3::expr &constraint) = 0;
  // sat, unsat or unknown under the caller's assumptions.
  virtual z3::check_result check() = 0;
  // The value of `e` in the model of a sat check.
  virtual int64_t value(const z3::expr &e) = 0;
};

// The query builder of one index.
class IndexQueries {
public:
  virtual ~IndexQueries() = default;
  virtual z3::context &ctx() = 0;
  virtual z3::expr fresh(const char *name) = 0;
  // For the per-thread question: the index reads `thread` as its thread
  // (the loop's bounds are encoded for it). False when they do not encode.
  virtual bool bindThread(const z3::expr &) { return false; }
  // The index at iteration `iteration` (0, 1, ... of its loop; outside a
  // loop, iteration 0 is the event's one execution), or nothing.
  virtual std::optional<z3::expr> indexAt(const z3::expr &iteration) = 0;
  // The loop's trip count, or nothing.
  virtual std::optional<z3::expr> trip() = 0;
  // Called once the index's terms are built, before the first query.
  virtual void beforeQueries() {}
  virtual std::unique_ptr<IndexQuery> query() = 0;
};

// The proofs' question for `index` of event `ev` over `period` elements;
// a pattern with ok = false when neither the structure nor the solver
// decides it.
IndexPattern elementPattern(IndexQueries &q, const BarrierSkeleton &sk, const SyncEvent &ev,
                            const Expr &index, int64_t period);

// The race check's question for the barrier index of event `ev` (in a loop)
// over an array of `size` elements: its period per thread, 0 when unknown.
int64_t threadPeriod(IndexQueries &q, const BarrierSkeleton &sk, const SyncEvent &ev, int64_t size);

} // namespace tilescope
