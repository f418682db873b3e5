#include "simulator/WideTargets.h"

#include "ir/Visitor.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>

namespace tilescope::sim {

namespace {

// A float expression seen as a * X + b for one value X of the data, or as a
// constant b, or as neither (a float scalar, a size, a thread index).
struct Affine {
  enum Kind : uint8_t { Constant, Data, Opaque } kind = Opaque;
  double a = 0, b = 0;
  static Affine constant(double v) { return {Constant, 0, v}; }
  static Affine data() { return {Data, 1, 0}; }
  static Affine opaque() { return {}; }
};

class Collector : public IRVisitor {
public:
  Collector(const Kernel &kernel, const ArgValues &args) : args_(args) {
    for (const Param &p : kernel.params)
      if (!p.isTensor)
        opaqueNames_.insert(p.name);
    struct Names : IRVisitor {
      std::set<std::string> &out;
      explicit Names(std::set<std::string> &o) : out(o) {}
      void visitVar(const Var &v) override { out.insert(v.name); }
    } names(opaqueNames_);
    for (const Param &p : kernel.params)
      for (const Expr &e : p.shape)
        names.visit(e);
    struct Lets : IRVisitor {
      std::map<std::string, std::vector<Expr>> &out;
      std::set<std::string> &loops;
      Lets(std::map<std::string, std::vector<Expr>> &o, std::set<std::string> &l)
          : out(o), loops(l) {}
      void visitLet(const Let &l) override {
        out[l.name].push_back(l.value);
        IRVisitor::visitLet(l);
      }
      void visitFor(const For &f) override {
        loops.insert(f.var); // an index, not data
        IRVisitor::visitFor(f);
      }
    } lets(lets_, opaqueNames_);
    lets.visit(kernel);
  }

  std::set<double> thresholds;

protected:
  void visitBinary(const Binary &b) override {
    switch (b.op) {
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::Eq:
    case BinaryOp::Ne:
      test(b.lhs, b.rhs);
      break;
    default:
      break;
    }
    IRVisitor::visitBinary(b);
  }
  void visitCall(const Call &c) override {
    if ((c.callee == "min" || c.callee == "max") && c.args.size() == 2)
      test(c.args[0], c.args[1]);
    IRVisitor::visitCall(c);
  }

private:
  const ArgValues &args_;
  std::set<std::string> opaqueNames_;
  std::map<std::string, std::vector<Expr>> lets_;

  void test(const Expr &lhs, const Expr &rhs) {
    Affine l = affine(lhs, 0), r = affine(rhs, 0);
    if (l.kind == Affine::Constant && r.kind == Affine::Data)
      std::swap(l, r);
    if (l.kind != Affine::Data || r.kind != Affine::Constant || l.a == 0)
      return;
    double t = std::fabs((r.b - l.b) / l.a);
    if (std::isfinite(t) && t > 0)
      thresholds.insert(t);
  }

  static Affine combine(const Affine &x, const Affine &y, double sign) {
    if (x.kind == Affine::Opaque || y.kind == Affine::Opaque)
      return x.kind == Affine::Data || y.kind == Affine::Data ? Affine::data() : Affine::opaque();
    if (x.kind == Affine::Data && y.kind == Affine::Data)
      return Affine::data(); // a new value of the data
    if (x.kind == Affine::Constant && y.kind == Affine::Constant)
      return Affine::constant(x.b + sign * y.b);
    if (x.kind == Affine::Data)
      return {Affine::Data, x.a, x.b + sign * y.b};
    return {Affine::Data, sign * y.a, x.b + sign * y.b};
  }

