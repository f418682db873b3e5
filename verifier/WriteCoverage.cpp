#include "verifier/WriteCoverage.h"

#include "ir/ConcreteEval.h"
#include "ir/Printer.h"
#include "ir/ThreadIndex.h"
#include "ir/Visitor.h"
#include "proof/LeastWitness.h"
#include "proof/QueryDeadline.h"
#include "proof/SharedContext.h"
#include "sync/BarrierSkeleton.h"
#include "verifier/CoverageDigits.h"
#include "verifier/CoverageSearch.h"
#include "verifier/CoverageSolver.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace tilescope {
namespace {

using detail::ProtoEncoder;
using namespace coverage;

using Writer = StoreRef;

class Coverage {
public:
  Coverage(detail::CoverageSolver &z3s, const BarrierSkeleton &sk, const CoverageOptions &opt,
           std::set<std::string> floats)
      : sk_(sk), opt_(opt), ctx_(z3s.ctx), enc_(z3s.enc), solver_(z3s.solver),
        floats_(std::move(floats)) {}

  CoverageReport run() {
    std::map<std::string, std::vector<Writer>> outputs;
    for (const SyncEvent &e : sk_.events)
      for (const MemoryAccess &a : e.accesses)
        if (a.scope == MemScope::Global && a.write)
          outputs[a.buffer].push_back({&e, &a});
    for (const auto &[name, writers] : outputs) {
      try {
        proveTensor(name, writers);
      } catch (const z3::exception &e) {
        notProved(writers.front().event->loc, name, fmt::format("Z3 failed: {}", e.msg()));
      }
    }
    if (!report_.findings.empty())
      report_.method = "violated";
    else if (!report_.notProved.empty())
      report_.method = "not proved (" + report_.notProved.front().second + ")";
    return std::move(report_);
  }

private:
  void notProved(llvm::SMLoc loc, const std::string &tensor, const std::string &why) {
    report_.notProved.push_back({loc, fmt::format("write coverage of {}: {}", tensor, why)});
    report_.results.push_back(fmt::format("{}: not proved: {}", tensor, why));
  }

  // --- the digits of a region start ---

  std::set<std::string> loopVars(const SyncEvent &e) const {
    std::set<std::string> out;
    for (int l = e.loop; l >= 0; l = sk_.loops[size_t(l)].parent)
      out.insert(sk_.loops[size_t(l)].var);
    return out;
  }

  std::optional<Linear> linearize(const Expr &e, const std::set<std::string> &vars) const {
    if (!e)
      return std::nullopt;
    if (!hasUnknown(e, vars))
      return Linear{e, {}};
    auto single = [](const Linear &l) -> const Digit * {
      if (l.terms.size() != 1 || l.terms[0].first != 1 || constantValue(l.constant) != 0)
        return nullptr;
      return &l.terms[0].second;
    };
    switch (e->kind) {
    case ExprKind::Var:
      // A loop of one iteration: its variable is its start.
      if (auto it = single_.find(as<Var>(e).name); it != single_.end())
        return linearize(it->second, vars);
      return Linear{num(0), {{1, Digit{as<Var>(e).name, num(1), nullptr}}}};
    case ExprKind::Builtin: {
      BuiltinKind b = as<Builtin>(e).which;
      if (auto d = builtinDigit(b)) {
        // A thread digit whose weight is at least the CTA's thread count
        // (warpid in a one-warp CTA) is 0 in every thread.
        auto weight = constantValue(d->L);
        if (d->var == kThread && sk_.threads > 0 && weight && *weight >= sk_.threads)
          return Linear{num(0), {}};
        return Linear{num(0), {{1, *d}}};
      }
      // The rank in a cluster along its axis: blockIdx there modulo the
      // extent (clusters tile the grid); 0 along the other axes.
      int axis = int(b) - int(BuiltinKind::clusterCtaIdx_x);
      if (axis >= 0 && axis < 3 && !sk_.cluster.empty())
        if (auto shape = clusterShapeOf(sk_)) {
          if (axis != shape->axis)
            return Linear{num(0), {}};
          return Linear{num(0), {{1, Digit{blockName(axis), num(1), num(shape->extent)}}}};
        }
      return std::nullopt;
    }
    case ExprKind::Unary: {
      const Unary &u = as<Unary>(e);
      if (u.op != UnaryOp::Neg)
        return std::nullopt;
      auto l = linearize(u.operand, vars);
      if (!l)
        return std::nullopt;
      return scale(*l, -1);
    }
    case ExprKind::Binary: {
      const Binary &b = as<Binary>(e);
      switch (b.op) {
      case BinaryOp::Add:
      case BinaryOp::Sub: {
        auto l = linearize(b.lhs, vars), r = linearize(b.rhs, vars);
        if (!l || !r)
          return std::nullopt;
        if (b.op == BinaryOp::Sub)
          r = scale(*r, -1);
        l->constant = add(l->constant, r->constant);
        l->terms.insert(l->terms.end(), r->terms.begin(), r->terms.end());
        return l;
      }
      case BinaryOp::Mul: {
        auto cl = constantValue(b.lhs), cr = constantValue(b.rhs);
        if (!cl && !cr)
          return std::nullopt;
        auto l = linearize(cl ? b.rhs : b.lhs, vars);
        if (!l)
          return std::nullopt;
        return scale(*l, cl ? *cl : *cr);
      }
      case BinaryOp::Div: {
        if (hasUnknown(b.rhs, vars))
          return std::nullopt;
        auto l = linearize(b.lhs, vars);
        const Digit *d = l ? single(*l) : nullptr;
        if (!d)
          return std::nullopt;
        // floor(floor(v / L) / D) = floor(v / (L * D)) for positive L, D.
        Expr L = constantValue(d->L) == 1 ? b.rhs : mul(d->L, b.rhs);
        return Linear{num(0), {{1, Digit{d->var, L, d->H}}}};
      }
      case BinaryOp::Mod: {
        if (hasUnknown(b.rhs, vars))
          return std::nullopt;
        auto l = linearize(b.lhs, vars);
        const Digit *d = l ? single(*l) : nullptr;
        if (!d || d->H)
          return std::nullopt;
        // (v / L) % H = (v % (L * H)) / L.
        Expr H = constantValue(d->L) == 1 ? b.rhs : mul(d->L, b.rhs);
        return Linear{num(0), {{1, Digit{d->var, d->L, H}}}};
      }
      default:
        return std::nullopt;
      }
    }
    default:
      return std::nullopt;
    }
  }

