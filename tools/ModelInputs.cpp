#include "tools/ModelInputs.h"

#include "ir/Instantiate.h"
#include "ir/Printer.h"
#include "model/Profile.h"
#include "model/TuningTable.h"
#include "tools/NameValues.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

namespace tilescope::tool {

MachineOptions::MachineOptions(llvm::cl::SubCommand &sub)
    : target("target", llvm::cl::desc("The machine: h100 or h200"), llvm::cl::init("h100"),
             llvm::cl::sub(sub)),
      file("machine", llvm::cl::desc("A machine description (JSON) instead"),
           llvm::cl::value_desc("FILE"), llvm::cl::sub(sub)) {}

PointFlags::PointFlags(llvm::cl::SubCommand &sub, const char *autoDesc, llvm::StringRef verb)
    : allowUnknownDesc((verb + " a kernel that `tilescope check` leaves unknown (not proved); "
                               "without it such a kernel is refused with exit 3")
                           .str()),
      set("set",
          llvm::cl::desc("The point of a kernel with parameters: NAME=VALUE,... or a named point"),
          llvm::cl::value_desc("NAME=VALUE,..."), llvm::cl::sub(sub)),
      pick("auto", llvm::cl::desc(autoDesc), llvm::cl::sub(sub)),
      table("table",
            llvm::cl::desc("The tuning table for --auto (default: the one shipped for --target)"),
            llvm::cl::value_desc("FILE"), llvm::cl::sub(sub)),
      target("target", llvm::cl::desc("The machine of the shipped table: h100 or h200"),
             llvm::cl::init("h100"), llvm::cl::sub(sub)),
      allowUnknown("allow-unknown", llvm::cl::desc(allowUnknownDesc), llvm::cl::sub(sub)) {}

bool PointFlags::load(CommandInput &in, llvm::StringRef file, llvm::StringRef kernel,
                      const std::string &args) const {
  PointOptions options{set, pick, args, table, target, {}, {}};
  PointChoice chosen;
  bool ok = pointChoiceFrom(options, chosen) && in.load(file, kernel, chosen);
  evictFirst = options.evictFirst;
  return ok;
}

std::optional<model::Machine> MachineOptions::load(Diagnostics &diag) const {
  return loadMachine(target, file, diag);
}

std::optional<model::Machine> loadMachine(llvm::StringRef target, llvm::StringRef file,
                                          Diagnostics &diag) {
  std::string error;
  std::optional<model::Machine> machine;
  if (!file.empty()) {
    auto text = llvm::MemoryBuffer::getFile(file);
    if (!text) {
      diag.error(llvm::SMLoc(), "cannot read '" + file + "': " + text.getError().message());
      return std::nullopt;
    }
    machine = model::parseMachine((*text)->getBuffer().str(), &error);
    if (!machine)
      error = file.str() + ": " + error;
  } else {
    machine = model::bundledMachine(target.str(), &error);
    if (!machine) {
      std::string known;
      for (const std::string &t : model::bundledMachineTargets())
        known += (known.empty() ? "" : ", ") + t;
      error += " (known: " + known + ")";
    }
  }
  if (!machine)
    diag.error(llvm::SMLoc(), error);
  return machine;
}

std::optional<bool> admits(const Kernel &kernel, const std::map<std::string, int64_t> &sizes,
                           std::string *why, llvm::SMLoc *where) {
  for (const Expr &c : kernel.constraints) {
    if (where)
      *where = c->loc;
    auto v = model::evaluate(kernel, c, sizes);
    if (!v) {
      *why = fmt::format("the sizes must give every name of the constraint '{}'", print(c));
      return std::nullopt;
    }
    if (!*v) {
      *why = fmt::format("'{}' is false at these sizes", print(c));
      return false;
    }
  }
  return true;
}

std::optional<std::string> tablePoint(const Kernel &family, llvm::StringRef tableFile,
                                      llvm::StringRef target,
                                      const std::map<std::string, int64_t> &sizes,
                                      Diagnostics &diag, std::vector<std::string> *evictFirst) {
  std::string error;
  std::optional<model::TuningTable> table;
  if (!tableFile.empty()) {
    auto text = llvm::MemoryBuffer::getFile(tableFile);
    if (!text) {
      diag.error(llvm::SMLoc(), "cannot read '" + tableFile + "': " + text.getError().message());
      return std::nullopt;
    }
    table = model::parseTuningTable((*text)->getBuffer(), &error);
    if (!table)
      error = tableFile.str() + ": " + error;
    else if (table->kernel != family.name)
      error = fmt::format("{}: the table is for kernel '{}', not '{}'", tableFile.str(),
                          table->kernel, family.name);
    if (!error.empty())
      table.reset();
  } else {
    table = model::bundledTuningTable(family.name, target.str(), &error);
  }
  if (!table) {
    diag.error(family.loc, error);
    return std::nullopt;
  }
  std::string reasons;
  for (const model::TableEntry *e : model::nearestEntries(*table, sizes)) {
    Diagnostics quiet(diag.sourceMgr(), /*printImmediately=*/false);
    auto point = parsePoint(family, e->point, quiet);
    if (!point) {
      diag.error(family.loc, fmt::format("the tuning table's point '{}' is not a point of kernel "
                                         "'{}' (is the table out of date?)",
                                         e->point, family.name));
      return std::nullopt;
    }
    Instance inst = instantiate(family, *point);
    std::string why;
    if (inst.kernel) {
      auto ok = admits(*inst.kernel, sizes, &why);
      if (!ok) {
        diag.error(family.loc, why);
        return std::nullopt;
      }
      if (*ok) {
        if (evictFirst)
          *evictFirst = e->evictFirst;
        return e->point;
      }
    } else {
      why = inst.reason;
    }
    if (reasons.size() < 400)
      reasons += fmt::format("; {}: {}", e->point, why);
  }
  diag.error(family.loc,
             fmt::format("no entry of the tuning table admits these sizes{}",
                         reasons.empty() ? " (it has no entry with a point)" : reasons));
  return std::nullopt;
}

bool pointChoiceFrom(PointOptions &options, PointChoice &point) {
  if (!options.set.empty() && options.pick) {
    llvm::errs() << "tilescope: error: --set and --auto both choose the point; give one\n";
    return false;
  }
  point.set = options.set;
  if (!options.pick)
    return true;
  std::string error;
  auto sizes = parseNameValues(options.args, &error);
  if (!sizes || sizes->ints.empty()) {
    llvm::errs() << "tilescope: error: --auto needs the sizes, --args M=..,N=..,K=.."
                 << (error.empty() ? "" : ": " + error) << "\n";
    return false;
  }
  options.sizes = sizes->ints;
  point.choose = [&options](const Kernel &k, Diagnostics &diag) {
    auto chosen =
        tablePoint(k, options.table, options.target, options.sizes, diag, &options.evictFirst);
    if (chosen) {
      llvm::errs() << "tilescope: kernel " << k.name << " at " << *chosen;
      if (!options.evictFirst.empty())
        llvm::errs() << " with --evict-first " << llvm::join(options.evictFirst, ",");
      llvm::errs() << " (tuning table, --auto)\n";
    }
    return chosen;
  };
  return true;
}

} // namespace tilescope::tool
