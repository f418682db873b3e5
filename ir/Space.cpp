#include "ir/Space.h"

#include "ir/Printer.h"

#include <limits>

namespace tilescope {

int64_t SpaceParam::size() const {
  if (kind != Kind::IntRange)
    return static_cast<int64_t>(values.size());
  if (step <= 0 || end <= begin)
    return 0;
  // (end - begin + step - 1) / step without overflow.
  __int128 n = (static_cast<__int128>(end) - begin + step - 1) / step;
  return static_cast<int64_t>(n);
}

Expr SpaceParam::value(int64_t i) const {
  if (kind != Kind::IntRange)
    return values[static_cast<size_t>(i)];
  return IntImm::make(begin + i * step, loc);
}

bool SpaceParam::contains(const Expr &v) const {
  if (!v)
    return false;
  if (kind == Kind::IntRange) {
    if (v->kind != ExprKind::IntImm)
      return false;
    int64_t x = as<IntImm>(v).value;
    return x >= begin && x < end && (x - begin) % step == 0;
  }
  for (const Expr &d : values)
    if (equal(d, v))
      return true;
  return false;
}

std::string SpaceParam::domainText() const {
  if (kind == Kind::IntRange)
    return std::to_string(begin) + " .. " + std::to_string(end) +
           (step == 1 ? "" : " step " + std::to_string(step));
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + print(values[i]);
  return out + "}";
}

const SpaceParam *Space::find(std::string_view name) const {
  for (const SpaceParam &p : params)
    if (p.name == name)
      return &p;
  return nullptr;
}

const NamedPoint *Space::findPoint(std::string_view name) const {
  for (const NamedPoint &p : points)
    if (p.name == name)
      return &p;
  return nullptr;
}

int64_t Space::size() const {
  int64_t n = 1;
  for (const SpaceParam &p : params) {
    int64_t s = p.size();
    if (s == 0)
      return 0;
    if (n > std::numeric_limits<int64_t>::max() / s)
      return std::numeric_limits<int64_t>::max();
    n *= s;
  }
  return n;
}

Point Space::pointAt(int64_t i) const {
  Point out(params.size());
  for (size_t j = params.size(); j-- > 0;) {
    int64_t s = params[j].size();
    out[j] = valueOf(params[j], params[j].value(i % s));
    i /= s;
  }
  return out;
}

bool Space::isEnumValue(std::string_view name) const {
  for (const SpaceParam &p : params)
    if (p.kind == SpaceParam::Kind::Enum)
      for (const Expr &v : p.values)
        if (as<Var>(v).name == name)
          return true;
  return false;
}

PointValue Space::valueOf(const SpaceParam &p, Expr v) const {
  bool atDefault = p.defaultValue && equal(p.defaultValue, v);
  return {p.name, std::move(v), atDefault};
}

std::string pointText(const Point &p) {
  std::string out;
  for (const PointValue &v : p)
    if (!v.atDefault)
      out += (out.empty() ? "" : ",") + v.name + "=" + print(v.value);
  return out;
}

bool equal(const Space &a, const Space &b) {
  if (a.params.size() != b.params.size() || a.points.size() != b.points.size())
    return false;
  for (size_t i = 0; i < a.params.size(); ++i) {
    const SpaceParam &x = a.params[i], &y = b.params[i];
    if (x.name != y.name || x.kind != y.kind || !equalLists(x.values, y.values) ||
        x.begin != y.begin || x.end != y.end || x.step != y.step ||
        !x.defaultValue != !y.defaultValue ||
        (x.defaultValue && !equal(x.defaultValue, y.defaultValue)))
      return false;
  }
  for (size_t i = 0; i < a.points.size(); ++i) {
    const NamedPoint &x = a.points[i], &y = b.points[i];
    if (x.name != y.name || x.values.size() != y.values.size())
      return false;
    for (size_t j = 0; j < x.values.size(); ++j)
      if (x.values[j].name != y.values[j].name || !equal(x.values[j].value, y.values[j].value))
        return false;
  }
  return true;
}

} // namespace tilescope
