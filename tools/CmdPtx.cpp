// `tilescope ptx ACTION FILE...`: PTX from any compiler (docs/ptx.md).
//   ptx parse FILE                 read it; print what was read (a syntax check)
//   ptx condense FILE [--kernel K] [--json] [--ptxas-log LOG] [--cubin C ...]
//   ptx diff A B [--kernel K] [--kernel-b K2] [--json] [--ptxas-log LOG] [--cubin C ...]
//   ptx check FILE [--kernel K] [--json]
#include "ptx/Condense.h"
#include "ptx/Cubin.h"
#include "ptx/Parser.h"
#include "tools/Budgets.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/PtxCommands.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

namespace tilescope::tool {
namespace {
namespace cl = llvm::cl;

cl::SubCommand ptxCommand("ptx", "Read, condense, compare and check PTX from any compiler");
cl::list<std::string> args(cl::Positional, cl::desc("parse|condense|diff|check FILE [FILE]"),
                           cl::OneOrMore, cl::sub(ptxCommand));
cl::opt<std::string> kernelName("kernel", cl::desc("Only this kernel (.entry)"),
                                cl::sub(ptxCommand));
cl::opt<std::string>
    kernelNameB("kernel-b", cl::desc("diff: the kernel of the second file (default: --kernel)"),
                cl::sub(ptxCommand));
cl::opt<bool> json("json", cl::desc("Machine-readable output"), cl::sub(ptxCommand));
cl::list<std::string>
    tmaBox("tma-box",
           cl::desc("check: PARAM=BYTES, the bytes one TMA load through the tensor "
                    "map of that parameter delivers (repeatable)"),
           cl::sub(ptxCommand));
cl::list<std::string> assume("assume",
                             cl::desc("check: PARAM>=N or PARAM>N, a bound the launch guarantees "
                                      "(as a `where` clause does; repeatable)"),
                             cl::sub(ptxCommand));
cl::opt<bool> protocolOnly("protocol-only",
                           cl::desc("check: the verdict covers the barrier protocol only"),
                           cl::sub(ptxCommand));
cl::opt<bool> printSkeleton("skeleton",
                            cl::desc("check: print each kernel's lifted barrier skeleton first"),
                            cl::sub(ptxCommand));
cl::opt<std::string> ptxasLog("ptxas-log", cl::desc("ptxas -v output with register/spill figures"),
                              cl::sub(ptxCommand));
cl::list<std::string> cubinFiles("cubin",
                                 cl::desc("condense, diff: a cubin (ptxas -o, nvcc -cubin) whose "
                                          "registers, stack frame and barriers a kernel it holds "
                                          "takes (repeatable)"),
                                 cl::sub(ptxCommand));
// check: the processor-time, wall-time and memory budgets of `tilescope
// check`, with larger time defaults (2 min of CPU, 5 min of wall time): a
// compiler's PTX of a library kernel (attention, the device GEMMs) takes tens
// of seconds to lift and check. Past one, the queries left answer at once and
// a kernel that was not decided is `budget` (exit 4), never a run without end.
BudgetOptions budgetOptions(ptxCommand, /*withSteps=*/false, /*defaultTimeoutMs=*/120'000,
                            /*defaultWallTimeoutMs=*/300'000);

int usage(const std::string &why) {
  llvm::errs() << "tilescope ptx: " << why
               << "\nusage: tilescope ptx parse|condense|check FILE, tilescope ptx diff A B\n";
  return kInputError;
}

int runPtxAction() {
  std::vector<std::string> a(args.begin(), args.end());
  const std::string action = a[0];
  size_t files = action == "diff" ? 2 : 1;
  if (action != "parse" && action != "condense" && action != "diff" && action != "check")
    return usage("unknown action '" + action + "'");
  if (a.size() != files + 1)
    return usage("'" + action + "' takes " + std::to_string(files) + " file(s)");
  PtxasInputs ptxas;
  if (!ptxasLog.empty()) {
    auto buf = llvm::MemoryBuffer::getFile(ptxasLog);
    if (!buf)
      return usage("cannot read --ptxas-log " + ptxasLog + ": " + buf.getError().message());
    ptxas.log = (*buf)->getBuffer().str();
  }
  for (const std::string &path : cubinFiles) {
    auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!buf)
      return usage("cannot read --cubin " + path + ": " + buf.getError().message());
    std::string why;
    auto figures = ptx::readCubin((*buf)->getBuffer().str(), why);
    if (!figures) {
      llvm::errs() << path << ": error: not read as a cubin: " << why << "\n";
      return kInputError;
    }
    ptxas.cubins.emplace_back(path, std::move(*figures));
  }
  PtxInput first;
  if (!first.load(a[1], kernelName))
    return kInputError;
  if (action == "parse") {
    size_t instructions = 0;
    for (const ptx::Function &f : first.module->functions)
      instructions += f.instructions.size();
    llvm::outs() << a[1] << ": PTX " << first.module->version << ", target " << first.module->target
                 << ", " << first.module->functions.size() << " functions ("
                 << first.module->kernels().size() << " kernels), " << instructions
                 << " instructions\n";
    return kClean;
  }
  if (action == "condense")
    return runCondense(first, ptxas, json);
  if (action == "check") {
    std::map<std::string, int64_t> boxes;
    for (const std::string &b : tmaBox) {
      size_t eq = b.find('=');
      int64_t bytes = 0;
      if (eq == std::string::npos || llvm::StringRef(b).substr(eq + 1).getAsInteger(10, bytes) ||
          bytes <= 0)
        return usage("--tma-box wants PARAM=BYTES, got '" + b + "'");
      boxes[b.substr(0, eq)] = bytes;
    }
    std::vector<ptx::LiftOptions::LowerBound> bounds;
    for (const std::string &a : assume) {
      size_t op = a.find('>');
      int64_t v = 0;
      bool orEqual = op != std::string::npos && op + 1 < a.size() && a[op + 1] == '=';
      if (op == std::string::npos || op == 0 ||
          llvm::StringRef(a).substr(op + (orEqual ? 2 : 1)).trim().getAsInteger(10, v))
        return usage("--assume wants PARAM>=N or PARAM>N, got '" + a + "'");
      bounds.push_back({llvm::StringRef(a).substr(0, op).trim().str(), orEqual ? v : v + 1});
    }
    return runPtxCheck(first, boxes, bounds, protocolOnly, json, printSkeleton);
  }
  PtxInput second;
  if (!second.load(a[2], kernelNameB.empty() ? std::string(kernelName) : std::string(kernelNameB)))
    return kInputError;
  return runPtxDiff(first, second, ptxas, json);
}

int runPtx() {
  if (int bad = budgetOptions.usageError("ptx"))
    return bad;
  Budget budget(budgetOptions.limits());
  return runWithinBudget(budget, runPtxAction, [&] {
    llvm::SourceMgr sm;
    Diagnostics none(sm, false);
    return finishBudget(budget, none, json, "ptx");
  });
}

CommandRegistration registration(ptxCommand, runPtx);
} // namespace

bool PtxInput::load(const std::string &path, const std::string &kernel) {
  std::optional<unsigned> id = loadInput(path, diag);
  if (!id)
    return false;
  module = ptx::parseModule(*id, diag);
  if (!module)
    return false;
  for (const ptx::Function *f : module->kernels())
    if (kernel.empty() || f->name == kernel)
      kernels.push_back(f);
  if (kernels.empty()) {
    llvm::SMLoc start =
        llvm::SMLoc::getFromPointer(sourceMgr.getMemoryBuffer(*id)->getBufferStart());
    diag.error(start, kernel.empty() ? std::string("no kernel (.entry with a body) in the PTX")
                                     : "no kernel named '" + kernel + "' in the PTX");
    return false;
  }
  return true;
}

ptx::KernelSummary condenseWith(const ptx::Module &m, const ptx::Function &kernel,
                                const PtxasInputs &ptxas) {
  ptx::KernelSummary s = ptx::condense(m, kernel, ptxas.log);
  for (const auto &[path, figures] : ptxas.cubins)
    ptx::addCubinFigures(s, figures, path);
  return s;
}

int runCondense(const PtxInput &in, const PtxasInputs &ptxas, bool asJson) {
  llvm::json::Array all;
  for (const ptx::Function *f : in.kernels) {
    ptx::KernelSummary s = condenseWith(*in.module, *f, ptxas);
    if (asJson)
      all.push_back(ptx::summaryToJson(s));
    else
      llvm::outs() << ptx::printSummary(s);
  }
  if (asJson)
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(
                                               llvm::json::Object{{"file", in.module->file},
                                                                  {"version", in.module->version},
                                                                  {"target", in.module->target},
                                                                  {"kernels", std::move(all)}}))
                 << "\n";
  return kClean;
}

} // namespace tilescope::tool
