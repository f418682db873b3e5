// The device scale in the simulator: device groups, the device.* natives and
// happens-before across devices (Devices.h explains the model).
#include "simulator/Devices.h"

#include "ir/DeviceScale.h"
#include "simulator/Lanes.h"
#include "simulator/Value.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace tilescope::sim {

namespace {

int64_t agentOf(const DeviceGroup &g, int dev) {
  return g.index * g.ndev + dev;
}

std::string elementText(const std::vector<int64_t> &shape, int64_t flat) {
  std::string out;
  for (size_t d = shape.size(); d-- > 0;) {
    out = std::to_string(flat % shape[d]) + (out.empty() ? "" : ", ") + out;
    flat /= shape[d];
  }
  return "[" + out + "]";
}

// The plan of the global tensor with host index `tensor`.
const BufferPlan &tensorPlan(const Program &p, int tensor) {
  for (const BufferPlan &b : p.buffers)
    if (b.scope == MemScope::Global && b.tensor == tensor)
      return b;
  return p.buffers.front();
}

void joinClocks(std::vector<uint32_t> &into, const std::vector<uint32_t> &from) {
  if (into.size() < from.size())
    into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i)
    into[i] = std::max(into[i], from[i]);
}

// Every device of the group arrived: join the clocks (a barrier orders
// everything before it on every device before everything after it).
void joinAll(DeviceGroup &g) {
  if (!g.race)
    return;
  std::vector<uint32_t> all(g.ndev, 0);
  for (const auto &c : g.clock)
    joinClocks(all, c);
  for (int d = 0; d < g.ndev; ++d) {
    g.clock[d] = all;
    ++g.clock[d][d];
  }
}

} // namespace

// --- race detection -----------------------------------------------------------

bool CtaExecutor::groupTracesRaces(const DeviceGroup *group) {
  return group && group->race;
}

void CtaExecutor::deviceAccess(int memDevice, int tensor, int64_t flat, bool write,
                               llvm::SMLoc loc) {
  DeviceGroup &g = *devices_;
  g.lastGlobalWrite[devid_] = ++deviceStamp_; // a later fence orders this access
  if (!g.race || !deviceRace_)
    return;
  int64_t me = agentOf(g, devid_);
  uint32_t now = g.clock[devid_][devid_];
  DeviceShadow &s = deviceRace_->shadow[{memDevice, tensor, flat}];
  auto ordered = [&](int64_t agent, uint32_t clock) {
    if (agent == me)
      return true;
    if (agent / g.ndev != g.index) // another group: never ordered
      return false;
    return g.clock[devid_][agent % g.ndev] >= clock;
  };
  auto report = [&](int64_t agent, bool firstWrite, llvm::SMLoc firstLoc) {
    if (deviceRace_->races.size() >= 32)
      return;
    const BufferPlan &b = tensorPlan(p_, tensor);
    DetectedRace r;
    r.kind = "device race";
    r.space = memDevice == devid_ ? "global" : "peer global";
    r.buffer = b.name;
    r.element = elementText(b.shape, flat);
    r.address = flat;
    r.cta = ctaId_;
    int firstDev = static_cast<int>(agent % g.ndev);
    r.first.agent = fmt::format("device {} CTA {} ({})", firstDev,
                                agent / g.ndev == g.index ? "of this group" : "of another group",
                                firstWrite ? "write" : "read");
    r.first.write = firstWrite;
    r.first.location = where(firstLoc);
    r.second.agent =
        fmt::format("device {} CTA ({}, {}, {})", devid_, ctaId_[0], ctaId_[1], ctaId_[2]);
    r.second.write = write;
    r.second.location = where(loc);
    r.second.cta = ctaId_;
    r.text = fmt::format("{}: device race on device {}'s {}{}: {} by device {} at {} and {} by "
                         "device {} here, not ordered by a fenced signal and its wait, a device "
                         "barrier or a collective",
                         where(loc), memDevice, b.name, r.element, firstWrite ? "write" : "read",
                         firstDev, r.first.location, write ? "write" : "read", devid_);
    for (const DetectedRace &old : deviceRace_->races)
      if (old.first.location == r.first.location && old.second.location == r.second.location)
        return;
    deviceRace_->races.push_back(std::move(r));
  };
  if (s.writer >= 0 && !ordered(s.writer, s.writeClock))
    report(s.writer, true, s.writeLoc);
  // A TMA copy reads through the async proxy: a generic write (a peer's or
  // the own CTA's) needs the global proxy fence.
  if (!write && tmaIssue_ >= 0 && s.writer >= 0 && s.genericWrite &&
      ordered(s.writer, s.writeClock)) {
    if (!deviceProxyFenced(s, tmaIssue_) && deviceRace_->races.size() < 32) {
      const BufferPlan &b = tensorPlan(p_, tensor);
      int firstDev = static_cast<int>(s.writer % g.ndev);
      DetectedRace r;
      r.kind = "missing fence.proxy.async";
      r.space = memDevice == devid_ ? "global" : "peer global";
      r.buffer = b.name;
      r.element = elementText(b.shape, flat);
      r.address = flat;
      r.cta = ctaId_;
      r.first.agent = fmt::format("device {} CTA (write)", firstDev);
      r.first.write = true;
      r.first.location = where(s.writeLoc);
      r.second.agent =
          fmt::format("device {} CTA ({}, {}, {})", devid_, ctaId_[0], ctaId_[1], ctaId_[2]);
      r.second.location = where(loc);
      r.second.cta = ctaId_;
      r.text = fmt::format(
          "{}: missing fence.proxy.async on device {}'s {}{}: written through the generic proxy "
          "by device {} at {} and read by a TMA copy (the async proxy) of device {} here, with "
          "no fence.proxy.async(space = \"global\") by the writer after the write and before "
          "its signal, or by the reader after its wait and before the copy",
          where(loc), memDevice, b.name, r.element, firstDev, r.first.location, devid_);
      bool dup = false;
      for (const DetectedRace &old : deviceRace_->races)
        dup |= old.kind == r.kind && old.first.location == r.first.location &&
               old.second.location == r.second.location;
      if (!dup)
        deviceRace_->races.push_back(std::move(r));
    }
  }
  if (write)
    for (const auto &[agent, read] : s.reads)
      if (!ordered(agent, read.first))
        report(agent, false, read.second);
  if (write) {
    s.writer = me;
    s.writeClock = now;
    s.writeLoc = loc;
    s.genericWrite = !asyncCompleting_;
    s.writeStamp = deviceStamp_;
    s.reads.clear();
  } else {
    s.reads[me] = {now, loc};
  }
}

