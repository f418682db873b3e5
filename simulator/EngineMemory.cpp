// The CTA executor's memory (CtaExecutor.h): regions of buffers, reads and
// writes of shared, global, register and tensor memory (with the race
// detector's hooks), and the operands of calls.
#include "simulator/CtaExecutor.h"
#include "simulator/Lanes.h"
#include "simulator/Packed.h"

#include "ir/Budget.h"
#include "ir/DeviceScale.h"
#include "ir/Intrinsics.h"
#include "ir/Printer.h"
#include "ir/ThreadIndex.h"

#include <llvm/ADT/SmallVector.h>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>

namespace tilescope::sim {

// --- regions ----------------------------------------------------------------

int64_t Region::elements() const {
  int64_t n = 1;
  for (int64_t e : extent)
    n *= e;
  return n;
}

void Region::coordOf(int64_t idx, std::vector<int64_t> &coord) const {
  coord = start;
  for (size_t k = extent.size(); k-- > 0;) {
    coord[dimOf[k]] += idx % extent[k];
    idx /= extent[k];
  }
}

namespace {
// The buffer coordinates of element `idx` of a region (Region::coordOf),
// on the stack.
using Coords = llvm::SmallVector<int64_t, 6>;
void coordsOf(const Region &r, int64_t idx, Coords &coord) {
  coord.assign(r.start.begin(), r.start.end());
  for (size_t k = r.extent.size(); k-- > 0;) {
    coord[r.dimOf[k]] += idx % r.extent[k];
    idx /= r.extent[k];
  }
}
} // namespace

int64_t CtaExecutor::bufferFlat(const Region &r, int64_t idx) const {
  const std::vector<int64_t> &shape = p_.buffers[r.buffer].shape;
  int64_t flat = 0;
  // Row-major over the buffer with the region's coordinates.
  Coords coord;
  coordsOf(r, idx, coord);
  for (size_t d = 0; d < shape.size(); ++d)
    flat = flat * shape[d] + coord[d];
  return flat;
}

bool CtaExecutor::inBounds(const Region &r, int64_t idx) const {
  const std::vector<int64_t> &shape = p_.buffers[r.buffer].shape;
  Coords coord;
  coordsOf(r, idx, coord);
  for (size_t d = 0; d < shape.size(); ++d)
    if (coord[d] < 0 || coord[d] >= shape[d])
      return false;
  return true;
}

int64_t CtaExecutor::flatInBounds(const Region &r, int64_t idx) const {
  const std::vector<int64_t> &shape = p_.buffers[r.buffer].shape;
  Coords coord;
  coordsOf(r, idx, coord);
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (coord[d] < 0 || coord[d] >= shape[d])
      return -1;
    flat = flat * shape[d] + coord[d];
  }
  return flat;
}

std::optional<uint64_t> CtaExecutor::readBits(int buffer, int64_t flat, ThreadRange threads,
                                              llvm::SMLoc loc) {
  const BufferPlan &b = p_.buffers[buffer];
  int bytes = dtypeBytes(b.dtype);
  uint64_t v = 0;
  switch (b.scope) {
  case MemScope::Global: {
    v = tensors_[b.tensor].bitsAt(flat);
    stats_.globalBytesRead += bytes;
    if (devices_)
      deviceAccess(devid_, b.tensor, flat, false, loc);
    if (race_)
      raceAccess(RaceSpace::Global, buffer, flat, flat, 1, false, threads, loc);
    return v;
  }
  case MemScope::Shared: {
    auto spot = sharedSpot(b, flat);
    if (!spot) {
      fail(loc, fmt::format("shared access outside the CTA's shared memory ('{}')", b.name));
      return std::nullopt;
    }
    v = loadShared(*spot, b.dtype);
    stats_.sharedBytesAccessed += spot->span;
    if (traced())
      raceAccess(RaceSpace::Shared, buffer, flat, spot->at, spot->span, false, threads, loc);
    return v;
  }
  case MemScope::Reg: {
    if (b.privateRegs())
      return regs_[threads.begin * p_.regsPerThread + b.regBase + flat];
    for (int32_t k = b.ownerStart[flat]; k < b.ownerStart[flat + 1]; ++k) {
      auto [t, r] = b.owners[k];
      if (threads.contains(t))
        return regs_[t * p_.regsPerThread + b.regBase + r];
    }
    std::vector<int64_t> idx = unflattenIndex(b.shape, flat);
    std::string at;
    for (size_t i = 0; i < idx.size(); ++i)
      at += (i ? ", " : "") + std::to_string(idx[i]);
    fail(loc, fmt::format("threads [{}, {}) read element [{}] of register tile '{}', but its "
                          "layout places that element on none of them",
                          threads.begin, threads.end, at, b.name));
    return std::nullopt;
  }
  case MemScope::Tmem: {
    auto at = tmemIndex(buffer, flat, loc);
    if (!at)
      return std::nullopt;
    if (traced())
      raceAccess(RaceSpace::Tmem, buffer, flat, *at, 1, false, threads, loc);
    stats_.tensorBytesAccessed += 4;
    return tmem_[*at];
  }
  }
  return std::nullopt;
}

