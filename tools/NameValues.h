// `--args M=256,N=256,eps=1e-5`: the NAME=VALUE list that sim, race and
// check take, parsed once for all of them.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Stmt.h"

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::tool {

struct NameValues {
  std::map<std::string, int64_t> ints;
  std::map<std::string, double> floats;
};

// Nothing, with `error` set, for an item that is not NAME=VALUE or a value
// that is not a finite number.
std::optional<NameValues> parseNameValues(llvm::StringRef text, std::string *error);

// The names in `values` that none of `kernels` can take: no shape symbol
// (a name in a tensor's shape) and no scalar parameter of any of them.
std::vector<std::string> namesNoKernelTakes(const NameValues &values,
                                            const std::vector<const Kernel *> &kernels);

// "K, M, N": the names `kernel` can take.
std::string namesKernelTakes(const Kernel &kernel);

// An input error at each `where` constraint of `kernels` that `values`
// break, where they bind every name it reads. Returns the number of errors.
unsigned reportBrokenConstraints(const NameValues &values, const std::vector<Kernel> &kernels,
                                 Diagnostics &diag);

} // namespace tilescope::tool
