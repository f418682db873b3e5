// The device scale in the IR (ir/DeviceScale.h, docs/scales.md): the launch's
// device count, the implicit devid / ndev parameters, the device.* table and
// the checker's rules, and the collectives' refusal reasons.
#include "ir/DeviceScale.h"
#include "ir/Checker.h"
#include "ir/IrJson.h"
#include "ir/Parser.h"
#include "ir/Printer.h"

#include <doctest/doctest.h>

#include <string>

using namespace tilescope;

namespace {

const char *kAllreduce = R"(kernel ar(X: global bf16[E], Y: global bf16[E])
  where E % 4096 == 0, N >= 2, N <= 8
  launch devices(N) grid(E / 4096) threads(512) target(sm_90a)
{
  device.allreduce(Y[blockIdx.x * 4096 : +4096], X[blockIdx.x * 4096 : +4096], impl = "two_shot")
  if devid == ndev - 1 {
    device.barrier()
  }
}
)";

struct Checked {
  Module module;
  std::string errors;
};

Checked parseAndCheck(const std::string &text) {
  llvm::SourceMgr sm;
  std::string errors;
  Diagnostics diag(sm, false);
  Checked out{parseModuleText(text, "t.tile", diag), ""};
  if (!diag.hasErrors())
    checkModule(out.module, diag);
  for (const auto &d : diag.all())
    out.errors += d.message + "\n";
  return out;
}

} // namespace

TEST_CASE("devices(N) declares N, ndev and devid as implicit scalars the printer leaves out") {
  Checked c = parseAndCheck(kAllreduce);
  REQUIRE(c.errors.empty());
  const Kernel &k = c.module.kernels.at(0);
  REQUIRE(k.launch.devices.size() == 1);
  REQUIRE(k.params.size() == 5);
  CHECK(k.params[2].name == "N");
  CHECK(k.params[3].name == "ndev");
  CHECK(k.params[4].name == "devid");
  for (size_t i = 2; i < 5; ++i) {
    CHECK(k.params[i].implicit);
    CHECK(!k.params[i].isTensor);
  }
  std::string printed = print(c.module);
  CHECK(printed == kAllreduce);
  Checked again = parseAndCheck(printed);
  CHECK(equal(again.module, c.module));
}

TEST_CASE("a devices kernel goes through JSON and back with its device count") {
  Checked c = parseAndCheck(kAllreduce);
  llvm::json::Value tree = moduleToJson(c.module);
  const llvm::json::Object *launch =
      tree.getAsObject()->getArray("kernels")->front().getAsObject()->getObject("launch");
  REQUIRE(launch->getArray("devices"));
  CHECK(
      tree.getAsObject()->getArray("kernels")->front().getAsObject()->getArray("params")->size() ==
      2);
  IrJsonError error;
  auto back = moduleFromJson(tree, &error);
  REQUIRE(back);
  CHECK(equal(*back, c.module));
}

TEST_CASE("device calls need a devices launch; the count is bounded") {
  Checked noLaunch = parseAndCheck(R"(kernel k(F: global u32[8])
  launch grid(1) threads(32) target(sm_90a)
{
  device.signal(F[0], dev = 1, value = 1)
}
)");
  CHECK(noLaunch.errors.find("'device.signal' reaches other devices; the kernel needs `launch "
                             "devices(N)`") != std::string::npos);
  Checked tooMany = parseAndCheck(R"(kernel k(F: global u32[8])
  launch devices(9) grid(1) threads(32) target(sm_90a)
{
  device.barrier()
}
)");
  CHECK(tooMany.errors.find("the device count must be in [1, 8], not 9") != std::string::npos);
  Checked twoCounts = parseAndCheck(R"(kernel k(F: global u32[8])
  launch devices(2, 3) grid(1) threads(32) target(sm_90a)
{
}
)");
  CHECK(twoCounts.errors.find("devices takes one device count, not 2") != std::string::npos);
  Checked flagNotElement = parseAndCheck(R"(kernel k(F: global u32[8], v: i32)
  launch devices(2) grid(1) threads(32) target(sm_90a)
{
  device.wait(v, value = 1)
}
)");
  CHECK(!flagNotElement.errors.empty());
}

