// std::mt19937_64's words, regenerated and tempered a block of 312 at a time.
// The inputs of a simulation are drawn from std::mt19937_64 through
// std::uniform_real_distribution (simulator/Reference.cpp, fillRandomInput),
// and a reward draws every element of every input at two or three sizes:
// libstdc++'s engine regenerates its state one word at a time and tempers
// each word as it is drawn, a tenth of a GEMM's reward (perf, 2026-11-26).
// This engine gives the same words in the same order (the seeding, the
// recurrence and the tempering of the standard's definition, with its
// parameters for mt19937_64), its loops over a whole block (a clone for
// x86-64-v4 and v3 chosen at load time; integer operations only, every
// clone gives the same words), and meets the uniform random bit generator
// requirements, so the library's own distributions read it.
//
// Must not depend on the engine.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tilescope::sim {

class Mt64Block {
public:
  using result_type = uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }

  explicit Mt64Block(uint64_t seed);

  result_type operator()() {
    if (next_ == kWords)
      refill();
    return out_[next_++];
  }

  // The next `n` draws of std::uniform_real_distribution<double>(-1.0, 1.0)
  // reading this engine, in order, a block at a time: libstdc++'s
  // generate_canonical<double, 53> takes one word w and gives w / 2^64
  // rounded to a double (the double below 1 where that is 1), and the
  // distribution gives that times 2, minus 1 (checked against the library in
  // tests/unit/simulator/RandomFillTest.cpp).
  void signedUnits(double *out, size_t n);

private:
  static constexpr size_t kWords = 312;
  void refill();

  uint64_t state_[kWords];
  uint64_t out_[kWords];
  size_t next_ = kWords;
};

} // namespace tilescope::sim
