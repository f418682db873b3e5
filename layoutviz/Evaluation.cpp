#include "layoutviz/Evaluation.h"

#include "ir/Diagnostics.h"
#include "ir/LayoutFacts.h"
#include "ir/LayoutPresets.h"
#include "ir/LayoutText.h"
#include "ir/ThreadIndex.h"

#ifdef TILESCOPE_VIZ_HAS_VERIFIER
#include "verifier/LayoutVerifier.h"
#endif

#include <fmt/format.h>
#include <llvm/Support/SourceMgr.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <utility>
#include <array>
#include <map>
#include <tuple>
#include <unordered_map>

namespace tilescope::viz {

namespace json = llvm::json;

namespace {

// Axes in the order people read an owner: who holds it, from the largest
// group down to the lane, then where it sits. `warpid 6, laneid 12, m 1`.
constexpr std::array<Axis, kNumAxes> kReadingOrder = {
    Axis::pid,       Axis::bz,   Axis::by,     Axis::bx,     Axis::cbz,
    Axis::cby,       Axis::cbx,  Axis::wgid,   Axis::warpid, Axis::wid_in_wg,
    Axis::tid_in_wg, Axis::tx,   Axis::laneid, Axis::TLane,  Axis::P,
    Axis::m,         Axis::TCol, Axis::F,      Axis::Bank,
};

bool usesAxis(const Layout &l, Axis a) {
  return l.axesUsed() >> static_cast<unsigned>(a) & 1;
}

bool usesThreads(const Layout &l) {
  for (size_t i = 0; i < kNumAxes; ++i) {
    auto kind = axisInfo(static_cast<Axis>(i)).kind;
    if ((kind == AxisKind::Thread || kind == AxisKind::Block) && usesAxis(l, static_cast<Axis>(i)))
      return true;
  }
  return false;
}

// One diagnostic of the document.
json::Object diagnostic(std::string_view kind, std::string_view severity,
                        const std::string &message) {
  return json::Object{
      {"kind", std::string(kind)}, {"severity", std::string(severity)}, {"message", message}};
}

// `64,128`, `64x128`, `[64, 128]`, `(64, 128)`. On error, `column` is 1-based.
std::optional<std::vector<int64_t>> parseShape(const std::string &text, std::string *error,
                                               unsigned *column) {
  std::vector<int64_t> shape;
  size_t i = 0, n = text.size();
  auto skipSpace = [&] {
    while (i < n && (text[i] == ' ' || text[i] == '\t'))
      ++i;
  };
  auto fail = [&](std::string message) -> std::optional<std::vector<int64_t>> {
    *error = std::move(message);
    *column = static_cast<unsigned>(std::min(i, n) + 1);
    return std::nullopt;
  };
  skipSpace();
  char close = 0;
  if (i < n && (text[i] == '[' || text[i] == '(')) {
    close = text[i] == '[' ? ']' : ')';
    ++i;
  }
  while (true) {
    skipSpace();
    if (i >= n || !(text[i] >= '0' && text[i] <= '9'))
      return fail(i >= n ? "expected an extent at the end of the shape"
                         : fmt::format("expected an extent, found '{}'", text[i]));
    size_t start = i;
    int64_t value = 0;
    while (i < n && text[i] >= '0' && text[i] <= '9') {
      if (value > (int64_t{1} << 40)) {
        i = start;
        return fail("extent too large");
      }
      value = value * 10 + (text[i] - '0');
      ++i;
    }
    if (value == 0) {
      i = start;
      return fail("extents must be at least 1");
    }
    shape.push_back(value);
    if (shape.size() > 8) {
      i = start;
      return fail("at most 8 dimensions");
    }
    skipSpace();
    if (i < n && (text[i] == ',' || text[i] == 'x' || text[i] == 'X' || text[i] == '*')) {
      ++i;
      continue;
    }
    break;
  }
  if (close) {
    if (i >= n || text[i] != close)
      return fail(fmt::format("expected '{}'", close));
    ++i;
    skipSpace();
  }
  if (i != n)
    return fail(fmt::format("unexpected '{}' in the shape", text[i]));
  return shape;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? "x" : "") + std::to_string(shape[i]);
  return out;
}

// The scope a request names, or the one the layout implies ("auto" or none).
std::optional<MemScope> scopeFrom(std::string_view text, const Layout &l) {
  if (text == "auto" || text.empty())
    return layoutScope(l);
  return memScopeFromName(text);
}

// The engine's own legality checks, used when the verifier is not built:
// bounds against the axis extents and aliasing, both by enumeration.
struct OwnChecks {
  const Layout &layout;
  const std::vector<int64_t> &shape;
  const std::vector<Axis> &axes;
  const std::vector<int64_t> &extents;

