// The random fills' fast paths give the same bits as the plain loops they
// replaced: splitmixFill (the random poison of shared memory, registers and
// tensor memory) against one splitmix64 draw at a time, and fillRandomInput's
// bf16 path against the general loop (encodeFloat, decodeFloat, setBits per
// element) for many seeds and names; and the GEMM reference's vector sums
// against a scalar loop.
#include "ir/Parser.h"
#include "simulator/Engine.h"
#include "simulator/Mt64.h"
#include "simulator/Numerics.h"
#include "simulator/Poison.h"
#include "simulator/Reference.h"
#include "simulator/ReferenceRules.h"
#include "simulator/Value.h"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <set>
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
      // numerics::encode itself, not encodeFloat's bf16 and e4m3 shortcuts.
      bits = numerics::encode(static_cast<float>(dist(rng)), *numerics::floatFormat(t.dtype));
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

TEST_CASE("Mt64Block gives std::mt19937_64's words, in order") {
  // Across several blocks of 312 words, and through the library's
  // distribution as fillRandomInput reads it.
  for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{5489}, uint64_t{0xFFFFFFFFFFFFFFFFull},
                        uint64_t{0x9E3779B97F4A7C15ull}}) {
    std::mt19937_64 want(seed);
    Mt64Block got(seed);
    for (int i = 0; i < 2000; ++i) {
      INFO("seed ", seed, " word ", i);
      REQUIRE(got() == want());
    }
    std::uniform_real_distribution<double> a(-1.0, 1.0), b(-1.0, 1.0);
    for (int i = 0; i < 700; ++i)
      REQUIRE(a(got) == b(want));
  }
}

