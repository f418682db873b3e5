// `tilescope reward FILE|- [--kernel K] [--problem P | --task task.json]
//  [--sizes auto|M=..;..] [--seed S] [--json] [--timeout-ms T] [--cache DIR]`:
// the staged reward of a candidate kernel (reward/Reward.h, docs/reward.md).
// `tilescope reward --batch in.jsonl -o out.jsonl [--jobs N] [--shard I/N]
//  [--resume]`: one result line per candidate (reward/Batch.h).
// `tilescope reward merge OUT IN...`: joins shard outputs in input order.
//
// Exit (one candidate): 0 every stage passed, 1 a stage failed, 2 input error
// (also a candidate that does not parse or type-check), 3 unknown, 4 budget.
// Batches exit 0 once every line has its result, 2 when a file cannot be used.
#include "ir/Dtype.h"
#include "ir/DtypeNames.h"
#include "ir/Suggest.h"
#include "proof/QueryDeadline.h"
#include "reward/Batch.h"
#include "reward/Reward.h"
#include "reward/RewardCache.h"
#include "reward/Task.h"
#include "tools/Command.h"
#include "tools/OptionValues.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

namespace tilescope::tool {
namespace {
namespace cl = llvm::cl;

cl::SubCommand rewardCommand("reward", "Staged reward of a candidate kernel (JSON for agents)");
cl::list<std::string> positional(cl::Positional, cl::desc("FILE | - | merge OUT IN..."),
                                 cl::sub(rewardCommand));
cl::opt<std::string> kernelName("kernel", cl::desc("Reward only kernel K"), cl::value_desc("K"),
                                cl::sub(rewardCommand));
cl::opt<std::string> setText("set",
                             cl::desc("The point a kernel with parameters is scored at: "
                                      "NAME=VALUE,... or a named point (as `tilescope "
                                      "instantiate --set`)"),
                             cl::value_desc("NAME=VALUE,..."), cl::sub(rewardCommand));
cl::opt<std::string> problem("problem", cl::desc("The task's problem, e.g. \"gemm(A, B^T -> C)\""),
                             cl::value_desc("P"), cl::sub(rewardCommand));
cl::opt<std::string> taskFile("task", cl::desc("The task as JSON: problem, sizes, seed"),
                              cl::value_desc("task.json"), cl::sub(rewardCommand));
cl::opt<std::string> dtypes("dtypes",
                            cl::desc("The task's element types: NAME=TYPE,... (A=bf16,C=f32)"),
                            cl::value_desc("A=T,..."), cl::sub(rewardCommand));
cl::opt<std::string> sizes("sizes", cl::desc("auto, or NAME=V,...;NAME=V,... (one set per run)"),
                           cl::init("auto"), cl::sub(rewardCommand));
cl::opt<std::string> seedText("seed", cl::desc("Seed of the inputs (default: drawn from the OS)"),
                              cl::value_desc("S"), cl::sub(rewardCommand));
cl::opt<bool> json("json", cl::desc("Print the result as JSON"), cl::sub(rewardCommand));
NumberOption timeoutMs("timeout-ms", cl::desc("Wall time of the simulation per size"),
                          cl::init(10000), cl::sub(rewardCommand));
NumberOption staticTimeoutMs(
    "static-timeout-ms",
    cl::desc("Wall time of the static stages together (Z3 proofs, exhaustive check; 0: none)"),
    cl::init(RewardOptions().staticTimeoutMs), cl::sub(rewardCommand));
IntOption<uint64_t> maxSteps("max-steps", cl::desc("Simulated warp statements per size"),
                           cl::init(uint64_t{1} << 28), cl::sub(rewardCommand));
IntOption<uint64_t> memoryMb("memory-mb", cl::desc("Memory budget of the simulation in MiB"),
                           cl::init(512), cl::sub(rewardCommand));
// The name check, sim and race give the memory budget.
cl::alias maxMemoryMb("max-memory-mb", cl::desc("Alias for --memory-mb"), cl::aliasopt(memoryMb));
cl::opt<std::string> cacheDir("cache", cl::desc("Directory of the on-disk stage cache"),
                              cl::value_desc("DIR"), cl::sub(rewardCommand));
cl::opt<bool> ptxas("ptxas",
                    cl::desc("Resources: lower, compile with nvcc and check ptxas's registers and "
                             "spills against the launch's budget"),
                    cl::sub(rewardCommand));
cl::opt<std::string> performanceSizes(
    "performance-sizes",
    cl::desc("Sizes the performance model predicts at: auto (4096 each) or NAME=V,..."),
    cl::init("auto"), cl::sub(rewardCommand));
cl::opt<std::string> machine("machine",
                             cl::desc("Machine of the performance model: h100 (default), h200"),
                             cl::value_desc("M"), cl::sub(rewardCommand));
cl::opt<bool> cacheDynamic("cache-dynamic",
                           cl::desc("Answer the simulate stage from the cache too"),
                           cl::sub(rewardCommand));
cl::opt<bool> staticOnly("static",
                         cl::desc("Static stages only: simulate is unknown (not checked)"),
                         cl::sub(rewardCommand));
cl::opt<std::string> batch("batch", cl::desc("Reward every candidate of a JSON-lines file"),
                           cl::value_desc("in.jsonl"), cl::sub(rewardCommand));
cl::opt<std::string> output("o", cl::desc("Output of --batch (JSON lines)"),
                            cl::value_desc("out.jsonl"), cl::sub(rewardCommand));
IntOption<unsigned> jobs("jobs", cl::desc("Worker processes of --batch (default: every core)"),
                       cl::init(0), cl::sub(rewardCommand));
cl::opt<std::string> shard("shard", cl::desc("Only lines I modulo N of --batch"),
                           cl::value_desc("I/N"), cl::sub(rewardCommand));
cl::opt<bool> resume("resume", cl::desc("Skip ids already in the output of --batch"),
                     cl::sub(rewardCommand));
NumberOption candidateTimeoutMs("candidate-timeout-ms",
                                   cl::desc("Kill a --batch candidate after this wall time"),
                                   cl::init(0), cl::sub(rewardCommand));
IntOption<uint64_t> workerMemoryMb("worker-memory-mb",
                                 cl::desc("Memory limit of a --batch worker in MiB"),
                                 cl::init(4096), cl::sub(rewardCommand));

int usage(const std::string &message) {
  llvm::errs() << "tilescope reward: error: " << message << "\n";
  return kInputError;
}

// Reads --task (reward/Task.h); the error is a `file:line:col: error:` line.
bool readTaskFile(RewardOptions &o, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(taskFile);
  if (!buffer) {
    error = fmt::format("{}: error: cannot read the task: {}", taskFile.getValue(),
                        buffer.getError().message());
    return false;
  }
  JsonInputError bad;
  if (readTask((*buffer)->getBuffer(), o, bad))
    return true;
  error = bad.str(taskFile.getValue());
  return false;
}

void printText(const RewardResult &r) {
  // A diagnostic with no place in the file (the file's, an option's: the
  // task's problem) names the file alone, not `FILE:0:0`.
  for (const RewardDiagnostic &d : r.diagnostics)
    llvm::errs() << (d.line == 0 ? fmt::format("{}: error: [{}] {}\n", d.file, d.code,
                                               d.message)
                                 : fmt::format("{}:{}:{}: error: [{}] {}\n", d.file, d.line,
                                               d.column, d.code, d.message));
  for (const KernelReward &k : r.kernels) {
    for (const StageResult &s : k.stages)
      for (const RewardDiagnostic &d : s.diagnostics) {
        if (d.severity == "note" && s.status == StageStatus::Pass)
          continue;
        llvm::errs() << fmt::format("{}:{}:{}: {}: [{}] {}{}\n", d.file, d.line, d.column,
                                    d.severity, d.code, d.message,
                                    d.witness.empty() ? "" : " (witness: " + d.witness + ")");
      }
    std::string stages;
    for (const StageResult &s : k.stages)
      stages += fmt::format("{}{} {}{}", stages.empty() ? "" : ", ", s.name,
                            stageStatusName(s.status), s.cached ? " (cached)" : "");
    llvm::outs() << fmt::format("{}: kernel {}: {} (score {:.3f}; {})\n", r.file, k.kernel,
                                k.verdict, k.score, stages);
    if (k.firstFailure)
      llvm::outs() << "  hint: " << k.firstFailure->hint << "\n";
  }
  llvm::outs() << fmt::format("seed {}\n", r.seed);
}

int runMerge() {
  if (positional.size() < 3)
    return usage("merge takes OUT and at least one IN: tilescope reward merge OUT IN...");
  std::vector<std::string> inputs(positional.begin() + 2, positional.end());
  size_t lines = 0;
  std::string error;
  if (!mergeShards(positional[1], inputs, lines, error))
    return usage(error);
  llvm::errs() << fmt::format("tilescope reward: merged {} result lines into {}\n", lines,
                              positional[1]);
  return kClean;
}

int runReward() {
  if (!positional.empty() && positional[0] == "merge")
    return runMerge();
  RewardOptions options;
  options.kernel = kernelName;
  options.point = setText;
  options.problem = problem;
  options.sizes = sizes;
  options.performanceSizes = performanceSizes;
  options.machine = machine;
  llvm::SmallVector<llvm::StringRef, 8> typed;
  llvm::StringRef(dtypes).split(typed, ',', -1, false);
  for (llvm::StringRef item : typed) {
    auto [name, type] = item.trim().split('=');
    if (name.trim().empty() || type.trim().empty())
      return usage(fmt::format("--dtypes takes NAME=TYPE,..., not '{}'", item.trim().str()));
    if (!dtypeFromName(type.trim()))
      return usage(fmt::format("--dtypes: the type '{}' of '{}' is no element type (f32, bf16, "
                               "f16, f8e4m3, ...){}",
                               type.trim().str(), name.trim().str(),
                               didYouMean(type.trim(), dtypeNames())));
    options.dtypes[name.trim().str()] = type.trim().str();
  }
  // `!(x >= 0)`: NaN ("nan" parses as a double) is no number of milliseconds.
  if (!(timeoutMs >= 0) || !(staticTimeoutMs >= 0) || !(candidateTimeoutMs >= 0))
    return usage("--timeout-ms, --static-timeout-ms and --candidate-timeout-ms take a "
                 "non-negative number of milliseconds");
  if (batch.empty() &&
      (!shard.empty() || resume || jobs != 0 || !output.empty() ||
       candidateTimeoutMs.getNumOccurrences() || workerMemoryMb.getNumOccurrences()))
    return usage("-o, --shard, --resume, --jobs, --candidate-timeout-ms and --worker-memory-mb "
                 "are options of --batch");
  if (!cacheDir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(cacheDir.getValue()))
      return usage(fmt::format("cannot create the cache directory '{}': {}", cacheDir.getValue(),
                               ec.message()));
  options.timeoutMs = timeoutMs;
  options.staticTimeoutMs = staticTimeoutMs;
  options.maxSteps = maxSteps;
  options.maxMemoryMb = memoryMb;
  options.cacheDynamic = cacheDynamic;
  options.staticOnly = staticOnly;
  options.ptxas = ptxas;
  if (!seedText.empty()) {
    uint64_t s = 0;
    if (llvm::StringRef(seedText).getAsInteger(10, s))
      return usage(
          fmt::format("--seed takes a non-negative integer, not '{}'", seedText.getValue()));
    options.seed = s;
  }
  std::string error;
  if (!taskFile.empty()) {
    if (!problem.empty())
      return usage("give the problem with --problem or --task, not both");
    if (!readTaskFile(options, error)) {
      llvm::errs() << error << "\n";
      return kInputError;
    }
  }
  if (!batch.empty()) {
    if (output.empty())
      return usage("--batch needs -o OUT.jsonl");
    if (!positional.empty())
      return usage("--batch takes no FILE");
    BatchOptions b;
    b.input = batch;
    b.output = output;
    b.jobs = jobs;
    b.resume = resume;
    b.reward = options;
    b.cacheDir = cacheDir;
    b.candidateTimeoutMs = candidateTimeoutMs;
    b.workerMemoryMb = workerMemoryMb;
    if (!shard.empty()) {
      auto [i, n] = llvm::StringRef(shard).split('/');
      if (i.getAsInteger(10, b.shardIndex) || n.getAsInteger(10, b.shardCount) ||
          b.shardCount == 0 || b.shardIndex >= b.shardCount)
        return usage(fmt::format("--shard takes I/N with 0 <= I < N, not '{}'", shard.getValue()));
    }
    BatchSummary summary;
    if (!runBatch(b, summary, error))
      return usage(error);
    llvm::errs() << fmt::format(
        "tilescope reward: {} of {} lines in this shard, {} skipped "
        "(--resume), {} rewarded, {} crashed, {} timed out, {:.2f} s, peak worker "
        "memory {:.0f} MiB, coordinator CPU {:.3f} s, workers' CPU {:.3f} s\n",
        summary.inShard, summary.lines, summary.skipped, summary.done, summary.crashed,
        summary.timedOut, summary.seconds, summary.peakWorkerMb, summary.coordinatorCpuSeconds,
        summary.workersCpuSeconds);
    return kClean;
  }
  if (positional.size() != 1)
    return usage("give one FILE (or - for standard input), --batch IN, or merge OUT IN...");
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(positional[0], /*IsText=*/false,
                                                   /*RequiresNullTerminator=*/false);
  if (!buffer)
    return usage(fmt::format("cannot read '{}': {}", positional[0], buffer.getError().message()));
  options.fileName = positional[0] == "-" ? "<stdin>" : positional[0];
  std::optional<RewardCache> cache;
  if (!cacheDir.empty()) {
    cache.emplace(cacheDir);
    options.cache = &*cache;
  }
  // A Z3 query that ignores its deadline ends the run as `budget` a second
  // past it (proof/QueryDeadline.h).
  OverrunExit overrun([&](const Budget &b) {
    if (json)
      llvm::outs() << llvm::json::Value(llvm::json::Object{{"verdict", "budget"},
                                                           {"exit_code", int64_t(kBudget)},
                                                           {"score", 0.0},
                                                           {"error", b.message()}})
                   << "\n";
    else
      llvm::errs() << "tilescope reward: error: " << b.message() << "\n";
    llvm::outs().flush();
    llvm::errs().flush();
    return int(kBudget);
  });
  RewardResult result = reward((*buffer)->getBuffer().str(), options);
  if (json)
    llvm::outs() << rewardJson(result) << "\n";
  else
    printText(result);
  return result.exitCode;
}

CommandRegistration registration(rewardCommand, runReward);
} // namespace
} // namespace tilescope::tool