void CtaExecutor::deviceProxyFence() {
  DeviceGroup &g = *devices_;
  if (!g.race)
    return;
  g.proxyFences[devid_].push_back({++deviceStamp_, g.clock[devid_]});
}

bool CtaExecutor::deviceProxyFenced(const DeviceShadow &s, int64_t issueStamp) const {
  const DeviceGroup &g = *devices_;
  int writerDev = static_cast<int>(s.writer % g.ndev);
  // The own CTA's write: a fence of the CTA between the write and the issue
  // (CTA granularity: which thread fenced is RaceDetector's question).
  if (writerDev == devid_ && s.writer / g.ndev == g.index) {
    for (const auto &[stamp, clock] : g.proxyFences[devid_])
      if (stamp > s.writeStamp && stamp < issueStamp)
        return true;
    return false;
  }
  // The writer's fence after the write, before the release this CTA acquired.
  for (const auto &[stamp, clock] : g.proxyFences[writerDev])
    if (stamp > s.writeStamp && clock[writerDev] <= g.clock[devid_][writerDev])
      return true;
  // This CTA's fence after it observed the write, before the copy's issue.
  for (const auto &[stamp, clock] : g.proxyFences[devid_])
    if (stamp < issueStamp && clock[writerDev] >= s.writeClock)
      return true;
  return false;
}

// --- the thread-level natives: signal, wait, fence ----------------------------

