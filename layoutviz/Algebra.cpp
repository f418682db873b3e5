#include "layoutviz/Algebra.h"

#include "ir/LayoutAlgebra.h"
#include "ir/LayoutText.h"

#include <fmt/format.h>
#include <llvm/Support/SourceMgr.h>

namespace tilescope::viz {

namespace json = llvm::json;

namespace {
constexpr int64_t kMaxShown = 4096;

// `laneid 3 warpid 1` per flat index, replica 0: what the panel labels.
json::Array ownersOf(const Layout &l) {
  json::Array out;
  for (int64_t f = 0; f < std::min(l.size(), kMaxShown); ++f) {
    PhysCoord c = l.base(f);
    json::Object o;
    for (size_t i = 0; i < kNumAxes; ++i)
      if (c.has(static_cast<Axis>(i)))
        o[std::string(axisName(static_cast<Axis>(i)))] = c.value[i];
    out.push_back(std::move(o));
  }
  return out;
}
} // namespace

json::Value evaluateAlgebra(const AlgebraRequest &request) {
  json::Object doc{
      {"request",
       json::Object{{"layout", request.layout}, {"op", request.op}, {"operand", request.operand}}}};
  auto error = [&](const std::string &kind, const std::string &message, int64_t column = 0) {
    json::Object d{{"kind", kind}, {"severity", "error"}, {"message", message}};
    if (column)
      d["column"] = column;
    doc["ok"] = false;
    doc["diagnostics"] = json::Array{std::move(d)};
    return json::Value(std::move(doc));
  };
  llvm::SourceMgr sm;
  Diagnostics diag(sm, false);
  auto a = parseLayoutText(request.layout, "<layout>", diag);
  if (!a || diag.hasErrors())
    return error("layout",
                 diag.all().empty() ? "the layout does not parse" : diag.all().front().message);
  std::optional<Layout> result;
  std::string why;
  std::vector<int64_t> shape;
  if (request.op == "complement") {
    const std::string &t = request.operand;
    if (t.empty() || t.size() > 12 || t.find_first_not_of("0123456789") != std::string::npos ||
        std::stoll(t) < 1)
      return error("operand", fmt::format("expected a positive integer, not '{}'", t), 1);
    result = complement(a->layout, std::stoll(t), &why);
  } else if (request.op == "compose" || request.op == "divide") {
    auto b = parseLayoutText(request.operand, "<operand>", diag);
    if (!b || diag.hasErrors())
      return error("operand", diag.all().front().message,
                   static_cast<int64_t>(diag.all().front().column));
    if (request.op == "compose") {
      result = compose(a->layout, b->layout, &why);
      for (const Iter &it : b->layout.shard())
        shape.push_back(it.extent);
    } else {
      result = logicalDivide(a->layout, b->layout, &why);
      shape = {a->layout.size() / std::max<int64_t>(b->layout.size(), 1), b->layout.size()};
    }
  } else {
    return error("op",
                 fmt::format("unknown operation '{}' (compose, complement, divide)", request.op));
  }
  if (!result)
    return error("algebra", why);
  if (shape.empty())
    shape = {result->size()};
  json::Array shapeArray;
  for (int64_t e : shape)
    shapeArray.push_back(e);
  doc["ok"] = true;
  doc["before"] = a->layout.str();
  doc["result"] = result->str();
  doc["shape"] = std::move(shapeArray);
  doc["beforeOwners"] = ownersOf(a->layout);
  doc["afterOwners"] = ownersOf(*result);
  doc["diagnostics"] = json::Array{};
  return json::Value(std::move(doc));
}

} // namespace tilescope::viz
