#include "ir/Dtype.h"
#include "ir/DtypeNames.h"

#include <array>

namespace tilescope {

namespace {
constexpr std::array<DtypeInfo, 18> kDtypes = {{
    {Dtype::f64, "f64", 64, true, true},
    {Dtype::f32, "f32", 32, true, true},
    {Dtype::tf32, "tf32", 32, true, true},
    {Dtype::f16, "f16", 16, true, true},
    {Dtype::bf16, "bf16", 16, true, true},
    {Dtype::f8e4m3, "f8e4m3", 8, true, true},
    {Dtype::f8e5m2, "f8e5m2", 8, true, true},
    {Dtype::f6e2m3, "f6e2m3", 6, true, true},
    {Dtype::f6e3m2, "f6e3m2", 6, true, true},
    {Dtype::f4e2m1, "f4e2m1", 4, true, true},
    {Dtype::ue8m0, "ue8m0", 8, true, false},
    {Dtype::i8, "i8", 8, false, true},
    {Dtype::u8, "u8", 8, false, false},
    {Dtype::i16, "i16", 16, false, true},
    {Dtype::i32, "i32", 32, false, true},
    {Dtype::u32, "u32", 32, false, false},
    {Dtype::i64, "i64", 64, false, true},
    {Dtype::pred, "pred", 1, false, false},
}};
} // namespace

const DtypeInfo &dtypeInfo(Dtype d) {
  return kDtypes[static_cast<size_t>(d)];
}

std::optional<Dtype> dtypeFromName(std::string_view name) {
  for (const DtypeInfo &info : kDtypes)
    if (info.name == name)
      return info.dtype;
  return std::nullopt;
}

std::vector<std::string_view> dtypeNames() {
  std::vector<std::string_view> out;
  for (const DtypeInfo &info : kDtypes)
    out.push_back(info.name);
  return out;
}

} // namespace tilescope