bool CtaExecutor::execDeviceThread(Warp &w, Frame &f, const CallStmt &c) {
  DeviceGroup &g = *devices_;
  uint32_t mask = f.mask;
  const IntrinsicId id = idOf(c);
  if (id == IntrinsicId::DeviceFence) {
    forLanes(mask, [&](int l) { deviceFence_[w.id * 32 + l] = ++deviceStamp_; });
    ++f.pc;
    return true;
  }
  bool signal = id == IntrinsicId::DeviceSignal;
  w.deviceWaits.clear();
  bool ok = true;
  forLanes(mask, [&](int l) {
    if (!ok)
      return;
    auto flag = region(c.args.at(0).value, w, l);
    LaneValues value, peer;
    const CallArg *va = c.keyword("value");
    const CallArg *da = c.keyword("dev");
    if (!flag || !va || !eval(va->value, w, 1u << l, value) ||
        (signal && (!da || !eval(da->value, w, 1u << l, peer)))) {
      ok = false;
      return;
    }
    const BufferPlan &b = p_.buffers[flag->buffer];
    if (b.scope != MemScope::Global || flag->elements() != 1 || !inBounds(*flag, 0)) {
      ok = fail(c.loc, fmt::format("'{}' needs one element of a global tensor inside its bounds",
                                   c.callee));
      return;
    }
    int64_t flat = bufferFlat(*flag, 0);
    uint32_t v = static_cast<uint32_t>(value.lane[l].i);
    if (!signal) {
      w.deviceWaits.push_back({b.tensor, flat, v, w.id * 32 + l});
      return;
    }
    int64_t p = peer.lane[l].i;
    if (p < 0 || p >= g.ndev) {
      ok = fail(c.loc,
                fmt::format("device.signal to device {}: the launch has {} devices", p, g.ndev));
      return;
    }
    int t = w.id * 32 + l;
    HostTensor &target = (*g.memory[p])[b.tensor];
    target.setBits(flat, encodeInt(b.dtype, v));
    target.written[flat] = 1;
    std::tuple<int, int, int64_t> key{static_cast<int>(p), b.tensor, flat};
    g.unobserved[key] = {v, c.loc};
    if (g.race) {
      // st.relaxed.sys releases only after fence.acq_rel.sys that follows
      // every global access of the CTA.
      if (deviceFence_[t] > g.lastGlobalWrite[devid_])
        joinClocks(g.released[key], g.clock[devid_]);
      ++g.clock[devid_][devid_];
    }
  });
  if (!ok)
    return failure_ ? false : fail(c.loc, fmt::format("'{}' needs its flag and value", c.callee));
  if (signal) {
    ++f.pc;
    return true;
  }
  if (!deviceWaitSatisfied(w)) {
    w.state = Warp::State::WaitBarrier;
    w.blockedAt = &c;
    return true;
  }
  if (!acquireDeviceWaits(w, c))
    return false;
  ++f.pc;
  return true;
}

bool CtaExecutor::deviceWaitSatisfied(const Warp &w) const {
  if (!devices_)
    return true;
  if (w.channelPhase >= 0) {
    auto ch = devices_->warpChannels.find(w.id);
    if (ch != devices_->warpChannels.end() && ch->second.phase <= w.channelPhase)
      return false;
  }
  for (const DeviceFlagWait &dw : w.deviceWaits) {
    uint64_t bits = (*devices_->memory[devid_])[dw.tensor].bitsAt(dw.flat);
    if (static_cast<int32_t>(static_cast<uint32_t>(bits) - dw.value) < 0)
      return false;
  }
  return true;
}

bool CtaExecutor::acquireDeviceWaits(Warp &w, const CallStmt &c) {
  DeviceGroup &g = *devices_;
  for (const DeviceFlagWait &dw : w.deviceWaits) {
    std::tuple<int, int, int64_t> key{devid_, dw.tensor, dw.flat};
    // Epoch discipline: a thread that waits again for a value it already
    // waited for passes at once, on the old signal.
    auto consumed = g.consumed.find({devid_, dw.tensor, dw.flat, dw.thread});
    if (consumed != g.consumed.end() && static_cast<int32_t>(dw.value - consumed->second) <= 0) {
      const BufferPlan &b = tensorPlan(p_, dw.tensor);
      return fail(c.loc, fmt::format("flag reused without an epoch: this wait on {}{} of device {} "
                                     "for {} passes on a value the same thread already waited for "
                                     "({}); give every use of a flag a new value",
                                     b.name, elementText(b.shape, dw.flat), devid_, dw.value,
                                     consumed->second));
    }
    g.consumed[{devid_, dw.tensor, dw.flat, dw.thread}] = dw.value;
    auto it = g.unobserved.find(key);
    if (it != g.unobserved.end() && static_cast<int32_t>(it->second.first - dw.value) >= 0)
      g.unobserved.erase(it);
    if (g.race) {
      auto r = g.released.find(key);
      if (r != g.released.end())
        joinClocks(g.clock[devid_], r->second);
    }
  }
  w.deviceWaits.clear();
  return true;
}

