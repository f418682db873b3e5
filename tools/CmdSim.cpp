// `tilescope sim FILE [--kernel K] --args M=256,N=256,K=128 [--seed S]
//  [--ctas all|N] [--input A=a.npy ...] [--dump DIR] [--max-steps N] [--json]`:
// runs a kernel on the simulator (simulator/Engine.h) with random inputs
// drawn from the seed (never zero) or given .npy arrays, and compares its
// outputs with the independent reference of the problem the kernel names
// (simulator/Reference.h).
//
// Exit: 0 outputs match; 1 mismatch, deadlock, runtime error, step budget or
// memory cap; 2 usage or input error (file:line:col diagnostics).
#include "ir/Checker.h"
#include "ir/Parser.h"
#include "simulator/Engine.h"
#include "simulator/Npy.h"
#include "simulator/Reference.h"
#include "simulator/Value.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/JsonOutput.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <cmath>
#include <random>

namespace tilescope::tool {
namespace {
namespace cl = llvm::cl;
using namespace tilescope::sim;

cl::SubCommand simCommand("sim", "Run a kernel on the simulator and compare with a reference");
cl::opt<std::string> input(cl::Positional, cl::desc("FILE"), cl::Required, cl::sub(simCommand));
cl::opt<std::string> kernelName("kernel", cl::desc("Run kernel K (needed when FILE has several)"),
                                cl::value_desc("K"), cl::sub(simCommand));
cl::opt<std::string> argsText("args", cl::desc("Shape symbols and scalars, e.g. M=256,N=256,K=128"),
                              cl::value_desc("NAME=VALUE,..."), cl::sub(simCommand));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of the inputs and of the scheduler"), cl::init(1),
                       cl::sub(simCommand));
cl::opt<std::string> ctasText("ctas", cl::desc("CTAs to run: all, or N (edge tiles first)"),
                              cl::init("all"), cl::value_desc("all|N"), cl::sub(simCommand));
cl::list<std::string> inputs("input", cl::desc("Use NAME's values from a .npy file"),
                             cl::value_desc("NAME=FILE.npy"), cl::sub(simCommand));
cl::opt<std::string> dumpDir("dump", cl::desc("Write every tensor after the run as .npy"),
                             cl::value_desc("DIR"), cl::sub(simCommand));
cl::opt<int64_t> maxSteps("max-steps", cl::desc("Step budget (warp statements)"),
                          cl::init(int64_t{1} << 32), cl::sub(simCommand));
cl::opt<int64_t> memoryCapMb("memory-cap", cl::desc("Memory cap of the simulated state in MiB"),
                             cl::init(4096), cl::sub(simCommand));
cl::opt<bool> json("json", cl::desc("Print the result as JSON"), cl::sub(simCommand));

int usage(const std::string &message) {
  llvm::errs() << "tilescope sim: error: " << message << "\n";
  return kInputError;
}

std::optional<ArgValues> parseArgs(std::string *error) {
  ArgValues out;
  llvm::SmallVector<llvm::StringRef, 8> items;
  llvm::StringRef(argsText).split(items, ',', -1, false);
  for (llvm::StringRef item : items) {
    auto [name, value] = item.trim().split('=');
    name = name.trim();
    value = value.trim();
    if (name.empty() || value.empty()) {
      *error =
          fmt::format("--args takes NAME=VALUE pairs separated by commas, not '{}'", item.str());
      return std::nullopt;
    }
    int64_t i = 0;
    double d = 0;
    if (!value.getAsInteger(10, i)) {
      out.ints[name.str()] = i;
    } else if (!value.getAsDouble(d) && std::isfinite(d)) {
      out.floats[name.str()] = d;
    } else {
      *error = fmt::format("value of '{}' is not a number: '{}'", name.str(), value.str());
      return std::nullopt;
    }
  }
  return out;
}

std::optional<npy::ElementType> npyTypeOf(Dtype d) {
  switch (d) {
  case Dtype::f32:
    return npy::ElementType::F32;
  case Dtype::f16:
    return npy::ElementType::F16;
  case Dtype::bf16:
    return npy::ElementType::U16;
  case Dtype::i32:
    return npy::ElementType::I32;
  case Dtype::u32:
    return npy::ElementType::U32;
  default:
    if (dtypeBits(d) == 8)
      return npy::ElementType::U8;
    return std::nullopt;
  }
}

// Random values in [-1, 1] that are not zero once encoded; integers in [1, 7].
void randomFill(HostTensor &t, uint64_t seedValue) {
  std::mt19937_64 rng(seedValue ^ std::hash<std::string>()(t.name));
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (int64_t i = 0; i < t.elements(); ++i) {
    if (!isFloat(t.dtype)) {
      t.setBits(i, encodeInt(t.dtype, 1 + static_cast<int64_t>(rng() % 7)));
      continue;
    }
    uint64_t bits = 0;
    do
      bits = encodeFloat(t.dtype, dist(rng));
    while (decodeFloat(t.dtype, bits) == 0.0);
    t.setBits(i, bits);
  }
}

void poison(HostTensor &t) {
  for (int64_t i = 0; i < t.elements(); ++i)
    t.setBits(i, isFloat(t.dtype) ? encodeFloat(t.dtype, std::nan("")) : encodeInt(t.dtype, -1));
  std::fill(t.written.begin(), t.written.end(), 0);
}

std::string number(double v) {
  if (std::isnan(v))
    return "nan";
  return fmt::format("{:.9g}", v);
}

int runSim() {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, /*printImmediately=*/!json);
  auto finishInputError = [&]() {
    if (json) {
      llvm::json::Object out{{"ok", false},
                             {"status", static_cast<int64_t>(kInputError)},
                             {"diagnostics", diagnosticsJson(diag)}};
      llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
    }
    return kInputError;
  };
  std::optional<Module> loaded = loadModule(input, diag, Checked::Yes);
  if (!loaded)
    return finishInputError();
  const Module &module = *loaded;
  const Kernel *kernel = nullptr;
  if (!kernelName.empty()) {
    kernel = module.find(kernelName);
    if (!kernel) {
      diag.error(llvm::SMLoc(), fmt::format("no kernel named '{}' in {}", kernelName.getValue(),
                                            input.getValue()));
      return finishInputError();
    }
  } else if (module.kernels.size() == 1) {
    kernel = &module.kernels[0];
  } else {
    diag.error(llvm::SMLoc(), fmt::format("{} holds {} kernels; choose one with --kernel",
                                          input.getValue(), module.kernels.size()));
    return finishInputError();
  }

