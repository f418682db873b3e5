#include "ir/Placement.h"

#include "ir/Printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace tilescope {

namespace {

// An integer polynomial over atoms: names, and subexpressions that are not
// sums or products (a division, a call) kept whole by their text. Two
// extents are equal for every value of the sizes when their polynomials are.
class Poly {
public:
  static Poly constant(int64_t v) {
    Poly p;
    if (v != 0)
      p.terms_[{}] = v;
    return p;
  }
  static Poly atom(std::string name) {
    Poly p;
    p.terms_[{std::move(name)}] = 1;
    return p;
  }
  Poly operator+(const Poly &o) const {
    Poly out = *this;
    for (const auto &[monomial, c] : o.terms_)
      out.addTerm(monomial, c);
    return out;
  }
  Poly operator*(const Poly &o) const {
    Poly out;
    for (const auto &[ma, ca] : terms_)
      for (const auto &[mb, cb] : o.terms_) {
        std::vector<std::string> m = ma;
        m.insert(m.end(), mb.begin(), mb.end());
        std::sort(m.begin(), m.end());
        int64_t c = 0;
        if (__builtin_mul_overflow(ca, cb, &c))
          out.overflow_ = true;
        out.addTerm(m, c);
      }
    out.overflow_ = out.overflow_ || overflow_ || o.overflow_;
    return out;
  }
  Poly negated() const { return *this * constant(-1); }
  // Equal for every value of the atoms (never when a coefficient overflowed).
  bool sameAs(const Poly &o) const { return !overflow_ && !o.overflow_ && terms_ == o.terms_; }

private:
  void addTerm(const std::vector<std::string> &m, int64_t c) {
    int64_t &slot = terms_[m];
    if (__builtin_add_overflow(slot, c, &slot))
      overflow_ = true;
    if (slot == 0)
      terms_.erase(m);
  }
  std::map<std::vector<std::string>, int64_t> terms_;
  bool overflow_ = false;
};

// `e` as a polynomial; `ndev` stands for the launch's device count.
Poly polyOf(const Expr &e, const Expr &devices) {
  switch (e->kind) {
  case ExprKind::IntImm:
    return Poly::constant(as<IntImm>(e).value);
  case ExprKind::Var: {
    const std::string &name = as<Var>(e).name;
    if (name == "ndev" && devices &&
        !(devices->kind == ExprKind::Var && as<Var>(devices).name == "ndev"))
      return polyOf(devices, nullptr);
    return Poly::atom(name);
  }
  case ExprKind::Unary:
    if (as<Unary>(e).op == UnaryOp::Neg)
      return polyOf(as<Unary>(e).operand, devices).negated();
    break;
  case ExprKind::Binary: {
    const auto &b = as<Binary>(e);
    if (b.op == BinaryOp::Add)
      return polyOf(b.lhs, devices) + polyOf(b.rhs, devices);
    if (b.op == BinaryOp::Sub)
      return polyOf(b.lhs, devices) + polyOf(b.rhs, devices).negated();
    if (b.op == BinaryOp::Mul)
      return polyOf(b.lhs, devices) * polyOf(b.rhs, devices);
    break;
  }
  default:
    break;
  }
  return Poly::atom("(" + print(e) + ")");
}

std::string printExprList(const std::vector<Expr> &exprs, const char *separator = ", ") {
  std::string out;
  for (size_t i = 0; i < exprs.size(); ++i)
    out += (i ? separator : "") + print(exprs[i]);
  return out;
}

// The placement's numbers as expressions, whether it was written with
// constants only (resolved by the parser) or names sizes.
LayoutTerms termsOf(const LayoutSpec &spec) {
  if (spec.terms)
    return *spec.terms;
  LayoutTerms t;
  auto lit = [](int64_t v) { return IntImm::make(v); };
  for (const Iter &it : spec.layout.shard())
    t.shard.push_back({lit(it.extent), lit(it.stride), it.axis});
  for (const Iter &it : spec.layout.replica())
    t.replica.push_back({lit(it.extent), lit(it.stride), it.axis});
  for (const AxisOffset &o : spec.layout.offset())
    t.offset.push_back({o.axis, lit(o.value)});
  t.swizzle = spec.layout.swizzle();
  return t;
}

} // namespace

std::string PlacementReading::str() const {
  if (kind == Kind::Replicated)
    return "replicated";
  std::string name = dim == 0 ? " (rows)" : dim == 1 ? " (columns)" : "";
  return fmt::format("blocked along dimension {}{}", dim, name);
}

