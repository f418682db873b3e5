#include "verifier/BarrierFallback.h"

#include "ir/Budget.h"
#include "ir/ConcreteEval.h"
#include "verifier/BarrierExplorer.h"
#include "verifier/FallbackSizes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <set>
#include <string_view>

namespace tilescope {

namespace {

// CTAs (or clusters) unrolled to sort them into classes of identical runs;
// only one run of each class is explored.
constexpr int64_t kMaxCtas = 1 << 16;
constexpr size_t kMaxSteps = 1'000'000;
// Steps unrolled over all CTAs together.
constexpr size_t kMaxTotalSteps = 20'000'000;

void notChecked(BarrierReport &report, llvm::SMLoc loc, const std::string &why) {
  report.method = "not proved (not checked exhaustively: " + why + ")";
  report.results.push_back({"exhaustive check of the concrete run", "not checked: " + why, false});
  report.notProved.push_back({loc, "not checked exhaustively either: " + why});
}

// The CTAs of the launch grid at these sizes, blockIdx (x, y, z).
std::optional<std::vector<std::array<int64_t, 3>>> ctasOf(const BarrierSkeleton &sk,
                                                          const SizeAssignment &sizes) {
  auto grid = gridExtent(sk, sizes);
  if (!grid)
    return std::nullopt;
  const std::array<int64_t, 3> &extent = *grid;
  if (extent[0] * extent[1] * extent[2] > kMaxCtas)
    return std::nullopt;
  std::vector<std::array<int64_t, 3>> out;
  for (int64_t z = 0; z < extent[2]; ++z)
    for (int64_t y = 0; y < extent[1]; ++y)
      for (int64_t x = 0; x < extent[0]; ++x)
        out.push_back({x, y, z});
  return out;
}

// A run with its messages' iteration texts left out: two CTAs whose runs
// have equal signatures take the same steps on the same elements with the
// same parities, amounts and accesses, so exploring one decides both.
std::string signatureOf(const BarrierSkeleton &sk, const ConcreteSkeleton &run) {
  std::string out;
  for (const ConcreteElement &e : run.elements)
    out += fmt::format("E{}[{}]{}/{}@{};", e.array, e.index, e.count, e.cta, e.cta);
  for (const ConcreteProcess &p : run.processes) {
    out += fmt::format("P{}@{}:", p.threads.describe(), p.cta);
    for (const ConcreteStep &st : p.steps) {
      out += fmt::format("{},{},{},{},{},{},{},{}", st.event - sk.events.data(), st.element,
                         st.parity, st.amount, st.expectBytes, st.round, st.syncThreads, st.cta);
      for (const ConcreteAccess &a : st.accesses) {
        out += fmt::format("|{}@{}:{}{}", a.buffer, a.cta, a.stage, a.write ? "w" : "r");
        for (const auto &[lo, hi] : a.box)
          out += fmt::format("[{},{})", lo, hi);
      }
      out += ';';
    }
  }
  return out;
}

std::string ctaText(const std::array<int64_t, 3> &c) {
  return c[1] == 0 && c[2] == 0 ? fmt::format("{}", c[0])
                                : fmt::format("({}, {}, {})", c[0], c[1], c[2]);
}

// The runs of the whole grid, for the method line: ", all 4 CTAs", ", the
// whole cluster of 2 CTAs", ", all 2 clusters of 2 CTAs, each explored
// whole", ", all 132 CTAs (2 distinct runs: CTAs 0 and 131 explored; CTAs
// share no mbarrier or shared memory)".
std::string runsText(int64_t cluster, size_t runs,
                     const std::vector<std::array<int64_t, 3>> &explored) {
  std::string what = cluster > 1 ? fmt::format("clusters of {} CTAs", cluster) : "CTAs";
  if (runs <= 1)
    return cluster > 1 ? fmt::format(", the whole cluster of {} CTAs", cluster) : "";
  std::string whole = cluster > 1 ? ", each explored whole" : "";
  if (explored.size() == runs)
    return fmt::format(", all {} {}{}", runs, what, whole);
  std::string names;
  for (size_t i = 0; i < explored.size(); ++i)
    names += (i == 0 ? "" : i + 1 == explored.size() ? " and " : ", ") + ctaText(explored[i]);
  return fmt::format(", all {} {}{} ({} distinct run{}: {} {} explored; {} share no mbarrier or "
                     "shared memory, so runs with the same steps decide each other)",
                     runs, what, whole, explored.size(), explored.size() == 1 ? "" : "s",
                     cluster > 1
                         ? (explored.size() == 1 ? "the cluster of CTA" : "the clusters of CTAs")
                         : (explored.size() == 1 ? "CTA" : "CTAs"),
                     names, cluster > 1 ? "clusters" : "CTAs");
}

// The run a finding comes from: ", CTA (1, 0, 0)", ", the cluster of CTA
// (2, 0, 0)", ", the whole cluster of 2 CTAs", or nothing for one CTA.
std::string runText(int64_t cluster, size_t runs, const std::array<int64_t, 3> &c) {
  if (runs > 1)
    return fmt::format(", {} ({}, {}, {})", cluster > 1 ? "the cluster of CTA" : "CTA", c[0], c[1],
                       c[2]);
  return cluster > 1 ? fmt::format(", the whole cluster of {} CTAs", cluster) : "";
}

// The exhaustive check at one size point. A finding goes into the report
// (its witness naming `sizesText`), what cannot be checked to `notChecked`;
// a clean run sets where it ran and the states it explored.
enum class AtSizes { Clean, Finding, NotChecked };

AtSizes exploreAt(const BarrierSkeleton &sk, const BarrierProofOptions &options,
                  const SizeAssignment &sizes, const std::string &sizesText, llvm::SMLoc at,
                  BarrierReport &report,
                  const std::function<void(llvm::SMLoc, const std::string &)> &notChecked,
                  std::string &where, size_t &states) {
  // Every CTA of a cluster is explored in one run (arrivals and copies cross
  // between them): one run per cluster, named by its first CTA.
  auto shape = clusterShapeOf(sk);
  if (!shape) {
    notChecked(at, "the cluster's extent is not a constant along one axis");
    return AtSizes::NotChecked;
  }
  int64_t cluster = shape->extent;
  auto ctas = ctasOf(sk, sizes);
  if (ctas && cluster > 1)
    ctas->erase(
        std::remove_if(ctas->begin(), ctas->end(),
                       [&](const auto &c) { return c[size_t(shape->axis)] % cluster != 0; }),
        ctas->end());
  // The first CTA's run; when it reads blockIdx, every CTA's (cluster's)
  // run, sorted into classes of identical runs, one explored per class.
  bool finding = false;
  ConcreteSkeleton first = unrollSkeleton(sk, sizes, {0, 0, 0}, kMaxSteps, cluster);
  std::vector<std::array<int64_t, 3>> runs{{0, 0, 0}};
  std::vector<std::pair<std::array<int64_t, 3>, ConcreteSkeleton>> classes;
  auto unrolled = [&](const ConcreteSkeleton &concrete, const std::array<int64_t, 3> &cta) {
    if (concrete.outOfRange) {
      ProtocolFinding f{ProtocolViolationKind::IndexOutOfRange,
                        concrete.errorLoc,
                        fmt::format("{} (checked exhaustively at {}{})", concrete.error, sizesText,
                                    runText(cluster, runs.size(), cta)),
                        {},
                        false};
      f.exhaustive = true;
      bool dup = false;
      for (const ProtocolFinding &g : report.findings)
        dup = dup || (g.kind == f.kind && g.loc == f.loc);
      if (!dup)
        report.findings.push_back(std::move(f));
      report.method = fmt::format("violated at {} (exhaustive check)", sizesText);
      report.results.push_back({"exhaustive check of the concrete run",
                                fmt::format("violated at {}: 1 finding(s)", sizesText), false});
      finding = true;
      return false;
    }
    if (!concrete.error.empty()) {
      notChecked(concrete.errorLoc, fmt::format("{} ({})", concrete.error, sizesText));
      return false;
    }
    return true;
  };
  bool blockDependent = first.usesBlockIdx;
  if (!unrolled(first, {0, 0, 0}))
    return finding ? AtSizes::Finding : AtSizes::NotChecked;
  if (blockDependent) {
    auto ctas = ctasOf(sk, sizes);
    if (ctas && cluster > 1)
      ctas->erase(
          std::remove_if(ctas->begin(), ctas->end(),
                         [&](const auto &c) { return c[size_t(shape->axis)] % cluster != 0; }),
          ctas->end());
    if (!ctas) {
      notChecked(at, fmt::format("the run depends on blockIdx and the grid at {} is not a "
                                 "constant of at most {} CTAs",
                                 sizesText, kMaxCtas));
      return AtSizes::NotChecked;
    }
    runs = *ctas;
  }
  std::set<std::string> seen;
  size_t totalSteps = 0;
  for (const auto &cta : runs) {
    // Up to kMaxCtas unrolls: each polls the budget, and so does this loop.
    if (Budget *budget = activeBudget(); budget && budget->expired()) {
      notChecked(at, fmt::format("the budget ran out while unrolling the runs of the {} CTAs at {}",
                                 runs.size(), sizesText));
      return AtSizes::NotChecked;
    }
    ConcreteSkeleton concrete = cta == runs.front() && classes.empty()
                                    ? std::move(first)
                                    : unrollSkeleton(sk, sizes, cta, kMaxSteps, cluster);
    for (const ConcreteProcess &p : concrete.processes)
      totalSteps += p.steps.size();
    if (totalSteps > kMaxTotalSteps) {
      notChecked(at, fmt::format("the runs of the {} CTAs at {} take over {} steps", runs.size(),
                                 sizesText, kMaxTotalSteps));
      return AtSizes::NotChecked;
    }
    if (!unrolled(concrete, cta))
      return finding ? AtSizes::Finding : AtSizes::NotChecked;
    if (seen.insert(signatureOf(sk, concrete)).second)
      classes.push_back({cta, std::move(concrete)});
  }
  states = 0;
  std::vector<ProtocolFinding> findings;
  bool complete = true;
  std::string limit;
  for (const auto &[cta, concrete] : classes) {
    ExplorationResult result = exploreSkeleton(concrete, options.stateCap);
    states += result.states;
    for (ProtocolFinding &f : result.findings) {
      f.message += fmt::format(" (checked exhaustively at {}{})", sizesText,
                               runText(cluster, runs.size(), cta));
      findings.push_back(std::move(f));
    }
    // Findings of an exploration cut short are real: each is a state
    // reached at these sizes.
    if (!result.complete) {
      complete = false;
      limit = result.limit;
    }
    if (!findings.empty() || !complete)
      break;
  }
  std::vector<std::array<int64_t, 3>> explored;
  for (const auto &c : classes)
    explored.push_back(c.first);
  if (findings.empty() && !complete) {
    notChecked(at, fmt::format("{} at {}", limit, sizesText));
    return AtSizes::NotChecked;
  }
  where = sizesText + runsText(cluster, runs.size(), explored);
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
    return AtSizes::Finding;
  }
  return AtSizes::Clean;
}

} // namespace

