// `--args M=256,N=256,eps=1e-5`: the NAME=VALUE list that sim, race and
// check take, parsed once for all of them.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace tilescope::tool {

struct NameValues {
  std::map<std::string, int64_t> ints;
  std::map<std::string, double> floats;
};

// Nothing, with `error` set, for an item that is not NAME=VALUE or a value
// that is not a finite number.
std::optional<NameValues> parseNameValues(llvm::StringRef text, std::string *error);

} // namespace tilescope::tool