  std::string error;
  auto args = parseArgs(&error);
  if (!args)
    return usage(error);
  std::vector<std::string> notes;
  for (const Param &p : kernel->params)
    if (!p.isTensor && isFloat(p.dtype) && !args->floats.count(p.name) &&
        !args->ints.count(p.name)) {
      args->floats[p.name] = 1e-5;
      notes.push_back(fmt::format("scalar '{}' defaults to 1e-5", p.name));
    }
  auto program = bindProgram(*kernel, *args, diag);
  if (!program)
    return finishInputError();

  llvm::StringRef source = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer();
  size_t problemAt = std::string::npos;
  auto problem =
      problemOf(std::string_view(source.data(), source.size()), kernel->name, &error, &problemAt);
  if (!problem && !error.empty()) {
    diag.error(problemAt != std::string::npos
                   ? llvm::SMLoc::getFromPointer(source.data() + problemAt)
                   : kernel->loc,
               error);
    return finishInputError();
  }

  int64_t tensorBytes = 0;
  for (int b : program->tensorParams)
    if (b >= 0)
      tensorBytes += program->buffers[b].elements * program->buffers[b].elementBytes;
  if (tensorBytes > memoryCapMb * (int64_t{1} << 20)) {
    llvm::errs() << fmt::format("tilescope sim: the kernel's tensors need {} bytes, over the "
                                "memory cap of {} MiB (--memory-cap)\n",
                                tensorBytes, memoryCapMb.getValue());
    return kFindings;
  }
  std::vector<HostTensor> tensors = allocateTensors(*program);
  auto isOutput = [&](const std::string &name) {
    return problem && std::find(problem->outputs.begin(), problem->outputs.end(), name) !=
                          problem->outputs.end();
  };
  for (HostTensor &t : tensors) {
    if (isOutput(t.name))
      poison(t);
    else
      randomFill(t, seed);
  }
  for (const std::string &spec : inputs) {
    auto [name, path] = llvm::StringRef(spec).split('=');
    HostTensor *t = nullptr;
    for (HostTensor &h : tensors)
      if (h.name == name)
        t = &h;
    if (!t || path.empty())
      return usage(fmt::format("--input takes NAME=FILE.npy with NAME a tensor parameter of '{}', "
                               "not '{}'",
                               kernel->name, spec));
    auto array = npy::readFile(path.str());
    if (!array) {
      std::string message;
      llvm::handleAllErrors(array.takeError(),
                            [&](const llvm::ErrorInfoBase &e) { message = e.message(); });
      return usage(fmt::format("{}: {}", path.str(), message));
    }
    if (array->shape != t->shape)
      return usage(fmt::format("{}: shape does not match tensor '{}'", path.str(), t->name));
    auto want = npyTypeOf(t->dtype);
    bool f32Values = array->type == npy::ElementType::F32 && isFloat(t->dtype);
    if (!want || (array->type != *want && !f32Values))
      return usage(fmt::format("{}: element type {} does not hold {} values", path.str(),
                               npy::descr(array->type), dtypeName(t->dtype)));
    for (int64_t i = 0; i < t->elements(); ++i) {
      uint32_t bits = array->bitsAt(i);
      if (f32Values && t->dtype != Dtype::f32) {
        float v;
        std::memcpy(&v, &bits, 4);
        uint64_t code = encodeFloat(t->dtype, v);
        if (decodeFloat(t->dtype, code) != v && !std::isnan(v))
          return usage(fmt::format("{}: element {} ({}) is not representable in {}", path.str(), i,
                                   number(v), dtypeName(t->dtype)));
        t->setBits(i, code);
      } else {
        t->setBits(i, bits);
      }
    }
  }

