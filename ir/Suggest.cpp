#include "ir/Suggest.h"

#include <algorithm>

namespace tilescope {

size_t editDistance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme: i - 2, i - 1 and i.
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closestName(std::string_view word,
                                       const std::vector<std::string_view> &known) {
  size_t limit = std::clamp<size_t>(word.size() / 3, 1, 3);
  std::optional<std::string> best;
  size_t bestDistance = limit + 1;
  for (std::string_view name : known) {
    if (name == word)
      continue;
    size_t d = editDistance(word, name);
    // A name that shares nothing with the typed one (`y` for `A`) is no hint.
    if (d >= std::max(word.size(), name.size()))
      continue;
    if (d < bestDistance) {
      bestDistance = d;
      best = std::string(name);
    }
  }
  return best;
}

std::string didYouMean(std::string_view word, const std::vector<std::string_view> &known) {
  if (auto name = closestName(word, known))
    return "; did you mean '" + *name + "'?";
  return "";
}

} // namespace tilescope
