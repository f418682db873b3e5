#include "tools/ProblemSizes.h"

#include "ir/ConcreteEval.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "simulator/DeviceSimulate.h"
#include "simulator/Problem.h"
#include "simulator/Program.h"
#include "verifier/FallbackSizes.h"

#include <fmt/format.h>

#include <set>

namespace tilescope::tool {

std::optional<std::map<std::string, int64_t>>
problemSizesOf(const Kernel &kernel, llvm::StringRef source, Diagnostics &diag) {
  std::map<std::string, int64_t> sizes;
  auto annotation =
      sim::findProblemAnnotation(std::string_view(source.data(), source.size()), kernel.name);
  if (!annotation)
    return sizes;
  auto at = [&](size_t offset) {
    return llvm::SMLoc::getFromPointer(source.data() + annotation->offset + offset);
  };
  sim::ProblemSyntaxError bad;
  auto spec = sim::parseProblem(annotation->text, &bad);
  std::optional<std::vector<sim::ProblemSize>> named;
  if (spec)
    named = sim::problemSizes(*spec, sim::shapeSymbols(kernel), &bad);
  if (!named) {
    diag.error(at(bad.offset), bad.message);
    return std::nullopt;
  }
  for (const sim::ProblemSize &size : *named)
    sizes[size.name] = size.value;
  LeafValue leaf = [&](const Expr &e) -> std::optional<int64_t> {
    if (e->kind != ExprKind::Var)
      return std::nullopt;
    auto it = sizes.find(as<Var>(e).name);
    return it == sizes.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
  bool admitted = true;
  for (const Expr &c : kernel.constraints) {
    if (evalConcrete(c, leaf).value_or(1) != 0)
      continue;
    admitted = false;
    // At the first size the constraint reads.
    std::set<std::string> reads = namesUsed(c);
    size_t offset = named->front().offset;
    for (auto it = named->rbegin(); it != named->rend(); ++it)
      if (reads.count(it->name))
        offset = it->offset;
    SizeAssignment read;
    for (const std::string &n : reads)
      read[n] = sizes.at(n);
    diag.error(at(offset),
               fmt::format("the problem sizes break the where clause of kernel '{}': {} does not "
                           "hold for {}",
                           kernel.name, print(c), describeSizes(read)));
    diag.note(c->loc, "constraint here");
  }
  return admitted ? std::optional(sizes) : std::nullopt;
}

std::vector<ProblemPlacement> problemPlacementsOf(const Kernel &kernel, llvm::StringRef source) {
  auto annotation =
      sim::findProblemAnnotation(std::string_view(source.data(), source.size()), kernel.name);
  if (!annotation || kernel.launch.devices.empty())
    return {};
  sim::ProblemSyntaxError bad;
  auto spec = sim::parseProblem(annotation->text, &bad);
  if (!spec || !sim::isDeviceProblem(spec->kind))
    return {};
  return sim::problemPlacements(*spec);
}

} // namespace tilescope::tool