TEST_CASE("Mt64Block::signedUnits gives the library's uniform draws in [-1, 1)") {
  // Runs of several lengths across block boundaries, between single words.
  for (uint64_t seed : {uint64_t{1}, uint64_t{14}, uint64_t{0x9E3779B97F4A7C15ull}}) {
    std::mt19937_64 want(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    Mt64Block got(seed);
    std::vector<double> draws(1000);
    for (size_t run : {size_t{1}, size_t{311}, size_t{312}, size_t{313}, size_t{1000}, size_t{7}}) {
      got.signedUnits(draws.data(), run);
      for (size_t k = 0; k < run; ++k) {
        INFO("seed ", seed, " run ", run, " draw ", k);
        REQUIRE(std::bit_cast<uint64_t>(draws[k]) == std::bit_cast<uint64_t>(dist(want)));
      }
      REQUIRE(got() == want());
    }
  }
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
  // e4m3 (the fp8 GEMMs' inputs) through encodeFloat's shortcut.
  for (uint64_t seed : {uint64_t{1}, uint64_t{7}, uint64_t{14}})
    for (const char *name : {"A", "B"}) {
      HostTensor fast = tensor(name, Dtype::f8e4m3, {257, 513});
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

TEST_CASE("widenInput scales each row by a power of two in range and zeroes about one in 16") {
  // bf16 and e4m3, without and with targets (the kernel's literals,
  // WideTargets.h): rows times 2^e, e in [-reach, reach]; for bf16 also 1
  // row in 16 at 2^-24 and, with targets, 1 row in 2 at a target's 2^e;
  // no row all zeros.
  sim::WideTargets targets;
  targets.exponents = {9, -40, 70}; // 70: past what bf16 takes (55), never drawn
  for (bool withTargets : {false, true})
    for (auto [dtype, reach] : {std::pair(Dtype::bf16, 6), std::pair(Dtype::f8e4m3, 1)}) {
      HostTensor t = tensor("A", dtype, {400, 64});
      fillRandomInput(t, 5, false);
      HostTensor before = t;
      widenInput(t, 5, withTargets ? targets : sim::WideTargets{});
      int64_t zeros = 0, zeroRows = 0;
      std::map<int, int> seen;
      for (int64_t r = 0; r < 400; ++r) {
        std::optional<double> ratio; // the row's factor, from its nonzero elements
        for (int64_t c = 0; c < 64; ++c) {
          double was = decodeFloat(dtype, before.bitsAt(r * 64 + c));
          double now = decodeFloat(dtype, t.bitsAt(r * 64 + c));
          if (now == 0) {
            ++zeros;
            continue;
          }
          // e4m3 rounds a scaled-down value; bf16 scales exactly.
          double q = now / was;
          if (!ratio)
            ratio = q;
          if (dtype == Dtype::bf16)
            CHECK(q == *ratio);
        }
        if (!ratio) {
          ++zeroRows;
          continue;
        }
        int e = static_cast<int>(std::lround(std::log2(*ratio)));
        bool beyond = dtype == Dtype::bf16 && (e == -24 || (withTargets && (e == 9 || e == -40)));
        CHECK((std::abs(e) <= reach || beyond));
        ++seen[e];
      }
      for (int e = -reach; e <= reach; ++e)
        CHECK(seen.count(e)); // every exponent drawn among 400 rows
      CHECK(zeroRows == 0);
      CHECK(zeros > 400 * 64 / 32); // about 1 in 16
      CHECK(zeros < 400 * 64 / 8);
      if (dtype == Dtype::bf16) {
        CHECK(seen[-24] > 400 / 32); // about 1 in 16
        CHECK(seen[-24] < 400 / 8);
        CHECK(seen.count(9) == size_t(withTargets));
        CHECK(seen.count(-40) == size_t(withTargets));
        if (withTargets)
          CHECK(seen[9] + seen[-40] > 400 / 4); // about 1 in 2 of the other rows
      } else {
        CHECK(seen.size() == size_t(2 * reach + 1));
      }
    }
}

TEST_CASE("widenInput without the edge's rows: no zeros, every row within the reach") {
  // The reward's widened sizes after the second (threshold, persistent).
  HostTensor t = tensor("A", Dtype::bf16, {400, 64});
  fillRandomInput(t, 5, false);
  HostTensor before = t;
  sim::WideTargets shallow;
  shallow.edgeRows = false;
  widenInput(t, 5, shallow);
  int rowsSeen = 0;
  for (int64_t r = 0; r < 400; ++r)
    for (int64_t c = 0; c < 64; ++c) {
      double was = decodeFloat(Dtype::bf16, before.bitsAt(r * 64 + c));
      double now = decodeFloat(Dtype::bf16, t.bitsAt(r * 64 + c));
      REQUIRE(now != 0);
      CHECK(std::abs(std::lround(std::log2(now / was))) <= 6);
      ++rowsSeen;
      break;
    }
  CHECK(rowsSeen == 400);
}

TEST_CASE("widenScales moves block scales past [2^-3, 2^3], positive and in their format") {
  // f32 scales (DeepGEMM's): factors 2^e, e in [-10, 10], every one drawn
  // among 2000 scales, so that scales below 2^-3 and above 2^3 occur (a
  // kernel clamping its scales to [2^-3, 2^3] passed before, hack
  // `scale-clamp`); with a target in reach, about 1 scale in 2 takes it.
  // e4m3 scales (NVFP4's) stay within e4m3's normal range.
  for (bool withTargets : {false, true}) {
    HostTensor t = tensor("SB", Dtype::f32, {40, 50});
    fillRandomInput(t, 3, true);
    HostTensor before = t;
    sim::WideTargets targets;
    targets.exponents = {7, 60}; // 60: past the reach, never drawn
    widenScales(t, 3, withTargets ? targets : sim::WideTargets{});
    std::map<int, int> seen;
    int below = 0, above = 0;
    for (int64_t i = 0; i < t.elements(); ++i) {
      double was = decodeFloat(Dtype::f32, before.bitsAt(i));
      double now = decodeFloat(Dtype::f32, t.bitsAt(i));
      REQUIRE(now > 0);
      double e = std::log2(now / was);
      CHECK(e == std::round(e)); // a power of two: exact
      CHECK(std::abs(e) <= 10);
      ++seen[static_cast<int>(e)];
      below += now < 0.125;
      above += now > 8;
    }
    for (int e = -10; e <= 10; ++e)
      CHECK(seen.count(e));
    CHECK(below > 2000 / 8);
    CHECK(above > 2000 / 8);
    if (withTargets)
      CHECK(seen[7] > 2000 / 3);
  }
  HostTensor t = tensor("S", Dtype::f8e4m3, {40, 50});
  fillRandomInput(t, 3, true);
  widenScales(t, 3);
  for (int64_t i = 0; i < t.elements(); ++i) {
    double now = decodeFloat(Dtype::f8e4m3, t.bitsAt(i));
    CHECK(now >= std::ldexp(1.0, -6));
    CHECK(now <= 448);
  }
}

TEST_CASE("wideTargets: the literals a kernel tests its data against") {
  // Each body's clamp or test, and the exponents it gives (WideTargets.h):
  // past a literal above 2^6, e = ceil(log2(2|L|)); below one under 2^-6,
  // e = floor(log2 |L|) - 20; sentinels, loop variables, scalars and sizes
  // alone give none; a size is its value where the run gives it.
  struct Case {
    std::string body;
    std::map<std::string, int64_t> ints;
    std::set<int> want;
  };
  const std::vector<Case> cases = {
      {"acc[0] = min(max(A[i, 0], -100.0), 100.0)", {}, {8}},
      {"acc[0] = A[i, 0] - max(A[i, 0] * 0.001 - 1000.0, 0.0) * 1000.0", {}, {21}},
      {"let cap = exp(5.0)\n  acc[0] = min(A[i, 0], cap)", {}, {9}},
      {"acc[0] = select(abs(A[i, 0]) < 0.0009765625, 0.0, A[i, 0])", {}, {-30}},
      {"acc[0] = max(A[i, 0], -3.0e38)", {}, {}},
      {"acc[0] = min(A[i, 0], 50.0)", {}, {}},
      {"for k in 0 .. K {\n    acc[0] = select(k < 300, A[i, k], 0.0)\n  }", {}, {}},
      {"acc[0] = select(s > 1000.0, A[i, 0], 0.0)", {}, {}},
      {"acc[0] = min(A[i, 0], f32(K) * 2.0)", {}, {}},
      {"acc[0] = min(A[i, 0], f32(K) * 2.0)", {{"K", 67}}, {9}},
  };
  for (const Case &c : cases) {
    CAPTURE(c.body);
    llvm::SourceMgr sm;
    Diagnostics diag{sm, /*printImmediately=*/false};
    const std::string text = "kernel k(A: global f32[M, K], C: global f32[M], s: f32)\n"
                             "  launch grid(1) threads(32) target(sm_80)\n{\n"
                             "  reg acc: f32[1]\n  let i = threadIdx.x\n  " +
                             c.body + "\n  C[i] = acc[0]\n}\n";
    Module module = parseModuleText(text, "test.tile", diag);
    REQUIRE(!diag.hasErrors());
    REQUIRE(module.kernels.size() == 1);
    ArgValues args;
    args.ints = c.ints;
    CHECK(wideTargets(module.kernels[0], args).exponents == c.want);
  }
}

TEST_CASE("the GEMM reference's eight-column sums give the scalar loop's bits") {
  // M = 3 full rows of N = 24 columns: three blocks of eight columns through
  // the vector path (its clone for this processor), against each element's
  // sum and sum of magnitudes accumulated in k order here. The operands mix
  // ordinary values with zeros of both signs, subnormals, huge values whose
  // products overflow, infinities and NaN.
  const int64_t M = 3, N = 24, K = 37;
  llvm::SourceMgr sm;
  Diagnostics diag{sm, /*printImmediately=*/false};
  Module module =
      parseModuleText("kernel k(A: global f32[3, 37], B: global f32[24, 37], C: global f32[3, 24]) "
                      "launch grid(1) threads(32) target(sm_80) { }",
                      "test.tile", diag);
  REQUIRE(!diag.hasErrors());
  std::optional<Program> program = bindProgram(module.kernels.at(0), {}, diag);
  REQUIRE(program);
  std::vector<HostTensor> tensors = allocateTensors(*program);
  ProblemSyntaxError syntax;
  auto spec = parseProblem("gemm(A, B^T -> C)", &syntax);
  REQUIRE(spec);
  ProblemError error;
  std::optional<BoundProblem> problem = bindProblem(*spec, *program, tensors, &error);
  REQUIRE(problem);
  const float specials[] = {0.0f, -0.0f, 1e-40f, -3e-39f, 3e38f, -2e38f, INFINITY, -INFINITY, NAN};
  std::mt19937_64 rng(5);
  auto value = [&] {
    if (rng() % 6 == 0)
      return specials[rng() % std::size(specials)];
    return static_cast<float>(std::uniform_real_distribution<double>(-4, 4)(rng));
  };
  std::vector<float> a(M * K), b(N * K);
  for (HostTensor &t : tensors) {
    std::vector<float> &v = t.name == "A" ? a : b;
    if (t.name == "C")
      continue;
    for (int64_t i = 0; i < t.elements(); ++i) {
      v[i] = value();
      t.setBits(i, std::bit_cast<uint32_t>(v[i]));
    }
  }
  std::vector<Expected> e = gemmRule().reference(*problem, tensors, NeededFn());
  REQUIRE(e.size() == 1);
  int nans = 0, infinities = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0, abs = 0;
      for (int64_t k = 0; k < K; ++k) {
        double xy = double(a[i * K + k]) * double(b[j * K + k]);
        s += xy;
        abs += std::fabs(xy);
      }
      double got = e[0].value[i * N + j];
      nans += std::isnan(s);
      infinities += std::isinf(s);
      if (std::isnan(s)) { // which NaN an operation returns is the processor's choice
        CHECK(std::isnan(got));
        continue;
      }
      CHECK(std::bit_cast<uint64_t>(got) == std::bit_cast<uint64_t>(s));
      double bound = 4.0 * static_cast<double>(K + 2) * 0x1p-24 * abs;
      CHECK(std::bit_cast<uint64_t>(e[0].bound[i * N + j]) == std::bit_cast<uint64_t>(bound));
    }
  CHECK(nans > 0); // the specials reached some sums, and not all of them
  CHECK(nans < M * N);
}
