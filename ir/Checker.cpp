#include "ir/Checker.h"
#include "ir/Instantiate.h"

#include "ir/Affine.h"
#include "ir/DeviceScale.h"
#include "ir/Intrinsics.h"
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

namespace {

// What a name stands for.
struct Symbol {
  enum Kind { ShapeSymbol, Scalar, Tensor, Buffer, Barrier, Value } kind = Value;
  llvm::SMLoc loc;
  Dtype dtype = Dtype::i32;
  bool isInt = true; // Value / Scalar: an integer (else dtype-typed float or bool)
  bool isBool = false;
  Convergence uniform = Convergence::Grid;
  MemScope scope = MemScope::Global;
  std::vector<Expr> shape; // Tensor, Buffer
  bool barrierArray = false;

  static Symbol of(Kind kind, llvm::SMLoc loc, Dtype dtype = Dtype::i32) {
    Symbol s;
    s.kind = kind;
    s.loc = loc;
    s.dtype = dtype;
    return s;
  }
};

// The type of an expression.
struct Type {
  enum Kind { Invalid, Int, Float, Bool, String, Region, BarrierRef } kind = Invalid;
  Dtype dtype = Dtype::f32; // Float: its dtype; Region: element dtype
  bool literal = false;     // an untyped literal that adapts (0.0, 2)
  Convergence uniform = Convergence::Grid;
  std::vector<Affine> shape; // Region
  const Symbol *buffer = nullptr;
  std::string bufferName;

  static Type invalid() { return {}; }
};

std::string shapeText(const std::vector<Affine> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + shape[i].str();
  return out + "]";
}

// Shapes agree when they are equal after dropping unit dimensions.
bool sameShape(const std::vector<Affine> &a, const std::vector<Affine> &b) {
  auto squeeze = [](const std::vector<Affine> &s) {
    std::vector<Affine> out;
    for (const Affine &x : s)
      if (!(x.isConstant() && x.constant == 1))
        out.push_back(x);
    return out;
  };
  return squeeze(a) == squeeze(b);
}

std::string typeName(const Type &t) {
  switch (t.kind) {
  case Type::Invalid:
    return "<invalid>";
  case Type::Int:
    return "integer";
  case Type::Float:
    return t.literal ? "float literal" : std::string(dtypeName(t.dtype));
  case Type::Bool:
    return "bool";
  case Type::String:
    return "string";
  case Type::Region:
    return fmt::format("{} region {}", dtypeName(t.dtype), shapeText(t.shape));
  case Type::BarrierRef:
    return "mbarrier";
  }
  return "?";
}

class Checker {
public:
  explicit Checker(Diagnostics &diag) : diag_(diag) {}

  void kernel(const Kernel &k);

private:
  // --- scopes ---
  void push() { scopes_.emplace_back(); }
  void pop() { scopes_.pop_back(); }
  std::vector<std::string_view> visibleNames() const {
    std::vector<std::string_view> out;
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      for (const auto &entry : *it)
        out.push_back(entry.first);
    return out;
  }
  const Symbol *lookup(const std::string &name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto f = it->find(name); f != it->end())
        return &f->second;
    return nullptr;
  }
  void define(const std::string &name, Symbol sym) {
    if (const Symbol *prev = lookup(name)) {
      diag_.error(sym.loc, fmt::format("'{}' is already defined", name));
      diag_.note(prev->loc, "previous definition is here");
      return;
    }
    scopes_.back().emplace(name, std::move(sym));
  }
  void error(llvm::SMLoc loc, const std::string &msg) { diag_.error(loc, msg); }
  // A dimension or subscript in normal form, with the where clause's
  // equalities substituted (WhereFacts.h): `C` is 1024 under `where C == 1024`.
  Affine shapeTerm(const Expr &e) const {
    return Affine::of(whereFacts_.empty() ? e : substitute(e, whereFacts_));
  }

