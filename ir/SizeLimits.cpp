#include "ir/SizeLimits.h"

#include <fmt/format.h>

#include <climits>

namespace tilescope {

namespace {
int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}
// Bytes of `count` elements of `bits` each, rounded up.
int64_t bytesOf(int64_t count, int bits) {
  int64_t b = saturatingMul(count, bits);
  return b == INT64_MAX ? b : (b + 7) / 8;
}
std::string kib(int64_t bytes) {
  return bytes % 1024 == 0 ? fmt::format("{} KiB", bytes / 1024) : fmt::format("{} bytes", bytes);
}
} // namespace

std::optional<int64_t> checkedProduct(const std::vector<int64_t> &dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(p, d, &p))
      return std::nullopt;
  return p;
}

int64_t layoutAxisReach(const Layout &layout, Axis axis) {
  int64_t last = 0;
  bool placed = false;
  auto add = [&](const std::vector<Iter> &iters) {
    for (const Iter &it : iters)
      if (it.axis == axis) {
        placed = true;
        last = saturatingAdd(last, saturatingMul(it.extent - 1, it.stride));
      }
  };
  add(layout.shard());
  add(layout.replica());
  for (const AxisOffset &o : layout.offset())
    if (o.axis == axis) {
      placed = true;
      last = saturatingAdd(last, o.value);
    }
  if (!placed)
    return 0;
  int64_t reach = saturatingAdd(last, 1);
  // The swizzle rewrites bits [M, M + B) of m from higher ones: the reach
  // rounds up to a multiple of 2^(M + B).
  if (const auto &sw = layout.swizzle(); axis == Axis::m && sw && reach < (int64_t{1} << 56)) {
    int64_t unit = int64_t{1} << (sw->bitsKept + sw->bitsXored);
    reach = (reach + unit - 1) / unit * unit;
  }
  return reach;
}

std::optional<BufferFootprint> bufferFootprint(MemScope scope, Dtype dtype,
                                               const std::vector<int64_t> &shape,
                                               const Layout *layout) {
  auto elements = checkedProduct(shape);
  if (!elements)
    return std::nullopt;
  BufferFootprint f;
  f.elements = *elements;
  int bits = dtypeBits(dtype);
  switch (scope) {
  case MemScope::Global:
    break;
  case MemScope::Shared: {
    int64_t slots = layout ? std::max(layoutAxisReach(*layout, Axis::m), *elements) : *elements;
    f.sharedBytes = bytesOf(slots, bits);
    break;
  }
  case MemScope::Reg: {
    // Without a layout every thread holds the whole tile.
    int64_t perThread =
        layout ? std::max<int64_t>(1, layoutAxisReach(*layout, Axis::m)) : *elements;
    int64_t bitsPerThread = saturatingMul(perThread, bits);
    // Saturated (past 2^63 bits) stays saturated rather than wrapping.
    f.registersPerThread = bitsPerThread == INT64_MAX ? INT64_MAX : (bitsPerThread + 31) / 32;
    break;
  }
  case MemScope::Tmem: {
    // One element per 32-bit column (narrow dtypes are not packed).
    int64_t columns = shape.empty() ? 1 : shape.back();
    if (layout) {
      f.tmemLanes = layoutAxisReach(*layout, Axis::TLane);
      f.tmemColumns = layoutAxisReach(*layout, Axis::TCol);
    } else {
      f.tmemColumns = columns;
      f.tmemLanes = *elements / std::max<int64_t>(1, columns);
    }
    break;
  }
  }
  return f;
}

bool checkBufferLimits(const BufferDecl &b, const std::vector<int64_t> &shape,
                       const TargetInfo &target, Diagnostics &diag) {
  const Layout *layout = b.layout ? &b.layout->layout : nullptr;
  auto f = bufferFootprint(b.scope, b.dtype, shape, layout);
  if (!f || saturatingMul(f->elements, dtypeBits(b.dtype)) == INT64_MAX) {
    diag.error(b.loc, fmt::format("buffer '{}' is too large: its element count or size in bits "
                                  "overflows a 64-bit integer",
                                  b.name));
    return false;
  }
  switch (b.scope) {
  case MemScope::Global:
    return true;
  case MemScope::Shared:
    if (f->sharedBytes > target.sharedBytesPerCta) {
      diag.error(b.loc,
                 fmt::format("shared buffer '{}' takes {} bytes; {} has {} of shared "
                             "memory per CTA",
                             b.name, f->sharedBytes, target.name, kib(target.sharedBytesPerCta)));
      return false;
    }
    return true;
  case MemScope::Reg:
    if (f->registersPerThread > target.registersPerThread) {
      diag.error(b.loc, fmt::format("register buffer '{}' takes {} 32-bit registers per thread; "
                                    "{} has {} per thread",
                                    b.name, f->registersPerThread, target.name,
                                    target.registersPerThread));
      return false;
    }
    return true;
  case MemScope::Tmem:
    if (!target.hasTensorMemory)
      return true; // reported by the checker
    if (f->tmemLanes > target.tmemLanes || f->tmemColumns > target.tmemColumns) {
      diag.error(b.loc, fmt::format("tensor-memory buffer '{}' reaches {} lanes and {} columns; "
                                    "{} has {} lanes of {} columns",
                                    b.name, f->tmemLanes, f->tmemColumns, target.name,
                                    target.tmemLanes, target.tmemColumns));
      return false;
    }
    return true;
  }
  return true;
}

bool checkBarrierArrayLimits(const BarrierDecl &b, int64_t size, const TargetInfo &target,
                             Diagnostics &diag) {
  int64_t most = target.sharedBytesPerCta / limits::kMbarrierBytes;
  if (size > most) {
    diag.error(b.arraySize->loc,
               fmt::format("{} mbarriers of 8 bytes do not fit in {}'s {} of shared memory per "
                           "CTA (at most {})",
                           size, target.name, kib(target.sharedBytesPerCta), most));
    return false;
  }
  return true;
}

bool checkTensorParamLimits(const Param &p, Diagnostics &diag) {
  if (int64_t(p.shape.size()) > limits::kMaxRank) {
    diag.error(p.loc, fmt::format("tensor '{}' has {} dimensions; at most {} are supported", p.name,
                                  p.shape.size(), limits::kMaxRank));
    return false;
  }
  std::vector<int64_t> constant;
  for (const Expr &d : p.shape)
    if (auto v = constantValue(d); v && *v > 0)
      constant.push_back(*v);
  auto n = checkedProduct(constant);
  if (!n || saturatingMul(*n, dtypeBits(p.dtype)) == INT64_MAX) {
    diag.error(p.loc, fmt::format("tensor '{}' is too large: its element count or size in bits "
                                  "overflows a 64-bit integer",
                                  p.name));
    return false;
  }
  return true;
}

bool checkLaunchLimits(const Launch &launch, Diagnostics &diag) {
  bool ok = true;
  for (size_t i = 0; i < launch.grid.size(); ++i) {
    auto v = constantValue(launch.grid[i]);
    int64_t most = i == 0 ? limits::kMaxGridX : limits::kMaxGridYZ;
    if (v && (*v < 1 || *v > most)) {
      diag.error(launch.grid[i]->loc, fmt::format("grid extent {} is {}; it must be in [1, {}]",
                                                  "xyz"[std::min<size_t>(i, 2)], *v, most));
      ok = false;
    }
  }
  return ok;
}

} // namespace tilescope
