#include "ir/Expr.h"

#include "ir/Invariant.h"
#include <array>
#include <cmath>

namespace tilescope {

namespace {
struct BuiltinSpelling {
  BuiltinKind kind;
  std::string_view name;  // canonical
  std::string_view alias; // short form accepted on input
};
constexpr std::array<BuiltinSpelling, 12> kBuiltins = {{
    {BuiltinKind::laneid, "laneid", ""},
    {BuiltinKind::warpid, "warpid", ""},
    {BuiltinKind::wgid, "wgid", ""},
    {BuiltinKind::tid_in_wg, "tid_in_wg", ""},
    {BuiltinKind::wid_in_wg, "wid_in_wg", ""},
    {BuiltinKind::threadIdx_x, "threadIdx.x", "tx"},
    {BuiltinKind::blockIdx_x, "blockIdx.x", "bx"},
    {BuiltinKind::blockIdx_y, "blockIdx.y", "by"},
    {BuiltinKind::blockIdx_z, "blockIdx.z", "bz"},
    {BuiltinKind::clusterCtaIdx_x, "clusterCtaIdx.x", "cbx"},
    {BuiltinKind::clusterCtaIdx_y, "clusterCtaIdx.y", "cby"},
    {BuiltinKind::clusterCtaIdx_z, "clusterCtaIdx.z", "cbz"},
}};
} // namespace

std::string_view builtinName(BuiltinKind b) {
  return kBuiltins[static_cast<size_t>(b)].name;
}

std::optional<BuiltinKind> builtinFromName(std::string_view name) {
  for (const BuiltinSpelling &s : kBuiltins)
    if (s.name == name || (!s.alias.empty() && s.alias == name))
      return s.kind;
  return std::nullopt;
}

std::string_view binaryOpSpelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::Mod:
    return "%";
  case BinaryOp::Lt:
    return "<";
  case BinaryOp::Le:
    return "<=";
  case BinaryOp::Gt:
    return ">";
  case BinaryOp::Ge:
    return ">=";
  case BinaryOp::Eq:
    return "==";
  case BinaryOp::Ne:
    return "!=";
  case BinaryOp::And:
    return "&&";
  case BinaryOp::Or:
    return "||";
  }
  return "?";
}

int binaryOpPrecedence(BinaryOp op) {
  switch (op) {
  case BinaryOp::Or:
    return 1;
  case BinaryOp::And:
    return 2;
  case BinaryOp::Eq:
  case BinaryOp::Ne:
    return 3;
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    return 4;
  case BinaryOp::Add:
  case BinaryOp::Sub:
    return 5;
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Mod:
    return 6;
  }
  return 0;
}

Expr IntImm::make(int64_t value, llvm::SMLoc loc) {
  return std::make_shared<IntImm>(value, loc);
}

Expr FloatImm::make(double value, llvm::SMLoc loc) {
  TILESCOPE_INVARIANT(std::isfinite(value), "float literals are finite");
  return std::make_shared<FloatImm>(value, loc);
}

Expr BoolImm::make(bool value, llvm::SMLoc loc) {
  return std::make_shared<BoolImm>(value, loc);
}

Expr StringImm::make(std::string value, llvm::SMLoc loc) {
  return std::make_shared<StringImm>(std::move(value), loc);
}

Expr Var::make(std::string name, llvm::SMLoc loc) {
  TILESCOPE_INVARIANT(!name.empty(), "a variable has a name");
  return std::make_shared<Var>(std::move(name), loc);
}

Expr Builtin::make(BuiltinKind which, llvm::SMLoc loc) {
  return std::make_shared<Builtin>(which, loc);
}

Expr Unary::make(UnaryOp op, Expr operand, llvm::SMLoc loc) {
  TILESCOPE_INVARIANT(operand, "unary needs an operand");
  return std::make_shared<Unary>(op, std::move(operand), loc);
}

Expr Binary::make(BinaryOp op, Expr lhs, Expr rhs, llvm::SMLoc loc) {
  TILESCOPE_INVARIANT(lhs && rhs, "binary needs two operands");
  return std::make_shared<Binary>(op, std::move(lhs), std::move(rhs), loc);
}

Expr Call::make(std::string callee, std::vector<Expr> args, llvm::SMLoc loc) {
  TILESCOPE_INVARIANT(!callee.empty(), "a call names its callee");
  for (const Expr &a : args)
    TILESCOPE_INVARIANT(a, "call arguments are expressions");
  return std::make_shared<Call>(std::move(callee), std::move(args), loc);
}

