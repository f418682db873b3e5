// The random fills' fast paths give the same bits as the plain loops they
// replaced: splitmixFill (the random poison of shared memory, registers and
// tensor memory) against one splitmix64 draw at a time, and fillRandomInput's
// bf16 path against the general loop (encodeFloat, decodeFloat, setBits per
// element) for many seeds and names.
#include "simulator/Engine.h"
#include "simulator/Poison.h"
#include "simulator/Reference.h"
#include "simulator/Value.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace tilescope;
using namespace tilescope::sim;

namespace {

// One draw at a time, as the engine's start drew them before.
uint64_t draw(uint64_t &stream) {
  uint64_t z = (stream += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The general loop of fillRandomInput, element by element.
void plainFill(HostTensor &t, uint64_t seed) {
  std::mt19937_64 rng(seed ^ std::hash<std::string>()(t.name));
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (int64_t i = 0; i < t.elements(); ++i) {
    uint64_t bits = 0;
    double value = 0;
    do {
      bits = encodeFloat(t.dtype, dist(rng));
      value = decodeFloat(t.dtype, bits);
    } while (value == 0.0 || !std::isfinite(value));
    t.setBits(i, bits);
  }
}

HostTensor tensor(const std::string &name, Dtype dtype, std::vector<int64_t> shape) {
  HostTensor t;
  t.name = name;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes.assign(size_t(t.elements() * dtypeBytes(dtype)), 0);
  t.written.assign(size_t(t.elements()), 0);
  return t;
}

} // namespace

TEST_CASE("splitmixFill gives the words of one draw at a time, in order") {
  for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{0xFFFFFFFFFFFFFFFFull}, uint64_t{12345}})
    for (size_t n :
         {size_t{0}, size_t{1}, size_t{3}, size_t{8}, size_t{9}, size_t{31}, size_t{1000}}) {
      uint64_t one = seed, bulk = seed;
      std::vector<uint64_t> want(n), got(n + 1, 0xABCDull);
      for (uint64_t &w : want)
        w = draw(one);
      splitmixFill(got.data(), n, bulk);
      CHECK(std::vector<uint64_t>(got.begin(), got.begin() + long(n)) == want);
      CHECK(got[n] == 0xABCDull); // nothing past the n words
      CHECK(bulk == one);         // the stream continues where one at a time would
    }
  // Chained calls continue one stream.
  uint64_t one = 42, bulk = 42;
  std::vector<uint64_t> a(5), b(11);
  splitmixFill(a.data(), a.size(), bulk);
  splitmixFill(b.data(), b.size(), bulk);
  for (uint64_t w : a)
    CHECK(w == draw(one));
  for (uint64_t w : b)
    CHECK(w == draw(one));
}

TEST_CASE("fillRandomInput's bf16 path gives the general loop's bits") {
  for (uint64_t seed : {uint64_t{1}, uint64_t{7}, uint64_t{14}, uint64_t{0xDEADBEEFull}})
    for (const char *name : {"A", "B", "weights"}) {
      HostTensor fast = tensor(name, Dtype::bf16, {129, 257});
      HostTensor plain = fast;
      fillRandomInput(fast, seed, false);
      plainFill(plain, seed);
      CHECK(fast.bytes == plain.bytes);
    }
  // The general loop itself still serves the other formats.
  HostTensor f16 = tensor("X", Dtype::f16, {64, 33}), plain = f16;
  fillRandomInput(f16, 3, false);
  plainFill(plain, 3);
  CHECK(f16.bytes == plain.bytes);
}
