#include "ir/Instantiate.h"

#include "ir/Printer.h"
#include "ir/Suggest.h"
#include "ir/Visitor.h"

#include <llvm/ADT/StringExtras.h>

#include <fmt/format.h>

#include <map>
#include <set>

namespace tilescope {

namespace {

bool isInt(const Expr &e, int64_t v) {
  return e->kind == ExprKind::IntImm && as<IntImm>(e).value == v;
}
std::optional<bool> boolValue(const Expr &e) {
  if (e->kind == ExprKind::BoolImm)
    return as<BoolImm>(e).value;
  return std::nullopt;
}

// Substitutes a point's values and folds what becomes constant.
class Instantiator : public IRMutator {
public:
  Instantiator(const Kernel &kernel, const Point &point) {
    for (const PointValue &v : point)
      values_[v.name] = v.value;
    for (const SpaceParam &p : kernel.space.params)
      if (p.kind == SpaceParam::Kind::Enum)
        for (const Expr &v : p.values)
          enumValues_.insert(as<Var>(v).name);
  }

  // The first thing that did not fold or resolve, if any.
  std::optional<std::pair<llvm::SMLoc, std::string>> failure;

  Expr expr(const Expr &e) { return e ? mutate(e) : e; }

  // A block with every `if` whose condition folds replaced by its branch.
  Block block(const Block &b) {
    Block out;
    for (const Stmt &s : b) {
      if (s->kind == StmtKind::If) {
        const If &i = as<If>(s);
        Expr c = expr(i.cond);
        if (auto v = boolValue(c)) {
          for (Stmt &t : block(*v ? i.thenBody : i.elseBody))
            out.push_back(std::move(t));
          continue;
        }
      }
      out.push_back(mutate(s));
    }
    return out;
  }

  // A number of a layout or a launch: the folded value, if constant.
  std::optional<int64_t> number(const Expr &e) { return constantValue(expr(e)); }

  void fail(llvm::SMLoc loc, std::string why) {
    if (!failure)
      failure = {loc, std::move(why)};
  }

protected:
  Expr mutateVar(const Var &v, const Expr &self) override {
    auto it = values_.find(v.name);
    if (it == values_.end())
      return self;
    const Expr &value = it->second;
    switch (value->kind) {
    case ExprKind::IntImm:
      return IntImm::make(as<IntImm>(value).value, self->loc);
    case ExprKind::BoolImm:
      return BoolImm::make(as<BoolImm>(value).value, self->loc);
    default:
      return Var::make(as<Var>(value).name, self->loc);
    }
  }

  Expr mutateUnary(const Unary &u, const Expr &self) override {
    Expr e = IRMutator::mutateUnary(u, self);
    const Unary &f = as<Unary>(e);
    if (u.op == UnaryOp::Neg && f.operand->kind == ExprKind::IntImm &&
        as<IntImm>(f.operand).value > INT64_MIN)
      return IntImm::make(-as<IntImm>(f.operand).value, self->loc);
    if (u.op == UnaryOp::Not)
      if (auto b = boolValue(f.operand))
        return BoolImm::make(!*b, self->loc);
    return e;
  }

  Expr mutateBinary(const Binary &b, const Expr &self) override {
    Expr e = IRMutator::mutateBinary(b, self);
    const Binary &f = as<Binary>(e);
    llvm::SMLoc loc = self->loc;
    bool comparison = binaryOpPrecedence(f.op) < 5;
    // Literals.
    if (f.lhs->kind == ExprKind::IntImm && f.rhs->kind == ExprKind::IntImm &&
        f.op != BinaryOp::And && f.op != BinaryOp::Or)
      if (auto v = foldIntBinary(f.op, as<IntImm>(f.lhs).value, as<IntImm>(f.rhs).value))
        return comparison ? BoolImm::make(*v != 0, loc) : IntImm::make(*v, loc);
    auto lb = boolValue(f.lhs), rb = boolValue(f.rhs);
    if (f.op == BinaryOp::And || f.op == BinaryOp::Or) {
      bool isAnd = f.op == BinaryOp::And;
      // true && x = x, false && x = false; dually for ||.
      if (lb)
        return *lb == isAnd ? f.rhs : BoolImm::make(!isAnd, loc);
      if (rb)
        return *rb == isAnd ? f.lhs : BoolImm::make(!isAnd, loc);
      return e;
    }
    if (lb && rb && (f.op == BinaryOp::Eq || f.op == BinaryOp::Ne))
      return BoolImm::make((*lb == *rb) == (f.op == BinaryOp::Eq), loc);
    // An enumeration's value compared with a value.
    if ((f.op == BinaryOp::Eq || f.op == BinaryOp::Ne) && isEnum(f.lhs) && isEnum(f.rhs))
      return BoolImm::make((as<Var>(f.lhs).name == as<Var>(f.rhs).name) == (f.op == BinaryOp::Eq),
                           loc);
    return simplify(f, e);
  }

