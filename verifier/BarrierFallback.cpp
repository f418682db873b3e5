#include "verifier/BarrierFallback.h"

#include "ir/ConcreteEval.h"
#include "verifier/BarrierExplorer.h"
#include "verifier/FallbackSizes.h"

#include <fmt/format.h>

#include <algorithm>

namespace tilescope {

namespace {

constexpr int64_t kMaxCtas = 64;
constexpr size_t kMaxSteps = 1'000'000;

void notChecked(BarrierReport &report, llvm::SMLoc loc, const std::string &why) {
  report.method = "not proved (not checked exhaustively: " + why + ")";
  report.results.push_back({"exhaustive check of the concrete run", "not checked: " + why, false});
  report.notProved.push_back({loc, "not checked exhaustively either: " + why});
}

// The CTAs of the launch grid at these sizes, blockIdx (x, y, z).
std::optional<std::vector<std::array<int64_t, 3>>> ctasOf(const BarrierSkeleton &sk,
                                                          const SizeAssignment &sizes) {
  std::array<int64_t, 3> extent{1, 1, 1};
  for (size_t d = 0; d < sk.grid.size() && d < 3; ++d) {
    auto v = evalConcrete(sk.grid[d], [&](const Expr &e) -> std::optional<int64_t> {
      if (e->kind != ExprKind::Var)
        return std::nullopt;
      auto it = sizes.find(as<Var>(e).name);
      return it == sizes.end() ? std::nullopt : std::optional<int64_t>(it->second);
    });
    if (!v || *v < 1)
      return std::nullopt;
    extent[d] = *v;
  }
  if (extent[0] * extent[1] * extent[2] > kMaxCtas)
    return std::nullopt;
  std::vector<std::array<int64_t, 3>> out;
  for (int64_t z = 0; z < extent[2]; ++z)
    for (int64_t y = 0; y < extent[1]; ++y)
      for (int64_t x = 0; x < extent[0]; ++x)
        out.push_back({x, y, z});
  return out;
}

// What the runs covered, for the method line: ", all 4 CTAs", ", the whole
// cluster of 2 CTAs", ", all 2 clusters of 2 CTAs, each explored whole".
std::string runsText(int64_t cluster, size_t runs) {
  if (cluster <= 1)
    return runs > 1 ? fmt::format(", all {} CTAs", runs) : "";
  return runs > 1 ? fmt::format(", all {} clusters of {} CTAs, each explored whole", runs, cluster)
                  : fmt::format(", the whole cluster of {} CTAs", cluster);
}

// The run a finding comes from: ", CTA (1, 0, 0)", ", the cluster of CTA
// (2, 0, 0)", ", the whole cluster of 2 CTAs", or nothing for one CTA.
std::string runText(int64_t cluster, const std::vector<std::array<int64_t, 3>> &runs, size_t r) {
  if (runs.size() > 1)
    return fmt::format(", {} ({}, {}, {})", cluster > 1 ? "the cluster of CTA" : "CTA", runs[r][0],
                       runs[r][1], runs[r][2]);
  return cluster > 1 ? fmt::format(", the whole cluster of {} CTAs", cluster) : "";
}

} // namespace

void runExhaustiveFallback(const BarrierSkeleton &sk, const BarrierProofOptions &options,
                           BarrierReport &report) {
  llvm::SMLoc at = report.notProved.empty() ? llvm::SMLoc() : report.notProved.front().first;
  if (!sk.unsupported.empty()) {
    notChecked(report, at, "the skeleton does not model every statement (see above)");
    return;
  }
  std::string why;
  std::optional<SizeAssignment> sizes = fallbackSizes(sk, options.sizes, why);
  if (!sizes) {
    notChecked(report, at, why);
    return;
  }
  std::string sizesText = describeSizes(*sizes);
  if (!options.sizesFrom.empty()) {
    // "K = 1024 from its `// problem:` annotation, M = 128, N = 128"
    SizeAssignment given, chosen;
    for (const auto &[name, v] : *sizes)
      (options.sizes.count(name) ? given : chosen)[name] = v;
    sizesText = fmt::format("{} from {}{}", describeSizes(given), options.sizesFrom,
                            chosen.empty() ? "" : ", " + describeSizes(chosen));
  }
  // Every CTA of a cluster is explored in one run (arrivals and copies cross
  // between them): one run per cluster, named by its first CTA.
  auto shape = clusterShapeOf(sk);
  if (!shape) {
    notChecked(report, at, "the cluster's extent is not a constant along one axis");
    return;
  }
  int64_t cluster = shape->extent;
  auto ctas = ctasOf(sk, *sizes);
  if (ctas && cluster > 1)
    ctas->erase(
        std::remove_if(ctas->begin(), ctas->end(),
                       [&](const auto &c) { return c[size_t(shape->axis)] % cluster != 0; }),
        ctas->end());
  std::vector<std::array<int64_t, 3>> runs{{0, 0, 0}};
  size_t states = 0;
  std::vector<ProtocolFinding> findings;
  for (size_t r = 0; r < runs.size(); ++r) {
    ConcreteSkeleton concrete = unrollSkeleton(sk, *sizes, runs[r], kMaxSteps, cluster);
    if (concrete.outOfRange) {
      ProtocolFinding f{ProtocolViolationKind::IndexOutOfRange, concrete.errorLoc,
                        fmt::format("{} (checked exhaustively at {})", concrete.error, sizesText),
                        {}, false};
      f.exhaustive = true;
      findings.push_back(std::move(f));
      break;
    }
    if (!concrete.error.empty()) {
      notChecked(report, concrete.errorLoc, fmt::format("{} ({})", concrete.error, sizesText));
      return;
    }
    if (r == 0 && concrete.usesBlockIdx) {
      if (!ctas) {
        notChecked(report, at,
                   fmt::format("the run depends on blockIdx and the grid at {} is not a "
                               "constant of at most {} CTAs",
                               sizesText, kMaxCtas));
        return;
      }
      runs = *ctas;
    }
    ExplorationResult result = exploreSkeleton(concrete, options.stateCap);
    states += result.states;
    for (ProtocolFinding &f : result.findings) {
      f.message += fmt::format(" (checked exhaustively at {}{})", sizesText,
                               runText(cluster, runs, r));
      findings.push_back(std::move(f));
    }
    if (!result.complete) {
      notChecked(report, at, fmt::format("{} at {}", result.limit, sizesText));
      return;
    }
    if (!findings.empty())
      break;
  }
  std::string where = sizesText + runsText(cluster, runs.size());
  for (ProtocolFinding &f : findings) {
    bool dup = false;
    for (const ProtocolFinding &g : report.findings)
      dup = dup || (g.kind == f.kind && g.loc == f.loc);
    if (!dup)
      report.findings.push_back(std::move(f));
  }
  if (!findings.empty()) {
    report.method = fmt::format("violated at {} (exhaustive check)", where);
    report.results.push_back({"exhaustive check of the concrete run",
                              fmt::format("violated at {}: {} finding(s)", where, findings.size()),
                              false});
    return;
  }
  report.method = fmt::format("checked exhaustively at {} (not proved for all sizes)", where);
  for (ProtocolResult &r : report.results)
    if (!r.proved && r.status.rfind("not proved", 0) == 0)
      r.status = fmt::format("checked exhaustively at {} (not proved for all sizes)", where);
  report.results.push_back(
      {"exhaustive check of the concrete run",
       fmt::format("checked exhaustively at {}: {} states, every interleaving, no violation",
                   where, states),
       false});
  report.checkedExhaustively = std::move(report.notProved);
  report.notProved.clear();
}

} // namespace tilescope