  // --- expressions ---
  Type expr(const Expr &e);
  Type index(const Index &x, llvm::SMLoc loc);
  Type binary(const Binary &b, llvm::SMLoc loc);
  Type call(const Call &c, llvm::SMLoc loc);
  bool expectInt(const Expr &e, const char *what);
  bool onlySymbols(const Expr &e, const char *what);
  // The builtins an expression names bound its uniformity from below; its
  // values decide it: `tid_in_wg < 64` is warp-uniform although tid_in_wg
  // is not (ThreadUniformity.h).
  Type refineUniformity(const Expr &e, Type t) const {
    if (t.kind != Type::Int && t.kind != Type::Bool)
      return t;
    if (t.uniform < Convergence::Grid)
      if (auto u = kernel_ ? threadUniformity(e, kernel_->launch.threads) : std::nullopt)
        t.uniform = std::max(t.uniform, *u);
    return t;
  }
  Convergence controlUniformity() const {
    Convergence c = Convergence::Grid;
    for (const auto &ctl : control_)
      c = std::min(c, ctl.uniform);
    return c;
  }

  // --- statements ---
  void block(const Block &b);
  void stmt(const Stmt &s);
  void bufferDecl(const BufferDecl &b);
  void callStmt(const CallStmt &c);
  void wgmmaShape(const CallStmt &c, const std::vector<Type> &args);
  void primitiveShapes(const CallStmt &c, const std::string &name, const IntrinsicInfo &info,
                       const std::vector<Type> &args);
  bool assignable(const Type &value, Dtype target) const;

  Diagnostics &diag_;
  std::vector<std::map<std::string, Symbol>> scopes_;
  // Enclosing conditions (a loop's: its bounds; null cond).
  struct Control {
    Convergence uniform;
    llvm::SMLoc loc;
    Expr cond;
  };
  std::vector<Control> control_;
  const Kernel *kernel_ = nullptr;
  std::map<std::string, Expr> whereFacts_;
};

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
  whereFacts_.clear();
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
  whereFacts_ = whereEqualities(k.constraints);
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
  Type x = expr(b.lhs), y = expr(b.rhs);
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