  json::Object witnessOf(std::vector<int64_t> flats, const PhysCoord &slot) const {
    json::Object slotObject;
    for (Axis a : axes)
      slotObject[std::string(axisName(a))] = slot.get(a);
    json::Array elements;
    for (int64_t f : flats)
      elements.push_back(f);
    return json::Object{{"elements", std::move(elements)}, {"slot", std::move(slotObject)}};
  }

  void run(json::Array &out) const {
    // Bounds: the first owner past its extent, per axis.
    std::vector<bool> reported(axes.size(), false);
    // Aliasing: a slot reached by two distinct elements.
    std::map<std::vector<int64_t>, int64_t> slotOwner;
    bool aliasReported = false;
    int64_t aliasCount = 0;
    std::vector<int64_t> key(axes.size());
    for (int64_t flat = 0; flat < layout.size(); ++flat) {
      layout.forEachOwner(flat, [&](const PhysCoord &c) {
        for (size_t k = 0; k < axes.size(); ++k) {
          key[k] = c.get(axes[k]);
          if (!reported[k] && extents[k] > 0 && key[k] >= extents[k]) {
            reported[k] = true;
            auto d = diagnostic("bounds", "error",
                                fmt::format("element {} reaches {} {} but {} has extent {}",
                                            formatIndex(flat), axisName(axes[k]), key[k],
                                            axisName(axes[k]), extents[k]));
            auto w = witnessOf({flat}, c);
            w["axis"] = std::string(axisName(axes[k]));
            d["witness"] = std::move(w);
            out.push_back(std::move(d));
          }
        }
        auto [it, inserted] = slotOwner.emplace(key, flat);
        if (!inserted && it->second != flat) {
          ++aliasCount;
          if (!aliasReported) {
            aliasReported = true;
            auto d = diagnostic("alias", "error",
                                fmt::format("elements {} and {} share the slot {}",
                                            formatIndex(it->second), formatIndex(flat), c.str()));
            d["witness"] = witnessOf({it->second, flat}, c);
            out.push_back(std::move(d));
          }
        }
      });
    }
    if (aliasCount > 1)
      out.push_back(diagnostic("alias", "note",
                               fmt::format("{} owners in all land on a slot another element "
                                           "already holds",
                                           aliasCount)));
  }

  std::string formatIndex(int64_t flat) const {
    auto index = unflattenIndex(shape, flat);
    std::string out = "(";
    for (size_t i = 0; i < index.size(); ++i)
      out += (i ? ", " : "") + std::to_string(index[i]);
    return out + ")";
  }
};

#ifndef TILESCOPE_VIZ_HAS_VERIFIER
// Where the memory axis m is bounded for the engine's own checks: the
// register budget of a thread, the shared memory of a CTA, or nothing.
int64_t memoryBound(MemScope scope, const TargetInfo &target, Dtype dtype) {
  switch (scope) {
  case MemScope::Reg:
    return target.registersPerThread * 32 / std::max(dtypeBits(dtype), 1);
  case MemScope::Shared:
    return target.sharedBytesPerCta * 8 / std::max(dtypeBits(dtype), 1);
  case MemScope::Tmem:
  case MemScope::Global:
    return 0;
  }
  return 0;
}
#endif

#ifdef TILESCOPE_VIZ_HAS_VERIFIER
#endif

// The dtype a preset's fragment holds, for the menu.
std::string presetDtype(std::string_view name) {
  if (name.find("_a") == name.size() - 2 || name.find("_b") == name.size() - 2 ||
      name.find("ldmatrix_") != std::string_view::npos)
    return "bf16";
  for (auto [suffix, dtype] : {std::pair{"8bit", "u8"}, {"16bit", "bf16"}, {"32bit", "f32"}})
    if (name.size() >= std::string_view(suffix).size() &&
        name.substr(name.size() - std::string_view(suffix).size()) == suffix)
      return dtype;
  return "f32";
}

} // namespace

