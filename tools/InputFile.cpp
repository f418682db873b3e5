#include "tools/InputFile.h"

#include "ir/Checker.h"
#include "ir/Instantiate.h"
#include "ir/Parser.h"

#include <fmt/format.h>

#include <algorithm>

#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

namespace tilescope::tool {

std::optional<unsigned> loadInput(llvm::StringRef path, Diagnostics &diag) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/false,
                                                   /*RequiresNullTerminator=*/false);
  if (!buffer) {
    diag.error(llvm::SMLoc(), "cannot read '" + path + "': " + buffer.getError().message());
    return std::nullopt;
  }
  return diag.sourceMgr().AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
}

bool instantiateChosen(Module &module, PointChoice point, Diagnostics &diag) {
  std::vector<Kernel> kept;
  for (const Kernel &k : module.kernels) {
    if (k.space.empty()) {
      kept.push_back(k);
      continue;
    }
    if (!point.kernel.empty() && k.name != point.kernel)
      continue; // the command runs another kernel
    std::string chosen;
    if (point.set.empty() && point.choose) {
      auto c = point.choose(k, diag);
      if (!c)
        return false;
      chosen = *c;
    }
    llvm::StringRef set = point.set.empty() ? llvm::StringRef(chosen) : point.set;
    if (set.empty()) {
      std::string names;
      for (const SpaceParam &p : k.space.params)
        names += (names.empty() ? "" : ", ") + p.name;
      diag.error(k.loc, fmt::format("kernel '{}' has parameters ({}); choose a point with --set "
                                    "NAME=VALUE,... or a named point (`tilescope space` lists "
                                    "them, `tilescope instantiate` prints one)",
                                    k.name, names));
      return false;
    }
    auto p = parsePoint(k, set, diag);
    if (!p)
      return false;
    Instance inst = instantiate(k, *p);
    if (!inst.kernel) {
      diag.error(inst.loc, fmt::format("point {} of kernel '{}' {}", pointText(*p), k.name,
                                       whyNotInstantiated(inst)));
      return false;
    }
    kept.push_back(std::move(*inst.kernel));
  }
  module.kernels = std::move(kept);
  module.comments = nullptr; // attached to the kernels as they were
  return true;
}

std::optional<Module> loadModule(llvm::StringRef path, Diagnostics &diag, Checked check,
                                 PointChoice point) {
  auto id = loadInput(path, diag);
  if (!id)
    return std::nullopt;
  Module module = parseModule(*id, diag);
  if (!diag.hasErrors() && check == Checked::Yes)
    checkModule(module, diag);
  bool parameterised = std::any_of(module.kernels.begin(), module.kernels.end(),
                                   [](const Kernel &k) { return !k.space.empty(); });
  if (!diag.hasErrors() && check == Checked::Yes && parameterised)
    instantiateChosen(module, point, diag);
  if (diag.hasErrors())
    return std::nullopt;
  return module;
}

const Kernel *chooseKernel(const Module &module, llvm::StringRef name, llvm::StringRef path,
                           Diagnostics &diag) {
  const Kernel *kernel = nullptr;
  if (!name.empty())
    kernel = module.find(std::string_view(name));
  else if (module.kernels.size() == 1)
    kernel = &module.kernels[0];
  if (!kernel)
    diag.error(llvm::SMLoc(), name.empty()
                                  ? fmt::format("{} holds {} kernels; choose one with --kernel",
                                                path.str(), module.kernels.size())
                                  : fmt::format("no kernel named '{}'", name.str()));
  return kernel;
}

bool CommandInput::load(llvm::StringRef path, llvm::StringRef kernel, PointChoice point) {
  if (point.kernel.empty())
    point.kernel = kernel;
  module = loadModule(path, diag, Checked::Yes, point);
  if (!module)
    return false;
  if (kernel.empty() || module->find(std::string_view(kernel)))
    return true;
  llvm::errs() << "tilescope: error: no kernel named '" << kernel << "'\n";
  return false;
}

} // namespace tilescope::tool
