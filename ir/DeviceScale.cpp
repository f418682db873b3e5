#include "ir/DeviceScale.h"

#include <fmt/format.h>

namespace tilescope {

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

bool isDeviceCall(IntrinsicId id) {
  return unitOf(id) == IntrinsicUnit::Device;
}

bool isDeviceCall(const CallStmt &c) {
  return isDeviceCall(idOf(c));
}

std::string_view collectiveOf(IntrinsicId id) {
  switch (id) {
  case IntrinsicId::DeviceAllreduce:
    return "allreduce";
  case IntrinsicId::DeviceAllGather:
    return "all_gather";
  case IntrinsicId::DeviceReduceScatter:
    return "reduce_scatter";
  default:
    return "";
  }
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

int64_t oneShotMaxBytes(int64_t devices) {
  // 2x H200 (2026-11-26): one_shot 12.00 / two_shot 12.05 us at 1 MiB, 14.38 /
  // 14.74 at 2 MiB, 21.71 / 20.90 at 4 MiB. 4x H200 (02:47 UTC): two_shot
  // ahead at every size measured, 256 KiB (10.91 against 12.29 us) to
  // 128 MiB (1.88x): on 3 devices and more one_shot only where two_shot
  // refuses the tiles.
  if (devices <= 2)
    return int64_t{2} << 20;
  return 0;
}

std::string_view allreduceChoice(int64_t devices, int64_t bytesPerDevice) {
  return bytesPerDevice <= oneShotMaxBytes(devices) ? "one_shot" : "two_shot";
}

} // namespace tilescope
