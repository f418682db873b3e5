// `tilescope race FILE [--kernel K] --args M=...,N=... [--seeds N] [--seed S]
//  [--ctas all|N] [--json]`: dynamic race check on the simulation. Runs the
// kernel under N scheduler seeds with happens-before tracking over shared
// memory (simulator/RaceDetector.h) and lists every pair of unordered
// conflicting accesses with both locations.
//
// Exit: 0 no race (and every run completed); 1 races, or a run that ended in
// a deadlock or runtime error; 2 usage or input error.
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "simulator/Engine.h"
#include "simulator/Value.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/JsonOutput.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

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
cl::opt<uint64_t> firstSeed("seed", cl::desc("First scheduler seed"), cl::init(1),
                            cl::sub(raceCommand));
cl::opt<int64_t> seeds("seeds", cl::desc("How many seeds (interleavings) to run"), cl::init(4),
                       cl::sub(raceCommand));
cl::opt<std::string> ctasText("ctas", cl::desc("CTAs to run: all, or N (edge tiles first)"),
                              cl::init("1"), cl::value_desc("all|N"), cl::sub(raceCommand));
cl::opt<bool> json("json", cl::desc("Print the result as JSON"), cl::sub(raceCommand));

int usage(const std::string &message) {
  llvm::errs() << "tilescope race: error: " << message << "\n";
  return kInputError;
}

int runRace() {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, /*printImmediately=*/!json);
  auto inputError = [&]() {
    if (json)
      llvm::outs() << llvm::formatv(
                          "{0:2}", llvm::json::Value(llvm::json::Object{
                                       {"ok", false},
                                       {"status", static_cast<int64_t>(kInputError)},
                                       {"diagnostics", diagnosticsJson(diag)}}))
                   << "\n";
    return kInputError;
  };
  auto id = loadInput(input, diag);
  if (!id)
    return inputError();
  Module module = parseModule(*id, diag);
  if (!diag.hasErrors())
    checkModule(module, diag);
  if (diag.hasErrors())
    return inputError();
  const Kernel *kernel = kernelName.empty() && module.kernels.size() == 1
                             ? &module.kernels[0]
                             : module.find(kernelName);
  if (!kernel) {
    diag.error(llvm::SMLoc(), kernelName.empty()
                                  ? fmt::format("{} holds {} kernels; choose one with --kernel",
                                                input.getValue(), module.kernels.size())
                                  : fmt::format("no kernel named '{}'", kernelName.getValue()));
    return inputError();
  }
  ArgValues args;
  llvm::SmallVector<llvm::StringRef, 8> items;
  llvm::StringRef(argsText).split(items, ',', -1, false);
  for (llvm::StringRef item : items) {
    auto [name, value] = item.trim().split('=');
    int64_t i = 0;
    double d = 0;
    if (name.trim().empty() || value.trim().empty())
      return usage(fmt::format("--args takes NAME=VALUE pairs, not '{}'", item.str()));
    if (!value.trim().getAsInteger(10, i))
      args.ints[name.trim().str()] = i;
    else if (!value.trim().getAsDouble(d))
      args.floats[name.trim().str()] = d;
    else
      return usage(fmt::format("value of '{}' is not a number: '{}'", name.trim().str(),
                               value.trim().str()));
  }
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
    return usage(fmt::format("--ctas takes 'all' or a positive count, not '{}'",
                             ctasText.getValue()));

  int64_t tensorBytes = 0;
  for (int b : program->tensorParams)
    if (b >= 0)
      tensorBytes += program->buffers[b].elements * program->buffers[b].elementBytes;
  if (tensorBytes > (int64_t{4} << 30))
    return usage(fmt::format("the kernel's tensors need {} bytes; race checks take at most 4 GiB",
                             tensorBytes));
  EngineOptions options;
  options.detectRaces = true;
  options.where = [&](llvm::SMLoc loc) -> std::string {
    unsigned buf = loc.isValid() ? sourceMgr.FindBufferContainingLoc(loc) : 0;
    if (!buf)
      return input.getValue();
    auto [line, col] = sourceMgr.getLineAndColumn(loc, buf);
    return fmt::format("{}:{}:{}", sourceMgr.getMemoryBuffer(buf)->getBufferIdentifier().str(),
                       line, col);
  };
  std::set<std::string> races;
  std::vector<std::string> failures;
  int64_t steps = 0;
  for (int64_t k = 0; k < seeds; ++k) {
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
    for (const std::string &race : r.races)
      races.insert(race);
    if (!r.ok())
      failures.push_back(fmt::format("seed {}: {}", seed, r.message));
  }
  int status = races.empty() && failures.empty() ? kClean : kFindings;
  if (json) {
    llvm::json::Array raceArray, failureArray;
    for (const std::string &r : races)
      raceArray.push_back(r);
    for (const std::string &f : failures)
      failureArray.push_back(f);
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                               {"ok", status == kClean},
                                               {"status", status},
                                               {"kernel", kernel->name},
                                               {"seeds", seeds.getValue()},
                                               {"steps", steps},
                                               {"races", std::move(raceArray)},
                                               {"failures", std::move(failureArray)}}))
                 << "\n";
    return status;
  }
  for (const std::string &r : races)
    llvm::outs() << r << "\n";
  for (const std::string &f : failures)
    llvm::outs() << f << "\n";
  llvm::outs() << fmt::format("{}: {}: {} race{} in {} seed{} ({} steps){}\n", input.getValue(),
                              kernel->name, races.size(), races.size() == 1 ? "" : "s",
                              seeds.getValue(), seeds == 1 ? "" : "s", steps,
                              failures.empty() ? "" : ", some runs did not complete");
  return status;
}

CommandRegistration registration(raceCommand, runRace);
} // namespace
} // namespace tilescope::tool
