#include "layoutviz/Access.h"

#include "ir/BankModel.h"

#include <fmt/format.h>

#include <algorithm>

namespace tilescope::viz {

namespace json = llvm::json;

bool parseIntegerField(const std::string &text, const std::string &what, int64_t lo, int64_t hi,
                       int64_t *value, std::string *message) {
  size_t b = text.find_first_not_of(" \t"), e = text.find_last_not_of(" \t");
  std::string t = b == std::string::npos ? "" : text.substr(b, e - b + 1);
  size_t digits = t.size() > 0 && t[0] == '-' ? 1 : 0;
  bool ok = t.size() > digits && t.size() <= 16 &&
            t.find_first_not_of("0123456789", digits) == std::string::npos;
  if (!ok) {
    *message = fmt::format("expected an integer, not '{}'", t);
    return false;
  }
  int64_t v = std::stoll(t);
  if (v < lo || v > hi) {
    *message = fmt::format("{} must be in [{}, {}], not {}", what, lo,
                           hi == (int64_t{1} << 40) ? std::string("2^40") : std::to_string(hi), v);
    return false;
  }
  *value = v;
  return true;
}

namespace {

std::string formatLogical(const std::vector<int64_t> &index) {
  std::string out = "(";
  for (size_t i = 0; i < index.size(); ++i)
    out += (i ? ", " : "") + std::to_string(index[i]);
  return out + ")";
}

json::Object accessError(const std::string &message, std::optional<size_t> column = {}) {
  json::Object d{{"kind", "access"}, {"severity", "error"}, {"message", message}};
  if (column) {
    d["line"] = 1;
    d["column"] = static_cast<int64_t>(*column + 1);
  }
  return d;
}

// `r,c; r,c; ...`: one coordinate per thread, thread 0 first. Every entry
// is checked; the first bad one is reported with its column.
bool parseCustom(const std::string &text, const std::vector<int64_t> &shape,
                 std::vector<int64_t> *starts, json::Array &diagnostics) {
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(';', pos);
    if (end == std::string::npos)
      end = text.size();
    std::string entry = text.substr(pos, end - pos);
    if (entry.find_first_not_of(" \t") != std::string::npos) {
      if (starts->size() == 32) {
        diagnostics.push_back(accessError("a warp has 32 threads: at most 32 coordinates", pos));
        return false;
      }
      std::vector<int64_t> index;
      size_t at = 0;
      while (at < entry.size()) {
        size_t s = entry.find_first_not_of(" \t,", at);
        if (s == std::string::npos)
          break;
        size_t f = entry.find_first_of(" \t,", s);
        if (f == std::string::npos)
          f = entry.size();
        std::string word = entry.substr(s, f - s), why;
        int64_t v = 0;
        if (!parseIntegerField(word, "an index", 0, int64_t{1} << 40, &v, &why)) {
          diagnostics.push_back(accessError(why, pos + s));
          return false;
        }
        index.push_back(v);
        at = f;
      }
      size_t lead = pos + entry.find_first_not_of(" \t");
      if (index.size() != shape.size()) {
        diagnostics.push_back(
            accessError(fmt::format("thread {}: {} indices, but the tile has rank {}",
                                    starts->size(), index.size(), shape.size()),
                        lead));
        return false;
      }
      auto flat = flattenIndex(shape, index);
      if (!flat) {
        diagnostics.push_back(
            accessError(fmt::format("thread {}: ({}) is outside the tile", starts->size(),
                                    entry.substr(entry.find_first_not_of(" \t"))),
                        lead));
        return false;
      }
      starts->push_back(*flat);
    }
    pos = end + 1;
  }
  if (starts->empty()) {
    diagnostics.push_back(accessError("give one coordinate per thread, e.g. 0,0; 1,0; 2,0", 0));
    return false;
  }
  return true;
}

} // namespace

