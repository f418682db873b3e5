// simulator/Log32.h: the IR's `log` as both the simulator and the CUDA
// lowering compute it (codegen/prelude/device.cuh, ts_log). Its error against
// the exact logarithm (below one unit in the last place), its special inputs,
// a few results pinned bit for bit, and the GPU copy's constants. That the GPU
// copy gives the same bits on every 32-bit input was measured on an H100
// (docs/attention.md, "L bit for bit").
#include "simulator/Log32.h"

#include "simulator/Numerics.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

using tilescope::sim::log32;

using tilescope::numerics::bitsOf;
using tilescope::numerics::floatOf;

namespace {
// |log32(x) - log(x)| in units of the last place of the f32 nearest log(x).
double ulpError(uint32_t bits) {
  float x = floatOf(bits);
  double ref = std::log(static_cast<double>(x));
  double ulp = std::ldexp(1.0, std::ilogb(static_cast<float>(ref)) - 23);
  return std::fabs(static_cast<double>(log32(x)) - ref) / ulp;
}
} // namespace

TEST_CASE("log32: below one unit in the last place on [1/2, 2) and on every exponent") {
  double worst = 0;
  uint32_t at = 0;
  // Every input of [1/2, 2): where m = 2^e x is near 1 and the error of the
  // series matters most (x = 1 itself gives 0 exactly).
  for (uint32_t b = 0x3f000000u; b < 0x40000000u; ++b) {
    if (b == 0x3f800000u)
      continue;
    double e = ulpError(b);
    if (e > worst) {
      worst = e;
      at = b;
    }
  }
  // 4099 mantissas on every exponent, subnormals included.
  for (uint32_t b = 1; b < 0x7f800000u; b += 0x7ff) {
    if (b == 0x3f800000u)
      continue;
    double e = ulpError(b);
    if (e > worst) {
      worst = e;
      at = b;
    }
  }
  INFO("worst input 0x" << std::hex << at);
  CHECK(worst < 1.0);
  CHECK(log32(1.0f) == 0.0f);
}

TEST_CASE("log32: special inputs") {
  CHECK(bitsOf(log32(0.0f)) == 0xff800000u);
  CHECK(bitsOf(log32(-0.0f)) == 0xff800000u);
  CHECK(bitsOf(log32(-1.0f)) == 0x7fffffffu);
  CHECK(bitsOf(log32(floatOf(0xff800000u))) == 0x7fffffffu);
  CHECK(bitsOf(log32(floatOf(0x7f800000u))) == 0x7f800000u);
  CHECK(bitsOf(log32(floatOf(0x7fc01234u))) == 0x7fc01234u); // a NaN as it is
  // The smallest subnormal: log(2^-149) = -103.2789...
  CHECK(std::fabs(log32(floatOf(1)) - (-149.0 * std::log(2.0))) < 1e-5);
}

TEST_CASE("log32: results pinned bit for bit") {
  // The algorithm's own bits (a change to it, or to its constants, shows
  // here; the GPU copy must change with it). These happen to be the
  // correctly rounded logs; 0.6 % of all inputs are not (docs/attention.md).
  const uint32_t pinned[][2] = {
      {0x40000000u, 0x3f317218u}, // log(2)
      {0x41200000u, 0x40135d8eu}, // log(10)
      {0x3dcccccdu, 0xc0135d8eu}, // log(0.1)
      {0x3f800001u, 0x33ffffffu}, // log(1 + 2^-23)
      {0x3f7fffffu, 0xb3800000u}, // log(1 - 2^-24)
      {0x3fb504f3u, 0x3eb17217u}, // log(1.4142135)
      {0x3f3504f3u, 0xbeb17219u}, // log(0.70710677)
      {0x7f61b1e6u, 0x42b13196u}, // log(3e38)
      {0x000116c2u, 0xc2b834f2u}, // log(1e-40), a subnormal
      {0x43000000u, 0x409b43d5u}, // log(128)
      {0x3f9e0651u, 0x3e57c73au}, // log(1.2345678)
      {0x47800040u, 0x41317220u}, // log(65536.5)
  };
  for (const auto &p : pinned) {
    INFO("x = 0x" << std::hex << p[0]);
    CHECK(bitsOf(log32(floatOf(p[0]))) == p[1]);
  }
}

TEST_CASE("log32: the CUDA lowering's ts_log uses the same constants") {
  std::ifstream in(std::string(TILESCOPE_SOURCE_DIR) + "/codegen/prelude/device.cuh");
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  size_t at = text.find("float ts_log(float x)");
  REQUIRE(at != std::string::npos);
  std::string body = text.substr(at, text.find("\n}\n", at) - at);
  for (const char *c :
       {"0x1.745d18p-3f", "0x1.c71c72p-3f", "0x1.24924ap-2f", "0x1.99999ap-2f", "0x1.555556p-1f",
        "0x1.7f7d1cp-20f", "0x1.62e4p-1f", "0x3f3504f3u", "8388608.0f"}) {
    INFO(c);
    CHECK(body.find(c) != std::string::npos);
  }
}
