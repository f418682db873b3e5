// The data lives in the generated BundledKernelsData.cpp; this file keeps the
// library target non-empty when the folder holds no kernels.
#include "kernels/BundledKernels.h"

namespace tilescope {

std::string_view bundledKernelText(std::string_view name) {
  for (const BundledKernelFile &f : bundledKernelFiles())
    if (f.name == name)
      return f.text;
  return {};
}

} // namespace tilescope
