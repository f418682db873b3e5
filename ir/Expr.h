// Expressions of the tile IR: a closed set of immutable nodes, each built by
// a `make` that checks its invariants and remembers its source location.
// Nothing here knows about Z3, CUDA or the simulator.
#pragma once

#include "ir/Dtype.h"

#include <llvm/Support/SMLoc.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

enum class ExprKind : uint8_t {
  IntImm,
  FloatImm,
  BoolImm,
  StringImm,
  Var,
  Builtin,
  Unary,
  Binary,
  Call,
  Index,
};

struct ExprNode {
  const ExprKind kind;
  const llvm::SMLoc loc;
  virtual ~ExprNode() = default;

protected:
  ExprNode(ExprKind k, llvm::SMLoc l) : kind(k), loc(l) {}
};
using Expr = std::shared_ptr<const ExprNode>;

// An integer literal (index arithmetic, shapes, counts).
struct IntImm final : ExprNode {
  int64_t value;
  static Expr make(int64_t value, llvm::SMLoc loc = {});
  IntImm(int64_t v, llvm::SMLoc l) : ExprNode(ExprKind::IntImm, l), value(v) {}
};

// A floating-point literal; its dtype follows from where it is used.
struct FloatImm final : ExprNode {
  double value;
  static Expr make(double value, llvm::SMLoc loc = {});
  FloatImm(double v, llvm::SMLoc l) : ExprNode(ExprKind::FloatImm, l), value(v) {}
};

struct BoolImm final : ExprNode {
  bool value;
  static Expr make(bool value, llvm::SMLoc loc = {});
  BoolImm(bool v, llvm::SMLoc l) : ExprNode(ExprKind::BoolImm, l), value(v) {}
};

// A string literal: only as an enumerated argument, e.g. shape = "32x32b".
struct StringImm final : ExprNode {
  std::string value;
  static Expr make(std::string value, llvm::SMLoc loc = {});
  StringImm(std::string v, llvm::SMLoc l) : ExprNode(ExprKind::StringImm, l), value(std::move(v)) {}
};

// A name: a let binding, loop variable, shape symbol, scalar parameter,
// buffer or barrier. The checker resolves which.
struct Var final : ExprNode {
  std::string name;
  static Expr make(std::string name, llvm::SMLoc loc = {});
  Var(std::string n, llvm::SMLoc l) : ExprNode(ExprKind::Var, l), name(std::move(n)) {}
};

// Hardware indices a thread can ask for. How uniform each one is (per thread,
// warp, warpgroup, CTA) decides which scoped calls may run under it.
enum class BuiltinKind : uint8_t {
  laneid,
  warpid,
  wgid,
  tid_in_wg,
  wid_in_wg,
  threadIdx_x,
  blockIdx_x,
  blockIdx_y,
  blockIdx_z,
  clusterCtaIdx_x,
  clusterCtaIdx_y,
  clusterCtaIdx_z,
};
std::string_view builtinName(BuiltinKind b);
std::optional<BuiltinKind> builtinFromName(std::string_view name);

struct Builtin final : ExprNode {
  BuiltinKind which;
  static Expr make(BuiltinKind which, llvm::SMLoc loc = {});
  Builtin(BuiltinKind w, llvm::SMLoc l) : ExprNode(ExprKind::Builtin, l), which(w) {}
};

enum class UnaryOp : uint8_t { Neg, Not };
struct Unary final : ExprNode {
  UnaryOp op;
  Expr operand;
  static Expr make(UnaryOp op, Expr operand, llvm::SMLoc loc = {});
  Unary(UnaryOp o, Expr a, llvm::SMLoc l)
      : ExprNode(ExprKind::Unary, l), op(o), operand(std::move(a)) {}
};

enum class BinaryOp : uint8_t { Add, Sub, Mul, Div, Mod, Lt, Le, Gt, Ge, Eq, Ne, And, Or };
std::string_view binaryOpSpelling(BinaryOp op);
// Binding strength: || 1, && 2, == != 3, < <= > >= 4, + - 5, * / % 6.
int binaryOpPrecedence(BinaryOp op);

struct Binary final : ExprNode {
  BinaryOp op;
  Expr lhs, rhs;
  static Expr make(BinaryOp op, Expr lhs, Expr rhs, llvm::SMLoc loc = {});
  Binary(BinaryOp o, Expr a, Expr b, llvm::SMLoc l)
      : ExprNode(ExprKind::Binary, l), op(o), lhs(std::move(a)), rhs(std::move(b)) {}
};

// A function-style expression: math (min, max, exp, rsqrt, ...), warp
// collectives (shfl_xor, elect_sync, ...) and conversions written as the
// dtype's name, f32(x). The checker knows the list.
struct Call final : ExprNode {
  std::string callee;
  std::vector<Expr> args;
  static Expr make(std::string callee, std::vector<Expr> args, llvm::SMLoc loc = {});
  Call(std::string c, std::vector<Expr> a, llvm::SMLoc l)
      : ExprNode(ExprKind::Call, l), callee(std::move(c)), args(std::move(a)) {}
};

// One subscript of an Index: a point `i`, a range `a : b`, an extent
// `a : +n`, or the whole dimension `:`.
struct Subscript {
  enum Kind : uint8_t { Point, Range, Extent, Full } kind = Point;
  Expr begin; // Point, Range, Extent
  Expr end;   // Range: the end; Extent: the length
};

// Subscripting: an element load when every subscript is a point and all
// dimensions are given, otherwise a region of a buffer (tile primitive
// operands). Chains (As[s][0 : +64, :]) subscript what remains.
struct Index final : ExprNode {
  Expr base;
  std::vector<Subscript> subscripts;
  static Expr make(Expr base, std::vector<Subscript> subscripts, llvm::SMLoc loc = {});
  Index(Expr b, std::vector<Subscript> s, llvm::SMLoc l)
      : ExprNode(ExprKind::Index, l), base(std::move(b)), subscripts(std::move(s)) {}
};

template <typename T> const T &as(const Expr &e) {
  return static_cast<const T &>(*e);
}

// Structural equality, ignoring source locations.
bool equal(const Expr &a, const Expr &b);
bool equal(const std::vector<Expr> &a, const std::vector<Expr> &b);

// Element-wise `equal` of two lists of nodes (expressions, statements).
template <typename Node> bool equalLists(const std::vector<Node> &a, const std::vector<Node> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!equal(a[i], b[i]))
      return false;
  return true;
}

// One integer operation as the IR means it (64-bit, C division): comparisons
// and logic give 0 or 1; overflow and division by zero give nothing.
std::optional<int64_t> foldIntBinary(BinaryOp op, int64_t x, int64_t y);

// Folds an integer expression of literals; nothing if it has names in it.
std::optional<int64_t> constantValue(const Expr &e);

} // namespace tilescope