std::optional<CtaExecutor::SharedSpot> CtaExecutor::sharedSpot(const BufferPlan &b,
                                                               int64_t flat) {
  SharedSpot s;
  s.bit = b.sharedBit(flat);
  s.at = s.bit / 8;
  s.span = static_cast<int>((s.bit % 8 + dtypeBits(b.dtype) + 7) / 8);
  if (s.at < 0 || s.at + s.span > static_cast<int64_t>(shared_.size()))
    return std::nullopt;
  readyShared();
  return s;
}

uint64_t CtaExecutor::loadShared(const SharedSpot &s, Dtype d) const {
  if (isPacked(d))
    return loadPacked(shared_.data(), s.bit, dtypeBits(d));
  uint64_t v = 0;
  std::memcpy(&v, shared_.data() + s.at, s.span);
  return v;
}

void CtaExecutor::storeShared(const SharedSpot &s, Dtype d, uint64_t bits) {
  if (isPacked(d))
    return storePacked(shared_.data(), s.bit, dtypeBits(d), bits);
  std::memcpy(shared_.data() + s.at, &bits, s.span);
}

std::optional<int64_t> CtaExecutor::tmemIndex(int buffer, int64_t flat, llvm::SMLoc loc) {
  const BufferPlan &b = p_.buffers[buffer];
  auto it = tmemAlloc_.find(buffer);
  if (it == tmemAlloc_.end()) {
    fail(loc, fmt::format("tensor memory '{}' used while not allocated (tcgen05.alloc)", b.name));
    return std::nullopt;
  }
  int64_t lane = 0, col = 0;
  if (flat >= 0 && flat < static_cast<int64_t>(b.tmemCellOf.size())) {
    lane = b.tmemCellOf[flat].first;
    col = b.tmemCellOf[flat].second;
  } else if (b.layout) {
    PhysCoord c = b.layout->base(flat);
    lane = c.get(Axis::TLane);
    col = c.get(Axis::TCol);
  } else {
    int64_t cols = b.shape.empty() ? 1 : b.shape.back();
    lane = flat / cols;
    col = flat % cols;
  }
  auto [first, count] = it->second;
  if (lane < 0 || lane >= 128 || col < 0 || col >= count) {
    fail(loc, fmt::format("element {} of '{}' is at tensor-memory lane {}, column {}, outside its "
                          "allocation of {} columns",
                          flat, b.name, lane, col, count));
    return std::nullopt;
  }
  return lane * 512 + first + col;
}

