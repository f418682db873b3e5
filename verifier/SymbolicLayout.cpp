#include "verifier/SymbolicLayout.h"

#include "ir/DeviceScale.h"

#include "proof/QueryDeadline.h"
#include "verifier/LayoutEncoding.h"
#include "proof/SolverBudget.h"
#include "proof/TruncatingDivision.h"

#include <fmt/format.h>

#include <set>

namespace tilescope {

std::optional<int64_t> evaluate(const Expr &e, const std::map<std::string, int64_t> &symbols) {
  if (!e)
    return std::nullopt;
  switch (e->kind) {
  case ExprKind::IntImm:
    return as<IntImm>(e).value;
  case ExprKind::Var: {
    auto it = symbols.find(as<Var>(e).name);
    return it == symbols.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
  case ExprKind::Binary: {
    const Binary &b = as<Binary>(e);
    auto l = evaluate(b.lhs, symbols), r = evaluate(b.rhs, symbols);
    if (!l || !r)
      return std::nullopt;
    return foldIntBinary(b.op, *l, *r);
  }
  default:
    return std::nullopt;
  }
}

std::optional<Layout> SymbolicLayout::concretize(const std::map<std::string, int64_t> &symbols,
                                                 std::string *error) const {
  auto iters = [&](const std::vector<SymbolicIter> &in, std::vector<Iter> &out) {
    for (const SymbolicIter &it : in) {
      auto e = evaluate(it.extent, symbols), s = evaluate(it.stride, symbols);
      if (!e || !s)
        return false;
      out.push_back({*e, *s, it.axis});
    }
    return true;
  };
  std::vector<Iter> s, r;
  std::vector<AxisOffset> o;
  bool ok = iters(shard, s) && iters(replica, r);
  for (const auto &[axis, value] : offset) {
    auto v = evaluate(value, symbols);
    ok = ok && v.has_value();
    if (v)
      o.push_back({axis, *v});
  }
  if (!ok) {
    if (error)
      *error = "an extent, stride or offset does not evaluate for these symbols";
    return std::nullopt;
  }
  return Layout::make(std::move(s), std::move(r), std::move(o), std::nullopt, error);
}

namespace {
using detail::LayoutQuestion;

void collectSymbols(const Expr &e, std::set<std::string> &out) {
  if (!e)
    return;
  if (e->kind == ExprKind::Var)
    out.insert(as<Var>(e).name);
  if (e->kind == ExprKind::Binary) {
    collectSymbols(as<Binary>(e).lhs, out);
    collectSymbols(as<Binary>(e).rhs, out);
  }
}

// Integer terms throughout: symbolic sizes are unbounded, so bit-vectors of a
// fixed width would silently wrap.
struct SymbolEncoder {
  z3::context &ctx;
  std::map<std::string, z3::expr> symbols;

  // The symbols (each at least leastValueOf >= 0 in constrainedSolver).
  detail::NonNegativeConstant nonNegative() const {
    return [this](const z3::expr &c) {
      for (const auto &[n, v] : symbols)
        if (z3::eq(v, c))
          return true;
      return false;
    };
  }

  z3::expr term(const Expr &e) {
    if (!e)
      throw std::invalid_argument("missing expression");
    switch (e->kind) {
    case ExprKind::IntImm:
      return ctx.int_val(as<IntImm>(e).value);
    case ExprKind::BoolImm:
      return ctx.bool_val(as<BoolImm>(e).value);
    case ExprKind::Var:
      return symbols.at(as<Var>(e).name);
    case ExprKind::Binary: {
      const Binary &b = as<Binary>(e);
      z3::expr l = term(b.lhs), r = term(b.rhs);
      switch (b.op) {
      case BinaryOp::Add:
        return l + r;
      case BinaryOp::Sub:
        return l - r;
      case BinaryOp::Mul:
        return l * r;
      case BinaryOp::Div:
        return detail::truncatingDiv(l, r, nonNegative());
      case BinaryOp::Mod:
        return detail::truncatingRem(l, r, nonNegative());
      case BinaryOp::Lt:
        return l < r;
      case BinaryOp::Le:
        return l <= r;
      case BinaryOp::Gt:
        return l > r;
      case BinaryOp::Ge:
        return l >= r;
      case BinaryOp::Eq:
        return l == r;
      case BinaryOp::Ne:
        return l != r;
      case BinaryOp::And:
        return l && r;
      case BinaryOp::Or:
        return l || r;
      }
      break;
    }
    default:
      break;
    }
    throw std::invalid_argument("an expression the symbolic verifier does not model");
  }
};

struct SymbolicElement {
  std::vector<z3::expr> shard, replica;
  std::vector<z3::expr> axis;
};

// A solver holding the symbols' ranges (>= 1) and the `where` constraints.
z3::solver constrainedSolver(SymbolEncoder &enc, const std::vector<Expr> &constraints,
                             unsigned timeoutMs) {
  z3::solver s(enc.ctx);
  z3::params p(enc.ctx);
  setSolverBudget(p, timeoutMs);
  s.set(p);
  for (const auto &[n, v] : enc.symbols)
    s.add(v >= enc.ctx.int_val(leastValueOf(n)));
  for (const Expr &c : constraints)
    s.add(enc.term(c));
  return s;
}

// One element of `layout`: digits in range, coordinates per axis.
SymbolicElement declareElement(SymbolEncoder &enc, z3::solver &s, const SymbolicLayout &layout,
                               const std::string &prefix, bool withReplicas) {
  SymbolicElement el;
  el.axis.assign(kNumAxes, enc.ctx.int_val(0));
  auto add = [&](const std::vector<SymbolicIter> &iters, const char *tag,
                 std::vector<z3::expr> &digits) {
    for (size_t k = 0; k < iters.size(); ++k) {
      z3::expr d = enc.ctx.int_const(fmt::format("{}_{}{}", prefix, tag, k).c_str());
      s.add(d >= 0 && d < enc.term(iters[k].extent));
      digits.push_back(d);
      size_t a = static_cast<size_t>(iters[k].axis);
      el.axis[a] = el.axis[a] + d * enc.term(iters[k].stride);
    }
  };
  add(layout.shard, "s", el.shard);
  if (withReplicas)
    add(layout.replica, "r", el.replica);
  for (const auto &[axis, value] : layout.offset) {
    size_t a = static_cast<size_t>(axis);
    el.axis[a] = el.axis[a] + enc.term(value);
  }
  return el;
}

std::map<std::string, int64_t> symbolValues(SymbolEncoder &enc, const z3::model &m) {
  std::map<std::string, int64_t> values;
  for (const auto &[n, v] : enc.symbols)
    values[n] = m.eval(v, true).get_numeral_int64();
  return values;
}

int64_t flatOf(const z3::model &m, const std::vector<z3::expr> &digits,
               const std::vector<Iter> &iters) {
  int64_t flat = 0;
  for (size_t k = 0; k < digits.size(); ++k)
    flat = flat * iters[k].extent + m.eval(digits[k], true).get_numeral_int64();
  return flat;
}

void collectLayoutSymbols(const SymbolicLayout &layout, std::set<std::string> &names) {
  for (const auto *iters : {&layout.shard, &layout.replica})
    for (const SymbolicIter &it : *iters) {
      collectSymbols(it.extent, names);
      collectSymbols(it.stride, names);
    }
  for (const auto &o : layout.offset)
    collectSymbols(o.second, names);
}

std::string symbolText(const std::map<std::string, int64_t> &values) {
  std::string out;
  for (const auto &[name, v] : values)
    out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", name, v);
  return out;
}
} // namespace

LayoutReport verifySymbolicLayout(const SymbolicLayout &layout, const std::vector<Expr> &shape,
                                  const std::vector<Expr> &constraints, const BufferInfo &buffer,
                                  const TargetInfo &target, const LaunchShape &launch,
                                  const Expr &memoryElements, const VerifyOptions &options) {
  LayoutReport report;
  try {
    z3::context &ctx = detail::sharedContext();
    std::set<std::string> names;
    collectLayoutSymbols(layout, names);
    for (const Expr &e : shape)
      collectSymbols(e, names);
    for (const Expr &e : constraints)
      collectSymbols(e, names);
    collectSymbols(memoryElements, names);
    SymbolEncoder enc{ctx, {}};
    for (const std::string &n : names)
      enc.symbols.emplace(n, ctx.int_const(("sym_" + n).c_str()));

    auto newSolver = [&] { return constrainedSolver(enc, constraints, options.timeoutMs); };
    auto declare = [&](z3::solver &s, const std::string &prefix, bool withReplicas) {
      return declareElement(enc, s, layout, prefix, withReplicas);
    };
    auto product = [&](auto begin, auto end, auto &&termOf) {
      z3::expr p = ctx.int_val(1);
      for (auto it = begin; it != end; ++it) {
        z3::expr next = p * termOf(*it);
        // Copied, not moved: z3++ 4.8.12's move assignment leaks the old term
        // (DivisionAbstraction.cpp).
        p = next;
      }
      return p;
    };
    z3::expr shapeCount =
        product(shape.begin(), shape.end(), [&](const Expr &e) { return enc.term(e); });
    z3::expr layoutCount = product(layout.shard.begin(), layout.shard.end(),
                                   [&](const SymbolicIter &it) { return enc.term(it.extent); });

    // A model fixes the symbols; the concrete engine then names the witness.
    auto symbolsOf = [&](const z3::model &m) { return symbolValues(enc, m); };
    auto concreteShape = [&](const std::map<std::string, int64_t> &values) {
      std::vector<int64_t> out;
      for (const Expr &e : shape)
        out.push_back(evaluate(e, values).value_or(0));
      return out;
    };
    auto digitsToFlat = [&](const z3::model &m, const std::vector<z3::expr> &digits,
                            const Layout &concrete, bool replica) {
      return flatOf(m, digits, replica ? concrete.replica() : concrete.shard());
    };
    auto finish = [&](std::optional<LayoutViolation> v,
                      const std::map<std::string, int64_t> &values, const char *what) {
      if (!v) {
        report.undecided.push_back(
            fmt::format("{}: the counterexample for {} did not re-check (verifier bug)", what,
                        symbolText(values)));
        return;
      }
      for (const auto &[n, x] : values)
        v->witness.symbols.push_back({n, x});
      v->message = fmt::format("for {}: {}", symbolText(values), v->message);
      report.violations.push_back(std::move(*v));
    };
    auto check = [&](z3::solver &s, const char *what) {
      switch (checkWithinBudget(s)) {
      case z3::sat:
        return true;
      case z3::unsat:
        return false;
      case z3::unknown:
        break;
      }
      report.undecided.push_back(
          fmt::format("{}: undecided for symbolic sizes ({})", what, reasonUnknown(s)));
      return false;
    };
    // Everything the concrete engine needs once the symbols are fixed.
    struct Concrete {
      Layout layout;
      std::vector<int64_t> shape;
      BufferInfo buffer;
    };
    auto concreteAt = [&](const std::map<std::string, int64_t> &values) -> std::optional<Concrete> {
      std::string error;
      auto l = layout.concretize(values, &error);
      if (!l) {
        report.undecided.push_back(fmt::format("for {}: {}", symbolText(values), error));
        return std::nullopt;
      }
      Concrete c{*l, concreteShape(values), buffer};
      c.buffer.memoryElements = memoryElements ? evaluate(memoryElements, values).value_or(0) : 0;
      return c;
    };
    auto questionOf = [&](const Concrete &c) {
      LayoutQuestion q{c.layout, c.shape, c.buffer};
      for (size_t i = 0; i < kNumAxes; ++i)
        if (c.layout.axesUsed() >> i & 1)
          q.bound[i] = boundOf(static_cast<Axis>(i), c.buffer, c.shape, target, launch);
      q.checkAlias = !c.buffer.mayAlias;
      return q;
    };

    // Admission: the element counts agree for every admitted size.
    {
      z3::solver s = newSolver();
      s.add(shapeCount != layoutCount);
      if (check(s, "shape admission")) {
        auto values = symbolsOf(s.get_model());
        LayoutViolation v{ViolationKind::Bounds, {}, {}};
        for (const auto &[n, x] : values)
          v.witness.symbols.push_back({n, x});
        v.message = fmt::format("for {}: the layout has {} elements but the shape {} has {}",
                                symbolText(values),
                                s.get_model().eval(layoutCount, true).get_numeral_int64(),
                                formatLogical(concreteShape(values)),
                                s.get_model().eval(shapeCount, true).get_numeral_int64());
        report.violations.push_back(std::move(v));
        return report;
      }
    }

    // Bounds, per axis the layout uses.
    std::set<Axis> used;
    for (const auto *iters : {&layout.shard, &layout.replica})
      for (const SymbolicIter &it : *iters)
        used.insert(it.axis);
    for (const auto &o : layout.offset)
      used.insert(o.first);
    for (Axis axis : used) {
      z3::expr bound = ctx.int_val(0);
      if (axis == Axis::m && buffer.scope != MemScope::Reg) {
        bound = memoryElements ? enc.term(memoryElements) : shapeCount;
      } else {
        int64_t b = boundOf(axis, buffer, {}, target, launch);
        if (b <= 0)
          continue;
        bound = ctx.int_val(b);
      }
      // With strides >= 0 the largest coordinate is every digit at its top:
      // sum (e - 1) * s + offset, a query over the symbols alone. If some
      // stride may be negative, ask over the digits instead.
      z3::expr reach = ctx.int_val(0);
      z3::expr_vector negative(ctx);
      for (const auto *iters : {&layout.shard, &layout.replica})
        for (const SymbolicIter &it : *iters)
          if (it.axis == axis) {
            z3::expr next = reach + (enc.term(it.extent) - 1) * enc.term(it.stride);
            // Copied, not moved: z3++ 4.8.12's move assignment leaks the old term
            // (DivisionAbstraction.cpp).
            reach = next;
            negative.push_back(enc.term(it.stride) < 0);
          }
      for (const auto &[a, value] : layout.offset)
        if (a == axis) {
          z3::expr next = reach + enc.term(value);
          reach = next; // copied, as above
          negative.push_back(enc.term(value) < 0);
        }
      z3::solver s = newSolver();
      if (negative.empty())
        continue;
      s.add(z3::mk_or(negative));
      bool mayBeNegative = check(s, "bounds");
      s = newSolver();
      SymbolicElement x = declare(s, "x", true);
      if (mayBeNegative)
        s.add(x.axis[static_cast<size_t>(axis)] >= bound);
      else
        s.add(reach >= bound);
      if (!check(s, "bounds"))
        continue;
      z3::model m = s.get_model();
      auto values = symbolsOf(m);
      auto c = concreteAt(values);
      if (!c)
        continue;
      int64_t flat = 0, replica = 0;
      if (mayBeNegative) {
        flat = digitsToFlat(m, x.shard, c->layout, false);
        replica = digitsToFlat(m, x.replica, c->layout, true);
      } else {
        // The element with every digit on this axis at its top.
        for (const Iter &it : c->layout.shard())
          flat = flat * it.extent + (it.axis == axis ? it.extent - 1 : 0);
        for (const Iter &it : c->layout.replica())
          replica = replica * it.extent + (it.axis == axis ? it.extent - 1 : 0);
      }
      finish(detail::boundsViolation(questionOf(*c), axis, flat, replica), values, "bounds");
    }
    if (buffer.mayAlias)
      return report;

    auto differ = [&](const std::vector<z3::expr> &a, const std::vector<z3::expr> &b) {
      z3::expr_vector any(ctx);
      for (size_t k = 0; k < a.size(); ++k)
        any.push_back(a[k] != b[k]);
      return any.empty() ? ctx.bool_val(false) : z3::mk_or(any);
    };
    auto same = [&](const SymbolicElement &a, const SymbolicElement &b) {
      z3::expr_vector all(ctx);
      for (size_t i = 0; i < kNumAxes; ++i)
        all.push_back(a.axis[i] == b.axis[i]);
      return z3::mk_and(all);
    };
    {
      z3::solver s = newSolver();
      SymbolicElement x = declare(s, "x", false), y = declare(s, "y", false);
      s.add(differ(x.shard, y.shard));
      s.add(same(x, y));
      if (check(s, "aliasing")) {
        z3::model m = s.get_model();
        auto values = symbolsOf(m);
        if (auto c = concreteAt(values))
          finish(detail::aliasViolation(questionOf(*c), digitsToFlat(m, x.shard, c->layout, false),
                                        digitsToFlat(m, y.shard, c->layout, false)),
                 values, "aliasing");
      }
    }
    if (!layout.replica.empty()) {
      z3::solver s = newSolver();
      SymbolicElement x = declare(s, "x", true), y = declare(s, "y", true);
      s.add(differ(x.shard, y.shard));
      std::vector<z3::expr> zeros(x.replica.size(), ctx.int_val(0));
      s.add(differ(x.replica, zeros) || differ(y.replica, zeros));
      s.add(same(x, y));
      if (check(s, "replica consistency")) {
        z3::model m = s.get_model();
        auto values = symbolsOf(m);
        if (auto c = concreteAt(values))
          finish(detail::replicaViolation(questionOf(*c),
                                          digitsToFlat(m, x.shard, c->layout, false),
                                          digitsToFlat(m, x.replica, c->layout, true),
                                          digitsToFlat(m, y.shard, c->layout, false),
                                          digitsToFlat(m, y.replica, c->layout, true)),
                 values, "replica consistency");
      }
    }
  } catch (const z3::exception &e) {
    report.undecided.push_back(fmt::format("symbolic proof: Z3 error: {}", e.msg()));
  } catch (const std::exception &e) {
    report.undecided.push_back(fmt::format("symbolic proof: {}", e.what()));
  }
  return report;
}

std::string formatSymbols(const std::map<std::string, int64_t> &values) {
  return symbolText(values);
}

std::optional<std::map<std::string, int64_t>>
findCounterexample(const Expr &claim, const std::vector<Expr> &constraints, std::string *undecided,
                   unsigned timeoutMs) {
  try {
    z3::context &ctx = detail::sharedContext();
    std::set<std::string> names;
    collectSymbols(claim, names);
    for (const Expr &e : constraints)
      collectSymbols(e, names);
    SymbolEncoder enc{ctx, {}};
    for (const std::string &n : names)
      enc.symbols.emplace(n, ctx.int_const(("sym_" + n).c_str()));
    // A one-shot solver: the claims are divisibility facts (`K * 2 % 16 ==
    // 0` under `K % 8 == 0`), which its div/mod elimination decides at once.
    z3::solver s = oneShotSolver(ctx, timeoutMs);
    for (const auto &[n, v] : enc.symbols)
      s.add(v >= ctx.int_val(leastValueOf(n)));
    for (const Expr &c : constraints)
      s.add(enc.term(c));
    s.add(!enc.term(claim));
    switch (checkWithinBudget(s)) {
    case z3::unsat:
      return std::nullopt;
    case z3::sat:
      return symbolValues(enc, s.get_model());
    case z3::unknown:
      if (undecided)
        *undecided = fmt::format("undecided ({})", reasonUnknown(s));
      return std::map<std::string, int64_t>{};
    }
  } catch (const z3::exception &e) {
    if (undecided)
      *undecided = fmt::format("Z3 error: {}", e.msg());
  } catch (const std::exception &e) {
    if (undecided)
      *undecided = e.what();
  }
  return std::map<std::string, int64_t>{};
}

LayoutReport verifySymbolicNoOverlap(const SymbolicBufferView &a, const SymbolicBufferView &b,
                                     const std::vector<Expr> &constraints,
                                     const VerifyOptions &options) {
  LayoutReport report;
  if (a.info.scope != b.info.scope)
    return report;
  try {
    z3::context &ctx = detail::sharedContext();
    std::set<std::string> names;
    collectLayoutSymbols(a.layout, names);
    collectLayoutSymbols(b.layout, names);
    for (const auto *shape : {&a.shape, &b.shape})
      for (const Expr &e : *shape)
        collectSymbols(e, names);
    for (const Expr &e : constraints)
      collectSymbols(e, names);
    SymbolEncoder enc{ctx, {}};
    for (const std::string &n : names)
      enc.symbols.emplace(n, ctx.int_const(("sym_" + n).c_str()));
    z3::solver s = constrainedSolver(enc, constraints, options.timeoutMs);
    SymbolicElement x = declareElement(enc, s, a.layout, "a", true);
    SymbolicElement y = declareElement(enc, s, b.layout, "b", true);
    size_t m = static_cast<size_t>(Axis::m);
    for (size_t i = 0; i < kNumAxes; ++i)
      if (i != m)
        s.add(x.axis[i] == y.axis[i]);
    int64_t bitsA = std::max(dtypeBits(a.info.dtype), 1),
            bitsB = std::max(dtypeBits(b.info.dtype), 1);
    z3::expr startA = ctx.int_val(a.info.baseByte * 8) + x.axis[m] * ctx.int_val(bitsA);
    z3::expr startB = ctx.int_val(b.info.baseByte * 8) + y.axis[m] * ctx.int_val(bitsB);
    s.add(startA < startB + ctx.int_val(bitsB) && startB < startA + ctx.int_val(bitsA));
    switch (checkWithinBudget(s)) {
    case z3::unsat:
      return report;
    case z3::unknown:
      report.undecided.push_back(
          fmt::format("buffer overlap: undecided for symbolic sizes ({})", reasonUnknown(s)));
      return report;
    case z3::sat:
      break;
    }
    z3::model model = s.get_model();
    auto values = symbolValues(enc, model);
    std::string error;
    auto la = a.layout.concretize(values, &error), lb = b.layout.concretize(values, &error);
    if (!la || !lb) {
      report.undecided.push_back(fmt::format("for {}: {}", symbolText(values), error));
      return report;
    }
    auto shapeAt = [&](const std::vector<Expr> &shape) {
      std::vector<int64_t> out;
      for (const Expr &e : shape)
        out.push_back(evaluate(e, values).value_or(0));
      return out;
    };
    BufferView va{&*la, shapeAt(a.shape), a.info}, vb{&*lb, shapeAt(b.shape), b.info};
    auto v = detail::overlapViolation(
        detail::OverlapQuestion{va, vb}, flatOf(model, x.shard, la->shard()),
        flatOf(model, x.replica, la->replica()), flatOf(model, y.shard, lb->shard()),
        flatOf(model, y.replica, lb->replica()));
    if (!v) {
      report.undecided.push_back(
          "buffer overlap: the counterexample did not re-check (verifier bug)");
      return report;
    }
    for (const auto &[n, val] : values)
      v->witness.symbols.push_back({n, val});
    v->message = fmt::format("for {}: {}", symbolText(values), v->message);
    report.violations.push_back(std::move(*v));
  } catch (const z3::exception &e) {
    report.undecided.push_back(fmt::format("symbolic overlap proof: Z3 error: {}", e.msg()));
  } catch (const std::exception &e) {
    report.undecided.push_back(fmt::format("symbolic overlap proof: {}", e.what()));
  }
  return report;
}

} // namespace tilescope