  // Whether `loop` runs exactly one iteration wherever it runs: its end is
  // its start plus a constant in [1, step] (`for t in blockIdx.x ..
  // blockIdx.x + 1`, `for j in 0 .. 1`).
  bool singleIteration(const SkeletonLoop &loop) const {
    auto step = constantValue(loop.step);
    auto b = linearize(loop.begin, {}), e = linearize(loop.end, {});
    if (!step || !b || !e || b->terms.size() != e->terms.size())
      return false;
    for (size_t i = 0; i < b->terms.size(); ++i)
      if (b->terms[i].first != e->terms[i].first ||
          b->terms[i].second.key() != e->terms[i].second.key())
        return false;
    auto diff = constantValue(Binary::make(BinaryOp::Sub, e->constant, b->constant));
    return diff && *diff >= 1 && *diff <= *step;
  }

  // --- one store's candidate executor for the element x ---

  struct Candidate {
    z3::expr_vector conditions;             // together: the executor exists and writes x
    std::map<std::string, z3::expr> digits; // by Digit::key
    std::map<std::string, z3::expr> bound;  // loop variable values
    std::map<BuiltinKind, z3::expr> builtins;
    explicit Candidate(z3::context &c) : conditions(c) {}
  };

  std::optional<z3::expr> encode(const Expr &e, const Candidate &c) {
    return enc_.encode(e, c.bound, c.builtins);
  }

  // An integer expression of the store at the candidate: from its digits
  // where it is linear in digits the candidate has, else encoded exactly.
  std::optional<z3::expr> valueOf(const Expr &e, const Candidate &c,
                                  const std::set<std::string> &vars) {
    if (auto l = linearize(e, vars)) {
      bool all = true;
      for (const auto &[coef, d] : l->terms)
        all = all && c.digits.count(d.key());
      auto k = enc_.encode(l->constant, {});
      if (all && k && k->is_int()) {
        z3::expr v = *k;
        for (const auto &[coef, d] : l->terms)
          detail::replaceKeeping(v, v + ctx_.int_val(coef) * c.digits.at(d.key()));
        return v;
      }
    }
    return encode(e, c);
  }