Expr Index::make(Expr base, std::vector<Subscript> subscripts, llvm::SMLoc loc) {
  TILESCOPE_INVARIANT(base && !subscripts.empty(), "an index has a base and subscripts");
  for (const Subscript &s : subscripts) {
    TILESCOPE_INVARIANT((s.kind == Subscript::Full) == !s.begin, "only `:` has no begin");
    TILESCOPE_INVARIANT((s.kind == Subscript::Range || s.kind == Subscript::Extent) == bool(s.end),
                        "only ranges and extents have an end");
  }
  return std::make_shared<Index>(std::move(base), std::move(subscripts), loc);
}

bool equal(const std::vector<Expr> &a, const std::vector<Expr> &b) {
  return equalLists(a, b);
}

bool equal(const Expr &a, const Expr &b) {
  if (!a || !b)
    return !a && !b;
  if (a->kind != b->kind)
    return false;
  switch (a->kind) {
  case ExprKind::IntImm:
    return as<IntImm>(a).value == as<IntImm>(b).value;
  case ExprKind::FloatImm:
    return as<FloatImm>(a).value == as<FloatImm>(b).value;
  case ExprKind::BoolImm:
    return as<BoolImm>(a).value == as<BoolImm>(b).value;
  case ExprKind::StringImm:
    return as<StringImm>(a).value == as<StringImm>(b).value;
  case ExprKind::Var:
    return as<Var>(a).name == as<Var>(b).name;
  case ExprKind::Builtin:
    return as<Builtin>(a).which == as<Builtin>(b).which;
  case ExprKind::Unary:
    return as<Unary>(a).op == as<Unary>(b).op && equal(as<Unary>(a).operand, as<Unary>(b).operand);
  case ExprKind::Binary: {
    const auto &x = as<Binary>(a), &y = as<Binary>(b);
    return x.op == y.op && equal(x.lhs, y.lhs) && equal(x.rhs, y.rhs);
  }
  case ExprKind::Call:
    return as<Call>(a).callee == as<Call>(b).callee && equal(as<Call>(a).args, as<Call>(b).args);
  case ExprKind::Index: {
    const auto &x = as<Index>(a), &y = as<Index>(b);
    if (!equal(x.base, y.base) || x.subscripts.size() != y.subscripts.size())
      return false;
    for (size_t i = 0; i < x.subscripts.size(); ++i) {
      const Subscript &s = x.subscripts[i], &t = y.subscripts[i];
      if (s.kind != t.kind || !equal(s.begin, t.begin) || !equal(s.end, t.end))
        return false;
    }
    return true;
  }
  }
  return false;
}

std::optional<int64_t> foldIntBinary(BinaryOp op, int64_t x, int64_t y) {
  int64_t r = 0;
  switch (op) {
  case BinaryOp::Add:
    return __builtin_add_overflow(x, y, &r) ? std::nullopt : std::optional<int64_t>(r);
  case BinaryOp::Sub:
    return __builtin_sub_overflow(x, y, &r) ? std::nullopt : std::optional<int64_t>(r);
  case BinaryOp::Mul:
    return __builtin_mul_overflow(x, y, &r) ? std::nullopt : std::optional<int64_t>(r);
  case BinaryOp::Div:
  case BinaryOp::Mod:
    if (y == 0 || (x == INT64_MIN && y == -1))
      return std::nullopt;
    return op == BinaryOp::Div ? x / y : x % y;
  case BinaryOp::Lt:
    return int64_t(x < y);
  case BinaryOp::Le:
    return int64_t(x <= y);
  case BinaryOp::Gt:
    return int64_t(x > y);
  case BinaryOp::Ge:
    return int64_t(x >= y);
  case BinaryOp::Eq:
    return int64_t(x == y);
  case BinaryOp::Ne:
    return int64_t(x != y);
  case BinaryOp::And:
    return int64_t(x && y);
  case BinaryOp::Or:
    return int64_t(x || y);
  }
  return std::nullopt;
}

std::optional<int64_t> constantValue(const Expr &e) {
  if (!e)
    return std::nullopt;
  switch (e->kind) {
  case ExprKind::IntImm:
    return as<IntImm>(e).value;
  case ExprKind::Unary: {
    const auto &u = as<Unary>(e);
    auto v = constantValue(u.operand);
    if (!v || u.op != UnaryOp::Neg)
      return std::nullopt;
    return -*v;
  }
  case ExprKind::Binary: {
    const auto &b = as<Binary>(e);
    auto x = constantValue(b.lhs), y = constantValue(b.rhs);
    if (!x || !y)
      return std::nullopt;
    // Arithmetic only: a comparison is not an integer constant of the IR.
    if (binaryOpPrecedence(b.op) < 5)
      return std::nullopt;
    return foldIntBinary(b.op, *x, *y);
  }
  default:
    return std::nullopt;
  }
}

} // namespace tilescope
