#include "simulator/CtaExecutor.h"
#include "simulator/Lanes.h"
#include "simulator/Packed.h"

#include "ir/Budget.h"
#include "ir/DeviceScale.h"
#include "ir/Intrinsics.h"
#include "ir/Printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>

namespace tilescope::sim {

// --- host tensors -----------------------------------------------------------

int64_t HostTensor::elements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

uint64_t HostTensor::bitsAt(int64_t i) const {
  if (isPacked(dtype))
    return loadPacked(bytes.data(), i * dtypeBits(dtype), dtypeBits(dtype));
  uint64_t v = 0;
  std::memcpy(&v, bytes.data() + i * dtypeBytes(dtype), dtypeBytes(dtype));
  return v;
}

void HostTensor::setBits(int64_t i, uint64_t bits) {
  if (isPacked(dtype))
    return storePacked(bytes.data(), i * dtypeBits(dtype), dtypeBits(dtype), bits);
  std::memcpy(bytes.data() + i * dtypeBytes(dtype), &bits, dtypeBytes(dtype));
}

std::vector<HostTensor> allocateTensors(const Program &program) {
  std::vector<HostTensor> out;
  for (int b : program.tensorParams) {
    if (b < 0)
      continue;
    const BufferPlan &plan = program.buffers[b];
    HostTensor t;
    t.name = plan.name;
    t.dtype = plan.dtype;
    t.shape = plan.shape;
    t.bytes.assign(storageBytes(plan.dtype, plan.elements), 0);
    t.written.assign(plan.elements, 0);
    out.push_back(std::move(t));
  }
  return out;
}

std::string_view outcomeName(RunResult::Outcome o) {
  switch (o) {
  case RunResult::Outcome::Completed:
    return "completed";
  case RunResult::Outcome::RuntimeError:
    return "runtime-error";
  case RunResult::Outcome::Deadlock:
    return "deadlock";
  case RunResult::Outcome::StepBudget:
    return "step-budget";
  case RunResult::Outcome::MemoryCap:
    return "memory-cap";
  case RunResult::Outcome::TimeBudget:
    return "time-budget";
  }
  return "?";
}

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

int64_t CtaExecutor::bufferFlat(const Region &r, int64_t idx) const {
  const std::vector<int64_t> &shape = p_.buffers[r.buffer].shape;
  int64_t flat = 0;
  // Row-major over the buffer with the region's coordinates.
  int64_t rem = idx;
  thread_local std::vector<int64_t> coord;
  coord = r.start;
  for (size_t k = r.extent.size(); k-- > 0;) {
    coord[r.dimOf[k]] += rem % r.extent[k];
    rem /= r.extent[k];
  }
  for (size_t d = 0; d < shape.size(); ++d)
    flat = flat * shape[d] + coord[d];
  return flat;
}

bool CtaExecutor::inBounds(const Region &r, int64_t idx) const {
  const std::vector<int64_t> &shape = p_.buffers[r.buffer].shape;
  thread_local std::vector<int64_t> coord;
  r.coordOf(idx, coord);
  for (size_t d = 0; d < shape.size(); ++d)
    if (coord[d] < 0 || coord[d] >= shape[d])
      return false;
  return true;
}

// --- the CTA ------------------------------------------------------------------

CtaExecutor::CtaExecutor(const Program &program, std::vector<HostTensor> &tensors,
                         const EngineOptions &options, RunStats &stats,
                         std::array<int64_t, 3> ctaId, std::mt19937_64 &rng)
    : p_(program), code_(program.code.get()), tensors_(tensors), options_(options), stats_(stats),
      ctaId_(ctaId), rng_(rng) {}

std::string CtaExecutor::where(llvm::SMLoc loc) const {
  return options_.where ? options_.where(loc) : std::string("<unknown>");
}

bool CtaExecutor::fail(llvm::SMLoc loc, const std::string &message) {
  if (!failure_)
    failure_ = Failure{RunResult::Outcome::RuntimeError,
                       fmt::format("{}: error: {} (CTA ({}, {}, {}))", where(loc), message,
                                   ctaId_[0], ctaId_[1], ctaId_[2]),
                       {}};
  return false;
}

std::string CtaExecutor::barrierName(int index) const {
  for (const BarrierPlan &b : p_.barriers)
    if (index >= b.first && index < b.first + b.size)
      return b.array ? fmt::format("{}[{}]", b.name, index - b.first) : b.name;
  return "?";
}

Mbarrier *CtaExecutor::barrier(int index, llvm::SMLoc loc) {
  if (index < 0 || index >= static_cast<int>(barriers_.size())) {
    fail(loc, "mbarrier index out of range");
    return nullptr;
  }
  return &barriers_[index];
}

bool CtaExecutor::barrierError(Mbarrier::Error e, int index, llvm::SMLoc loc) {
  if (e == Mbarrier::Error::None)
    return true;
  return fail(loc, fmt::format("{} ({}: {})", Mbarrier::errorText(e), barrierName(index),
                               barriers_[index].str()));
}

int64_t CtaExecutor::builtin(BuiltinKind b, int64_t t) const {
  switch (b) {
  case BuiltinKind::laneid:
    return t % 32;
  case BuiltinKind::warpid:
    return t / 32;
  case BuiltinKind::wgid:
    return t / 128;
  case BuiltinKind::tid_in_wg:
    return t % 128;
  case BuiltinKind::wid_in_wg:
    return (t / 32) % 4;
  case BuiltinKind::threadIdx_x:
    return t;
  case BuiltinKind::blockIdx_x:
    return ctaId_[0];
  case BuiltinKind::blockIdx_y:
    return ctaId_[1];
  case BuiltinKind::blockIdx_z:
    return ctaId_[2];
  case BuiltinKind::clusterCtaIdx_x:
    return ctaId_[0] % p_.cluster[0];
  case BuiltinKind::clusterCtaIdx_y:
    return ctaId_[1] % p_.cluster[1];
  case BuiltinKind::clusterCtaIdx_z:
    return ctaId_[2] % p_.cluster[2];
  }
  return 0;
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
                                                               int64_t flat) const {
  SharedSpot s;
  s.bit = b.sharedBit(flat);
  s.at = s.bit / 8;
  s.span = static_cast<int>((s.bit % 8 + dtypeBits(b.dtype) + 7) / 8);
  if (s.at < 0 || s.at + s.span > static_cast<int64_t>(shared_.size()))
    return std::nullopt;
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
  if (b.layout) {
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

namespace {

// The end of a loop body in a converged warp: every lane steps its counter
// and the lanes still below their end iterate again (a vector loop on AVX2
// processors; integer operations only, the same result on every clone).
#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target_clones("avx2", "default")))
#endif
uint32_t
advanceLanes(int64_t *__restrict counter, const int64_t *__restrict step,
             const int64_t *__restrict end) {
  uint32_t next = 0;
  for (int l = 0; l < kWarpSize; ++l) {
    counter[l] =
        static_cast<int64_t>(static_cast<uint64_t>(counter[l]) + static_cast<uint64_t>(step[l]));
    next |= static_cast<uint32_t>(counter[l] < end[l]) << l;
  }
  return next;
}

} // namespace

// --- statements ---------------------------------------------------------------

bool CtaExecutor::nextIteration(Warp &w, Frame &f) {
  LaneValues &iv = w.slots[f.slot];
  uint32_t next = 0;
  if (f.uniform && options_.scalarFastPaths) {
    // Every lane holds the same counter, end and step: step one of them.
    const int first = std::countr_zero(f.mask);
    const int64_t v = static_cast<int64_t>(static_cast<uint64_t>(iv.lane[first].i) +
                                           static_cast<uint64_t>(f.step[first]));
    forLanes(f.mask, [&](int l) { iv.lane[l].i = v; });
    next = v < f.end[first] ? f.mask : 0;
  } else if (f.mask == ~0u)
    next = advanceLanes(&iv.lane[0].i, f.step.data(), f.end.data());
  else
    forLanes(f.mask, [&](int l) {
      iv.lane[l].i += f.step[l];
      if (iv.lane[l].i < f.end[l])
        next |= 1u << l;
    });
  w.wrote(f.slot);
  if (!next)
    return false;
  f.mask = next;
  f.pc = 0;
  return true;
}

void CtaExecutor::leaveBlock(Warp &w) {
  w.stack.pop_back();
  if (w.stack.empty()) {
    w.state = Warp::State::Done;
    clusterWarpExited(w);
  }
}

bool CtaExecutor::step(Warp &w) {
  ++w.steps;
  ++stats_.steps;
  Frame &f = w.stack.back();
  if (f.pc >= f.block->size()) {
    // The end of a block; a loop body steps its lanes that are still iterating.
    if (!f.loop || !nextIteration(w, f))
      leaveBlock(w);
    return true;
  }
  stats_.laneOps += f.mask == ~0u ? kWarpSize : std::popcount(f.mask);
  if (!f.code)
    f.code = code_->block(*f.block);
  const Stmt &s = (*f.block)[f.pc];
  return execStmt(w, f, s);
}

bool CtaExecutor::execStmt(Warp &w, Frame &f, const Stmt &s) {
  uint32_t mask = f.mask;
  const StmtCode &code = f.code[f.pc];
  switch (s->kind) {
  case StmtKind::BufferDecl:
  case StmtKind::BarrierDecl:
    ++f.pc;
    return true;
  case StmtKind::Let: {
    const LaneValues *v = evalOp(code.value, w, mask);
    if (!v)
      return false;
    LaneValues &dst = w.slots[code.slot];
    dst.kind = v->kind;
    dst.dtype = v->dtype;
    forLanes(mask, [&](int l) { dst.lane[l] = v->lane[l]; });
    w.wrote(code.slot);
    ++f.pc;
    return true;
  }
  case StmtKind::Store: {
    if (code.target < 0)
      return fail(s->loc, "a store needs an element of a buffer");
    if (code.fused.shape != FusedStore::Shape::None && execFusedStore(w, mask, code.fused)) {
      ++f.pc;
      return true;
    }
    const ExprOp &target = code_->ops[code.target];
    std::array<int64_t, kWarpSize> flat;
    const LaneValues *v = evalOp(code.value, w, mask);
    if (!v || !elementFlat(target, w, mask, flat))
      return false;
    const int buffer = target.buffer;
    const BufferPlan &bp = p_.buffers[buffer];
    Dtype d = bp.dtype;
    const bool fromFloat = isFloatKind(v->kind);
    if ((bp.scope == MemScope::Global && !isPacked(d)) || bp.privateRegs()) {
      std::array<uint64_t, kWarpSize> bits;
      if (d == Dtype::f32 && fromFloat)
        forLanes(mask, [&](int l) {
          bits[l] = std::bit_cast<uint32_t>(static_cast<float>(v->lane[l].f));
        });
      else
        forLanes(mask, [&](int l) {
          bits[l] = fromFloat ? encodeFloat(d, v->lane[l].f) : encodeInt(d, v->lane[l].i);
        });
      if (bp.scope == MemScope::Global) {
        HostTensor &t = tensors_[bp.tensor];
        int bytes = bp.elementBytes;
        forLanes(mask, [&](int l) {
          storeBits(t.bytes.data() + flat[l] * bytes, bytes, bits[l]);
          t.written[flat[l]] = 1;
        });
        stats_.globalBytesWritten += bytes * std::popcount(mask);
        if (race_)
          forLanes(mask, [&](int l) {
            int64_t t = w.id * 32 + l;
            raceAccess(RaceSpace::Global, buffer, flat[l], flat[l], 1, true, {t, t + 1},
                       as<Store>(s).target->loc);
          });
      } else {
        uint64_t keep =
            bp.elementBytes >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * bp.elementBytes)) - 1;
        uint64_t *regs = regs_.data() + w.id * 32 * p_.regsPerThread + bp.regBase;
        const int64_t perThread = p_.regsPerThread;
        forLanes(mask, [&](int l) { regs[l * perThread + flat[l]] = bits[l] & keep; });
      }
      ++f.pc;
      return true;
    }
    const llvm::SMLoc loc = as<Store>(s).target->loc;
    bool ok = true;
    forLanes(mask, [&](int l) {
      if (!ok)
        return;
      uint64_t bits = fromFloat ? encodeFloat(d, v->lane[l].f) : encodeInt(d, v->lane[l].i);
      int64_t t = w.id * 32 + l;
      ok = writeBits(buffer, flat[l], bits, {t, t + 1}, loc);
    });
    if (!ok)
      return false;
    ++f.pc;
    return true;
  }
  case StmtKind::If: {
    const auto &i = as<If>(s);
    const LaneValues *c = evalOp(code.value, w, mask);
    if (!c)
      return false;
    uint32_t thenMask = 0;
    forLanes(mask, [&](int l) {
      if (c->lane[l].i)
        thenMask |= 1u << l;
    });
    uint32_t elseMask = mask & ~thenMask;
    ++f.pc;
    // Divergent lanes run the then-branch first, then the else-branch.
    if (elseMask && !i.elseBody.empty()) {
      w.stack.push_back(Frame{&i.elseBody, 0, elseMask});
      w.stack.back().code = code.elseBody;
    }
    if (thenMask && !i.thenBody.empty()) {
      w.stack.push_back(Frame{&i.thenBody, 0, thenMask});
      w.stack.back().code = code.body;
    }
    return true;
  }
  case StmtKind::For: {
    const auto &lp = as<For>(s);
    const LaneValues *b = evalOp(code.value, w, mask);
    const LaneValues *e = b ? evalOp(code.end, w, mask) : nullptr;
    const LaneValues *st = e ? evalOp(code.step, w, mask) : nullptr;
    if (!st)
      return false;
    Frame body{&lp.body, 0, 0, &lp, code.slot};
    body.code = code.body;
    body.uniform = code.uniformLoop;
    body.fusedBody = code.fusedBody;
    LaneValues &iv = w.slots[body.slot];
    w.wrote(body.slot);
    iv.kind = ValueKind::Int;
    iv.dtype = Dtype::i64;
    bool badStep = false;
    forLanes(mask, [&](int l) {
      iv.lane[l].i = b->lane[l].i;
      body.end[l] = e->lane[l].i;
      body.step[l] = st->lane[l].i;
      badStep |= st->lane[l].i <= 0;
      if (b->lane[l].i < e->lane[l].i)
        body.mask |= 1u << l;
    });
    if (badStep)
      return fail(lp.step->loc, "loop step must be positive");
    ++f.pc;
    if (body.mask && !lp.body.empty())
      w.stack.push_back(body);
    return true;
  }
  case StmtKind::CallStmt:
    return execCall(w, f, as<CallStmt>(s));
  }
  return false;
}

bool CtaExecutor::execCall(Warp &w, Frame &f, const CallStmt &c) {
  const IntrinsicId id = idOf(c);
  if (id == IntrinsicId::Unknown)
    return fail(c.loc, fmt::format("unknown call '{}'", c.callee));
  const IntrinsicInfo *info = &intrinsic(id);
  Convergence need = std::max(convergenceOf(c.scope), info->convergence);
  uint32_t mask = f.mask;
  if (unitOf(id) == IntrinsicUnit::NamedBarrier)
    return arriveCollective(w, c, -1);
  if (id == IntrinsicId::CpAsyncWait || id == IntrinsicId::CpAsyncWaitAll ||
      id == IntrinsicId::TmaStoreWait)
    return execGroupWait(w, f, c);
  if (unitOf(id) == IntrinsicUnit::Cluster ||
      (id == IntrinsicId::Sync && c.scope == ExecScope::Cluster))
    return execClusterBarrier(w, f, c);
  if (id == IntrinsicId::Tcgen05Alloc || id == IntrinsicId::Tcgen05Dealloc) {
    // The cta_group = 2 forms wait for the peer CTA's warp.
    if (const CallArg *g = c.keyword("cta_group")) {
      LaneValues v;
      if (!eval(g->value, w, f.mask, v))
        return false;
      if (v.lane[std::countr_zero(f.mask)].i == 2)
        return execPairAlloc(w, f, c);
    }
  }
  if (isDeviceCall(id)) {
    if (!devices_)
      return fail(c.loc, fmt::format("'{}' needs the device runner (a devices(N) launch)",
                                     c.callee));
    if (info->convergence == Convergence::Thread)
      return execDeviceThread(w, f, c);
  }
  if (need == Convergence::Thread) {
    if (id == IntrinsicId::MbarrierWait) {
      // The warp waits until every active lane's phase completed.
      w.waits.clear();
      bool ok = true;
      forLanes(mask, [&](int l) {
        if (!ok)
          return;
        auto bar = barrierRef(c.args.at(0).value, w, l);
        LaneValues par;
        const CallArg *pa = c.keyword("parity");
        if (!bar || !pa || !eval(pa->value, w, 1u << l, par)) {
          ok = false;
          return;
        }
        w.waits.emplace_back(*bar, par.lane[l].i);
      });
      if (!ok)
        return failure_ ? false : fail(c.loc, "mbarrier.wait needs a barrier and a parity");
      for (auto [bar, parity] : w.waits) {
        if (!barriers_[bar].live())
          return fail(c.loc, fmt::format("wait on {}: {}", barrierName(bar),
                                         Mbarrier::errorText(Mbarrier::Error::NotInitialised)));
        if (parity != 0 && parity != 1)
          return fail(c.loc, fmt::format("parity must be 0 or 1, not {}", parity));
      }
      if (!waitSatisfied(w)) {
        w.state = Warp::State::WaitBarrier;
        w.blockedAt = &c;
        return true;
      }
      acquireFrom(w, mask);
      w.waits.clear();
      ++f.pc;
      return true;
    }
    bool ok = true;
    forLanes(mask, [&](int l) {
      if (!ok)
        return;
      int64_t t = w.id * 32 + l;
      ok = info->cls == CallClass::Native ? execNative(w, c, mask, {t, t + 1}, l) : false;
      if (info->cls == CallClass::TilePrimitive) {
        PrimitiveCall call;
        call.call = &c;
        call.threads = {t, t + 1};
        ok = true;
        for (const CallArg &a : c.args) {
          if (a.keyword == "mbar") {
            auto b = barrierRef(a.value, w, l);
            if (!b) {
              ok = false;
              return;
            }
            call.barrier = *b;
            continue;
          }
          size_t index = call.positional.size();
          bool wantRegion = a.keyword.empty() && index < info->positional.size() &&
                            info->positional[index].kind == ArgKind::Buffer;
          auto o = operand(a.value, w, l, wantRegion);
          if (!o) {
            ok = false;
            return;
          }
          if (a.keyword.empty())
            call.positional.push_back(std::move(*o));
          else
            call.keywords[a.keyword] = std::move(*o);
        }
        ok = executePrimitive(call);
      }
    });
    if (!ok)
      return false;
    ++f.pc;
    return true;
  }
  if (mask != w.fullMask)
    return fail(c.loc, fmt::format("'{}' must be executed by a whole {}, but warp {} reaches it "
                                   "with active mask 0x{:08x}",
                                   c.callee, convergenceName(need), w.id, mask));
  if (need == Convergence::Warp) {
    int64_t t0 = w.id * 32, t1 = std::min<int64_t>(t0 + 32, p_.threads);
    // A warp collective synchronises the warp's lanes: the simulator moves
    // its elements as a whole, not lane by lane.
    if (race_)
      race_->syncThreads(raceThread(t0), raceThread(t1));
    if (!runCollective(w, c, {t0, t1}))
      return false;
    if (race_)
      race_->syncThreads(raceThread(t0), raceThread(t1));
    ++f.pc;
    return true;
  }
  return arriveCollective(w, c, static_cast<int>(need));
}

bool CtaExecutor::arriveCollective(Warp &w, const CallStmt &c, int convergence) {
  // Which warps must meet here, and what they run together.
  std::pair<int, int64_t> key;
  size_t needed = 0;
  ThreadRange threads;
  std::string scopeName;
  bool named = convergence < 0;
  bool arriveOnly = idOf(c) == IntrinsicId::BarrierArrive;
  if (named) {
    LaneValues id, count;
    const CallArg *tc = c.keyword("threads");
    int lane = std::countr_zero(w.stack.back().mask);
    if (!eval(c.args.at(0).value, w, 1u << lane, id) || !tc ||
        !eval(tc->value, w, 1u << lane, count))
      return failure_ ? false : fail(c.loc, "a named barrier needs an id and a thread count");
    int64_t n = count.lane[lane].i;
    if (id.lane[lane].i < 0 || id.lane[lane].i > 15)
      return fail(c.loc,
                  fmt::format("named barrier id must be in [0, 15], not {}", id.lane[lane].i));
    if (n <= 0 || n % 32 != 0 || n > p_.threads)
      return fail(c.loc, fmt::format("named barrier thread count must be a positive multiple of "
                                     "32 up to the CTA's {} threads, not {}",
                                     p_.threads, n));
    if (w.stack.back().mask != w.fullMask)
      return fail(c.loc, fmt::format("'{}' reached by part of warp {} (active mask 0x{:08x})",
                                     c.callee, w.id, w.stack.back().mask));
    key = {-1, id.lane[lane].i};
    needed = static_cast<size_t>(n / 32);
    scopeName = fmt::format("named barrier {}", id.lane[lane].i);
  } else if (convergence == static_cast<int>(Convergence::Warpgroup)) {
    int64_t g = w.id / 4;
    key = {convergence, g};
    int64_t first = g * 4, last = std::min<int64_t>(first + 4, p_.warps);
    needed = static_cast<size_t>(last - first);
    threads = {first * 32, std::min<int64_t>(last * 32, p_.threads)};
    scopeName = fmt::format("warpgroup {}", g);
  } else {
    key = {convergence, 0};
    needed = static_cast<size_t>(p_.warps);
    threads = {0, p_.threads};
    scopeName = "the CTA";
  }
  Rendezvous &r = rendezvous_[key];
  if (r.warps.empty()) {
    r.stmt = &c;
    r.needed = needed;
    r.scopeName = scopeName;
  } else if (r.stmt != &c && !named) {
    return fail(c.loc, fmt::format("warp {} reaches '{}' here while warp {} of {} waits at {} "
                                   "for a different collective call",
                                   w.id, c.callee, r.warps.front(), scopeName, where(r.stmt->loc)));
  } else if (named && r.needed != needed) {
    return fail(c.loc, fmt::format("{} used with {} threads here but {} at {}", scopeName,
                                   needed * 32, r.needed * 32, where(r.stmt->loc)));
  }
  r.warps.push_back(w.id);
  r.waits.push_back(!arriveOnly);
  if (race_)
    for (int64_t t = w.id * 32; t < std::min<int64_t>(w.id * 32 + 32, p_.threads); ++t)
      race_->release(raceThread(t), r.joined);
  if (r.warps.size() < r.needed) {
    if (arriveOnly) {
      ++w.stack.back().pc;
      return true;
    }
    w.state = Warp::State::WaitCollective;
    w.blockedAt = &c;
    return true;
  }
  Rendezvous done = std::move(r);
  rendezvous_.erase(key);
  // Only the arrivals that wait (barrier.sync) are released by this
  // generation: a warp that only arrived (barrier.arrive) went on, and may
  // by now be blocked at another barrier, which this one does not release.
  // The warps that wait see every arrival; the collective runs after them.
  if (race_)
    for (size_t k = 0; k < done.warps.size(); ++k)
      if (done.waits[k])
        for (int64_t t = done.warps[k] * 32;
             t < std::min<int64_t>(done.warps[k] * 32 + 32, p_.threads); ++t)
          race_->acquire(raceThread(t), done.joined);
  if (!named && !runCollective(w, c, threads))
    return false;
  if (race_ && !named)
    race_->syncThreads(raceThread(threads.begin), raceThread(threads.end));
  for (size_t k = 0; k < done.warps.size(); ++k) {
    Warp &o = warps_[done.warps[k]];
    if (!done.waits[k] || done.warps[k] == w.id)
      continue;
    o.state = Warp::State::Ready;
    o.blockedAt = nullptr;
    ++o.stack.back().pc;
  }
  ++w.stack.back().pc;
  return true;
}

bool CtaExecutor::runCollective(Warp &w, const CallStmt &c, ThreadRange threads) {
  const IntrinsicInfo *info = findIntrinsic(c.callee);
  int lane = std::countr_zero(w.stack.back().mask);
  if (info->cls == CallClass::Native)
    return execNative(w, c, w.stack.back().mask, threads, lane);
  auto call = buildCall(w, c, threads, lane);
  return call && executePrimitive(*call);
}

namespace {
// Keyword arguments that name buffers (tcgen05.mma's scale_a / scale_b).
bool keywordTakesBuffer(const IntrinsicInfo &info, const std::string &keyword) {
  for (const ParamSpec &k : info.keywords)
    if (k.name == keyword)
      return k.kind == ArgKind::Buffer;
  return false;
}
} // namespace

std::optional<CtaExecutor::PrimitiveCall> CtaExecutor::buildCall(Warp &w, const CallStmt &c,
                                                                 ThreadRange threads, int lane) {
  const IntrinsicInfo *info = findIntrinsic(c.callee);
  PrimitiveCall call;
  call.call = &c;
  call.threads = threads;
  call.warpgroupScope = c.scope == ExecScope::Warpgroup;
  for (const CallArg &a : c.args) {
    if (a.keyword == "mbar" ||
        (a.keyword.empty() && call.positional.size() < info->positional.size() &&
         info->positional[call.positional.size()].kind == ArgKind::Barrier)) {
      auto b = barrierRef(a.value, w, lane);
      if (!b)
        return std::nullopt;
      call.barrier = *b;
      if (a.keyword.empty())
        call.positional.emplace_back();
      continue;
    }
    if (a.value->kind == ExprKind::StringImm)
      continue; // enumerated options (shape = "32x32b") do not change the values
    size_t index = call.positional.size();
    bool wantRegion = a.keyword.empty() ? index < info->positional.size() &&
                                              info->positional[index].kind == ArgKind::Buffer
                                        : keywordTakesBuffer(*info, a.keyword);
    auto o = operand(a.value, w, lane, wantRegion);
    if (!o)
      return std::nullopt;
    if (a.keyword.empty())
      call.positional.push_back(std::move(*o));
    else
      call.keywords[a.keyword] = std::move(*o);
  }
  return call;
}

bool CtaExecutor::execNative(Warp &w, const CallStmt &c, uint32_t mask, ThreadRange threads,
                             int lane) {
  (void)mask;
  const IntrinsicId n = idOf(c);
  if (isDeviceCall(n))
    return execDeviceCta(w, c, threads, lane);
  auto intArg = [&](std::string_view kw, int64_t fallback) -> std::optional<int64_t> {
    const CallArg *a = nullptr;
    if (kw.empty())
      a = !c.args.empty() && c.args[0].keyword.empty() ? &c.args[0] : nullptr;
    else
      a = c.keyword(kw);
    if (!a)
      return fallback;
    LaneValues v;
    if (!eval(a->value, w, 1u << lane, v))
      return std::nullopt;
    return v.lane[lane].i;
  };
  if (n == IntrinsicId::MbarrierArrive && c.keyword("cta"))
    return execRemoteArrive(w, c, lane);
  if (n == IntrinsicId::DsmemLoad || n == IntrinsicId::DsmemStore)
    return execDsmem(w, c, lane);
  if (unitOf(n) == IntrinsicUnit::Mbarrier) {
    auto bar = barrierRef(c.args.at(0).value, w, lane);
    if (!bar)
      return false;
    Mbarrier &b = barriers_[*bar];
    if (n == IntrinsicId::MbarrierInit) {
      auto count = intArg("count", 0);
      return count && barrierError(b.init(*count), *bar, c.loc);
    }
    if (n == IntrinsicId::MbarrierInval)
      return barrierError(b.inval(), *bar, c.loc);
    int64_t phaseBefore = b.phase();
    if (n == IntrinsicId::MbarrierArrive) {
      auto count = intArg("count", 1);
      if (!count || !barrierError(b.arrive(*count), *bar, c.loc))
        return false;
      releaseTo(*bar, raceAgent(threads), phaseBefore);
      return true;
    }
    auto bytes = intArg("bytes", 0);
    if (!bytes)
      return false;
    if (*bytes < 0 || *bytes > (int64_t{1} << 20) - 1)
      return fail(c.loc, fmt::format("transaction bytes must be in [0, 2^20 - 1], not {}", *bytes));
    if (n == IntrinsicId::MbarrierExpectTx)
      return barrierError(b.expectTx(*bytes), *bar, c.loc);
    if (n == IntrinsicId::MbarrierCompleteTx) {
      if (!barrierError(b.completeTx(*bytes), *bar, c.loc))
        return false;
      releaseTo(*bar, raceAgent(threads), phaseBefore);
      return true;
    }
    if (n == IntrinsicId::MbarrierArriveExpectTx) {
      if (!barrierError(b.expectTx(*bytes), *bar, c.loc) || !barrierError(b.arrive(1), *bar, c.loc))
        return false;
      releaseTo(*bar, raceAgent(threads), phaseBefore);
      return true;
    }
    return fail(c.loc, fmt::format("'{}' is not simulated yet", c.callee));
  }
  if (n == IntrinsicId::SetmaxnregInc || n == IntrinsicId::SetmaxnregDec) {
    auto regs = intArg("", 0);
    if (!regs)
      return false;
    // The range is the intrinsic table's (ir/Intrinsics.cpp), as in the static check.
    const IntRange &r = intrinsic(n).positional[0].range;
    if (*regs < r.min || *regs > r.max || *regs % r.multipleOf != 0)
      return fail(c.loc, fmt::format("setmaxnreg takes a multiple of {} in [{}, {}], not {}",
                                     r.multipleOf, r.min, r.max, *regs));
    return true;
  }
  if (n == IntrinsicId::FenceProxyAsync && race_)
    race_->fenceProxyAsync(raceAgent(threads));
  if (unitOf(n) == IntrinsicUnit::Fence || n == IntrinsicId::WgmmaFence ||
      n == IntrinsicId::Tcgen05FenceBeforeThreadSync ||
      n == IntrinsicId::Tcgen05FenceAfterThreadSync)
    return true;
  if (unitOf(n) == IntrinsicUnit::CpAsync || n == IntrinsicId::TmaStore ||
      n == IntrinsicId::TmaStoreCommit || n == IntrinsicId::TmaStoreWait)
    return execAsyncGroupNative(w, c, threads, lane);
  if (unitOf(n) == IntrinsicUnit::Tcgen05)
    return execTcgen05(w, c, threads, lane);
  if (unitOf(n) == IntrinsicUnit::Wgmma)
    return execWgmma(w, c, threads, lane);
  if (n == IntrinsicId::Ldmatrix || n == IntrinsicId::Stmatrix) {
    // Reference semantics: the warp moves the logical elements between the
    // shared tile and its register fragment, as the layouts say.
    auto call = buildCall(w, c, threads, lane);
    if (!call)
      return false;
    if (call->keywords.count("trans") && call->keywords["trans"].value.i && !transposeSource(*call))
      return false;
    return executePrimitive(*call);
  }
  if (n == IntrinsicId::TmaLoad) {
    PrimitiveCall call;
    call.call = &c;
    call.threads = threads;
    for (const CallArg &a : c.args) {
      if (a.keyword == "mbar") {
        auto b = barrierRef(a.value, w, lane);
        if (!b)
          return false;
        call.barrier = *b;
      } else if (a.keyword.empty()) {
        auto r = region(a.value, w, lane);
        if (!r)
          return false;
        Operand o;
        o.isRegion = true;
        o.region = std::move(*r);
        call.positional.push_back(std::move(o));
      }
    }
    return multicast(w, c, lane, [&](CtaExecutor &cta) { return cta.executePrimitive(call); });
  }
  return fail(c.loc, fmt::format("'{}' is not simulated yet", c.callee));
}

// --- scheduling -----------------------------------------------------------------

bool CtaExecutor::waitSatisfied(const Warp &w) const {
  for (auto [bar, parity] : w.waits)
    if (!barriers_[bar].waitSatisfied(parity))
      return false;
  return groupWaitSatisfied(w) && clusterWaitSatisfied(w) && pairAllocSatisfied(w) &&
         deviceWaitSatisfied(w);
}

bool CtaExecutor::completeAsync(size_t index) {
  if (inflight_[index].groupKind >= 0)
    return completeGroupUnit(index);
  AsyncCopy copy = std::move(inflight_[index]);
  inflight_.erase(inflight_.begin() + static_cast<long>(index));
  AsyncAgentScope scope(asyncAgent_, copy.agent);
  int64_t phaseBefore = copy.barrier >= 0 ? barriers_[copy.barrier].phase() : 0;
  if (copy.isCommit) {
    // A tcgen05.commit: the MMAs issued before it complete, in issue order,
    // then its mbarrier gets one arrival.
    for (const PrimitiveCall &mma : copy.mmas) {
      asyncAgent_ = mma.asyncAgent;
      if (!executeTcgen05Mma(mma))
        return false;
    }
    asyncAgent_ = copy.agent;
    if (copy.barrier < 0)
      return true;
    if (copy.multicastMask)
      return arriveMulticast(copy);
    if (!barrierError(barriers_[copy.barrier].arrive(1), copy.barrier, copy.loc))
      return false;
    releaseTo(copy.barrier, static_cast<uint32_t>(copy.agent), phaseBefore);
    return true;
  }
  ++stats_.asyncCopies;
  int64_t n = copy.dst.elements();
  const BufferPlan &src = p_.buffers[copy.src.buffer];
  ThreadRange none{0, 0};
  bool whole = copy.src.buffer != copy.dst.buffer && fastRegion(copy.dst) &&
               gatherBits(copy.src, none, bits_) && scatterBits(copy.dst, none, bits_);
  if (whole) {
    countAccess(copy.src, false);
    countAccess(copy.dst, true);
  }
  for (int64_t i = 0; i < n && !whole; ++i) {
    uint64_t bits = 0;
    // TMA fills elements outside the global tensor with zeros and clips stores.
    if (inBounds(copy.src, i)) {
      auto b = readBits(copy.src.buffer, bufferFlat(copy.src, i), none, copy.loc);
      if (!b)
        return false;
      bits = *b;
    } else if (src.scope != MemScope::Global) {
      return fail(copy.loc, "asynchronous copy reads outside its source");
    }
    if (inBounds(copy.dst, i)) {
      if (!writeBits(copy.dst.buffer, bufferFlat(copy.dst, i), bits, none, copy.loc))
        return false;
    } else if (p_.buffers[copy.dst.buffer].scope != MemScope::Global) {
      return fail(copy.loc, "asynchronous copy writes outside its destination");
    }
  }
  stats_.elementsMoved += n;
  if (copy.barrier >= 0) {
    if (!barrierError(barriers_[copy.barrier].completeTx(copy.bytes), copy.barrier, copy.loc))
      return false;
    releaseTo(copy.barrier, static_cast<uint32_t>(copy.agent), phaseBefore);
  }
  return true;
}

Failure CtaExecutor::deadlock() const {
  Failure f;
  f.outcome = RunResult::Outcome::Deadlock;
  f.message = fmt::format("deadlock in CTA ({}, {}, {}): every unfinished warp is blocked and "
                          "nothing is in flight",
                          ctaId_[0], ctaId_[1], ctaId_[2]);
  std::vector<int> shown;
  for (const Warp &w : warps_) {
    if (w.state == Warp::State::Done || !w.blockedAt)
      continue;
    const auto &c = static_cast<const CallStmt &>(*w.blockedAt);
    std::string what = c.scope == ExecScope::Thread
                           ? c.callee
                           : std::string(execScopePrefix(c.scope)) + "." + c.callee;
    if (w.state == Warp::State::WaitBarrier) {
      std::string waits;
      for (auto [bar, parity] : w.waits) {
        std::string one = fmt::format("{} parity {}", barrierName(bar), parity);
        if (waits.find(one) == std::string::npos)
          waits += (waits.empty() ? "" : ", ") + one;
        if (std::find(shown.begin(), shown.end(), bar) == shown.end())
          shown.push_back(bar);
      }
      if (w.waits.empty())
        waits = otherWaitText(w);
      f.notes.push_back(fmt::format("warp {} (threads {}..{}) blocked at {}: {} on {}", w.id,
                                    w.id * 32, std::min<int64_t>(w.id * 32 + 32, p_.threads) - 1,
                                    where(c.loc), what, waits));
    } else {
      size_t arrived = 0, needed = 0;
      for (const auto &[key, r] : rendezvous_)
        if (std::find(r.warps.begin(), r.warps.end(), w.id) != r.warps.end()) {
          arrived = r.warps.size();
          needed = r.needed;
        }
      f.notes.push_back(fmt::format("warp {} (threads {}..{}) blocked at {}: {} waiting for its "
                                    "scope ({} of {} warps arrived)",
                                    w.id, w.id * 32,
                                    std::min<int64_t>(w.id * 32 + 32, p_.threads) - 1, where(c.loc),
                                    what, arrived, needed));
    }
  }
  std::vector<std::string> finished;
  for (const Warp &w : warps_)
    if (w.state == Warp::State::Done)
      finished.push_back(std::to_string(w.id));
  if (!finished.empty()) {
    std::string list;
    for (const std::string &s : finished)
      list += (list.empty() ? "" : ", ") + s;
    f.notes.push_back("finished warps: " + list);
  }
  for (int bar : shown)
    f.notes.push_back(fmt::format("mbarrier {}: {}", barrierName(bar), barriers_[bar].str()));
  return f;
}

std::optional<Failure> CtaExecutor::run() {
  if (auto f = start())
    return f;
  while (true) {
    switch (tick()) {
    case Tick::Progress:
      continue;
    case Tick::Done:
      return finish();
    case Tick::Stuck:
      return deadlock();
    case Tick::Failed:
      return failure_ ? failure_ : Failure{RunResult::Outcome::RuntimeError, "internal error", {}};
    }
  }
}

std::optional<Failure> CtaExecutor::start() {
  // Poisoned (Poison.h): a read before a write sees garbage, not zeros.
  {
    std::mt19937_64 poisonRng(options_.seed ^ (static_cast<uint64_t>(ctaId_[0]) << 40) ^
                              (static_cast<uint64_t>(ctaId_[1]) << 20) ^
                              static_cast<uint64_t>(ctaId_[2]) ^ 0x9E3779B97F4A7C15ull);
    PoisonPattern pp = options_.poison;
    shared_.assign(p_.sharedBytes, poisonByte(pp, poisonRng));
    if (pp == PoisonPattern::Random)
      for (size_t at = 0; at < shared_.size(); at += 8) {
        uint64_t word = poisonRng();
        std::memcpy(&shared_[at], &word, std::min<size_t>(8, shared_.size() - at));
      }
    regs_.assign(p_.threads * p_.regsPerThread, 0);
    if (pp != PoisonPattern::Zero)
      for (const BufferPlan &b : p_.buffers) {
        if (b.scope != MemScope::Reg)
          continue;
        int bytes = std::min(b.elementBytes, 8);
        // A fixed pattern is one word; only Random draws one per register.
        uint64_t word = pp == PoisonPattern::Random ? 0 : poisonWord(pp, bytes, poisonRng);
        for (int64_t t = 0; t < p_.threads; ++t) {
          uint64_t *reg = &regs_[t * p_.regsPerThread + b.regBase];
          for (int64_t r = 0; r < b.regCount; ++r)
            reg[r] = pp == PoisonPattern::Random ? poisonWord(pp, bytes, poisonRng) : word;
        }
      }
    if (targetInfo(p_.target).hasTensorMemory) {
      tmem_.assign(128 * 512, static_cast<uint32_t>(poisonWord(pp, 4, poisonRng)));
      if (pp == PoisonPattern::Random)
        for (uint32_t &cell : tmem_)
          cell = static_cast<uint32_t>(poisonWord(pp, 4, poisonRng));
    }
    if (options_.checkUninitialized) {
      sharedInit_.assign(p_.sharedBytes, 0);
      tmemInit_.assign(tmem_.size(), 0);
    }
  }
  barriers_.assign(p_.barrierCount, Mbarrier());
  for (const BarrierPlan &b : p_.barriers)
    if (b.count > 0)
      for (int64_t i = 0; i < b.size; ++i)
        if (auto e = barriers_[b.first + i].init(b.count); e != Mbarrier::Error::None) {
          fail(b.loc, std::string(Mbarrier::errorText(e)));
          return failure_;
        }
  if (!cluster_) { // a cluster of one: the cluster barrier is this CTA's warps
    ownCluster_ = std::make_unique<ClusterState>();
    ownCluster_->ctas = {this};
    ownCluster_->barrierWarps = p_.warps;
    ownCluster_->race = race_;
    joinCluster(ownCluster_.get(), 0);
  }
  if (targetInfo(p_.target).hasTensorMemory)
    tmemOwner_.assign(512, -1);
  if (race_ && ownCluster_) // a cluster's CTAs begin together (runCluster)
    race_->beginCta(ctaId_, p_.threads, p_.sharedBytes, !tmem_.empty(),
                    static_cast<int>(p_.barrierCount));
  // Constants are filled once; every other operation writes its own lanes.
  scratch_.assign(code_->ops.size(), LaneValues());
  for (size_t i = 0; i < code_->ops.size(); ++i)
    if (code_->ops[i].kind == OpKind::Constant)
      scratch_[i] = code_->ops[i].constant;
  warps_.assign(p_.warps, Warp());
  for (int64_t i = 0; i < p_.warps; ++i) {
    Warp &w = warps_[i];
    w.id = static_cast<int>(i);
    int64_t lanes = std::min<int64_t>(32, p_.threads - i * 32);
    w.fullMask = lanes == 32 ? 0xFFFFFFFFu : (1u << lanes) - 1;
    w.slots.assign(p_.slots, LaneValues());
    w.slotVersion.assign(p_.slots, 0);
    w.fusedOffsets.assign(code_->fusedAccesses, FusedOffsets());
    w.stack.push_back(Frame{&p_.kernel->body, 0, w.fullMask});
    w.stack.back().code = code_->block(p_.kernel->body);
  }
  return std::nullopt;
}

CtaExecutor::Tick CtaExecutor::tick() {
  std::vector<int> &ready = ready_;
  if (stats_.steps > options_.maxSteps) {
    failure_ = Failure{RunResult::Outcome::StepBudget,
                       fmt::format("step budget of {} warp statements exhausted in CTA ({}, {}, "
                                   "{}); the kernel may not terminate (raise it with --max-steps)",
                                   options_.maxSteps, ctaId_[0], ctaId_[1], ctaId_[2]),
                       {}};
    return Tick::Failed;
  }
  // Time, every 1024 scheduler ticks: options.deadline (wall time) and the
  // command's budget (ir/Budget.h: processor time and wall time).
  if (++ticksSinceClock_ >= 1024) {
    ticksSinceClock_ = 0;
    bool pastOption = options_.deadline != std::chrono::steady_clock::time_point::max() &&
                      std::chrono::steady_clock::now() > options_.deadline;
    Budget *budget = pastOption ? nullptr : activeBudget();
    if (pastOption || (budget && budget->expired())) {
      // The budget's processor time (--timeout-ms) or its wall-time backstop.
      bool cpu = budget && budget->exceeded() == BudgetKind::CpuTime;
      std::string which =
          !budget ? "wall-time budget"
          : cpu   ? fmt::format("CPU-time budget of {} ms", budget->limits().timeoutMs)
                  : fmt::format("wall-time budget of {} ms", budget->limits().wallTimeoutMs);
      failure_ = Failure{
          RunResult::Outcome::TimeBudget,
          fmt::format("{} exhausted in CTA ({}, {}, {}) after {} warp statements; "
                      "the kernel may not terminate{}",
                      which, ctaId_[0], ctaId_[1], ctaId_[2], stats_.steps,
                      budget ? fmt::format(" (raise it with {})", budgetOption(budget->exceeded()))
                             : ""),
          {}};
      return Tick::Failed;
    }
  }
  if (devices_ && deviceGateClosed()) { // device.barrier / a collective (Devices.cpp)
    if (inflight_.empty())
      return Tick::Stuck;
    return completeAsync(rng_() % inflight_.size()) ? Tick::Progress : Tick::Failed;
  }
  ready.clear();
  bool allDone = true;
  for (Warp &w : warps_) {
    if (w.state == Warp::State::WaitBarrier && waitSatisfied(w)) {
      w.state = Warp::State::Ready;
      w.blockedAt = nullptr;
    }
    if (w.state == Warp::State::Ready)
      ready.push_back(w.id);
    allDone &= w.state == Warp::State::Done;
  }
  // Every thread has finished: the CTA exits and its shared memory goes back
  // to the SM, so a group copy still touching it (a bulk store that has not
  // read its source: groupKind 1; a cp.async not yet landed: groupKind 0) is
  // an error, as verifier/AsyncDrain.h reports statically.
  if (allDone)
    for (const AsyncCopy &u : inflight_)
      if (u.groupKind == 0 || (u.groupKind == 1 && !u.sourceRead)) {
        bool store = u.groupKind == 1;
        fail(u.loc, fmt::format(
                        "the CTA exits while this {} still {} shared '{}': no {} of thread "
                        "{} retired its group before the kernel ended",
                        intrinsicName(store ? IntrinsicId::TmaStore : IntrinsicId::CpAsync),
                        store ? "reads its source in" : "writes its destination in",
                        plan(store ? u.src.buffer : u.dst.buffer).name,
                        intrinsicName(store ? IntrinsicId::TmaStoreWait : IntrinsicId::CpAsyncWait),
                        u.groupThread));
        return Tick::Failed;
      }
  if (!inflight_.empty() && (ready.empty() || rng_() % 4 == 0)) {
    size_t pick = rng_() % inflight_.size();
    // tcgen05 operations complete in issue order: a commit unit is only
    // taken after every older one.
    if (inflight_[pick].isCommit)
      for (size_t i = 0; i < pick; ++i)
        if (inflight_[i].isCommit) {
          pick = i;
          break;
        }
    return completeAsync(pick) ? Tick::Progress : Tick::Failed;
  }
  if (ready.empty())
    return allDone ? Tick::Done : Tick::Stuck;
  Warp &w = warps_[ready[rng_() % ready.size()]];
  int quantum = 1 + static_cast<int>(rng_() % 64);
  for (int q = 0; q < quantum && w.state == Warp::State::Ready && deviceGate_ < 0;) {
    // Whole iterations of a fused loop where they fit, else one statement:
    // the same steps in the same order either way.
    int ran = runFusedLoop(w, quantum - q);
    if (ran == 0) {
      if (!step(w))
        return Tick::Failed;
      ran = 1;
    }
    q += ran;
  }
  return Tick::Progress;
}

std::optional<Failure> CtaExecutor::finish() {
  if (!rendezvous_.empty())
    return deadlock();
  if (auto f = unfreedTensorMemory())
    return f;
  stats_.stepsPerWarp.resize(warps_.size(), 0);
  for (const Warp &w : warps_)
    stats_.stepsPerWarp[w.id] += w.steps;
  return std::nullopt;
}

// --- the run --------------------------------------------------------------------

std::vector<std::array<int64_t, 3>> sampleCtas(const std::array<int64_t, 3> &grid, int64_t count,
                                               uint64_t seed) {
  int64_t total = grid[0] * grid[1] * grid[2];
  std::vector<std::array<int64_t, 3>> out;
  auto add = [&](std::array<int64_t, 3> c) {
    if (std::find(out.begin(), out.end(), c) == out.end())
      out.push_back(c);
  };
  if (count <= 0 || count >= total) {
    for (int64_t z = 0; z < grid[2]; ++z)
      for (int64_t y = 0; y < grid[1]; ++y)
        for (int64_t x = 0; x < grid[0]; ++x)
          out.push_back({x, y, z});
    return out;
  }
  // The first corner, then the opposite one (two samples differ in every
  // dimension: Coverage.h infers tiles from them), then the others.
  for (int corner : {0, 7, 1, 2, 3, 4, 5, 6}) {
    if (static_cast<int64_t>(out.size()) >= count)
      break;
    add({corner & 1 ? grid[0] - 1 : 0, corner & 2 ? grid[1] - 1 : 0, corner & 4 ? grid[2] - 1 : 0});
  }
  std::mt19937_64 rng(seed ^ 0x9E3779B97F4A7C15ull);
  while (static_cast<int64_t>(out.size()) < count) {
    int64_t i = static_cast<int64_t>(rng() % static_cast<uint64_t>(total));
    add({i % grid[0], (i / grid[0]) % grid[1], i / (grid[0] * grid[1])});
  }
  return out;
}

RunResult runProgram(const Program &program, std::vector<HostTensor> &tensors,
                     const EngineOptions &options) {
  RunResult result;
  auto start = std::chrono::steady_clock::now();
  std::clock_t cpuStart = std::clock();
  int64_t perCta = program.sharedBytes + program.threads * program.regsPerThread * 8 +
                   program.warps * (program.slots * static_cast<int64_t>(sizeof(LaneValues)));
  if (perCta + program.hostBytes() > options.memoryCapBytes) {
    result.outcome = RunResult::Outcome::MemoryCap;
    result.message = fmt::format("the simulated state needs {} bytes per CTA plus {} bytes of "
                                 "layout tables, over the memory cap of {} bytes",
                                 perCta, program.hostBytes(), options.memoryCapBytes);
    return result;
  }
  std::vector<std::array<int64_t, 3>> ctas =
      options.ctas.empty() ? sampleCtas(program.grid, 0, options.seed) : options.ctas;
  std::mt19937_64 rng(options.seed);
  std::unique_ptr<RaceDetector> race;
  if (options.detectRaces)
    race = std::make_unique<RaceDetector>();
  if (program.clusterSize() > 1) {
    runClusters(program, tensors, options, ctas, rng, race.get(), result);
    ctas.clear();
  }
  for (const auto &cta : ctas) {
    CtaExecutor exec(program, tensors, options, result.stats, cta, rng);
    exec.attachRaceDetector(race.get());
    auto failure = exec.run();
    if (auto f = failure) {
      result.outcome = f->outcome;
      result.message = std::move(f->message);
      result.notes = std::move(f->notes);
      break;
    }
    ++result.stats.ctas;
    if (options.afterUnit)
      options.afterUnit(cta);
  }
  if (race)
    result.races = describeRaces(*race, program, options);
  result.stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.stats.cpuSeconds = static_cast<double>(std::clock() - cpuStart) / CLOCKS_PER_SEC;
  return result;
}

} // namespace tilescope::sim