  std::optional<z3::expr> condition(const Expr &e, const Candidate &c,
                                    const std::set<std::string> &vars) {
    if (e->kind == ExprKind::Binary) {
      const Binary &b = as<Binary>(e);
      auto both = [&]() -> std::optional<std::pair<z3::expr, z3::expr>> {
        auto l = valueOf(b.lhs, c, vars), r = valueOf(b.rhs, c, vars);
        if (!l || !r || !l->is_int() || !r->is_int())
          return std::nullopt;
        return std::pair{*l, *r};
      };
      switch (b.op) {
      case BinaryOp::Lt:
        if (auto p = both())
          return p->first < p->second;
        break;
      case BinaryOp::Le:
        if (auto p = both())
          return p->first <= p->second;
        break;
      case BinaryOp::Gt:
        if (auto p = both())
          return p->first > p->second;
        break;
      case BinaryOp::Ge:
        if (auto p = both())
          return p->first >= p->second;
        break;
      case BinaryOp::Eq:
        if (auto p = both())
          return p->first == p->second;
        break;
      case BinaryOp::Ne:
        if (auto p = both())
          return p->first != p->second;
        break;
      case BinaryOp::And:
      case BinaryOp::Or: {
        auto l = condition(b.lhs, c, vars), r = condition(b.rhs, c, vars);
        if (l && r)
          return b.op == BinaryOp::And ? *l && *r : *l || *r;
        break;
      }
      default:
        break;
      }
    }
    auto v = encode(e, c);
    if (v && v->is_bool())
      return v;
    return std::nullopt;
  }

