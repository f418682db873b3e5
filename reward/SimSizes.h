// The problem sizes the simulate stage runs a kernel at (docs/reward.md,
// "Sizes"). With `auto`:
//  1. small: the smallest sizes the where clause admits under which every
//     loop over a ring of S barriers or pipeline stages runs 2·S times
//     (verifier/FallbackSizes.h), raised where CTA 0 still runs a ring loop
//     fewer times (a persistent tile loop the solver cannot count), so each
//     ring wraps twice;
//  2. edge: each shape symbol v raised to the admitted value in
//     [v + 65, v + 1089] with the fewest trailing zero bits (odd where
//     admitted), so edge tiles are ragged; then every grid dimension that
//     depends on the sizes raised to at least 3 CTAs (a CTA index past 1,
//     a tail CTA after two full ones), again ragged where admitted. A raise
//     that cannot be ragged (v and the value both multiples of 256: `M %
//     1024 == 0`) goes to the persistent size instead, where there is one;
//  3. persistent, only for a constant grid whose tile loop starts at
//     blockIdx: from the small size with the edge's carried raises, the one
//     symbol, raised least, that makes CTA 0 and CTA 1 (linear index) run
//     the tile loop twice (more tiles than CTAs plus one; the cheapest in
//     tensor elements), the other symbols then shrunk as far as the rings
//     still wrap twice for CTA 0 (two tiles need half the K of one), run on
//     CTAs 0 and 1 alone (the elements they wrote are compared): a second
//     tile of a CTA other than 0 runs (before session 22 CTA 0 ran alone).
// Every search varies the free symbols; a symbol the where clause defines
// (`KB == K / 128`) follows its definition, and a relation a change breaks
// in another free symbol (`M % N == 0`) is repaired (SizeRelations.h).
// Internal to reward/.
#pragma once

#include "ir/Stmt.h"
#include "sync/BarrierSkeleton.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::reward_detail {

struct SimSize {
  std::map<std::string, int64_t> values;
  int64_t sampleCtas = 0; // 0: every CTA
  std::string role;       // "small", "edge", "persistent", "given", "threshold"
  // The CTAs a sampled size runs, where the size names them (the persistent
  // size: CTA 0 and the CTA of linear index 1); empty: sim::sampleCtas's.
  std::vector<std::array<int64_t, 3>> ctas;
};

// The sizes of `auto` (1 to 3); nothing, with `why`, when no admitted size exists.
std::optional<std::vector<SimSize>> chooseSimSizes(const Kernel &kernel, std::string &why);

// "M=256,N=256,K=128;M=384,N=128,K=320"; nothing, with `why`, on a syntax error.
std::optional<std::vector<SimSize>> parseSimSizes(const std::string &text, std::string &why);

// The shape symbols of a kernel: names in its tensor shapes and integer
// scalar parameters.
std::vector<std::string> shapeSymbols(const Kernel &kernel);

// The elements of the kernel's tensors at `sizes`: what a run costs.
double tensorElements(const Kernel &kernel, const std::map<std::string, int64_t> &sizes);

// For a constant grid with a persistent tile loop (a loop that starts at
// blockIdx): the CTAs that run at least one tile at `sizes`, when fewer than
// the grid; empty otherwise (every CTA has work, or there is no such loop).
std::vector<std::array<int64_t, 3>> ctasWithTiles(const Kernel &kernel,
                                                  const BarrierSkeleton &sk,
                                                  const std::map<std::string, int64_t> &sizes);

// "K = 384, M = 128, N = 256"
std::string describe(const std::map<std::string, int64_t> &values);

} // namespace tilescope::reward_detail
