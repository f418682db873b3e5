// Fuzz target: layout text, evaluation and the inverse query. Any text must
// parse to a layout or to diagnostics; a layout must print as text that parses
// back to it, and every owner of a logical element must have that element
// among its preimages (inverse(apply(x)) contains x; where the layout is
// invertible that is inverse(apply(x)) == x).
#include "fuzz/FuzzSupport.h"
#include "ir/LayoutText.h"

#include <algorithm>

using namespace tilescope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096)
    return 0;
  std::string text(reinterpret_cast<const char *>(data), size);
  fuzz::QuietDiagnostics q;
  std::optional<LayoutSpec> spec = parseLayoutText(text, "layout", q.diag);
  if (!spec)
    return 0;
  if (spec->terms) {
    // A layout with symbolic terms (names bound later by a kernel's
    // parameters) has no concrete layout yet: its text must round-trip.
    fuzz::QuietDiagnostics q2;
    std::optional<LayoutSpec> again = parseLayoutText(spec->str(), "printed", q2.diag);
    fuzz::require(again && again->str() == spec->str(), "str(parse(str(terms))) == str(terms)",
                  spec->str());
    return 0;
  }
  const Layout &layout = spec->layout;
  fuzz::QuietDiagnostics q2;
  std::optional<LayoutSpec> again = parseLayoutText(layout.str(), "printed", q2.diag);
  fuzz::require(again && again->layout == layout, "parse(str(layout)) == layout", layout.str());
  // 64 elements spread over the layout, each with at most 64 owners, and at
  // most 64 preimages asked for: enough to reach every iter, bounded in time
  // (asking for 4096 preimages of each owner of an aliasing layout such as
  // S[(430, 4, 64):(64, 8192, 0)] took 13 s an input).
  if (layout.replicas() > 64)
    return 0;
  int64_t n = layout.size(), step = std::max<int64_t>(1, n / 64);
  constexpr size_t kLimit = 64;
  for (int64_t flat = 0; flat < n; flat += step)
    for (const PhysCoord &owner : layout.owners(flat)) {
      std::vector<int64_t> pre = layout.preimages(owner, kLimit);
      if (pre.size() >= kLimit)
        continue; // more aliases than asked for: x may be past the limit
      fuzz::require(std::find(pre.begin(), pre.end(), flat) != pre.end(),
                    "inverse(apply(x)) contains x",
                    layout.str() + " at element " + std::to_string(flat));
      if (layout.replicas() == 1 && pre.size() == 1)
        fuzz::require(pre[0] == flat, "inverse(apply(x)) == x", layout.str());
    }
  return 0;
}
