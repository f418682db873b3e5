// Internal to the barrier proofs and the static race check: integer
// expressions of the IR as Z3 terms, with the kernel's shape symbols as
// unknowns (>= 1, devid >= 0: ir/DeviceScale.h, leastValueOf; under the
// `where` clause) and loop variables bound to `begin + i * step` for an
// iteration index i. Exposes z3++.h: include it only
// from .cpp files, and catch z3::exception before it leaves a library.
//
// Division and remainder truncate toward zero, as the IR's do
// (proof/TruncatingDivision.h); on a dividend non-negative by its form they
// are Z3's own operators.
#pragma once

#include "sync/BarrierSkeleton.h"

#include "ir/ThreadIndex.h"
#include "proof/TruncatingDivision.h"

#include <z3++.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tilescope::detail {

// Thread t is in `set`: a disjunction of intervals of consecutive threads
// (a warpgroup is one constraint); nothing for an empty set.
std::optional<z3::expr> threadSetZ3(const ThreadSet &set, const z3::expr &t);

// The Z3 back end of the thread-index map (ir/ThreadIndex.h) over the
// thread index t.
inline z3::expr threadIndexZ3(ThreadIndexMap m, const z3::expr &t) {
  z3::expr v = m.divisor > 1 ? t / static_cast<int>(m.divisor) : t;
  return m.modulus ? z3::mod(v, static_cast<int>(m.modulus)) : v;
}
// Thread builtin b (kThreadBuiltins) of thread t; thread t's warp and
// warpgroup.
inline z3::expr threadBuiltinZ3(BuiltinKind b, const z3::expr &t) {
  return threadIndexZ3(*threadIndexMap(b), t);
}
inline z3::expr warpOfZ3(const z3::expr &t) {
  return threadBuiltinZ3(BuiltinKind::warpid, t);
}
inline z3::expr warpgroupOfZ3(const z3::expr &t) {
  return threadBuiltinZ3(BuiltinKind::wgid, t);
}

class ProtoEncoder {
public:
  ProtoEncoder(z3::context &ctx, const BarrierSkeleton &skeleton);

  z3::context &ctx() { return ctx_; }
  // The where clause and the ranges of the symbols.
  const z3::expr_vector &assumptions() const { return assumptions_; }
  // A fresh integer unknown.
  z3::expr fresh(const std::string &name);
  // `e` with the given names bound (loop variables, thread indices as
  // builtins are refused); nothing when `e` uses what Z3 cannot express here.
  std::optional<z3::expr> encode(const Expr &e, const std::map<std::string, z3::expr> &bound,
                                 const std::map<BuiltinKind, z3::expr> &builtins = {});
  // Adds assumptions() to a solver or an optimizer (both take `add`).
  template <class Solver> void assumeWhere(Solver &s) const {
    for (unsigned i = 0; i < assumptions_.size(); ++i)
      s.add(assumptions_[int(i)]);
  }
  // The value of a symbol or name in a model, for witnesses.
  const std::map<std::string, z3::expr> &symbols() const { return symbols_; }
  // The sum of the named symbols: what a search for the smallest admitted
  // sizes minimises.
  z3::expr symbolSum(const std::vector<std::string> &names) const;
  // The named symbols' values in `m`.
  std::map<std::string, int64_t> symbolValues(const z3::model &m,
                                              const std::vector<std::string> &names) const;
  // "K = 128, M = 128" for the symbols that appear in `names` (all when empty).
  std::string describeSymbols(const z3::model &m) const;
  // The value of `e` in `m` as an int64_t, for arithmetic on values that
  // fit (thread indices, small constants); 0 when it does not fit.
  static int64_t value(const z3::model &m, const z3::expr &e);
  // The exact value of `e` in `m` in decimal, for witnesses: Z3's integers
  // are unbounded, and a size or iteration past 64 bits prints whole
  // ("18446744073709551616"), never as 0.
  static std::string text(const z3::model &m, const z3::expr &e);

private:
  // The terms known non-negative (proof/TruncatingDivision.h): the symbols
  // (each at least leastValueOf >= 0 under assumptions()), and the encodings
  // of thread and CTA indices and of the loop variables whose loops start at
  // a non-negative value with a positive step (their values in any
  // iteration of the loop; a query that binds a loop variable to a value
  // outside its loop asks about no run of the kernel).
  NonNegativeConstant nonNegative() const;

public:
  // `e`, recorded as known non-negative: the caller guarantees e >= 0 in
  // every query that uses it (e.g. a loop variable's value start + i * step
  // with a non-negative start, a positive step and i >= 0 on the loop's
  // path). Its divisions then keep Z3's operators.
  z3::expr known(z3::expr e);
  bool nonNegativeByForm(const z3::expr &e) const;

private:

  z3::context &ctx_;
  std::map<std::string, z3::expr> symbols_;
  std::set<std::string> nonNegativeLoops_;
  std::vector<z3::expr> knownTerms_; // keeps the ids in knownIds_ alive
  std::set<unsigned> knownIds_;
  z3::expr_vector assumptions_;
  int fresh_ = 0;
};

} // namespace tilescope::detail
