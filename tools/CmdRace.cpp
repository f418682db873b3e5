// `tilescope race FILE [--kernel K] --args M=...,N=... [--seeds N] [--seed S]
//  [--ctas all|N] [--json]`: dynamic race check on the simulation. Runs the
// kernel under N scheduler seeds with happens-before tracking over shared,
// global and tensor memory (racecheck/dynamic/RaceDetector.h) and lists every pair of
// unordered conflicting accesses with both locations, unfenced generic writes
// read through the async proxy, and out-of-view accesses, each with the first
// seed that found it.
//
// Exit: 0 no race (and every run completed); 1 races, or a run that ended in
// a deadlock or runtime error; 2 usage or input error; 4 a run stopped at a
// budget (--timeout-ms for the whole command, --max-steps and
// --max-memory-mb per run; tools/Budgets.h) with no race found before it.
//
// `tilescope race FILE --static [--kernel K] [--json] [--skeleton]` runs the
// static checks instead: the barrier-protocol proofs and the two-thread race
// check, which need no sizes. Exit 0 proved, 1 findings, 3 unknown (an
// obligation neither proved nor checked), 2 usage or input error.
#include "ir/Checker.h"
#include "ir/DeviceScale.h"
#include "ir/Parser.h"
#include "ir/Verdict.h"
#include "racecheck/StaticRaces.h"
#include "simulator/Engine.h"
#include "simulator/Value.h"
#include "tools/Budgets.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/JsonOutput.h"
#include "tools/NameValues.h"
#include "tools/ProblemSizes.h"
#include "tools/OptionValues.h"
#include "verifier/BarrierProofs.h"
#include "verifier/PeerAccess.h"
#include "sync/BarrierSkeleton.h"
#include "proof/ProofContext.h"
#include "proof/SolverBudget.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <set>

