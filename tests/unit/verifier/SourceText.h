// Test fixtures the barrier tests share: a file of the source tree as text,
// and a kernel's text with one passage replaced (for mutations).
#pragma once

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace tilescope::test {

// The file at `path`, relative to the source tree (TILESCOPE_SOURCE_DIR).
inline std::string readSource(const std::string &path) {
  std::ifstream in(std::string(TILESCOPE_SOURCE_DIR) + "/" + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `text` with the first `from` replaced by `to`; `from` must occur.
inline std::string replaced(std::string text, const std::string &from, const std::string &to) {
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

} // namespace tilescope::test