bool CtaExecutor::writeBits(int buffer, int64_t flat, uint64_t bits, ThreadRange threads,
                            llvm::SMLoc loc) {
  const BufferPlan &b = p_.buffers[buffer];
  int bytes = dtypeBytes(b.dtype);
  switch (b.scope) {
  case MemScope::Global: {
    HostTensor &t = tensors_[b.tensor];
    t.setBits(flat, bits);
    t.written[flat] = 1;
    stats_.globalBytesWritten += bytes;
    if (devices_)
      deviceAccess(devid_, b.tensor, flat, true, loc);
    if (race_)
      raceAccess(RaceSpace::Global, buffer, flat, flat, 1, true, threads, loc);
    return true;
  }
  case MemScope::Shared: {
    auto spot = sharedSpot(b, flat);
    if (!spot)
      return fail(loc, fmt::format("shared access outside the CTA's shared memory ('{}')", b.name));
    storeShared(*spot, b.dtype, bits);
    stats_.sharedBytesAccessed += spot->span;
    if (traced())
      raceAccess(RaceSpace::Shared, buffer, flat, spot->at, spot->span, true, threads, loc);
    return true;
  }
  case MemScope::Reg: {
    if (bytes < 8)
      bits &= (uint64_t{1} << (8 * bytes)) - 1;
    if (b.privateRegs()) {
      for (int64_t t = threads.begin; t < threads.end; ++t)
        regs_[t * p_.regsPerThread + b.regBase + flat] = bits;
      return true;
    }
    bool any = false;
    for (int32_t k = b.ownerStart[flat]; k < b.ownerStart[flat + 1]; ++k) {
      auto [t, r] = b.owners[k];
      if (threads.contains(t)) {
        regs_[t * p_.regsPerThread + b.regBase + r] = bits;
        any = true;
      }
    }
    if (!any) {
      std::vector<int64_t> idx = unflattenIndex(b.shape, flat);
      std::string at;
      for (size_t i = 0; i < idx.size(); ++i)
        at += (i ? ", " : "") + std::to_string(idx[i]);
      return fail(loc, fmt::format("threads [{}, {}) write element [{}] of register tile '{}', "
                                   "but its layout places that element on none of them",
                                   threads.begin, threads.end, at, b.name));
    }
    return true;
  }
  case MemScope::Tmem: {
    auto at = tmemIndex(buffer, flat, loc);
    if (!at)
      return false;
    if (traced())
      raceAccess(RaceSpace::Tmem, buffer, flat, *at, 1, true, threads, loc);
    tmem_[*at] = static_cast<uint32_t>(bits);
    stats_.tensorBytesAccessed += 4;
    return true;
  }
  }
  return false;
}

// --- operands of calls --------------------------------------------------------

bool CtaExecutor::copyRegions(const CallStmt &c, Warp &w, int lane, std::optional<Region> &dst,
                              std::optional<Region> &src) {
  dst = region(c.args.at(0).value, w, lane);
  if (!dst)
    return false;
  src = region(c.args.at(1).value, w, lane);
  return src.has_value();
}

