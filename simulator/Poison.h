// What memory holds before anything writes it. A real GPU gives a kernel
// whatever its shared memory, registers and tensor memory held before; the
// simulator fills them at kernel start with a poison pattern instead, so that
// a kernel that reads before it writes (a dropped accumulator fill, a stage
// consumed before its copy landed) computes garbage that the reference
// comparison catches. Different patterns catch different reads: NaN spreads
// through sums and products but `max(x, NaN)` may drop it; a huge value
// survives a max; zero is what a kernel that forgot `fill(acc, 0)` would
// hope for. A reward runs several.
//
// Must not depend on the engine.
#pragma once

#include "ir/Dtype.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string_view>

namespace tilescope::sim {

enum class PoisonPattern : uint8_t {
  Zero,   // all bits clear: what the simulator did before poisoning
  Nan,    // all bits set: NaN in f32, f16, bf16, e4m3 and e5m2; -1 in integers
  Big,    // every byte 0x7B: a large finite positive value in every float format
  NegBig, // every byte 0xFB: its negative
  Random, // random bytes drawn from the run's seed (a different value per element)
};

// "zero", "nan", "big", "negbig", "random".
std::string_view poisonName(PoisonPattern p);
std::optional<PoisonPattern> parsePoison(std::string_view name);
// The names, comma-separated, for diagnostics.
std::string_view poisonNames();

// The byte every poisoned byte gets (Random: one drawn from `rng`).
uint8_t poisonByte(PoisonPattern p, std::mt19937_64 &rng);

// `bytes` bytes of the pattern as a little-endian word (bytes <= 8; Random:
// the low bytes of one draw).
uint64_t poisonWord(PoisonPattern p, int bytes, std::mt19937_64 &rng);

// The random pattern's generator: writes the next `n` words of the splitmix64
// stream `state` to `out` and advances `state` past them. Word i is
// mix(state + (i + 1) * 0x9E3779B97F4A7C15), a function of its index alone,
// so the loop runs several words at a time (a clone for x86-64-v4 and v3
// chosen at load time; integer operations only, every clone gives the same
// words). A persistent kernel starts every CTA of its constant grid at every
// size, and drawing one word at a time was a tenth of its reward (perf,
// 2026-11-26). Each word is masked with `keep` (a register narrower than 8
// bytes keeps its low bytes).
void splitmixFill(uint64_t *out, size_t n, uint64_t &state, uint64_t keep = ~uint64_t{0});

} // namespace tilescope::sim
