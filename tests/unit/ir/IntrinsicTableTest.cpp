// The intrinsic table (ir/Intrinsics.h, ir/MmaShapes.h): one record per id,
// in id order, names that round-trip, the facts the passes read.
#include "ir/Intrinsics.h"
#include "ir/MmaShapes.h"

#include <doctest/doctest.h>

#include <set>

using namespace tilescope;

TEST_CASE("every IntrinsicId has one record, found by its name") {
  const auto &table = intrinsics();
  REQUIRE(table.size() == static_cast<size_t>(IntrinsicId::Unknown));
  std::set<std::string_view> names;
  for (size_t i = 0; i < table.size(); ++i) {
    const IntrinsicInfo &info = table[i];
    CHECK(static_cast<size_t>(info.id) == i);
    CHECK(&intrinsic(info.id) == &info);
    CHECK(intrinsicIdOf(info.name) == info.id);
    CHECK(intrinsicName(info.id) == info.name);
    CHECK(names.insert(info.name).second);
    // Natives belong to a hardware unit; tile primitives to none.
    CHECK((unitOf(info.id) == IntrinsicUnit::TilePrimitive) ==
          (info.cls == CallClass::TilePrimitive));
    // Natives name their PTX instruction, but for the device scale's
    // CTA-level calls, which lower onto the device runtime.
    if (info.cls == CallClass::Native)
      CHECK((!info.ptx.empty() ||
             (unitOf(info.id) == IntrinsicUnit::Device && info.convergence == Convergence::Cta)));
  }
  CHECK(intrinsicIdOf("wgmma.mma") == IntrinsicId::Unknown);
  CHECK(findIntrinsic("") == nullptr);
}

TEST_CASE("effects and completion: what the barrier skeleton and race checks read") {
  const IntrinsicInfo &wgmma = intrinsic(IntrinsicId::WgmmaMmaAsync);
  CHECK(wgmma.completion == Completion::WgmmaGroup);
  CHECK(wgmma.proxy == Proxy::Async);
  CHECK(wgmma.positional[0].access == Access::ReadWrite);
  CHECK(wgmma.positional[1].access == Access::Read);
  CHECK(wgmma.mma == MmaFamily::Wgmma);
  CHECK(intrinsic(IntrinsicId::TmaLoad).completion == Completion::MbarrierTx);
  CHECK(intrinsic(IntrinsicId::TmaStore).completion == Completion::BulkGroup);
  CHECK(intrinsic(IntrinsicId::CpAsync).completion == Completion::CpAsyncGroup);
  CHECK(intrinsic(IntrinsicId::Tcgen05Mma).completion == Completion::Tcgen05Commit);
  CHECK_FALSE(intrinsic(IntrinsicId::Copy).async());
  CHECK(intrinsic(IntrinsicId::Copy).positional[0].access == Access::Write);
  // The tcgen05.ld shapes are values the checker enforces.
  const auto &shape = intrinsic(IntrinsicId::Tcgen05Ld).keywords[0];
  CHECK(shape.name == "shape");
  CHECK(shape.allowed.size() == 5);
}

TEST_CASE("the MMA rows give wgmma's K per dtype: 16 for bf16, 32 for fp8") {
  auto k = [](Dtype a, Dtype b) {
    const MmaShape *row = findMmaShape(TargetKind::sm_90a, MmaFamily::Wgmma, Dtype::f32, a, b);
    return row ? row->k : 0;
  };
  CHECK(k(Dtype::bf16, Dtype::bf16) == 16);
  CHECK(k(Dtype::f16, Dtype::f16) == 16);
  CHECK(k(Dtype::f8e4m3, Dtype::f8e4m3) == 32);
  CHECK(k(Dtype::f8e4m3, Dtype::f8e5m2) == 32);
  CHECK(k(Dtype::f8e5m2, Dtype::f8e5m2) == 32);
  CHECK(k(Dtype::bf16, Dtype::f16) == 0);
  CHECK(k(Dtype::f8e4m3, Dtype::bf16) == 0);
  const MmaShape *row =
      findMmaShape(TargetKind::sm_90a, MmaFamily::Wgmma, Dtype::f32, Dtype::f8e4m3, Dtype::f8e4m3);
  REQUIRE(row);
  CHECK(row->m == 64);
  CHECK(row->takesN(256));
  CHECK(row->takesN(8));
  CHECK_FALSE(row->takesN(260));
  CHECK(ptxTypeName(Dtype::f8e4m3) == "e4m3");
  CHECK(findMmaShape(TargetKind::sm_100a, MmaFamily::Wgmma, Dtype::f32, Dtype::bf16,
                     Dtype::bf16) == nullptr);
}