  // exact: the existence conditions as they are, without the sufficient
  // forms that keep products of symbols out of the fast query.
  std::optional<Candidate> candidate(const Writer &w, const std::vector<z3::expr> &x, bool exact) {
    const SyncEvent &ev = *w.event;
    std::set<std::string> vars = loopVars(ev);
    // The variables of this store's one-iteration loops stand for their
    // start: their digits are those of the start (a CTA index, a constant).
    // A candidate only; the loop's conditions below still hold it to its
    // range.
    single_.clear();
    for (int l : sk_.loopChain(ev))
      if (singleIteration(sk_.loops[size_t(l)]))
        single_[sk_.loops[size_t(l)].var] = sk_.loops[size_t(l)].begin;
    Candidate c(ctx_);
    std::map<std::string, std::vector<Digit>> byVar;
    // Digits of each dimension, read off x_d - const.
    for (size_t d = 0; d < w.access->region.size() && d < x.size(); ++d) {
      auto l = linearize(w.access->region[d].begin, vars);
      if (!l)
        return std::nullopt;
      auto k = enc_.encode(l->constant, {});
      if (!k || !k->is_int())
        return std::nullopt;
      auto terms = l->terms;
      std::sort(terms.begin(), terms.end(),
                [](const auto &a, const auto &b) { return a.first > b.first; });
      z3::expr rest = x[d] - *k;
      for (const auto &[coef, digit] : terms)
        detail::replaceKeeping(rest, rest - ctx_.int_val(coef * digitFloor(digit, ev.threads)));
      // A reversed index, one digit of a negative coefficient (`(n - 1 -
      // blockIdx.x) * 128`): x_d - const = coef * v + r with 0 <= r < -coef
      // when the region is at most -coef long, so v = ceil((const - x_d) /
      // -coef). A candidate like the others: Z3 still checks its region.
      // Smaller positive digits beside it (`... * 128 + (wgid - 1) * 64`, a
      // warpgroup's rows of the tile) are read off r as below.
      if (!terms.empty() && terms.back().first < 0 &&
          (terms.size() == 1 || (terms[terms.size() - 2].first > 0 &&
                                 terms.front().first < -terms.back().first)) &&
          digitFloor(terms.back().second, ev.threads) == 0) {
        int64_t m = -terms.back().first;
        z3::expr value = (ctx_.int_val(m - 1) - rest) / ctx_.int_val(m);
        if (c.digits.emplace(terms.back().second.key(), value).second)
          byVar[terms.back().second.var].push_back(terms.back().second);
        terms.pop_back();
        if (terms.empty())
          continue;
        detail::replaceKeeping(rest, rest + ctx_.int_val(m) * value);
      }
      for (size_t i = 0; i < terms.size(); ++i) {
        int64_t coef = terms[i].first;
        if (coef <= 0 || (i > 0 && coef == terms[i - 1].first))
          return std::nullopt;
        const Digit &digit = terms[i].second;
        z3::expr value = rest / ctx_.int_val(coef) + ctx_.int_val(digitFloor(digit, ev.threads));
        detail::replaceKeeping(rest, z3::mod(rest, ctx_.int_val(coef)));
        if (c.digits.emplace(digit.key(), value).second)
          byVar[digit.var].push_back(digit);
      }
    }
    // Each variable put back together from its digits: v = sum a_k L_k
    // (+ the offset of a thread inside its group), with the facts that make
    // every digit of that v the value read off.
    std::map<std::string, z3::expr> value;
    // Per variable, its top digit and place when it has no upper place:
    // the value is below (top + 1) * place.
    std::map<std::string, std::pair<z3::expr, Expr>> top;
    for (auto &[var, digits] : byVar) {
      std::sort(digits.begin(), digits.end(), [](const Digit &a, const Digit &b) {
        auto la = constantValue(a.L), lb = constantValue(b.L);
        if (la && lb)
          return *la < *lb;
        return la.has_value() && !lb.has_value();
      });
      z3::expr v = ctx_.int_val(0);
      for (size_t k = 0; k < digits.size(); ++k) {
        const Digit &dg = digits[k];
        auto L = enc_.encode(dg.L, {});
        if (!L || !L->is_int())
          return std::nullopt;
        z3::expr a = c.digits.at(dg.key());
        c.conditions.push_back(*L >= 1 && a >= 0);
        if (dg.H) {
          auto H = enc_.encode(dg.H, {});
          if (!H || !H->is_int())
            return std::nullopt;
          c.conditions.push_back((a + 1) * *L <= *H);
        }
        if (k + 1 < digits.size()) {
          if (!dg.H)
            return std::nullopt;
          auto H = enc_.encode(dg.H, {}), next = enc_.encode(digits[k + 1].L, {});
          if (!next || !next->is_int())
            return std::nullopt;
          c.conditions.push_back(*H == *next && z3::mod(*next, *L) == 0);
        }
        detail::replaceKeeping(v, v + a * *L);
        if (k + 1 == digits.size() && !dg.H)
          top.emplace(var, std::pair{a, dg.L});
      }
      if (var == kThread) {
        auto low = firstMemberOffset(ev.threads, digits.front());
        if (!low)
          return std::nullopt;
        detail::replaceKeeping(v, v + ctx_.int_val(*low));
      }
      value.emplace(var, v);
    }
    // The thread: the one put together, or the first executing the store.
    if (!value.count(kThread)) {
      int64_t first = -1;
      for (int64_t t = 0; t < ev.threads.launchThreads() && first < 0; ++t)
        if (ev.threads.contains(t))
          first = t;
      if (first < 0)
        return std::nullopt;
      value.emplace(kThread, ctx_.int_val(first));
    }
    z3::expr t = value.at(kThread);
    c.conditions.push_back(threadMember(ev.threads, t));
    for (BuiltinKind k : kThreadBuiltins)
      c.builtins.emplace(k, detail::threadBuiltinZ3(k, t));
    // Loops outermost first; a CTA index no region reads comes from a loop
    // starting at it (`for t in blockIdx.x .. tiles step 132`).
    std::vector<int> chain = sk_.loopChain(ev);
    std::array<std::optional<z3::expr>, 3> block;
    // CTA indices derived from a loop `for v in blockIdx + c .. end step s`
    // as (v - c) mod s: that loop and dimension, c and s. In a cluster of L
    // CTAs whose tile loop is `for v in blockIdx / L + c .. end step s` (the
    // CTAs of a cluster share its tiles), blockIdx is ((v - c) mod s) * L
    // plus the rank, blockIdx % L, read off the region (its one digit there):
    // then `per` is L.
    struct FromLoop {
      int loop;
      z3::expr first;
      int64_t step;
      int64_t per = 1;
    };
    std::array<std::optional<FromLoop>, 3> fromLoop;
    for (int d = 0; d < 3; ++d)
      if (auto it = value.find(blockName(d)); it != value.end())
        block[size_t(d)] = it->second;
    for (int l : chain) {
      const SkeletonLoop &loop = sk_.loops[size_t(l)];
      auto it = value.find(loop.var);
      if (it == value.end())
        continue;
      auto begin = linearize(loop.begin, {});
      auto step = constantValue(loop.step);
      if (!begin || !step || *step < 1 || begin->terms.size() != 1 || begin->terms[0].first != 1 ||
          begin->terms[0].second.H)
        continue;
      auto per = constantValue(begin->terms[0].second.L);
      if (!per || *per < 1)
        continue;
      const std::string &var = begin->terms[0].second.var;
      for (int d = 0; d < 3; ++d) {
        if (var != blockName(d))
          continue;
        // With per > 1, the region must hold exactly the rank, blockIdx % per.
        std::optional<z3::expr> low;
        if (*per > 1) {
          auto digits = byVar.find(var);
          if (digits == byVar.end() || digits->second.size() != 1 ||
              constantValue(digits->second[0].L) != 1 || !digits->second[0].H ||
              constantValue(digits->second[0].H) != *per)
            continue;
          low = c.digits.at(digits->second[0].key());
        } else if (block[size_t(d)]) {
          continue;
        }
        if (auto k = enc_.encode(begin->constant, {}); k && k->is_int()) {
          z3::expr b = z3::mod(it->second - *k, ctx_.int_val(*step));
          block[size_t(d)] = low ? b * ctx_.int_val(*per) + *low : b;
          fromLoop[size_t(d)] = FromLoop{l, *k, *step, *per};
        }
      }
    }
    const BuiltinKind blockKinds[] = {BuiltinKind::blockIdx_x, BuiltinKind::blockIdx_y,
                                      BuiltinKind::blockIdx_z};
    for (int d = 0; d < 3; ++d) {
      z3::expr b = block[size_t(d)] ? *block[size_t(d)] : ctx_.int_val(0);
      c.builtins.emplace(blockKinds[d], b);
      c.digits.emplace(Digit{blockName(d), num(1), nullptr}.key(), b);
      z3::expr extent = ctx_.int_val(1);
      if (size_t(d) < sk_.grid.size()) {
        auto g = enc_.encode(sk_.grid[size_t(d)], {});
        if (!g || !g->is_int())
          return std::nullopt;
        extent = *g;
      }
      // A CTA index (v - c) mod s lies in [0, s): inside the grid when s
      // is at most its extent (no remainder of a product of symbols).
      if (fromLoop[size_t(d)] && !exact) {
        c.conditions.push_back(
            ctx_.int_val(fromLoop[size_t(d)]->step * fromLoop[size_t(d)]->per) <= extent);
        continue;
      }
      // A CTA index put together from digits is non-negative; it is inside
      // a grid extent that is a product of symbols through its top digit,
      // as for loop ends (`b < tm * tn` as `b / tn + 1 <= tm`).
      if (auto tp = top.find(blockName(d));
          !exact && tp != top.end() && size_t(d) < sk_.grid.size())
        if (auto below = topBelow(tp->second.first, tp->second.second, sk_.grid[size_t(d)], c)) {
          c.conditions.push_back(b >= 0 && *below);
          continue;
        }
      c.conditions.push_back(b >= 0 && b < extent);
    }
    if (!sk_.cluster.empty()) {
      auto shape = clusterShapeOf(sk_);
      if (!shape)
        return std::nullopt;
      const BuiltinKind rank[] = {BuiltinKind::clusterCtaIdx_x, BuiltinKind::clusterCtaIdx_y,
                                  BuiltinKind::clusterCtaIdx_z};
      c.builtins.emplace(rank[shape->axis], z3::mod(c.builtins.at(blockKinds[shape->axis]),
                                                    ctx_.int_val(shape->extent)));
    }
    for (int l : chain) {
      const SkeletonLoop &loop = sk_.loops[size_t(l)];
      auto begin = encode(loop.begin, c), end = encode(loop.end, c), step = encode(loop.step, c);
      if (!begin || !end || !step || !begin->is_int() || !end->is_int() || !step->is_int())
        return std::nullopt;
      auto it = value.find(loop.var);
      z3::expr v = it != value.end() ? it->second : *begin;
      // v < end through the top digit when there is one: (top + 1) * place
      // <= end implies it (the lower digits stay below the place), and
      // keeps a product of symbols out of the sum (`t < tn * tm` for
      // t = t / tn * tn + t % tn is `t / tn + 1 <= tm`, which Z3 decides
      // at once).
      z3::expr below = v < *end;
      if (auto tp = top.find(loop.var); tp != top.end() && !exact)
        if (auto b = topBelow(tp->second.first, tp->second.second, loop.end, c))
          below = *b;
      // With the CTA index derived from this loop, v >= begin and v on
      // the loop's step hold by construction once v >= c: v is a sum of
      // non-negative digits times places of at least 1 (the conditions
      // above), so c <= 0 is enough.
      const FromLoop *derived = nullptr;
      for (const auto &f : fromLoop)
        if (f && f->loop == l)
          derived = &*f;
      if (derived && it != value.end() && !exact)
        c.conditions.push_back(derived->first <= 0 && below);
      else
        c.conditions.push_back(*step >= 1 && v >= *begin && below &&
                               z3::mod(v - *begin, *step) == 0);
      c.bound.emplace(loop.var, v);
      c.digits.emplace(Digit{loop.var, num(1), nullptr}.key(), v);
    }
    std::vector<Expr> guards = ev.allGuards();
    for (const Expr &g : guards) {
      auto e = condition(g, c, vars);
      if (!e)
        return std::nullopt;
      c.conditions.push_back(*e);
    }
    for (size_t d = 0; d < w.access->region.size() && d < x.size(); ++d) {
      auto lo = valueOf(w.access->region[d].begin, c, vars),
           n = valueOf(w.access->region[d].extent, c, vars);
      if (!lo || !n || !lo->is_int() || !n->is_int())
        return std::nullopt;
      c.conditions.push_back(*lo <= x[d] && x[d] < *lo + *n);
    }
    return c;
  }

