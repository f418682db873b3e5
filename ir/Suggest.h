// "Did you mean": the known name closest to one that is not known, so that a
// typo such as `mbarrier.wiat` is answered with `mbarrier.wait`. Closeness is
// the optimal-string-alignment distance (insertions, deletions, substitutions
// and swaps of two neighbouring characters, each costing 1); a name is offered
// only when it is within a third of the typed name's length (at least 1, at
// most 3 edits) and shares at least one character with it in place (a
// one-letter name is never answered with another one-letter name), the first
// of equally close ones.
// Depends on the standard library only.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

// Optimal-string-alignment edit distance between `a` and `b`.
size_t editDistance(std::string_view a, std::string_view b);

// The closest of `known` to `word`, when one is close enough (see above);
// never `word` itself.
std::optional<std::string> closestName(std::string_view word,
                                       const std::vector<std::string_view> &known);

// "; did you mean 'NAME'?" for the closest of `known`, or "" when none is close.
std::string didYouMean(std::string_view word, const std::vector<std::string_view> &known);

} // namespace tilescope