  Expr mutateCall(const Call &c, const Expr &self) override {
    Expr e = IRMutator::mutateCall(c, self);
    const Call &f = as<Call>(e);
    if (f.callee == "select" && f.args.size() == 3)
      if (auto b = boolValue(f.args[0]))
        return *b ? f.args[1] : f.args[2];
    if ((f.callee == "min" || f.callee == "max") && f.args.size() == 2 &&
        f.args[0]->kind == ExprKind::IntImm && f.args[1]->kind == ExprKind::IntImm) {
      int64_t x = as<IntImm>(f.args[0]).value, y = as<IntImm>(f.args[1]).value;
      return IntImm::make(f.callee == "min" ? std::min(x, y) : std::max(x, y), self->loc);
    }
    return e;
  }

  Stmt mutateBufferDecl(const BufferDecl &b, const Stmt &self) override {
    Stmt s = IRMutator::mutateBufferDecl(b, self);
    if (!b.layout || !b.layout->terms)
      return s;
    std::string why;
    auto layout = resolveLayout(
        *b.layout, [&](const Expr &x) { return number(x); }, &why);
    if (!layout) {
      fail(b.layout->loc, fmt::format("the layout of '{}' does not resolve: {}", b.name, why));
      return s;
    }
    const BufferDecl &d = as<BufferDecl>(s);
    return BufferDecl::make(d.scope, d.name, d.dtype, d.shape, std::move(layout), self->loc);
  }

  Stmt mutateLet(const Let &l, const Stmt &self) override {
    binds(l.name, self->loc);
    return IRMutator::mutateLet(l, self);
  }

  Stmt mutateFor(const For &f, const Stmt &self) override {
    binds(f.var, self->loc);
    Expr b = expr(f.begin), e = expr(f.end), s = expr(f.step);
    Block body = block(f.body);
    if (b == f.begin && e == f.end && s == f.step && sameStmts(body, f.body))
      return self;
    return For::make(f.var, b, e, s, f.unroll, f.pipelineStages, std::move(body), self->loc);
  }

  Stmt mutateIf(const If &i, const Stmt &self) override {
    Expr c = expr(i.cond);
    Block t = block(i.thenBody), e = block(i.elseBody);
    if (c == i.cond && sameStmts(t, i.thenBody) && sameStmts(e, i.elseBody))
      return self;
    return If::make(c, std::move(t), std::move(e), self->loc);
  }

private:
  bool isEnum(const Expr &e) const {
    return e->kind == ExprKind::Var && enumValues_.count(as<Var>(e).name);
  }

  // A name bound in the body may not hide a parameter or an enumeration
  // value: the substitution would not see which is meant.
  void binds(const std::string &name, llvm::SMLoc loc) {
    if (values_.count(name) || enumValues_.count(name))
      fail(loc, fmt::format("'{}' is bound here but is {} of the kernel's space", name,
                            values_.count(name) ? "a parameter" : "an enumeration value"));
  }

  static bool sameStmts(const Block &a, const Block &b) {
    if (a.size() != b.size())
      return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i])
        return false;
    return true;
  }

  // Identities and constants gathered across + and -: (x + 128) - 1 is
  // x + 127, x * 1 is x, x + 0 is x.
  Expr simplify(const Binary &f, const Expr &e) {
    llvm::SMLoc loc = e->loc;
    switch (f.op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: {
      if (isInt(f.rhs, 0))
        return f.lhs;
      if (f.op == BinaryOp::Add && isInt(f.lhs, 0))
        return f.rhs;
      if (f.rhs->kind != ExprKind::IntImm || f.lhs->kind != ExprKind::Binary)
        return e;
      const Binary &inner = as<Binary>(f.lhs);
      if ((inner.op != BinaryOp::Add && inner.op != BinaryOp::Sub) ||
          inner.rhs->kind != ExprKind::IntImm)
        return e;
      int64_t c1 = as<IntImm>(inner.rhs).value, c2 = as<IntImm>(f.rhs).value;
      __int128 sum = static_cast<__int128>(inner.op == BinaryOp::Add ? c1 : -c1) +
                     (f.op == BinaryOp::Add ? c2 : -c2);
      if (sum > INT64_MAX || sum < -INT64_MAX)
        return e;
      if (sum == 0)
        return inner.lhs;
      int64_t s = static_cast<int64_t>(sum);
      return Binary::make(s > 0 ? BinaryOp::Add : BinaryOp::Sub, inner.lhs,
                          IntImm::make(s > 0 ? s : -s, loc), loc);
    }
    case BinaryOp::Mul:
      if (isInt(f.rhs, 1))
        return f.lhs;
      if (isInt(f.lhs, 1))
        return f.rhs;
      return e;
    case BinaryOp::Div:
      return isInt(f.rhs, 1) ? f.lhs : e;
    default:
      return e;
    }
  }

