#include "reward/SizeRelations.h"
#include "reward/SimSizes.h"

#include "ir/ConcreteEval.h"
#include "ir/Visitor.h"
#include "ir/WhereFacts.h"

#include <algorithm>

namespace tilescope::reward_detail {
namespace {

LeafValue leafOf(const SizeAssignment &sizes) {
  return [&sizes](const Expr &e) -> std::optional<int64_t> {
    if (e->kind != ExprKind::Var)
      return std::nullopt;
    auto it = sizes.find(as<Var>(e).name);
    return it == sizes.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
}

// The where clause's definitions of the shape symbols among `symbols`.
std::map<std::string, Expr> definitionsOf(const Kernel &kernel,
                                         const std::vector<std::string> &symbols) {
  std::set<std::string> shape(symbols.begin(), symbols.end());
  std::map<std::string, Expr> out;
  for (auto &[name, value] : whereFacts(kernel).equal)
    if (shape.count(name))
      out.emplace(name, value);
  return out;
}

void defineFrom(const std::map<std::string, Expr> &definitions, SizeAssignment &sizes,
                bool overwrite) {
  // whereEqualities substitutes earlier definitions into later ones: each
  // definition reads free symbols only, so one pass computes them all.
  LeafValue leaf = leafOf(sizes);
  for (const auto &[name, value] : definitions) {
    if (!overwrite && sizes.count(name))
      continue;
    if (auto v = evalConcrete(value, leaf))
      sizes[name] = *v;
  }
}

// Beyond this a repair is no size anyone simulates.
constexpr int64_t kMaxRepaired = int64_t{1} << 31;

// The name and the least value that makes a false conjunct `c` hold, when
// `c` is `X % e == 0` (X rounded up to a multiple of e), `X >= e`, `X > e`,
// `e <= X` or `e < X` with X a name; nothing for any other form.
std::optional<std::pair<std::string, int64_t>> raiseToMeet(const Expr &c, const LeafValue &leaf) {
  if (c->kind != ExprKind::Binary)
    return std::nullopt;
  const auto &b = as<Binary>(c);
  auto name = [](const Expr &e) -> const std::string * {
    return e->kind == ExprKind::Var ? &as<Var>(e).name : nullptr;
  };
  auto value = [&](const Expr &e) { return evalConcrete(e, leaf); };
  if (b.op == BinaryOp::Eq) {
    for (const auto &[mod, zero] : {std::pair{b.lhs, b.rhs}, std::pair{b.rhs, b.lhs}}) {
      if (mod->kind != ExprKind::Binary || as<Binary>(mod).op != BinaryOp::Mod ||
          value(zero) != std::optional<int64_t>(0))
        continue;
      const std::string *x = name(as<Binary>(mod).lhs);
      auto now = value(as<Binary>(mod).lhs), d = value(as<Binary>(mod).rhs);
      if (!x || !now || !d || *d <= 0 || *d > kMaxRepaired)
        return std::nullopt;
      return std::pair{*x, std::max<int64_t>(1, (*now + *d - 1) / *d) * *d};
    }
    return std::nullopt;
  }
  // X >= e, X > e; e <= X, e < X: the name on the greater side.
  bool strict = b.op == BinaryOp::Gt || b.op == BinaryOp::Lt;
  const Expr *greater = nullptr, *lesser = nullptr;
  if (b.op == BinaryOp::Ge || b.op == BinaryOp::Gt) {
    greater = &b.lhs;
    lesser = &b.rhs;
  } else if (b.op == BinaryOp::Le || b.op == BinaryOp::Lt) {
    greater = &b.rhs;
    lesser = &b.lhs;
  } else {
    return std::nullopt;
  }
  const std::string *x = name(*greater);
  auto bound = value(*lesser);
  if (!x || !bound || *bound >= kMaxRepaired)
    return std::nullopt;
  return std::pair{*x, *bound + (strict ? 1 : 0)};
}

} // namespace

SizeRelations::SizeRelations(const Kernel &kernel, const BarrierSkeleton &sk,
                             const std::vector<std::string> &symbols)
    : sk_(sk), definitions_(definitionsOf(kernel, symbols)) {
  for (const std::string &s : symbols)
    if (!defined(s))
      free_.push_back(s);
  for (const Expr &c : kernel.constraints)
    splitConjuncts(c, relations_);
}

std::vector<std::string> SizeRelations::freeBehind(const std::set<std::string> &names) const {
  std::vector<std::string> out;
  auto add = [&out](const std::string &n) {
    if (std::find(out.begin(), out.end(), n) == out.end())
      out.push_back(n);
  };
  for (const std::string &n : names) {
    auto it = definitions_.find(n);
    if (it == definitions_.end()) {
      add(n);
      continue;
    }
    for (const std::string &behind : namesUsed(it->second))
      if (!defined(behind))
        add(behind);
  }
  return out;
}

void defineSymbols(const Kernel &kernel, SizeAssignment &sizes, bool overwrite) {
  defineFrom(definitionsOf(kernel, shapeSymbols(kernel)), sizes, overwrite);
}

void SizeRelations::define(SizeAssignment &sizes, bool overwrite) const {
  defineFrom(definitions_, sizes, overwrite);
}

bool SizeRelations::admits(SizeAssignment &trial, const std::string &varied) const {
  define(trial);
  std::string ignored;
  if (admittedSizes(sk_, trial, ignored))
    return true;
  for (int round = 0; round < 8; ++round) {
    bool repaired = false;
    LeafValue leaf = leafOf(trial);
    for (const Expr &c : relations_) {
      auto holds = evalConcrete(c, leaf);
      if (!holds || *holds)
        continue;
      auto fix = raiseToMeet(c, leaf);
      if (!fix || fix->first == varied || defined(fix->first))
        continue;
      auto it = trial.find(fix->first);
      if (it == trial.end() || fix->second <= it->second ||
          std::find(free_.begin(), free_.end(), fix->first) == free_.end())
        continue;
      it->second = fix->second;
      repaired = true;
      break;
    }
    if (!repaired)
      return false;
    define(trial);
    if (admittedSizes(sk_, trial, ignored))
      return true;
  }
  return false;
}

} // namespace tilescope::reward_detail