// How PTX names the register slots `m` of a preset's fragment: mma.sync
// operands and wgmma accumulators name elements (a0..a7, c0..c3, d0..dN);
// ldmatrix names 32-bit registers d0..d3, each two 16-bit halves; tcgen05.ld
// destinations are 32-bit registers r0..rN. `parts` is elements per name
// (1: the name is the element's).
json::Object registerNaming(const std::string &preset, int bits) {
  auto naming = [](const char *prefix, int64_t parts) {
    return json::Object{{"prefix", prefix}, {"parts", parts}};
  };
  if (preset == "mma_m16n8k16_a")
    return naming("a", 1);
  if (preset == "mma_m16n8k16_b")
    return naming("b", 1);
  if (preset == "mma_m16n8k16_c")
    return naming("c", 1);
  if (preset == "wgmma_acc")
    return naming("d", 1);
  int64_t parts = bits < 32 ? 32 / std::max(bits, 1) : 1;
  if (preset == "ldmatrix_x4")
    return naming("d", parts);
  return naming("r", parts);
}

// What the logical dimensions mean for presets whose tile is a hardware
// space: tcgen05.ld/st tiles are TMEM lanes x 32-bit columns.
json::Array logicalNames(const std::string &preset, size_t rank) {
  json::Array names;
  if (preset.rfind("tcgen05_", 0) == 0 || preset.rfind("tmem_", 0) == 0) {
    names.push_back("TMEM lane");
    names.push_back("TMEM column");
  } else if (preset == "ldmatrix_x4") {
    names.push_back("matrix");
    names.push_back("row");
    names.push_back("column");
  }
  if (names.size() != rank)
    names.clear();
  return names;
}

int64_t threadWeight(Axis a) {
  // A thread axis's coordinate counts (t / divisor) % modulus: its weight in
  // t is the divisor.
  auto m = threadIndexMap(a);
  return m ? m->divisor : 0;
}

VizRequest requestFromJson(const json::Object &o) {
  VizRequest r;
  if (auto s = o.getString("layout"))
    r.layout = s->str();
  if (auto s = o.getString("shape"))
    r.shape = s->str();
  if (auto s = o.getString("dtype"))
    r.dtype = s->str();
  if (auto s = o.getString("target"))
    r.target = s->str();
  if (auto s = o.getString("scope"))
    r.scope = s->str();
  if (auto v = o.getInteger("threads"))
    r.threads = *v;
  if (auto v = o.getInteger("devices"))
    r.devices = *v;
  if (auto v = o.getInteger("alloc"))
    r.alloc = *v;
  if (auto s = o.getString("acc"))
    r.access.mode = s->str();
  if (auto s = o.getString("ai"))
    r.access.index = s->str();
  if (auto s = o.getString("av"))
    r.access.vector = s->str();
  if (auto s = o.getString("ac"))
    r.access.custom = s->str();
  return r;
}