std::optional<PlacementReading> readPlacement(const Kernel &kernel, const Param &param,
                                              std::string *why, llvm::SMLoc *at) {
  const LayoutSpec &spec = *param.placement;
  *at = spec.loc;
  auto fail = [&](std::string message) -> std::optional<PlacementReading> {
    *why = fmt::format("placement of '{}': {}", param.name, message);
    return std::nullopt;
  };
  if (kernel.launch.devices.empty())
    return fail("a placement needs a launch over devices, `launch devices(N) ...`");
  if (!spec.preset.empty())
    return fail("a placement is written S[...] (+ R[...]), not as a preset");
  const Expr &devices = kernel.launch.devices.front();
  LayoutTerms t = termsOf(spec);
  if (t.swizzle)
    return fail("a placement has no swizzle");
  if (!t.offset.empty())
    return fail("a placement has no offsets");
  for (const auto *part : {&t.shard, &t.replica})
    for (const auto &it : *part)
      if (it.axis != Axis::pid && it.axis != Axis::m)
        return fail(fmt::format("a placement puts elements on the device axis pid and the "
                                "instance's axis m only, not on {}",
                                axisName(it.axis)));
  Poly count = polyOf(devices, nullptr);
  Poly one = Poly::constant(1);
  auto isDeviceIter = [&](const LayoutTerms::IterTerms &it) {
    return polyOf(it.extent, devices).sameAs(count) && polyOf(it.stride, devices).sameAs(one);
  };
  std::string deviceText = print(devices);

  // The device iter: in the S part (blocked) or the R part (replicated).
  std::optional<size_t> deviceAt;
  std::vector<LayoutTerms::IterTerms> memory;
  for (size_t i = 0; i < t.shard.size(); ++i) {
    if (t.shard[i].axis == Axis::m) {
      memory.push_back(t.shard[i]);
      continue;
    }
    if (deviceAt)
      return fail("a placement has one device iter (two place a tensor on a mesh of devices, "
                  "which is not supported)");
    if (!isDeviceIter(t.shard[i]))
      return fail(fmt::format("the device iter is {}:{}@pid; it must be {}:1@pid (one block per "
                              "device of the launch)",
                              print(t.shard[i].extent), print(t.shard[i].stride), deviceText));
    deviceAt = memory.size();
  }
  PlacementReading reading;
  if (deviceAt) {
    if (!t.replica.empty())
      return fail("a blocked placement has no R part");
    reading.kind = PlacementReading::Kind::Blocked;
  } else {
    if (t.replica.size() != 1 || t.replica[0].axis != Axis::pid || !isDeviceIter(t.replica[0]))
      return fail(fmt::format("a placement either splits the tensor over the devices (one "
                              "{}:1@pid iter in the S part) or replicates it (R[{}:1@pid])",
                              deviceText, deviceText));
    reading.kind = PlacementReading::Kind::Replicated;
  }
  if (memory.empty())
    return fail("a placement needs the instance's elements on m");

  // The m iters enumerate the instance row-major: compact strides and the
  // instance's size.
  Poly later = one;
  for (size_t i = memory.size(); i-- > 0;) {
    if (!polyOf(memory[i].stride, devices).sameAs(later))
      return fail(fmt::format("the m iters must enumerate the instance [{}] row-major: iter {} "
                              "has stride {}, the product of the later extents is needed",
                              printExprList(param.shape), i, print(memory[i].stride)));
    later = later * polyOf(memory[i].extent, devices);
  }
  Poly size = one;
  for (const Expr &e : param.shape)
    size = size * polyOf(e, devices);
  if (!later.sameAs(size))
    return fail(fmt::format("the m iters hold the product of their extents, not the {} "
                            "elements of the instance [{}]",
                            printExprList(param.shape, " * "), printExprList(param.shape)));
  if (!deviceAt)
    return reading;

  // Where the device iter stands: before dimension j when the m iters
  // before it make up dimensions 0..j-1.
  if (*deviceAt == memory.size())
    return fail("the device iter comes after every m iter: it must come before the dimension "
                "it splits");
  Poly before = one;
  for (size_t i = 0; i < *deviceAt; ++i)
    before = before * polyOf(memory[i].extent, devices);
  Poly dims = one;
  for (size_t j = 0; j < param.shape.size(); ++j) {
    if (dims.sameAs(before)) {
      reading.dim = j;
      return reading;
    }
    dims = dims * polyOf(param.shape[j], devices);
  }
  return fail("the device iter splits a dimension of the instance inside: it must stand "
              "before a whole dimension");
}

std::optional<Layout> placementLayout(const Param &param, const LayoutNumberValue &value,
                                      std::string *why) {
  auto spec = resolveLayout(*param.placement, value, why);
  if (!spec)
    return std::nullopt;
  return spec->layout;
}

std::vector<int64_t> logicalShape(const PlacementReading &reading,
                                  const std::vector<int64_t> &instanceShape, int64_t devices) {
  std::vector<int64_t> shape = instanceShape;
  if (reading.kind == PlacementReading::Kind::Blocked && reading.dim < shape.size())
    shape[reading.dim] *= devices;
  return shape;
}

std::string placementNote(const Kernel &kernel, const Param &param) {
  if (!param.placement)
    return "";
  std::string why;
  llvm::SMLoc at;
  auto reading = readPlacement(kernel, param, &why, &at);
  return fmt::format("{}: placement {}, {}; each rank holds its instance [{}]", param.name,
                     param.placement->str(), reading ? reading->str() : why,
                     printExprList(param.shape));
}

std::vector<PlacementDisagreement>
placementDisagreements(const Kernel &kernel, const std::vector<ProblemPlacement> &problem) {
  std::vector<PlacementDisagreement> out;
  for (const Param &p : kernel.params) {
    if (!p.placement)
      continue;
    for (const ProblemPlacement &want : problem) {
      if (want.tensor != p.name)
        continue;
      std::string why;
      llvm::SMLoc at;
      auto declared = readPlacement(kernel, p, &why, &at);
      if (declared && !(*declared == want.reading))
        out.push_back({&p, fmt::format("'{}' is placed {}, but the problem `{}` reads it {}",
                                       p.name, declared->str(), want.problem, want.reading.str())});
    }
  }
  return out;
}

} // namespace tilescope