std::string CtaExecutor::deviceWaitText(const Warp &w) const {
  std::string out;
  if (w.channelPhase >= 0 && !deviceWaitSatisfied(w)) {
    const DeviceGroup::WarpChannel &ch = devices_->warpChannels.at(w.id);
    std::string missing;
    for (int d = 0; d < devices_->ndev; ++d)
      if (ch.arrivedPhase[d] != ch.phase)
        missing += (missing.empty() ? "" : ", ") + std::to_string(d);
    return fmt::format("the warp collective of warp {} (its phase {}), which device {} has not "
                       "called",
                       w.id, ch.phase, missing);
  }
  for (const DeviceFlagWait &dw : w.deviceWaits) {
    const BufferPlan &b = tensorPlan(p_, dw.tensor);
    uint64_t bits = (*devices_->memory[devid_])[dw.tensor].bitsAt(dw.flat);
    std::string one =
        fmt::format("flag {}{} of device {} to reach {} (it holds {})", b.name,
                    elementText(b.shape, dw.flat), devid_, dw.value, static_cast<uint32_t>(bits));
    if (out.find(one) == std::string::npos)
      out += (out.empty() ? "" : ", ") + one;
  }
  return out;
}

// --- the CTA-level natives: put, get, barrier, collectives --------------------

const Layout *CtaExecutor::placementOf(const BufferPlan &b) const {
  const auto *placements = devices_ ? devices_->placements : nullptr;
  if (!placements || b.scope != MemScope::Global || b.tensor < 0 ||
      static_cast<size_t>(b.tensor) >= placements->size() || !(*placements)[b.tensor])
    return nullptr;
  return &*(*placements)[b.tensor];
}

// The logical element a placement puts at (device, instance element), or -1
// when it puts none there.
static int64_t logicalAt(const Layout &placement, int64_t device, int64_t element) {
  PhysCoord at;
  at.set(Axis::pid, device);
  at.set(Axis::m, element);
  std::vector<int64_t> found = placement.preimages(at, 1);
  return found.empty() ? -1 : found.front();
}

bool CtaExecutor::movesOntoItself(const Layout &srcPlacement, int64_t srcDevice, int64_t srcFlat,
                                  const Layout &dstPlacement, int64_t dstDevice, int64_t dstFlat,
                                  const CallStmt &c, const std::string &srcName,
                                  const std::string &dstName) {
  int64_t from = logicalAt(srcPlacement, srcDevice, srcFlat);
  int64_t to = logicalAt(dstPlacement, dstDevice, dstFlat);
  if (from == to && from >= 0)
    return true;
  auto describe = [](int64_t logical) {
    return logical < 0 ? std::string("no logical element")
                       : fmt::format("logical element {}", logical);
  };
  return fail(c.loc, fmt::format("'{}' moves {} of '{}' (device {}, element {}) to {} of '{}' "
                                 "(device {}, element {}): the access disagrees with the "
                                 "tensors' declared placements",
                                 c.callee, describe(from), srcName, srcDevice, srcFlat,
                                 describe(to), dstName, dstDevice, dstFlat));
}

bool CtaExecutor::deviceGateClosed() {
  if (deviceGate_ < 0)
    return false;
  if (devices_->phase > deviceGate_) {
    deviceGate_ = -1;
    return false;
  }
  return true;
}

