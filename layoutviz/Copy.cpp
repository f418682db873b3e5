#include "layoutviz/Copy.h"

#include "layoutviz/Evaluation.h"

#include "ir/BankModel.h"
#include "ir/Diagnostics.h"
#include "ir/LayoutPresets.h"
#include "ir/LayoutText.h"
#include "ir/ThreadIndex.h"

#ifdef TILESCOPE_VIZ_HAS_VERIFIER
#include "verifier/BankConflicts.h"
#include "ir/InstructionRules.h"
#endif

#include <fmt/format.h>
#include <llvm/Support/SourceMgr.h>

#include <algorithm>
#include <map>
#include <optional>

namespace tilescope::viz {

namespace json = llvm::json;

namespace {

constexpr int64_t kMaxCopyElements = int64_t{1} << 16;

json::Object diagnostic(const std::string &kind, const std::string &message) {
  return json::Object{{"kind", kind}, {"severity", "error"}, {"message", message}};
}

bool usesThreads(const Layout &l) {
  for (size_t i = 0; i < kNumAxes; ++i)
    if (threadWeight(static_cast<Axis>(i)) && (l.axesUsed() >> i & 1))
      return true;
  return false;
}

int64_t threadOf(const PhysCoord &c) {
  int64_t t = 0;
  for (size_t i = 0; i < kNumAxes; ++i)
    if (c.has(static_cast<Axis>(i)))
      t += threadWeight(static_cast<Axis>(i)) * c.value[i];
  return t;
}

// `16,16`, `16x16`: extents; empty on error.
std::vector<int64_t> parseExtents(const std::string &text) {
  std::vector<int64_t> out;
  std::string digits;
  for (char c : text + ",") {
    if (c >= '0' && c <= '9') {
      digits += c;
    } else if (c == ',' || c == 'x' || c == ' ') {
      if (!digits.empty()) {
        if (digits.size() > 9)
          return {};
        out.push_back(std::stoll(digits));
        digits.clear();
      }
    } else {
      return {};
    }
  }
  for (int64_t e : out)
    if (e < 1)
      return {};
  return out;
}

json::Array ints(const std::vector<int64_t> &v) {
  json::Array a;
  for (int64_t x : v)
    a.push_back(x);
  return a;
}

#ifdef TILESCOPE_VIZ_HAS_VERIFIER
// The global side of a TMA copy of the tile (CopyRequest::global): every
// element's global offset, the tensor's strides (the tile must be a strided
// box with a contiguous inner dimension), the 32-byte sectors it touches and
// the `tma` rule's verdict on the shared tile with those strides. Null, with
// a diagnostic, when the layout is not one.
std::optional<json::Object> globalStage(const std::string &text, const std::vector<int64_t> &shape,
                                        Dtype dtype, const Layout &tile, const TargetInfo &target,
                                        json::Array &diagnostics) {
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, false);
  std::optional<LayoutSpec> spec = parseLayoutText(text, "<global>", diag);
  if (!diag.all().empty() || !spec) {
    for (const auto &d : diag.all()) {
      auto o = diagnostic("global", d.message);
      o["line"] = static_cast<int64_t>(d.line);
      o["column"] = static_cast<int64_t>(d.column);
      diagnostics.push_back(std::move(o));
    }
    if (diag.all().empty())
      diagnostics.push_back(diagnostic("global", "the global layout does not parse"));
    return std::nullopt;
  }
  const Layout &g = spec->layout;
  if (g.axesUsed() != (1u << static_cast<unsigned>(Axis::m)) || g.replicas() != 1 ||
      g.swizzle()) {
    diagnostics.push_back(diagnostic(
        "global",
        fmt::format("the global tile {} must place data on m alone (global elements, no "
                    "swizzle, no replicas)",
                    g.str())));
    return std::nullopt;
  }
  if (!g.admits(shape)) {
    diagnostics.push_back(diagnostic(
        "global", fmt::format("the global layout {} places {} elements, not the tile's", g.str(),
                              g.size())));
    return std::nullopt;
  }
  int64_t size = g.size(), bytes = std::max(dtypeBits(dtype) / 8, 1);
  std::vector<int64_t> slot(size);
  for (int64_t f = 0; f < size; ++f)
    slot[f] = g.base(f).get(Axis::m);
  // Strides from the unit steps of each dimension, then checked on every
  // element: a TMA box is a strided slice of the tensor.
  std::vector<int64_t> strides(shape.size(), 0);
  int64_t step = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 1)
      strides[d] = slot[step] - slot[0];
    step *= shape[d];
  }
  json::Array legality;
  bool linear = true;
  for (int64_t f = 0; f < size && linear; ++f) {
    int64_t rest = f, expect = slot[0];
    for (size_t d = shape.size(); d-- > 0;) {
      expect += rest % shape[d] * strides[d];
      rest /= shape[d];
    }
    linear = slot[f] == expect;
  }
  if (!linear)
    legality.push_back(diagnostic("global", "the tile is not a strided box of the global tensor "
                                            "(TMA copies boxes)"));
  else if (shape.back() > 1 && strides.back() != 1)
    legality.push_back(diagnostic(
        "global", fmt::format("the inner dimension has stride {} in global memory, not 1 "
                              "(TMA's innermost dimension is contiguous)",
                              strides.back())));
  if (linear && (shape.back() == 1 || strides.back() == 1)) {
    InstructionUse use;
    for (size_t d = 0; d + 1 < shape.size(); ++d)
      use.globalStridesBytes.push_back(strides[d] * bytes);
    BufferInfo buffer;
    buffer.scope = MemScope::Shared;
    buffer.dtype = dtype;
    for (const LayoutViolation &v :
         checkInstruction(*findInstructionRule("tma"), tile, shape, buffer, target, use))
      legality.push_back(diagnostic("tma", v.message));
  }
  std::vector<int64_t> sectors;
  for (int64_t f = 0; f < size; ++f)
    sectors.push_back(slot[f] * bytes / 32);
  std::sort(sectors.begin(), sectors.end());
  sectors.erase(std::unique(sectors.begin(), sectors.end()), sectors.end());
  json::Object out{{"layout", g.str()},
                   {"slot", ints(slot)},
                   {"strides", ints(strides)},
                   {"bytes", size * bytes},
                   {"sectors", static_cast<int64_t>(sectors.size())},
                   {"idealSectors", (size * bytes + 31) / 32},
                   {"legal", legality.empty()}};
  out["legality"] = std::move(legality);
  return out;
}
#endif

} // namespace