void analyzeAccess(const AccessRequest &request, const Layout &layout,
                   const std::vector<int64_t> &shape, Dtype dtype, json::Object &doc,
                   json::Array &diagnostics) {
  int bits = std::max(dtypeBits(dtype), 1);
  int64_t cols = shape.empty() ? 1 : shape.back(),
          rows = layout.size() / std::max<int64_t>(cols, 1);
  int64_t vector = 1, index = 0;
  std::string why;
  if (!parseIntegerField(request.vector, "elements per thread", 1, 16, &vector, &why)) {
    diagnostics.push_back(accessError("elements per thread: " + why));
    return;
  }
  int64_t bytes = vector * bits / 8;
  if (bytes > 16 || (vector & (vector - 1)) != 0) {
    diagnostics.push_back(accessError(fmt::format(
        "one shared-memory access moves 1, 2, 4, 8 or 16 bytes per thread; {} x {} is {} bytes",
        vector, dtypeName(dtype), vector * bits / 8.0)));
    return;
  }
  std::vector<int64_t> starts; // first element of each thread, -1: idle
  if (request.mode == "custom") {
    if (!parseCustom(request.custom, shape, &starts, diagnostics))
      return;
  } else if (request.mode == "column" || request.mode == "row") {
    bool column = request.mode == "column";
    if (!parseIntegerField(request.index, column ? "the column" : "the row", 0,
                           (column ? cols : rows) - 1, &index, &why)) {
      diagnostics.push_back(accessError(why));
      return;
    }
    for (int64_t t = 0; t < 32; ++t) {
      int64_t i = column ? t : index, j = column ? index : t * vector;
      starts.push_back(i < rows && j < cols ? i * cols + j : -1);
    }
  } else {
    diagnostics.push_back(
        accessError(fmt::format("unknown access '{}' (column, row or custom)", request.mode)));
    return;
  }
  // Each thread's elements; a vector access must be whole, contiguous and
  // aligned in memory, or it is not one instruction.
  std::vector<ThreadAccess> threads;
  json::Array threadArray;
  for (size_t t = 0; t < starts.size(); ++t) {
    ThreadAccess a{static_cast<int64_t>(t), {}};
    if (starts[t] >= 0) {
      if (starts[t] % cols + vector > cols) {
        diagnostics.push_back(accessError(
            fmt::format("thread {} would read past the end of row {}", t, starts[t] / cols)));
        return;
      }
      int64_t m0 = layout.base(starts[t]).get(Axis::m);
      for (int64_t k = 0; k < vector; ++k) {
        if (vector > 1 && layout.base(starts[t] + k).get(Axis::m) != m0 + k) {
          auto at = unflattenIndex(shape, starts[t] + k);
          diagnostics.push_back(accessError(fmt::format(
              "thread {}: element {} is not next to the one before it in shared memory, so {} "
              "elements are not one vector access",
              t, formatLogical(at), vector)));
          return;
        }
        a.flats.push_back(starts[t] + k);
      }
      if (bytes > 1 && (m0 * bits / 8) % bytes != 0) {
        diagnostics.push_back(accessError(fmt::format(
            "thread {}: a {}-byte access must be {}-byte aligned, but {} starts at "
            "byte {}",
            t, bytes, bytes, formatLogical(unflattenIndex(shape, starts[t])), m0 * bits / 8)));
        return;
      }
    }
    json::Array flats;
    for (int64_t f : a.flats)
      flats.push_back(f);
    threadArray.push_back(std::move(flats));
    threads.push_back(std::move(a));
  }
  std::vector<BankPhase> phases = costRequest(threads, std::max<int64_t>(bytes, 1), layout, bits);
  json::Array phaseArray;
  int64_t total = 0, ideal = 0, words = 0;
  for (const BankPhase &p : phases) {
    json::Array ts, counts;
    for (int64_t t : p.threads)
      ts.push_back(t);
    for (int64_t c : p.words) {
      counts.push_back(c);
      words += c;
    }
    total += p.wavefronts;
    ideal += p.wavefronts > 0 ? 1 : 0;
    phaseArray.push_back(json::Object{
        {"threads", std::move(ts)}, {"words", std::move(counts)}, {"wavefronts", p.wavefronts}});
  }
  doc["bankAccess"] = json::Object{{"mode", request.mode},
                                   {"vector", vector},
                                   {"bytes", bytes},
                                   {"threadsPerPhase", threadsPerPhase(bytes)},
                                   {"threads", std::move(threadArray)},
                                   {"phases", std::move(phaseArray)},
                                   {"wavefronts", total},
                                   {"ideal", ideal},
                                   {"distinctWords", words}};
}

} // namespace tilescope::viz