namespace {

// The evaluation; with `packed`, the per-element arrays go there as 32-bit
// integers instead of into the document (when every value fits).
json::Value evaluateDocument(const VizRequest &given, PackedArrays *packed) {
  // Text from a browser or a shell may be any bytes; JSON strings must be
  // UTF-8, so invalid sequences become U+FFFD before anything quotes them.
  VizRequest request = given;
  for (std::string *text : {&request.layout, &request.shape, &request.dtype, &request.target,
                            &request.scope, &request.access.mode, &request.access.index,
                            &request.access.vector, &request.access.custom})
    if (!json::isUTF8(*text))
      *text = json::fixUTF8(*text);
  json::Object doc;
  json::Array diagnostics;
  // Integer fields typed as text: the CLI's messages, and the number kept
  // out of range when bad, so the checks below report nothing more.
  bool integersOk = true;
  for (auto [text, value, what, lo, hi, kind] :
       {std::tuple{&request.threadsText, &request.threads, "threads per CTA", int64_t{1},
                   int64_t{1024}, "threads"},
        {&request.devicesText, &request.devices, "devices", int64_t{1}, int64_t{4096}, "devices"},
        {&request.allocText, &request.alloc, "alloc", int64_t{0}, int64_t{1} << 40, "alloc"}}) {
    if (!*text)
      continue;
    std::string why;
    if (!parseIntegerField(**text, what, lo, hi, value, &why)) {
      diagnostics.push_back(diagnostic(kind, "error", why));
      integersOk = false;
      *value = lo; // keep the range checks below quiet
    }
  }
  doc["request"] = json::Object{
      {"layout", request.layout},   {"shape", request.shape},      {"dtype", request.dtype},
      {"target", request.target},   {"scope", request.scope},      {"threads", request.threads},
      {"devices", request.devices}, {"alloc", request.alloc},      {"acc", request.access.mode},
      {"ai", request.access.index}, {"av", request.access.vector}, {"ac", request.access.custom}};
  for (auto [text, key] : {std::pair{&request.threadsText, "threads"},
                           {&request.devicesText, "devices"},
                           {&request.allocText, "alloc"}})
    if (*text)
      (*doc.getObject("request"))[key] = **text;
  auto finish = [&](bool ok) -> json::Value {
    doc["ok"] = ok;
    doc["diagnostics"] = std::move(diagnostics);
    return json::Value(std::move(doc));
  };
  auto fieldError = [&](std::string_view kind, const std::string &message) {
    diagnostics.push_back(diagnostic(kind, "error", message));
  };

  // An empty dtype is settled once the layout is known (see below).
  std::optional<Dtype> dtype;
  if (!request.dtype.empty()) {
    dtype = dtypeFromName(request.dtype);
    if (!dtype)
      fieldError("dtype", fmt::format("unknown dtype '{}'", request.dtype));
  }
  auto targetKind = targetFromName(request.target);
  if (!targetKind)
    fieldError("target",
               fmt::format("unknown target '{}' (sm_80, sm_90a or sm_100a)", request.target));
  if (request.threads < 1 || request.threads > 1024)
    fieldError("threads",
               fmt::format("threads per CTA must be in [1, 1024], not {}", request.threads));
  if (request.devices < 1 || request.devices > 4096)
    fieldError("devices", fmt::format("devices must be in [1, 4096], not {}", request.devices));
  if (request.alloc < 0 || request.alloc > (int64_t{1} << 40))
    fieldError("alloc", fmt::format("alloc must be in [0, 2^40] elements, not {}", request.alloc));

  // The layout, with the parser's own diagnostics (line and column).
  llvm::SourceMgr sourceMgr;
  Diagnostics diag(sourceMgr, /*printImmediately=*/false);
  std::optional<LayoutSpec> spec;
  if (request.layout.find_first_not_of(" \t\r\n") == std::string::npos)
    fieldError("parse", "the layout is empty");
  else
    spec = parseLayoutText(request.layout, "<layout>", diag);
  for (const Diagnostic &d : diag.all()) {
    // The preset table's own complaints are about the arguments, not syntax.
    bool argument = false;
    for (const LayoutPreset &p : layoutPresets())
      argument |= d.message.rfind(std::string(p.name) + ": ", 0) == 0 ||
                  d.message.rfind("preset " + std::string(p.name) + " takes", 0) == 0;
    auto o = diagnostic(argument ? "arguments" : "parse",
                        d.kind == Diagnostic::Error     ? "error"
                        : d.kind == Diagnostic::Warning ? "warning"
                                                        : "note",
                        d.message);
    if (d.line) {
      o["line"] = static_cast<int64_t>(d.line);
      o["column"] = static_cast<int64_t>(d.column);
    }
    diagnostics.push_back(std::move(o));
  }
  if (diag.hasErrors())
    spec.reset();
  if (!spec || !integersOk || (!request.dtype.empty() && !dtype) || !targetKind ||
      request.threads < 1 || request.threads > 1024 || request.devices < 1 ||
      request.devices > 4096 || request.alloc < 0 || request.alloc > (int64_t{1} << 40))
    return finish(false);
  const Layout &layout = spec->layout;
  if (!dtype) {
    // The element type the layout was written for: a swizzle mode names it,
    // a preset implies it; else f32.
    if (layout.swizzle() && layout.swizzle()->shorthandBytes)
      dtype = layout.swizzle()->shorthandDtype;
    else if (!spec->preset.empty())
      dtype = dtypeFromName(presetDtype(spec->preset));
    if (!dtype)
      dtype = Dtype::f32;
  }
  doc["canonical"] = spec->str();
  doc["resolved"] = layout.str();
  if (!spec->preset.empty()) {
    doc["preset"] = spec->preset;
    if (const LayoutPreset *p = findLayoutPreset(spec->preset))
      doc["presetSummary"] = std::string(p->summary);
  }

  // The shape: as written, or the preset's own.
  std::vector<int64_t> shape;
  if (request.shape.find_first_not_of(" \t") == std::string::npos) {
    const LayoutPreset *p = spec->preset.empty() ? nullptr : findLayoutPreset(spec->preset);
    if (!p) {
      fieldError("shape", "give the logical shape, e.g. 8,16");
      return finish(false);
    }
    if (spec->terms || spec->presetArgs.size() != p->arity) {
      // Symbolic arguments (names a kernel binds later) have no shape yet.
      fieldError("layout", fmt::format("{} takes {} integer arguments here", spec->preset, p->arity));
      return finish(false);
    }
    shape = p->shape(spec->presetArgs);
  } else {
    std::string why;
    unsigned column = 0;
    auto parsed = parseShape(request.shape, &why, &column);
    if (!parsed) {
      auto o = diagnostic("shape", "error", why);
      o["line"] = 1;
      o["column"] = static_cast<int64_t>(column);
      diagnostics.push_back(std::move(o));
      return finish(false);
    }
    shape = std::move(*parsed);
  }
  json::Array shapeArray;
  for (int64_t e : shape)
    shapeArray.push_back(e);
  doc["shape"] = std::move(shapeArray);
  if (!layout.admits(shape)) {
    // The element count as text: a shape's product may pass int64.
    int64_t count = 1;
    bool overflow = false;
    for (int64_t e : shape)
      overflow = overflow || __builtin_mul_overflow(count, e, &count);
    std::string countText = overflow ? std::string("more than 2^63") : std::to_string(count);
    fieldError("shape", fmt::format("shape {} has {} elements but the layout places {} (the "
                                    "product of its shard extents)",
                                    shapeText(shape), countText, layout.size()));
    return finish(false);
  }
  if (layout.size() * layout.replicas() > kMaxDrawnOwners) {
    fieldError("size", fmt::format("{} elements x {} replicas is more than the {} owners the "
                                   "page draws; visualize a smaller tile",
                                   layout.size(), layout.replicas(), kMaxDrawnOwners));
    return finish(false);
  }

  auto scope = scopeFrom(request.scope, layout);
  if (!scope) {
    fieldError("scope",
               fmt::format("unknown scope '{}' (auto, reg, shared, tmem, global)", request.scope));
    return finish(false);
  }
  const TargetInfo &target = targetInfo(*targetKind);
  LaunchShape launch;
  launch.threads = request.threads;
  launch.devices = request.devices;

  // The axes shown, in reading order, and how far each reaches.
  std::vector<Axis> axes;
  for (Axis a : kReadingOrder)
    if (usesAxis(layout, a))
      axes.push_back(a);
  std::vector<int64_t> extents;
  for (Axis a : axes) {
#ifdef TILESCOPE_VIZ_HAS_VERIFIER
    BufferInfo info;
    info.scope = *scope;
    info.dtype = *dtype;
    info.memoryElements = request.alloc;
    extents.push_back(boundOf(a, info, shape, target, launch));
#else
    extents.push_back(a == Axis::m
                          ? (request.alloc ? request.alloc : memoryBound(*scope, target, *dtype))
                          : axisExtent(a, target, launch, 0));
#endif
  }

  // Which physical picture fits: registers (threads x registers), tensor
  // memory (TLane x TCol), shared memory (lines x banks), devices, or a plain
  // grid of whatever axes remain.
  std::string view;
  bool memoryOnly = !usesThreads(layout);
  if (usesAxis(layout, Axis::TLane) || usesAxis(layout, Axis::TCol))
    view = "tmem";
  else if (!memoryOnly)
    view = "register";
  else if (usesAxis(layout, Axis::pid))
    view = "device";
  else if (usesAxis(layout, Axis::m) && (*scope == MemScope::Shared || *scope == MemScope::Global))
    view = "shared";
  else
    view = "generic";
  json::Array rowAxes, colAxes, axisNames, extentArray;
  for (size_t k = 0; k < axes.size(); ++k) {
    Axis a = axes[k];
    axisNames.push_back(std::string(axisName(a)));
    extentArray.push_back(extents[k]);
    bool column = a == Axis::m || a == Axis::TCol || a == Axis::F || a == Axis::Bank;
    if (view == "tmem" && a == Axis::m)
      column = false;
    (column ? colAxes : rowAxes).push_back(std::string(axisName(a)));
  }
  doc["view"] = view;
  doc["scope"] = std::string(memScopeName(*scope));
  doc["dtype"] = std::string(dtypeName(*dtype));
  doc["bits"] = dtypeBits(*dtype);
  doc["target"] = std::string(target.name);
  doc["axes"] = std::move(axisNames);
  doc["extents"] = std::move(extentArray);
  doc["rowAxes"] = std::move(rowAxes);
  doc["colAxes"] = std::move(colAxes);
  doc["size"] = layout.size();
  doc["replicas"] = layout.replicas();
  json::Array weights;
  for (Axis a : axes)
    weights.push_back(threadWeight(a));
  doc["threadWeights"] = std::move(weights);
  doc["registers"] = registerNaming(spec->preset, dtypeBits(*dtype));
  doc["logicalNames"] = logicalNames(spec->preset, shape.size());

  // Every owner of every element, in one flat array (fast to parse for
  // 2^18 elements): element f's owners start at f * ownerStride, replica 0's
  // value on each axis, then replica 1's, ...
  // Banks matter for shared memory only.
  bool withBanks = usesAxis(layout, Axis::m) && *scope == MemScope::Shared && view != "register" &&
                   view != "tmem";
  std::vector<int64_t> owners, banks;
  owners.reserve(static_cast<size_t>(layout.size() * layout.replicas()) * axes.size());
  for (int64_t flat = 0; flat < layout.size(); ++flat) {
    layout.forEachOwner(flat, [&](const PhysCoord &c) {
      for (Axis a : axes)
        owners.push_back(c.get(a));
    });
    if (withBanks) {
      BankSlot slot = bankOf(layout.base(flat).get(Axis::m), *dtype);
      banks.push_back(slot.line);
      banks.push_back(slot.bank);
    }
  }
  doc["ownerStride"] = static_cast<int64_t>(axes.size()) * layout.replicas();
  auto fits = [](const std::vector<int64_t> &v) {
    return std::all_of(v.begin(), v.end(), [](int64_t x) {
      return x >= std::numeric_limits<int32_t>::min() && x <= std::numeric_limits<int32_t>::max();
    });
  };
  auto put = [&](const char *key, const std::vector<int64_t> &values,
                 std::vector<int32_t> *into) {
    if (into) {
      into->assign(values.begin(), values.end());
      doc[std::string(key) + "Count"] = static_cast<int64_t>(values.size());
      return;
    }
    json::Array array;
    array.reserve(values.size());
    for (int64_t v : values)
      array.push_back(v);
    doc[key] = std::move(array);
  };
  if (packed && fits(owners) && fits(banks)) {
    packed->used = true;
  } else {
    packed = nullptr;
  }
  put("owners", owners, packed ? &packed->owners : nullptr);
  if (withBanks) {
    put("banks", banks, packed ? &packed->banks : nullptr);
    analyzeAccess(request.access, layout, shape, *dtype, doc, diagnostics);
  }

  // Legality.
  if (*scope == MemScope::Tmem && !target.hasTensorMemory)
    fieldError("scope",
               fmt::format("{} has no tensor memory (TLane, TCol need sm_100a)", target.name));
#ifdef TILESCOPE_VIZ_HAS_VERIFIER
  {
    BufferInfo info;
    info.scope = *scope;
    info.dtype = *dtype;
    info.memoryElements = request.alloc;
    VerifyOptions options;
    options.timeoutMs = 3000;
    LayoutReport report = verifyLayout(layout, shape, info, target, launch, options);
    for (const LayoutViolation &v : report.violations) {
      auto d = diagnostic(violationKindName(v.kind), "error", v.message);
      json::Array elements;
      for (const auto &coords : v.witness.logical)
        if (auto flat = flattenIndex(shape, coords))
          elements.push_back(*flat);
      json::Object slot;
      for (Axis a : axes)
        if (v.witness.physical.has(a))
          slot[std::string(axisName(a))] = v.witness.physical.get(a);
      json::Object witness{{"elements", std::move(elements)}, {"slot", std::move(slot)}};
      if (v.witness.axis)
        witness["axis"] = std::string(axisName(*v.witness.axis));
      d["witness"] = std::move(witness);
      diagnostics.push_back(std::move(d));
    }
    for (const std::string &u : report.undecided)
      diagnostics.push_back(diagnostic("undecided", "warning", u));
    doc["checkedBy"] = "verifier";
  }
#else
  OwnChecks{layout, shape, axes, extents}.run(diagnostics);
  doc["checkedBy"] = "layout engine (enumeration)";
#endif
  return finish(true);
}

} // namespace