  Affine affine(const Expr &e, int depth) {
    if (!e || depth > 32)
      return Affine::data();
    switch (e->kind) {
    case ExprKind::FloatImm:
      return Affine::constant(as<FloatImm>(e).value);
    case ExprKind::IntImm:
      return Affine::constant(double(as<IntImm>(e).value));
    case ExprKind::BoolImm:
    case ExprKind::StringImm:
    case ExprKind::Builtin:
      return Affine::opaque();
    case ExprKind::Index:
      return Affine::data();
    case ExprKind::Var: {
      const std::string &name = as<Var>(e).name;
      auto let = lets_.find(name);
      if (let != lets_.end()) {
        // A name bound once (or always to the same constant) stands for its value.
        std::optional<Affine> same;
        for (const Expr &v : let->second) {
          Affine x = affine(v, depth + 1);
          if (!same)
            same = x;
          else if (x.kind != same->kind || x.a != same->a || x.b != same->b)
            return x.kind == Affine::Data || same->kind == Affine::Data ? Affine::data()
                                                                        : Affine::opaque();
        }
        return same ? *same : Affine::data();
      }
      // A buffer (a register, shared memory) holds data; a loop variable, a
      // size or a scalar parameter does not.
      // A size or a float scalar of the run is its value there (`min(x,
      // f32(K) * 2.0)` clamps at 134 where K = 67).
      if (auto it = args_.ints.find(name); it != args_.ints.end())
        return Affine::constant(double(it->second));
      if (auto it = args_.floats.find(name); it != args_.floats.end())
        return Affine::constant(it->second);
      return opaqueNames_.count(name) ? Affine::opaque() : Affine::data();
    }
    case ExprKind::Unary: {
      const auto &u = as<Unary>(e);
      Affine x = affine(u.operand, depth + 1);
      if (u.op == UnaryOp::Neg && x.kind != Affine::Opaque)
        return {x.kind, -x.a, -x.b};
      return x.kind == Affine::Data ? Affine::data() : Affine::opaque();
    }
    case ExprKind::Binary: {
      const auto &b = as<Binary>(e);
      Affine x = affine(b.lhs, depth + 1), y = affine(b.rhs, depth + 1);
      switch (b.op) {
      case BinaryOp::Add:
        return combine(x, y, 1);
      case BinaryOp::Sub:
        return combine(x, y, -1);
      case BinaryOp::Mul:
        if (x.kind == Affine::Constant && y.kind != Affine::Opaque)
          return {y.kind, x.b * y.a, x.b * y.b};
        if (y.kind == Affine::Constant && x.kind != Affine::Opaque)
          return {x.kind, y.b * x.a, y.b * x.b};
        break;
      case BinaryOp::Div:
        if (y.kind == Affine::Constant && y.b != 0 && x.kind != Affine::Opaque)
          return {x.kind, x.a / y.b, x.b / y.b};
        break;
      default:
        break;
      }
      return x.kind == Affine::Data || y.kind == Affine::Data ? Affine::data() : Affine::opaque();
    }
    case ExprKind::Call: {
      const auto &c = as<Call>(e);
      bool data = false;
      for (const Expr &a : c.args)
        data = data || affine(a, depth + 1).kind == Affine::Data;
      // Math on constants is a constant (`min(x, exp(5.0))` clamps at 148).
      if (!data && !c.args.empty()) {
        std::vector<double> v;
        for (const Expr &a : c.args) {
          Affine x = affine(a, depth + 1);
          if (x.kind != Affine::Constant)
            break;
          v.push_back(x.b);
        }
        if (v.size() == c.args.size()) {
          const std::string &f = c.callee;
          if (v.size() == 1 && (f == "exp" || f == "exp2" || f == "sqrt" || f == "rsqrt" ||
                                f == "abs" || f == "log" || f == "log2"))
            return Affine::constant(f == "exp"    ? std::exp(v[0])
                                    : f == "exp2" ? std::exp2(v[0])
                                    : f == "sqrt" ? std::sqrt(v[0])
                                    : f == "rsqrt" ? 1 / std::sqrt(v[0])
                                    : f == "abs"   ? std::fabs(v[0])
                                    : f == "log"   ? std::log(v[0])
                                                   : std::log2(v[0]));
          if (v.size() == 2 && (f == "min" || f == "max"))
            return Affine::constant(f == "min" ? std::min(v[0], v[1]) : std::max(v[0], v[1]));
        }
      }
      // A conversion (`f32(x)`, `bf16(x)`) keeps the affine form.
      if (c.args.size() == 1 && c.callee.size() <= 5 &&
          (c.callee[0] == 'f' || c.callee[0] == 'b') && isdigit(c.callee.back()))
        return affine(c.args[0], depth + 1);
      return data ? Affine::data() : Affine::opaque();
    }
    }
    return Affine::data();
  }
};

} // namespace

WideTargets wideTargets(const Kernel &kernel, const ArgValues &args) {
  Collector c(kernel, args);
  c.visit(kernel);
  WideTargets out;
  for (double t : c.thresholds) {
    if (t > 64) {
      int e = static_cast<int>(std::ceil(std::log2(2 * t)));
      if (e <= 55)
        out.exponents.insert(e);
    } else if (t < 1.0 / 64) {
      int e = static_cast<int>(std::floor(std::log2(t))) - 20;
      if (e >= -56)
        out.exponents.insert(e);
    }
  }
  return out;
}

} // namespace tilescope::sim
