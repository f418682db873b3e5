// The device packing helpers the preludes carry are generated from the
// descriptor formats of ir/Descriptors.cpp at build time
// (codegen/GenPrelude.cpp). This test compiles the generated helpers for the
// host (__device__ defined away) and holds each, for many random field
// values, to the table's host packing (packDescriptor) and to the formula
// the preludes wrote by hand before the table held the fields (the
// "oracle" functions below, as codegen/prelude/device.cuh and tcgen05.cuh
// had them), so the generated device code packs the same words as before.
// The tcgen05 instruction descriptor, which the emitter packs on the host,
// is held to the emitter's former formula the same way.
#include "ir/Descriptors.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>

#define __device__
#define __forceinline__ inline
#include "prelude/descriptor_helpers.h"
#undef __forceinline__
#undef __device__

using namespace tilescope;

namespace {

// The hand-written formulas of the preludes before the table (device.cuh's
// ts_wgmma_desc / ts_wgmma_desc_lbo, tcgen05.cuh's ts_umma_desc /
// ts_umma_desc_lbo) and of the emitter (EmitTcgen05.cpp's idesc).
uint64_t oracleWgmma(uint32_t addr, int mode, int sbo) {
  uint64_t d = 0;
  d |= (uint64_t)((addr & 0x3FFFF) >> 4);
  d |= (uint64_t)1 << 16;
  d |= (uint64_t)((sbo >> 4) & 0x3FFF) << 32;
  d |= (uint64_t)mode << 62;
  return d;
}
uint64_t oracleWgmmaLbo(uint32_t addr, int mode, int sbo, int lbo) {
  uint64_t d = 0;
  d |= (uint64_t)((addr & 0x3FFFF) >> 4);
  d |= (uint64_t)((lbo >> 4) & 0x3FFF) << 16;
  d |= (uint64_t)((sbo >> 4) & 0x3FFF) << 32;
  d |= (uint64_t)mode << 62;
  return d;
}
uint64_t oracleUmma(uint32_t addr, int layout, int sbo) {
  uint64_t d = 0;
  d |= (uint64_t)((addr & 0x3FFFF) >> 4);
  d |= (uint64_t)1 << 16;
  d |= (uint64_t)((sbo >> 4) & 0x3FFF) << 32;
  d |= (uint64_t)1 << 46;
  d |= (uint64_t)layout << 61;
  return d;
}
uint64_t oracleUmmaLbo(uint32_t addr, int layout, int sbo, int lbo) {
  uint64_t d = 0;
  d |= (uint64_t)((addr & 0x3FFFF) >> 4);
  d |= (uint64_t)((lbo >> 4) & 0x3FFF) << 16;
  d |= (uint64_t)((sbo >> 4) & 0x3FFF) << 32;
  d |= (uint64_t)1 << 46;
  d |= (uint64_t)layout << 61;
  return d;
}
uint32_t oracleIdesc(bool bf16, bool mnMajor, int64_t n, int64_t m) {
  return (1u << 4) | ((bf16 ? 1u : 0u) << 7) | ((bf16 ? 1u : 0u) << 10) |
         ((mnMajor ? 1u : 0u) << 16) | (static_cast<uint32_t>(n >> 3) << 17) |
         (static_cast<uint32_t>(m >> 4) << 24);
}

// The table's packing of the same fields (an int as the device helper
// reads it: its two's complement bits).
uint64_t table(DescriptorKind kind, uint32_t addr, int swizzle, int sbo, int lbo) {
  return packDescriptor(kind, {{DescField::StartAddress, addr},
                               {DescField::Swizzle, uint64_t(int64_t(swizzle))},
                               {DescField::StrideByteOffset, uint64_t(int64_t(sbo))},
                               {DescField::LeadingByteOffset, uint64_t(int64_t(lbo))}});
}

} // namespace

TEST_CASE("generated descriptor helpers pack as the table and as the old formulas") {
  std::mt19937_64 rng(90100);
  // Draws: any 32-bit pattern, or the values kernels use (shared addresses
  // below 2^18, 16-byte multiples, the swizzle codes).
  auto anyInt = [&] { return int(uint32_t(rng())); };
  for (int trial = 0; trial < 100000; ++trial) {
    bool typical = trial % 2 == 0;
    uint32_t addr = typical ? uint32_t(rng() % (1 << 18)) & ~15u : uint32_t(rng());
    int sbo = typical ? int(rng() % 1024) * 16 : anyInt();
    int lbo = typical ? int(rng() % 1024) * 16 : anyInt();
    int mode = typical ? int(rng() % 4) : anyInt();
    int layout = typical ? int(rng() % 4) * 2 : anyInt();
    INFO("addr " << addr << " sbo " << sbo << " lbo " << lbo << " mode " << mode << " layout "
                 << layout);
    REQUIRE(ts_wgmma_desc(addr, mode, sbo) == oracleWgmma(addr, mode, sbo));
    REQUIRE(ts_wgmma_desc(addr, mode, sbo) ==
            table(DescriptorKind::WgmmaSmem, addr, mode, sbo, 16));
    REQUIRE(ts_wgmma_desc_lbo(addr, mode, sbo, lbo) == oracleWgmmaLbo(addr, mode, sbo, lbo));
    REQUIRE(ts_wgmma_desc_lbo(addr, mode, sbo, lbo) ==
            table(DescriptorKind::WgmmaSmem, addr, mode, sbo, lbo));
    REQUIRE(ts_umma_desc(addr, layout, sbo) == oracleUmma(addr, layout, sbo));
    REQUIRE(ts_umma_desc(addr, layout, sbo) ==
            table(DescriptorKind::Tcgen05Smem, addr, layout, sbo, 16));
    REQUIRE(ts_umma_desc_lbo(addr, layout, sbo, lbo) == oracleUmmaLbo(addr, layout, sbo, lbo));
    REQUIRE(ts_umma_desc_lbo(addr, layout, sbo, lbo) ==
            table(DescriptorKind::Tcgen05Smem, addr, layout, sbo, lbo));
  }
}

TEST_CASE("the tcgen05 instruction descriptor packs as the emitter's old formula") {
  constexpr auto kIdesc = DescriptorKind::Tcgen05InstrF16;
  int checked = 0;
  for (int64_t m = 16; m <= 496; m += 16)
    for (int64_t n = 8; n <= 504; n += 8)
      for (bool bf16 : {false, true})
        for (bool mnMajor : {false, true}) {
          uint64_t ab = *fieldCode(kIdesc, DescField::AFormat, bf16 ? "bf16" : "f16");
          uint64_t word = packDescriptor(
              kIdesc, {{DescField::DFormat, *fieldCode(kIdesc, DescField::DFormat, "f32")},
                       {DescField::AFormat, ab},
                       {DescField::BFormat, ab},
                       {DescField::TransposeB, mnMajor ? 1u : 0u},
                       {DescField::N, uint64_t(n)},
                       {DescField::M, uint64_t(m)}});
          INFO("m " << m << " n " << n << " bf16 " << bf16 << " mn " << mnMajor);
          REQUIRE(word == oracleIdesc(bf16, mnMajor, n, m));
          // The PTX reader's decoding (ptx/LiftTcgen05.cpp) reads M and N back.
          REQUIRE(unpackDescriptor(kIdesc, word, DescField::M) == uint64_t(m));
          REQUIRE(unpackDescriptor(kIdesc, word, DescField::N) == uint64_t(n));
          ++checked;
        }
  CHECK(checked == 31 * 63 * 4);
}