void Checker::callStmt(const CallStmt &c) {
  const IntrinsicInfo *info = findIntrinsic(c.callee);
  std::string shown = c.scope == ExecScope::Thread
                          ? c.callee
                          : std::string(execScopePrefix(c.scope)) + "." + c.callee;
  if (!info) {
    error(c.loc, fmt::format("unknown call '{}'{}", shown, didYouMean(c.callee, intrinsicNames())));
    return;
  }
  if (info->cls == CallClass::Native && c.scope != ExecScope::Thread) {
    error(c.loc, fmt::format("'{}' is a native intrinsic and takes no scope prefix", c.callee));
    return;
  }
  if (info->id == IntrinsicId::Sync && c.scope == ExecScope::Thread) {
    error(c.loc, "'sync' needs a scope: warp.sync(), cta.sync() or cluster.sync()");
    return;
  }
  if (isDeviceCall(info->id) && kernel_->launch.devices.empty()) {
    error(c.loc, fmt::format("'{}' reaches other devices; the kernel needs `launch devices(N)`",
                             c.callee));
    return;
  }
  if (!targetHas(kernel_->launch.target, info->feature)) {
    error(c.loc,
          fmt::format("'{}' needs {}; the kernel targets {}", shown,
                      featureDescription(info->feature), targetInfo(kernel_->launch.target).name));
  }
  // Arguments: positional first, then keywords, each of the kind the table says.
  size_t positional = 0;
  std::vector<Type> types;
  std::map<std::string, bool> seen;
  auto checkKind = [&](const CallArg &arg, const ParamSpec &spec, const Type &t) {
    bool ok = false;
    switch (spec.kind) {
    case ArgKind::Buffer:
      // a device flag is one element of a global integer tensor
      ok = t.kind == Type::Region || (isDeviceCall(info->id) && spec.name == "flag" &&
                                      arg.value->kind == ExprKind::Index && t.kind == Type::Int);
      break;
    case ArgKind::Barrier:
      ok = t.kind == Type::BarrierRef;
      break;
    case ArgKind::Int:
      ok = t.kind == Type::Int;
      break;
    case ArgKind::Bool:
      ok = t.kind == Type::Bool;
      break;
    case ArgKind::Number:
      ok = t.kind == Type::Int || t.kind == Type::Float;
      break;
    case ArgKind::String:
      ok = t.kind == Type::String;
      break;
    case ArgKind::Operand:
      ok = t.kind == Type::Region || t.kind == Type::Int || t.kind == Type::Float;
      break;
    }
    static const char *kindNames[] = {
        "a buffer or region", "an mbarrier", "an integer",          "a bool",
        "a number",           "a string",    "a region or a scalar"};
    if (!ok && t.kind != Type::Invalid)
      error(arg.value->loc,
            fmt::format("argument '{}' of '{}' must be {}, not {}", spec.name, shown,
                        kindNames[static_cast<int>(spec.kind)], typeName(t)));
    // A string with enumerated values (the table's `allowed`): one of them.
    if (ok && !spec.allowed.empty() && arg.value->kind == ExprKind::StringImm &&
        std::find(spec.allowed.begin(), spec.allowed.end(), as<StringImm>(arg.value).value) ==
            spec.allowed.end()) {
      std::string values;
      for (std::string_view v : spec.allowed)
        values += fmt::format("{}'{}'", values.empty() ? "" : ", ", v);
      error(arg.value->loc, fmt::format("argument '{}' of '{}' is one of {}, not '{}'", spec.name,
                                        shown, values, as<StringImm>(arg.value).value));
      return false;
    }
    return ok;
  };
  bool argsOk = true;
  for (const CallArg &arg : c.args) {
    Type t = expr(arg.value);
    if (arg.keyword.empty()) {
      if (!seen.empty()) {
        error(arg.loc, "positional arguments come before keyword arguments");
        argsOk = false;
      } else if (positional >= info->positional.size()) {
        error(arg.loc,
              fmt::format("'{}' takes {} positional argument{}", shown, info->positional.size(),
                          info->positional.size() == 1 ? "" : "s"));
        argsOk = false;
      } else {
        argsOk &= checkKind(arg, info->positional[positional], t);
        types.push_back(t);
      }
      ++positional;
      continue;
    }
    const ParamSpec *spec = nullptr;
    for (const ParamSpec &k : info->keywords)
      if (k.name == arg.keyword)
        spec = &k;
    if (!spec) {
      std::string known;
      for (const ParamSpec &k : info->keywords)
        known += (known.empty() ? "" : ", ") + std::string(k.name);
      error(arg.loc, fmt::format("'{}' has no argument '{}'{}", shown, arg.keyword,
                                 known.empty() ? "" : " (it takes " + known + ")"));
      argsOk = false;
      continue;
    }
    if (seen[arg.keyword]) {
      error(arg.loc, fmt::format("argument '{}' given twice", arg.keyword));
      argsOk = false;
    }
    seen[arg.keyword] = true;
    argsOk &= checkKind(arg, *spec, t);
  }
  for (size_t i = positional; i < info->positional.size(); ++i)
    if (info->positional[i].required) {
      error(c.loc, fmt::format("'{}' is missing argument '{}'", shown, info->positional[i].name));
      argsOk = false;
    }
  for (const ParamSpec &k : info->keywords)
    if (k.required && !seen[std::string(k.name)]) {
      error(c.loc, fmt::format("'{}' is missing argument '{} = ...'", shown, k.name));
      argsOk = false;
    }

  // Convergence: every thread of the scope must reach the call together.
  Convergence need = std::max(convergenceOf(c.scope), info->convergence);
  for (const Control &ctl : control_) {
    if (ctl.uniform < need) {
      error(c.loc, fmt::format("'{}' must be executed by a whole {}, but it is under a condition "
                               "that can differ between threads of one {}",
                               shown, convergenceName(need), convergenceName(need)));
      int64_t group = need == Convergence::Warp        ? 32
                      : need == Convergence::Warpgroup ? 128
                                                       : kernel_->launch.threads;
      auto witness =
          ctl.cond ? divergenceWitness(ctl.cond, kernel_->launch.threads, group) : std::nullopt;
      diag_.note(ctl.loc, witness ? "the divergent condition is here: " + *witness
                                  : std::string("the divergent condition is here"));
      break;
    }
  }
  if (argsOk && info->cls == CallClass::TilePrimitive)
    primitiveShapes(c, shown, *info, types);
  if (argsOk && info->id == IntrinsicId::WgmmaMmaAsync)
    wgmmaShape(c, types);
}

// transpose_a / transpose_b of a gemm-like call (absent or not literally true: false).
std::pair<bool, bool> transposes(const CallStmt &c) {
  auto flag = [&](const char *kw) {
    const CallArg *a = c.keyword(kw);
    return a && a->value->kind == ExprKind::BoolImm && as<BoolImm>(a->value).value;
  };
  return {flag("transpose_a"), flag("transpose_b")};
}