  // (top + 1) * place <= end, with a factor that place and end share
  // cancelled (`(t / tn + 1) * tn <= tn * tm` as `t / tn + 1 <= tm`, given
  // tn >= 0), so that no product of unknowns is left where one can go.
  std::optional<z3::expr> topBelow(const z3::expr &top, const Expr &place, const Expr &end,
                                   const Candidate &c) {
    std::vector<Expr> p, e;
    factorsOf(place, p);
    factorsOf(end, e);
    z3::expr_vector facts(ctx_);
    for (size_t i = 0; i < p.size(); ++i) {
      if (constantValue(p[i]))
        continue;
      for (size_t j = 0; j < e.size(); ++j)
        if (print(p[i]) == print(e[j])) {
          auto f = encode(p[i], c);
          if (!f || !f->is_int())
            return std::nullopt;
          facts.push_back(*f >= 0);
          p.erase(p.begin() + long(i));
          e.erase(e.begin() + long(j));
          --i;
          break;
        }
    }
    auto lhs = encode(productOf(p), c), rhs = encode(productOf(e), c);
    if (!lhs || !rhs || !lhs->is_int() || !rhs->is_int())
      return std::nullopt;
    facts.push_back((top + 1) * *lhs <= *rhs);
    return z3::mk_and(facts);
  }