  std::map<std::string, Expr> values_;
  std::set<std::string> enumValues_;
};

} // namespace

std::string whyNotInstantiated(const Instance &inst) {
  return (inst.byConstraint ? "is not in the space: " : "does not instantiate: ") + inst.reason;
}

Instance instantiate(const Kernel &kernel, const Point &point) {
  Instance out;
  Instantiator in(kernel, point);
  Kernel k;
  k.name = kernel.name;
  k.loc = kernel.loc;
  for (const Param &p : kernel.params) {
    Param q = p;
    for (Expr &d : q.shape)
      d = in.expr(d);
    k.params.push_back(std::move(q));
  }
  for (const Expr &c : kernel.constraints) {
    Expr folded = in.expr(c);
    if (auto v = boolValue(folded)) {
      if (!*v) {
        out.byConstraint = true;
        out.loc = c->loc;
        out.reason = fmt::format("constraint '{}' is false", print(c));
        return out;
      }
      continue; // true at this point: nothing left to state
    }
    k.constraints.push_back(std::move(folded));
  }
  k.launch = kernel.launch;
  for (Expr &g : k.launch.grid)
    g = in.expr(g);
  for (Expr &c : k.launch.cluster)
    c = in.expr(c);
  // A cluster of one CTA is no cluster (every CTA is its own): a family whose
  // cluster size is a parameter (split K over a cluster) instantiates at size
  // 1 to the text of the kernel without one.
  if (!k.launch.cluster.empty() &&
      std::all_of(k.launch.cluster.begin(), k.launch.cluster.end(), [&](const Expr &c) {
        auto n = constantValue(c);
        return n && *n == 1;
      }))
    k.launch.cluster.clear();
  for (Expr &d : k.launch.devices)
    d = in.expr(d);
  if (kernel.launch.threadsExpr) {
    k.launch.threadsExpr = nullptr;
    auto n = in.number(kernel.launch.threadsExpr);
    if (!n)
      in.fail(kernel.launch.threadsExpr->loc,
              fmt::format("threads({}) is not a constant at this point",
                          print(kernel.launch.threadsExpr)));
    else if (*n < 1 || *n > 1024)
      in.fail(kernel.launch.threadsExpr->loc,
              fmt::format("threads per CTA must be in [1, 1024], not {}", *n));
    else
      k.launch.threads = *n;
  }
  if (kernel.launch.ctasPerSmExpr) {
    k.launch.ctasPerSmExpr = nullptr;
    auto n = in.number(kernel.launch.ctasPerSmExpr);
    if (!n)
      in.fail(kernel.launch.ctasPerSmExpr->loc,
              fmt::format("ctas_per_sm({}) is not a constant at this point",
                          print(kernel.launch.ctasPerSmExpr)));
    else if (*n < 1 || *n > 32)
      in.fail(kernel.launch.ctasPerSmExpr->loc,
              fmt::format("ctas_per_sm takes a constant in [1, 32], not {}", *n));
    else
      k.launch.ctasPerSm = *n;
  }
  k.body = in.block(kernel.body);
  if (in.failure) {
    out.loc = in.failure->first;
    out.reason = in.failure->second;
    return out;
  }
  out.kernel = std::move(k);
  return out;
}