std::optional<Region> CtaExecutor::region(const Expr &e, Warp &w, int lane) {
  std::vector<const Index *> chain;
  Expr base = e;
  while (base->kind == ExprKind::Index) {
    chain.push_back(&as<Index>(base));
    base = as<Index>(base).base;
  }
  auto it = base->kind == ExprKind::Var ? p_.names.find(base.get()) : p_.names.end();
  if (it == p_.names.end() || it->second.kind != NameRef::Buffer) {
    fail(e->loc, "expected a buffer or a region of one");
    return std::nullopt;
  }
  Region r;
  r.buffer = it->second.index;
  r.loc = e->loc;
  const BufferPlan &b = p_.buffers[r.buffer];
  r.start.assign(b.shape.size(), 0);
  for (size_t d = 0; d < b.shape.size(); ++d) {
    r.extent.push_back(b.shape[d]);
    r.dimOf.push_back(static_cast<int>(d));
  }
  uint32_t mask = 1u << lane;
  LaneValues v;
  for (auto ci = chain.rbegin(); ci != chain.rend(); ++ci) {
    const Index &x = **ci;
    if (x.subscripts.size() > r.extent.size()) {
      fail(x.loc, "too many subscripts");
      return std::nullopt;
    }
    std::vector<int64_t> extent;
    std::vector<int> dimOf;
    for (size_t k = 0; k < r.extent.size(); ++k) {
      int d = r.dimOf[k];
      if (k >= x.subscripts.size()) {
        extent.push_back(r.extent[k]);
        dimOf.push_back(d);
        continue;
      }
      const Subscript &s = x.subscripts[k];
      int64_t begin = 0, len = r.extent[k];
      if (s.kind != Subscript::Full) {
        if (!eval(s.begin, w, mask, v))
          return std::nullopt;
        begin = v.lane[lane].i;
      }
      if (s.kind == Subscript::Range || s.kind == Subscript::Extent) {
        if (!eval(s.end, w, mask, v))
          return std::nullopt;
        len = s.kind == Subscript::Extent ? v.lane[lane].i : v.lane[lane].i - begin;
        if (len < 1) {
          fail(s.end->loc, fmt::format("empty region (extent {})", len));
          return std::nullopt;
        }
      }
      if (s.kind == Subscript::Point)
        len = 1;
      if (s.kind != Subscript::Full && (begin < 0 || begin + len > r.extent[k])) {
        // Leaving the parent region is allowed only at the buffer's edge for
        // global tensors (TMA clips); everything else is out of bounds.
        bool global = b.scope == MemScope::Global;
        if (!global || begin < 0 || r.start[d] + begin >= b.shape[d] || r.extent[k] != b.shape[d]) {
          fail(s.begin->loc, fmt::format("region [{}, {}) is out of range for dimension {} of "
                                         "'{}' (extent {})",
                                         begin, begin + len, d, b.name, r.extent[k]));
          return std::nullopt;
        }
      }
      r.start[d] += begin;
      if (s.kind != Subscript::Point) {
        extent.push_back(len);
        dimOf.push_back(d);
      }
    }
    r.extent = std::move(extent);
    r.dimOf = std::move(dimOf);
  }
  return r;
}

std::optional<int> CtaExecutor::barrierRef(const Expr &e, Warp &w, int lane) {
  const Expr &base = e->kind == ExprKind::Index ? as<Index>(e).base : e;
  auto it = base->kind == ExprKind::Var ? p_.names.find(base.get()) : p_.names.end();
  if (it == p_.names.end() || it->second.kind != NameRef::Barrier) {
    fail(e->loc, "expected an mbarrier");
    return std::nullopt;
  }
  const BarrierPlan &b = p_.barriers[it->second.index];
  int64_t i = 0;
  if (e->kind == ExprKind::Index) {
    LaneValues v;
    if (!eval(as<Index>(e).subscripts.at(0).begin, w, 1u << lane, v))
      return std::nullopt;
    i = v.lane[lane].i;
  }
  if (i < 0 || i >= b.size) {
    fail(e->loc, fmt::format("mbarrier index {} is out of range for '{}' ({} elements)", i, b.name,
                             b.size));
    return std::nullopt;
  }
  return static_cast<int>(b.first + i);
}

std::optional<CtaExecutor::Operand> CtaExecutor::operand(const Expr &e, Warp &w, int lane,
                                                         bool wantRegion) {
  Operand o;
  bool isRegion = wantRegion;
  if (!wantRegion) {
    // A buffer name or a subscript that is not a full element access is a region.
    Expr base = e;
    while (base->kind == ExprKind::Index)
      base = as<Index>(base).base;
    if (base->kind == ExprKind::Var) {
      auto it = p_.names.find(base.get());
      if (it != p_.names.end() && it->second.kind == NameRef::Buffer) {
        isRegion = true;
        if (e->kind == ExprKind::Index && as<Index>(e).base->kind == ExprKind::Var) {
          const auto &x = as<Index>(e);
          bool points = x.subscripts.size() == p_.buffers[it->second.index].shape.size();
          for (const Subscript &s : x.subscripts)
            points &= s.kind == Subscript::Point;
          isRegion = !points;
        }
      }
    }
  }
  if (isRegion) {
    auto r = region(e, w, lane);
    if (!r)
      return std::nullopt;
    o.isRegion = true;
    o.region = std::move(*r);
    return o;
  }
  LaneValues v;
  if (!eval(e, w, 1u << lane, v))
    return std::nullopt;
  o.kind = v.kind;
  o.dtype = v.dtype;
  o.value = v.lane[lane];
  return o;
}

} // namespace tilescope::sim
