#include "simulator/Mt64.h"

namespace tilescope::sim {

namespace {

// mt19937_64's parameters: n = 312, m = 156, r = 31, a, the tempering
// shifts and masks (u, d), (s, b), (t, c), l, and the seeding multiplier f.
constexpr size_t kN = 312, kM = 156;
constexpr uint64_t kUpper = ~uint64_t{0} << 31, kLower = ~kUpper;
constexpr uint64_t kA = 0xB5026F5AA96619E9ull;
constexpr uint64_t kF = 6364136223846793005ull;

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void twistAndTemper(uint64_t *__restrict x, uint64_t *__restrict out) {
  // The recurrence in the order of the standard's definition: words 0 ..
  // n - m - 1 read words k + m of the previous block, the later ones words
  // k + m - n of this one, the last one word 0 of this one.
  for (size_t k = 0; k < kN - kM; ++k) {
    uint64_t y = (x[k] & kUpper) | (x[k + 1] & kLower);
    x[k] = x[k + kM] ^ (y >> 1) ^ ((y & 1) ? kA : 0);
  }
  for (size_t k = kN - kM; k < kN - 1; ++k) {
    uint64_t y = (x[k] & kUpper) | (x[k + 1] & kLower);
    x[k] = x[k + kM - kN] ^ (y >> 1) ^ ((y & 1) ? kA : 0);
  }
  uint64_t y = (x[kN - 1] & kUpper) | (x[0] & kLower);
  x[kN - 1] = x[kM - 1] ^ (y >> 1) ^ ((y & 1) ? kA : 0);
  for (size_t k = 0; k < kN; ++k) {
    uint64_t z = x[k];
    z ^= (z >> 29) & 0x5555555555555555ull;
    z ^= (z << 17) & 0x71D67FFFEDA60000ull;
    z ^= (z << 37) & 0xFFF7EEE000000000ull;
    z ^= z >> 43;
    out[k] = z;
  }
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void signedUnitsOf(const uint64_t *__restrict words, double *__restrict out, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    const double unit = static_cast<double>(words[k]) * 0x1p-64; // exact: a power of two
    out[k] = (unit >= 1.0 ? 0x1.fffffffffffffp-1 : unit) * 2.0 - 1.0;
  }
}

} // namespace

void Mt64Block::signedUnits(double *out, size_t n) {
  while (n > 0) {
    if (next_ == kWords)
      refill();
    const size_t take = n < kWords - next_ ? n : kWords - next_;
    signedUnitsOf(out_ + next_, out, take);
    next_ += take;
    out += take;
    n -= take;
  }
}

Mt64Block::Mt64Block(uint64_t seed) {
  static_assert(kWords == kN);
  state_[0] = seed;
  for (size_t i = 1; i < kN; ++i)
    state_[i] = kF * (state_[i - 1] ^ (state_[i - 1] >> 62)) + i;
}

void Mt64Block::refill() {
  twistAndTemper(state_, out_);
  next_ = 0;
}

} // namespace tilescope::sim
