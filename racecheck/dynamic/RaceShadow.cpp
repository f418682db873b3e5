#include "racecheck/dynamic/RaceShadow.h"

#include <algorithm>
#include <bit>

namespace tilescope::sim {

int32_t ReadSets::create(const Epoch &a, const Epoch &b) {
  int32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    index = static_cast<int32_t>(sets_.size());
    sets_.emplace_back();
  }
  sets_[index] = {a, b};
  return index;
}

void ReadSets::add(int32_t index, const Epoch &read) {
  std::vector<Epoch> &set = sets_[index];
  Epoch &last = set.back();
  if (last.agent == read.agent && last.group == read.group) {
    last = read;
    return;
  }
  set.push_back(read);
  if (set.size() < 64 || !std::has_single_bit(set.size()))
    return;
  // Keep each reader's latest read (its times only grow).
  auto key = [](const Epoch &e) { return std::pair(e.group, e.agent); };
  std::stable_sort(set.begin(), set.end(),
                   [&](const Epoch &a, const Epoch &b) { return key(a) < key(b); });
  std::vector<Epoch> kept;
  for (size_t i = 0; i < set.size(); ++i)
    if (i + 1 == set.size() || key(set[i + 1]) != key(set[i]))
      kept.push_back(set[i]);
  set = std::move(kept);
}

void ReadSets::release(int32_t index) {
  sets_[index].clear();
  free_.push_back(index);
}

void ReadSets::clear() {
  sets_.clear();
  free_.clear();
}

ShadowCell &PagedShadow::at(int object, int64_t element) {
  if (objects_.size() <= static_cast<size_t>(object))
    objects_.resize(object + 1);
  auto &pages = objects_[object];
  size_t page = static_cast<size_t>(element >> kPageBits);
  if (pages.size() <= page)
    pages.resize(page + 1);
  if (!pages[page])
    pages[page] = std::make_unique<Page>();
  return (*pages[page])[static_cast<size_t>(element & ((int64_t{1} << kPageBits) - 1))];
}

} // namespace tilescope::sim