bool CtaExecutor::execDeviceCta(Warp &w, const CallStmt &c, ThreadRange threads, int lane) {
  DeviceGroup &g = *devices_;
  const IntrinsicId id = idOf(c);
  if (id == IntrinsicId::DevicePut || id == IntrinsicId::DeviceGet) {
    bool put = id == IntrinsicId::DevicePut;
    auto dst = region(c.args.at(0).value, w, lane);
    auto src = dst ? region(c.args.at(1).value, w, lane) : std::nullopt;
    LaneValues peer;
    const CallArg *da = c.keyword("dev");
    if (!dst || !src || !da || !eval(da->value, w, 1u << lane, peer))
      return failure_ ? false : fail(c.loc, fmt::format("'{}' needs dst, src and dev", c.callee));
    int64_t p = peer.lane[lane].i;
    if (p < 0 || p >= g.ndev)
      return fail(c.loc,
                  fmt::format("'{}' to device {}: the launch has {} devices", c.callee, p, g.ndev));
    const Region &remote = put ? *dst : *src;
    const BufferPlan &rb = p_.buffers[remote.buffer];
    if (rb.scope != MemScope::Global)
      return fail(c.loc, fmt::format("'{}': the peer's side must be a global tensor, not {} "
                                     "memory ('{}')",
                                     c.callee, memScopeName(rb.scope), rb.name));
    if (dst->elements() != src->elements())
      return fail(c.loc, fmt::format("'{}': dst has {} elements, src {}", c.callee, dst->elements(),
                                     src->elements()));
    const BufferPlan &db = p_.buffers[dst->buffer], &sb = p_.buffers[src->buffer];
    std::vector<HostTensor> &peerMemory = *g.memory[p];
    const Layout *dstPlacement = placementOf(db), *srcPlacement = placementOf(sb);
    for (int64_t i = 0; i < dst->elements(); ++i) {
      if (!inBounds(*dst, i) || !inBounds(*src, i))
        return fail(c.loc, fmt::format("'{}' reaches outside '{}'", c.callee,
                                       inBounds(*dst, i) ? sb.name : db.name));
      int64_t df = bufferFlat(*dst, i), sf = bufferFlat(*src, i);
      if (dstPlacement && srcPlacement &&
          !movesOntoItself(*srcPlacement, put ? devid_ : p, sf, *dstPlacement, put ? p : devid_, df,
                           c, sb.name, db.name))
        return false;
      uint64_t bits;
      if (put) {
        auto v = readBits(src->buffer, sf, threads, c.loc);
        if (!v)
          return false;
        bits = *v;
      } else {
        bits = peerMemory[sb.tensor].bitsAt(sf);
        deviceAccess(static_cast<int>(p), sb.tensor, sf, false, c.loc);
      }
      if (db.dtype != sb.dtype)
        bits = isFloat(db.dtype) ? encodeFloat(db.dtype, decodeFloat(sb.dtype, bits))
                                 : encodeInt(db.dtype, decodeInt(sb.dtype, bits));
      if (put) {
        peerMemory[db.tensor].setBits(df, bits);
        peerMemory[db.tensor].written[df] = 1;
        deviceAccess(static_cast<int>(p), db.tensor, df, true, c.loc);
      } else if (!writeBits(dst->buffer, df, bits, threads, c.loc)) {
        return false;
      }
    }
    stats_.elementsMoved += dst->elements();
    return true;
  }
  // device.barrier and the collectives: arrive; the last device runs the
  // collective for all; every CTA waits for the phase to complete.
  DeviceArrival a;
  a.call = &c;
  a.threads = threads;
  if (id != IntrinsicId::DeviceBarrier) {
    auto dst = region(c.args.at(0).value, w, lane);
    auto src = dst ? region(c.args.at(1).value, w, lane) : std::nullopt;
    if (!dst || !src)
      return failure_ ? false : fail(c.loc, fmt::format("'{}' needs dst and src", c.callee));
    a.dst = *dst;
    a.src = *src;
    if (const CallArg *impl = c.keyword("impl"); impl && impl->value->kind == ExprKind::StringImm)
      a.impl = as<StringImm>(impl->value).value;
  }
  if (id == IntrinsicId::DeviceWarpAllreduce) {
    // A warp collective: channel w pairs warp w of every device; only the
    // calling warp waits for it (deviceWaitSatisfied).
    DeviceGroup::WarpChannel &ch = g.warpChannels[w.id];
    if (ch.arrivals.empty()) {
      ch.arrivedPhase.assign(g.ndev, -1);
      ch.arrivals.resize(g.ndev);
    }
    ch.arrivals[devid_] = std::move(a);
    ch.arrivedPhase[devid_] = ch.phase;
    for (int d = 0; d < g.ndev; ++d)
      if (ch.arrivedPhase[d] != ch.phase) {
        w.channelPhase = ch.phase;
        w.state = Warp::State::WaitBarrier;
        w.blockedAt = &c;
        return true;
      }
    if (!completeDevicePhase(ch.arrivals))
      return false;
    ++ch.phase;
    return true;
  }
  g.arrivals[devid_] = std::move(a);
  g.arrivedPhase[devid_] = g.phase;
  deviceGate_ = g.phase;
  for (int d = 0; d < g.ndev; ++d)
    if (g.arrivedPhase[d] != g.phase)
      return true;
  if (!completeDevicePhase(g.arrivals))
    return false;
  ++g.phase;
  return true;
}

