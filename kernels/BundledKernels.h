// The kernel library shipped inside the tools: each kernels/*.tile file by
// name and text. Depends on nothing.
#pragma once

#include <string_view>
#include <vector>

namespace tilescope {

struct BundledKernelFile {
  std::string_view name; // e.g. "gemm_bf16_sm90.tile"
  std::string_view text;
};

const std::vector<BundledKernelFile> &bundledKernelFiles();

// The text of the bundled file NAME ("gemm_bf16_sm90.tile"); empty when there is none.
std::string_view bundledKernelText(std::string_view name);

} // namespace tilescope