// M, N and K of C = A x B as each operand states them (2-D regions).
struct GemmDims {
  Affine m, n, am, ak, bk, bn;
  bool agree() const { return am == m && bn == n && ak == bk; }
};
GemmDims gemmDims(const std::vector<Type> &args, bool ta, bool tb) {
  return {args[0].shape[0],          args[0].shape[1],          args[1].shape[ta ? 1 : 0],
          args[1].shape[ta ? 0 : 1], args[2].shape[tb ? 1 : 0], args[2].shape[tb ? 0 : 1]};
}

// A native wgmma.mma_async is one instruction of the MMA table
// (ir/MmaShapes.h) per step of K: for the accumulator and operand dtypes, M
// is the row's (64), N in the row's range (multiples of 8 up to 256), K a
// multiple of the row's (16 for f16/bf16, 32 for fp8); the lowering issues
// one instruction per step.
void Checker::wgmmaShape(const CallStmt &c, const std::vector<Type> &args) {
  for (size_t i = 0; i < 3; ++i)
    if (args[i].kind != Type::Region || args[i].shape.size() != 2)
      return error(c.args[i].value->loc,
                   fmt::format("'{}' operand {} must be a 2-D region", c.callee, i));
  auto [ta, tb] = transposes(c);
  GemmDims d = gemmDims(args, ta, tb);
  const Affine &m = d.m, &n = d.n, &ak = d.ak;
  if (!m.isConstant() || !n.isConstant() || !ak.isConstant() || !d.agree())
    return error(c.loc, fmt::format("shape mismatch in '{}': acc {} = A {}{} x B "
                                    "{}{} needs constant M, N and K that agree",
                                    c.callee, shapeText(args[0].shape), shapeText(args[1].shape),
                                    ta ? "^T" : "", shapeText(args[2].shape), tb ? "^T" : ""));
  const MmaShape *row =
      findMmaShape(kernel_->launch.target, *intrinsic(IntrinsicId::WgmmaMmaAsync).mma,
                   args[0].dtype, args[1].dtype, args[2].dtype);
  if (!row)
    return error(c.loc,
                 fmt::format("'{}' has no {} instruction computing {} += {} x {}", c.callee,
                             targetInfo(kernel_->launch.target).name, dtypeName(args[0].dtype),
                             dtypeName(args[1].dtype), dtypeName(args[2].dtype)));
  int64_t k = row->k, nv = n.constant;
  if (m.constant != row->m || nv < row->nMin || nv > row->nMax ||
      (nv - row->nMin) % row->nStep != 0 || ak.constant < k || ak.constant % k != 0)
    error(c.loc,
          fmt::format("'{}' issues m{}nNk{} instructions (N a multiple of {} "
                      "up to {}, K a multiple of {}), not m{}n{}k{}; use the tile "
                      "primitive 'wg.gemm' for other shapes",
                      c.callee, row->m, k, row->nStep, row->nMax, k, m.constant, nv, ak.constant));
}

