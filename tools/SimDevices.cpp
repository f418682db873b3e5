#include "tools/SimDevices.h"

#include "tools/Command.h"
#include "tools/JsonOutput.h"
#include "tools/SimTensors.h"

#include <fmt/format.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

namespace tilescope::tool {

int runDeviceSimulation(const DeviceSimRequest &r, Diagnostics &diag) {
  auto result = sim::simulateDevices(*r.kernel, r.args, r.problem, r.options, diag);
  if (!result)
    return finishInputError(diag, r.json);
  const sim::DeviceSimulation &s = *result;
  if (!r.dumpDir.empty())
    for (size_t d = 0; d < s.memory.size(); ++d) {
      std::vector<std::string> notes;
      std::string error;
      if (!dumpNpy(s.memory[d], fmt::format("{}/dev{}", r.dumpDir, d), &notes, &error)) {
        llvm::errs() << error << "\n";
        return kInputError;
      }
    }
  const sim::RunResult &run = s.run.run;
  std::vector<std::string> findings = s.placementFindings;
  if (!run.ok() && s.placementFindings.empty())
    findings.push_back(run.message);
  for (const sim::DetectedRace &race : run.races)
    findings.push_back(race.text);
  for (const std::string &u : s.run.unmatchedSignals)
    findings.push_back(u);
  if (!s.firstMismatch.empty())
    findings.push_back(fmt::format("{} of {} outputs differ from the float64 reference, {} never "
                                   "written; first: {}",
                                   s.mismatches, s.compared, s.unwritten, s.firstMismatch));
  int code = s.exitCode();
  if (r.json) {
    llvm::json::Array f, notes;
    for (const std::string &x : findings)
      f.push_back(x);
    for (const std::string &x : run.notes)
      notes.push_back(x);
    llvm::json::Object out{
        {"ok", code == 0},
        {"verdict", s.verdict()},
        {"file", r.file},
        {"kernel", r.kernel->name},
        {"devices", s.devices},
        {"seed", static_cast<int64_t>(r.options.seed)},
        {"outcome", std::string(sim::outcomeName(run.outcome))},
        {"compared", s.compared},
        {"mismatches", s.mismatches},
        {"unwritten", s.unwritten},
        {"races", static_cast<int64_t>(run.races.size())},
        {"unmatched_signals", static_cast<int64_t>(s.run.unmatchedSignals.size())},
        {"findings", std::move(f)},
        {"notes", std::move(notes)},
        {"ctas", run.stats.ctas},
        {"cpu_seconds", run.stats.cpuSeconds},
        {"diagnostics", diagnosticsJson(diag)}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
    return code;
  }
  llvm::raw_ostream &os = code == 0 || code == 3 ? llvm::outs() : llvm::errs();
  for (const std::string &x : findings)
    os << x << "\n";
  for (const std::string &n : run.notes)
    os << "  note: " << n << "\n";
  llvm::outs() << fmt::format("{}: {} on {} devices, seed {}: {} ({} CTAs, {} outputs compared "
                              "with the float64 reference{}, {:.2f} s CPU)\n",
                              r.command, r.kernel->name, s.devices, r.options.seed, s.verdict(),
                              run.stats.ctas, s.compared,
                              s.checked || !run.ok() ? ""
                              : r.problem            ? "; outputs not compared"
                                          : "; no device problem named, so nothing checked",
                              run.stats.cpuSeconds);
  return code;
}

} // namespace tilescope::tool
