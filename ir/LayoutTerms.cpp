#include "ir/LayoutPresets.h"
#include "ir/LayoutText.h"
#include "ir/Printer.h"

#include <fmt/format.h>

namespace tilescope {

namespace {

// A number as a layout's text needs it: a sum in parentheses, since `+`
// joins the parts of a layout.
std::string number(const Expr &e) {
  std::string s = print(e);
  if (e->kind == ExprKind::Binary && binaryOpPrecedence(as<Binary>(e).op) < 6)
    return "(" + s + ")";
  return s;
}

std::string iterList(const char *tag, const std::vector<LayoutTerms::IterTerms> &iters) {
  std::string extents, strides;
  for (size_t i = 0; i < iters.size(); ++i) {
    const char *sep = i ? "," : "";
    extents += sep + number(iters[i].extent);
    strides += sep + number(iters[i].stride) +
               (iters[i].axis == Axis::m ? "" : "@" + std::string(axisName(iters[i].axis)));
  }
  if (iters.size() == 1)
    return fmt::format("{}[{}:{}]", tag, extents, strides);
  return fmt::format("{}[({}):({})]", tag, extents, strides);
}

bool equalIters(const std::vector<LayoutTerms::IterTerms> &a,
                const std::vector<LayoutTerms::IterTerms> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].axis != b[i].axis || !equal(a[i].extent, b[i].extent) ||
        !equal(a[i].stride, b[i].stride))
      return false;
  return true;
}

} // namespace

std::string LayoutTerms::str(const std::string &preset) const {
  if (!preset.empty()) {
    std::string out = preset + "(";
    for (size_t i = 0; i < presetArgs.size(); ++i)
      out += (i ? ", " : "") + print(presetArgs[i]);
    return out + ")";
  }
  std::string body = iterList("S", shard);
  if (!replica.empty())
    body += " + " + iterList("R", replica);
  for (const auto &[axis, v] : offset)
    body += fmt::format(" + {}@{}", number(v), axisName(axis));
  if (!swizzle)
    return body;
  const Swizzle &s = *swizzle;
  if (s.shorthandBytes)
    return fmt::format("swizzle({}B, {}, {})", s.shorthandBytes, dtypeName(s.shorthandDtype), body);
  return fmt::format("swizzle({}, {}, {}, {})", s.bitsKept, s.bitsXored, s.shift, body);
}

bool LayoutTerms::operator==(const LayoutTerms &o) const {
  if (!equalIters(shard, o.shard) || !equalIters(replica, o.replica) || swizzle != o.swizzle ||
      !equalLists(presetArgs, o.presetArgs) || offset.size() != o.offset.size())
    return false;
  for (size_t i = 0; i < offset.size(); ++i)
    if (offset[i].first != o.offset[i].first || !equal(offset[i].second, o.offset[i].second))
      return false;
  return true;
}

std::optional<Layout> buildLayout(const LayoutTerms &terms, const LayoutNumberValue &value,
                                  std::string *why) {
  bool missing = false;
  auto get = [&](const Expr &e) -> int64_t {
    auto v = value(e);
    if (!v && !missing) {
      missing = true;
      *why = fmt::format("the layout number '{}' is not a constant", print(e));
    }
    return v.value_or(0);
  };
  std::vector<Iter> shard, replica;
  for (const auto &it : terms.shard)
    shard.push_back({get(it.extent), get(it.stride), it.axis});
  for (const auto &it : terms.replica)
    replica.push_back({get(it.extent), get(it.stride), it.axis});
  std::vector<AxisOffset> offset;
  for (const auto &[axis, v] : terms.offset)
    offset.push_back({axis, get(v)});
  if (missing)
    return std::nullopt;
  return Layout::make(std::move(shard), std::move(replica), std::move(offset), terms.swizzle, why);
}

std::optional<LayoutSpec> resolveLayout(const LayoutSpec &spec, const LayoutNumberValue &value,
                                        std::string *why) {
  if (!spec.terms)
    return spec;
  LayoutSpec out;
  out.loc = spec.loc;
  out.preset = spec.preset;
  if (spec.preset.empty()) {
    auto l = buildLayout(*spec.terms, value, why);
    if (!l)
      return std::nullopt;
    out.layout = std::move(*l);
    return out;
  }
  for (const Expr &e : spec.terms->presetArgs) {
    auto v = value(e);
    if (!v) {
      *why = fmt::format("the preset argument '{}' is not a constant", print(e));
      return std::nullopt;
    }
    out.presetArgs.push_back(*v);
  }
  const LayoutPreset *preset = findLayoutPreset(spec.preset);
  std::string presetWhy;
  auto l = preset ? preset->build(out.presetArgs, &presetWhy) : std::nullopt;
  if (!l) {
    *why = fmt::format("{}: {}", spec.preset, presetWhy);
    return std::nullopt;
  }
  out.layout = std::move(*l);
  return out;
}

} // namespace tilescope
