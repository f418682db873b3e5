#include "verifier/CoverageDigits.h"

#include "ir/ThreadIndex.h"
#include "ir/Visitor.h"

#include <algorithm>
#include <map>

namespace tilescope::coverage {

Expr add(const Expr &a, const Expr &b) {
  return Binary::make(BinaryOp::Add, a, b);
}
Expr mul(const Expr &a, const Expr &b) {
  return Binary::make(BinaryOp::Mul, a, b);
}
Expr num(int64_t v) {
  return IntImm::make(v);
}

const char *blockName(int d) {
  const char *n[] = {"blockIdx.x", "blockIdx.y", "blockIdx.z"};
  return n[d];
}

std::optional<Digit> builtinDigit(BuiltinKind b) {
  switch (b) {
  case BuiltinKind::blockIdx_x:
  case BuiltinKind::blockIdx_y:
  case BuiltinKind::blockIdx_z:
    return Digit{blockName(int(b) - int(BuiltinKind::blockIdx_x)), num(1), nullptr};
  default:
    break;
  }
  // A thread digit (t / divisor) % modulus: weight divisor, below
  // divisor * modulus.
  if (auto m = threadIndexMap(b))
    return Digit{kThread, num(m->divisor), m->modulus ? num(m->divisor * m->modulus) : nullptr};
  return std::nullopt;
}

Linear scale(Linear l, int64_t c) {
  l.constant = mul(num(c), l.constant);
  for (auto &[coef, d] : l.terms)
    coef *= c;
  return l;
}

int64_t digitFloor(const Digit &d, const ThreadSet &threads) {
  if (d.var != kThread)
    return 0;
  auto L = constantValue(d.L);
  auto H = d.H ? constantValue(d.H) : std::optional<int64_t>(INT64_MAX);
  if (!L || !H || *L < 1)
    return 0;
  int64_t lo = INT64_MAX;
  for (int64_t t = 0; t < threads.launchThreads(); ++t)
    if (threads.contains(t))
      lo = std::min(lo, (*H == INT64_MAX ? t : t % *H) / *L);
  return lo == INT64_MAX ? 0 : lo;
}

void factorsOf(const Expr &e, std::vector<Expr> &out) {
  if (e->kind == ExprKind::Binary && as<Binary>(e).op == BinaryOp::Mul) {
    factorsOf(as<Binary>(e).lhs, out);
    factorsOf(as<Binary>(e).rhs, out);
    return;
  }
  out.push_back(e);
}
Expr productOf(const std::vector<Expr> &factors) {
  Expr p = num(1);
  for (const Expr &f : factors)
    p = mul(p, f);
  return p;
}

bool hasUnknown(const Expr &e, const std::set<std::string> &vars) {
  struct Finder : IRVisitor {
    const std::set<std::string> *vars;
    bool found = false;
    void visitVar(const Var &v) override { found = found || vars->count(v.name) > 0; }
    void visitBuiltin(const Builtin &) override { found = true; }
  } f;
  f.vars = &vars;
  f.visit(e);
  return f.found;
}

std::optional<int64_t> firstMemberOffset(const ThreadSet &threads, const Digit &lowest) {
  auto G = constantValue(lowest.L);
  if (!G || *G < 1)
    return std::nullopt;
  if (*G == 1)
    return 0;
  std::map<int64_t, int64_t> offsets; // group -> first member's offset
  for (int64_t t = 0; t < threads.launchThreads(); ++t)
    if (threads.contains(t) && !offsets.count(t / *G))
      offsets[t / *G] = t % *G;
  std::set<int64_t> distinct;
  for (const auto &[g, o] : offsets)
    distinct.insert(o);
  if (distinct.size() != 1)
    return std::nullopt;
  return *distinct.begin();
}

} // namespace tilescope::coverage