TEST_CASE("the device natives are in the intrinsic table with their convergence") {
  const IntrinsicInfo *put = findIntrinsic("device.put");
  REQUIRE(put);
  CHECK(put->convergence == Convergence::Cta);
  const IntrinsicInfo *signal = findIntrinsic("device.signal");
  REQUIRE(signal);
  CHECK(signal->convergence == Convergence::Thread);
  CHECK(put->id == IntrinsicId::DevicePut);
  CHECK(isDeviceCall(intrinsicIdOf("device.allreduce")));
  CHECK(!isDeviceCall(intrinsicIdOf("dsmem.load")));
  CHECK(!isDeviceCall(IntrinsicId::Unknown));
  CHECK(collectiveOf(IntrinsicId::DeviceAllGather) == "all_gather");
  CHECK(collectiveOf(IntrinsicId::DeviceBarrier).empty());
  // One warp's allreduce: a device call of warp convergence, lowered inside
  // its kernel, not on the CTA collectives' path.
  const IntrinsicInfo &warp = intrinsic(IntrinsicId::DeviceWarpAllreduce);
  CHECK(warp.convergence == Convergence::Warp);
  CHECK(intrinsicIdOf(warp.name) == IntrinsicId::DeviceWarpAllreduce);
  CHECK(isDeviceCall(IntrinsicId::DeviceWarpAllreduce));
  CHECK(collectiveOf(IntrinsicId::DeviceWarpAllreduce).empty());
}

TEST_CASE("collective implementations refuse with their reasons") {
  CHECK(collectiveRefusal("allreduce", "one_shot", 4096, 2, 2) == "");
  CHECK(collectiveRefusal("allreduce", "two_shot", 4096, 2, 8) == "");
  CHECK(collectiveRefusal("allreduce", "two_shot", 4104, 2, 8) ==
        "the tile's 8208 bytes do not split into 8 chunks of 16-byte vectors");
  CHECK(collectiveRefusal("allreduce", "one_shot", 1 << 20, 2, 2) ==
        "one_shot reads every device's whole tile: over 1 MiB per tile two_shot moves less");
  CHECK(collectiveRefusal("allreduce", "ring", 4096, 2, 2) ==
        "'ring' is not an implementation of allreduce");
  CHECK(collectiveRefusal("allreduce", "one_shot", 4096, 2, 9) ==
        "9 devices exceed the peer table of 8");
}

TEST_CASE("an allreduce without impl is chosen by the device count and the bytes per device") {
  // 2 devices: one_shot up to 2 MiB (equal traffic, local writes only)
  CHECK(oneShotMaxBytes(2) == (int64_t{2} << 20));
  CHECK(allreduceChoice(2, int64_t{1} << 20) == "one_shot");
  CHECK(allreduceChoice(2, int64_t{2} << 20) == "one_shot");
  CHECK(allreduceChoice(2, (int64_t{2} << 20) + 16) == "two_shot");
  CHECK(allreduceChoice(1, int64_t{1} << 20) == "one_shot");
  // from 3 devices on, two_shot moves 2 (N - 1) / N of what one_shot moves
  // over (N - 1), and was ahead at every size measured on 4 GPUs
  CHECK(oneShotMaxBytes(4) == 0);
  CHECK(allreduceChoice(4, int64_t{256} << 10) == "two_shot");
  CHECK(allreduceChoice(4, 16) == "two_shot");
  CHECK(allreduceChoice(4, int64_t{1} << 20) == "two_shot");
  CHECK(allreduceChoice(4, int64_t{128} << 20) == "two_shot");
  CHECK(allreduceChoice(8, int64_t{2} << 20) == "two_shot");
  CHECK(allreduceChoice(3, int64_t{8} << 20) == "two_shot");
}
