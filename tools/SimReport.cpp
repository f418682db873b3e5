#include "tools/SimReport.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tilescope::tool {

namespace {

using sim::OutputReport;

std::string number(double v) {
  if (std::isnan(v))
    return "nan";
  return fmt::format("{:.9g}", v);
}

const std::vector<int64_t> &shapeOf(const SimReport &r, const std::string &name) {
  static const std::vector<int64_t> none;
  for (const sim::HostTensor &t : *r.tensors)
    if (t.name == name)
      return t.shape;
  return none;
}

std::string indexText(const std::vector<int64_t> &shape, int64_t flat) {
  std::string s;
  for (int64_t x : unflattenIndex(shape, flat))
    s += (s.empty() ? "" : ", ") + std::to_string(x);
  return "[" + s + "]";
}

llvm::json::Array indexJson(const std::vector<int64_t> &shape, int64_t flat) {
  llvm::json::Array a;
  for (int64_t x : unflattenIndex(shape, flat))
    a.push_back(x);
  return a;
}

llvm::json::Value numberJson(double v) {
  return std::isfinite(v) ? llvm::json::Value(v) : llvm::json::Value(nullptr);
}

std::string tileText(const std::vector<int64_t> &tile) {
  std::string s;
  for (int64_t x : tile)
    s += (s.empty() ? "" : " x ") + std::to_string(x);
  return s;
}

} // namespace

void printText(const SimReport &r, llvm::raw_ostream &out, llvm::raw_ostream &err) {
  const sim::SimulationResult &res = *r.result;
  const sim::RunResult &run = res.run;
  if (!run.ok()) {
    err << run.message << "\n";
    for (const std::string &n : run.notes)
      err << "  note: " << n << "\n";
  }
  for (const std::string &n : r.notes)
    out << "note: " << n << "\n";
  const sim::RunStats &s = run.stats;
  out << fmt::format("{}: {} on {} CTA{} (seed {}): {}{}\n", r.file, r.kernel, s.ctas,
                     s.ctas == 1 ? "" : "s", r.seed,
                     res.verdict == sim::SimVerdict::Unknown ? std::string("unknown") : res.result,
                     res.reason.empty() ? "" : " (" + res.reason + ")");
  if (r.problem)
    out << fmt::format("  problem: {}{}\n", *r.problem,
                       r.problemFrom == "option" ? " (from --problem)" : "");
  const std::vector<OutputReport> &outputs = res.outputs;
  for (const OutputReport &o : outputs) {
    const std::vector<int64_t> &shape = shapeOf(r, o.name);
    out << fmt::format("  {}: {} of {} elements compared, {} mismatches, max abs error {}, max rel "
                       "error {}{}\n",
                       o.name, o.compared, o.elements, o.mismatches, number(o.maxAbsError),
                       number(o.maxRelError),
                       o.unwritten ? fmt::format(", {} unwritten", o.unwritten) : "");
    for (const sim::Mismatch &m : o.first)
      out << fmt::format("    {}{}: got {}, expected {}\n", o.name, indexText(shape, m.index),
                         m.written ? number(m.got) : std::string("unwritten"), number(m.expected));
    if (!o.firstUnwritten.empty()) {
      std::string list;
      for (int64_t i : o.firstUnwritten)
        list += (list.empty() ? "" : " ") + indexText(shape, i);
      out << fmt::format("    unwritten: {}{}\n", list,
                         o.unwritten > static_cast<int64_t>(o.firstUnwritten.size()) ? " ..." : "");
    }
    if (!o.sampledTile.empty())
      out << fmt::format("    sampled CTAs: unwritten elements checked only in their tiles ({} "
                         "inferred from their stores): {} elements, {} unwritten\n",
                         tileText(o.sampledTile), o.regionElements, o.regionUnwritten);
  }
  // The findings the lines above do not show (mismatches do; a failed run's
  // message went to `err`).
  for (const sim::SimFinding &f : res.findings)
    if (f.kind != "mismatch" && f.kind != "deadlock" && f.kind != "runtime-error")
      out << fmt::format("  {}{}\n", f.location.empty() ? "" : f.location + ": ", f.message);
  double rate = s.cpuSeconds > 0 ? static_cast<double>(s.steps) / s.cpuSeconds : 0;
  double laneRate = s.cpuSeconds > 0 ? static_cast<double>(s.laneOps) / s.cpuSeconds : 0;
  out << fmt::format("  stats: {} steps, {} lane ops, {} async copies, {} mma sums, {} mma "
                     "instructions, {:.3f} s ({:.3f} s CPU), {:.3g} steps/s, {:.3g} lane ops/s\n",
                     s.steps, s.laneOps, s.asyncCopies, s.mmaSums, s.mmaInstructions, s.seconds,
                     s.cpuSeconds, rate, laneRate);
  if (!s.stepsPerWarp.empty()) {
    auto [lo, hi] = std::minmax_element(s.stepsPerWarp.begin(), s.stepsPerWarp.end());
    double mean = static_cast<double>(
                      std::accumulate(s.stepsPerWarp.begin(), s.stepsPerWarp.end(), int64_t{0})) /
                  static_cast<double>(s.stepsPerWarp.size());
    out << fmt::format(
        "  steps per warp (summed over CTAs): {} warps, min {}, mean {:.1f}, max {}\n",
        s.stepsPerWarp.size(), *lo, mean, *hi);
  }
  out << fmt::format("  bytes: global {} read, {} written; shared {}; tensor memory {}\n",
                     s.globalBytesRead, s.globalBytesWritten, s.sharedBytesAccessed,
                     s.tensorBytesAccessed);
}

