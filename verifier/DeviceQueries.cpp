#include "verifier/DeviceQueries.h"

#include "proof/DivisionAbstraction.h"
#include "proof/LeastWitness.h"
#include "proof/SharedContext.h"
#include "proof/QueryDeadline.h"
#include "proof/SolverBudget.h"

#include <fmt/format.h>

namespace tilescope::detail {

DeviceAnswer askDevices(ProtoEncoder &enc, const DeviceUnknowns &u,
                        const std::vector<z3::expr> &facts, const z3::expr &violation,
                        const std::vector<z3::expr> &extra, const std::string &name,
                        unsigned budgetMs) {
  z3::context &ctx = enc.ctx();
  z3::solver s(ctx);
  z3::params p(ctx);
  setSolverBudget(p, budgetMs);
  s.set(p);
  // Divisions by a non-constant (t / tn, with tn = N / 256) as quotient and
  // remainder terms with their defining facts (exact, proof/
  // DivisionAbstraction.h): Z3 otherwise re-derives them in every query.
  DivisionAbstraction divisions(ctx, false);
  z3::expr_vector asserted(ctx);
  for (const z3::expr &f : enc.assumptions())
    asserted.push_back(divisions.rewrite(f));
  for (const z3::expr &f : facts)
    asserted.push_back(divisions.rewrite(f));
  asserted.push_back(divisions.rewrite(violation));
  s.add(asserted);
  s.add(divisions.definitionsFor(asserted));
  DeviceAnswer out;
  out.result = checkWithinBudget(s);
  if (out.result == z3::unknown)
    out.why = fmt::format("Z3 gave up ({})", reasonUnknown(s));
  if (out.result != z3::sat)
    return out;
  std::vector<z3::expr> small = {u.ndev, u.devid};
  for (const auto &[symbol, v] : enc.symbols())
    small.push_back(v);
  small.push_back(u.thread);
  small.insert(small.end(), extra.begin(), extra.end());
  z3::expr_vector lits(ctx);
  out.model = minimizeWitness(s, lits, small, name);
  return out;
}

std::string deviceWitness(const z3::model &m, const ProtoEncoder &enc, const Kernel &kernel,
                          const DeviceUnknowns &u,
                          const std::vector<std::pair<std::string, z3::expr>> &loops) {
  std::string out = fmt::format("N = {} devices, devid = {}", ProtoEncoder::text(m, u.ndev),
                                ProtoEncoder::text(m, u.devid));
  const Expr &count = kernel.launch.devices.front();
  for (const auto &[name, v] : enc.symbols())
    if (name != "ndev" && name != "devid" &&
        !(count->kind == ExprKind::Var && as<Var>(count).name == name))
      out += fmt::format(", {} = {}", name, ProtoEncoder::text(m, v));
  for (const auto &[name, v] : loops)
    out += fmt::format(", {} = {}", name, ProtoEncoder::text(m, v));
  return out;
}

DeviceWalker::DeviceWalker(const BarrierSkeleton &sk, std::string iterPrefix, bool anyStep)
    : ctx_(sharedContext()), enc_(ctx_, sk), iterPrefix_(std::move(iterPrefix)),
      anyStep_(anyStep) {}

void DeviceWalker::block(const Block &b) {
  for (const Stmt &s : b)
    stmt(s);
}

void DeviceWalker::stmt(const Stmt &s) {
  if (visit(s))
    return;
  switch (s->kind) {
  case StmtKind::Let: {
    const Let &l = as<Let>(s);
    reads(l.value, s->loc);
    if (auto v = value(l.value))
      bound_.insert_or_assign(l.name, *v);
    else
      bound_.erase(l.name); // later uses are beyond the encoding
    return;
  }
  case StmtKind::For: {
    const For &f = as<For>(s);
    reads(f.begin, s->loc);
    reads(f.end, s->loc);
    auto b = value(f.begin), e = value(f.end);
    auto step = f.step ? value(f.step) : std::optional<z3::expr>(ctx_.int_val(1));
    auto savedBound = bound_;
    size_t savedPath = path_.size(), savedInexact = inexact_.size();
    int64_t constantStep = 0;
    bool positive = !f.step || (step && step->is_numeral_i64(constantStep) && constantStep > 0);
    bool entered = b && e && step && (positive || anyStep_);
    if (entered) {
      z3::expr i = enc_.fresh(iterPrefix_ + f.var);
      z3::expr v = *b + i * *step;
      // i >= 0 is on the loop's path: with a non-negative start and a
      // positive step the loop variable is non-negative wherever it is
      // read, so divisions of it need no truncation cases (t / tn).
      if (positive && enc_.nonNegativeByForm(*b))
        v = enc_.known(v);
      path_.push_back(i >= 0 && v < *e);
      bound_.insert_or_assign(f.var, v);
      enterLoop(s, i, v);
      if (!positive)
        inexact_.push_back(fmt::format("the step of loop '{}' is not a positive constant", f.var));
    } else {
      bound_.erase(f.var);
      inexact_.push_back(loopBeyond(f));
    }
    block(f.body);
    if (entered)
      leaveLoop();
    bound_ = std::move(savedBound);
    path_.resize(savedPath, ctx_.bool_val(true));
    inexact_.resize(savedInexact);
    return;
  }
  case StmtKind::If: {
    const If &i = as<If>(s);
    reads(i.cond, s->loc);
    auto c = value(i.cond);
    for (bool taken : {true, false}) {
      auto savedBound = bound_;
      size_t savedPath = path_.size(), savedInexact = inexact_.size();
      if (c && c->is_bool())
        path_.push_back(taken ? *c : !*c);
      else
        inexact_.push_back(conditionBeyond(i));
      block(taken ? i.thenBody : i.elseBody);
      bound_ = std::move(savedBound);
      path_.resize(savedPath, ctx_.bool_val(true));
      inexact_.resize(savedInexact);
    }
    return;
  }
  default:
    return;
  }
}

} // namespace tilescope::detail