bool exhaustiveFallbackForced() {
  static const bool forced = [] {
    const char *text = std::getenv("TILESCOPE_FORCE_FALLBACK");
    return text && std::string_view(text) == "1";
  }();
  return forced;
}

void runExhaustiveFallback(const BarrierSkeleton &sk, const BarrierProofOptions &options,
                           BarrierReport &report) {
  llvm::SMLoc at = report.notProved.empty() ? llvm::SMLoc() : report.notProved.front().first;
  // Once the command's budget has run out nothing more is decided: the
  // obligations stay open and the kernel is `budget` (check/KernelProofs.h).
  // The open ones may be queries the deadline cancelled; an exploration
  // started then could only add findings the proofs would not have needed.
  if (Budget *budget = activeBudget(); budget && budget->expired()) {
    notChecked(report, at, "the budget ran out before the exhaustive check");
    return;
  }
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
  // The smallest two-round sizes, then (when no sizes were given) their
  // neighbours (FallbackSizes.h: other residues of the trip counts), until
  // one shows a violation.
  std::vector<SizeAssignment> points{*sizes};
  if (options.sizes.empty())
    for (SizeAssignment &n : neighbourSizes(sk, *sizes))
      points.push_back(std::move(n));
  if (Budget *budget = activeBudget(); budget && budget->expired()) {
    notChecked(report, at, "the budget ran out choosing the sizes to check");
    return;
  }
  std::string where;
  size_t states = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    // At a neighbour, what cannot be checked (more states than the cap at
    // larger sizes) leaves the verdict of the sizes before it standing.
    std::string skipped;
    auto openAt = [&](llvm::SMLoc loc, const std::string &why) {
      if (i == 0)
        notChecked(report, loc, why);
      else
        skipped = why;
    };
    std::string text = i == 0 ? sizesText : describeSizes(points[i]), ranAt;
    size_t n = 0;
    AtSizes r = exploreAt(sk, options, points[i], text, at, report, openAt, ranAt, n);
    if (r == AtSizes::Finding || (r == AtSizes::NotChecked && i == 0))
      return;
    if (r == AtSizes::NotChecked) {
      report.results.push_back({"exhaustive check at further sizes",
                                fmt::format("not checked at {}: {}", text, skipped), false});
      continue;
    }
    if (i == 0) {
      where = ranAt;
    } else {
      SizeAssignment diff;
      for (const auto &[name, v] : points[i])
        if (points[0].at(name) != v)
          diff[name] = v;
      where += (i == 1 ? "; also at " : "; at ") + describeSizes(diff);
    }
    states += n;
  }
  report.method = fmt::format("checked exhaustively at {} (not proved for all sizes)", where);
  for (ProtocolResult &r : report.results)
    if (!r.proved && r.status.rfind("not proved", 0) == 0)
      r.status = fmt::format("checked exhaustively at {} (not proved for all sizes)", where);
  report.results.push_back(
      {"exhaustive check of the concrete run",
       fmt::format("checked exhaustively at {}: {} states, every interleaving, no violation", where,
                   states),
       false});
  report.checkedExhaustively = std::move(report.notProved);
  report.notProved.clear();
}

} // namespace tilescope