bool CtaExecutor::completeDevicePhase(std::vector<DeviceArrival> &arrivals) {
  DeviceGroup &g = *devices_;
  const DeviceArrival &mine = arrivals[devid_];
  const IntrinsicId id = idOf(*mine.call);
  // Every device must be at the same call on the same tile.
  for (int d = 0; d < g.ndev; ++d) {
    const DeviceArrival &o = arrivals[d];
    CtaExecutor *peer = g.ctas[d];
    if (idOf(*o.call) != id)
      return fail(mine.call->loc,
                  fmt::format("device {} reaches '{}' while device {} waits at '{}' ({}): the "
                              "devices disagree on the sequence of device collectives",
                              devid_, mine.call->callee, d, o.call->callee,
                              peer->where(o.call->loc)));
    if (o.impl != mine.impl)
      return fail(mine.call->loc, fmt::format("device {} runs '{}' with impl '{}', device {} "
                                              "with '{}'",
                                              devid_, mine.call->callee, mine.impl, d, o.impl));
    if (id == IntrinsicId::DeviceBarrier)
      continue;
    auto same = [](const Region &x, const Region &y) {
      return x.buffer == y.buffer && x.start == y.start && x.extent == y.extent &&
             x.dimOf == y.dimOf;
    };
    bool gather = id == IntrinsicId::DeviceAllGather;
    if (!same(o.dst, mine.dst) || (!gather && !same(o.src, mine.src)) ||
        (gather && o.src.extent != mine.src.extent)) {
      auto show = [&](const Region &r) {
        std::string s = p_.buffers[r.buffer].name + "[";
        for (size_t k = 0; k < r.start.size(); ++k)
          s += (k ? ", " : "") + std::to_string(r.start[k]);
        s += " : +";
        for (size_t k = 0; k < r.extent.size(); ++k)
          s += (k ? "x" : "") + std::to_string(r.extent[k]);
        return s + "]";
      };
      return fail(mine.call->loc,
                  fmt::format("devices disagree on the chunking of '{}': device {} names dst {} "
                              "src {}, device {} names dst {} src {} (at {})",
                              mine.call->callee, devid_, show(mine.dst), show(mine.src), d,
                              show(o.dst), show(o.src), peer->where(o.call->loc)));
    }
  }
  joinAll(g);
  if (id != IntrinsicId::DeviceBarrier && !runDeviceCollective(arrivals))
    return false;
  joinAll(g);
  return true;
}

