#include "ir/Visitor.h"

namespace tilescope {

// ------------------------------------------------------------------ visitor

void IRVisitor::visit(const Expr &e) {
  if (!e)
    return;
  switch (e->kind) {
  case ExprKind::IntImm:
    return visitIntImm(as<IntImm>(e));
  case ExprKind::FloatImm:
    return visitFloatImm(as<FloatImm>(e));
  case ExprKind::BoolImm:
    return visitBoolImm(as<BoolImm>(e));
  case ExprKind::StringImm:
    return visitStringImm(as<StringImm>(e));
  case ExprKind::Var:
    return visitVar(as<Var>(e));
  case ExprKind::Builtin:
    return visitBuiltin(as<Builtin>(e));
  case ExprKind::Unary:
    return visitUnary(as<Unary>(e));
  case ExprKind::Binary:
    return visitBinary(as<Binary>(e));
  case ExprKind::Call:
    return visitCall(as<Call>(e));
  case ExprKind::Index:
    return visitIndex(as<Index>(e));
  }
}

void IRVisitor::visit(const Stmt &s) {
  switch (s->kind) {
  case StmtKind::BufferDecl:
    return visitBufferDecl(as<BufferDecl>(s));
  case StmtKind::BarrierDecl:
    return visitBarrierDecl(as<BarrierDecl>(s));
  case StmtKind::Let:
    return visitLet(as<Let>(s));
  case StmtKind::For:
    return visitFor(as<For>(s));
  case StmtKind::If:
    return visitIf(as<If>(s));
  case StmtKind::Store:
    return visitStore(as<Store>(s));
  case StmtKind::CallStmt:
    return visitCallStmt(as<CallStmt>(s));
  }
}

void IRVisitor::visit(const Block &b) {
  for (const Stmt &s : b)
    visit(s);
}

void IRVisitor::visit(const Kernel &k) {
  for (const Param &p : k.params)
    for (const Expr &d : p.shape)
      visit(d);
  for (const Expr &c : k.constraints)
    visit(c);
  for (const Expr &g : k.launch.grid)
    visit(g);
  for (const Expr &c : k.launch.cluster)
    visit(c);
  visit(k.body);
}

void IRVisitor::visitBinary(const Binary &b) {
  visit(b.lhs);
  visit(b.rhs);
}
void IRVisitor::visitCall(const Call &c) {
  for (const Expr &a : c.args)
    visit(a);
}
void IRVisitor::visitIndex(const Index &x) {
  visit(x.base);
  for (const Subscript &s : x.subscripts) {
    visit(s.begin);
    visit(s.end);
  }
}
void IRVisitor::visitBufferDecl(const BufferDecl &b) {
  for (const Expr &d : b.shape)
    visit(d);
}
void IRVisitor::visitBarrierDecl(const BarrierDecl &b) {
  visit(b.arraySize);
  visit(b.count);
}
void IRVisitor::visitFor(const For &f) {
  visit(f.begin);
  visit(f.end);
  visit(f.step);
  visit(f.body);
}
void IRVisitor::visitIf(const If &i) {
  visit(i.cond);
  visit(i.thenBody);
  visit(i.elseBody);
}
void IRVisitor::visitStore(const Store &s) {
  visit(s.target);
  visit(s.value);
}
void IRVisitor::visitCallStmt(const CallStmt &c) {
  for (const CallArg &a : c.args)
    visit(a.value);
}

// ------------------------------------------------------------------ mutator

namespace {
template <typename T> bool sameAll(const std::vector<T> &a, const std::vector<T> &b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i])
      return false;
  return true;
}
} // namespace

Expr IRMutator::mutate(const Expr &e) {
  if (!e)
    return e;
  switch (e->kind) {
  case ExprKind::Unary:
    return mutateUnary(as<Unary>(e), e);
  case ExprKind::Binary:
    return mutateBinary(as<Binary>(e), e);
  case ExprKind::Call:
    return mutateCall(as<Call>(e), e);
  case ExprKind::Index:
    return mutateIndex(as<Index>(e), e);
  case ExprKind::Var:
    return mutateVar(as<Var>(e), e);
  default:
    return mutateLeaf(e);
  }
}

