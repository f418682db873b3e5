#include "verifier/LayoutEncoding.h"
#include "proof/SolverBudget.h"

#include <bit>

namespace tilescope::detail {

LayoutEncoding::LayoutEncoding(z3::context &ctx, bool bitVector, int64_t maxValue)
    : ctx_(ctx), bitVector_(bitVector) {
  // Two spare bits: sums of two in-range terms and the comparison with a
  // bound one past the largest value never wrap.
  unsigned bits = static_cast<unsigned>(std::bit_width(static_cast<uint64_t>(maxValue)));
  width_ = std::min(64u, std::max(4u, bits + 2));
}

bool LayoutEncoding::prefersBitVectors(std::initializer_list<const Layout *> layouts) {
  auto pow2 = [](int64_t v) { return v == 0 || std::has_single_bit(static_cast<uint64_t>(v)); };
  bool allPow2 = true;
  for (const Layout *l : layouts) {
    if (l->swizzle())
      return true;
    for (const auto *iters : {&l->shard(), &l->replica()})
      for (const Iter &it : *iters)
        allPow2 = allPow2 && pow2(it.extent) && pow2(it.stride);
  }
  return allPow2;
}

int64_t LayoutEncoding::largestValue(const Layout &layout) {
  // Saturating: strides are unbounded, and a value past 2^62 only has to be
  // recognised as too wide for bit-vectors.
  auto add = [](int64_t a, int64_t b) {
    int64_t r;
    return __builtin_add_overflow(a, b, &r) || r > kHuge ? kHuge : r;
  };
  auto mul = [](int64_t a, int64_t b) {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) || r > kHuge ? kHuge : r;
  };
  std::array<int64_t, kNumAxes> reach{};
  int64_t largest = add(layout.size(), layout.replicas());
  for (const auto *iters : {&layout.shard(), &layout.replica()})
    for (const Iter &it : *iters) {
      size_t a = static_cast<size_t>(it.axis);
      reach[a] = add(reach[a], mul(it.extent - 1, it.stride));
      largest = std::max(largest, it.extent);
    }
  for (const AxisOffset &o : layout.offset())
    reach[static_cast<size_t>(o.axis)] = add(reach[static_cast<size_t>(o.axis)], o.value);
  for (int64_t r : reach)
    largest = std::max(largest, r);
  if (layout.swizzle()) {
    // The swizzle rewrites bits below the highest set bit of m only.
    int64_t m = reach[static_cast<size_t>(Axis::m)];
    largest = m >= kHuge
                  ? kHuge
                  : std::max(largest, (int64_t{1} << std::bit_width(static_cast<uint64_t>(m))) - 1);
  }
  return largest;
}

z3::expr LayoutEncoding::num(int64_t v) {
  return bitVector_ ? ctx_.bv_val(static_cast<uint64_t>(v), width_) : ctx_.int_val(v);
}

z3::expr LayoutEncoding::less(const z3::expr &a, const z3::expr &b) {
  return bitVector_ ? z3::ult(a, b) : a < b;
}

z3::expr LayoutEncoding::lessEq(const z3::expr &a, const z3::expr &b) {
  return bitVector_ ? z3::ule(a, b) : a <= b;
}

int64_t LayoutEncoding::valueOf(const z3::model &model, const z3::expr &e) {
  z3::expr v = model.eval(e, true);
  if (bitVector_)
    return static_cast<int64_t>(v.get_numeral_uint64());
  return v.get_numeral_int64();
}

z3::solver LayoutEncoding::solver(unsigned timeoutMs) {
  z3::solver s(ctx_, bitVector_ ? "QF_BV" : "QF_LIA");
  z3::params p(ctx_);
  setSolverBudget(p, timeoutMs);
  s.set(p);
  return s;
}

z3::expr LayoutEncoding::swizzled(const z3::expr &m, const Swizzle &s) {
  // m' = f(m >> M) << M | (m & (2^M - 1)), f(x) = x ^ ((x & mask) >> S).
  z3::expr x = z3::lshr(m, num(s.bitsKept));
  z3::expr mask = num(((int64_t{1} << s.bitsXored) - 1) << s.shift);
  z3::expr fx = x ^ z3::lshr(x & mask, num(s.shift));
  return z3::shl(fx, num(s.bitsKept)) | (m & num((int64_t{1} << s.bitsKept) - 1));
}

LayoutEncoding::Element LayoutEncoding::element(z3::solver &solver, const Layout &layout,
                                                const std::string &prefix, bool withReplicas) {
  Element e;
  e.axis.assign(kNumAxes, num(0));
  auto declare = [&](const std::vector<Iter> &iters, const char *tag,
                     std::vector<z3::expr> &digits) {
    for (size_t k = 0; k < iters.size(); ++k) {
      std::string name = prefix + "_" + tag + std::to_string(k);
      z3::expr d = bitVector_ ? ctx_.bv_const(name.c_str(), width_) : ctx_.int_const(name.c_str());
      if (!bitVector_)
        solver.add(d >= 0);
      solver.add(less(d, num(iters[k].extent)));
      digits.push_back(d);
      size_t a = static_cast<size_t>(iters[k].axis);
      e.axis[a] = e.axis[a] + d * num(iters[k].stride);
    }
  };
  declare(layout.shard(), "s", e.shard);
  if (withReplicas)
    declare(layout.replica(), "r", e.replica);
  for (const AxisOffset &o : layout.offset()) {
    size_t a = static_cast<size_t>(o.axis);
    e.axis[a] = e.axis[a] + num(o.value);
  }
  if (layout.swizzle()) {
    size_t m = static_cast<size_t>(Axis::m);
    e.axis[m] = swizzled(e.axis[m], *layout.swizzle());
  }
  for (z3::expr &a : e.axis)
    a = a.simplify();
  return e;
}

int64_t flatIndexOf(LayoutEncoding &enc, const z3::model &model, const Layout &layout,
                    const LayoutEncoding::Element &e) {
  int64_t flat = 0;
  for (size_t k = 0; k < layout.shard().size(); ++k)
    flat = flat * layout.shard()[k].extent + enc.valueOf(model, e.shard[k]);
  return flat;
}

int64_t replicaIndexOf(LayoutEncoding &enc, const z3::model &model, const Layout &layout,
                       const LayoutEncoding::Element &e) {
  int64_t r = 0;
  for (size_t t = 0; t < e.replica.size(); ++t)
    r = r * layout.replica()[t].extent + enc.valueOf(model, e.replica[t]);
  return r;
}

} // namespace tilescope::detail
