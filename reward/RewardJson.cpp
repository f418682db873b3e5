// The JSON of `tilescope reward --json` (docs/reward.md, docs/reward.schema.json).
#include "reward/Json.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>

namespace tilescope::reward_detail {
namespace {

double rounded(double v, double unit) {
  return std::round(v / unit) * unit;
}

StageStatus statusFromName(llvm::StringRef s) {
  if (s == "pass")
    return StageStatus::Pass;
  if (s == "fail")
    return StageStatus::Fail;
  if (s == "unknown")
    return StageStatus::Unknown;
  if (s == "budget")
    return StageStatus::Budget;
  return StageStatus::Skipped;
}

llvm::json::Value firstFailureJson(const std::optional<FirstFailure> &f) {
  if (!f)
    return nullptr;
  return llvm::json::Object{{"stage", f->stage},
                            {"code", f->code},
                            {"file", f->file},
                            {"line", int64_t(f->line)},
                            {"column", int64_t(f->column)},
                            {"hint", f->hint}};
}

} // namespace

llvm::json::Object diagnosticJson(const RewardDiagnostic &d) {
  return llvm::json::Object{{"severity", d.severity},  {"file", d.file},
                            {"line", int64_t(d.line)}, {"column", int64_t(d.column)},
                            {"kernel", d.kernel},      {"code", d.code},
                            {"message", d.message},    {"witness", d.witness}};
}

llvm::json::Object stageJson(const StageResult &s) {
  llvm::json::Array diagnostics;
  for (const RewardDiagnostic &d : s.diagnostics)
    diagnostics.push_back(diagnosticJson(d));
  return llvm::json::Object{{"name", s.name},
                            {"status", stageStatusName(s.status)},
                            {"ms", rounded(s.ms, 0.001)},
                            {"cached", s.cached},
                            {"reason", s.reason},
                            {"credit", rounded(s.credit, 1e-6)},
                            {"diagnostics", std::move(diagnostics)}};
}

std::optional<StageResult> stageFromJson(const llvm::json::Value &v) {
  const llvm::json::Object *o = v.getAsObject();
  if (!o)
    return std::nullopt;
  StageResult s;
  auto str = [&](const llvm::json::Object &obj, llvm::StringRef key) {
    auto value = obj.getString(key);
    return value ? value->str() : std::string();
  };
  s.name = str(*o, "name");
  s.status = statusFromName(str(*o, "status"));
  s.ms = o->getNumber("ms").getValueOr(0);
  s.reason = str(*o, "reason");
  s.credit = o->getNumber("credit").getValueOr(0);
  if (const llvm::json::Array *diags = o->getArray("diagnostics"))
    for (const llvm::json::Value &dv : *diags) {
      const llvm::json::Object *d = dv.getAsObject();
      if (!d)
        return std::nullopt;
      RewardDiagnostic r;
      r.severity = str(*d, "severity");
      r.file = str(*d, "file");
      r.line = unsigned(d->getInteger("line").getValueOr(0));
      r.column = unsigned(d->getInteger("column").getValueOr(0));
      r.kernel = str(*d, "kernel");
      r.code = str(*d, "code");
      r.message = str(*d, "message");
      r.witness = str(*d, "witness");
      s.diagnostics.push_back(std::move(r));
    }
  if (s.name.empty())
    return std::nullopt;
  return s;
}

llvm::json::Object resultJson(const RewardResult &r) {
  llvm::json::Array kernels;
  for (const KernelReward &k : r.kernels) {
    llvm::json::Array stages, simulated;
    for (const StageResult &s : k.stages)
      stages.push_back(stageJson(s));
    for (const SimulatedSize &s : k.simulated) {
      llvm::json::Object size{{"sizes", s.sizes},     {"ctas", s.ctas},
                              {"poison", s.poison},   {"outcome", s.outcome},
                              {"ms", rounded(s.ms, 0.001)}, {"role", s.role}};
      if (!s.reason.empty())
        size["reason"] = s.reason;
      simulated.push_back(std::move(size));
    }
    llvm::json::Object kernel{{"kernel", k.kernel},
                              {"candidate", k.candidate},
                              {"verdict", k.verdict},
                              {"score", rounded(k.score, 1e-6)},
                              {"stages", std::move(stages)},
                              {"simulated", std::move(simulated)},
                              {"first_failure", firstFailureJson(k.firstFailure)}};
    if (!k.point.empty()) // a kernel with parameters, scored at this point
      kernel["point"] = k.point;
    if (const std::optional<PerformanceEstimate> &p = k.performance) // only when the model ran
      kernel["performance"] = llvm::json::Object{{"machine", p->machine},
                                                 {"sizes", p->sizes},
                                                 {"predicted_us", rounded(p->predictedUs, 0.001)},
                                                 {"bound_by", p->boundBy},
                                                 {"tflops", rounded(p->tflops, 0.1)},
                                                 {"roofline_us", rounded(p->rooflineUs, 0.001)},
                                                 {"baseline_us", rounded(p->baselineUs, 0.001)},
                                                 {"ratio", rounded(p->ratio, 1e-4)}};
    kernels.push_back(std::move(kernel));
  }
  llvm::json::Array diagnostics;
  for (const RewardDiagnostic &d : r.diagnostics)
    diagnostics.push_back(diagnosticJson(d));
  // The file's view: one kernel's stages, or each stage's worst status over
  // the kernels with their diagnostics together.
  llvm::json::Array stages;
  for (size_t i = 0; i < rewardStageNames().size(); ++i) {
    StageResult merged;
    merged.name = rewardStageNames()[i];
    bool any = false;
    int worst = -1;
    double credit = 0;
    // Severity order of statuses for the file's view.
    auto rank = [](StageStatus s) {
      switch (s) {
      case StageStatus::Pass:
        return 0;
      case StageStatus::Skipped:
        return 1;
      case StageStatus::Unknown:
        return 2;
      case StageStatus::Budget:
        return 3;
      case StageStatus::Fail:
        return 4;
      }
      return 4;
    };
    for (const KernelReward &k : r.kernels) {
      if (i >= k.stages.size())
        continue;
      const StageResult &s = k.stages[i];
      any = true;
      merged.ms += s.ms;
      merged.cached = s.cached || merged.cached;
      credit += s.credit;
      if (rank(s.status) > worst) {
        worst = rank(s.status);
        merged.status = s.status;
        merged.reason = s.reason;
      }
      for (const RewardDiagnostic &d : s.diagnostics)
        merged.diagnostics.push_back(d);
    }
    if (!any)
      continue;
    merged.credit = credit / double(r.kernels.size());
    stages.push_back(stageJson(merged));
  }
  std::optional<FirstFailure> first;
  for (const KernelReward &k : r.kernels)
    if (k.firstFailure) {
      first = k.firstFailure;
      break;
    }
  if (!first && !r.diagnostics.empty()) {
    const RewardDiagnostic &d = r.diagnostics.front();
    first = FirstFailure{"parse", d.code, d.message, d.file, d.line, d.column};
  }
  return llvm::json::Object{
      {"file", r.file},
      {"candidate", r.candidate},
      {"problem", r.problem.empty() ? llvm::json::Value(nullptr) : llvm::json::Value(r.problem)},
      {"seed", int64_t(r.seed & 0x7FFFFFFFFFFFFFFFull)},
      {"verdict", r.verdict},
      {"exit_code", int64_t(r.exitCode)},
      {"score", rounded(r.score, 1e-6)},
      {"ms", rounded(r.ms, 0.001)},
      {"stages", std::move(stages)},
      {"first_failure", firstFailureJson(first)},
      {"kernels", std::move(kernels)},
      {"diagnostics", std::move(diagnostics)}};
}

} // namespace tilescope::reward_detail

namespace tilescope {

std::string rewardJson(const RewardResult &result, unsigned indent) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::Value v(reward_detail::resultJson(result));
  if (indent)
    os << llvm::formatv(("{0:" + std::to_string(indent) + "}").c_str(), v);
  else
    os << v;
  os.flush();
  return out;
}

std::string rewardJson(const std::string &source, const RewardOptions &options) {
  return rewardJson(reward(source, options));
}

} // namespace tilescope
