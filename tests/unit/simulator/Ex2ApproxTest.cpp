// simulator/Ex2Approx.h against the GPU: every line of the committed sample
// (tests/unit/simulator/data/ex2_approx_sm90_sample.txt: x, then
// ex2.approx.ftz.f32(x) and ex2.approx.f32(x) as measured, hex bits) must be
// reproduced bit for bit.
#include "simulator/Ex2Approx.h"

#include "simulator/Numerics.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

using tilescope::numerics::bitsOf;
using tilescope::numerics::floatOf;
using tilescope::sim::ex2ApproxFtz;

TEST_CASE("ex2.approx.ftz.f32 model equals the GPU on the measured sample") {
  std::ifstream in(std::string(TILESCOPE_SOURCE_DIR) +
                   "/tests/unit/simulator/data/ex2_approx_sm90_sample.txt");
  REQUIRE(in.good());
  std::string line;
  int lines = 0, equal = 0, negatives = 0, large = 0;
  std::string firstDiff;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream ss(line);
    uint32_t x = 0, ftz = 0, full = 0;
    ss >> std::hex >> x >> ftz >> full;
    REQUIRE(!ss.fail());
    ++lines;
    float xf = floatOf(x);
    negatives += xf < 0;
    large += xf <= -1.0f || xf >= 1.0f;
    uint32_t got = bitsOf(ex2ApproxFtz(xf));
    if (got == ftz)
      ++equal;
    else if (firstDiff.empty()) {
      std::ostringstream d;
      d << std::hex << "x " << x << ": model " << got << ", GPU " << ftz;
      firstDiff = d.str();
    }
  }
  INFO(firstDiff);
  CHECK(lines >= 4096);
  CHECK(negatives > lines / 4);
  CHECK(large > lines / 4);
  CHECK(equal == lines);
}

TEST_CASE("ex2.approx.ftz.f32 model: range ends and exact powers") {
  CHECK(bitsOf(ex2ApproxFtz(0.0f)) == 0x3F800000u);
  CHECK(bitsOf(ex2ApproxFtz(-1.0f)) == 0x3F000000u);
  CHECK(bitsOf(ex2ApproxFtz(-126.0f)) == 0x00800000u); // 2^-126, the least normal
  CHECK(ex2ApproxFtz(-126.5f) == 0.0f);                // flushed
  CHECK(ex2ApproxFtz(128.0f) == INFINITY);
  CHECK(bitsOf(ex2ApproxFtz(127.0f)) == 0x7F000000u);
  // 2^k scaling is exact: ex2(x - 5) = ex2(x) / 32 (fractions of at most 18 bits)
  for (float x : {-0.3125f, -0.7109375f, -12345.0f / 131072.0f})
    CHECK(ex2ApproxFtz(x - 5.0f) == ex2ApproxFtz(x) / 32.0f);
}
