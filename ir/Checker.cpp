#include "ir/Checker.h"
#include "ir/CheckerImpl.h"
#include "ir/Instantiate.h"

#include "ir/Affine.h"
#include "ir/DeviceScale.h"
#include "ir/Intrinsics.h"
#include "ir/Placement.h"
#include "ir/Printer.h"
#include "ir/ThreadUniformity.h"
#include "ir/SizeLimits.h"
#include "ir/Visitor.h"
#include "ir/WhereFacts.h"
#include "ir/Suggest.h"

#include <fmt/format.h>

#include <climits>
#include <map>

namespace tilescope {

namespace check {

bool Checker::onlySymbols(const Expr &e, const char *what) {
  // Kernel-header expressions may name shape symbols and scalars only.
  switch (e->kind) {
  case ExprKind::Var: {
    const Symbol *s = lookup(as<Var>(e).name);
    if (s && (s->kind == Symbol::ShapeSymbol || s->kind == Symbol::Scalar))
      return true;
    error(e->loc, fmt::format("{} may only use shape symbols and scalar parameters; '{}' is {}",
                              what, as<Var>(e).name, s ? "not one" : "undefined"));
    return false;
  }
  case ExprKind::Builtin:
  case ExprKind::Index:
  case ExprKind::Call:
    error(e->loc, fmt::format("{} may only use shape symbols and scalar parameters", what));
    return false;
  case ExprKind::Unary:
    return onlySymbols(as<Unary>(e).operand, what);
  case ExprKind::Binary:
    return onlySymbols(as<Binary>(e).lhs, what) && onlySymbols(as<Binary>(e).rhs, what);
  default:
    return true;
  }
}

void Checker::kernel(const Kernel &k) {
  kernel_ = &k;
  scopes_.clear();
  control_.clear();
  whereFacts_ = {};
  push();
  // Parameters: a tensor's bare-name dimensions declare shape symbols.
  for (const Param &p : k.params) {
    if (p.isTensor) {
      for (const Expr &d : p.shape) {
        if (d->kind == ExprKind::Var) {
          const std::string &n = as<Var>(d).name;
          const Symbol *s = lookup(n);
          if (!s)
            scopes_.back().emplace(n, Symbol::of(Symbol::ShapeSymbol, d->loc));
          else if (s->kind != Symbol::ShapeSymbol && s->kind != Symbol::Scalar)
            error(d->loc, fmt::format("'{}' is not a shape symbol", n));
        } else if (auto v = constantValue(d)) {
          if (*v < 1)
            error(d->loc, fmt::format("tensor dimension must be positive, not {}", *v));
        } else {
          onlySymbols(d, "a tensor dimension");
        }
      }
      checkTensorParamLimits(p, diag_);
      Symbol sym = Symbol::of(Symbol::Tensor, p.loc, p.dtype);
      sym.scope = MemScope::Global;
      sym.shape = p.shape;
      define(p.name, std::move(sym));
    } else {
      Symbol sym = Symbol::of(Symbol::Scalar, p.loc, p.dtype);
      sym.isInt = isInteger(p.dtype);
      sym.isBool = p.dtype == Dtype::pred;
      define(p.name, std::move(sym));
    }
  }
  for (const Expr &c : k.constraints) {
    if (!onlySymbols(c, "a 'where' constraint"))
      continue;
    Type t = expr(c);
    if (t.kind != Type::Invalid && t.kind != Type::Bool)
      error(c->loc, fmt::format("a 'where' constraint must be a condition, not {}", typeName(t)));
  }
  whereFacts_ = whereFacts(k);
  for (const Expr &g : k.launch.grid)
    if (onlySymbols(g, "a grid extent"))
      expectInt(g, "a grid extent");
  checkLaunchLimits(k.launch, diag_);
  for (const Expr &d : k.launch.devices) {
    if (!onlySymbols(d, "the device count") || !expectInt(d, "the device count"))
      continue;
    if (auto v = constantValue(d); v && (*v < 1 || *v > kMaxDevices))
      error(d->loc, fmt::format("the device count must be in [1, {}], not {}", kMaxDevices, *v));
  }
  for (const Param &p : k.params)
    if (p.placement)
      placement(k, p);
  int64_t clusterSize = 1;
  for (const Expr &c : k.launch.cluster) {
    auto v = constantValue(c);
    if (!v || *v < 1)
      error(c->loc, "cluster extents must be positive integer constants");
    else if (__builtin_mul_overflow(clusterSize, *v, &clusterSize))
      clusterSize = INT64_MAX;
  }
  const TargetInfo &target = targetInfo(k.launch.target);
  if (!k.launch.cluster.empty() && clusterSize > target.maxClusterSize)
    error(k.launch.loc, fmt::format("cluster of {} CTAs exceeds {}'s limit of {}", clusterSize,
                                    target.name, target.maxClusterSize));
  push();
  block(k.body);
  pop();
  pop();
}

// A tensor parameter's placement over the devices (ir/Placement.h): its
// numbers name sizes (never devid), and it is one of the forms the
// placement reading takes.
void Checker::placement(const Kernel &k, const Param &p) {
  if (const auto &terms = p.placement->terms) {
    std::vector<Expr> numbers;
    for (const auto *part : {&terms->shard, &terms->replica})
      for (const auto &it : *part) {
        numbers.push_back(it.extent);
        numbers.push_back(it.stride);
      }
    for (const auto &o : terms->offset)
      numbers.push_back(o.second);
    for (const Expr &n : numbers) {
      if (namesUsed(n).count("devid")) {
        error(n->loc, fmt::format("the placement of '{}' cannot depend on devid: it is the same "
                                  "on every device",
                                  p.name));
        return;
      }
      if (!onlySymbols(n, "a placement") || !expectInt(n, "a placement's number"))
        return;
    }
  }
  std::string why;
  llvm::SMLoc at;
  if (!readPlacement(k, p, &why, &at))
    error(at, why);
}

bool Checker::expectInt(const Expr &e, const char *what) {
  Type t = expr(e);
  if (t.kind == Type::Invalid)
    return false;
  if (t.kind != Type::Int) {
    error(e->loc, fmt::format("{} must be an integer, not {}", what, typeName(t)));
    return false;
  }
  return true;
}

Type Checker::expr(const Expr &e) {
  Type t;
  switch (e->kind) {
  case ExprKind::IntImm:
    t.kind = Type::Int;
    t.literal = true;
    return t;
  case ExprKind::FloatImm:
    t.kind = Type::Float;
    t.literal = true;
    return t;
  case ExprKind::BoolImm:
    t.kind = Type::Bool;
    return t;
  case ExprKind::StringImm:
    t.kind = Type::String;
    return t;
  case ExprKind::Builtin: {
    t.kind = Type::Int;
    switch (as<Builtin>(e).which) {
    case BuiltinKind::laneid:
    case BuiltinKind::tid_in_wg:
    case BuiltinKind::threadIdx_x:
      t.uniform = Convergence::Thread;
      break;
    case BuiltinKind::warpid:
    case BuiltinKind::wid_in_wg:
      t.uniform = Convergence::Warp;
      break;
    case BuiltinKind::wgid:
      t.uniform = Convergence::Warpgroup;
      break;
    default:
      t.uniform = Convergence::Cta;
      break;
    }
    return t;
  }
  case ExprKind::Var: {
    const std::string &name = as<Var>(e).name;
    const Symbol *s = lookup(name);
    if (!s) {
      error(e->loc,
            fmt::format("use of undefined name '{}'{}", name, didYouMean(name, visibleNames())));
      return Type::invalid();
    }
    switch (s->kind) {
    case Symbol::ShapeSymbol:
      t.kind = Type::Int;
      return t;
    case Symbol::Scalar:
    case Symbol::Value:
      t.kind = s->isBool ? Type::Bool : s->isInt ? Type::Int : Type::Float;
      t.dtype = s->dtype;
      t.uniform = s->uniform;
      return t;
    case Symbol::Tensor:
    case Symbol::Buffer:
      t.kind = Type::Region;
      t.dtype = s->dtype;
      t.buffer = s;
      t.bufferName = name;
      t.uniform = Convergence::Thread;
      for (const Expr &d : s->shape)
        t.shape.push_back(shapeTerm(d));
      return t;
    case Symbol::Barrier:
      if (s->barrierArray) {
        error(e->loc,
              fmt::format("'{}' is an array of mbarriers; pick one with {}[i]", name, name));
        return Type::invalid();
      }
      t.kind = Type::BarrierRef;
      return t;
    }
    return Type::invalid();
  }
  case ExprKind::Unary: {
    const auto &u = as<Unary>(e);
    Type a = expr(u.operand);
    if (a.kind == Type::Invalid)
      return a;
    if (u.op == UnaryOp::Not && a.kind != Type::Bool) {
      error(e->loc, fmt::format("'!' needs a bool, not {}", typeName(a)));
      return Type::invalid();
    }
    if (u.op == UnaryOp::Neg && a.kind != Type::Int && a.kind != Type::Float) {
      error(e->loc, fmt::format("'-' needs a number, not {}", typeName(a)));
      return Type::invalid();
    }
    return refineUniformity(e, a);
  }
  case ExprKind::Binary:
    return refineUniformity(e, binary(as<Binary>(e), e->loc));
  case ExprKind::Call:
    return refineUniformity(e, call(as<Call>(e), e->loc));
  case ExprKind::Index:
    return index(as<Index>(e), e->loc);
  }
  return Type::invalid();
}

Type Checker::binary(const Binary &b, llvm::SMLoc loc) {
  Type x = expr(b.lhs);
  // `a && b` and `a || b` short-circuit: b runs only where a decided so.
  bool shortCircuit = b.op == BinaryOp::And || b.op == BinaryOp::Or;
  if (shortCircuit)
    control_.push_back({x.kind == Type::Invalid ? Convergence::Grid : x.uniform, b.lhs->loc, b.lhs});
  Type y = expr(b.rhs);
  if (shortCircuit)
    control_.pop_back();
  if (x.kind == Type::Invalid || y.kind == Type::Invalid)
    return Type::invalid();
  Type t;
  t.uniform = std::min(x.uniform, y.uniform);
  std::string_view op = binaryOpSpelling(b.op);
  if (b.op == BinaryOp::And || b.op == BinaryOp::Or) {
    if (x.kind != Type::Bool || y.kind != Type::Bool) {
      error(loc, fmt::format("'{}' needs two bools, not {} and {}", op, typeName(x), typeName(y)));
      return Type::invalid();
    }
    t.kind = Type::Bool;
    return t;
  }
  auto numeric = [](const Type &a) { return a.kind == Type::Int || a.kind == Type::Float; };
  bool isCompare = binaryOpPrecedence(b.op) == 3 || binaryOpPrecedence(b.op) == 4;
  if (isCompare && x.kind == Type::Bool && y.kind == Type::Bool &&
      (b.op == BinaryOp::Eq || b.op == BinaryOp::Ne)) {
    t.kind = Type::Bool;
    return t;
  }
  if (!numeric(x) || !numeric(y)) {
    error(loc, fmt::format("'{}' needs numbers, not {} and {}", op, typeName(x), typeName(y)));
    return Type::invalid();
  }
  // Numbers: integers with integers; floats of one dtype; literals adapt.
  Type result = x;
  if (x.kind == Type::Float || y.kind == Type::Float) {
    const Type &fx = x.kind == Type::Float ? x : y;
    const Type &other = x.kind == Type::Float ? y : x;
    if (other.kind == Type::Int && !other.literal) {
      error(loc, fmt::format("'{}' mixes an integer with {}; convert with {}(...)", op,
                             typeName(fx), fx.literal ? "f32" : dtypeName(fx.dtype)));
      return Type::invalid();
    }
    if (other.kind == Type::Float && !fx.literal && !other.literal && fx.dtype != other.dtype) {
      error(loc, fmt::format("dtype mismatch: '{}' between {} and {}", op, dtypeName(x.dtype),
                             dtypeName(y.dtype)));
      return Type::invalid();
    }
    result = (x.kind == Type::Float && !x.literal) ? x : y.kind == Type::Float ? y : x;
    result.kind = Type::Float;
    result.literal = x.literal && y.literal;
    if (b.op == BinaryOp::Mod) {
      error(loc, "'%' needs integers");
      return Type::invalid();
    }
  } else {
    result.kind = Type::Int;
    result.literal = x.literal && y.literal;
  }
  result.uniform = t.uniform;
  if (isCompare) {
    result.kind = Type::Bool;
    result.literal = false;
  }
  return result;
}

Type Checker::call(const Call &c, llvm::SMLoc loc) {
  std::vector<Type> args;
  for (const Expr &a : c.args) {
    args.push_back(expr(a));
    if (args.back().kind == Type::Invalid)
      return Type::invalid();
  }
  Type t;
  if (auto d = dtypeFromName(c.callee)) {
    if (args.size() != 1 || (args[0].kind != Type::Int && args[0].kind != Type::Float)) {
      error(loc, fmt::format("conversion {}(...) takes one number", c.callee));
      return Type::invalid();
    }
    t = args[0];
    t.literal = false;
    t.kind = isFloat(*d) ? Type::Float : Type::Int;
    t.dtype = *d;
    return t;
  }
  const ExprFunctionInfo *f = findExprFunction(c.callee);
  if (!f) {
    std::vector<std::string_view> known = exprFunctionNames();
    for (const char *dtype : {"f32", "f16", "bf16", "i32", "u32", "f64"})
      known.push_back(dtype);
    error(loc, fmt::format("unknown function '{}'{}", c.callee, didYouMean(c.callee, known)));
    return Type::invalid();
  }
  if (args.size() != f->arity) {
    error(loc, fmt::format("'{}' takes {} argument{}, not {}", c.callee, f->arity,
                           f->arity == 1 ? "" : "s", args.size()));
    return Type::invalid();
  }
  if (f->needsConvergedWarp) {
    // Lowered with a full member mask (elect.sync and shfl.sync / vote.sync
    // with 0xffffffff): every lane of the warp must execute it together.
    for (const Control &ctl : control_) {
      if (ctl.uniform >= Convergence::Warp)
        continue;
      error(loc, fmt::format("'{}' must be executed by a whole warp, but it is under a condition "
                             "that can differ between threads of one warp",
                             c.callee));
      auto witness = ctl.cond && kernel_
                         ? divergenceWitness(ctl.cond, kernel_->launch.threads, 32)
                         : std::nullopt;
      diag_.note(ctl.loc, witness ? "the divergent condition is here: " + *witness
                                  : std::string("the divergent condition is here"));
      break;
    }
  }
  if (c.callee == "elect_sync") {
    t.kind = Type::Bool;
    t.uniform = Convergence::Thread;
    return t;
  }
  if (c.callee == "vote_any" || c.callee == "vote_all" || c.callee == "ballot") {
    if (args[0].kind != Type::Bool) {
      error(loc, fmt::format("'{}' takes a bool", c.callee));
      return Type::invalid();
    }
    t.kind = c.callee == "ballot" ? Type::Int : Type::Bool;
    t.uniform = Convergence::Warp;
    return t;
  }
  if (c.callee == "select") {
    if (args[0].kind != Type::Bool) {
      error(c.args[0]->loc, "select's condition must be a bool");
      return Type::invalid();
    }
    t = args[1];
    t.uniform = std::min({args[0].uniform, args[1].uniform, args[2].uniform});
    return t;
  }
  for (const Type &a : args)
    if (a.kind != Type::Int && a.kind != Type::Float) {
      error(loc, fmt::format("'{}' takes numbers, not {}", c.callee, typeName(a)));
      return Type::invalid();
    }
  t = args[0];
  if (f->name.substr(0, 4) == "shfl") {
    if (args[1].kind != Type::Int) {
      error(c.args[1]->loc, "a shuffle's lane or delta must be an integer");
      return Type::invalid();
    }
    t.uniform = Convergence::Thread;
    return t;
  }
  for (const Type &a : args)
    t.uniform = std::min(t.uniform, a.uniform);
  if (args.size() == 2 && args[1].kind == Type::Float && !args[1].literal)
    t = args[1];
  return t;
}

Type Checker::index(const Index &x, llvm::SMLoc loc) {
  // A barrier array element.
  if (x.base->kind == ExprKind::Var) {
    const Symbol *s = lookup(as<Var>(x.base).name);
    if (s && s->kind == Symbol::Barrier) {
      if (!s->barrierArray) {
        error(loc, fmt::format("'{}' is a single mbarrier, not an array", as<Var>(x.base).name));
        return Type::invalid();
      }
      if (x.subscripts.size() != 1 || x.subscripts[0].kind != Subscript::Point) {
        error(loc, "pick one mbarrier of an array with a single index");
        return Type::invalid();
      }
      if (!expectInt(x.subscripts[0].begin, "an mbarrier index"))
        return Type::invalid();
      Type t;
      t.kind = Type::BarrierRef;
      return t;
    }
  }
  Type base = expr(x.base);
  if (base.kind == Type::Invalid)
    return base;
  if (base.kind != Type::Region) {
    error(loc, fmt::format("cannot subscript {}", typeName(base)));
    return Type::invalid();
  }
  if (x.subscripts.size() > base.shape.size()) {
    error(loc, fmt::format("too many subscripts for '{}': {} given, {} dimension{} left",
                           base.bufferName, x.subscripts.size(), base.shape.size(),
                           base.shape.size() == 1 ? "" : "s"));
    return Type::invalid();
  }
  Type t = base;
  t.shape.clear();
  bool allPoints = true;
  for (size_t i = 0; i < base.shape.size(); ++i) {
    if (i >= x.subscripts.size()) {
      t.shape.push_back(base.shape[i]);
      allPoints = false;
      continue;
    }
    const Subscript &s = x.subscripts[i];
    const Affine &dim = base.shape[i];
    if (s.kind != Subscript::Full && !expectInt(s.begin, "a subscript"))
      return Type::invalid();
    if (s.end && !expectInt(s.end, "a subscript"))
      return Type::invalid();
    auto checkBound = [&](const Expr &at, const Affine &value, bool inclusive) {
      if (!value.isConstant() || !dim.isConstant())
        return true;
      int64_t v = value.constant;
      if (v < 0 || v > dim.constant || (!inclusive && v == dim.constant)) {
        error(at->loc, fmt::format("subscript {} is out of range for dimension {} of '{}' "
                                   "(extent {})",
                                   v, i, base.bufferName, dim.constant));
        return false;
      }
      return true;
    };
    switch (s.kind) {
    case Subscript::Point:
      if (!checkBound(s.begin, shapeTerm(s.begin), false))
        return Type::invalid();
      break;
    case Subscript::Range:
    case Subscript::Extent: {
      allPoints = false;
      Affine begin = shapeTerm(s.begin);
      Affine extent = s.kind == Subscript::Extent ? shapeTerm(s.end) : shapeTerm(s.end) - begin;
      if (extent.isConstant() && extent.constant < 1) {
        error(s.end->loc, fmt::format("empty or negative range (extent {})", extent.constant));
        return Type::invalid();
      }
      Affine last = begin;
      last.constant += extent.isConstant() ? extent.constant : 0;
      if (extent.isConstant() && !checkBound(s.begin, last, true))
        return Type::invalid();
      t.shape.push_back(extent);
      break;
    }
    case Subscript::Full:
      allPoints = false;
      t.shape.push_back(dim);
      break;
    }
  }
  if (allPoints) {
    // An element: its value has the element dtype.
    Type v;
    v.kind = isFloat(base.dtype) ? Type::Float : base.dtype == Dtype::pred ? Type::Bool : Type::Int;
    v.dtype = base.dtype;
    v.uniform = Convergence::Thread;
    v.buffer = base.buffer;
    v.bufferName = base.bufferName;
    return v;
  }
  return t;
}

void Checker::block(const Block &b) {
  push();
  for (const Stmt &s : b)
    stmt(s);
  pop();
}

bool Checker::assignable(const Type &value, Dtype target) const {
  if (value.kind == Type::Float)
    return isFloat(target) && (value.literal || value.dtype == target);
  if (value.kind == Type::Int)
    return isInteger(target) || (value.literal && isFloat(target));
  if (value.kind == Type::Bool)
    return target == Dtype::pred;
  return false;
}

void Checker::stmt(const Stmt &s) {
  switch (s->kind) {
  case StmtKind::BufferDecl:
    bufferDecl(as<BufferDecl>(s));
    return;
  case StmtKind::BarrierDecl: {
    const auto &b = as<BarrierDecl>(s);
    Symbol sym = Symbol::of(Symbol::Barrier, s->loc);
    if (b.arraySize) {
      sym.barrierArray = true;
      auto n = constantValue(b.arraySize);
      if (!n || *n < 1)
        error(b.arraySize->loc, "an mbarrier array size must be a positive integer constant");
      else
        checkBarrierArrayLimits(b, *n, targetInfo(kernel_->launch.target), diag_);
    }
    if (b.count) {
      auto c = constantValue(b.count);
      if (!c)
        expectInt(b.count, "an mbarrier arrival count");
      else if (*c < 1 || *c > (1 << 20) - 1)
        error(b.count->loc,
              fmt::format("mbarrier arrival count must be in [1, 2^20 - 1], not {}", *c));
    }
    if (!targetHas(kernel_->launch.target, TargetFeature::Sm90Plus))
      error(s->loc, fmt::format("mbarriers with transaction counts need sm_90a or newer; the "
                                "kernel targets {}",
                                targetInfo(kernel_->launch.target).name));
    define(b.name, std::move(sym));
    return;
  }
  case StmtKind::Let: {
    const auto &l = as<Let>(s);
    Type t = expr(l.value);
    if (t.kind == Type::Region || t.kind == Type::BarrierRef || t.kind == Type::String) {
      error(l.value->loc, fmt::format("'let' binds a scalar, not {}", typeName(t)));
      t = Type::invalid();
    }
    Symbol sym = Symbol::of(Symbol::Value, s->loc, t.dtype);
    sym.isInt = t.kind == Type::Int || t.kind == Type::Invalid;
    sym.isBool = t.kind == Type::Bool;
    sym.uniform = t.uniform;
    define(l.name, std::move(sym));
    return;
  }
  case StmtKind::For: {
    const auto &f = as<For>(s);
    Convergence u = Convergence::Grid;
    for (const Expr &e : {f.begin, f.end, f.step}) {
      Type t = expr(e);
      if (t.kind != Type::Invalid && t.kind != Type::Int)
        error(e->loc, fmt::format("loop bounds and step must be integers, not {}", typeName(t)));
      u = std::min(u, t.uniform);
    }
    if (auto step = constantValue(f.step); step && *step <= 0)
      error(f.step->loc, fmt::format("loop step must be positive, not {}", *step));
    // Threads that disagree on the trip count diverge inside the loop.
    control_.push_back({u, s->loc, nullptr});
    push();
    Symbol var = Symbol::of(Symbol::Value, s->loc);
    var.uniform = u;
    define(f.var, std::move(var));
    block(f.body);
    pop();
    control_.pop_back();
    return;
  }
  case StmtKind::If: {
    const auto &i = as<If>(s);
    Type c = expr(i.cond);
    if (c.kind != Type::Invalid && c.kind != Type::Bool)
      error(i.cond->loc, fmt::format("an 'if' condition must be a bool, not {}", typeName(c)));
    control_.push_back({c.uniform, s->loc, i.cond});
    block(i.thenBody);
    block(i.elseBody);
    control_.pop_back();
    return;
  }
  case StmtKind::Store: {
    const auto &st = as<Store>(s);
    Type target = expr(st.target);
    Type value = expr(st.value);
    if (target.kind == Type::Invalid || value.kind == Type::Invalid)
      return;
    if (target.kind == Type::Region || !target.buffer) {
      error(st.target->loc, "a store writes one element: give every dimension a point index");
      return;
    }
    if (target.buffer->kind == Symbol::Buffer && target.buffer->scope == MemScope::Tmem) {
      error(st.target->loc, "tensor memory is written with tcgen05.st or a tile primitive, not "
                            "a store");
      return;
    }
    if (!assignable(value, target.dtype))
      error(st.value->loc,
            fmt::format("dtype mismatch: cannot store {} into {} element of '{}'", typeName(value),
                        dtypeName(target.dtype), target.bufferName));
    return;
  }
  case StmtKind::CallStmt:
    callStmt(as<CallStmt>(s));
    return;
  }
}

void Checker::bufferDecl(const BufferDecl &b) {
  const TargetInfo &target = targetInfo(kernel_->launch.target);
  std::vector<int64_t> shape;
  bool constant = true;
  for (const Expr &d : b.shape) {
    if (!expectInt(d, "a buffer dimension")) {
      constant = false;
      continue;
    }
    auto v = constantValue(d);
    if (!v) {
      if (b.scope != MemScope::Global)
        error(d->loc, fmt::format("a {} buffer needs constant dimensions", memScopeName(b.scope)));
      constant = false;
    } else if (*v < 1) {
      error(d->loc, fmt::format("buffer dimension must be positive, not {}", *v));
      constant = false;
    } else {
      shape.push_back(*v);
    }
  }
  if (b.scope == MemScope::Tmem && !target.hasTensorMemory)
    error(b.loc, fmt::format("tensor memory needs sm_100a; the kernel targets {}", target.name));
  if (int64_t(b.shape.size()) > limits::kMaxRank) {
    error(b.loc, fmt::format("buffer '{}' has {} dimensions; at most {} are supported", b.name,
                             b.shape.size(), limits::kMaxRank));
    constant = false;
  }
  // Sizes before anything (the layout checks below included) is built by them.
  if (constant && !checkBufferLimits(b, shape, target, diag_))
    constant = false;
  if (b.layout && constant) {
    const Layout &l = b.layout->layout;
    if (!l.admits(shape)) {
      std::string dims;
      int64_t count = 1;
      for (size_t i = 0; i < shape.size(); ++i) {
        dims += (i ? ", " : "") + std::to_string(shape[i]);
        count *= shape[i];
      }
      error(b.layout->loc,
            fmt::format("layout holds {} elements but buffer '{}' of shape [{}] has {}", l.size(),
                        b.name, dims, count));
    }
    for (size_t a = 0; a < kNumAxes; ++a) {
      if (!(l.axesUsed() >> a & 1))
        continue;
      Axis axis = static_cast<Axis>(a);
      bool ok = true;
      switch (b.scope) {
      case MemScope::Global:
      case MemScope::Shared:
        ok = axis == Axis::m || axis == Axis::Bank;
        break;
      case MemScope::Reg:
        ok = axis == Axis::m || isThreadAxis(axis);
        break;
      case MemScope::Tmem:
        ok = axis == Axis::TLane || axis == Axis::TCol || isThreadAxis(axis);
        break;
      }
      if (!ok)
        error(b.layout->loc, fmt::format("a {} buffer cannot place data on axis {}",
                                         memScopeName(b.scope), axisName(axis)));
    }
  }
  Symbol sym = Symbol::of(Symbol::Buffer, b.loc, b.dtype);
  sym.scope = b.scope;
  sym.shape = b.shape;
  define(b.name, std::move(sym));
}

} // namespace check

unsigned checkModule(const Module &module, Diagnostics &diag) {
  unsigned before = diag.errorCount();
  std::map<std::string, llvm::SMLoc> names;
  for (const Kernel &k : module.kernels) {
    if (auto [it, fresh] = names.emplace(k.name, k.loc); !fresh) {
      diag.error(k.loc, fmt::format("kernel '{}' is already defined", k.name));
      diag.note(it->second, "previous definition is here");
    }
    if (checkSpaceDeclarations(k, diag))
      continue;
    if (k.space.empty()) {
      check::Checker(diag).kernel(k);
      continue;
    }
    // A kernel with parameters is checked at its points: the errors of the
    // first point that has any, with a note naming it.
    SpaceEnumeration points = enumerateSpace(k, kMaxPointsChecked);
    for (const SpacePoint &p : points.points) {
      if (p.instance.byConstraint)
        continue;
      if (!p.instance.kernel) {
        diag.error(p.instance.loc, p.instance.reason);
        diag.note(k.loc, fmt::format("at point {} of kernel '{}'", pointText(p.point), k.name));
        break;
      }
      Diagnostics quiet(diag.sourceMgr(), false);
      check::Checker(quiet).kernel(*p.instance.kernel);
      if (!quiet.hasErrors())
        continue;
      check::Checker(diag).kernel(*p.instance.kernel);
      diag.note(k.loc, fmt::format("at point {} of kernel '{}'", pointText(p.point), k.name));
      break;
    }
  }
  return diag.errorCount() - before;
}

} // namespace tilescope
