// What a kernel's `where` clause ties together among its shape symbols, for
// the reward's size search (SimSizes.h) and the performance stage's sizes:
// * definitions: a symbol an equality sets from others (`KB == K / 128`,
//   `NB == (N + 127) / 128`, `N == 2 * M`, `2 * C == 2048`; found by
//   ir/WhereFacts.h whereEqualities) is computed from them, never searched
//   on its own. A search that changed K alone was rejected by `KB == K / 128`
//   (KB kept its old value), so the block-scaled GEMMs kept the solver's
//   huge M; with KB computed from K, K and KB move together.
// * relations a change of one symbol breaks in another: `X % e == 0`,
//   `X >= e`, `X > e` (either way round) with X a free symbol that is not
//   the one being changed: X is raised to the least value that meets it
//   (`M % N == 0` after N was raised: M up to the next multiple of N).
// A size is admitted only when every constraint of the clause holds at it
// (verifier/FallbackSizes.h admittedSizes): completing never admits what
// the clause rejects.
// Internal to reward/.
#pragma once

#include "ir/Stmt.h"
#include "sync/BarrierSkeleton.h"
#include "verifier/FallbackSizes.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace tilescope::reward_detail {

// Each shape symbol the where clause defines from others (`KB == K / 128`)
// computed at `sizes` where it can be: all of them (`overwrite`), or only
// those `sizes` lacks (a task's sizes need not spell KB out).
void defineSymbols(const Kernel &kernel, SizeAssignment &sizes, bool overwrite);

class SizeRelations {
public:
  // `symbols`: the shape symbols (SimSizes.h shapeSymbols).
  SizeRelations(const Kernel &kernel, const BarrierSkeleton &sk,
                const std::vector<std::string> &symbols);

  bool defined(const std::string &name) const { return definitions_.count(name) != 0; }
  // The shape symbols no equality defines: the ones a search varies.
  const std::vector<std::string> &free() const { return free_; }
  // The free symbols behind `names` (a defined name stands for the free
  // symbols of its definition), in order, each once.
  std::vector<std::string> freeBehind(const std::set<std::string> &names) const;

  // Every defined symbol computed from its definition (`overwrite`), or only
  // those `sizes` lacks.
  void define(SizeAssignment &sizes, bool overwrite = true) const;
  // `trial` completed (definitions computed; relations broken in a free
  // symbol other than `varied` repaired by raising it) and checked against
  // the where clause; `trial` holds the completed sizes.
  bool admits(SizeAssignment &trial, const std::string &varied = "") const;

private:
  const BarrierSkeleton &sk_;
  std::map<std::string, Expr> definitions_;
  std::vector<std::string> free_;
  std::vector<Expr> relations_; // the conjuncts of the where clause
};

} // namespace tilescope::reward_detail
