#include "simulator/RaceShadow.h"

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