llvm::json::Object toJson(const SimReport &r) {
  const sim::SimulationResult &res = *r.result;
  const sim::RunResult &run = res.run;
  const sim::RunStats &s = run.stats;
  llvm::json::Array outs;
  for (const OutputReport &o : res.outputs) {
    const std::vector<int64_t> &shape = shapeOf(r, o.name);
    llvm::json::Array first, unwritten, regionUnwritten, tile;
    for (const sim::Mismatch &m : o.first)
      first.push_back(
          llvm::json::Object{{"index", indexJson(shape, m.index)},
                             {"written", m.written},
                             {"got", m.written ? numberJson(m.got) : llvm::json::Value(nullptr)},
                             {"expected", numberJson(m.expected)}});
    for (int64_t i : o.firstUnwritten)
      unwritten.push_back(indexJson(shape, i));
    for (int64_t i : o.firstRegionUnwritten)
      regionUnwritten.push_back(indexJson(shape, i));
    for (int64_t x : o.sampledTile)
      tile.push_back(x);
    llvm::json::Object obj{{"name", o.name},
                           {"elements", o.elements},
                           {"compared", o.compared},
                           {"unwritten", o.unwritten},
                           {"first_unwritten", std::move(unwritten)},
                           {"mismatches", o.mismatches},
                           {"max_abs_error", o.maxAbsError},
                           {"max_rel_error", o.maxRelError},
                           {"first_mismatches", std::move(first)}};
    if (!o.sampledTile.empty())
      obj["sampled"] = llvm::json::Object{{"tile", std::move(tile)},
                                          {"elements", o.regionElements},
                                          {"unwritten", o.regionUnwritten},
                                          {"first_unwritten", std::move(regionUnwritten)}};
    outs.push_back(std::move(obj));
  }
  llvm::json::Array findings, changes, uninit;
  for (const sim::SimFinding &f : res.findings)
    findings.push_back(llvm::json::Object{
        {"kind", f.kind},
        {"message", f.message},
        {"location", f.location.empty() ? llvm::json::Value(nullptr) : f.location}});
  for (const sim::InputChange &c : res.inputChanges) {
    const std::vector<int64_t> &shape = shapeOf(r, c.name);
    changes.push_back(llvm::json::Object{{"name", c.name},
                                         {"changed", c.changed},
                                         {"written", c.written},
                                         {"first", indexJson(shape, c.first)},
                                         {"before", numberJson(c.before)},
                                         {"after", numberJson(c.after)}});
  }
  for (const sim::UninitializedRead &u : s.uninitializedReads)
    uninit.push_back(llvm::json::Object{{"space", u.space},
                                        {"buffer", u.buffer},
                                        {"element", u.element},
                                        {"location", u.location},
                                        {"agent", u.agent},
                                        {"cta", llvm::json::Array{u.cta[0], u.cta[1], u.cta[2]}},
                                        {"count", u.count}});
  llvm::json::Array notes, stepsPerWarp;
  for (const std::string &n : run.notes)
    notes.push_back(n);
  for (const std::string &n : r.notes)
    notes.push_back(n);
  for (int64_t v : s.stepsPerWarp)
    stepsPerWarp.push_back(v);
  double rate = s.cpuSeconds > 0 ? static_cast<double>(s.steps) / s.cpuSeconds : 0;
  double laneRate = s.cpuSeconds > 0 ? static_cast<double>(s.laneOps) / s.cpuSeconds : 0;
  llvm::json::Object out{
      {"ok", res.exitCode() == 0},
      {"status", res.exitCode()},
      {"kernel", r.kernel},
      {"verdict", std::string(sim::simVerdictName(res.verdict))},
      {"result", res.result},
      {"reason", res.reason.empty() ? llvm::json::Value(nullptr) : res.reason},
      {"problem", r.problem ? llvm::json::Value(*r.problem) : llvm::json::Value(nullptr)},
      {"problem_from", r.problemFrom.empty() ? llvm::json::Value(nullptr) : r.problemFrom},
      {"seed", static_cast<int64_t>(r.seed)},
      {"poison", r.poison},
      {"ctas", s.ctas},
      {"all_ctas", res.allCtas},
      {"findings", std::move(findings)},
      {"outputs", std::move(outs)},
      {"input_changes", std::move(changes)},
      {"uninitialized_reads", std::move(uninit)},
      {"stats", llvm::json::Object{{"steps", s.steps},
                                   {"lane_ops", s.laneOps},
                                   {"elements_moved", s.elementsMoved},
                                   {"async_copies", s.asyncCopies},
                                   {"mma_sums", s.mmaSums},
                                   {"mma_instructions", s.mmaInstructions},
                                   {"global_bytes_read", s.globalBytesRead},
                                   {"global_bytes_written", s.globalBytesWritten},
                                   {"shared_bytes_accessed", s.sharedBytesAccessed},
                                   {"tensor_bytes_accessed", s.tensorBytesAccessed},
                                   {"seconds", s.seconds},
                                   {"cpu_seconds", s.cpuSeconds},
                                   {"steps_per_warp", std::move(stepsPerWarp)},
                                   {"steps_per_second", rate},
                                   {"lane_ops_per_second", laneRate}}},
      {"notes", std::move(notes)}};
  if (!run.ok())
    out["error"] = run.message;
  return out;
}

} // namespace tilescope::tool