namespace tilescope::tool {
namespace {
namespace cl = llvm::cl;
using namespace tilescope::sim;

cl::SubCommand raceCommand("race", "Dynamic race check of a kernel on the simulator");
cl::opt<std::string> input(cl::Positional, cl::desc("FILE"), cl::Required, cl::sub(raceCommand));
cl::opt<std::string> kernelName("kernel", cl::desc("Check kernel K (needed when FILE has several)"),
                                cl::value_desc("K"), cl::sub(raceCommand));
cl::opt<std::string> argsText("args", cl::desc("Shape symbols and scalars, e.g. M=256,N=256"),
                              cl::value_desc("NAME=VALUE,..."), cl::sub(raceCommand));
IntOption<uint64_t> firstSeed("seed", cl::desc("First scheduler seed"), cl::init(1),
                            cl::sub(raceCommand));
IntOption<int64_t> seeds("seeds", cl::desc("How many seeds (interleavings) to run"), cl::init(4),
                       cl::sub(raceCommand));
cl::opt<std::string> ctasText("ctas", cl::desc("CTAs to run: all, or N (edge tiles first)"),
                              cl::init("1"), cl::value_desc("all|N"), cl::sub(raceCommand));
cl::opt<bool> json("json", cl::desc("Print the result as JSON"), cl::sub(raceCommand));
BudgetOptions budgetOptions(raceCommand, /*withSteps=*/true);

int usage(const std::string &message) {
  llvm::errs() << "tilescope race: error: " << message << "\n";
  return kInputError;
}

cl::opt<bool> staticOnly("static",
                         cl::desc("Static checks instead of the simulation: the barrier-protocol "
                                  "proofs and the two-thread race check, for all sizes"),
                         cl::sub(raceCommand));
cl::opt<bool> skeleton("skeleton",
                       cl::desc("With --static: print each kernel's synchronisation skeleton"),
                       cl::sub(raceCommand));

llvm::json::Object position(Diagnostics &diag, llvm::SMLoc loc) {
  llvm::json::Object o;
  if (loc.isValid()) {
    auto [line, col] = diag.sourceMgr().getLineAndColumn(loc);
    o["line"] = int64_t(line);
    o["column"] = int64_t(col);
  }
  return o;
}

// `tilescope race FILE --static`: verifier/BarrierProofs.h and
// racecheck/StaticRaces.h on every kernel (or --kernel K), with a summary
// that says which results are proofs for all sizes.
int runStaticRace() {
  CommandInput in(/*printImmediately=*/!json);
  Diagnostics &diag = in.diag;
  auto inputError = [&]() { return finishInputError(diag, json); };
  if (!in.load(input))
    return inputError();
  const Module &module = *in.module;
  std::vector<const Kernel *> kernels;
  for (const Kernel &k : module.kernels)
    if (kernelName.empty() || k.name == kernelName)
      kernels.push_back(&k);
  if (!kernelName.empty() && kernels.empty()) {
    diag.error(llvm::SMLoc(), fmt::format("no kernel named '{}'", kernelName.getValue()));
    return inputError();
  }
  // The exhaustive barrier check runs at the sizes a kernel's problem
  // annotation names, if any.
  llvm::StringRef source = in.sourceMgr.getMemoryBuffer(in.sourceMgr.getMainFileID())->getBuffer();
  std::vector<BarrierProofOptions> options(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i)
    if (auto sizes = problemSizesOf(*kernels[i], source, diag); sizes && !sizes->empty()) {
      options[i].sizes = std::move(*sizes);
      options[i].sizesFrom = kProblemSizesFrom;
    }
  if (diag.hasErrors())
    return inputError();
  Verdict verdict = Verdict::Proved;
  llvm::json::Array kernelsJson;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const Kernel *k = kernels[i];
    activeBudget()->setStage(fmt::format("the static checks of kernel {}", k->name));
    if (skeleton && !json)
      llvm::outs() << extractBarrierSkeleton(*k).print();
    // Each kernel's queries in a Z3 context of their own (proof/ProofContext.h).
    ProofContextScope context;
    // A devices(N) kernel is checked under its launch's facts (0 <= devid <
    // ndev = N <= 8), as by `check`; its accesses to global memory against
    // the instances its placements give each device (verifier/PeerAccess.h).
    Kernel withFacts;
    if (!k->launch.devices.empty()) {
      withFacts = *k;
      appendDeviceFacts(withFacts);
      k = &withFacts;
    }
    BarrierReport barriers = proveBarrierProtocols(*k, options[i]);
    RaceReport races = checkStaticRaces(*k);
    PeerAccessReport places = checkPeerAccesses(*k);
    // Z3 past its memory cap or stopped by the wall-time backstop is the
    // budget, not an unknown (proof/SolverBudget.h).
    for (const auto *reasons : {&barriers.notProved, &races.notChecked, &places.notProved})
      for (const auto &[loc, why] : *reasons)
        noteSolverGaveUp(why);
    unsigned found = reportBarrierProtocols(barriers, diag) + reportStaticRaces(races, diag) +
                     reportPeerAccesses(places, diag);
    // An obligation neither proved nor checked leaves the kernel unknown.
    Verdict kernelVerdict =
        found ? Verdict::Finding
        : barriers.notProved.empty() && races.notChecked.empty() && places.notProved.empty()
            ? Verdict::Proved
            : Verdict::Unknown;
    verdict = combine(verdict, kernelVerdict);
    if (json) {
      llvm::json::Array findings, results, raceFindings;
      for (const ProtocolFinding &f : barriers.findings) {
        llvm::json::Object o = position(diag, f.loc);
        o["kind"] = std::string(protocolViolationName(f.kind));
        o["message"] = f.message;
        o["witness"] = f.symbolic ? "z3" : f.exhaustive ? "exhaustive" : "structural";
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
          {"verdict", std::string(verdictName(kernelVerdict))},
          {"barrier_findings", std::move(findings)},
          {"barrier_results", std::move(results)},
          {"barrier_method", barriers.method},
          {"races", std::move(raceFindings)},
          {"race_pairs_proved", int64_t(races.pairsProved)},
          {"race_pairs_ordered_by_mbarriers", int64_t(races.pairsOrderedByMbarrier)},
          {"peer_accesses", places.applies ? llvm::json::Value(llvm::json::Object{
                                                  {"findings", int64_t(places.findings.size())},
                                                  {"accesses_proved", int64_t(places.accesses)},
                                                  {"peer_accesses_proved",
                                                   int64_t(places.peerAccesses)},
                                                  {"placed_moves_proved",
                                                   int64_t(places.placedMoves)}})
                                            : llvm::json::Value(nullptr)},
          {"not_proved", int64_t(barriers.notProved.size() + races.notChecked.size() +
                                 places.notProved.size())}});
      continue;
    }
    auto count = [](size_t n) {
      return n == 0 ? std::string("ok") : fmt::format("{} finding(s)", n);
    };
    llvm::outs() << fmt::format("{}: kernel {}: barrier protocol {}, static races {}\n",
                                input.getValue(), k->name, count(barriers.findings.size()),
                                count(races.findings.size()));
    llvm::outs() << fmt::format("  decided: {}\n", barriers.method);
    for (const ProtocolResult &r : barriers.results)
      llvm::outs() << fmt::format("  {}: {}\n", r.property, r.status);
    llvm::outs() << fmt::format(
        "  races: {} access pair(s) proved race-free for all sizes, {} left "
        "to the mbarrier proofs, {} not checked\n",
        races.pairsProved, races.pairsOrderedByMbarrier, races.notChecked.size());
    if (places.applies)
      llvm::outs() << fmt::format("  devices: {}\n",
                                  places.findings.size() ? count(places.findings.size())
                                  : places.notProved.empty()
                                      ? places.summary()
                                      : fmt::format("{} obligation(s) not proved (see warnings)",
                                                    places.notProved.size()));
    if (!barriers.notProved.empty())
      llvm::outs() << fmt::format("  {} obligation(s) not proved (see warnings)\n",
                                  barriers.notProved.size());
  }
  const Budget &budget = *activeBudget();
  bool stopped = budget.exceeded() != BudgetKind::None;
  if (stopped)
    verdict = combine(verdict, Verdict::Budget);
  int status = verdictExitCode(verdict);
  if (json) {
    llvm::json::Object out{{"ok", status == kClean},
                           {"verdict", std::string(verdictName(verdict))},
                           {"status", int64_t(status)},
                           {"kernels", std::move(kernelsJson)},
                           {"diagnostics", diagnosticsJson(diag)}};
    if (stopped)
      out["budget"] = budgetJson(budget);
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
  } else if (stopped) {
    llvm::errs() << "tilescope race: error: " << budget.message() << "\n";
  }
  return status;
}