// The collective's values, as the lowering computes them: sums in fp32 (in
// rank order 0..N-1, the same bits on every device), rounded to dst's dtype.
bool CtaExecutor::runDeviceCollective(const std::vector<DeviceArrival> &arrivals) {
  DeviceGroup &g = *devices_;
  const DeviceArrival &a = arrivals[devid_];
  const std::string &name = a.call->callee;
  const IntrinsicId id = idOf(*a.call);
  const BufferPlan &db = p_.buffers[a.dst.buffer], &sb = p_.buffers[a.src.buffer];
  if (db.scope != MemScope::Global || sb.scope != MemScope::Global)
    return fail(a.call->loc,
                fmt::format("'{}' moves global tensors: '{}' is {} memory", name,
                            db.scope != MemScope::Global ? db.name : sb.name,
                            memScopeName(db.scope != MemScope::Global ? db.scope : sb.scope)));
  if (!isFloat(db.dtype) || !isFloat(sb.dtype))
    return fail(a.call->loc, fmt::format("'{}' sums floating-point tiles", name));
  int64_t n = a.src.elements(), m = a.dst.elements();
  int64_t expect = id == IntrinsicId::DeviceAllGather       ? n * g.ndev
                   : id == IntrinsicId::DeviceReduceScatter ? n / g.ndev
                                                            : n;
  if (id == IntrinsicId::DeviceReduceScatter && n % g.ndev != 0)
    return fail(a.call->loc, fmt::format("device.reduce_scatter: {} elements do not split into "
                                         "{} chunks",
                                         n, g.ndev));
  if (m != expect)
    return fail(a.call->loc, fmt::format("'{}' on {} devices: dst needs {} elements, not {}", name,
                                         g.ndev, expect, m));
  for (int64_t i = 0; i < std::max(n, m); ++i)
    if ((i < n && !inBounds(a.src, i)) || (i < m && !inBounds(a.dst, i)))
      return fail(a.call->loc, fmt::format("'{}' reaches outside its tensors", name));
  // Inside each device the collective's accesses are those of the threads
  // that called it there (the whole CTA, or the warp of a warp_allreduce):
  // the CTA's own race detector sees them against its other threads.
  auto local = [&](int dev, int buffer, int64_t flat, bool write) {
    CtaExecutor &cta = *g.ctas[dev];
    if (cta.race_)
      cta.raceAccess(RaceSpace::Global, buffer, flat, flat, 1, write, arrivals[dev].threads,
                     arrivals[dev].call->loc);
  };
  auto read = [&](int dev, int64_t i) {
    int64_t flat = bufferFlat(a.src, i);
    deviceAccess(dev, sb.tensor, flat, false, a.call->loc);
    local(dev, a.src.buffer, flat, false);
    return decodeFloat(sb.dtype, (*g.memory[dev])[sb.tensor].bitsAt(flat));
  };
  auto write = [&](int dev, int64_t i, double v) {
    int64_t flat = bufferFlat(a.dst, i);
    HostTensor &t = (*g.memory[dev])[db.tensor];
    t.setBits(flat, encodeFloat(db.dtype, v));
    t.written[flat] = 1;
    local(dev, a.dst.buffer, flat, true);
  };
  auto sum = [&](int64_t i) {
    float acc = 0;
    for (int p = 0; p < g.ndev; ++p)
      acc += static_cast<float>(read(p, i));
    return static_cast<double>(acc);
  };
  if (id == IntrinsicId::DeviceAllreduce || id == IntrinsicId::DeviceWarpAllreduce) {
    for (int64_t i = 0; i < n; ++i) {
      double v = sum(i);
      for (int d = 0; d < g.ndev; ++d)
        write(d, i, v);
    }
  } else if (id == IntrinsicId::DeviceReduceScatter) {
    for (int d = 0; d < g.ndev; ++d)
      for (int64_t i = 0; i < m; ++i)
        write(d, i, sum(d * m + i));
  } else { // all_gather: device p's src lands at chunk p of every dst
    for (int p = 0; p < g.ndev; ++p)
      for (int64_t i = 0; i < n; ++i) {
        double v = read(p, i);
        for (int d = 0; d < g.ndev; ++d)
          write(d, p * n + i, v);
      }
  }
  stats_.elementsMoved += m * g.ndev;
  return true;
}

// --- the run --------------------------------------------------------------------

namespace {

std::optional<Failure> runGroup(DeviceGroup &g, std::vector<std::unique_ptr<CtaExecutor>> &ctas,
                                std::mt19937_64 &rng, std::vector<std::string> &unmatched,
                                const std::function<std::string(llvm::SMLoc)> &where) {
  for (auto &cta : ctas)
    if (auto f = cta->start())
      return f;
  if (auto f = runUntilBlocked(ctas, rng))
    return f;
  Failure all;
  all.outcome = RunResult::Outcome::Deadlock;
  for (size_t d = 0; d < ctas.size(); ++d) {
    if (ctas[d]->exited()) {
      all.notes.push_back(fmt::format("device {}: its CTA has finished", d));
      continue;
    }
    Failure f = ctas[d]->deadlock();
    if (all.message.empty()) {
      all = f;
      all.outcome = RunResult::Outcome::Deadlock;
      all.message = fmt::format("deadlock across devices: device {}: {}", d, f.message);
    } else {
      all.notes.push_back(fmt::format("device {}: {}", d, f.message));
      for (const std::string &n : f.notes)
        all.notes.push_back(fmt::format("device {}: {}", d, n));
    }
    if (ctas[d]->deviceGate() >= 0)
      all.notes.push_back(
          fmt::format("device {} waits at {} (device phase {}) for the devices that have not "
                      "arrived",
                      d, where(g.arrivals[d].call->loc), g.phase));
  }
  if (!all.message.empty())
    return all;
  for (const auto &[key, v] : g.unobserved) {
    auto [dev, tensor, flat] = key;
    const BufferPlan &b = tensorPlan(ctas[0]->program(), tensor);
    unmatched.push_back(fmt::format("{}: unmatched signal: {}{} of device {} was set to {} and "
                                    "no wait observed it",
                                    where(v.second), b.name, elementText(b.shape, flat), dev,
                                    v.first));
  }
  return std::nullopt;
}

} // namespace

