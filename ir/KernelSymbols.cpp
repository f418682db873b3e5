#include "ir/KernelSymbols.h"

#include "ir/Visitor.h"

namespace tilescope {

std::set<std::string> kernelSymbols(const Kernel &kernel) {
  std::set<std::string> names;
  for (const Param &p : kernel.params) {
    if (!p.isTensor)
      names.insert(p.name);
    for (const Expr &d : p.shape)
      for (const std::string &n : namesUsed(d))
        names.insert(n);
  }
  return names;
}

} // namespace tilescope