  EngineOptions options;
  options.seed = seed;
  options.maxSteps = maxSteps;
  options.memoryCapBytes = memoryCapMb * (int64_t{1} << 20);
  options.where = [&](llvm::SMLoc loc) -> std::string {
    if (!loc.isValid())
      return input.getValue();
    unsigned buf = sourceMgr.FindBufferContainingLoc(loc);
    if (!buf)
      return input.getValue();
    auto [line, col] = sourceMgr.getLineAndColumn(loc, buf);
    return fmt::format("{}:{}:{}", sourceMgr.getMemoryBuffer(buf)->getBufferIdentifier().str(),
                       line, col);
  };
  bool allCtas = true;
  if (ctasText != "all") {
    int64_t n = 0;
    if (llvm::StringRef(ctasText).getAsInteger(10, n) || n < 1)
      return usage(
          fmt::format("--ctas takes 'all' or a positive count, not '{}'", ctasText.getValue()));
    int64_t total = program->grid[0] * program->grid[1] * program->grid[2];
    allCtas = n >= total;
    options.ctas = sampleCtas(program->grid, n, seed);
  }
  RunResult run = runProgram(*program, tensors, options);

  std::vector<OutputReport> reports;
  if (run.ok() && problem) {
    auto r = compareWithReference(*problem, *program, tensors, allCtas, &error);
    if (!r) {
      diag.error(kernel->loc, error);
      return finishInputError();
    }
    reports = std::move(*r);
  }
  bool mismatch = false;
  for (const OutputReport &r : reports)
    mismatch |= r.mismatches > 0;
  int status = !run.ok() || mismatch ? kFindings : kClean;
  std::string verdict = !run.ok()  ? std::string(outcomeName(run.outcome))
                        : !problem ? "unchecked"
                        : mismatch ? "mismatch"
                                   : "match";

  if (!dumpDir.empty()) {
    if (auto ec = llvm::sys::fs::create_directories(dumpDir))
      return usage(fmt::format("cannot create '{}': {}", dumpDir.getValue(), ec.message()));
    for (const HostTensor &t : tensors) {
      auto type = npyTypeOf(t.dtype);
      if (!type) {
        notes.push_back(
            fmt::format("'{}' ({}) not dumped: no .npy element type", t.name, dtypeName(t.dtype)));
        continue;
      }
      std::vector<uint32_t> bits(t.elements());
      for (int64_t i = 0; i < t.elements(); ++i)
        bits[i] = static_cast<uint32_t>(t.bitsAt(i));
      llvm::SmallString<256> path(dumpDir.getValue());
      llvm::sys::path::append(path, t.name + ".npy");
      if (auto err = npy::writeFile(std::string(path), npy::fromBits(*type, t.shape, bits))) {
        llvm::consumeError(std::move(err));
        return usage(fmt::format("cannot write '{}'", std::string(path)));
      }
    }
  }