json::Value evaluateCopy(const CopyRequest &request) {
  json::Object doc;
  json::Array diagnostics;
  doc["request"] =
      json::Object{{"from", request.from},   {"to", request.to},         {"shape", request.shape},
                   {"dtype", request.dtype}, {"target", request.target}, {"inst", request.inst},
                   {"warp", request.warp},   {"global", request.global}};
  auto finish = [&](bool ok) {
    doc["ok"] = ok;
    doc["diagnostics"] = std::move(diagnostics);
    return json::Value(std::move(doc));
  };
#ifndef TILESCOPE_VIZ_HAS_VERIFIER
  diagnostics.push_back(diagnostic("copy", "the copy view needs the verifier's instruction rules; "
                                           "this build has none"));
  return finish(false);
#else
  // Both layouts, with the parser's located diagnostics.
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, false);
  std::optional<LayoutSpec> specs[2];
  const std::string *texts[2] = {&request.from, &request.to};
  const char *names[2] = {"from", "to"};
  for (int k = 0; k < 2; ++k) {
    if (texts[k]->find_first_not_of(" \t") == std::string::npos) {
      diagnostics.push_back(diagnostic(names[k], std::string("give the ") + names[k] + " layout"));
      continue;
    }
    size_t before = diag.all().size();
    specs[k] = parseLayoutText(*texts[k], std::string("<") + names[k] + ">", diag);
    for (size_t d = before; d < diag.all().size(); ++d) {
      auto o = diagnostic(names[k], diag.all()[d].message);
      o["line"] = static_cast<int64_t>(diag.all()[d].line);
      o["column"] = static_cast<int64_t>(diag.all()[d].column);
      diagnostics.push_back(std::move(o));
    }
    if (diag.all().size() != before)
      specs[k].reset();
  }
  if (!specs[0] || !specs[1])
    return finish(false);

  // The tile's shape and element type.
  std::vector<int64_t> shape;
  if (request.shape.find_first_not_of(" \t") == std::string::npos) {
    for (const auto &s : specs)
      if (const LayoutPreset *p = findLayoutPreset(s->preset); p && shape.empty())
        shape = p->shape(s->presetArgs);
    if (shape.empty()) {
      diagnostics.push_back(diagnostic("shape", "give the tile's shape, e.g. 64,64"));
      return finish(false);
    }
  } else {
    shape = parseExtents(request.shape);
    if (shape.empty()) {
      diagnostics.push_back(
          diagnostic("shape", fmt::format("'{}' is not a shape such as 64,64", request.shape)));
      return finish(false);
    }
  }
  std::optional<Dtype> dtype;
  if (!request.dtype.empty()) {
    dtype = dtypeFromName(request.dtype);
    if (!dtype) {
      diagnostics.push_back(diagnostic("dtype", fmt::format("unknown dtype '{}'", request.dtype)));
      return finish(false);
    }
  }
  for (const auto &s : specs)
    if (!dtype && s->layout.swizzle() && s->layout.swizzle()->shorthandBytes)
      dtype = s->layout.swizzle()->shorthandDtype;
  if (!dtype)
    dtype = Dtype::f32;
  int bits = std::max(dtypeBits(*dtype), 1);
  auto target = targetFromName(request.target);
  if (!target) {
    diagnostics.push_back(diagnostic("target", fmt::format("unknown target '{}'", request.target)));
    return finish(false);
  }
  for (int k = 0; k < 2; ++k)
    if (!specs[k]->layout.admits(shape)) {
      diagnostics.push_back(diagnostic(
          "shape", fmt::format("the {} layout {} places {} elements, not the tile's", names[k],
                               specs[k]->layout.str(), specs[k]->layout.size())));
      return finish(false);
    }
  const Layout &from = specs[0]->layout, &to = specs[1]->layout;
  if (from.size() > kMaxCopyElements) {
    diagnostics.push_back(
        diagnostic("size", fmt::format("the copy view shows tiles of at most {} elements, not {}",
                                       kMaxCopyElements, from.size())));
    return finish(false);
  }
  // Which side holds registers and which is the shared tile.
  bool fromRegs = usesThreads(from), toRegs = usesThreads(to);
  if (fromRegs == toRegs) {
    diagnostics.push_back(diagnostic(
        "copy", fromRegs ? "both layouts are register fragments; one side must be a shared tile"
                         : "neither layout places data on threads; one side must be a register "
                           "fragment"));
    return finish(false);
  }
  const Layout &regs = fromRegs ? from : to, &tile = fromRegs ? to : from;
  bool memoryOk = tile.axesUsed() == (1u << static_cast<unsigned>(Axis::m));
  if (!memoryOk) {
    diagnostics.push_back(diagnostic(
        "copy", fmt::format("the shared tile {} must place data on m alone", tile.str())));
    return finish(false);
  }
  const InstructionRule *rule = nullptr;
  if (!request.inst.empty()) {
    rule = findInstructionRule(request.inst);
    if (!rule) {
      diagnostics.push_back(diagnostic("inst", fmt::format("unknown instruction '{}' (one of: {})",
                                                           request.inst, instructionRuleNames())));
      return finish(false);
    }
  }

  // Per element: its thread and register, and its place in shared memory.
  int64_t size = from.size(), maxThread = 0;
  std::vector<int64_t> thread(size), reg(size), mem(size);
  for (int64_t f = 0; f < size; ++f) {
    PhysCoord c = regs.base(f);
    thread[f] = threadOf(c);
    reg[f] = c.get(Axis::m);
    mem[f] = tile.base(f).get(Axis::m);
    maxThread = std::max(maxThread, thread[f]);
  }
  int64_t warp = 0;
  if (request.warp.empty() || request.warp.find_first_not_of("0123456789") != std::string::npos ||
      request.warp.size() > 6 || (warp = std::stoll(request.warp)) > maxThread / 32) {
    diagnostics.push_back(diagnostic(
        "warp", fmt::format("warp must be in [0, {}], not '{}'", maxThread / 32, request.warp)));
    return finish(false);
  }

  // The warp's requests.
  std::vector<BankRequest> requests;
  int64_t vector = 1;
  std::string why;
  if (rule && (rule->family == InstructionFamily::Matrix ||
               rule->family == InstructionFamily::SharedAccess)) {
    requests = instructionRequests(*rule, shape, size, bits, &why);
    if (!why.empty()) {
      diagnostics.push_back(diagnostic("inst", why));
      return finish(false);
    }
    vector = rule->family == InstructionFamily::Matrix ? 8 : rule->accessBits / bits;
  } else {
    // Each thread moves its registers in order, `vector` at a time: the
    // widest access (<= 16 bytes) whose elements are consecutive registers
    // and consecutive, aligned slots of the tile.
    std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> mine; // thread -> (reg, flat)
    for (int64_t f = 0; f < size; ++f)
      if (thread[f] / 32 == warp)
        mine[thread[f] % 32].push_back({reg[f], f});
    for (auto &[t, list] : mine)
      std::sort(list.begin(), list.end());
    for (int64_t v = std::max<int64_t>(1, 128 / bits); v > 1; v /= 2) {
      bool fits = true;
      for (auto &[t, list] : mine)
        for (size_t i = 0; i < list.size() && fits; i += v) {
          fits = i + v <= list.size() && list[i].first % v == 0 &&
                 (mem[list[i].second] * bits / 8) % (v * bits / 8) == 0;
          for (int64_t k = 1; k < v && fits; ++k)
            fits = list[i + k].first == list[i].first + k &&
                   mem[list[i + k].second] == mem[list[i].second] + k;
        }
      if (fits) {
        vector = v;
        break;
      }
    }
    size_t most = 0;
    for (auto &[t, list] : mine)
      most = std::max(most, list.size());
    int64_t perPhase = threadsPerPhase(vector * bits / 8);
    for (size_t start = 0; start < most; start += vector) {
      BankRequest req;
      for (int64_t t = 0; t < 32; ++t) {
        if (t % perPhase == 0)
          req.emplace_back();
        ThreadAccess a{t, {}};
        auto it = mine.find(t);
        if (it != mine.end())
          for (size_t k = start; k < start + vector && k < it->second.size(); ++k)
            a.flats.push_back(it->second[k].second);
        req.back().push_back(std::move(a));
      }
      requests.push_back(std::move(req));
    }
  }

  // Cost every phase with the one bank model.
  json::Array requestArray;
  std::vector<std::vector<int64_t>> moved(kThreadsPerWarp);
  int64_t total = 0, ideal = 0, worst = 0;
  for (const BankRequest &req : requests) {
    json::Array phases;
    int64_t cost = 0;
    for (const auto &phase : req) {
      BankPhase p = costPhase(phase, tile, bits);
      json::Array accesses, ts, words;
      for (const ThreadAccess &a : phase) {
        ts.push_back(a.thread);
        accesses.push_back(ints(a.flats));
        for (int64_t f : a.flats)
          moved[size_t(laneOf(a.thread))].push_back(f);
      }
      for (int64_t w : p.words)
        words.push_back(w);
      cost += p.wavefronts;
      ideal += p.wavefronts > 0;
      worst = std::max(worst, p.wavefronts);
      phases.push_back(json::Object{{"threads", std::move(ts)},
                                    {"accesses", std::move(accesses)},
                                    {"words", std::move(words)},
                                    {"wavefronts", p.wavefronts}});
    }
    total += cost;
    requestArray.push_back(json::Object{{"phases", std::move(phases)}, {"wavefronts", cost}});
  }

  // Legality of the shared tile for the instruction, and the conflicts.
  json::Array legality;
  if (rule) {
    BufferInfo buffer;
    buffer.scope = MemScope::Shared;
    buffer.dtype = *dtype;
    const Layout &checked = rule->scope == MemScope::Shared ? tile : regs;
    if (rule->scope != MemScope::Shared)
      buffer.scope = rule->scope;
    for (const LayoutViolation &v :
         checkInstruction(*rule, checked, shape, buffer, targetInfo(*target)))
      legality.push_back(diagnostic("instruction", v.message));
  }
  if (total > ideal)
    legality.push_back(diagnostic(
        "banks", fmt::format("{} wavefronts where {} would do: up to a {}-way bank conflict", total,
                             ideal, worst)));

  if (!request.global.empty()) {
    std::optional<json::Object> global =
        globalStage(request.global, shape, *dtype, tile, targetInfo(*target), diagnostics);
    if (!global)
      return finish(false);
    doc["global"] = std::move(*global);
  }

  json::Array movedArray;
  for (auto &list : moved)
    movedArray.push_back(ints(list));
  doc["shape"] = ints(shape);
  doc["dtype"] = std::string(dtypeName(*dtype));
  doc["bits"] = bits;
  doc["registersFrom"] = fromRegs;
  doc["regsLayout"] = regs.str();
  doc["tileLayout"] = tile.str();
  doc["warp"] = warp;
  doc["warps"] = maxThread / 32 + 1;
  doc["vector"] = vector;
  doc["bytes"] = vector * bits / 8;
  // PTX's names of the registers (d0.., a0.., d1.hi) and each element's
  // bank in the tile (its first byte), so the page names and marks what the
  // engine computed.
  doc["registers"] = registerNaming(specs[fromRegs ? 0 : 1]->preset, bits);
  std::vector<int64_t> bank(size);
  for (int64_t f = 0; f < size; ++f)
    bank[f] = bankOf(mem[f], *dtype).bank;
  doc["bank"] = ints(bank);
  doc["thread"] = ints(thread);
  doc["register"] = ints(reg);
  doc["slot"] = ints(mem);
  doc["moved"] = std::move(movedArray);
  doc["requests"] = std::move(requestArray);
  doc["wavefronts"] = total;
  doc["ideal"] = ideal;
  doc["legal"] = legality.empty();
  doc["legality"] = std::move(legality);
  if (rule)
    doc["instruction"] = std::string(rule->name);
  return finish(true);
#endif
}

} // namespace tilescope::viz