Stmt IRMutator::mutate(const Stmt &s) {
  switch (s->kind) {
  case StmtKind::BufferDecl:
    return mutateBufferDecl(as<BufferDecl>(s), s);
  case StmtKind::BarrierDecl:
    return mutateBarrierDecl(as<BarrierDecl>(s), s);
  case StmtKind::Let:
    return mutateLet(as<Let>(s), s);
  case StmtKind::For:
    return mutateFor(as<For>(s), s);
  case StmtKind::If:
    return mutateIf(as<If>(s), s);
  case StmtKind::Store:
    return mutateStore(as<Store>(s), s);
  case StmtKind::CallStmt:
    return mutateCallStmt(as<CallStmt>(s), s);
  }
  return s;
}

Block IRMutator::mutate(const Block &b) {
  Block out;
  out.reserve(b.size());
  for (const Stmt &s : b)
    out.push_back(mutate(s));
  return out;
}

Kernel IRMutator::mutate(const Kernel &k) {
  Kernel out = k;
  for (Param &p : out.params)
    for (Expr &d : p.shape)
      d = mutate(d);
  for (Expr &c : out.constraints)
    c = mutate(c);
  for (Expr &g : out.launch.grid)
    g = mutate(g);
  for (Expr &c : out.launch.cluster)
    c = mutate(c);
  out.body = mutate(k.body);
  return out;
}

Expr IRMutator::mutateUnary(const Unary &u, const Expr &self) {
  Expr a = mutate(u.operand);
  return a == u.operand ? self : Unary::make(u.op, a, self->loc);
}

Expr IRMutator::mutateBinary(const Binary &b, const Expr &self) {
  Expr x = mutate(b.lhs), y = mutate(b.rhs);
  return x == b.lhs && y == b.rhs ? self : Binary::make(b.op, x, y, self->loc);
}

Expr IRMutator::mutateCall(const Call &c, const Expr &self) {
  std::vector<Expr> args;
  for (const Expr &a : c.args)
    args.push_back(mutate(a));
  return sameAll(args, c.args) ? self : Call::make(c.callee, std::move(args), self->loc);
}

Expr IRMutator::mutateIndex(const Index &x, const Expr &self) {
  Expr base = mutate(x.base);
  bool same = base == x.base;
  std::vector<Subscript> subs = x.subscripts;
  for (Subscript &s : subs) {
    Expr b = mutate(s.begin), e = mutate(s.end);
    same = same && b == s.begin && e == s.end;
    s.begin = b;
    s.end = e;
  }
  return same ? self : Index::make(base, std::move(subs), self->loc);
}

Stmt IRMutator::mutateBufferDecl(const BufferDecl &b, const Stmt &self) {
  std::vector<Expr> shape;
  for (const Expr &d : b.shape)
    shape.push_back(mutate(d));
  return sameAll(shape, b.shape)
             ? self
             : BufferDecl::make(b.scope, b.name, b.dtype, std::move(shape), b.layout, self->loc);
}

Stmt IRMutator::mutateBarrierDecl(const BarrierDecl &b, const Stmt &self) {
  Expr n = mutate(b.arraySize), c = mutate(b.count);
  return n == b.arraySize && c == b.count ? self : BarrierDecl::make(b.name, n, c, self->loc);
}

Stmt IRMutator::mutateLet(const Let &l, const Stmt &self) {
  Expr v = mutate(l.value);
  return v == l.value ? self : Let::make(l.name, v, self->loc);
}

Stmt IRMutator::mutateFor(const For &f, const Stmt &self) {
  Expr b = mutate(f.begin), e = mutate(f.end), s = mutate(f.step);
  Block body = mutate(f.body);
  if (b == f.begin && e == f.end && s == f.step && sameAll(body, f.body))
    return self;
  return For::make(f.var, b, e, s, f.unroll, f.pipelineStages, std::move(body), self->loc);
}

Stmt IRMutator::mutateIf(const If &i, const Stmt &self) {
  Expr c = mutate(i.cond);
  Block t = mutate(i.thenBody), e = mutate(i.elseBody);
  if (c == i.cond && sameAll(t, i.thenBody) && sameAll(e, i.elseBody))
    return self;
  return If::make(c, std::move(t), std::move(e), self->loc);
}