  const RunStats &s = run.stats;
  double rate = s.cpuSeconds > 0 ? static_cast<double>(s.steps) / s.cpuSeconds : 0;
  double laneRate = s.cpuSeconds > 0 ? static_cast<double>(s.laneOps) / s.cpuSeconds : 0;
  if (json) {
    llvm::json::Array outs;
    for (const OutputReport &r : reports) {
      llvm::json::Array first;
      for (const Mismatch &m : r.first)
        first.push_back(llvm::json::Object{
            {"index", llvm::json::Array([&] {
               std::vector<llvm::json::Value> v;
               for (const HostTensor &t : tensors)
                 if (t.name == r.name)
                   for (int64_t x : unflattenIndex(t.shape, m.index))
                     v.push_back(x);
               return v;
             }())},
            {"got", std::isnan(m.got) ? llvm::json::Value(nullptr) : llvm::json::Value(m.got)},
            {"expected", m.expected}});
      outs.push_back(llvm::json::Object{{"name", r.name},
                                        {"elements", r.elements},
                                        {"compared", r.compared},
                                        {"unwritten", r.unwritten},
                                        {"mismatches", r.mismatches},
                                        {"max_abs_error", r.maxAbsError},
                                        {"max_rel_error", r.maxRelError},
                                        {"first_mismatches", std::move(first)}});
    }
    llvm::json::Array noteArray;
    for (const std::string &n : run.notes)
      noteArray.push_back(n);
    for (const std::string &n : notes)
      noteArray.push_back(n);
    llvm::json::Object out{
        {"ok", status == kClean},
        {"status", status},
        {"kernel", kernel->name},
        {"verdict", verdict},
        {"problem", problem ? llvm::json::Value(problem->text) : llvm::json::Value(nullptr)},
        {"seed", static_cast<int64_t>(seed.getValue())},
        {"ctas", s.ctas},
        {"all_ctas", allCtas},
        {"outputs", std::move(outs)},
        {"stats", llvm::json::Object{{"steps", s.steps},
                                     {"lane_ops", s.laneOps},
                                     {"elements_moved", s.elementsMoved},
                                     {"async_copies", s.asyncCopies},
                                     {"mma_sums", s.mmaSums},
                                     {"global_bytes_read", s.globalBytesRead},
                                     {"global_bytes_written", s.globalBytesWritten},
                                     {"shared_bytes_accessed", s.sharedBytesAccessed},
                                     {"seconds", s.seconds},
                                     {"cpu_seconds", s.cpuSeconds},
                                     {"steps_per_warp",
                                      [&] {
                                        llvm::json::Array a;
                                        for (int64_t v : s.stepsPerWarp)
                                          a.push_back(v);
                                        return a;
                                      }()},
                                     {"steps_per_second", rate},
                                     {"lane_ops_per_second", laneRate}}},
        {"notes", std::move(noteArray)},
        {"diagnostics", diagnosticsJson(diag)}};
    if (!run.ok())
      out["error"] = run.message;
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
    return status;
  }
  if (!run.ok()) {
    llvm::errs() << run.message << "\n";
    for (const std::string &n : run.notes)
      llvm::errs() << "  note: " << n << "\n";
  }
  for (const std::string &n : notes)
    llvm::outs() << "note: " << n << "\n";
  llvm::outs() << fmt::format("{}: {} on {} CTA{} (seed {}): {}\n", input.getValue(), kernel->name,
                              s.ctas, s.ctas == 1 ? "" : "s", seed.getValue(), verdict);
  if (problem)
    llvm::outs() << fmt::format("  problem: {}\n", problem->text);
  for (const OutputReport &r : reports) {
    llvm::outs() << fmt::format("  {}: {} of {} elements compared, {} mismatches, max abs error "
                                "{}, max rel error {}{}\n",
                                r.name, r.compared, r.elements, r.mismatches, number(r.maxAbsError),
                                number(r.maxRelError),
                                r.unwritten ? fmt::format(", {} unwritten", r.unwritten) : "");
    for (const Mismatch &m : r.first) {
      const HostTensor *t = nullptr;
      for (const HostTensor &h : tensors)
        if (h.name == r.name)
          t = &h;
      std::string idx;
      for (int64_t x : unflattenIndex(t->shape, m.index))
        idx += (idx.empty() ? "" : ", ") + std::to_string(x);
      llvm::outs() << fmt::format("    {}[{}]: got {}, expected {}\n", r.name, idx,
                                  std::isnan(m.got) ? std::string("unwritten") : number(m.got),
                                  number(m.expected));
    }
  }
  llvm::outs() << fmt::format("  stats: {} steps, {} lane ops, {} async copies, {} mma sums, "
                              "{:.3f} s ({:.3f} s CPU), {:.3g} steps/s, {:.3g} lane ops/s\n",
                              s.steps, s.laneOps, s.asyncCopies, s.mmaSums, s.seconds, s.cpuSeconds,
                              rate, laneRate);
  return status;
}

CommandRegistration registration(simCommand, runSim);
} // namespace
} // namespace tilescope::tool