std::optional<Point> parsePoint(const Kernel &kernel, llvm::StringRef text, Diagnostics &diag) {
  const Space &space = kernel.space;
  if (space.empty()) {
    diag.error(kernel.loc, fmt::format("--set gives parameter values, but kernel '{}' has no "
                                       "parameters",
                                       kernel.name));
    return std::nullopt;
  }
  std::map<std::string, Expr> given;
  llvm::SmallVector<llvm::StringRef, 8> items;
  text.split(items, ',', -1, /*KeepEmpty=*/false);
  bool ok = true;
  for (llvm::StringRef item : items) {
    item = item.trim();
    auto [name, valueText] = item.split('=');
    name = name.trim();
    valueText = valueText.trim();
    if (!item.contains('=')) {
      const NamedPoint *named = space.findPoint(name);
      if (!named) {
        std::string names;
        for (const NamedPoint &p : space.points)
          names += (names.empty() ? "" : ", ") + p.name;
        std::vector<std::string_view> known;
        for (const NamedPoint &p : space.points)
          known.push_back(p.name);
        diag.error(kernel.loc,
                   fmt::format("--set names '{}', but kernel '{}' has no point of that name{}{}",
                               name.str(), kernel.name,
                               names.empty() ? std::string(" (it names none)")
                                             : " (its points: " + names + ")",
                               didYouMean(name.str(), known)));
        ok = false;
        continue;
      }
      for (const PointValue &v : named->values)
        given.emplace(v.name, v.value); // values given by name win
      continue;
    }
    const SpaceParam *p = space.find(name);
    if (!p) {
      std::string names;
      std::vector<std::string_view> known;
      for (const SpaceParam &q : space.params) {
        names += (names.empty() ? "" : ", ") + q.name;
        known.push_back(q.name);
      }
      diag.error(kernel.loc,
                 fmt::format("--set gives '{}', but kernel '{}' has no parameter of that name "
                             "(its parameters: {}){}",
                             name.str(), kernel.name, names, didYouMean(name.str(), known)));
      ok = false;
      continue;
    }
    Expr value;
    int64_t n = 0;
    if (!valueText.getAsInteger(10, n))
      value = IntImm::make(n);
    else if (valueText == "true" || valueText == "false")
      value = BoolImm::make(valueText == "true");
    else
      value = Var::make(valueText.str());
    if (!p->contains(value)) {
      diag.error(p->loc, fmt::format("--set gives {}={}, which is not a value of parameter '{}' "
                                     "(its values: {})",
                                     name.str(), valueText.str(), p->name, p->domainText()));
      ok = false;
      continue;
    }
    given[name.str()] = value;
  }
  if (!ok)
    return std::nullopt;
  Point point;
  for (const SpaceParam &p : space.params) {
    auto it = given.find(p.name);
    if (it == given.end() && !p.defaultValue) {
      diag.error(p.loc, fmt::format("--set gives no value for parameter '{}' (its values: {})",
                                    p.name, p.domainText()));
      ok = false;
      continue;
    }
    point.push_back(space.valueOf(p, it == given.end() ? p.defaultValue : it->second));
  }
  if (!ok)
    return std::nullopt;
  return point;
}

SpaceEnumeration enumerateSpace(const Kernel &kernel, int64_t cap) {
  SpaceEnumeration out;
  out.total = kernel.space.size();
  out.capped = out.total > cap;
  for (int64_t i = 0; i < out.total && i < cap; ++i) {
    Point p = kernel.space.pointAt(i);
    Instance inst = instantiate(kernel, p);
    out.points.push_back({std::move(p), std::move(inst)});
  }
  return out;
}

unsigned checkSpaceDeclarations(const Kernel &kernel, Diagnostics &diag) {
  unsigned before = diag.errorCount();
  const Space &space = kernel.space;
  if (space.empty()) {
    if (kernel.launch.threadsExpr)
      diag.error(kernel.launch.threadsExpr->loc,
                 "threads(...) must be a constant in a kernel without parameters");
    if (kernel.launch.ctasPerSmExpr)
      diag.error(kernel.launch.ctasPerSmExpr->loc,
                 "ctas_per_sm(...) must be a constant in a kernel without parameters");
    struct TermsFinder : IRVisitor {
      Diagnostics &diag;
      explicit TermsFinder(Diagnostics &d) : diag(d) {}
      void visitBufferDecl(const BufferDecl &b) override {
        if (b.layout && b.layout->terms)
          diag.error(b.layout->loc, fmt::format("the layout of '{}' must have constant numbers "
                                                "in a kernel without parameters",
                                                b.name));
        IRVisitor::visitBufferDecl(b);
      }
    } finder(diag);
    finder.visit(kernel.body);
    return diag.errorCount() - before;
  }
  std::set<std::string> taken;
  for (const Param &p : kernel.params) {
    taken.insert(p.name);
    for (const Expr &d : p.shape)
      if (d->kind == ExprKind::Var)
        taken.insert(as<Var>(d).name);
  }
  std::set<std::string> enumNames;
  for (const SpaceParam &p : space.params) {
    if (taken.count(p.name) || builtinFromName(p.name) || dtypeFromName(p.name) ||
        p.name == "true" || p.name == "false")
      diag.error(p.loc, fmt::format("parameter '{}' is named like a {} of the kernel", p.name,
                                    taken.count(p.name) ? "tensor, scalar or shape symbol"
                                                        : "builtin, dtype or literal"));
    if (p.kind == SpaceParam::Kind::Enum)
      for (const Expr &v : p.values) {
        const std::string &name = as<Var>(v).name;
        if (taken.count(name) || space.find(name))
          diag.error(v->loc, fmt::format("enumeration value '{}' is named like a parameter or "
                                         "shape symbol",
                                         name));
        enumNames.insert(name);
      }
  }
  for (const NamedPoint &p : space.points) {
    Instance inst = instantiate(kernel, p.values);
    if (inst.byConstraint) {
      diag.error(p.loc, fmt::format("point '{}' ({}) is not in the space: {}", p.name,
                                    pointText(p.values), inst.reason));
      diag.note(inst.loc, "the constraint is here");
    }
  }
  return diag.errorCount() - before;
}

} // namespace tilescope
