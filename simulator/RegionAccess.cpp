// Whole-region fast paths for the tile primitives and TMA: the elements of a
// region gathered into (or scattered from) a vector of encoded bits in one
// pass, instead of one readBits/writeBits call per element. They take only
// the ordinary cases, decide everything before touching anything and leave
// the statistics to `countAccess`, so a caller that gets `false` runs the
// general per-element path from the start and sees exactly what it would
// have seen without them (same values, same first error, same counters).
// With the uninitialised-read check on they keep its record of shared and
// tensor memory: a write marks what it wrote, and a read of anything not
// marked declines, so that the per-element path reports it.
#include "simulator/CtaExecutor.h"
#include "simulator/Lanes.h"
#include "simulator/Packed.h"

#include <cstring>
#include <type_traits>

namespace tilescope::sim {

bool CtaExecutor::fastRegion(const Region &r) const {
  const BufferPlan &b = p_.buffers[r.buffer];
  // Race detection records every element access: the per-element path does.
  if (everyAccessTraced() || isPacked(b.dtype))
    return false;
  // Every element inside the buffer (TMA's clipping takes the general path).
  return insideBuffer(r);
}

bool CtaExecutor::insideBuffer(const Region &r) const {
  const BufferPlan &b = p_.buffers[r.buffer];
  for (size_t k = 0; k < r.extent.size(); ++k) {
    int d = r.dimOf[k];
    if (r.start[d] < 0 || r.start[d] + r.extent[k] > b.shape[d])
      return false;
  }
  for (size_t d = 0; d < b.shape.size(); ++d)
    if (r.start[d] < 0 || r.start[d] >= b.shape[d])
      return false;
  return true;
}

void CtaExecutor::regionFlats(const Region &r, std::vector<int64_t> &flats) const {
  const std::vector<int64_t> &shape = p_.buffers[r.buffer].shape;
  // Row-major strides of the buffer, and the stride of each region dimension.
  std::vector<int64_t> stride(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    stride[d - 1] = stride[d] * shape[d];
  int64_t base = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    base += r.start[d] * stride[d];
  size_t rank = r.extent.size();
  flats.resize(static_cast<size_t>(r.elements()));
  if (rank == 0) {
    flats[0] = base;
    return;
  }
  std::vector<int64_t> count(rank, 0);
  int64_t inner = r.extent[rank - 1], innerStride = stride[r.dimOf[rank - 1]];
  int64_t at = base;
  for (size_t i = 0; i < flats.size(); i += static_cast<size_t>(inner)) {
    for (int64_t e = 0; e < inner; ++e)
      flats[i + e] = at + e * innerStride;
    // Step the outer dimensions like an odometer.
    for (size_t k = rank - 1; k-- > 0;) {
      at += stride[r.dimOf[k]];
      if (++count[k] < r.extent[k])
        break;
      at -= count[k] * stride[r.dimOf[k]];
      count[k] = 0;
    }
  }
}

namespace {

// The register of each flat element as `threads` reads it (its first owner
// inside the range), or -1 when no thread of the range holds it.
int64_t firstOwnerReg(const BufferPlan &b, int64_t flat, ThreadRange threads,
                      int64_t regsPerThread) {
  for (int32_t k = b.ownerStart[flat]; k < b.ownerStart[flat + 1]; ++k) {
    auto [t, r] = b.owners[k];
    if (threads.contains(t))
      return t * regsPerThread + b.regBase + r;
  }
  return -1;
}

} // namespace

bool CtaExecutor::gatherBits(const Region &r, ThreadRange threads, std::vector<uint64_t> &out,
                             bool ownedOnly) {
  if (!fastRegion(r))
    return false;
  const BufferPlan &b = p_.buffers[r.buffer];
  thread_local std::vector<int64_t> flats;
  regionFlats(r, flats);
  out.resize(flats.size());
  int bytes = b.elementBytes;
  switch (b.scope) {
  case MemScope::Global: {
    const uint8_t *base = tensors_[b.tensor].bytes.data();
    withElementBytes(bytes, [&](auto size) {
      for (size_t i = 0; i < flats.size(); ++i)
        out[i] = loadLittle(base + flats[i] * size, size);
    });
    return true;
  }
  case MemScope::Shared: {
    readyShared();
    const int64_t limit = static_cast<int64_t>(shared_.size()) - bytes;
    const bool init = options_.checkUninitialized;
    const int64_t initLimit = static_cast<int64_t>(sharedInit_.size()) - bytes;
    // Plain pointers: the loop's stores cannot move them.
    const uint8_t *shared = shared_.data(), *initialised = sharedInit_.data();
    const int64_t *table = b.byteOf.empty() ? nullptr : b.byteOf.data();
    const int64_t *flat = flats.data();
    uint64_t *to = out.data();
    const size_t count = flats.size();
    bool inside = true;
    withElementBytes(bytes, [&](auto size) {
      for (size_t i = 0; i < count && inside; ++i) {
        const int64_t at = table ? table[flat[i]] : b.sharedByteFromLayout(flat[i]);
        inside = at >= 0 && at <= limit;
        if (inside && init) { // every byte written since the CTA started
          inside = at <= initLimit;
          for (int k = 0; k < size && inside; ++k)
            inside = initialised[at + k] != 0;
        }
        to[i] = inside ? loadLittle(shared + at, size) : 0;
      }
    });
    return inside;
  }
  case MemScope::Reg: {
    if (b.privateRegs()) {
      const uint64_t *regs = regs_.data() + threads.begin * p_.regsPerThread + b.regBase;
      for (size_t i = 0; i < flats.size(); ++i)
        out[i] = regs[flats[i]];
      return true;
    }
    const RegionRegs &rr = regionRegs(r, threads, flats);
    if (!rr.complete && !ownedOnly)
      return false;
    for (size_t i = 0; i < flats.size(); ++i)
      out[i] = rr.first[i] >= 0 ? regs_[rr.first[i]] : 0;
    return true;
  }
  case MemScope::Tmem: {
    const int64_t *cells = tmemCells(r, flats);
    if (!cells)
      return false;
    const bool init = options_.checkUninitialized;
    for (size_t i = 0; i < flats.size(); ++i) {
      if (init && !tmemInit_[cells[i]])
        return false;
      out[i] = tmem_[cells[i]];
    }
    return true;
  }
  }
  return false;
}

bool CtaExecutor::copyShareToShared(const Region &src, const Region &dst, int64_t n,
                                    ThreadRange warp, int64_t &done) {
  const BufferPlan &from = p_.buffers[src.buffer], &to = p_.buffers[dst.buffer];
  if (everyAccessTraced() || from.scope != MemScope::Reg || from.privateRegs() ||
      to.scope != MemScope::Shared || dtypeBits(to.dtype) % 8 != 0 ||
      dtypeBits(from.dtype) != dtypeBits(to.dtype))
    return false;
  const std::vector<ShareElement> &share = warpShare(dst, &src, n, warp);
  const int bytes = dtypeBytes(to.dtype);
  const int64_t limit = static_cast<int64_t>(shared_.size()) - bytes;
  // Decide before writing anything: every source register held by its
  // thread (readBits), every destination byte inside shared memory
  // (writeBits, sharedSpot).
  thread_local std::vector<std::pair<int64_t, int64_t>> moves; // (register, byte)
  moves.clear();
  for (const ShareElement &e : share) {
    if (e.srcFlat < 0 || e.dstFlat < 0)
      return false;
    int64_t reg = -1;
    for (int32_t k = from.ownerStart[e.srcFlat]; k < from.ownerStart[e.srcFlat + 1] && reg < 0;
         ++k)
      if (from.owners[k].first == e.thread)
        reg = e.thread * p_.regsPerThread + from.regBase + from.owners[k].second;
    const int64_t at = to.sharedBit(e.dstFlat) / 8;
    if (reg < 0 || at < 0 || at > limit)
      return false;
    moves.emplace_back(reg, at);
  }
  readyShared();
  const int64_t initSize = static_cast<int64_t>(sharedInit_.size());
  withElementBytes(bytes, [&](auto size) {
    for (const auto &[reg, at] : moves) {
      const uint64_t v = regs_[reg];
      std::memcpy(shared_.data() + at, &v, static_cast<size_t>(size));
      if (options_.checkUninitialized && at + size <= initSize)
        std::memset(sharedInit_.data() + at, 1, static_cast<size_t>(size));
    }
  });
  stats_.sharedBytesAccessed += static_cast<int64_t>(moves.size()) * bytes;
  int64_t last = -1;
  for (const ShareElement &e : share) {
    done += e.element != last;
    last = e.element;
  }
  return true;
}

const int64_t *CtaExecutor::tmemCells(const Region &r, const std::vector<int64_t> &flats) {
  const BufferPlan &b = p_.buffers[r.buffer];
  auto it = tmemAlloc_.find(r.buffer);
  if (it == tmemAlloc_.end() || b.tmemCellOf.empty())
    return nullptr; // tmemIndex reports it, or computes each element
  auto [first, count] = it->second;
  thread_local std::vector<int64_t> cells;
  cells.resize(flats.size());
  for (size_t i = 0; i < flats.size(); ++i) {
    auto [lane, col] = b.tmemCellOf[flats[i]];
    if (col >= count)
      return nullptr; // outside the allocation: tmemIndex reports it
    cells[i] = lane * int64_t{512} + first + col;
  }
  if (options_.checkUninitialized && tmemInit_.size() < tmem_.size())
    return nullptr;
  return cells.data();
}

bool CtaExecutor::scatterBits(const Region &r, ThreadRange threads,
                              std::span<const uint64_t> bits, bool ownedOnly) {
  if (!fastRegion(r))
    return false;
  const BufferPlan &b = p_.buffers[r.buffer];
  thread_local std::vector<int64_t> flats;
  regionFlats(r, flats);
  auto value = [&](size_t i) { return bits.size() == 1 ? bits[0] : bits[i]; };
  int bytes = b.elementBytes;
  switch (b.scope) {
  case MemScope::Global: {
    HostTensor &t = tensors_[b.tensor];
    withElementBytes(bytes, [&](auto size) {
      for (size_t i = 0; i < flats.size(); ++i) {
        uint64_t v = value(i);
        std::memcpy(t.bytes.data() + flats[i] * size, &v, static_cast<size_t>(size));
        t.written[flats[i]] = 1;
      }
    });
    return true;
  }
  case MemScope::Shared: {
    const int64_t limit = static_cast<int64_t>(shared_.size()) - bytes;
    thread_local std::vector<int64_t> ats; // each element's byte, found once
    ats.resize(flats.size());
    for (size_t i = 0; i < flats.size(); ++i) { // decide before writing anything
      const int64_t at = b.sharedByte(flats[i]);
      if (at < 0 || at > limit)
        return false;
      ats[i] = at;
    }
    readyShared();
    const int64_t initSize = static_cast<int64_t>(sharedInit_.size());
    // Plain pointers: the byte stores could otherwise alias the vectors'.
    uint8_t *shared = shared_.data(), *initialised = sharedInit_.data();
    const int64_t *at = ats.data();
    const uint64_t *each = bits.data();
    const size_t count = ats.size(), step = bits.size() == 1 ? 0 : 1;
    withElementBytes(bytes, [&](auto size) {
      for (size_t i = 0; i < count; ++i) {
        const uint64_t v = each[i * step];
        std::memcpy(shared + at[i], &v, static_cast<size_t>(size));
      }
      if (options_.checkUninitialized)
        for (size_t i = 0; i < count; ++i)
          if (at[i] + size <= initSize)
            std::memset(initialised + at[i], 1, static_cast<size_t>(size));
    });
    return true;
  }
  case MemScope::Reg: {
    uint64_t keep = bytes < 8 ? (uint64_t{1} << (8 * bytes)) - 1 : ~uint64_t{0};
    if (b.privateRegs()) {
      for (int64_t t = threads.begin; t < threads.end; ++t) {
        uint64_t *regs = regs_.data() + t * p_.regsPerThread + b.regBase;
        for (size_t i = 0; i < flats.size(); ++i)
          regs[flats[i]] = value(i) & keep;
      }
      return true;
    }
    const RegionRegs &rr = regionRegs(r, threads, flats);
    if (!rr.complete && !ownedOnly) // every element must have an owner in the range
      return false;
    for (const auto &[i, reg] : rr.all)
      regs_[reg] = value(static_cast<size_t>(i)) & keep;
    return true;
  }
  case MemScope::Tmem: {
    const int64_t *cells = tmemCells(r, flats);
    if (!cells)
      return false;
    for (size_t i = 0; i < flats.size(); ++i)
      tmem_[cells[i]] = static_cast<uint32_t>(value(i));
    if (options_.checkUninitialized)
      for (size_t i = 0; i < flats.size(); ++i)
        tmemInit_[cells[i]] = 1;
    return true;
  }
  }
  return false;
}

const CtaExecutor::RegionRegs &CtaExecutor::regionRegs(const Region &r, ThreadRange threads,
                                                       const std::vector<int64_t> &flats) {
  std::vector<int64_t> key = {threads.begin, threads.end};
  appendRegionKey(key, r);
  auto [it, fresh] = caches_->regionRegs.try_emplace(std::move(key));
  RegionRegs &rr = it->second;
  if (!fresh)
    return rr;
  const BufferPlan &b = p_.buffers[r.buffer];
  rr.first.resize(flats.size());
  for (size_t i = 0; i < flats.size(); ++i) {
    const int64_t flat = flats[i];
    rr.first[i] = firstOwnerReg(b, flat, threads, p_.regsPerThread);
    rr.complete &= rr.first[i] >= 0;
    // Every owner in the range, in the owner table's order (as writeBits).
    for (int32_t k = b.ownerStart[flat]; k < b.ownerStart[flat + 1]; ++k) {
      auto [t, reg] = b.owners[k];
      if (threads.contains(t))
        rr.all.emplace_back(static_cast<int64_t>(i), t * p_.regsPerThread + b.regBase + reg);
    }
  }
  return rr;
}

void CtaExecutor::appendRegionKey(std::vector<int64_t> &key, const Region &r) {
  key.push_back(r.buffer);
  key.insert(key.end(), r.start.begin(), r.start.end());
  key.push_back(-1);
  key.insert(key.end(), r.extent.begin(), r.extent.end());
  key.push_back(-1);
  key.insert(key.end(), r.dimOf.begin(), r.dimOf.end());
  key.push_back(-1);
}

void CtaExecutor::countAccess(const Region &r, bool write) {
  const BufferPlan &b = p_.buffers[r.buffer];
  int64_t bytes = r.elements() * b.elementBytes;
  if (b.scope == MemScope::Global)
    (write ? stats_.globalBytesWritten : stats_.globalBytesRead) += bytes;
  else if (b.scope == MemScope::Shared)
    stats_.sharedBytesAccessed += bytes;
  else if (b.scope == MemScope::Tmem)
    stats_.tensorBytesAccessed += 4 * r.elements();
}

} // namespace tilescope::sim