  z3::expr threadMember(const ThreadSet &set, const z3::expr &t) {
    auto member = detail::threadSetZ3(set, t);
    return member ? *member : ctx_.bool_val(false);
  }

  // --- one tensor ---

  // An element no store's candidate executor writes, at sizes Z3 chose.
  struct Uncovered {
    std::map<std::string, int64_t> sizes;
    std::vector<int64_t> element;
    std::string sizesText, elementText;
  };

  // The least element (then sizes) no candidate writes; nothing when there
  // is none (why stays empty: proved) or Z3 gave up (why says so).
  std::optional<Uncovered> uncovered(const std::string &name, const std::vector<Writer> &writers,
                                     const std::vector<z3::expr> &x, const z3::expr_vector &bounds,
                                     bool exact, std::string &why) {
    detail::SolverScope scope(solver_);
    z3::solver &s = solver_;
    s.add(bounds);
    for (const Writer &w : writers)
      if (w.access->region.size() == x.size())
        if (auto c = candidate(w, x, exact))
          s.add(!z3::mk_and(c->conditions));
    z3::check_result r = checkWithinBudget(s);
    if (r == z3::unsat)
      return std::nullopt;
    if (r == z3::unknown) {
      why = fmt::format("Z3 gave up ({})", reasonUnknown(s));
      return std::nullopt;
    }
    z3::expr_vector lits(ctx_);
    std::vector<z3::expr> small(x.begin(), x.end());
    for (const std::string &sym : sk_.symbols)
      if (auto it = enc_.symbols().find(sym); it != enc_.symbols().end() && !floats_.count(sym))
        small.push_back(it->second);
    z3::model m =
        detail::minimizeWitness(s, lits, small, fmt::format("coverage!{}!{}", name, int(exact)));
    // Sizes and indices are 64-bit integers in the kernel: a witness past
    // that (Z3 reasons over unbounded integers) names no launch, and reading
    // it as 0 once made a search at N = 0 report C[0, 0] unwritten. Such a
    // witness is asked for again inside 64 bits; none there: every launch is
    // covered.
    auto past64 = [&](const z3::model &mm) -> std::optional<std::string> {
      for (const z3::expr &v : small) {
        int64_t fits = 0;
        if (!mm.eval(v, true).is_numeral_i64(fits))
          return fmt::format("{} = {}", v.to_string(), mm.eval(v, true).to_string());
      }
      return std::nullopt;
    };
    if (past64(m)) {
      // Inside 2^20 first, for a witness the concrete search can run; then
      // 2^40; only no element inside 64 bits proves the coverage.
      bool found = false;
      std::optional<detail::SolverScope> inside; // popped before `scope`
      for (int64_t limit :
           {int64_t(1) << 20, int64_t(1) << 40, std::numeric_limits<int64_t>::max()}) {
        inside.emplace(s);
        for (const z3::expr &v : small)
          s.add(v <= ctx_.int_val(limit) && v >= ctx_.int_val(-limit));
        z3::check_result again = checkWithinBudget(s);
        if (again == z3::unsat) {
          inside.reset();
          continue;
        }
        if (again == z3::unknown) {
          why = fmt::format("Z3 gave up ({}) on an uncovered element inside 64 bits",
                            reasonUnknown(s));
          return std::nullopt;
        }
        m = detail::minimizeWitness(s, lits, small,
                                    fmt::format("coverage!{}!{}!{}", name, int(exact), limit));
        found = true;
        break;
      }
      if (!found)
        return std::nullopt; // no uncovered element inside 64 bits
      if (auto still = past64(m)) {
        why = fmt::format("Z3's uncovered element needs {}, past 64 bits", *still);
        return std::nullopt;
      }
    }
    Uncovered u;
    for (const std::string &sym : sk_.symbols)
      if (auto it = enc_.symbols().find(sym); it != enc_.symbols().end() && !floats_.count(sym)) {
        u.sizes[sym] = ProtoEncoder::value(m, it->second);
        u.sizesText += fmt::format("{}{} = {}", u.sizesText.empty() ? "" : ", ", sym, u.sizes[sym]);
      }
    u.elementText = name + "[";
    for (size_t d = 0; d < x.size(); ++d) {
      u.element.push_back(ProtoEncoder::value(m, x[d]));
      u.elementText += fmt::format("{}{}", d ? ", " : "", u.element.back());
    }
    u.elementText += "]";
    return u;
  }