void Checker::primitiveShapes(const CallStmt &c, const std::string &name, const IntrinsicInfo &info,
                              const std::vector<Type> &args) {
  const std::string &op = c.callee;
  auto loc = [&](size_t i) { return c.args[i].value->loc; };
  auto needShapes = [&](size_t i, size_t j, const char *what) {
    if (args[i].kind == Type::Region && args[j].kind == Type::Region &&
        !sameShape(args[i].shape, args[j].shape))
      error(loc(j), fmt::format("shape mismatch in '{}': {} is {} but {} is {}", name,
                                info.positional[i].name, shapeText(args[i].shape),
                                info.positional[j].name, shapeText(args[j].shape)));
    (void)what;
  };
  auto needDtype = [&](size_t i, size_t j) {
    if (args[i].kind == Type::Region && args[j].kind == Type::Region &&
        args[i].dtype != args[j].dtype)
      error(loc(j), fmt::format("dtype mismatch in '{}': {} is {} but {} is {}{}", name,
                                info.positional[i].name, dtypeName(args[i].dtype),
                                info.positional[j].name, dtypeName(args[j].dtype),
                                info.id == IntrinsicId::Copy || info.id == IntrinsicId::CopyAsync
                                    ? " (use cast)"
                                    : ""));
  };
  if (info.id == IntrinsicId::Copy || info.id == IntrinsicId::CopyAsync) {
    needShapes(0, 1, "");
    needDtype(0, 1);
    if (info.id == IntrinsicId::CopyAsync && args[0].buffer && args[1].buffer) {
      MemScope d = args[0].buffer->scope, s = args[1].buffer->scope;
      if (!((d == MemScope::Shared && s == MemScope::Global) ||
            (d == MemScope::Global && s == MemScope::Shared)))
        error(c.loc, fmt::format("copy_async moves between global and shared memory, not {} to {}",
                                 memScopeName(s), memScopeName(d)));
    }
  } else if (info.id == IntrinsicId::Cast) {
    needShapes(0, 1, "");
  } else if (info.id == IntrinsicId::Fill) {
    if (args[1].kind == Type::Float && !args[1].literal && args[1].dtype != args[0].dtype)
      error(loc(1), fmt::format("dtype mismatch in 'fill': {} value for a {} buffer",
                                dtypeName(args[1].dtype), dtypeName(args[0].dtype)));
  } else if (info.id == IntrinsicId::Gemm || info.id == IntrinsicId::GemmAsync) {
    for (size_t i = 0; i < 3; ++i)
      if (args[i].shape.size() != 2) {
        error(loc(i), fmt::format("'{}' operand {} must be 2-D, not {}", name,
                                  info.positional[i].name, shapeText(args[i].shape)));
        return;
      }
    auto [ta, tb] = transposes(c);
    if (!gemmDims(args, ta, tb).agree())
      error(c.loc, fmt::format("shape mismatch in '{}': C {} = A {}{} x B {}{} needs M, N and K "
                               "to agree",
                               name, shapeText(args[0].shape), shapeText(args[1].shape),
                               ta ? "^T" : "", shapeText(args[2].shape), tb ? "^T" : ""));
    needDtype(1, 2);
    if (args[0].dtype != Dtype::f32 && args[0].dtype != Dtype::f16)
      error(loc(0),
            fmt::format("'{}' accumulates in f32 or f16, not {}", name, dtypeName(args[0].dtype)));
  } else if (op.rfind("reduce_", 0) == 0) {
    const CallArg *axisArg = c.keyword("axis");
    if (axisArg) {
      auto axis = constantValue(axisArg->value);
      if (!axis || *axis < 0 || *axis >= static_cast<int64_t>(args[1].shape.size())) {
        error(axisArg->value->loc,
              fmt::format("reduction axis must be a constant in [0, {})", args[1].shape.size()));
        return;
      }
      std::vector<Affine> expect = args[1].shape;
      expect.erase(expect.begin() + *axis);
      if (!sameShape(expect, args[0].shape))
        error(loc(0), fmt::format("shape mismatch in '{}': reducing {} over axis {} gives {}, "
                                  "not {}",
                                  name, shapeText(args[1].shape), *axis, shapeText(expect),
                                  shapeText(args[0].shape)));
    } else if (!sameShape(args[0].shape, {})) {
      error(loc(0), fmt::format("'{}' over every axis writes one element, not {}", name,
                                shapeText(args[0].shape)));
    }
    needDtype(0, 1);
  } else if (info.positional.size() >= 2 && info.positional[1].kind == ArgKind::Operand) {
    // Elementwise: regions match the destination; scalars adapt.
    for (size_t i = 1; i < args.size(); ++i) {
      if (args[i].kind == Type::Region) {
        needShapes(0, i, "");
        needDtype(0, i);
      } else if (args[i].kind == Type::Float && !args[i].literal &&
                 args[i].dtype != args[0].dtype) {
        error(loc(i), fmt::format("dtype mismatch in '{}': {} scalar for a {} destination", name,
                                  dtypeName(args[i].dtype), dtypeName(args[0].dtype)));
      }
    }
  }
}

} // namespace

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
      Checker(diag).kernel(k);
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
      Checker(quiet).kernel(*p.instance.kernel);
      if (!quiet.hasErrors())
        continue;
      Checker(diag).kernel(*p.instance.kernel);
      diag.note(k.loc, fmt::format("at point {} of kernel '{}'", pointText(p.point), k.name));
      break;
    }
  }
  return diag.errorCount() - before;
}

} // namespace tilescope
