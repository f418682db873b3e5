// Named layouts of real hardware fragments (mma.sync, wgmma, ldmatrix,
// tcgen05, shared-memory swizzles), usable anywhere a layout is written:
// `layout(wgmma_acc(64, 128))`. One table, read by the parser, the verifier,
// and the visualizer's preset list.
#pragma once

#include "ir/Layout.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

struct LayoutPreset {
  std::string_view name;
  std::string_view params;  // e.g. "M, N", for help text
  std::string_view summary; // one line: what hardware fragment it is
  size_t arity;
  std::vector<int64_t> exampleArgs;
  // The layout for `args`, or nothing with `error` set.
  std::function<std::optional<Layout>(const std::vector<int64_t> &args, std::string *error)> build;
  // The logical shape the fragment covers for `args`.
  std::function<std::vector<int64_t>(const std::vector<int64_t> &args)> shape;
};

const std::vector<LayoutPreset> &layoutPresets();
const LayoutPreset *findLayoutPreset(std::string_view name);

} // namespace tilescope