  void proveTensor(const std::string &name, const std::vector<Writer> &writers) {
    llvm::SMLoc at = writers.front().event->loc;
    if (!sk_.unsupported.empty()) {
      notProved(at, name, "the skeleton does not model every statement");
      return;
    }
    auto buf = sk_.buffers.find(name);
    if (buf == sk_.buffers.end()) {
      notProved(at, name, "its shape is unknown");
      return;
    }
    std::vector<z3::expr> x;
    z3::expr_vector bounds(ctx_);
    for (size_t d = 0; d < buf->second.shape.size(); ++d) {
      auto extent = enc_.encode(buf->second.shape[d], {});
      if (!extent || !extent->is_int()) {
        notProved(at, name, "its shape is not an integer expression of the sizes");
        return;
      }
      x.push_back(enc_.fresh(fmt::format("{}_{}", name, d)));
      bounds.push_back(x.back() >= 0 && x.back() < *extent);
    }
    // Every size fixed (no shape symbol): the one run decides, element by
    // element.
    bool fixedSizes = std::all_of(sk_.symbols.begin(), sk_.symbols.end(),
                                  [&](const std::string &n) { return floats_.count(n) > 0; });
    if (fixedSizes) {
      coverConcretely(name, writers, at, buf->second.shape);
      return;
    }
    // The fast query first; where its element is written after all (a
    // sufficient form did not hold there), the exact one.
    std::string why;
    std::optional<Uncovered> first;
    for (bool exact : {false, true}) {
      std::string prior = std::move(why);
      why.clear();
      auto u = uncovered(name, writers, x, bounds, exact, why);
      if (!u) {
        if (!prior.empty() && !why.empty())
          why = prior + "; the exact query: " + why;
        if (why.empty()) {
          report_.results.push_back(
              fmt::format("{}: proved for all sizes: every element is written by some CTA and "
                          "iteration",
                          name));
          return;
        }
        break;
      }
      std::optional<bool> written = writtenConcretely(writers, u->sizes, u->element);
      if (!written) {
        why = fmt::format("the stores' regions could not be inverted, and searching for a "
                          "writer of {} at {} took over {} steps",
                          u->elementText, u->sizesText, opt_.searchCap);
        break;
      }
      if (!*written) {
        first = std::move(u);
        break;
      }
      why = fmt::format("the stores' regions could not be inverted (at {}, {} is written)",
                        u->sizesText, u->elementText);
    }
    if (!first) {
      notProved(at, name, why);
      return;
    }
    unwritten(name, writers, at, first->elementText, first->sizesText);
  }

