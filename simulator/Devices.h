// The device scale in the simulator (docs/scales.md): N devices in one
// process, each with its own grid and its own global memory (a set of host
// tensors per device).
//
// Device-scale synchronisation pairs CTA b of every device with CTA b of the
// others (the lowering's flags are indexed by blockIdx), so the engine runs
// the N CTAs with the same blockIdx as one *device group*, interleaved by the
// seeded scheduler as it interleaves the CTAs of a cluster; groups run one
// after the other. What crosses devices:
//
// - device.put / device.get: a tile written into / read from a peer's tensor;
// - device.signal(F[i], dev = p, value = v): F[i] of device p becomes v;
//   device.wait(F[i], value = v) blocks the thread until its own F[i] has
//   reached v (wrap-aware 32-bit comparison, as the lowering's spin loop);
// - device.barrier(): CTA b of every device has arrived;
// - device.allreduce / all_gather / reduce_scatter: a barrier, the
//   collective over the group's tiles (every device must name the same tile:
//   devices that disagree on the chunking are a finding), a barrier.
//
// Happens-before across devices (race detection, EngineOptions::detectRaces)
// is tracked with a vector clock per CTA of the group: a signal is a release
// only when its thread executed device.fence after the CTA's last global
// write (PTX: st.relaxed.sys needs fence.acq_rel.sys before it); a satisfied
// wait acquires what the signals it observed released; barriers and
// collectives join every clock. Accesses to global memory (own or a peer's)
// that two CTAs make without that order, one of them a write, are a race.
// A TMA copy (the async proxy) that reads what a peer's threads wrote (the
// generic proxy: a put, a store) needs fence.proxy.async(space = "global")
// in between: by the writing CTA after the write and before the signal the
// reader observed, or by the reading CTA after it observed the write and
// before the copy's issue; else a missing proxy fence is reported. The
// granularity is the CTA (the thread-level rule, for accesses within a CTA,
// is RaceDetector's).
// CTAs of different groups are never ordered. Flags a device signalled that
// no wait observed by the end of the group are reported as unmatched.
//
// Must not depend on the command line; diagnostics are returned.
#pragma once

#include "simulator/CtaExecutor.h"

#include <map>
#include <tuple>

namespace tilescope::sim {

struct DeviceShadow {
  int64_t writer = -1; // agent (group * ndev + device), -1: none
  uint32_t writeClock = 0;
  llvm::SMLoc writeLoc;
  bool genericWrite = false; // by threads (st.global), not by a TMA store
  int64_t writeStamp = 0;    // the writing CTA's stamp (CtaExecutor::deviceStamp_)
  std::map<int64_t, std::pair<uint32_t, llvm::SMLoc>> reads; // by agent
};

// A collective waiting for the rest of its group.
struct DeviceArrival {
  const CallStmt *call = nullptr;
  Region dst, src;
  std::string impl;
  ThreadRange threads; // who called it (the whole CTA, or one warp for warp_allreduce)
};

struct DeviceGroup {
  int ndev = 1;
  int64_t index = 0;                             // the group's number in the run (agent ids)
  std::vector<CtaExecutor *> ctas;               // by devid
  std::vector<std::vector<HostTensor> *> memory; // by devid
  // by tensor: its declared placement over the devices at this run's sizes
  // (ir/Placement.h); a put or get between two placed tensors must move every
  // logical element onto itself
  const std::vector<std::optional<Layout>> *placements = nullptr;
  // device.barrier and the collectives: a phase completes when every device
  // arrived.
  int64_t phase = 0;
  std::vector<int64_t> arrivedPhase; // by devid: the phase it waits to complete, -1 none
  std::vector<DeviceArrival> arrivals;
  // device.warp_allreduce: the calls of warp w of every device pair with
  // each other (channel w), as the lowering's flags do (a slot per block,
  // warp and source rank): a warp waits for its channel's phase only, and
  // the CTA's other warps (other communication warps among them) go on.
  struct WarpChannel {
    int64_t phase = 0;
    std::vector<int64_t> arrivedPhase; // by devid
    std::vector<DeviceArrival> arrivals;
  };
  std::map<int, WarpChannel> warpChannels; // by warp index in the CTA
  // race detection
  bool race = false;
  std::vector<std::vector<uint32_t>> clock; // [devid][devid]
  std::vector<int64_t> lastGlobalWrite;     // by devid: stamp of the CTA's last global access
  // by devid: the CTA's global proxy fences, each its stamp and its clock then
  std::vector<std::vector<std::pair<int64_t, std::vector<uint32_t>>>> proxyFences;
  std::map<std::tuple<int, int, int64_t>, std::vector<uint32_t>> released; // flag -> clock
  // the last value each thread waited for on a flag: (device, tensor, flat, thread)
  std::map<std::tuple<int, int, int64_t, int64_t>, uint32_t> consumed;
  // flags signalled and not yet observed: (device, tensor, flat) -> (value, signal location)
  std::map<std::tuple<int, int, int64_t>, std::pair<uint32_t, llvm::SMLoc>> unobserved;
};

// What a device run keeps across groups: the race shadow of every global
// element some device touched, and the races found.
struct DeviceRaceState {
  std::map<std::tuple<int, int, int64_t>, DeviceShadow> shadow; // (device, tensor, flat)
  std::vector<DetectedRace> races;
};

struct DeviceRunResult {
  RunResult run;
  std::vector<std::string> unmatchedSignals;
};

// Runs `programs` (one per device, bound with devid = its index) on
// `memory` (one tensor set per device). `placements` (by tensor, may be
// empty) are the tensors' declared placements at the run's sizes.
DeviceRunResult runDevices(const std::vector<Program> &programs,
                           std::vector<std::vector<HostTensor>> &memory,
                           const EngineOptions &options,
                           const std::vector<std::optional<Layout>> &placements = {});

} // namespace tilescope::sim