DeviceRunResult runDevices(const std::vector<Program> &programs,
                           std::vector<std::vector<HostTensor>> &memory,
                           const EngineOptions &options,
                           const std::vector<std::optional<Layout>> &placements) {
  DeviceRunResult out;
  RunResult &result = out.run;
  auto start = std::chrono::steady_clock::now();
  std::clock_t cpuStart = std::clock();
  int ndev = static_cast<int>(programs.size());
  const Program &first = programs.front();
  if (first.clusterSize() > 1) {
    result.outcome = RunResult::Outcome::RuntimeError;
    result.message = "the simulator runs devices(N) kernels without clusters (docs/scales.md)";
    return out;
  }
  std::vector<std::array<int64_t, 3>> ctas =
      options.ctas.empty() ? sampleCtas(first.grid, 0, options.seed) : options.ctas;
  std::mt19937_64 rng(options.seed);
  DeviceRaceState raceState;
  // Inside each device the one-device detector (happens-before over the
  // threads of a CTA and the CTAs of the device: shared memory, tensor
  // memory, the async proxies), one per device over all its CTAs, as the
  // one-device run keeps one over its CTAs. Global memory across devices is
  // DeviceRaceState's; the per-device detectors' global races are left to it.
  std::vector<std::unique_ptr<RaceDetector>> detectors;
  if (options.detectRaces)
    for (int d = 0; d < ndev; ++d)
      detectors.push_back(std::make_unique<RaceDetector>());
  int64_t index = 0;
  for (const auto &cta : ctas) {
    DeviceGroup g;
    g.ndev = ndev;
    g.index = index++;
    g.race = options.detectRaces;
    g.placements = &placements;
    g.arrivedPhase.assign(ndev, -1);
    g.arrivals.resize(ndev);
    g.lastGlobalWrite.assign(ndev, -1);
    g.proxyFences.assign(ndev, {});
    g.clock.assign(ndev, std::vector<uint32_t>(ndev, 0));
    for (int d = 0; d < ndev; ++d)
      g.clock[d][d] = 1;
    std::vector<std::unique_ptr<CtaExecutor>> members;
    for (int d = 0; d < ndev; ++d) {
      members.push_back(
          std::make_unique<CtaExecutor>(programs[d], memory[d], options, result.stats, cta, rng));
      g.ctas.push_back(members.back().get());
      g.memory.push_back(&memory[d]);
      members.back()->joinDevices(&g, d, &raceState);
      if (!detectors.empty())
        members.back()->attachRaceDetector(detectors[size_t(d)].get());
    }
    auto failure = runGroup(g, members, rng, out.unmatchedSignals, options.where);
    result.stats.ctas += ndev; // a group that failed ran too
    if (auto f = failure) {
      result.outcome = f->outcome;
      result.message = std::move(f->message);
      result.notes = std::move(f->notes);
      break;
    }
    if (options.afterUnit)
      options.afterUnit(cta);
  }
  result.races = std::move(raceState.races);
  for (int d = 0; d < int(detectors.size()); ++d)
    for (DetectedRace &r : describeRaces(*detectors[size_t(d)], programs[size_t(d)], options)) {
      if (r.space == "global")
        continue;
      r.text = fmt::format("{}: {} (on device {})", r.second.location, r.text, d);
      result.races.push_back(std::move(r));
    }
  result.stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.stats.cpuSeconds = static_cast<double>(std::clock() - cpuStart) / CLOCKS_PER_SEC;
  return out;
}

} // namespace tilescope::sim
