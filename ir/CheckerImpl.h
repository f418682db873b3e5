// Internal to the checker (ir/Checker.h): the checker's scopes and types
// and its parts, one file each: Checker.cpp (kernels, expressions,
// statements), CheckerCalls.cpp (calls against the intrinsic table, tile
// primitive shapes, the wgmma shape rule).
#pragma once

#include "ir/Checker.h"

#include "ir/Affine.h"
#include "ir/DeviceScale.h"
#include "ir/Intrinsics.h"
#include "ir/Printer.h"
#include "ir/SizeLimits.h"
#include "ir/Suggest.h"
#include "ir/ThreadUniformity.h"
#include "ir/Visitor.h"
#include "ir/WhereFacts.h"

#include <fmt/format.h>

#include <climits>
#include <map>

namespace tilescope::check {

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

inline std::string shapeText(const std::vector<Affine> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + shape[i].str();
  return out + "]";
}

// Shapes agree when they are equal after dropping unit dimensions.
inline bool sameShape(const std::vector<Affine> &a, const std::vector<Affine> &b) {
  auto squeeze = [](const std::vector<Affine> &s) {
    std::vector<Affine> out;
    for (const Affine &x : s)
      if (!(x.isConstant() && x.constant == 1))
        out.push_back(x);
    return out;
  };
  return squeeze(a) == squeeze(b);
}

inline std::string typeName(const Type &t) {
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
  // A dimension or subscript in normal form under the where clause's facts
  // (WhereFacts.h): `C` is 1024 under `where C == 1024` (or `C * C ==
  // 1048576`), `C / 1024 * 1024` is C under `where C % 1024 == 0`.
  Affine shapeTerm(const Expr &e) const {
    return whereFacts_.empty() ? Affine::of(e) : whereFacts_.affine(e);
  }

  // --- expressions ---
  Type expr(const Expr &e);
  Type index(const Index &x, llvm::SMLoc loc);
  Type binary(const Binary &b, llvm::SMLoc loc);
  Type call(const Call &c, llvm::SMLoc loc);
  bool expectInt(const Expr &e, const char *what);
  bool onlySymbols(const Expr &e, const char *what);
  void placement(const Kernel &k, const Param &p);
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
  WhereFacts whereFacts_;
};

} // namespace tilescope::check
