#include "tools/NameValues.h"

#include "ir/ConcreteEval.h"
#include "ir/KernelSymbols.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"

#include <llvm/ADT/SmallVector.h>

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace tilescope::tool {

std::optional<NameValues> parseNameValues(llvm::StringRef text, std::string *error) {
  NameValues out;
  llvm::SmallVector<llvm::StringRef, 8> items;
  text.split(items, ',', -1, false);
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
    llvm::StringRef digits =
        value.startswith("-") || value.startswith("+") ? value.drop_front() : value;
    if (!digits.empty() && digits.find_first_not_of("0123456789") == llvm::StringRef::npos &&
        value.getAsInteger(10, i)) {
      *error = fmt::format("value of '{}' does not fit in a 64-bit integer: '{}'", name.str(),
                           value.str());
      return std::nullopt;
    }
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

namespace {

// The names a kernel's --args may bind: its scalar parameters and the names
// in its tensors' shapes.
std::set<std::string> bindableNames(const Kernel &kernel) {
  return kernelSymbols(kernel);
}

} // namespace

std::vector<std::string> namesNoKernelTakes(const NameValues &values,
                                            const std::vector<const Kernel *> &kernels) {
  std::set<std::string> taken;
  for (const Kernel *k : kernels)
    for (const std::string &n : bindableNames(*k))
      taken.insert(n);
  std::vector<std::string> out;
  for (const auto &[name, v] : values.ints)
    if (!taken.count(name))
      out.push_back(name);
  for (const auto &[name, v] : values.floats)
    if (!taken.count(name))
      out.push_back(name);
  return out;
}

std::string namesKernelTakes(const Kernel &kernel) {
  std::string out;
  for (const std::string &n : bindableNames(kernel))
    out += fmt::format("{}{}", out.empty() ? "" : ", ", n);
  return out.empty() ? std::string("none") : out;
}

unsigned reportBrokenConstraints(const NameValues &values, const std::vector<Kernel> &kernels,
                                 Diagnostics &diag) {
  LeafValue leaf = [&](const Expr &e) -> std::optional<int64_t> {
    if (e->kind != ExprKind::Var)
      return std::nullopt;
    auto it = values.ints.find(as<Var>(e).name);
    return it == values.ints.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
  unsigned errors = 0;
  // A shape symbol or an integer scalar given a fractional value would be
  // left out of the sizes (they are integers) rather than used.
  for (const Kernel &k : kernels) {
    std::set<std::string> integral;
    for (const Param &p : k.params) {
      if (!p.isTensor && !isFloat(p.dtype))
        integral.insert(p.name);
      for (const Expr &d : p.shape)
        for (const std::string &n : namesUsed(d))
          integral.insert(n);
    }
    for (const auto &[name, v] : values.floats)
      if (integral.count(name)) {
        diag.error(k.loc, fmt::format("--args gives {} = {}, but '{}' is an integer of kernel "
                                      "'{}' (a shape symbol or an integer scalar)",
                                      name, v, name, k.name));
        ++errors;
      }
  }
  for (const Kernel &k : kernels)
    for (const Expr &c : k.constraints) {
      auto holds = evalConcrete(c, leaf);
      if (!holds || *holds)
        continue;
      std::string bound;
      for (const std::string &n : namesUsed(c))
        bound += fmt::format("{}{} = {}", bound.empty() ? "" : ", ", n, values.ints.at(n));
      diag.error(c->loc, fmt::format("--args breaks the where clause of kernel '{}': {} does not "
                                     "hold for {}",
                                     k.name, print(c), bound));
      ++errors;
    }
  return errors;
}

} // namespace tilescope::tool
