#include "ir/DeviceScale.h"

#include <fmt/format.h>

namespace tilescope {

namespace {
using K = ArgKind;
constexpr auto NT = CallClass::Native;
constexpr auto T = Convergence::Thread, W = Convergence::Warp, CTA = Convergence::Cta;
// A peer: a device rank in [0, ndev) (checked where it is a constant by
// verifier/Resources, and by the simulator and the device protocol check).
constexpr IntRange kPeer{0, kMaxDevices - 1};
} // namespace

std::vector<IntrinsicInfo> deviceIntrinsics() {
  return {
      {"device.put",
       NT,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {{"dev", K::Int, true, kPeer}},
       CTA,
       TargetFeature::Sm90Plus,
       "write a tile into device dev's global tensor (peer stores over NVLink)"},
      {"device.get",
       NT,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {{"dev", K::Int, true, kPeer}},
       CTA,
       TargetFeature::Sm90Plus,
       "read a tile of device dev's global tensor (peer loads over NVLink)"},
      {"device.signal",
       NT,
       {{"flag", K::Buffer, true}},
       {{"dev", K::Int, true, kPeer}, {"value", K::Int, true}},
       T,
       TargetFeature::Sm90Plus,
       "store value into element flag of device dev (st.relaxed.sys; release needs "
       "device.fence before it)"},
      {"device.wait",
       NT,
       {{"flag", K::Buffer, true}},
       {{"value", K::Int, true}},
       T,
       TargetFeature::Sm90Plus,
       "spin until the own flag has reached value (ld.acquire.sys, wrap-aware)"},
      {"device.fence",
       NT,
       {},
       {},
       T,
       TargetFeature::Sm90Plus,
       "fence.acq_rel.sys: order this thread's (and, after a CTA barrier, its CTA's) "
       "accesses before a later signal"},
      {"device.barrier",
       NT,
       {},
       {},
       CTA,
       TargetFeature::Sm90Plus,
       "wait until CTA blockIdx of every device arrived (a fenced signal to every peer, "
       "then a wait on each)"},
      {"device.allreduce",
       NT,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {{"impl", K::String, false}},
       CTA,
       TargetFeature::Sm90Plus,
       "dst on every device = the sum over devices of src (the same region on each)"},
      {"device.warp_allreduce",
       NT,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {{"impl", K::String, false}},
       W,
       TargetFeature::Sm90Plus,
       "one warp of a CTA: dst on every device = the sum over devices of src; meets the "
       "same call of the CTA with the same blockIdx on every device (a warp-specialized "
       "kernel's communication warp)"},
      {"device.all_gather",
       NT,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {{"impl", K::String, false}},
       CTA,
       TargetFeature::Sm90Plus,
       "dst (ndev times src's first dimension) on every device = the devices' src, by rank"},
      {"device.reduce_scatter",
       NT,
       {{"dst", K::Buffer, true}, {"src", K::Buffer, true}},
       {{"impl", K::String, false}},
       CTA,
       TargetFeature::Sm90Plus,
       "dst on device r = chunk r (of ndev along src's first dimension) of the sum of src"},
  };
}

void appendDeviceFacts(Kernel &k) {
  if (k.launch.devices.empty())
    return;
  llvm::SMLoc at = k.launch.loc;
  Expr devid = Var::make("devid", at), ndev = Var::make("ndev", at);
  auto add = [&](BinaryOp op, Expr a, Expr b) {
    k.constraints.push_back(Binary::make(op, std::move(a), std::move(b), at));
  };
  add(BinaryOp::Ge, devid, IntImm::make(0, at));
  add(BinaryOp::Lt, devid, ndev);
  add(BinaryOp::Eq, ndev, k.launch.devices.front());
  add(BinaryOp::Ge, ndev, IntImm::make(1, at));
  add(BinaryOp::Le, ndev, IntImm::make(kMaxDevices, at));
}

bool isDeviceCall(std::string_view callee) {
  return callee.rfind("device.", 0) == 0;
}

const std::vector<CollectiveImpl> &collectiveImpls() {
  static const std::vector<CollectiveImpl> impls = {
      {"allreduce", "one_shot",
       "device barrier; every device reads the tile of all devices and sums in rank order; "
       "device barrier"},
      {"allreduce", "two_shot",
       "device barrier; device r sums chunk r of the tile over all devices and pushes it into "
       "every device's dst; device barrier"},
      {"warp_allreduce", "two_shot",
       "device barrier of the calling warps; device r sums chunk r of the tile (rows) over all "
       "devices and stores it into every device's dst; device barrier"},
      {"warp_allreduce", "one_shot",
       "device barrier of the calling warps; every device reads the tile of all devices and "
       "sums in rank order; device barrier"},
      {"all_gather", "push", "device barrier; push src into chunk devid of every dst; barrier"},
      {"reduce_scatter", "one_shot",
       "device barrier; device r sums chunk r over all devices into its dst; device barrier"},
  };
  return impls;
}

std::string collectiveRefusal(std::string_view collective, std::string_view impl, int64_t elements,
                              int64_t elementBytes, int64_t devices) {
  bool known = false;
  for (const CollectiveImpl &c : collectiveImpls())
    known |= c.collective == collective && c.name == impl;
  if (!known)
    return fmt::format("'{}' is not an implementation of {}", impl, collective);
  if (devices > kMaxDevices)
    return fmt::format("{} devices exceed the peer table of {}", devices, kMaxDevices);
  // 16-byte vectors: the lowering moves the tile in uint4 accesses.
  if ((elements * elementBytes) % 16 != 0)
    return fmt::format("the tile has {} bytes, not a multiple of 16", elements * elementBytes);
  if (impl == "two_shot" || collective == "reduce_scatter") {
    if (devices == 0)
      return "";
    if ((elements * elementBytes) % (16 * devices) != 0)
      return fmt::format("the tile's {} bytes do not split into {} chunks of 16-byte vectors",
                         elements * elementBytes, devices);
  }
  if ((collective == "allreduce" || collective == "warp_allreduce") && impl == "one_shot" &&
      elements * elementBytes > (int64_t{1} << 20))
    return "one_shot reads every device's whole tile: over 1 MiB per tile two_shot moves less";
  return "";
}

} // namespace tilescope
