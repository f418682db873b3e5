// `tilescope race FILE [--kernel K] [--json] [--skeleton]`: the
// synchronisation checks of a kernel file on their own: the barrier-protocol
// proofs (verifier/BarrierProofs.h) and the static race check
// (racecheck/StaticRaces.h), with a summary that says which results are proofs
// for all sizes. `--skeleton` prints the extracted synchronisation skeleton.
// Input errors exit 2; findings exit 1.
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "racecheck/StaticRaces.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/JsonOutput.h"
#include "verifier/BarrierProofs.h"
#include "verifier/BarrierSkeleton.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

namespace tilescope::tool {
namespace {
namespace cl = llvm::cl;

cl::SubCommand raceCommand("race", "Prove barrier protocols and check a kernel for races");
cl::opt<std::string> input(cl::Positional, cl::desc("FILE"), cl::sub(raceCommand));
cl::opt<std::string> kernelName("kernel", cl::desc("Check only kernel K"), cl::value_desc("K"),
                                cl::sub(raceCommand));
cl::opt<bool> json("json", cl::desc("Print the result as JSON"), cl::sub(raceCommand));
cl::opt<bool> skeleton("skeleton", cl::desc("Print each kernel's synchronisation skeleton"),
                       cl::sub(raceCommand));
cl::opt<std::string> args("args", cl::desc("Sizes for the dynamic check on the simulator"),
                          cl::value_desc("M=256,N=256,K=128"), cl::sub(raceCommand));

llvm::json::Object position(Diagnostics &diag, llvm::SMLoc loc) {
  llvm::json::Object o;
  if (loc.isValid()) {
    auto [line, col] = diag.sourceMgr().getLineAndColumn(loc);
    o["line"] = int64_t(line);
    o["column"] = int64_t(col);
  }
  return o;
}

int runRace() {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, /*printImmediately=*/!json);
  if (input.empty()) {
    diag.error(llvm::SMLoc(), "race needs a FILE");
    if (json)
      llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                                 {"ok", false},
                                                 {"status", int(kInputError)},
                                                 {"diagnostics", diagnosticsJson(diag)}}))
                   << "\n";
    return kInputError;
  }
  auto id = loadInput(input, diag);
  Module module;
  if (id) {
    module = parseModule(*id, diag);
    if (!diag.hasErrors())
      checkModule(module, diag);
  }
  std::vector<const Kernel *> kernels;
  if (!diag.hasErrors()) {
    for (const Kernel &k : module.kernels)
      if (kernelName.empty() || k.name == kernelName)
        kernels.push_back(&k);
    if (!kernelName.empty() && kernels.empty())
      diag.error(llvm::SMLoc(), fmt::format("no kernel named '{}'", kernelName.getValue()));
  }
  if (!diag.hasErrors() && !args.empty())
    diag.error(llvm::SMLoc(),
               "the dynamic race check (--args) needs the simulator's memory-access "
               "hook, which is not available yet; run without --args for the static check");
  if (diag.hasErrors()) {
    if (json)
      llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                                 {"ok", false},
                                                 {"status", int(kInputError)},
                                                 {"diagnostics", diagnosticsJson(diag)}}))
                   << "\n";
    return kInputError;
  }

  int status = kClean;
  llvm::json::Array kernelsJson;
  for (const Kernel *k : kernels) {
    if (skeleton && !json)
      llvm::outs() << extractBarrierSkeleton(*k).print();
    BarrierReport barriers = proveBarrierProtocols(*k);
    RaceReport races = checkStaticRaces(*k);
    unsigned found = reportBarrierProtocols(barriers, diag) + reportStaticRaces(races, diag);
    if (found)
      status = kFindings;
    if (json) {
      llvm::json::Array findings, results, raceFindings;
      for (const ProtocolFinding &f : barriers.findings) {
        llvm::json::Object o = position(diag, f.loc);
        o["kind"] = std::string(protocolViolationName(f.kind));
        o["message"] = f.message;
        o["witness"] = f.symbolic ? "z3" : "structural";
        findings.push_back(std::move(o));
      }
      for (const ProtocolResult &r : barriers.results)
        results.push_back(llvm::json::Object{
            {"property", r.property}, {"status", r.status}, {"proved", r.proved}});
      for (const RaceFinding &f : races.findings) {
        llvm::json::Object o = position(diag, f.first);
        o["kind"] = f.kind == RaceKind::DataRace ? "data race" : "missing fence.proxy.async";
        o["message"] = f.message;
        o["other"] = position(diag, f.second);
        raceFindings.push_back(std::move(o));
      }
      kernelsJson.push_back(llvm::json::Object{
          {"name", k->name},
          {"barrier_findings", std::move(findings)},
          {"barrier_results", std::move(results)},
          {"races", std::move(raceFindings)},
          {"race_pairs_proved", int64_t(races.pairsProved)},
          {"race_pairs_ordered_by_mbarriers", int64_t(races.pairsOrderedByMbarrier)},
          {"not_proved", int64_t(barriers.notProved.size() + races.notChecked.size())}});
    } else {
      llvm::outs() << fmt::format(
          "{}: kernel {}: barrier protocol {}, static races {}\n", input.getValue(), k->name,
          barriers.findings.empty() ? std::string("ok")
                                    : fmt::format("{} finding(s)", barriers.findings.size()),
          races.findings.empty() ? std::string("ok")
                                 : fmt::format("{} finding(s)", races.findings.size()));
      for (const ProtocolResult &r : barriers.results)
        llvm::outs() << fmt::format("  {}: {}\n", r.property, r.status);
      llvm::outs() << fmt::format(
          "  races: {} access pair(s) proved race-free for all sizes, {} left to the "
          "mbarrier proofs, {} not checked\n",
          races.pairsProved, races.pairsOrderedByMbarrier, races.notChecked.size());
      if (!barriers.notProved.empty())
        llvm::outs() << fmt::format("  {} obligation(s) not proved (see warnings)\n",
                                    barriers.notProved.size());
    }
  }
  if (json)
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                               {"ok", status == kClean},
                                               {"status", status},
                                               {"kernels", std::move(kernelsJson)},
                                               {"diagnostics", diagnosticsJson(diag)}}))
                 << "\n";
  return status;
}

CommandRegistration registration(raceCommand, runRace);
} // namespace
} // namespace tilescope::tool
