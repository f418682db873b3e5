// The Z3 engine: each obligation is asked as "is there a counterexample?";
// unsat is a proof, a model is turned into a witness and re-checked by the
// layout engine (LayoutChecks.h), unknown is reported as undecided.
#include "verifier/LayoutEncoding.h"
#include "proof/QueryDeadline.h"
#include "verifier/LayoutStructural.h"

#include <fmt/format.h>

namespace tilescope::detail {
namespace {

// Runs `query` and converts any Z3 failure into an undecided entry: nothing
// thrown by Z3 leaves this file.
template <typename Fn> void guarded(LayoutReport &report, const char *what, Fn &&query) {
  try {
    query();
  } catch (const z3::exception &e) {
    report.undecided.push_back(fmt::format("{}: Z3 error: {}", what, e.msg()));
  }
}

// sat -> true; unsat -> false; unknown -> records why and false.
bool hasCounterexample(z3::solver &s, LayoutReport &report, const std::string &what) {
  switch (checkWithinBudget(s)) {
  case z3::sat:
    return true;
  case z3::unsat:
    return false;
  case z3::unknown:
    break;
  }
  report.undecided.push_back(fmt::format("{}: undecided ({})", what, reasonUnknown(s)));
  return false;
}

z3::expr differ(const std::vector<z3::expr> &a, const std::vector<z3::expr> &b) {
  z3::expr_vector any(a.front().ctx());
  for (size_t k = 0; k < a.size(); ++k)
    any.push_back(a[k] != b[k]);
  return z3::mk_or(any);
}

z3::expr sameOwner(const LayoutEncoding::Element &a, const LayoutEncoding::Element &b) {
  z3::expr_vector all(a.axis.front().ctx());
  for (size_t i = 0; i < kNumAxes; ++i)
    all.push_back(a.axis[i] == b.axis[i]);
  return z3::mk_and(all);
}

// The two buffers' bit ranges on m (base, least and largest m of every owner)
// do not meet: no owner of one can share a bit with an owner of the other.
bool footprintsApart(const OverlapQuestion &q) {
  int64_t lowA, highA, lowB, highB;
  if (!axisRange(*q.a.layout, Axis::m, lowA, highA) ||
      !axisRange(*q.b.layout, Axis::m, lowB, highB))
    return false;
  // [base * 8 + low * bits, base * 8 + (high + 1) * bits), in __int128 so that
  // nothing wraps.
  auto range = [](const BufferView &v, int64_t low, int64_t high) {
    __int128 bits = std::max(dtypeBits(v.info.dtype), 1);
    __int128 base = __int128(v.info.baseByte) * 8;
    return std::pair(base + low * bits, base + (__int128(high) + 1) * bits);
  };
  auto [beginA, endA] = range(q.a, lowA, highA);
  auto [beginB, endB] = range(q.b, lowB, highB);
  return endA <= beginB || endB <= beginA;
}

void confirm(LayoutReport &report, std::optional<LayoutViolation> v, const char *what) {
  if (v)
    report.violations.push_back(std::move(*v));
  else
    report.undecided.push_back(
        fmt::format("{}: the solver's counterexample did not re-check (verifier bug)", what));
}
} // namespace

void proveLayout(const LayoutQuestion &q, unsigned timeoutMs, LayoutReport &report) {
  guarded(report, "layout proof", [&] {
    z3::context &ctx = sharedContext();
    int64_t largest = LayoutEncoding::largestValue(q.layout);
    for (int64_t b : q.bound)
      largest = std::max(largest, b);
    if (largest >= LayoutEncoding::kHuge && q.layout.swizzle()) {
      report.undecided.push_back("a swizzled layout with coordinates past 2^61");
      return;
    }
    LayoutEncoding enc(
        ctx, LayoutEncoding::prefersBitVectors({&q.layout}) && largest < LayoutEncoding::kHuge,
        largest);

    // Bounds, one query per bounded axis: some owner at or past the extent.
    for (size_t i = 0; i < kNumAxes; ++i) {
      if (q.bound[i] <= 0 || provedBelow(q.layout, static_cast<Axis>(i), q.bound[i]))
        continue;
      z3::solver s = enc.solver(timeoutMs);
      auto x = enc.element(s, q.layout, "x", true);
      s.add(enc.lessEq(enc.num(q.bound[i]), x.axis[i]));
      if (hasCounterexample(s, report,
                            fmt::format("bounds on {}", axisName(static_cast<Axis>(i))))) {
        z3::model m = s.get_model();
        confirm(report,
                boundsViolation(q, static_cast<Axis>(i), flatIndexOf(enc, m, q.layout, x),
                                replicaIndexOf(enc, m, q.layout, x)),
                "bounds");
      }
    }
    if (!q.checkAlias)
      return;
    // One-to-one over shard and replica digits proves both obligations below.
    if (provedOneToOne(q.layout, true))
      return;

    // Aliasing: two distinct elements, replica digits at 0, one owner.
    if (!provedOneToOne(q.layout, false)) {
      z3::solver s = enc.solver(timeoutMs);
      auto x = enc.element(s, q.layout, "x", false), y = enc.element(s, q.layout, "y", false);
      s.add(differ(x.shard, y.shard));
      s.add(sameOwner(x, y));
      if (hasCounterexample(s, report, "aliasing")) {
        z3::model m = s.get_model();
        confirm(
            report,
            aliasViolation(q, flatIndexOf(enc, m, q.layout, x), flatIndexOf(enc, m, q.layout, y)),
            "aliasing");
      }
    }

    // Replicas: two distinct elements, not both base owners, one owner.
    if (!q.layout.replica().empty()) {
      z3::solver s = enc.solver(timeoutMs);
      auto x = enc.element(s, q.layout, "x", true), y = enc.element(s, q.layout, "y", true);
      s.add(differ(x.shard, y.shard));
      std::vector<z3::expr> zeros(x.replica.size(), enc.num(0));
      s.add(differ(x.replica, zeros) || differ(y.replica, zeros));
      s.add(sameOwner(x, y));
      if (hasCounterexample(s, report, "replica consistency")) {
        z3::model m = s.get_model();
        confirm(report,
                replicaViolation(
                    q, flatIndexOf(enc, m, q.layout, x), replicaIndexOf(enc, m, q.layout, x),
                    flatIndexOf(enc, m, q.layout, y), replicaIndexOf(enc, m, q.layout, y)),
                "replica consistency");
      }
    }
  });
}

void proveOverlap(const OverlapQuestion &q, unsigned timeoutMs, LayoutReport &report) {
  guarded(report, "overlap proof", [&] {
    z3::context &ctx = sharedContext();
    const Layout &la = *q.a.layout, &lb = *q.b.layout;
    int64_t bitsA = std::max(dtypeBits(q.a.info.dtype), 1);
    int64_t bitsB = std::max(dtypeBits(q.b.info.dtype), 1);
    // Footprints compare in bits: start = base * 8 + m * element bits.
    int64_t largest = std::max(LayoutEncoding::largestValue(la), LayoutEncoding::largestValue(lb));
    bool huge = largest >= LayoutEncoding::kHuge / 256 ||
                std::max(q.a.info.baseByte, q.b.info.baseByte) >= LayoutEncoding::kHuge / 64;
    if (footprintsApart(q))
      return;
    if (huge && (la.swizzle() || lb.swizzle())) {
      report.undecided.push_back("a swizzled buffer with coordinates past 2^53");
      return;
    }
    if (!huge)
      largest = largest * std::max(bitsA, bitsB) + 8 * (q.a.info.baseByte + q.b.info.baseByte) + 64;
    // Integers unless a swizzle forces bit-vectors: the byte arithmetic has
    // multiplications by element widths and arbitrary base addresses.
    LayoutEncoding enc(ctx, la.swizzle() || lb.swizzle(), largest);
    z3::solver s = enc.solver(timeoutMs);
    auto x = enc.element(s, la, "a", true), y = enc.element(s, lb, "b", true);
    size_t m = static_cast<size_t>(Axis::m);
    for (size_t i = 0; i < kNumAxes; ++i)
      if (i != m)
        s.add(x.axis[i] == y.axis[i]);
    z3::expr startA = enc.num(q.a.info.baseByte * 8) + x.axis[m] * enc.num(bitsA);
    z3::expr startB = enc.num(q.b.info.baseByte * 8) + y.axis[m] * enc.num(bitsB);
    s.add(enc.less(startA, startB + enc.num(bitsB)));
    s.add(enc.less(startB, startA + enc.num(bitsA)));
    if (hasCounterexample(s, report, "buffer overlap")) {
      z3::model mdl = s.get_model();
      confirm(report,
              overlapViolation(q, flatIndexOf(enc, mdl, la, x), replicaIndexOf(enc, mdl, la, x),
                               flatIndexOf(enc, mdl, lb, y), replicaIndexOf(enc, mdl, lb, y)),
              "buffer overlap");
    }
  });
}

} // namespace tilescope::detail
