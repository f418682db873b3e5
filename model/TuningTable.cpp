#include "model/TuningTable.h"

#include "model/MachineData.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>

#include <algorithm>
#include <cmath>

namespace tilescope::model {

namespace json = llvm::json;

std::optional<TuningTable> parseTuningTable(std::string_view text, std::string *error) {
  auto parsed = json::parse(llvm::StringRef(text.data(), text.size()));
  if (!parsed) {
    *error = llvm::toString(parsed.takeError());
    return std::nullopt;
  }
  const json::Object *o = parsed->getAsObject();
  const json::Array *entries = o ? o->getArray("entries") : nullptr;
  if (!o || !entries || !o->getString("kernel")) {
    *error = "a tuning table is a JSON object with \"kernel\" and \"entries\"";
    return std::nullopt;
  }
  TuningTable t;
  t.kernel = o->getString("kernel")->str();
  if (auto s = o->getString("target"))
    t.target = s->str();
  if (auto s = o->getString("machine"))
    t.machine = s->str();
  if (auto s = o->getString("note"))
    t.note = s->str();
  t.measured = o->getBoolean("measured").getValueOr(false);
  for (size_t i = 0; i < entries->size(); ++i) {
    const json::Object *e = (*entries)[i].getAsObject();
    const json::Object *shape = e ? e->getObject("shape") : nullptr;
    if (!shape || shape->empty()) {
      *error = "entry " + std::to_string(i) + " needs a \"shape\" object of sizes";
      return std::nullopt;
    }
    TableEntry entry;
    for (const auto &[name, value] : *shape) {
      auto v = value.getAsInteger();
      if (!v || *v < 1) {
        *error =
            "entry " + std::to_string(i) + ": size '" + name.str() + "' is not a positive integer";
        return std::nullopt;
      }
      entry.shape[name.str()] = *v;
    }
    if (auto s = e->getString("point"))
      entry.point = s->str();
    if (auto s = e->getString("hash"))
      entry.hash = s->str();
    if (auto s = e->getString("verdict"))
      entry.verdict = s->str();
    if (auto s = e->getString("reason"))
      entry.reason = s->str();
    entry.predictedUs = e->getNumber("predicted_us").getValueOr(0);
    entry.measuredUs = e->getNumber("measured_us").getValueOr(0);
    if (const json::Array *ef = e->getArray("evict_first"))
      for (const json::Value &v : *ef) {
        auto s = v.getAsString();
        if (!s || s->empty()) {
          *error = "entry " + std::to_string(i) + ": \"evict_first\" holds tensor names";
          return std::nullopt;
        }
        entry.evictFirst.push_back(s->str());
      }
    t.entries.push_back(std::move(entry));
  }
  return t;
}

std::string tuningTableJson(const TuningTable &t) {
  json::Array entries;
  for (const TableEntry &e : t.entries) {
    json::Object shape;
    for (const auto &[name, v] : e.shape)
      shape[name] = v;
    json::Object o{{"shape", std::move(shape)}};
    if (e.point.empty()) {
      o["point"] = nullptr;
      o["reason"] = e.reason;
    } else {
      o["point"] = e.point;
      o["hash"] = e.hash;
      o["predicted_us"] = std::round(e.predictedUs * 100) / 100;
      if (e.measuredUs > 0)
        o["measured_us"] = std::round(e.measuredUs * 100) / 100;
      o["verdict"] = e.verdict;
      if (!e.evictFirst.empty()) {
        json::Array ef;
        for (const std::string &n : e.evictFirst)
          ef.push_back(n);
        o["evict_first"] = std::move(ef);
      }
    }
    entries.push_back(std::move(o));
  }
  json::Object out{{"kernel", t.kernel},     {"target", t.target}, {"machine", t.machine},
                   {"measured", t.measured}, {"note", t.note},     {"entries", std::move(entries)}};
  return llvm::formatv("{0:2}", json::Value(std::move(out))).str() + "\n";
}

std::vector<const TableEntry *> nearestEntries(const TuningTable &table,
                                               const std::map<std::string, int64_t> &sizes) {
  std::vector<std::pair<double, const TableEntry *>> ranked;
  for (const TableEntry &e : table.entries) {
    if (e.point.empty())
      continue;
    double d = 0;
    for (const auto &[name, centre] : e.shape)
      if (auto it = sizes.find(name); it != sizes.end() && it->second > 0)
        d += std::fabs(std::log2(static_cast<double>(it->second) / static_cast<double>(centre)));
    ranked.emplace_back(d, &e);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  std::vector<const TableEntry *> out;
  for (const auto &[d, e] : ranked)
    out.push_back(e);
  return out;
}

std::optional<TuningTable> bundledTuningTable(std::string_view kernel, std::string_view target,
                                              std::string *error) {
  for (const BundledTable &b : bundledTables()) {
    auto t = parseTuningTable(b.text, error);
    if (t && t->kernel == kernel && t->target == target)
      return t;
  }
  *error = "no tuning table is shipped for kernel '" + std::string(kernel) + "' on '" +
           std::string(target) + "' (make one with `tilescope tune ... -o FILE` and pass --table)";
  return std::nullopt;
}

} // namespace tilescope::model
