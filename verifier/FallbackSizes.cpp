#include "verifier/FallbackSizes.h"

#include "ir/ConcreteEval.h"
#include "verifier/ProtoEncoding.h"

#include <fmt/format.h>

#include <algorithm>

namespace tilescope {

std::string describeSizes(const SizeAssignment &sizes) {
  std::string out;
  for (const auto &[name, v] : sizes)
    out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", name, v);
  return out.empty() ? std::string("the kernel's constant sizes") : out;
}

std::optional<SizeAssignment> admittedSizes(const BarrierSkeleton &sk, const SizeAssignment &given,
                                            std::string &why, bool *unbound) {
  SizeAssignment out;
  // Symbols without a value (a float scalar) stay unbound; a value the
  // check needs and lacks makes the fallback say so.
  for (const std::string &s : sk.symbols)
    if (auto it = given.find(s); it != given.end())
      out[s] = it->second;
  LeafValue leaf = [&](const Expr &e) -> std::optional<int64_t> {
    if (e->kind != ExprKind::Var)
      return std::nullopt;
    auto it = out.find(as<Var>(e).name);
    return it == out.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
  for (const Expr &c : sk.constraints) {
    auto v = evalConcrete(c, leaf);
    if (!v) {
      why = "the sizes given do not bind every symbol of the where clause";
      if (unbound)
        *unbound = true;
      return std::nullopt;
    }
    if (!*v) {
      why = fmt::format("the sizes {} are not admitted by the where clause", describeSizes(out));
      return std::nullopt;
    }
  }
  return out;
}

namespace {

// The largest ring (barrier array or pipeline stages) an event touches.
int64_t ringOf(const BarrierSkeleton &sk, const SyncEvent &e) {
  int64_t ring = 1;
  if (const BarrierArray *a = sk.barrier(e.barrier.array))
    ring = std::max(ring, a->size);
  for (const MemoryAccess &a : e.accesses)
    ring = std::max(ring, a.stages);
  return ring;
}

} // namespace

std::optional<SizeAssignment> smallestTwoRoundSizes(const BarrierSkeleton &sk, std::string &why,
                                                    const SizeAssignment &fixed) {
  try {
    z3::context ctx;
    detail::ProtoEncoder enc(ctx, sk);
    z3::optimize opt(ctx);
    for (unsigned i = 0; i < enc.assumptions().size(); ++i)
      opt.add(enc.assumptions()[int(i)]);
    for (const auto &[name, v] : fixed)
      if (auto it = enc.symbols().find(name); it != enc.symbols().end())
        opt.add(it->second == ctx.int_val(v));
    // Per loop: the flattened trip count of its nest and the largest ring
    // its events touch.
    std::map<int, int64_t> rings;
    for (const SyncEvent &e : sk.events)
      if (e.loop >= 0)
        rings[e.loop] = std::max(rings[e.loop], ringOf(sk, e));
    for (const auto &[loop, ring] : rings) {
      if (ring < 2)
        continue;
      std::optional<z3::expr> trip = ctx.int_val(1);
      for (int l = loop; l >= 0 && trip; l = sk.loops[size_t(l)].parent)
        if (auto t = enc.encode(sk.loops[size_t(l)].trip(), {}))
          trip = *trip * *t;
        else
          trip.reset();
      if (trip)
        opt.add_soft(*trip >= ctx.int_val(2 * ring), 1);
    }
    z3::expr sum = ctx.int_val(0);
    for (const std::string &s : sk.symbols)
      sum = sum + enc.symbols().at(s);
    opt.minimize(sum);
    z3::params p(ctx);
    p.set("timeout", 2000u);
    opt.set(p);
    if (opt.check() != z3::sat) {
      why = fixed.empty() ? std::string("Z3 found no size the where clause admits")
                          : fmt::format("Z3 found no sizes with {} that the where clause admits",
                                        describeSizes(fixed));
      return std::nullopt;
    }
    z3::model m = opt.get_model();
    SizeAssignment out;
    for (const std::string &s : sk.symbols)
      out[s] = detail::ProtoEncoder::value(m, enc.symbols().at(s));
    return out;
  } catch (const z3::exception &e) {
    why = fmt::format("Z3 failed choosing sizes: {}", e.msg());
    return std::nullopt;
  }
}

std::optional<SizeAssignment> fallbackSizes(const BarrierSkeleton &sk, const SizeAssignment &given,
                                            std::string &why) {
  if (given.empty())
    return smallestTwoRoundSizes(sk, why);
  bool unbound = false;
  if (auto sizes = admittedSizes(sk, given, why, &unbound))
    return sizes;
  if (!unbound)
    return std::nullopt;
  return smallestTwoRoundSizes(sk, why, given);
}

} // namespace tilescope
