#include "simulator/Poison.h"

#include <algorithm>

namespace tilescope::sim {

std::string_view poisonName(PoisonPattern p) {
  switch (p) {
  case PoisonPattern::Zero:
    return "zero";
  case PoisonPattern::Nan:
    return "nan";
  case PoisonPattern::Big:
    return "big";
  case PoisonPattern::NegBig:
    return "negbig";
  case PoisonPattern::Random:
    return "random";
  }
  return "nan";
}

std::optional<PoisonPattern> parsePoison(std::string_view name) {
  for (PoisonPattern p : {PoisonPattern::Zero, PoisonPattern::Nan, PoisonPattern::Big,
                          PoisonPattern::NegBig, PoisonPattern::Random})
    if (poisonName(p) == name)
      return p;
  return std::nullopt;
}

std::string_view poisonNames() {
  return "nan, big, negbig, random, zero";
}

uint8_t poisonByte(PoisonPattern p, std::mt19937_64 &rng) {
  switch (p) {
  case PoisonPattern::Zero:
    return 0;
  case PoisonPattern::Nan:
    return 0xFF;
  case PoisonPattern::Big:
    return 0x7B;
  case PoisonPattern::NegBig:
    return 0xFB;
  case PoisonPattern::Random:
    return static_cast<uint8_t>(rng());
  }
  return 0xFF;
}

uint64_t poisonWord(PoisonPattern p, int bytes, std::mt19937_64 &rng) {
  if (p == PoisonPattern::Random) // one draw per word, not per byte
    return bytes >= 8 ? rng() : rng() & ((uint64_t{1} << (8 * std::max(bytes, 0))) - 1);
  uint64_t w = 0;
  for (int i = 0; i < bytes && i < 8; ++i)
    w |= uint64_t{poisonByte(p, rng)} << (8 * i);
  return w;
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void splitmixFill(uint64_t *out, size_t n, uint64_t &state, uint64_t keep) {
  constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;
  const uint64_t base = state;
  for (size_t i = 0; i < n; ++i) {
    uint64_t z = base + (i + 1) * kGolden;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    out[i] = (z ^ (z >> 31)) & keep;
  }
  state = base + n * kGolden;
}

} // namespace tilescope::sim