int runDynamicRace();

int runRace() {
  if (int bad = budgetOptions.usageError("race"))
    return bad;
  Budget budget(budgetOptions.limits());
  return runWithinBudget(budget, staticOnly ? runStaticRace : runDynamicRace, [&] {
    llvm::SourceMgr sm;
    Diagnostics none(sm, false);
    return finishBudget(budget, none, json, "race");
  });
}

int runDynamicRace() {
  CommandInput in(/*printImmediately=*/!json);
  Diagnostics &diag = in.diag;
  auto inputError = [&]() { return finishInputError(diag, json); };
  if (!in.load(input))
    return inputError();
  const Module &module = *in.module;
  const Kernel *kernel = chooseKernel(module, kernelName, input, diag);
  if (!kernel)
    return inputError();
  std::string argsError;
  auto values = parseNameValues(argsText, &argsError);
  if (!values)
    return usage(argsError);
  ArgValues args;
  args.ints = std::move(values->ints);
  args.floats = std::move(values->floats);
  for (const Param &p : kernel->params)
    if (!p.isTensor && isFloat(p.dtype) && !args.floats.count(p.name) && !args.ints.count(p.name))
      args.floats[p.name] = 1e-5;
  auto program = bindProgram(*kernel, args, diag);
  if (!program)
    return inputError();
  if (seeds < 1 || seeds > 10000)
    return usage("--seeds takes 1 to 10000");
  int64_t ctaCount = 0;
  if (ctasText != "all" && (llvm::StringRef(ctasText).getAsInteger(10, ctaCount) || ctaCount < 1))
    return usage(
        fmt::format("--ctas takes 'all' or a positive count, not '{}'", ctasText.getValue()));

  int64_t tensorBytes = 0;
  for (int b : program->tensorParams)
    if (b >= 0)
      tensorBytes += program->buffers[b].elements * program->buffers[b].elementBytes;
  BudgetLimits limits = budgetOptions.limits();
  if (limits.maxMemoryBytes > 0 && tensorBytes > limits.maxMemoryBytes) {
    Budget &budget = *activeBudget();
    budget.exceedWithMessage(
        BudgetKind::Memory,
        fmt::format("the kernel's tensors need {} bytes, over the memory budget of {} MiB "
                    "(--max-memory-mb)",
                    tensorBytes, limits.maxMemoryBytes >> 20));
    return finishBudget(budget, diag, json, "race");
  }
  EngineOptions options;
  options.detectRaces = true;
  options.maxSteps = limits.maxSteps > 0 ? limits.maxSteps : INT64_MAX;
  options.memoryCapBytes = limits.maxMemoryBytes > 0 ? limits.maxMemoryBytes : INT64_MAX;
  options.where = [&](llvm::SMLoc loc) -> std::string {
    unsigned buf = loc.isValid() ? in.sourceMgr.FindBufferContainingLoc(loc) : 0;
    if (!buf)
      return input.getValue();
    auto [line, col] = in.sourceMgr.getLineAndColumn(loc, buf);
    return fmt::format("{}:{}:{}", in.sourceMgr.getMemoryBuffer(buf)->getBufferIdentifier().str(),
                       line, col);
  };
  // Each distinct race once, with the first seed that found it.
  std::vector<std::pair<DetectedRace, uint64_t>> races;
  std::set<std::string> seen;
  std::vector<std::string> failures;
  int64_t steps = 0;
  std::optional<RunResult::Outcome> budgetOutcome;
  std::string budgetMessage;
  for (int64_t k = 0; k < seeds && !budgetOutcome; ++k) {
    uint64_t seed = firstSeed + static_cast<uint64_t>(k);
    std::vector<HostTensor> tensors = allocateTensors(*program);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> dist(-1, 1);
    for (HostTensor &t : tensors)
      for (int64_t i = 0; i < t.elements(); ++i)
        t.setBits(i, isFloat(t.dtype) ? encodeFloat(t.dtype, dist(rng))
                                      : encodeInt(t.dtype, 1 + static_cast<int64_t>(rng() % 7)));
    options.seed = seed;
    options.ctas = ctaCount > 0 ? sampleCtas(program->grid, ctaCount, seed)
                                : std::vector<std::array<int64_t, 3>>{};
    RunResult r = runProgram(*program, tensors, options);
    steps += r.stats.steps;
    for (DetectedRace &race : r.races) {
      // The same statements race the same way under every seed: report once.
      std::string one = race.first.location + (race.first.write ? "w" : "r"),
                  two = race.second.location + (race.second.write ? "w" : "r");
      if (seen.insert(race.kind + " " + std::min(one, two) + " " + std::max(one, two)).second)
        races.emplace_back(std::move(race), seed);
    }
    if (r.stoppedByBudget()) {
      budgetOutcome = r.outcome;
      budgetMessage = fmt::format("seed {}: {}", seed, r.message);
    } else if (!r.ok()) {
      failures.push_back(fmt::format("seed {}: {}", seed, r.message));
    }
  }
  int status = !races.empty() || !failures.empty() ? kFindings : budgetOutcome ? kBudget : kClean;
  if (json) {
    llvm::json::Array raceArray, failureArray;
    auto cta = [](const std::array<int64_t, 3> &c) { return llvm::json::Array{c[0], c[1], c[2]}; };
    auto access = [&](const DetectedRace::Access &a) {
      return llvm::json::Object{{"agent", a.agent},
                                {"access", a.write ? "write" : "read"},
                                {"location", a.location},
                                {"cta", cta(a.cta)}};
    };
    for (const auto &[race, seed] : races)
      raceArray.push_back(llvm::json::Object{{"kind", race.kind},
                                             {"space", race.space},
                                             {"buffer", race.buffer},
                                             {"element", race.element},
                                             {"address", race.address},
                                             {"cta", cta(race.cta)},
                                             {"first", access(race.first)},
                                             {"second", access(race.second)},
                                             {"seed", static_cast<int64_t>(seed)},
                                             {"message", race.text}});
    for (const std::string &f : failures)
      failureArray.push_back(f);
    llvm::json::Object out{{"ok", status == kClean},
                           {"status", status},
                           {"kernel", kernel->name},
                           {"seeds", seeds.getValue()},
                           {"steps", steps},
                           {"races", std::move(raceArray)},
                           {"failures", std::move(failureArray)}};
    if (budgetOutcome) {
      if (status == kBudget)
        out["verdict"] = "budget";
      out["budget"] = llvm::json::Object{{"kind", std::string(outcomeName(*budgetOutcome))},
                                         {"message", budgetMessage}};
    }
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
    return status;
  }
  if (budgetOutcome)
    llvm::errs() << "tilescope race: error: " << budgetMessage << "\n";
  for (const auto &[race, seed] : races)
    llvm::outs() << race.text << " (seed " << seed << ")\n";
  for (const std::string &f : failures)
    llvm::outs() << f << "\n";
  llvm::outs() << fmt::format("{}: {}: {} race{} in {} seed{} ({} steps){}\n", input.getValue(),
                              kernel->name, races.size(), races.size() == 1 ? "" : "s",
                              seeds.getValue(), seeds == 1 ? "" : "s", steps,
                              failures.empty() && !budgetOutcome ? ""
                              : budgetOutcome                    ? ", stopped at a budget"
                                                                 : ", some runs did not complete");
  return status;
}

CommandRegistration registration(raceCommand, runRace);
} // namespace
} // namespace tilescope::tool
