// Small queries on the PTX representation (Ptx.h).
#include "ptx/Ptx.h"

namespace tilescope::ptx {

std::string Instruction::fullName() const {
  std::string s = opcode;
  for (const std::string &m : modifiers)
    s += "." + m;
  return s;
}

bool Instruction::hasModifier(std::string_view m) const {
  for (const std::string &x : modifiers)
    if (x == m)
      return true;
  return false;
}

std::optional<std::string> Instruction::modifierStartingWith(std::string_view prefix) const {
  for (const std::string &x : modifiers)
    if (x.size() >= prefix.size() && std::string_view(x).substr(0, prefix.size()) == prefix)
      return x;
  return std::nullopt;
}

namespace {
std::optional<int64_t> typeBytes(std::string_view t) {
  if (t == "pred")
    return 1;
  if (t.size() < 2)
    return std::nullopt;
  char c = t[0];
  if (c != 'b' && c != 'u' && c != 's' && c != 'f')
    return std::nullopt;
  int64_t bits = 0;
  for (char d : t.substr(1)) {
    if (d < '0' || d > '9')
      return std::nullopt;
    bits = bits * 10 + (d - '0');
  }
  if (bits % 8 != 0 || bits == 0)
    return std::nullopt;
  return bits / 8;
}
} // namespace

std::optional<int64_t> Declaration::bytes() const {
  std::optional<int64_t> b = typeBytes(type);
  if (!b)
    return std::nullopt;
  int64_t total = *b;
  for (int64_t d : dims) {
    if (d < 0)
      return std::nullopt;
    total *= d;
  }
  return total;
}

const Function *Module::function(std::string_view name) const {
  for (const Function &f : functions)
    if (f.name == name && f.hasBody)
      return &f;
  return nullptr;
}

std::vector<const Function *> Module::kernels() const {
  std::vector<const Function *> out;
  for (const Function &f : functions)
    if (f.entry && f.hasBody)
      out.push_back(&f);
  return out;
}

} // namespace tilescope::ptx
