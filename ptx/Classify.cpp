// The instruction table (Classify.h).
#include "ptx/Classify.h"

#include <array>

namespace tilescope::ptx {

std::string_view className(InstrClass c) {
  static constexpr std::array<std::string_view, kInstrClassCount> names = {
      "tensor core",   "tensor core sync", "tcgen05 memory",
      "TMA/bulk copy", "bulk group",       "cp.async",
      "global load",   "global store",     "shared load",
      "shared store",  "generic load",     "generic store",
      "local memory",  "param load",       "ldmatrix",
      "stmatrix",      "shuffle/vote",     "special function",
      "conversion",    "CTA barrier",      "mbarrier",
      "fence",         "setmaxnreg",       "atomic",
      "prefetch",      "branch",           "float math",
      "integer math",  "move/select",      "other"};
  return names[size_t(c)];
}

bool hasFloatType(const Instruction &in) {
  for (const std::string &m : in.modifiers)
    if (m == "f16" || m == "f32" || m == "f64" || m == "bf16" || m == "f16x2" || m == "bf16x2" ||
        m == "ftz" || m == "approx")
      return true;
  return false;
}

namespace {

// The modifiers joined, without the ones every such instruction carries.
std::string joinModifiers(const Instruction &in, size_t from = 0) {
  std::string s;
  for (size_t i = from; i < in.modifiers.size(); ++i) {
    const std::string &m = in.modifiers[i];
    if (m == "sync" || m == "aligned")
      continue;
    if (!s.empty())
      s += '.';
    s += m;
  }
  return s;
}

std::string_view stateSpace(const Instruction &in) {
  for (const std::string &m : in.modifiers) {
    std::string_view v = m;
    if (v.substr(0, 6) == "global")
      return "global";
    if (v.substr(0, 6) == "shared")
      return "shared";
    if (v == "local")
      return "local";
    if (v == "param")
      return "param";
    if (v == "const")
      return "const";
  }
  return "";
}

InstrClass loadStore(const Instruction &in, bool store) {
  std::string_view space = stateSpace(in);
  if (space == "global" || space == "const")
    return store ? InstrClass::GlobalStore : InstrClass::GlobalLoad;
  if (space == "shared")
    return store ? InstrClass::SharedStore : InstrClass::SharedLoad;
  if (space == "local")
    return InstrClass::LocalMemory;
  if (space == "param")
    return InstrClass::ParamLoad;
  return store ? InstrClass::GenericStore : InstrClass::GenericLoad;
}

} // namespace

Classification classify(const Instruction &in) {
  const std::string &op = in.opcode;
  const auto &mods = in.modifiers;
  auto first = [&](std::string_view m) { return !mods.empty() && mods[0] == m; };
  Classification c;
  c.key = joinModifiers(in);
  if (op == "wgmma") {
    if (first("mma_async")) {
      c.cls = InstrClass::TensorCore;
      c.key = "wgmma." + joinModifiers(in, 1);
    } else {
      c.cls = InstrClass::TensorCoreSync;
      c.key = "wgmma." + c.key;
    }
    return c;
  }
  if (op == "mma") {
    c.cls = InstrClass::TensorCore;
    c.key = "mma." + c.key;
    return c;
  }
  if (op == "tcgen05") {
    if (first("mma"))
      c.cls = InstrClass::TensorCore;
    else if (first("commit") || first("wait") || first("fence"))
      c.cls = InstrClass::TensorCoreSync;
    else
      c.cls = InstrClass::Tensor05Memory;
    c.key = "tcgen05." + c.key;
    return c;
  }
  if (op == "cp") {
    bool async = !mods.empty() && mods[0] == "async";
    bool bulk = mods.size() > 1 && mods[1] == "bulk";
    if (first("reduce") || (async && bulk)) {
      bool group = in.hasModifier("commit_group") || in.hasModifier("wait_group");
      c.cls = group ? InstrClass::BulkGroup : InstrClass::Tma;
      c.key = "cp." + c.key;
      return c;
    }
    if (async) {
      c.cls = InstrClass::CpAsync;
      c.key = "cp." + c.key;
      return c;
    }
  }
  if (op == "ld" || op == "ldu") {
    c.cls = loadStore(in, false);
    return c;
  }
  if (op == "st") {
    c.cls = loadStore(in, true);
    return c;
  }
  if (op == "ldmatrix") {
    c.cls = InstrClass::Ldmatrix;
    return c;
  }
  if (op == "stmatrix") {
    c.cls = InstrClass::Stmatrix;
    return c;
  }
  if (op == "shfl" || op == "vote" || op == "redux" || op == "match" || op == "elect" ||
      op == "activemask") {
    c.cls = InstrClass::Shuffle;
    c.key = op + (c.key.empty() ? "" : "." + c.key);
    return c;
  }
  if (op == "ex2" || op == "lg2" || op == "rsqrt" || op == "rcp" || op == "sqrt" || op == "sin" ||
      op == "cos" || op == "tanh") {
    c.cls = InstrClass::SpecialFunction;
    c.key = op + "." + c.key;
    return c;
  }
  if (op == "cvt" || op == "cvt.pack") {
    c.cls = InstrClass::Conversion;
    return c;
  }
  if (op == "bar" || op == "barrier") {
    c.cls = InstrClass::CtaBarrier;
    c.key = op;
    for (const std::string &m : mods)
      if (m != "aligned")
        c.key += "." + m;
    return c;
  }
  if (op == "mbarrier") {
    c.cls = InstrClass::Mbarrier;
    return c;
  }
  if (op == "fence" || op == "membar") {
    c.cls = InstrClass::Fence;
    c.key = op + "." + c.key;
    return c;
  }
  if (op == "setmaxnreg") {
    c.cls = InstrClass::Setmaxnreg;
    return c;
  }
  if (op == "atom" || op == "red") {
    c.cls = InstrClass::Atomic;
    c.key = op + "." + c.key;
    return c;
  }
  if (op == "prefetch" || op == "prefetchu" || op == "applypriority" || op == "discard") {
    c.cls = InstrClass::Prefetch;
    c.key = op + (c.key.empty() ? "" : "." + c.key);
    return c;
  }
  if (op == "bra" || op == "brx" || op == "call" || op == "ret" || op == "exit" || op == "trap" ||
      op == "brkpt") {
    c.cls = InstrClass::Branch;
    c.key = op;
    return c;
  }
  if (op == "mov" || op == "selp" || op == "setp" || op == "set" || op == "cvta" ||
      op == "isspacep" || op == "slct" || op == "prmt" || op == "mapa") {
    c.cls = InstrClass::Move;
    c.key = op;
    return c;
  }
  static constexpr std::array<std::string_view, 34> arithmetic = {
      "add",   "sub",   "mul",   "mad",  "fma",  "div",  "rem",   "abs", "neg",
      "min",   "max",   "and",   "or",   "xor",  "not",  "shl",   "shr", "shf",
      "lop3",  "bfe",   "bfi",   "brev", "popc", "clz",  "bfind", "fns", "copysign",
      "testp", "mul24", "mad24", "sad",  "addc", "subc", "madc"};
  for (std::string_view a : arithmetic)
    if (op == a) {
      c.cls = hasFloatType(in) ? InstrClass::FloatMath : InstrClass::IntegerMath;
      c.key = op;
      return c;
    }
  c.cls = InstrClass::Other;
  c.key = in.fullName();
  return c;
}

} // namespace tilescope::ptx