  // A kernel without shape symbols: every element of the output marked by
  // the writes of every executor of the one launch.
  void coverConcretely(const std::string &name, const std::vector<Writer> &writers, llvm::SMLoc at,
                       const std::vector<Expr> &shape) {
    std::vector<int64_t> extent;
    int64_t elements = 1;
    for (const Expr &e : shape) {
      auto v = evalConcrete(e, [](const Expr &) { return std::nullopt; });
      if (!v || *v < 0 || elements > (int64_t(1) << 24) / std::max<int64_t>(*v, 1)) {
        notProved(at, name, "its shape is not a small constant");
        return;
      }
      extent.push_back(*v);
      elements *= *v;
    }
    std::vector<bool> written(size_t(elements), false);
    size_t marks = 0;
    bool tooMany = false;
    auto done = forEachWrite(sk_, writers, {}, extent.size(), opt_.searchCap,
                             [&](const std::vector<std::pair<int64_t, int64_t>> &box) {
                               // Mark the box, clipped to the tensor.
                               std::vector<int64_t> at(extent.size());
                               for (size_t d = 0; d < extent.size(); ++d) {
                                 at[d] = std::max<int64_t>(box[d].first, 0);
                                 if (at[d] >= std::min(box[d].second, extent[d]))
                                   return false;
                               }
                               while (true) {
                                 int64_t flat = 0;
                                 for (size_t d = 0; d < extent.size(); ++d)
                                   flat = flat * extent[d] + at[d];
                                 written[size_t(flat)] = true;
                                 if (++marks > opt_.searchCap) {
                                   tooMany = true;
                                   return true;
                                 }
                                 size_t d = extent.size();
                                 while (d > 0) {
                                   --d;
                                   if (++at[d] < std::min(box[d].second, extent[d]))
                                     break;
                                   at[d] = std::max<int64_t>(box[d].first, 0);
                                   if (d == 0)
                                     return false;
                                 }
                                 if (extent.empty())
                                   return false;
                               }
                             });
    if (!done || tooMany) {
      notProved(at, name,
                fmt::format("its writes could not be enumerated within {} steps", opt_.searchCap));
      return;
    }
    auto gap = std::find(written.begin(), written.end(), false);
    if (gap == written.end()) {
      report_.results.push_back(
          fmt::format("{}: proved: every element is written (the sizes are constants)", name));
      return;
    }
    int64_t flat = gap - written.begin();
    std::vector<int64_t> element(extent.size());
    for (size_t d = extent.size(); d-- > 0;) {
      element[d] = flat % extent[d];
      flat /= extent[d];
    }
    std::string text = name + "[";
    for (size_t d = 0; d < element.size(); ++d)
      text += fmt::format("{}{}", d ? ", " : "", element[d]);
    text += "]";
    unwritten(name, writers, at, text, "");
  }

  void unwritten(const std::string &name, const std::vector<Writer> &writers, llvm::SMLoc at,
                 const std::string &elementText, const std::string &sizesText) {
    CoverageFinding f;
    f.loc = at;
    f.message = fmt::format("write coverage: no CTA, iteration or thread writes {} of the output "
                            "{}{}: the stores into {} leave it unwritten",
                            elementText, name,
                            sizesText.empty() ? "" : fmt::format(" (for {})", sizesText), name);
    for (const Writer &w : writers)
      f.notes.push_back({w.event->loc, fmt::format("{} writes {} here", w.event->what, name)});
    report_.findings.push_back(std::move(f));
    report_.results.push_back(fmt::format("{}: violated: {} is never written", name, elementText));
  }

  // Whether some executor of some store writes `element` at `sizes`;
  // nothing past the search cap or where a value does not evaluate.
  std::optional<bool> writtenConcretely(const std::vector<Writer> &writers,
                                        const std::map<std::string, int64_t> &sizes,
                                        const std::vector<int64_t> &element) {
    return forEachWrite(sk_, writers, sizes, element.size(), opt_.searchCap,
                        [&](const std::vector<std::pair<int64_t, int64_t>> &box) {
                          for (size_t d = 0; d < element.size(); ++d)
                            if (element[d] < box[d].first || element[d] >= box[d].second)
                              return false;
                          return true;
                        });
  }

  const BarrierSkeleton &sk_;
  // The one-iteration loops of the store being inverted: variable -> start.
  std::map<std::string, Expr> single_;
  CoverageOptions opt_;
  z3::context &ctx_;
  ProtoEncoder &enc_;
  z3::solver &solver_; // the kernel's, shared with the bounds proof
  CoverageReport report_;
  std::set<std::string> floats_; // float scalar parameters: no size
};

} // namespace

CoverageReport proveWriteCoverage(const Kernel &kernel, const CoverageOptions &options) {
  BarrierSkeleton sk = extractBarrierSkeleton(kernel);
  std::set<std::string> floats;
  for (const Param &p : kernel.params)
    if (!p.isTensor && isFloat(p.dtype))
      floats.insert(p.name);
  requireSolverContext();
  detail::CoverageSolver z3s(sk, options.timeoutMs);
  CoverageReport report = Coverage(z3s, sk, options, floats).run();
  // The other obligation on the kernel's accesses (GlobalBounds.h).
  if (sk.unsupported.empty())
    detail::proveGlobalBounds(z3s, sk, floats, report);
  else if (report.notProved.empty() && report.findings.empty()) {
    report.notProved.push_back({sk.unsupported.front().first,
                                "bounds of the global accesses: the skeleton does not model "
                                "every statement"});
    report.method = "not proved (" + report.notProved.front().second + ")";
  }
  return report;
}

unsigned reportWriteCoverage(const CoverageReport &report, Diagnostics &diag) {
  for (const CoverageFinding &f : report.findings) {
    diag.error(f.loc, f.message);
    for (const auto &[loc, text] : f.notes)
      diag.note(loc, text);
  }
  for (const auto &[loc, why] : report.notProved)
    diag.warning(loc, "not proved: " + why);
  return unsigned(report.findings.size());
}

} // namespace tilescope
