#include "ir/ThreadUniformity.h"

#include "ir/ConcreteEval.h"

#include <fmt/format.h>

#include <vector>

namespace tilescope {

namespace {

// e's value on every thread of the CTA; nothing when one cannot be computed.
std::optional<std::vector<int64_t>> valuesOnThreads(const Expr &e, int64_t threads) {
  if (!e || threads < 1 || threads > 1024)
    return std::nullopt;
  std::vector<int64_t> values;
  values.reserve(size_t(threads));
  for (int64_t tx = 0; tx < threads; ++tx) {
    auto v = evalConcrete(e, [tx](const Expr &leaf) -> std::optional<int64_t> {
      if (leaf->kind != ExprKind::Builtin || !isThreadBuiltin(as<Builtin>(leaf).which))
        return std::nullopt;
      return threadBuiltinValue(as<Builtin>(leaf).which, tx);
    });
    if (!v)
      return std::nullopt;
    values.push_back(*v);
  }
  return values;
}

} // namespace

std::optional<Convergence> threadUniformity(const Expr &e, int64_t threads) {
  auto known = valuesOnThreads(e, threads);
  if (!known)
    return std::nullopt;
  const std::vector<int64_t> &values = *known;
  // Every group of `size` consecutive threads (the last one may be short)
  // agrees with its first thread.
  auto agreeIn = [&](int64_t size) {
    for (int64_t tx = 0; tx < threads; ++tx)
      if (values[size_t(tx)] != values[size_t(tx - tx % size)])
        return false;
    return true;
  };
  if (agreeIn(threads))
    return Convergence::Grid;
  if (agreeIn(kThreadsPerWarpgroup))
    return Convergence::Warpgroup;
  if (agreeIn(kThreadsPerWarp))
    return Convergence::Warp;
  return Convergence::Thread;
}

std::optional<std::string> divergenceWitness(const Expr &e, int64_t threads, int64_t groupSize) {
  auto values = valuesOnThreads(e, threads);
  if (!values || groupSize < 1)
    return std::nullopt;
  auto name = [](int64_t tx) { return threadName(tx); };
  for (int64_t tx = 0; tx < threads; ++tx) {
    int64_t first = tx - tx % groupSize;
    if ((*values)[size_t(tx)] != (*values)[size_t(first)])
      return fmt::format("{} gives {}, {} gives {}", name(first), (*values)[size_t(first)],
                         name(tx), (*values)[size_t(tx)]);
  }
  return std::nullopt;
}

} // namespace tilescope
