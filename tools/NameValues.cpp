#include "tools/NameValues.h"

#include <llvm/ADT/SmallVector.h>

#include <fmt/format.h>

#include <cmath>

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

} // namespace tilescope::tool