json::Value evaluate(const VizRequest &request) {
  return evaluateDocument(request, nullptr);
}

json::Value evaluate(const VizRequest &request, PackedArrays &packed) {
  packed = PackedArrays{};
  return evaluateDocument(request, &packed);
}

std::string packEvaluation(const json::Value &document, const PackedArrays &packed) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << document;
  os.flush();
  size_t head = 4 + text.size() + (4 - (4 + text.size()) % 4) % 4;
  std::string out(head + 4 * (packed.owners.size() + packed.banks.size()), ' ');
  auto word = [&](size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i)
      out[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
  };
  word(0, static_cast<uint32_t>(text.size()));
  std::memcpy(out.data() + 4, text.data(), text.size());
  size_t at = head;
  for (const std::vector<int32_t> *values : {&packed.owners, &packed.banks}) {
    if (values->empty())
      continue; // data() may be null, which memcpy must not get even for 0 bytes
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(out.data() + at, values->data(), 4 * values->size());
      at += 4 * values->size();
    } else {
      for (int32_t v : *values)
        word(std::exchange(at, at + 4), static_cast<uint32_t>(v));
    }
  }
  return out;
}

json::Value presetMenu() {
  json::Array items;
  // Hardware fragments at the sizes people draw them. Every preset of the
  // table appears; those not listed here come at their example arguments.
  struct Entry {
    std::string layout, dtype, target;
    int64_t threads;
  };
  std::vector<Entry> entries = {
      {"mma_m16n8k16_a()", "bf16", "sm_80", 32},     {"mma_m16n8k16_b()", "bf16", "sm_80", 32},
      {"mma_m16n8k16_c()", "f32", "sm_80", 32},      {"wgmma_acc(64, 64)", "f32", "sm_90a", 128},
      {"wgmma_acc(64, 128)", "f32", "sm_90a", 128},  {"ldmatrix_x4()", "bf16", "sm_90a", 32},
      {"tcgen05_32x32b(16)", "f32", "sm_100a", 128}, {"tcgen05_16x64b(4)", "f32", "sm_100a", 32},
      {"tmem_m128(64)", "f32", "sm_100a", 128},      {"tmem_m64(64)", "f32", "sm_100a", 128},
      {"tmem_m64_2cta(64)", "f32", "sm_100a", 128},
  };
  for (int bytes : {128, 64, 32})
    for (auto [bits, dtype] : {std::pair{16, "bf16"}, {8, "u8"}, {32, "f32"}})
      entries.push_back({fmt::format("smem_swizzle({}, {}, 32, {})", bytes, bits, bytes * 8 / bits),
                         dtype, "sm_90a", 128});
  for (const LayoutPreset &p : layoutPresets()) {
    bool listed = false;
    for (const Entry &e : entries)
      listed |= e.layout.compare(0, p.name.size() + 1, std::string(p.name) + "(") == 0;
    if (listed)
      continue;
    std::string call(p.name);
    call += "(";
    for (size_t i = 0; i < p.exampleArgs.size(); ++i)
      call += (i ? ", " : "") + std::to_string(p.exampleArgs[i]);
    bool tmem = p.name.find("tmem") != std::string_view::npos ||
                p.name.find("tcgen05") != std::string_view::npos;
    entries.push_back({call + ")", presetDtype(p.name), tmem ? "sm_100a" : "sm_90a", 128});
  }
  for (const Entry &e : entries) {
    // The title and shape come from the table, so the menu cannot disagree
    // with what the parser builds.
    std::string name = e.layout.substr(0, e.layout.find('('));
    const LayoutPreset *p = findLayoutPreset(name);
    if (!p)
      continue; // a preset this build does not have
    std::vector<int64_t> args;
    for (size_t at = e.layout.find('(') + 1; at < e.layout.size();) {
      size_t end = e.layout.find_first_of(",)", at);
      std::string digits = e.layout.substr(at, end - at);
      if (digits.find_first_of("0123456789") != std::string::npos)
        args.push_back(std::stoll(digits));
      at = end + 1;
    }
    if (args.size() != p->arity)
      continue;
    items.push_back(json::Object{{"group", "hardware"},
                                 {"title", std::string(p->summary)},
                                 {"layout", e.layout},
                                 {"shape", shapeText(p->shape(args))},
                                 {"dtype", e.dtype},
                                 {"target", e.target},
                                 {"threads", e.threads}});
  }
  // Literal layouts, one idea each (docs/layouts.md walks through them).
  struct Lesson {
    const char *title, *layout, *shape, *dtype, *target;
    int64_t threads, devices, alloc;
  };
  static constexpr Lesson kLessons[] = {
      {"rows on warps, columns on lanes", "S[(4,32):(1@warpid,1@laneid)]", "4,32", "f32", "sm_90a",
       128, 1, 0},
      {"row-major shared tile (bank conflicts on a column read)", "S[(32,64):(64,1)]", "32,64",
       "bf16", "sm_90a", 128, 1, 0},
      {"128B-swizzled shared tile", "swizzle(128B, bf16, S[(32,64):(64,1)])", "32,64", "bf16",
       "sm_90a", 128, 1, 0},
      {"padded shared tile (+2 elements per row)", "S[(32,64):(66,1)]", "32,64", "bf16", "sm_90a",
       128, 1, int64_t{32} * 66},
      {"a value broadcast to every lane (replica)", "S[8:1@m] + R[32:1@laneid]", "8", "f32",
       "sm_90a", 32, 1, 0},
      {"rows split over 4 devices", "S[(4,16):(1@pid,1@m)]", "4,16", "f32", "sm_90a", 128, 4, 0},
  };
  for (const Lesson &l : kLessons)
    items.push_back(json::Object{{"group", "lesson"},
                                 {"title", l.title},
                                 {"layout", l.layout},
                                 {"shape", l.shape},
                                 {"dtype", l.dtype},
                                 {"target", l.target},
                                 {"threads", l.threads},
                                 {"devices", l.devices},
                                 {"alloc", l.alloc}});
  return json::Value(std::move(items));
}

} // namespace tilescope::viz
