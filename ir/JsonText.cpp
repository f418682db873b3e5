#include "ir/JsonText.h"

namespace tilescope {

llvm::Expected<llvm::json::Value> parseJsonText(llvm::StringRef text, unsigned maxDepth) {
  unsigned depth = 0, line = 1;
  size_t lineStart = 0;
  bool inString = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
    }
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return llvm::make_error<llvm::json::ParseError>(
            "nesting too deep (arrays and objects)", line, unsigned(i + 1 - lineStart),
            unsigned(i + 1)); // one past the bracket, as json::parse reports positions
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return llvm::json::parse(text);
}

} // namespace tilescope
