#include "ir/ThreadIndex.h"

#include <fmt/format.h>

#include <bit>

namespace tilescope {

std::optional<ThreadIndexMap> threadIndexMap(BuiltinKind b) {
  switch (b) {
  case BuiltinKind::laneid:
    return ThreadIndexMap{1, kThreadsPerWarp};
  case BuiltinKind::warpid:
    return ThreadIndexMap{kThreadsPerWarp, 0};
  case BuiltinKind::wgid:
    return ThreadIndexMap{kThreadsPerWarpgroup, 0};
  case BuiltinKind::tid_in_wg:
    return ThreadIndexMap{1, kThreadsPerWarpgroup};
  case BuiltinKind::wid_in_wg:
    return ThreadIndexMap{kThreadsPerWarp, kThreadsPerWarpgroup / kThreadsPerWarp};
  case BuiltinKind::threadIdx_x:
    return ThreadIndexMap{1, 0};
  default:
    return std::nullopt;
  }
}

std::optional<ThreadIndexMap> threadIndexMap(Axis a) {
  switch (a) {
  case Axis::laneid:
    return threadIndexMap(BuiltinKind::laneid);
  case Axis::warpid:
    return threadIndexMap(BuiltinKind::warpid);
  case Axis::wgid:
    return threadIndexMap(BuiltinKind::wgid);
  case Axis::tid_in_wg:
    return threadIndexMap(BuiltinKind::tid_in_wg);
  case Axis::wid_in_wg:
    return threadIndexMap(BuiltinKind::wid_in_wg);
  case Axis::tx:
    return threadIndexMap(BuiltinKind::threadIdx_x);
  default:
    return std::nullopt;
  }
}

int64_t threadIndexValue(ThreadIndexMap m, int64_t t) {
  int64_t v = t / m.divisor;
  return m.modulus ? v % m.modulus : v;
}

std::string threadIndexCuda(ThreadIndexMap m, std::string_view t) {
  std::string out(t);
  if (m.divisor > 1)
    out = "(" + out + " >> " + std::to_string(std::countr_zero(uint64_t(m.divisor))) + ")";
  if (m.modulus)
    out = "(" + out + " & " + std::to_string(m.modulus - 1) + ")";
  return out;
}

bool isThreadBuiltin(BuiltinKind b) {
  return threadIndexMap(b).has_value();
}

int64_t threadBuiltinValue(BuiltinKind b, int64_t tx) {
  auto m = threadIndexMap(b);
  return m ? threadIndexValue(*m, tx) : 0;
}

bool isWarpUniformBuiltin(BuiltinKind b) {
  auto m = threadIndexMap(b);
  return !m || m->divisor % kThreadsPerWarp == 0;
}

int64_t warpOf(int64_t t) {
  return threadBuiltinValue(BuiltinKind::warpid, t);
}

int64_t laneOf(int64_t t) {
  return threadBuiltinValue(BuiltinKind::laneid, t);
}

int64_t warpgroupOf(int64_t t) {
  return threadBuiltinValue(BuiltinKind::wgid, t);
}

std::string threadName(int64_t t, std::string_view inside) {
  return fmt::format("thread {} (warp {}, lane {}{})", t, warpOf(t), laneOf(t), inside);
}

} // namespace tilescope
