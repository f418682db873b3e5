// `tilescope space FILE [--kernel K] [--max-points N] [--json]`: the points
// of a kernel's space (ir/Space.h), each valid (it instantiates and the
// instance checks and fits the target's resources) or rejected with its
// reason and location: a constraint false at the point, a layout that does
// not resolve, a checker error, a resource limit (verifier/Resources.h).
//
// `tilescope instantiate FILE [--kernel K] --set P=V,... [-o OUT]`: prints
// the kernel of one point in canonical form (no parameters left). An unknown
// parameter, a value outside its domain or a point the constraints reject is
// an input error (file:line:col, exit 2).
#include "ir/Checker.h"
#include "ir/Instantiate.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "tools/Command.h"
#include "tools/InputFile.h"
#include "tools/JsonOutput.h"
#include "tools/OptionValues.h"
#include "verifier/Resources.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

namespace tilescope::tool {
namespace {
namespace cl = llvm::cl;

cl::SubCommand spaceCommand("space", "List the points of a kernel's parameter space");
cl::opt<std::string> spaceInput(cl::Positional, cl::desc("FILE"), cl::Required,
                                cl::sub(spaceCommand));
cl::opt<std::string> spaceKernel("kernel", cl::desc("The kernel (needed when FILE has several)"),
                                 cl::value_desc("K"), cl::sub(spaceCommand));
IntOption<int64_t> maxPoints("max-points", cl::desc("Points to enumerate at most"),
                           cl::init(kMaxPointsChecked), cl::sub(spaceCommand));
cl::opt<bool> spaceJson("json", cl::desc("Print the result as JSON"), cl::sub(spaceCommand));

cl::SubCommand instantiateCommand("instantiate", "Print the kernel of one point of its space");
cl::opt<std::string> instInput(cl::Positional, cl::desc("FILE"), cl::Required,
                               cl::sub(instantiateCommand));
cl::opt<std::string> instKernel("kernel", cl::desc("The kernel (needed when FILE has several)"),
                                cl::value_desc("K"), cl::sub(instantiateCommand));
cl::opt<std::string> instSet("set", cl::desc("The point: NAME=VALUE,..., a named point, or both"),
                             cl::value_desc("NAME=VALUE,..."), cl::Required,
                             cl::sub(instantiateCommand));
cl::opt<std::string> instOutput("o", cl::desc("Write the kernel to OUT"), cl::value_desc("OUT"),
                                cl::sub(instantiateCommand));

// The kernel of `module` a command names, or the only one with parameters.
const Kernel *chooseKernel(const Module &module, const std::string &name, Diagnostics &diag) {
  if (!name.empty()) {
    if (const Kernel *k = module.find(name))
      return k;
    diag.error(llvm::SMLoc(), fmt::format("no kernel named '{}'", name));
    return nullptr;
  }
  const Kernel *found = nullptr;
  for (const Kernel &k : module.kernels)
    if (!k.space.empty()) {
      if (found) {
        diag.error(llvm::SMLoc(), "the file holds several kernels with parameters; choose one "
                                  "with --kernel");
        return nullptr;
      }
      found = &k;
    }
  if (!found && module.kernels.size() == 1)
    found = &module.kernels[0];
  if (!found)
    diag.error(llvm::SMLoc(), "no kernel of the file has parameters; choose one with --kernel");
  return found;
}

std::string locationText(llvm::SourceMgr &sm, llvm::SMLoc loc) {
  if (!loc.isValid())
    return "";
  unsigned id = sm.FindBufferContainingLoc(loc);
  if (!id)
    return "";
  auto [line, col] = sm.getLineAndColumn(loc, id);
  return fmt::format("{}:{}:{}", sm.getMemoryBuffer(id)->getBufferIdentifier().str(), line, col);
}

struct Row {
  Point point;
  std::string name; // the named point it is, if any
  bool valid = false;
  std::string where, reason;
  uint64_t hash = 0;
};

int runSpace() {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, /*printImmediately=*/!spaceJson);
  std::optional<Module> module = loadModule(spaceInput, diag, Checked::No);
  if (!module)
    return finishInputError(diag, spaceJson);
  const Kernel *kernel = chooseKernel(*module, spaceKernel, diag);
  if (kernel && kernel->space.empty()) {
    diag.error(kernel->loc, fmt::format("kernel '{}' has no parameters: its space is the kernel "
                                        "itself",
                                        kernel->name));
    kernel = nullptr;
  }
  if (!kernel || checkSpaceDeclarations(*kernel, diag))
    return finishInputError(diag, spaceJson);
  if (maxPoints < 1) {
    diag.error(llvm::SMLoc(), "--max-points must be at least 1");
    return finishInputError(diag, spaceJson);
  }
  SpaceEnumeration all = enumerateSpace(*kernel, maxPoints);
  std::vector<Row> rows;
  size_t valid = 0;
  for (const SpacePoint &p : all.points) {
    Row r;
    r.point = p.point;
    for (const NamedPoint &n : kernel->space.points)
      if (pointText(n.values) == pointText(p.point))
        r.name = n.name;
    if (!p.instance.kernel) {
      r.where = locationText(sourceMgr, p.instance.loc);
      r.reason = p.instance.reason;
    } else {
      Module one;
      one.kernels.push_back(*p.instance.kernel);
      Diagnostics quiet(sourceMgr, false);
      checkModule(one, quiet);
      for (const Diagnostic &d : quiet.all())
        if (d.kind == Diagnostic::Error) {
          r.where = d.line ? fmt::format("{}:{}:{}", d.file, d.line, d.column) : d.file;
          r.reason = "does not check: " + d.message;
          break;
        }
      // A point that checks but does not fit an SM (shared memory, the
      // register pool, tensor-memory columns, operand ranges: verifier/
      // Resources.h) would be a finding of `check` and dropped by `tune`:
      // it is rejected here too, so that a space's valid points are the
      // ones that can run.
      if (!quiet.hasErrors()) {
        ResourceReport fit = checkResources(*p.instance.kernel);
        if (!fit.findings.empty()) {
          r.where = locationText(sourceMgr, fit.findings.front().loc);
          r.reason = "does not fit: " + fit.findings.front().message;
        }
        r.valid = fit.findings.empty();
      }
      r.hash = structuralHash(*p.instance.kernel);
    }
    valid += r.valid;
    rows.push_back(std::move(r));
  }
  std::string capNote =
      all.capped ? fmt::format("the space has {} points; only the first {} were enumerated "
                               "(raise --max-points, or narrow the domains)",
                               all.total, maxPoints.getValue())
                 : std::string();
  if (spaceJson) {
    llvm::json::Array params, points, rejected;
    for (const SpaceParam &p : kernel->space.params) {
      llvm::json::Array values;
      for (int64_t i = 0; i < p.size() && i < 4096; ++i)
        values.push_back(print(p.value(i)));
      params.push_back(llvm::json::Object{
          {"name", p.name}, {"domain", p.domainText()}, {"values", std::move(values)}});
    }
    for (const Row &r : rows) {
      llvm::json::Object values;
      for (const PointValue &v : r.point)
        values[v.name] = print(v.value);
      llvm::json::Object o{{"point", pointText(r.point)}, {"values", std::move(values)}};
      if (!r.name.empty())
        o["name"] = r.name;
      if (r.valid) {
        o["hash"] = fmt::format("{:016x}", r.hash);
        points.push_back(std::move(o));
      } else {
        o["reason"] = r.reason;
        o["location"] = r.where;
        rejected.push_back(std::move(o));
      }
    }
    llvm::json::Object out{{"ok", true},
                           {"status", static_cast<int64_t>(kClean)},
                           {"kernel", kernel->name},
                           {"params", std::move(params)},
                           {"total", all.total},
                           {"enumerated", static_cast<int64_t>(rows.size())},
                           {"valid", static_cast<int64_t>(valid)},
                           {"capped", all.capped},
                           {"points", std::move(points)},
                           {"rejected", std::move(rejected)}};
    if (all.capped)
      out["note"] = capNote;
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
    return kClean;
  }
  llvm::outs() << fmt::format("kernel {}: {} point{}, {} valid, {} rejected\n", kernel->name,
                              all.total, all.total == 1 ? "" : "s", valid, rows.size() - valid);
  for (const Row &r : rows) {
    std::string named = r.name.empty() ? "" : " (point " + r.name + ")";
    if (r.valid)
      llvm::outs() << fmt::format("  valid    {}{}  hash {:016x}\n", pointText(r.point), named,
                                  r.hash);
    else
      llvm::outs() << fmt::format("  rejected {}{}: {}{}\n", pointText(r.point), named,
                                  r.where.empty() ? "" : r.where + ": ", r.reason);
  }
  if (all.capped)
    llvm::errs() << "tilescope space: note: " << capNote << "\n";
  return kClean;
}

int runInstantiate() {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr);
  std::optional<Module> module = loadModule(instInput, diag, Checked::No);
  if (!module)
    return kInputError;
  const Kernel *kernel = chooseKernel(*module, instKernel, diag);
  if (!kernel || checkSpaceDeclarations(*kernel, diag))
    return kInputError;
  auto point = parsePoint(*kernel, instSet, diag);
  if (!point)
    return kInputError;
  Instance inst = instantiate(*kernel, *point);
  if (!inst.kernel) {
    diag.error(inst.loc, fmt::format("point {} {}", pointText(*point),
                                     whyNotInstantiated(inst)));
    return kInputError;
  }
  Module one;
  one.kernels.push_back(*inst.kernel);
  // Comments on statements the instantiation left as they were stay; the
  // kernel's own move with it.
  if (module->comments) {
    auto comments = std::make_shared<Comments>(*module->comments);
    size_t index = static_cast<size_t>(kernel - module->kernels.data());
    auto only = [&](auto &perKernel) {
      auto mine = index < perKernel.size()
                      ? perKernel[index]
                      : typename std::decay_t<decltype(perKernel)>::value_type();
      perKernel.assign(1, mine);
    };
    only(comments->kernelBefore);
    only(comments->kernelOpen);
    only(comments->kernelBodyEnd);
    comments->fileEnd.clear();
    one.comments = std::move(comments);
  }
  if (checkModule(one, diag)) {
    diag.note(kernel->loc,
              fmt::format("at point {} of kernel '{}'", pointText(*point), kernel->name));
    return kInputError;
  }
  std::string text = print(one);
  if (instOutput.empty()) {
    llvm::outs() << text;
    return kClean;
  }
  std::error_code ec;
  llvm::raw_fd_ostream out(instOutput, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    diag.error(llvm::SMLoc(), "cannot write '" + instOutput + "': " + ec.message());
    return kInputError;
  }
  out << text;
  return kClean;
}

CommandRegistration spaceRegistration(spaceCommand, runSpace);
CommandRegistration instantiateRegistration(instantiateCommand, runInstantiate);
} // namespace
} // namespace tilescope::tool
