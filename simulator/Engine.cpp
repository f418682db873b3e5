#include "simulator/CtaExecutor.h"
#include "simulator/Lanes.h"
#include "simulator/Packed.h"

#include "ir/Budget.h"
#include "ir/DeviceScale.h"
#include "ir/Intrinsics.h"
#include "ir/Printer.h"
#include "ir/ThreadIndex.h"

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

// --- the CTA ------------------------------------------------------------------

CtaExecutor::CtaExecutor(const Program &program, std::vector<HostTensor> &tensors,
                         const EngineOptions &options, RunStats &stats,
                         std::array<int64_t, 3> ctaId, std::mt19937_64 &rng)
    : p_(program), code_(program.code.get()), tensors_(tensors), options_(options), stats_(stats),
      ctaId_(ctaId), rng_(rng) {}

namespace {

// The storage of the last CTA that ended on this thread.
struct SpareStorage {
  std::vector<uint8_t> shared, sharedInit, tmemInit;
  std::vector<uint64_t> regs;
  std::vector<uint32_t> tmem;
};
thread_local SpareStorage spare;

template <typename T> void keepLarger(std::vector<T> &kept, std::vector<T> &mine) {
  if (mine.capacity() > kept.capacity())
    kept.swap(mine);
}

} // namespace

CtaExecutor::~CtaExecutor() {
  keepLarger(spare.shared, shared_);
  keepLarger(spare.sharedInit, sharedInit_);
  keepLarger(spare.tmemInit, tmemInit_);
  keepLarger(spare.regs, regs_);
  keepLarger(spare.tmem, tmem_);
}

void CtaExecutor::takeSpareStorage() {
  // Only the capacity of the rest: each is empty until start() assigns it.
  auto take = [](auto &mine, auto &kept) {
    mine.swap(kept);
    mine.clear();
  };
  // Shared memory keeps its size and bytes too: start() poisons it
  // on first use (poisonShared), and resizing would zero it.
  shared_.swap(spare.shared);
  sharedInit_.swap(spare.sharedInit);
  take(tmemInit_, spare.tmemInit);
  regs_.swap(spare.regs); // overwritten by start() without clearing first
  take(tmem_, spare.tmem);
}

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
  if (auto m = threadIndexMap(b))
    return threadIndexValue(*m, t);
  switch (b) {
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
  default: // the thread indices, above
    return 0;
  }
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
    if (failure_) // the fused pass met the statement's error (FusedStore.cpp)
      return false;
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
        if (deviceTraced_) // element stores, for the device race detector
          forLanes(mask, [&](int l) {
            deviceAccess(devid_, bp.tensor, flat[l], true, as<Store>(s).target->loc);
          });
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
  if (need == Convergence::Warpgroup && splitsPerWarp(c)) {
    // No rendezvous: this warp does its share now (WarpShare.cpp).
    int64_t t0 = w.id * 32, t1 = std::min<int64_t>(t0 + 32, p_.threads);
    auto call = buildCall(w, c, {t0, t1}, std::countr_zero(mask));
    if (!call)
      return false;
    call->warpShare = true;
    if (!executePrimitive(*call))
      return false;
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
  // wg.gemm lowers to wgmma instructions, which wait for the warpgroup's
  // warps but order none of their threads' memory accesses: a unit, not a
  // rendezvous, for the race detector (RaceDetector::beginUnit).
  bool unit = idOf(c) == IntrinsicId::Gemm &&
              convergence == static_cast<int>(Convergence::Warpgroup);
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
    if (n <= 0 || n % kThreadsPerWarp != 0 || n > p_.threads)
      return fail(c.loc, fmt::format("named barrier thread count must be a positive multiple of "
                                     "32 up to the CTA's {} threads, not {}",
                                     p_.threads, n));
    if (w.stack.back().mask != w.fullMask)
      return fail(c.loc, fmt::format("'{}' reached by part of warp {} (active mask 0x{:08x})",
                                     c.callee, w.id, w.stack.back().mask));
    key = {-1, id.lane[lane].i};
    needed = static_cast<size_t>(n / kThreadsPerWarp);
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
  if (race_ && !unit)
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
  if (race_ && !unit)
    for (size_t k = 0; k < done.warps.size(); ++k)
      if (done.waits[k])
        for (int64_t t = done.warps[k] * 32;
             t < std::min<int64_t>(done.warps[k] * 32 + 32, p_.threads); ++t)
          race_->acquire(raceThread(t), done.joined);
  std::optional<VectorClock> own;
  if (race_ && unit)
    own = race_->beginUnit(raceThread(threads.begin), raceThread(threads.end));
  if (!named && !runCollective(w, c, threads))
    return false;
  if (race_ && own)
    race_->endUnit(raceThread(threads.begin), raceThread(threads.end), std::move(*own));
  else if (race_ && !named)
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
  if (n == IntrinsicId::FenceProxyAsync) {
    const CallArg *space = c.keyword("space");
    bool global = space && space->value->kind == ExprKind::StringImm &&
                  as<StringImm>(space->value).value == "global";
    if (race_)
      race_->fenceProxyAsync(raceAgent(threads), global);
    if (global && devices_)
      deviceProxyFence();
  }
  if (race_ && asyncAgent_ < 0 &&
      (n == IntrinsicId::Tcgen05FenceBeforeThreadSync ||
       n == IntrinsicId::Tcgen05FenceAfterThreadSync))
    for (int64_t t = threads.begin; t < threads.end; ++t)
      n == IntrinsicId::Tcgen05FenceAfterThreadSync ? race_->tcgen05FenceAfter(raceThread(t))
                                                     : race_->tcgen05FenceBefore(raceThread(t));
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

} // namespace tilescope::sim
