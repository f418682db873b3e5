// Element types of the tile IR. One table (Dtype.cpp) gives every dtype its
// name, width and class; everything else asks it. Depends on nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tilescope {

enum class Dtype : uint8_t {
  f64,
  f32,
  tf32,
  f16,
  bf16,
  f8e4m3,
  f8e5m2,
  f6e2m3,
  f6e3m2,
  f4e2m1,
  ue8m0,
  i8,
  u8,
  i16,
  i32,
  u32,
  i64,
  pred,
};

struct DtypeInfo {
  Dtype dtype;
  std::string_view name;
  int bits;      // storage width in bits (tf32 is stored in 32)
  bool isFloat;  // floating point (ue8m0 counts: it scales floats)
  bool isSigned; // for integers
};

const DtypeInfo &dtypeInfo(Dtype d);
std::optional<Dtype> dtypeFromName(std::string_view name);
inline std::string_view dtypeName(Dtype d) {
  return dtypeInfo(d).name;
}
inline int dtypeBits(Dtype d) {
  return dtypeInfo(d).bits;
}
inline bool isFloat(Dtype d) {
  return dtypeInfo(d).isFloat;
}
inline bool isInteger(Dtype d) {
  return !dtypeInfo(d).isFloat && d != Dtype::pred;
}

} // namespace tilescope