Stmt IRMutator::mutateStore(const Store &s, const Stmt &self) {
  Expr t = mutate(s.target), v = mutate(s.value);
  return t == s.target && v == s.value ? self : Store::make(t, v, self->loc);
}

Stmt IRMutator::mutateCallStmt(const CallStmt &c, const Stmt &self) {
  std::vector<CallArg> args = c.args;
  bool same = true;
  for (CallArg &a : args) {
    Expr v = mutate(a.value);
    same = same && v == a.value;
    a.value = v;
  }
  return same ? self : CallStmt::make(c.scope, c.callee, std::move(args), self->loc);
}

// ------------------------------------------------------------------ passes

namespace {
class Substituter : public IRMutator {
public:
  explicit Substituter(std::map<std::string, Expr> r) : replacements_(std::move(r)) {}

protected:
  Expr mutateVar(const Var &v, const Expr &self) override {
    auto it = replacements_.find(v.name);
    return it == replacements_.end() ? self : it->second;
  }
  // A binding of the same name hides the replacement in what follows it.
  Stmt mutateFor(const For &f, const Stmt &self) override {
    auto saved = replacements_;
    Expr b = mutate(f.begin), e = mutate(f.end), s = mutate(f.step);
    replacements_.erase(f.var);
    Block body = mutate(f.body);
    replacements_ = std::move(saved);
    return For::make(f.var, b, e, s, f.unroll, f.pipelineStages, std::move(body), self->loc);
  }
  Stmt mutateLet(const Let &l, const Stmt &self) override {
    Stmt out = IRMutator::mutateLet(l, self);
    replacements_.erase(l.name);
    return out;
  }
  Stmt mutateIf(const If &i, const Stmt &self) override {
    auto saved = replacements_;
    Expr c = mutate(i.cond);
    Block t = mutate(i.thenBody);
    replacements_ = saved;
    Block e = mutate(i.elseBody);
    replacements_ = std::move(saved);
    return If::make(c, std::move(t), std::move(e), self->loc);
  }

private:
  std::map<std::string, Expr> replacements_;
};

class ConstantFolder : public IRMutator {
protected:
  Expr mutateBinary(const Binary &b, const Expr &self) override {
    Expr folded = IRMutator::mutateBinary(b, self);
    if (auto v = constantValue(folded))
      return IntImm::make(*v, self->loc);
    if (folded->kind != ExprKind::Binary)
      return folded;
    const auto &f = as<Binary>(folded);
    auto isInt = [](const Expr &e, int64_t v) {
      return e->kind == ExprKind::IntImm && as<IntImm>(e).value == v;
    };
    switch (f.op) {
    case BinaryOp::Add:
      if (isInt(f.rhs, 0))
        return f.lhs;
      if (isInt(f.lhs, 0))
        return f.rhs;
      break;
    case BinaryOp::Sub:
      if (isInt(f.rhs, 0))
        return f.lhs;
      break;
    case BinaryOp::Mul:
      if (isInt(f.rhs, 1))
        return f.lhs;
      if (isInt(f.lhs, 1))
        return f.rhs;
      break;
    case BinaryOp::Div:
      if (isInt(f.rhs, 1))
        return f.lhs;
      break;
    default:
      break;
    }
    return folded;
  }
  Expr mutateUnary(const Unary &u, const Expr &self) override {
    Expr folded = IRMutator::mutateUnary(u, self);
    if (auto v = constantValue(folded); v && *v >= 0)
      return IntImm::make(*v, self->loc);
    return folded;
  }
};

class NameCollector : public IRVisitor {
public:
  std::set<std::string> names;

protected:
  void visitVar(const Var &v) override { names.insert(v.name); }
};
} // namespace

Expr substitute(const Expr &e, const std::map<std::string, Expr> &replacements) {
  return Substituter(replacements).mutate(e);
}

Block substitute(const Block &b, const std::map<std::string, Expr> &replacements) {
  return Substituter(replacements).mutate(b);
}

Expr foldConstants(const Expr &e) {
  return ConstantFolder().mutate(e);
}
Kernel foldConstants(const Kernel &k) {
  return ConstantFolder().mutate(k);
}

std::set<std::string> namesUsed(const Expr &e) {
  NameCollector c;
  c.visit(e);
  return c.names;
}

} // namespace tilescope
